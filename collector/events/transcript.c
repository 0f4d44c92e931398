/* Assembling wire bytes into console lines. */
#include "events/transcript.h"

#include <string.h>

static void line_free(gpointer p)
{
    RsLine *l = p;

    g_free(l->text);
    g_free(l);
}

void rs_transcript_free(RsTranscript *t)
{
    if (t) {
        g_ptr_array_unref(t->lines);
        g_free(t);
    }
}

gboolean rs_parse_printk_ts(const char *text, gsize len, int64_t *ts_ns)
{
    gsize i = 0, digits = 0;
    int64_t sec = 0, usec = 0;
    int n;

    if (len < 1 || text[i++] != '[') {
        return FALSE;
    }
    while (i < len && text[i] == ' ') {
        i++;
    }
    /* Uptime seconds fit in 12 digits for centuries; refuse more. */
    for (; i < len && g_ascii_isdigit(text[i]) && digits < 12; i++, digits++) {
        sec = sec * 10 + (text[i] - '0');
    }
    if (!digits || i >= len || text[i++] != '.') {
        return FALSE;
    }
    for (n = 0; n < 6; n++, i++) {
        if (i >= len || !g_ascii_isdigit(text[i])) {
            return FALSE;
        }
        usec = usec * 10 + (text[i] - '0');
    }
    if (i >= len || text[i] != ']') {
        return FALSE;
    }
    *ts_ns = sec * G_GINT64_CONSTANT(1000000000) + usec * 1000;
    return TRUE;
}

static RsLine *line_finish(GByteArray *buf, const RsTxByte *first,
                           const RsTxByte *last, gboolean mixed,
                           gboolean terminated)
{
    RsLine *l = g_new0(RsLine, 1);

    /* The 8250 console ends lines with "\r\n"; the \r is not content. */
    if (terminated && buf->len && buf->data[buf->len - 1] == '\r') {
        g_byte_array_set_size(buf, buf->len - 1);
    }
    l->len = buf->len;
    l->text = g_malloc(buf->len + 1);
    memcpy(l->text, buf->data, buf->len);
    l->text[buf->len] = '\0';
    l->vt_first_ns = first->wt_ns;
    l->vt_last_ns = last->wt_ns;
    l->cpu = first->cpu;
    l->mixed_cpus = mixed;
    l->terminated = terminated;
    l->has_ts = rs_parse_printk_ts(l->text, l->len, &l->ts_ns);
    g_byte_array_set_size(buf, 0);
    return l;
}

RsTranscript *rs_transcript_build(const RsEventStream *s)
{
    RsTranscript *t = g_new0(RsTranscript, 1);
    g_autoptr(GByteArray) buf = g_byte_array_new();
    const RsTxByte *first = NULL, *last = NULL;
    gboolean mixed = FALSE;
    guint i;

    t->lines = g_ptr_array_new_with_free_func(line_free);
    for (i = 0; i < s->tx->len; i++) {
        const RsTxByte *b = &g_array_index(s->tx, RsTxByte, i);

        if (b->loopback) {
            t->loopback_bytes++;
            continue;
        }
        if (b->overrun) {
            t->overrun_bytes++;
            continue;
        }
        if (b->cleared) {
            t->cleared_bytes++;
            continue;
        }
        if (b->refused) {
            t->refused_bytes++;
            continue;
        }
        if (b->wt_ns < 0) {
            t->unsent_bytes++;
            continue;
        }
        t->wire_bytes++;
        if (!first) {
            first = b;
            mixed = FALSE;
        } else if (b->cpu != first->cpu) {
            mixed = TRUE;
        }
        last = b;
        if (b->byte == '\n') {
            g_ptr_array_add(t->lines, line_finish(buf, first, b, mixed, TRUE));
            first = NULL;
        } else {
            g_byte_array_append(buf, &b->byte, 1);
        }
    }
    if (first) {
        g_ptr_array_add(t->lines, line_finish(buf, first, last, mixed, FALSE));
    }
    return t;
}

static gint line_by_first(gconstpointer a, gconstpointer b)
{
    const RsLineVerdict *x = *(const RsLineVerdict * const *)a;
    const RsLineVerdict *y = *(const RsLineVerdict * const *)b;

    return x->first < y->first ? -1 : x->first > y->first;
}

