/*
 * Accounting for a run's console lines in an event stream that a reader
 * may join late, leave and rejoin (a socket chardev's client), or read
 * from rotated files: every "line" record the device made is either in
 * the stream, reported lost by the device ("lost" with "lines"), or
 * counted here as a gap.  The device's "connected" record and the
 * "rotated" record at the head of each rotated file carry the run's
 * "start" and how many line records came before them.
 */
#ifndef RINGSIDE_EVLEDGER_H
#define RINGSIDE_EVLEDGER_H

#include <glib.h>

typedef enum {
    RS_LEDGER_OTHER,    /* any other record */
    RS_LEDGER_START,    /* "start": a run begins */
    RS_LEDGER_LINE,     /* "line" */
    RS_LEDGER_LOST,     /* "lost": the device dropped records */
    RS_LEDGER_JOIN,     /* "connected" or "rotated": where the run stands */
} RsLedgerKind;

typedef struct {
    char *start;        /* the run's "start" record; NULL: no run yet */
    guint64 lines;      /* the run's line records accounted for so far */
    guint64 seen;       /* ... in the stream */
    guint64 lost;       /* ... reported lost by the device */
    guint64 gaps;       /* ... neither: the reader never had them */
} RsLedger;

void rs_ledger_clear(RsLedger *l);

/*
 * Account for record @rec (@len bytes, no newline).  *@gap: line records
 * the stream skipped before it (a reader that was away, the part of a run
 * before the reader joined); *@new_run: it begins a run, with
 * @l->start its "start" record (for a join, the one it carries).
 */
RsLedgerKind rs_ledger_feed(RsLedger *l, const char *rec, gsize len,
                            guint64 *gap, gboolean *new_run);

/* The "rotated" record that continues @l's run at the head of a file. */
char *rs_ledger_rotated_record(const RsLedger *l);

/* The record's "ev", copied into @ev (empty if it has none). */
void rs_ledger_event_name(const char *rec, gsize len, char ev[24]);

#endif
