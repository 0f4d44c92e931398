/*
 * The resident fuzz runner: one QEMU per job and vCPU count runs case
 * after case, each restored by loadvm, on worker threads.
 */
#ifndef RINGSIDE_RESIDENT_H
#define RINGSIDE_RESIDENT_H

#include "fuzz/fuzzcase.h"

/*
 * Run cases until @next returns NULL, env->jobs workers at a time; each
 * calls @next and @done holding env->lock.  Returns when all have ended.
 */
void rs_fuzz_run_resident(RsFuzzEnv *env, RsFuzzNext next, RsFuzzDone done,
                          gpointer opaque);

#endif
