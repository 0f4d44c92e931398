/* Reading ringside-serial's verdicts back from its event stream. */
#include "report/verdicts.h"

#include <string.h>

gboolean rs_verdict_is_problem(const char *v)
{
    int k = rs_name_index(rs_verdict_names, RS_V_COUNT, v);

    switch (k) {
    case RS_V_CORRUPT:
    case RS_V_TORN:
    case RS_V_DUPLICATE:
    case RS_V_REORDERED:
    case RS_V_UNMATCHED:
    case RS_V_MISSING:
        return TRUE;
    default:
        return FALSE;
    }
}

static gint cmp_i64(gconstpointer a, gconstpointer b)
{
    gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;

    return x < y ? -1 : x > y;
}

/* vt of a line's first byte minus its record's ts: the clock offset. */
static gboolean fresh_offset(const RsLineVerdict *lv, gint64 *off)
{
    if (!lv->fresh || !lv->has_ts || lv->first_vt_ns < 0) {
        return FALSE;
    }
    *off = lv->first_vt_ns - (gint64)lv->ts_ns;
    return TRUE;
}

static void build_latency(const RsEventStream *s, RsVerdictReport *r)
{
    g_autoptr(GArray) lat = g_array_new(FALSE, FALSE, sizeof(gint64));
    gboolean have = FALSE;
    gint64 off = 0;
    guint i;

    for (i = 0; i < s->lines->len; i++) {
        const RsLineVerdict *lv = &g_array_index(s->lines, RsLineVerdict, i);
        gint64 l;

        have |= fresh_offset(lv, &off);
        if (strcmp(lv->verdict, "ok") || !lv->has_ts) {
            continue;
        }
        if (!have) {
            r->lat_unknown++;   /* before the first fresh line */
            continue;
        }
        l = lv->vt_ns - (gint64)lv->ts_ns - off;
        if (l < 0) {
            r->lat_negative++;  /* the guest clock ran ahead meanwhile */
            continue;
        }
        g_array_append_val(lat, l);
    }
    if (!lat->len) {
        return;
    }
    g_array_sort(lat, cmp_i64);
    r->lat_n = lat->len;
    r->lat_min = g_array_index(lat, gint64, 0);
    r->lat_max = g_array_index(lat, gint64, lat->len - 1);
    r->lat_p50 = g_array_index(lat, gint64, lat->len / 2);
    r->lat_p99 = g_array_index(lat, gint64, lat->len - 1 - lat->len / 100);
}

void rs_verdict_report_build(const RsEventStream *s, RsVerdictReport *r)
{
    guint i;
    int k;

    memset(r, 0, sizeof(*r));
    for (i = 0; i < s->lines->len; i++) {
        const RsLineVerdict *lv = &g_array_index(s->lines, RsLineVerdict, i);

        k = rs_name_index(rs_verdict_names, RS_V_LINE_COUNT,
                             lv->verdict);
        if (k >= 0) {
            r->lines[k]++;
        }
        if (rs_verdict_is_problem(lv->verdict) &&
            rs_event_stream_cleared_in(s, lv->first, lv->last)) {
            r->fifo_reset++;
        }
        r->user_vouched += !strcmp(lv->why, "vouched");
        r->user_ambiguous += !strcmp(lv->why, "ambiguous");
    }
    rs_verdict_count_records(s->records, (rs_verdict_names + RS_V_MISSING),
                             RS_V_RECORD_COUNT, r->records);
    /* filtered records are only counted, in the summary */
    r->summary_agrees = s->saw_summary;
    r->prefix = s->prefix;
    if (s->saw_summary) {
        const gint64 *f = g_hash_table_lookup(s->summary_counts, "filtered");

        r->records[RS_REC(RS_V_FILTERED)] = f ? (guint64)*f : 0;
        for (k = 0; k < RS_V_COUNT; k++) {
            const char *name = rs_verdict_name(k);
            guint64 mine = k < RS_V_LINE_COUNT ? r->lines[k] :
                r->records[RS_REC(k)];
            const gint64 *theirs = g_hash_table_lookup(s->summary_counts,
                                                       name);

            /* older schema 2 streams have no "user", "replayed", "notice" */
            if (theirs ? (guint64)*theirs != mine : mine != 0) {
                r->summary_agrees = FALSE;
            }
        }
    }
    for (k = 0; k < RS_V_LINE_COUNT; k++) {
        r->problems += rs_verdict_is_problem(rs_verdict_names[k]) ?
                       r->lines[k] : 0;
    }
    for (k = 0; k < RS_V_RECORD_COUNT; k++) {
        r->problems += rs_verdict_is_problem(rs_verdict_names[RS_V_MISSING + k]) ?
                       r->records[k] : 0;
    }
    build_latency(s, r);
}

