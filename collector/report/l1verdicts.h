/*
 * Level 1: what ringside-serial judged of the console records that a
 * kernel with the ringside handshake bracketed ("bracket", "l1-record" and
 * "l1-summary" events): per-bracket and per-record counts, takeovers, and
 * the records that did not reach the wire whole.
 */
#ifndef RINGSIDE_L1VERDICTS_H
#define RINGSIDE_L1VERDICTS_H

#include "events/events.h"

#include <stdio.h>

/* Brackets counted by rs_l1_bracket_verdict, records by
 * rs_l1_record_verdict (rslib-events.h). */
typedef struct {
    gboolean present;       /* the kernel bracketed its records */
    guint64 brackets[RS_B_COUNT];
    guint64 records[RS_R_COUNT];
    guint64 takeovers, unattributed;
    guint64 user;       /* lines of bytes outside any bracket */
    /* unchecked brackets marked while level 0 distrusted the ring */
    guint64 untrusted;
    guint cpus;             /* vCPUs that wrote records */
    gboolean summary_agrees;
    /* torn, corrupt and bogus brackets; missing, cut, damaged and
     * duplicate records */
    guint64 problems;
} RsL1Report;

void rs_l1_report_build(const RsEventStream *s, RsL1Report *r);
void rs_l1_report_print(FILE *f, const RsEventStream *s, const RsL1Report *r);
/* ,"l1":{...} for the JSON report, or nothing without level 1. */
void rs_l1_report_print_json(FILE *f, const RsL1Report *r);

#endif
