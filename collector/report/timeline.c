/*
 * The timeline of one run: its events.jsonl read back, each console line
 * placed in the lane of its vCPU on guest virtual time under the ring
 * records it carried, the records that never reached the wire beside them,
 * drawn as inline SVG with a legend and a note on how to read it.
 */
#include "report/timeline.h"
#include "errors.h"
#include "events/events.h"
#include "report/html.h"

#include <string.h>

#define MISSING_MAX     200     /* missing record ranges listed */
#define TL_DETAIL_MAX   5000    /* lines drawn one by one; beyond, bucketed */
#define TL_TEXT_MAX     80      /* characters of a line in its tooltip */
#define TL_TICKS_MAX    1000    /* ring records drawn one by one */
#define TL_LINKS_MAX    400     /* records joined to their lines, at most */
#define TL_CPUS_MAX     64      /* vCPU lanes; higher indexes share "other" */

/* Decimals that show a multiple of @step exactly. */
static int step_decimals(double step)
{
    int d = 0;

    while (step < 0.999 && d < 6) {
        step *= 10;
        d++;
    }
    return d;
}

/* Line verdicts: colour, and precedence when lines share a pixel. */
static const struct {
    const char *name, *color, *meaning;
    int rank;
} line_styles[] = {
    { "ok", "#2f9e5f", "matched its ring record", 3 },
    { "torn", "#d62828", "another record cut into it", 9 },
    { "corrupt", "#f06a1d", "bytes differ from the record", 8 },
    { "unmatched", "#f2a03d", "no record explains it", 7 },
    { "duplicate", "#8b5cf6", "a record printed again", 6 },
    { "reordered", "#c084fc", "out of order", 5 },
    { "dropped-notice", "#d4a90a", "the kernel's own drop notice", 4 },
    { "user", "#4a90c2", "user space wrote it", 3 },
    { "replayed", "#9aa87a", "a copy the console printed again whole", 3 },
    { "notice", "#c9b458", "the console's own notice", 3 },
    { "overwritten", "#7b8494", "record overwritten before checked", 2 },
    { "unchecked", "#b5bcc8", "no ring to check against", 1 },
    { "other", "#404040", "a verdict this ringside does not know", 0 },
};
#define N_LINE_STYLES G_N_ELEMENTS(line_styles)

static guint line_style(const char *verdict)
{
    guint i;

    for (i = 0; i < N_LINE_STYLES - 1; i++) {
        if (g_str_equal(line_styles[i].name, verdict)) {
            return i;
        }
    }
    return N_LINE_STYLES - 1;
}

/* Lanes and the time axis, in SVG units */

#define TL_W        1200
#define TL_LX       96      /* lane labels on the left */
#define TL_NT       118     /* "no time" column on the right */
#define TL_PX       TL_LX
#define TL_PW       (TL_W - TL_LX - TL_NT - 14)
#define TL_TOP      24
#define TL_RING_H   30
#define TL_LANE_H   22
#define TL_LANE_GAP 8

typedef struct {
    gint64 t0, t1;          /* virtual ns, first and last byte on the wire */
    int cpu;                /* of the first byte; -1: the "other" lane */
    guint lane, style;
    const RsLineVerdict *lv;
} TlLine;

/* A ring record on the time axis, by the line that carried its stamp. */
typedef struct {
    gint64 t;               /* virtual ns it was logged at */
    guint64 seq;
    guint line;             /* index in RsTimeline.lines */
} TlTick;

typedef struct {
    const char *verdict;    /* missing, cut, damaged */
    gboolean l1;
    guint64 seq, count;
} TlLost;

