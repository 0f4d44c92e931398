/*
 * A fuzz campaign's output directory as a journal, so that a run killed
 * at any point (SIGKILL, a scheduler's SIGTERM, a node lost) goes on
 * where it stopped when the same command is run again.
 *
 * results.jsonl is append-only: each case is one line, written with one
 * write(2) once the case has ended and its case file is saved, and synced;
 * the line's final newline is its completion marker.  Reopening the
 * directory drops a torn last line (no newline: the write was cut), reads
 * which cases are done, checks that they belong to this campaign (same
 * seed, shard, kernel and scenarios), and clears what the cases in flight
 * at the stop left behind (their run directory and case file), so those
 * run again, once.  A lock file keeps a second run out of the directory.
 */
#ifndef RINGSIDE_CAMPAIGN_H
#define RINGSIDE_CAMPAIGN_H

#include "fuzz/scenario.h"
#include "report/outcome.h"

#include <glib.h>

/* What makes a campaign: a directory holds cases of one only. */
typedef struct {
    guint64 seed;
    guint shard_i, shard_n;
    const char *kernel_sha;
    const char *const *tests;
} RsCampaignId;

/* A case recorded by an earlier run, as the summary needs it. */
typedef struct {
    guint64 index;
    gboolean cold;
    int klass;              /* RsClass */
    gboolean judged, faithful;
    double wall_s;
} RsCampaignCase;

typedef struct {
    char *dir;
    int fd;                 /* results.jsonl, O_APPEND */
    int lock_fd;
    GHashTable *done[2];    /* indexes recorded, [cold] */
    GArray *earlier;        /* RsCampaignCase, in file order */
    guint64 torn_bytes;     /* dropped from the end of results.jsonl */
    guint unfinished;       /* run directories of cases in flight, cleared */
} RsCampaign;

/*
 * The seed recorded in @dir (fuzz.json, else results.jsonl's first line),
 * for a resumed run given no --seed; FALSE if there is none.
 */
gboolean rs_campaign_recorded_seed(const char *dir, guint64 *seed);

/*
 * Lock @dir and open its results.jsonl for appending, reading back the
 * cases already in it.  Fails when another run holds the directory, when
 * a complete line is not a case of @id, or on I/O errors.
 */
gboolean rs_campaign_open(RsCampaign *c, const char *dir,
                          const RsCampaignId *id, GError **error);
void rs_campaign_close(RsCampaign *c);

gboolean rs_campaign_is_done(const RsCampaign *c, gboolean cold,
                             guint64 index);

/* Append one case's line (ending in a newline), whole, and sync it. */
gboolean rs_campaign_append(RsCampaign *c, gboolean cold, guint64 index,
                            const char *line, gsize len, GError **error);

/*
 * Remove what a case that did not end may have left: its run directory
 * and any case file of its index.
 */
void rs_campaign_clear_case(const RsCampaign *c, gboolean cold,
                            guint64 index);

#endif
