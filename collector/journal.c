/* Journal Export Format entries for console lines. */
#include "journal.h"

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