struct RsTimeline {
    RsEventStream *s;
    GArray *lines;          /* TlLine */
    GArray *ticks;          /* TlTick */
    GArray *lost;           /* TlLost */
    guint64 lost_records;
    guint nlanes, ncpus;
    gboolean other_lane;    /* lines not from a vCPU, from one past
                             * TL_CPUS_MAX, or from one not known */
    gboolean no_bytes;      /* neither "tx" events nor line stamps (a
                             * schema 2 stream with tx-events=off) */
    char *console;          /* console.log: the text of a stream of line
                             * events alone (schema 3's default) */
    gsize console_len;
    gint64 tmin, tmax, offset;
    gboolean has_offset;
};

static gint64 byte_time(const RsTxByte *b)
{
    return b->wt_ns >= 0 ? b->wt_ns : b->vt_ns;
}

static double tl_x(const RsTimeline *tl, gint64 t)
{
    return TL_PX + (double)(t - tl->tmin) * TL_PW / (tl->tmax - tl->tmin);
}

static double lane_y(guint lane)
{
    return TL_TOP + TL_RING_H + 12 + lane * (TL_LANE_H + TL_LANE_GAP);
}

/* The line's text from its bytes, without the line end, shortened. */
static void line_text(GString *o, const RsTimeline *tl,
                      const RsLineVerdict *lv)
{
    RsEventStream *s = tl->s;
    RsTxByte *b = rs_event_stream_byte(s, lv->first);
    guint i, n = 0;
    char buf[TL_TEXT_MAX + 1];

    if (!b && tl->console) {
        /* no bytes in the stream: the console got them */
        guint64 off, len;

        rs_event_stream_console_span(s, lv->first, lv->last, &off, &len);
        for (; off < tl->console_len && len && n < TL_TEXT_MAX; off++, len--) {
            char c = tl->console[off];

            if (c != '\r' && c != '\n') {
                buf[n++] = c;
            }
        }
        rs_html_esc_len(o, buf, n);
        if (n == TL_TEXT_MAX) {
            g_string_append(o, "\xe2\x80\xa6");
        }
        return;
    }
    if (!b) {
        return;
    }
    for (i = b - (RsTxByte *)s->tx->data;
         i < s->tx->len && n < TL_TEXT_MAX; i++) {
        b = &g_array_index(s->tx, RsTxByte, i);
        if (b->index > lv->last) {
            break;
        }
        if (b->byte != '\r' && b->byte != '\n' && !b->loopback) {
            buf[n++] = b->byte;
        }
    }
    rs_html_esc_len(o, buf, n);
    if (n == TL_TEXT_MAX) {
        g_string_append(o, "\xe2\x80\xa6");
    }
}

/* A bracketed record's bytes and vCPU, to place lines without byte events. */
typedef struct {
    guint64 first, last;
    int cpu;
} TlSpan;

static gint span_order(gconstpointer a, gconstpointer b)
{
    const TlSpan *x = a, *y = b;

    return x->first < y->first ? -1 : x->first > y->first;
}

static GArray *bracket_spans(const RsEventStream *s)
{
    GArray *spans = g_array_new(FALSE, FALSE, sizeof(TlSpan));
    guint i;

    for (i = 0; i < s->brackets->len; i++) {
        const RsBracket *b = &g_array_index(s->brackets, RsBracket, i);
        TlSpan sp = { b->first, b->last, b->cpu };

        if (b->has_bytes && b->cpu >= 0) {
            g_array_append_val(spans, sp);
        }
    }
    g_array_sort(spans, span_order);
    return spans;
}

/* The vCPU of the bracket holding byte @index, or -1. */
static int span_cpu(GArray *spans, guint64 index)
{
    guint lo = 0, hi = spans->len;

    /* The last span starting at or before @index. */
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;

        if (g_array_index(spans, TlSpan, mid).first <= index) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo && index <= g_array_index(spans, TlSpan, lo - 1).last) {
        return g_array_index(spans, TlSpan, lo - 1).cpu;
    }
    return -1;
}

