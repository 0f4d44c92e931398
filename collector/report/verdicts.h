/*
 * What ringside-serial judged, read back from its event stream: counts per
 * verdict, the records missing, damaged lines, and wire latency recomputed
 * with the whole stream in view.
 */
#ifndef RINGSIDE_VERDICTS_H
#define RINGSIDE_VERDICTS_H

#include "events/events.h"
#include "report/l1verdicts.h"
#include "report/verdicttable.h"

#include <stdio.h>

/*
 * The verdicts are rslib-events.h's: line verdicts, counted in lines[] by
 * rs_verdict, then record verdicts, counted in records[RS_REC(v)].
 */
#define RS_REC(v)       ((v) - RS_V_MISSING)

/* Whether a line or record verdict counts as a problem. */
gboolean rs_verdict_is_problem(const char *v);

typedef struct {
    guint64 lines[RS_V_LINE_COUNT];
    guint64 records[RS_V_RECORD_COUNT];  /* missing, filtered, dropped */
    guint64 problems;   /* corrupt + torn + duplicate + reordered +
                         * unmatched lines, missing records */
    /* problem lines holding bytes the guest's own transmit FIFO reset
     * discarded: the guest's UART driver lost them, not the wire */
    guint64 fifo_reset;
    /* user lines stamped like the kernel's: no record around the stamp
     * prints them (vouched), or one has the stamp, not the text */
    guint64 user_vouched, user_ambiguous;
    gboolean summary_agrees;    /* the device's own totals match */
    /* the console's prefix: RS_FMT_* bits of the lines matched, -1 not
     * known (the device's summary says) */
    int prefix;
    /*
     * Latency of ok lines, ns, against the clock offset measured on the
     * last fresh line before each (rslib-match.c); lines before the
     * first fresh one, or that the guest clock got ahead of, are not
     * measured.
     */
    guint64 lat_n, lat_unknown, lat_negative;
    gint64 lat_min, lat_p50, lat_p99, lat_max;
} RsVerdictReport;

void rs_verdict_report_build(const RsEventStream *s, RsVerdictReport *r);

/* The table ringside report and ringside run print. */
void rs_verdict_report_print(FILE *f, const RsEventStream *s,
                             const RsVerdictReport *r);
/* The same as one JSON object, with level 1's if any, and a newline. */
void rs_verdict_report_print_json(FILE *f, const RsEventStream *s,
                                  const RsVerdictReport *r,
                                  const RsL1Report *l1);

#endif