static const char *const line_notes[RS_V_LINE_COUNT] = {
    "", "a record's line with bytes changed, lost or added",
    "bytes of two records interleaved", "a record printed again",
    "a record printed after a later one", "no record explains it",
    "the kernel said it dropped records", "no trusted ring to check against",
    "its record was overwritten while it was on the wire",
    "user space wrote it, not the kernel",
    "a copy a console takeover replaced: the record was printed again whole",
    "the console's own line: a replay notice, early perf warning, "
    "one the guest stopped in",
};
static const char *const record_notes[RS_V_RECORD_COUNT] = {
    "in the ring, never on the console", "below the console loglevel",
    "counted in a dropped notice",
};

/* Why the ring could not vouch for an unmatched line, by its "why". */
static const char *unvouched_reason(const char *why)
{
    static const struct {
        const char *why, *text;
    } reasons[] = {
        { "gap", "a record stamped near it cannot be read" },
        { "busy", "too many records stamped near it to read them all" },
        { "gone", "records stamped before it have been overwritten" },
        { "no-stamp", "it has no time stamp to look it up by" },
        { "overlong", "longer than any console line kept" },
    };
    guint i;

    for (i = 0; i < G_N_ELEMENTS(reasons); i++) {
        if (!strcmp(why, reasons[i].why)) {
            return reasons[i].text;
        }
    }
    return NULL;
}

static void print_byte(FILE *f, int b)
{
    if (b < 0) {
        fputs("(none)", f);
    } else if (b >= 0x20 && b < 0x7f && b != '\'') {
        fprintf(f, "'%c'", b);
    } else {
        fprintf(f, "0x%02x", b);
    }
}

/* "ring: attached (via ...); device summary agrees" */
static void print_ring_line(FILE *f, const RsEventStream *s,
                            const RsVerdictReport *r)
{
    fprintf(f, "ring: %s", s->ring_state[0] ? s->ring_state : "never seen");
    if (s->ring_via[0]) {
        fprintf(f, " (via %s", s->ring_via);
        if (s->osrelease[0]) {
            fprintf(f, ", Linux %s", s->osrelease);
        }
        fputc(')', f);
    }
    fprintf(f, "; %s\n", s->saw_summary ?
            (r->summary_agrees ? "device summary agrees" :
             "DEVICE SUMMARY DIFFERS from its events") :
            "no device summary (the guest had not stopped)");
}