static void timeline_build(RsTimeline *tl, guint smp)
{
    RsEventStream *s = tl->s;
    g_autoptr(GHashTable) seqs = g_hash_table_new(g_int64_hash,
                                                  g_int64_equal);
    g_autoptr(GArray) spans = bracket_spans(s);
    gint maxcpu = -1;
    guint i;

    tl->lines = g_array_new(FALSE, FALSE, sizeof(TlLine));
    tl->ticks = g_array_new(FALSE, FALSE, sizeof(TlTick));
    tl->lost = g_array_new(FALSE, FALSE, sizeof(TlLost));
    tl->tmin = G_MAXINT64;
    tl->tmax = G_MININT64;
    tl->no_bytes = s->tx->len == 0 && s->version < 3;

    for (i = 0; i < s->lines->len; i++) {
        const RsLineVerdict *lv = &g_array_index(s->lines, RsLineVerdict, i);
        const RsTxByte *b = rs_event_stream_byte(s, lv->first);
        TlLine l = { .t0 = lv->vt_ns, .t1 = lv->vt_ns, .lv = lv };

        /*
         * Without its bytes a line is a mark at the time of its last
         * byte, in the lane of the vCPU that bracketed its record.
         */
        l.cpu = b ? b->cpu : lv->has_stamp ? lv->cpu :
                span_cpu(spans, lv->first);
        if (l.cpu >= TL_CPUS_MAX) {
            l.cpu = -1;
        }
        if (b) {
            l.t0 = MIN(byte_time(b), l.t1);
        } else if (lv->has_stamp) {
            l.t0 = MIN(lv->first_vt_ns, l.t1);   /* on the wire, as vt */
        }
        l.style = line_style(lv->verdict);
        maxcpu = MAX(maxcpu, l.cpu);
        tl->other_lane |= l.cpu < 0;
        g_array_append_val(tl->lines, l);
        tl->tmin = MIN(tl->tmin, l.t0);
        tl->tmax = MAX(tl->tmax, l.t1);
        if (lv->has_ts && (gint64)lv->ts_ns >= 0 &&
            (!tl->has_offset || lv->vt_ns - (gint64)lv->ts_ns < tl->offset)) {
            tl->offset = lv->vt_ns - (gint64)lv->ts_ns;
            tl->has_offset = TRUE;
        }
    }
    /* No line's vCPU known: one lane, not a row of empty ones. */
    tl->ncpus = maxcpu < 0 && tl->lines->len ? 0 :
                MAX((guint)(maxcpu + 1), CLAMP(smp, 1u, TL_CPUS_MAX));
    tl->nlanes = tl->ncpus + tl->other_lane;
    for (i = 0; i < tl->lines->len; i++) {
        TlLine *l = &g_array_index(tl->lines, TlLine, i);

        l->lane = l->cpu < 0 ? tl->ncpus : (guint)l->cpu;
    }

    /* A record's time stamp is on its last line; a line printed twice
     * must not make two ticks. */
    for (i = 0; tl->has_offset && i < s->lines->len; i++) {
        const RsLineVerdict *lv = &g_array_index(s->lines, RsLineVerdict, i);
        TlTick tk = { -1, lv->seq, i };

        if (tl->offset <= 0 || (gint64)lv->ts_ns <= G_MAXINT64 - tl->offset) {
            tk.t = (gint64)lv->ts_ns + tl->offset;
        }

        /* Before the virtual clock started: only a hostile stream. */
        if (!lv->has_ts || tk.t < 0 ||
            (lv->has_seq && g_hash_table_contains(seqs, &lv->seq))) {
            continue;
        }
        if (lv->has_seq) {
            g_hash_table_add(seqs, (gpointer)&lv->seq);
        }
        g_array_append_val(tl->ticks, tk);
        tl->tmin = MIN(tl->tmin, tk.t);
        tl->tmax = MAX(tl->tmax, tk.t);
    }

    for (i = 0; i < s->records->len; i++) {
        const RsRecordVerdict *rv = &g_array_index(s->records,
                                                   RsRecordVerdict, i);

        if (g_str_equal(rv->verdict, "missing")) {
            TlLost l = { "missing", FALSE, rv->seq, rv->count };

            g_array_append_val(tl->lost, l);
            tl->lost_records += rv->count;
        }
    }
    for (i = 0; i < s->l1_records->len; i++) {
        const RsRecordVerdict *rv = &g_array_index(s->l1_records,
                                                   RsRecordVerdict, i);

        if (g_str_equal(rv->verdict, "missing") ||
            g_str_equal(rv->verdict, "cut") ||
            g_str_equal(rv->verdict, "damaged")) {
            TlLost l = { NULL, TRUE, rv->seq, rv->count };

            l.verdict = g_str_equal(rv->verdict, "missing") ? "missing" :
                        g_str_equal(rv->verdict, "cut") ? "cut" : "damaged";
            g_array_append_val(tl->lost, l);
            tl->lost_records += rv->count;
        }
    }

    if (tl->tmin > tl->tmax) {
        tl->tmin = tl->tmax = 0;
    }
    if (tl->tmax - tl->tmin < 1000) {
        tl->tmax = tl->tmin + 1000;
    }
}

