/*
 * What the verdict reports of both levels (verdicts.h, l1verdicts.h) and
 * the outcome share: a verdict name looked up in its table, and how many
 * damaged lines and records a report lists in detail.
 */
#ifndef RINGSIDE_VERDICTTABLE_H
#define RINGSIDE_VERDICTTABLE_H

/* Damaged lines and records listed in detail by the reports, at most. */
#define RS_DETAIL_MAX   10

/* The index of verdict name v in names[0..n), or -1. */
int rs_verdict_index(const char *const *names, int n, const char *v);

#endif