/* The console lines' table, ok's latency beside it. */
static void print_line_table(FILE *f, const RsVerdictReport *r)
{
    guint64 total = 0;
    int k;

    for (k = 0; k < RS_V_LINE_COUNT; k++) {
        total += r->lines[k];
    }
    fprintf(f, "console lines %15" G_GUINT64_FORMAT "\n", total);
    for (k = 0; k < RS_V_LINE_COUNT; k++) {
        fprintf(f, "  %-16s %10" G_GUINT64_FORMAT, rs_verdict_names[k],
                r->lines[k]);
        if (k == RS_V_OK && r->lat_n) {
            fprintf(f, "  latency ms: min %.3f  p50 %.3f  p99 %.3f  max %.3f"
                    " (%" G_GUINT64_FORMAT " lines", r->lat_min / 1e6,
                    r->lat_p50 / 1e6, r->lat_p99 / 1e6, r->lat_max / 1e6,
                    r->lat_n);
            if (r->lat_unknown + r->lat_negative) {
                fprintf(f, "; %" G_GUINT64_FORMAT " not measured",
                        r->lat_unknown + r->lat_negative);
            }
            fputc(')', f);
        } else if (k != RS_V_OK && r->lines[k]) {
            fprintf(f, "  %s", line_notes[k]);
        }
        fputc('\n', f);
    }
    fprintf(f, "ring records not on the console\n");
    rs_verdict_print_rows(f, rs_verdict_names + RS_V_MISSING, r->records,
                          record_notes, RS_V_RECORD_COUNT);
}

/* One damaged line, with what is known of how. */
static void print_damaged_line(FILE *f, const RsEventStream *s,
                               const RsLineVerdict *lv)
{
    guint64 cleared;

    fprintf(f, "  %s line, bytes %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT,
            lv->verdict, lv->first, lv->last);
    if (lv->has_seq) {
        fprintf(f, ", seq %" G_GUINT64_FORMAT, lv->seq);
    }
    if (!strcmp(lv->verdict, "torn") && lv->by_user) {
        fprintf(f, " torn by user space: bytes %" G_GUINT64_FORMAT
                "..%" G_GUINT64_FORMAT, lv->first + lv->user_at,
                lv->first + lv->user_at + lv->user_len - 1);
    } else if (!strcmp(lv->verdict, "torn")) {
        fprintf(f, " with seq %" G_GUINT64_FORMAT, lv->seq2);
    }
    if (!strcmp(lv->verdict, "unmatched") && unvouched_reason(lv->why)) {
        fprintf(f, ": the ring cannot vouch for it, %s",
                unvouched_reason(lv->why));
    }
    if (!strcmp(lv->verdict, "corrupt")) {
        fprintf(f, ": byte %d is ", lv->at);
        print_byte(f, lv->got);
        fputs(", the record has ", f);
        print_byte(f, lv->want);
    }
    cleared = rs_event_stream_cleared_in(s, lv->first, lv->last);
    if (cleared) {
        fprintf(f, " (%" G_GUINT64_FORMAT " of its bytes discarded by "
                "the guest's transmit FIFO reset)", cleared);
    }
    fputc('\n', f);
}

/* The first RS_DETAIL_MAX damaged lines and missing records. */
static void print_details(FILE *f, const RsEventStream *s)
{
    guint i, shown;

    for (i = 0, shown = 0; i < s->lines->len && shown < RS_DETAIL_MAX;
         i++) {
        const RsLineVerdict *lv = &g_array_index(s->lines, RsLineVerdict, i);

        if (rs_verdict_is_problem(lv->verdict)) {
            shown++;
            print_damaged_line(f, s, lv);
        }
    }
    for (i = 0, shown = 0; i < s->records->len && shown < RS_DETAIL_MAX;
         i++) {
        const RsRecordVerdict *rv = &g_array_index(s->records,
                                                   RsRecordVerdict, i);

        if (strcmp(rv->verdict, rs_verdict_name(RS_V_MISSING))) {
            continue;
        }
        shown++;
        fprintf(f, "  missing record seq %" G_GUINT64_FORMAT, rv->seq);
        if (rv->count > 1) {
            fprintf(f, "..%" G_GUINT64_FORMAT, rv->seq + rv->count - 1);
        }
        if (rv->level >= 0) {
            fprintf(f, " (level %d)", rv->level);
        }
        fputc('\n', f);
    }
}