void rs_timeline_free(RsTimeline *tl)
{
    if (tl) {
        g_clear_pointer(&tl->lines, g_array_unref);
        g_clear_pointer(&tl->ticks, g_array_unref);
        g_clear_pointer(&tl->lost, g_array_unref);
        g_clear_pointer(&tl->s, rs_event_stream_free);
        g_free(tl->console);
        g_free(tl);
    }
}

static void tl_axis(GString *o, const RsTimeline *tl, double y0, double y1)
{
    double lo = tl->tmin / 1e6, hi = tl->tmax / 1e6;
    double step = rs_html_nice_step(hi - lo, 9), v;
    int dec = step_decimals(step);
    gint64 k = (gint64)(lo / step);

    if (k * step < lo) {
        k++;
    }
    g_string_append_printf(o, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" "
                           "y2=\"%.1f\" stroke=\"#9aa3b2\"/>", TL_PX,
                           TL_PX + TL_PW, y1, y1);
    for (v = k * step; v <= hi + step * 1e-9; k++, v = k * step) {
        double x = tl_x(tl, (gint64)(v * 1e6));

        g_string_append_printf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                               "y2=\"%.1f\" stroke=\"#e3e6ec\"/>"
                               "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                               "y2=\"%.1f\" stroke=\"#9aa3b2\"/>"
                               "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                               "text-anchor=\"middle\">%.*f</text>",
                               x, x, y0, y1, x, x, y1, y1 + 4, x, y1 + 16,
                               dec, v);
    }
    g_string_append_printf(o, "<text x=\"%d\" y=\"%.1f\" font-size=\"11.5\" "
                           "text-anchor=\"middle\">guest virtual time (ms)"
                           "</text>", TL_PX + TL_PW / 2, y1 + 34);
}

static void tl_line_rect(GString *o, const RsTimeline *tl, const TlLine *l)
{
    double x0 = tl_x(tl, l->t0), x1 = tl_x(tl, l->t1);

    g_string_append_printf(o, "<rect class=\"v%u\" x=\"%.1f\" y=\"%.1f\" "
                           "width=\"%.1f\" height=\"%d\"><title>%s",
                           l->style, x0, lane_y(l->lane),
                           MAX(x1 - x0, tl->no_bytes ? 1.5 : 1.0),
                           TL_LANE_H, line_styles[l->style].name);
    if (l->style == N_LINE_STYLES - 1) {
        g_string_append(o, " (");
        rs_html_esc(o, l->lv->verdict);
        g_string_append(o, ")");
    }
    if (l->lv->has_seq) {
        g_string_append_printf(o, ", seq %" G_GUINT64_FORMAT, l->lv->seq);
    }
    if (l->lv->has_lat) {
        g_string_append_printf(o, ", latency %.3f ms", l->lv->lat_ns / 1e6);
    }
    g_string_append_printf(o, ", %.3f\xe2\x80\x93%.3f ms\n", l->t0 / 1e6,
                           l->t1 / 1e6);
    line_text(o, tl, l->lv);
    g_string_append(o, "</title></rect>");
}

