/*
 * Running fuzz cases: the guest booted once per vCPU count to the point
 * where /init waits for a scenario, saved, and each case restored from that
 * state with its scenario in ringside-serial's mailbox (or booted cold),
 * up to @jobs QEMUs at a time on a GLib main loop.
 */
#ifndef RINGSIDE_FUZZRUN_H
#define RINGSIDE_FUZZRUN_H

#include "fuzz/fuzzcase.h"

/* Boot and save the guest for each vCPU count in @smps (bit n: n vCPUs). */
gboolean rs_fuzz_snapshots(RsFuzzEnv *env, guint smps, GError **error);

/*
 * Run cases until @next returns NULL, at most env->jobs at a time; @done
 * gets each (and owns it) as it ends.  Returns when all have ended.
 */
void rs_fuzz_run(RsFuzzEnv *env, RsFuzzNext next, RsFuzzDone done,
                 gpointer opaque);

/* Run one case to its end (ringside run --case, replay, minimisation). */
void rs_fuzz_run_one(RsFuzzEnv *env, RsFuzzCase *c);

/* Bits of rs_fuzz_snapshots' @smps: every vCPU count a scenario has. */
#define RS_FUZZ_ALL_SMPS (((1u << (RS_SCENARIO_SMP_MAX + 1)) - 1) & ~1u)

/*
 * Save @c's scenario as a case file, with where it came from: @seed, its
 * index, the kernel (and @kernel_sha, computed if NULL), and its class.
 */
gboolean rs_fuzz_save_case(const RsFuzzEnv *env, const RsFuzzCase *c,
                           guint64 seed, const char *kernel_sha,
                           const char *path, GError **error);

/* Hex SHA-256 of a file's content ("" if unreadable). */
char *rs_file_sha256(const char *path);

#endif
