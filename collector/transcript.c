/* Assembling wire bytes into console lines. */
#include "transcript.h"

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