/*
 * Too many lines to draw one by one: per lane and pixel column, the
 * verdict that takes precedence, drawn as runs of equal columns.
 */
static void tl_lines_bucketed(GString *o, const RsTimeline *tl)
{
    guint ncol = TL_PW, nv = N_LINE_STYLES, lane, c, v, i;
    g_autofree guint32 *count = g_new0(guint32,
                                       (gsize)tl->nlanes * ncol * nv);
    g_autofree gint8 *top = g_new(gint8, (gsize)tl->nlanes * ncol);

    memset(top, -1, (gsize)tl->nlanes * ncol);
    for (i = 0; i < tl->lines->len; i++) {
        const TlLine *l = &g_array_index(tl->lines, TlLine, i);
        guint c0 = MIN((guint)(tl_x(tl, l->t0) - TL_PX), ncol - 1);
        guint c1 = MIN((guint)(tl_x(tl, l->t1) - TL_PX), ncol - 1);
        gint8 *t = &top[l->lane * ncol];

        count[((gsize)l->lane * ncol + c0) * nv + l->style]++;
        for (c = c0; c <= c1; c++) {
            if (t[c] < 0 || line_styles[l->style].rank >
                            line_styles[(int)t[c]].rank) {
                t[c] = l->style;
            }
        }
    }
    for (lane = 0; lane < tl->nlanes; lane++) {
        const gint8 *t = &top[lane * ncol];

        for (c = 0; c < ncol; c++) {
            guint64 sum[N_LINE_STYLES] = { 0 }, n = 0;
            guint end;

            if (t[c] < 0) {
                continue;
            }
            for (end = c; end + 1 < ncol && t[end + 1] == t[c]; end++) {
            }
            for (i = c; i <= end; i++) {
                for (v = 0; v < nv; v++) {
                    sum[v] += count[((gsize)lane * ncol + i) * nv + v];
                    n += count[((gsize)lane * ncol + i) * nv + v];
                }
            }
            g_string_append_printf(o, "<rect class=\"v%d\" x=\"%u\" "
                                   "y=\"%.1f\" width=\"%u\" height=\"%d\">"
                                   "<title>%" G_GUINT64_FORMAT " lines "
                                   "starting %.3f\xe2\x80\x93%.3f ms:",
                                   t[c], TL_PX + c, lane_y(lane),
                                   end - c + 1, TL_LANE_H, n,
                                   (tl->tmin + (double)c * (tl->tmax - tl->tmin)
                                    / ncol) / 1e6,
                                   (tl->tmin + (double)(end + 1) *
                                    (tl->tmax - tl->tmin) / ncol) / 1e6);
            for (v = 0; v < nv; v++) {
                if (sum[v]) {
                    g_string_append_printf(o, " %s %" G_GUINT64_FORMAT,
                                           line_styles[v].name, sum[v]);
                }
            }
            g_string_append(o, "</title></rect>");
            c = end;
        }
    }
}

