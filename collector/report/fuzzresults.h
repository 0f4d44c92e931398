/*
 * The output directories of ringside fuzz (shards, machines, kernels) read
 * back and merged: their results.jsonl and fuzz.json, a case found twice
 * counted once, and the cases per kernel and class as a plain-text table.
 */
#ifndef RINGSIDE_FUZZRESULTS_H
#define RINGSIDE_FUZZRESULTS_H

#include "report/outcome.h"

#include <stdio.h>

/* An output directory, and its fuzz.json if it has one. */
typedef struct {
    char *path;             /* as given */
    char *real;             /* resolved, to spot a directory given twice */
    gboolean has_fuzz;      /* fuzz.json: absent while a run goes on */
    char *shard, *kernel, *kernel_sha, *pace;
    gint64 seed, jobs;
    double cold_cases, cold_s, snap_cases, snap_s, save_s;
    guint64 cases, duplicates;
    gint64 wanted;          /* its --cases (fuzz.json), 0: by duration */
    int complete;           /* fuzz.json says: 1 done, 0 not, -1 unsaid */
    guint shard_i, shard_n; /* parsed from shard; n 0: unknown */
    guint64 snap_new;       /* snapshot cases first merged from it */
    /* Per case merged from it: when it ended (unix ms; [cold]) and, for a
     * resident case, where its wall time went (RsResultOverhead). */
    GArray *ends[2];
    GArray *overhead;
} RsResultDir;

/* A resident case's wall time, in ms: the harness's part and the guest's. */
typedef struct {
    double total, reset, ram, feed, collect, judge, guest;
} RsResultOverhead;

typedef struct {
    char *sha, *path, *osrelease;
    guint64 classes[2][RS_N_CLASSES];   /* [cold][class] */
    guint64 lat[RS_LAT_BUCKETS];
} RsResultKernel;

/* A case kept for the page: failing, or with its run directory kept. */
typedef struct {
    guint dir, kernel;      /* indexes in RsFuzzResults.dirs, .kernels */
    gboolean cold;
    int klass;
    guint64 index;
    gint64 smp;
    int panic_line;         /* reached the wire: 1, did not: 0, unsaid: -1 */
    char *test, *words, *error, *case_file, *run_dir, *ended;
} RsResultCase;

typedef struct {
    GPtrArray *dirs;        /* RsResultDir, in the order added */
    GPtrArray *kernels;     /* RsResultKernel, in the order first seen */
    GPtrArray *cases;       /* RsResultCase */
    GHashTable *seen;       /* "sha|seed|index|mode" of the cases merged */
    guint64 total[2], failing[2], duplicates;   /* [cold] */
    FILE *merged;           /* if set: each case merged, its line as read */
} RsFuzzResults;

RsFuzzResults *rs_fuzz_results_new(void);
void rs_fuzz_results_free(RsFuzzResults *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsFuzzResults, rs_fuzz_results_free)

/*
 * Merge a fuzz output directory: its results.jsonl (a case already merged,
 * same kernel, seed, index and mode, is skipped) and fuzz.json if there is
 * one.  Fails on a missing results.jsonl and on any malformed line.
 */
gboolean rs_fuzz_results_add_dir(RsFuzzResults *r, const char *dir,
                                 GError **error);

/*
 * Cases per kernel, mode and class; then, per campaign of --cases split
 * in shards (same kernel, seed, shard count and --cases), how many of
 * its cases were merged and which shards are missing or unfinished.
 */
void rs_fuzz_results_print(const RsFuzzResults *r, FILE *f);

/* The cases of @k merged, in one mode. */
guint64 rs_result_kernel_total(const RsResultKernel *k, gboolean cold);

/* The run directory of @c if it was kept (it has events.jsonl), or NULL. */
char *rs_fuzz_results_run_dir(const RsFuzzResults *r, const RsResultCase *c);

/* The case whose kept run directory is @rundir, or NULL. */
const RsResultCase *rs_fuzz_results_case_of_run(const RsFuzzResults *r,
                                                const char *rundir);

#endif
