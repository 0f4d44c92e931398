/*
 * Level 1 verdicts read back from the event stream; see l1verdicts.h.
 */
#include "report/l1verdicts.h"
#include "report/verdicttable.h"

#include <string.h>

static const char *const bracket_notes[RS_B_COUNT] = {
    "", "whole, but other bytes reached the wire inside it",
    "only a prefix: the writer stopped or was taken over",
    "bytes differ from the record", "the kernel's own count",
    "left the ring before it could be compared",
    "the kernel marked a record that is not in the ring",
    "no trusted ring to check it against",
};
static const char *const record_notes[RS_R_COUNT] = {
    "", "at a printed level, never on the wire",
    "only a prefix ever reached the wire",
    "only a damaged copy ever reached the wire",
    "the kernel said it dropped them", "below the console loglevel",
    "printed whole more than once",
};

static guint64 summary_count(const RsEventStream *s, const char *prefix,
                             const char *name, gboolean *found)
{
    g_autofree char *key = g_strconcat(prefix, name, NULL);
    const gint64 *v = g_hash_table_lookup(s->l1_summary, key);

    *found = v != NULL;
    return v ? (guint64)*v : 0;
}

void rs_l1_report_build(const RsEventStream *s, RsL1Report *r)
{
    guint64 cpus = 0;   /* bit per vCPU 0..62, bit 63 for the rest */
    gboolean found;
    guint i;
    int k;

    memset(r, 0, sizeof(*r));
    r->present = s->brackets->len || s->saw_l1_summary;
    for (i = 0; i < s->brackets->len; i++) {
        const RsBracket *b = &g_array_index(s->brackets, RsBracket, i);

        k = rs_name_index(rs_l1_bracket_names, RS_B_COUNT,
                             b->verdict);
        if (k >= 0) {
            r->brackets[k] += b->run;
        }
        cpus |= 1ull << (b->cpu >= 0 && b->cpu < 63 ? b->cpu : 63);
    }
    r->cpus = __builtin_popcountll(cpus);
    rs_verdict_count_records(s->l1_records, rs_l1_record_names,
                             RS_R_COUNT, r->records);
    /* delivered and filtered records are only counted, in the summary */
    r->summary_agrees = s->saw_l1_summary;
    if (s->saw_l1_summary) {
        r->records[RS_R_DELIVERED] = summary_count(
            s, "record-", rs_l1_record_name(RS_R_DELIVERED), &found);
        r->records[RS_R_FILTERED] = summary_count(
            s, "record-", rs_l1_record_name(RS_R_FILTERED), &found);
        r->takeovers = summary_count(s, "", "takeovers", &found);
        r->unattributed = summary_count(s, "", "unattributed", &found);
        r->user = summary_count(s, "", "user", &found);
        r->untrusted = summary_count(s, "", "untrusted", &found);
        for (k = 0; k < RS_B_COUNT; k++) {
            if (summary_count(s, "bracket-", rs_l1_bracket_names[k],
                              &found) != r->brackets[k] || !found) {
                r->summary_agrees = FALSE;
            }
        }
        for (k = RS_R_DELIVERED + 1; k < RS_R_COUNT; k++) {
            if (k != RS_R_FILTERED && (summary_count(s, "record-",
                                         rs_l1_record_names[k], &found) !=
                           r->records[k] || !found)) {
                r->summary_agrees = FALSE;
            }
        }
    }
    r->problems = r->brackets[RS_B_TORN] + r->brackets[RS_B_CORRUPT] +
                  r->brackets[RS_B_BOGUS] + r->records[RS_R_MISSING] +
                  r->records[RS_R_CUT] + r->records[RS_R_DAMAGED] +
                  r->records[RS_R_DUPLICATE];
}