static void tl_ticks(GString *o, const RsTimeline *tl, double y)
{
    gboolean dense = tl->ticks->len > TL_TICKS_MAX;
    g_autofree gboolean *drawn = g_new0(gboolean, TL_PW + 1);
    guint i;

    /* Few enough: each record joined to the end of its line on the wire. */
    for (i = 0; tl->ticks->len <= TL_LINKS_MAX && i < tl->ticks->len; i++) {
        const TlTick *tk = &g_array_index(tl->ticks, TlTick, i);
        const TlLine *l = &g_array_index(tl->lines, TlLine, tk->line);

        g_string_append_printf(o, "<line class=\"cn\" x1=\"%.1f\" "
                               "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                               tl_x(tl, tk->t), y + TL_RING_H - 6,
                               tl_x(tl, l->t1), lane_y(l->lane));
    }
    for (i = 0; i < tl->ticks->len; i++) {
        const TlTick *tk = &g_array_index(tl->ticks, TlTick, i);
        double x = tl_x(tl, tk->t);
        guint col = MIN((guint)(x - TL_PX), TL_PW);

        /* Dense: one tick per pixel column is all the eye can see. */
        if (dense && drawn[col]) {
            continue;
        }
        drawn[col] = TRUE;
        g_string_append_printf(o, "<rect class=\"tk\" x=\"%.1f\" y=\"%.1f\" "
                               "width=\"1.4\" height=\"%d\">", x - 0.7, y + 6,
                               TL_RING_H - 12);
        if (!dense) {
            g_string_append_printf(o, "<title>record %" G_GUINT64_FORMAT
                                   " logged at %.3f ms</title>", tk->seq,
                                   tk->t / 1e6);
        }
        g_string_append(o, "</rect>");
    }
}

/* Records that have no time on the wire: red marks in their own column. */
static void tl_lost_column(GString *o, const RsTimeline *tl, double y)
{
    double x0 = TL_PX + TL_PW + 14, w = TL_W - x0 - 2;
    guint i, room = (w - 8) / 3;

    g_string_append_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                           "height=\"%d\" rx=\"3\" fill=\"%s\"/>"
                           "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10.5\" "
                           "text-anchor=\"middle\" style=\"fill:#7a8294\">"
                           "never on the wire</text>",
                           x0, y, w, TL_RING_H,
                           tl->lost->len ? "#fde8e8" : "#f3f4f6",
                           x0 + w / 2, y - 6);
    if (!tl->lost->len) {
        g_string_append_printf(o, "<text x=\"%.1f\" y=\"%.1f\" "
                               "font-size=\"11\" text-anchor=\"middle\" "
                               "style=\"fill:#7a8294\">none</text>",
                               x0 + w / 2, y + TL_RING_H / 2 + 4);
        return;
    }
    for (i = 0; i < tl->lost->len && i < room; i++) {
        const TlLost *l = &g_array_index(tl->lost, TlLost, i);

        g_string_append_printf(o, "<rect class=\"lost\" x=\"%.1f\" "
                               "y=\"%.1f\" width=\"2\" height=\"%d\">"
                               "<title>%s%s seq %" G_GUINT64_FORMAT,
                               x0 + 4 + i * 3, y + 4, TL_RING_H - 8,
                               l->l1 ? "level 1: " : "", l->verdict, l->seq);
        if (l->count > 1) {
            g_string_append_printf(o, "\xe2\x80\x93%" G_GUINT64_FORMAT,
                                   l->seq + l->count - 1);
        }
        g_string_append(o, "</title></rect>");
    }
}

static void tl_lost_list(GString *o, const RsTimeline *tl)
{
    guint i;

    if (!tl->lost->len) {
        return;
    }
    g_string_append_printf(o, "<p class=\"missing\"><b>%" G_GUINT64_FORMAT
                           " record%s did not reach the wire whole:</b> ",
                           tl->lost_records, tl->lost_records == 1 ? "" : "s");
    for (i = 0; i < tl->lost->len && i < MISSING_MAX; i++) {
        const TlLost *l = &g_array_index(tl->lost, TlLost, i);

        g_string_append_printf(o, "%s%s%s %" G_GUINT64_FORMAT, i ? ", " : "",
                               l->l1 ? "L1 " : "", l->verdict, l->seq);
        if (l->count > 1) {
            g_string_append_printf(o, "\xe2\x80\x93%" G_GUINT64_FORMAT,
                                   l->seq + l->count - 1);
        }
    }
    if (tl->lost->len > MISSING_MAX) {
        g_string_append_printf(o, " and %u more ranges", tl->lost->len -
                               MISSING_MAX);
    }
    g_string_append(o, "</p>");
}

