/*
 * What the verdict reports of both levels (verdicts.h, l1verdicts.h) and
 * the outcome share: a verdict name looked up in its table, record
 * verdicts counted by name, the tables' rows, and how many damaged lines
 * and records a report lists in detail.
 */
#ifndef RINGSIDE_VERDICTTABLE_H
#define RINGSIDE_VERDICTTABLE_H

#include "events/events.h"

#include <stdio.h>

/* Damaged lines and records listed in detail by the reports, at most. */
#define RS_DETAIL_MAX   10

/*
 * Add the count of each RsRecordVerdict in @records to @counts[k], k the
 * index of its verdict in names[0..n); other verdicts are not counted.
 */
void rs_verdict_count_records(const GArray *records,
                              const char *const *names, int n,
                              guint64 *counts);

/*
 * The reports' table rows: each verdict's name and count, and its note
 * when the count is not zero (an empty note: none).
 */
void rs_verdict_print_rows(FILE *f, const char *const *names,
                           const guint64 *counts, const char *const *notes,
                           int n);

/* The same counts as a JSON object, {"name":count,...}, without a newline. */
void rs_verdict_print_json_counts(FILE *f, const char *const *names,
                                  const guint64 *counts, int n);

#endif