/* What the reader needs to know to read the counts right. */
static void print_footnotes(FILE *f, const RsVerdictReport *r)
{
    if (r->prefix == 0 && r->lines[RS_V_USER]) {
        fputs("  (the console prints no timestamp: printk.time=0.  Level 0 "
              "then tells user\n   space's lines from the kernel's by "
              "content alone, and a kernel line damaged\n   past recognition "
              "is counted as user space's.  Level 1 does not guess.)\n", f);
    }
    if (r->user_vouched + r->user_ambiguous) {
        fprintf(f, "  (%" G_GUINT64_FORMAT " user lines carry a time stamp "
                "like the kernel's, as journald's\n   console forwarding "
                "writes them. The ring still holds every record stamped\n"
                "   near each, and no record prints it.", r->user_vouched +
                r->user_ambiguous);
        if (r->user_ambiguous) {
            fprintf(f, "  For %" G_GUINT64_FORMAT " of them a record has "
                    "the same stamp\n   but other text: level 0 cannot tell "
                    "whose they are, and does not count\n   them against "
                    "the kernel.", r->user_ambiguous);
        }
        fputs(")\n", f);
    }
    if (r->fifo_reset) {
        fprintf(f, "  (%" G_GUINT64_FORMAT " of these lines lost bytes the "
                "guest wrote, then discarded itself:\n   its UART driver "
                "reset the transmit FIFO (FCR) while they waited to be\n"
                "   sent, as Linux's 8250 does at the first open and last "
                "close of the\n   console's tty.  A 16550A loses them too.)\n",
                r->fifo_reset);
    }
}

void rs_verdict_report_print(FILE *f, const RsEventStream *s,
                             const RsVerdictReport *r)
{
    print_ring_line(f, s, r);
    print_line_table(f, r);
    print_details(f, s);
    print_footnotes(f, r);
    fprintf(f, "verdict: %s", r->problems ? "PROBLEMS" : "clean");
    if (r->problems) {
        fprintf(f, " (%" G_GUINT64_FORMAT ")", r->problems);
    }
    if (r->lines[RS_V_UNCHECKED]) {
        fprintf(f, ", %" G_GUINT64_FORMAT " lines unchecked",
                r->lines[RS_V_UNCHECKED]);
    }
    fputc('\n', f);
}

void rs_verdict_report_print_json(FILE *f, const RsEventStream *s,
                                  const RsVerdictReport *r,
                                  const RsL1Report *l1)
{
    fprintf(f, "{\"ring\":\"%s\",\"summary\":%s,\"summary_agrees\":%s,"
            "\"lines\":", s->ring_state[0] ? s->ring_state : "",
            s->saw_summary ? "true" : "false",
            r->summary_agrees ? "true" : "false");
    rs_verdict_print_json_counts(f, rs_verdict_names, r->lines,
                                 RS_V_LINE_COUNT);
    fputs(",\"records\":", f);
    rs_verdict_print_json_counts(f, (rs_verdict_names + RS_V_MISSING), r->records,
                                 RS_V_RECORD_COUNT);
    fprintf(f, ",\"problems\":%" G_GUINT64_FORMAT ",\"fifo_reset_lines\":%"
            G_GUINT64_FORMAT ",\"user_stamped\":{\"vouched\":%"
            G_GUINT64_FORMAT ",\"ambiguous\":%" G_GUINT64_FORMAT "}"
            ",\"latency_ns\":{\"n\":%"
            G_GUINT64_FORMAT ",\"min\":%" G_GINT64_FORMAT ",\"p50\":%"
            G_GINT64_FORMAT ",\"p99\":%" G_GINT64_FORMAT ",\"max\":%"
            G_GINT64_FORMAT ",\"not_measured\":%" G_GUINT64_FORMAT "}",
            r->problems, r->fifo_reset, r->user_vouched, r->user_ambiguous,
            r->lat_n, r->lat_min, r->lat_p50, r->lat_p99,
            r->lat_max, r->lat_unknown + r->lat_negative);
    rs_l1_report_print_json(f, l1);
    fputs("}\n", f);
}