static void tl_legend(GString *o, const RsTimeline *tl)
{
    gboolean used[N_LINE_STYLES] = { FALSE };
    guint i;

    for (i = 0; i < tl->lines->len; i++) {
        used[g_array_index(tl->lines, TlLine, i).style] = TRUE;
    }
    g_string_append(o, "<div class=\"legend\">");
    for (i = 0; i < N_LINE_STYLES; i++) {
        /* The common verdicts always, the rare ones when they occur. */
        if (used[i] || i < 4) {
            g_string_append_printf(o, "<span title=\"%s\"><i style=\""
                                   "background:%s\"></i>line %s</span>",
                                   line_styles[i].meaning,
                                   line_styles[i].color, line_styles[i].name);
        }
    }
    g_string_append(o, "<span><i style=\"background:#3b4a63;width:2px\"></i>"
                    "ring record, at its printk time</span>"
                    "<span><i style=\"background:#d62828;width:3px\"></i>"
                    "record missing, cut or damaged</span></div>");
}

static void timeline_svg(GString *o, const RsTimeline *tl)
{
    double ring_y = TL_TOP, bottom = lane_y(tl->nlanes) - TL_LANE_GAP + 6;
    gboolean pass;
    guint i;

    g_string_append_printf(o, "<svg class=\"timeline\" viewBox=\"0 0 %d %.0f\" "
                           "role=\"img\" aria-label=\"timeline\"><style>",
                           TL_W, bottom + 44);
    for (i = 0; i < N_LINE_STYLES; i++) {
        g_string_append_printf(o, ".v%u{fill:%s}", i, line_styles[i].color);
    }
    g_string_append(o, ".tk{fill:#3b4a63}.lost{fill:#d62828}"
                    ".cn{stroke:#3b4a63;stroke-opacity:.28;stroke-width:.8}"
                    ".lane{fill:#f3f4f6}</style>");

    /* Lanes, grid and axis underneath everything */
    g_string_append_printf(o, "<rect class=\"lane\" x=\"%d\" y=\"%.1f\" "
                           "width=\"%d\" height=\"%d\" rx=\"3\"/>"
                           "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" "
                           "text-anchor=\"end\">ring records</text>",
                           TL_PX, ring_y, TL_PW, TL_RING_H, TL_PX - 10,
                           ring_y + TL_RING_H / 2 + 4);
    for (i = 0; i < tl->nlanes; i++) {
        g_string_append_printf(o, "<rect class=\"lane\" x=\"%d\" y=\"%.1f\" "
                               "width=\"%d\" height=\"%d\" rx=\"2\"/>"
                               "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" "
                               "text-anchor=\"end\">", TL_PX, lane_y(i),
                               TL_PW, TL_LANE_H, TL_PX - 10,
                               lane_y(i) + TL_LANE_H / 2 + 4);
        if (i < tl->ncpus) {
            g_string_append_printf(o, "vCPU %u", i);
        } else {
            g_string_append(o, tl->ncpus ? "other" : "console");
        }
        g_string_append(o, "</text>");
    }
    tl_axis(o, tl, ring_y, bottom);

    tl_ticks(o, tl, ring_y);
    if (!tl->has_offset) {
        g_string_append_printf(o, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" "
                               "style=\"fill:#7a8294\">no line carried a "
                               "printk time stamp</text>", TL_PX + 8,
                               ring_y + TL_RING_H / 2 + 4);
    }
    tl_lost_column(o, tl, ring_y);

    if (tl->lines->len > TL_DETAIL_MAX) {
        tl_lines_bucketed(o, tl);
    } else {
        /* Lines with a problem last, so that nothing covers them. */
        for (pass = 0; pass < 2; pass++) {
            for (i = 0; i < tl->lines->len; i++) {
                const TlLine *l = &g_array_index(tl->lines, TlLine, i);
                gboolean problem = line_styles[l->style].rank > 3 ||
                                   l->style == N_LINE_STYLES - 1;

                if (problem == pass) {
                    tl_line_rect(o, tl, l);
                }
            }
        }
    }
    g_string_append(o, "</svg>");
}