void rs_l1_report_print(FILE *f, const RsEventStream *s, const RsL1Report *r)
{
    guint64 total = 0;
    guint i, shown;
    int k;

    if (!r->present) {
        return;
    }
    for (k = 0; k < RS_B_COUNT; k++) {
        total += r->brackets[k];
    }
    fprintf(f, "level 1: ");
    if (s->saw_handshake) {
        fprintf(f, "ring announced (note at 0x%" G_GINT64_MODIFIER "x)",
                s->handshake_note);
    } else {
        fprintf(f, "records marked, ring not announced");
    }
    fprintf(f, "; %s\n", s->saw_l1_summary ?
            (r->summary_agrees ? "device summary agrees" :
             "DEVICE SUMMARY DIFFERS from its events") :
            "no device summary (the guest had not stopped)");
    fprintf(f, "console records %13" G_GUINT64_FORMAT "  from %u vCPU%s\n",
            total, r->cpus, r->cpus == 1 ? "" : "s");
    rs_verdict_print_rows(f, rs_l1_bracket_names, r->brackets, bracket_notes,
                          RS_B_COUNT);
    if (r->untrusted) {
        fprintf(f, "    of them %" G_GUINT64_FORMAT " while level 0 "
                "distrusted the ring\n", r->untrusted);
    }
    fprintf(f, "ring records\n");
    rs_verdict_print_rows(f, rs_l1_record_names, r->records, record_notes,
                          RS_R_COUNT);
    fprintf(f, "  takeovers %16" G_GUINT64_FORMAT "  unattributed bytes %"
            G_GUINT64_FORMAT " (user space's lines %" G_GUINT64_FORMAT ")\n",
            r->takeovers, r->unattributed, r->user);
    for (i = 0, shown = 0; i < s->brackets->len && shown < RS_DETAIL_MAX;
         i++) {
        const RsBracket *b = &g_array_index(s->brackets, RsBracket, i);

        if (!strcmp(b->verdict, "ok") ||
            !strcmp(b->verdict, "dropped-notice") ||
            !strcmp(b->verdict, "overwritten") ||
            !strcmp(b->verdict, "unchecked")) {
            continue;
        }
        shown++;
        fprintf(f, "  %s record seq %" G_GUINT64_FORMAT " from cpu %d",
                b->verdict, b->seq, b->cpu);
        if (b->has_bytes) {
            fprintf(f, ", bytes %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT,
                    b->first, b->last);
        }
        if (b->taken) {
            fprintf(f, ", taken over by cpu %d (seq %" G_GUINT64_FORMAT ")",
                    b->by_cpu, b->by_seq);
        }
        if (b->nested) {
            fputs(", interrupted on its cpu", f);
        }
        if (b->open) {
            fputs(", never ended", f);
        }
        if (!strcmp(b->verdict, "corrupt")) {
            fprintf(f, ", first difference at byte %d", b->at);
        }
        fputc('\n', f);
    }
    for (i = 0, shown = 0; i < s->l1_records->len && shown < RS_DETAIL_MAX;
         i++) {
        const RsRecordVerdict *rv = &g_array_index(s->l1_records,
                                                   RsRecordVerdict, i);

        if (!strcmp(rv->verdict, "dropped")) {
            continue;
        }
        shown++;
        fprintf(f, "  %s record seq %" G_GUINT64_FORMAT, rv->verdict,
                rv->seq);
        if (rv->count > 1) {
            fprintf(f, "..%" G_GUINT64_FORMAT, rv->seq + rv->count - 1);
        }
        if (rv->level >= 0) {
            fprintf(f, " (level %d)", rv->level);
        }
        fputc('\n', f);
    }
    fprintf(f, "level 1 verdict: %s", r->problems ? "PROBLEMS" : "clean");
    if (r->problems) {
        fprintf(f, " (%" G_GUINT64_FORMAT ")", r->problems);
    }
    fputc('\n', f);
}

void rs_l1_report_print_json(FILE *f, const RsL1Report *r)
{
    if (!r->present) {
        return;
    }
    fputs(",\"l1\":{\"brackets\":", f);
    rs_verdict_print_json_counts(f, rs_l1_bracket_names, r->brackets,
                                 RS_B_COUNT);
    fputs(",\"records\":", f);
    rs_verdict_print_json_counts(f, rs_l1_record_names, r->records,
                                 RS_R_COUNT);
    fprintf(f, ",\"takeovers\":%" G_GUINT64_FORMAT ",\"unattributed\":%"
            G_GUINT64_FORMAT ",\"user\":%" G_GUINT64_FORMAT ",\"cpus\":%u,"
            "\"summary_agrees\":%s,\"problems\":%" G_GUINT64_FORMAT "}",
            r->takeovers, r->unattributed, r->user, r->cpus,
            r->summary_agrees ? "true" : "false", r->problems);
}