/* The line event whose bytes hold @index, from *at on (lines by first). */
static const RsLineVerdict *line_holding(GPtrArray *byfirst, guint *at,
                                         guint64 index)
{
    while (*at < byfirst->len) {
        const RsLineVerdict *lv = byfirst->pdata[*at];

        if (lv->first > index) {
            return NULL;
        }
        if (index <= lv->last) {
            return lv;
        }
        (*at)++;
    }
    return NULL;
}

RsTranscript *rs_transcript_build_console(const RsEventStream *s,
                                          const char *text, gsize len)
{
    g_autoptr(GPtrArray) byfirst = g_ptr_array_sized_new(s->lines->len);
    RsTranscript *t;
    guint i, at = 0;
    gsize start = 0;
    guint64 index = s->resume_index, skip = 0;

    if (s->tx->len) {
        return rs_transcript_build(s);
    }
    t = rs_transcript_from_console(text, len);
    t->loopback_bytes = s->notx_loop;
    t->overrun_bytes = s->notx_overrun;
    t->cleared_bytes = s->notx_cleared;
    t->refused_bytes = s->notx_refused;
    for (i = 0; i < s->lines->len; i++) {
        g_ptr_array_add(byfirst, &g_array_index(s->lines, RsLineVerdict, i));
    }
    g_ptr_array_sort(byfirst, line_by_first);
    /* Console line i began at byte @start: its stream index skips the
     * bytes that never reached the console. */
    for (i = 0; i < t->lines->len; i++) {
        RsLine *l = t->lines->pdata[i];
        const RsLineVerdict *lv;
        const char *nl = memchr(text + start, '\n', len - start);
        gsize end = nl ? (gsize)(nl - text) + 1 : len;
        gsize k;

        while (skip < s->offwire->len &&
               g_array_index(s->offwire, guint64, skip) <= index) {
            if (g_array_index(s->offwire, guint64, skip) == index) {
                index++;
            }
            skip++;
        }
        lv = line_holding(byfirst, &at, index);
        if (lv && lv->first_vt_ns >= 0) {
            l->vt_first_ns = lv->first_vt_ns;
            l->vt_last_ns = lv->vt_ns;
            l->cpu = lv->cpu;
            l->mixed_cpus = lv->mixed_cpus;
        } else if (lv) {
            l->vt_first_ns = l->vt_last_ns = lv->vt_ns;
        }
        /* on to the next line's first byte, past bytes off the wire */
        for (k = start; k < end; k++) {
            index++;
            while (skip < s->offwire->len &&
                   g_array_index(s->offwire, guint64, skip) <= index) {
                if (g_array_index(s->offwire, guint64, skip) == index) {
                    index++;
                }
                skip++;
            }
        }
        start = end;
    }
    return t;
}

RsTranscript *rs_transcript_from_console(const char *text, gsize len)
{
    static const RsTxByte unknown = { .cpu = -1, .vt_ns = -1, .wt_ns = -1 };
    RsTranscript *t = g_new0(RsTranscript, 1);
    g_autoptr(GByteArray) buf = g_byte_array_new();
    gsize i;

    t->lines = g_ptr_array_new_with_free_func(line_free);
    t->wire_bytes = len;
    for (i = 0; i < len; i++) {
        if (text[i] == '\n') {
            g_ptr_array_add(t->lines, line_finish(buf, &unknown, &unknown,
                                                  FALSE, TRUE));
        } else {
            g_byte_array_append(buf, (const guint8 *)&text[i], 1);
        }
    }
    if (buf->len) {
        g_ptr_array_add(t->lines, line_finish(buf, &unknown, &unknown, FALSE,
                                              FALSE));
    }
    return t;
}

gboolean rs_transcript_last_latency(const RsTranscript *t, int64_t *ns)
{
    int64_t min_delta = G_MAXINT64, last_delta = 0;
    gboolean any = FALSE;
    guint i;

    for (i = 0; i < t->lines->len; i++) {
        const RsLine *l = t->lines->pdata[i];
        int64_t d;

        if (!l->has_ts) {
            continue;
        }
        d = l->vt_last_ns - l->ts_ns;
        min_delta = MIN(min_delta, d);
        last_delta = d;
        any = TRUE;
    }
    if (any) {
        *ns = last_delta - min_delta;
    }
    return any;
}