/* What the page calls */

RsTimeline *rs_timeline_load(const char *rundir, guint smp, GError **error)
{
    g_autofree char *events = g_build_filename(rundir, "events.jsonl", NULL);
    g_autoptr(RsTimeline) tl = NULL;

    if (!g_file_test(events, G_FILE_TEST_IS_REGULAR)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: no events.jsonl (not a run directory)", rundir);
        return NULL;
    }
    tl = g_new0(RsTimeline, 1);
    tl->s = rs_event_stream_load(events, error);
    if (!tl->s) {
        return NULL;
    }
    if (!tl->s->saw_start) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: empty event stream", events);
        return NULL;
    }
    if (!tl->s->tx->len) {
        g_autofree char *con = g_build_filename(rundir, "console.log", NULL);

        g_file_get_contents(con, &tl->console, &tl->console_len, NULL);
    }
    timeline_build(tl, smp);
    return g_steal_pointer(&tl);
}

void rs_timeline_facts_html(GString *o, const RsTimeline *tl)
{
    guint counts[N_LINE_STYLES] = { 0 }, i;
    gboolean first = TRUE;

    for (i = 0; i < tl->lines->len; i++) {
        counts[g_array_index(tl->lines, TlLine, i).style]++;
    }
    g_string_append_printf(o, "<dt>lines</dt><dd>%u:", tl->lines->len);
    for (i = 0; i < N_LINE_STYLES; i++) {
        if (counts[i]) {
            g_string_append_printf(o, "%s %s %u", first ? "" : ",",
                                   line_styles[i].name, counts[i]);
            first = FALSE;
        }
    }
    g_string_append_printf(o, "</dd><dt>span</dt><dd>%.3f\xe2\x80\x93%.3f ms "
                           "of guest virtual time", tl->tmin / 1e6,
                           tl->tmax / 1e6);
    if (tl->has_offset) {
        g_string_append_printf(o, "; records placed at printk time + %.3f "
                               "ms, the smallest (virtual time &minus; "
                               "printk time) of any line", tl->offset / 1e6);
    }
    g_string_append(o, "</dd>");
}

void rs_timeline_html(GString *o, const RsTimeline *tl)
{
    tl_legend(o, tl);
    timeline_svg(o, tl);
    tl_lost_list(o, tl);
    g_string_append(o, "<p class=\"note\">");
    if (tl->no_bytes) {
        g_string_append(o, "This run has no byte events nor line times (a "
                        "schema 2 stream from a device with tx-events=off): "
                        "each console line is a mark "
                        "at the time of its last byte on the wire, in the "
                        "lane of the vCPU that bracketed its record (level "
                        "1), else in one lane.");
    } else {
        g_string_append(o, "Each console line is drawn from its first to its "
                        "last byte on the wire, in the lane of the vCPU that "
                        "wrote its first byte.");
    }
    if (tl->lines->len > TL_DETAIL_MAX) {
        g_string_append(o, " There are too many lines to draw one by one: "
                        "each pixel shows the verdict that matters most.");
    }
    if (tl->ticks->len && tl->ticks->len <= TL_LINKS_MAX) {
        g_string_append(o, " Thin lines join a record to the end of its line "
                        "on the wire; the offset between the clocks is one "
                        "for the whole run, so a drift between them shows "
                        "as a slope.");
    }
    g_string_append(o, " Hover for details.</p>");
}
