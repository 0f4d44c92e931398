/* Journal Export Format entries for console lines. */
#include "events/journal.h"

#include <string.h>

int rs_journal_priority(const RsJournalEntry *e)
{
    if (e->level >= 0 && e->level <= 7) {
        return e->level;
    }
    if (!g_strcmp0(e->ev, "record")) {
        return 3;
    }
    if (!e->verdict || !strcmp(e->verdict, "ok") ||
        !strcmp(e->verdict, "user") || !strcmp(e->verdict, "unchecked")) {
        return 6;
    }
    return 4;
}

/* NAME=value, or the binary form for a value with control characters. */
static void field(GString *o, const char *name, const char *v, gsize len)
{
    gboolean binary = FALSE;
    gsize i;

    for (i = 0; i < len; i++) {
        if ((guchar)v[i] < 0x20 && v[i] != '\t') {
            binary = TRUE;
            break;
        }
    }
    if (!binary) {
        g_string_append_printf(o, "%s=", name);
        g_string_append_len(o, v, len);
        g_string_append_c(o, '\n');
        return;
    }
    {
        guint64 le = GUINT64_TO_LE((guint64)len);

        g_string_append_printf(o, "%s\n", name);
        g_string_append_len(o, (const char *)&le, 8);
        g_string_append_len(o, v, len);
        g_string_append_c(o, '\n');
    }
}

static void field_str(GString *o, const char *name, const char *v)
{
    field(o, name, v, strlen(v));
}

static void field_fmt(GString *o, const char *name, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);

static void field_fmt(GString *o, const char *name, const char *fmt, ...)
{
    g_autofree char *v = NULL;
    va_list ap;

    va_start(ap, fmt);
    v = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    field_str(o, name, v);
}

void rs_journal_write(FILE *out, const RsJournalEntry *e)
{
    GString *o = g_string_new(NULL);

    g_string_append_printf(o, "__REALTIME_TIMESTAMP=%" G_GINT64_FORMAT "\n",
                           g_get_real_time());
    field(o, "MESSAGE", e->text ? e->text : "", e->text ? e->len : 0);
    field_fmt(o, "PRIORITY", "%d", rs_journal_priority(e));
    field_str(o, "SYSLOG_IDENTIFIER", "ringside");
    field_str(o, "RINGSIDE_DOMAIN", e->domain);
    field_fmt(o, "RINGSIDE_BOOT", "%d", e->boot);
    field_str(o, "RINGSIDE_EVENT", e->ev);
    if (e->verdict) {
        field_str(o, "RINGSIDE_VERDICT", e->verdict);
    }
    if (e->vt_ns >= 0) {
        field_fmt(o, "RINGSIDE_VT_NS", "%" G_GINT64_FORMAT, e->vt_ns);
    }
    if (e->cpu >= 0) {
        field_fmt(o, "RINGSIDE_CPU", "%d", e->cpu);
    }
    if (e->has_seq) {
        field_fmt(o, "RINGSIDE_SEQ", "%" G_GUINT64_FORMAT, e->seq);
    }
    if (e->level >= 0) {
        field_fmt(o, "RINGSIDE_LEVEL", "%d", e->level);
    }
    if (e->console) {
        field_str(o, "RINGSIDE_CONSOLE", e->console);
    }
    g_string_append_c(o, '\n');
    fwrite(o->str, 1, o->len, out);
    g_string_free(o, TRUE);
}

/* The line's text: from its "tx" records, else from the console log. */
static GString *line_text(RsEventStream *s, const RsLineVerdict *lv,
                          const char *console, gsize console_len)
{
    GString *t = g_string_new(NULL);
    guint64 i;

    if (lv->last < lv->first || lv->last - lv->first > 65536) {
        return t;
    }
    if (s->tx->len) {
        for (i = lv->first; i <= lv->last; i++) {
            RsTxByte *b = rs_event_stream_byte(s, i);

            if (b && !b->loopback && !b->overrun && !b->cleared &&
                !b->refused) {
                g_string_append_c(t, b->byte);
            }
        }
    } else {
        guint64 at, len;

        rs_event_stream_console_span(s, lv->first, lv->last, &at, &len);
        if (at < console_len) {
            g_string_append_len(t, console + at, MIN(len, console_len - at));
        }
    }
    while (t->len && (t->str[t->len - 1] == '\n' ||
                      t->str[t->len - 1] == '\r')) {
        g_string_truncate(t, t->len - 1);
    }
    return t;
}

void rs_journal_write_stream(FILE *out, const char *name, int boot,
                             RsEventStream *s, const char *console,
                             gsize console_len)
{
    guint k;

    for (k = 0; k < s->lines->len; k++) {
        const RsLineVerdict *lv = &g_array_index(s->lines, RsLineVerdict, k);
        g_autoptr(GString) text = line_text(s, lv, console, console_len);
        RsTxByte *first = s->tx->len ? rs_event_stream_byte(s, lv->first) :
                          NULL;
        RsJournalEntry e = {
            .domain = name, .boot = boot, .ev = "line",
            .verdict = lv->verdict, .vt_ns = lv->vt_ns,
            .cpu = first ? first->cpu : lv->has_stamp ? lv->cpu : -1,
            .has_seq = lv->has_seq, .seq = lv->seq, .level = -1,
            .text = text->str, .len = text->len,
        };

        rs_journal_write(out, &e);
    }
    for (k = 0; k < s->records->len; k++) {
        const RsRecordVerdict *rv = &g_array_index(s->records,
                                                   RsRecordVerdict, k);
        g_autofree char *msg = g_strdup_printf(
            "<ring record %" G_GUINT64_FORMAT "%s not on the console>",
            rv->seq, rv->count > 1 ? "..." : "");
        RsJournalEntry e = {
            .domain = name, .boot = boot, .ev = "record",
            .verdict = rv->verdict, .vt_ns = -1, .cpu = -1, .has_seq = TRUE,
            .seq = rv->seq, .level = rv->level, .text = msg,
            .len = strlen(msg),
        };

        rs_journal_write(out, &e);
    }
}
