/*
 * What both fuzz runners (fuzzrun.c: a QEMU per case on the main loop;
 * resident.c: one QEMU per job, cases reset by loadvm, on worker threads)
 * share: the run's environment, a case, the guest configuration a case
 * runs with, and how a run hands out cases and takes them back.
 */
#ifndef RINGSIDE_FUZZCASE_H
#define RINGSIDE_FUZZCASE_H

#include "fuzz/scenario.h"
#include "guest/guest.h"
#include "report/outcome.h"

typedef struct {
    RsGuestConfig base;     /* qemu, kernel, initrd, accel, pace, memory,
                             * timeout_s (per case) */
    char *workdir;          /* snapshots/ and runs/ go here */
    guint jobs;
    gboolean no_ram_file;   /* runs without guest.ram (fuzz does) */
    gboolean no_tx_events;  /* nor an event per byte (fuzz, by default) */
    char *snapshot[RS_SCENARIO_SMP_MAX + 1];    /* saved state per smp */
    gboolean resident;      /* non-cold cases in one QEMU per job and vCPU
                             * count, reset by loadvm (resident.c) */
    /*
     * Held by the resident runner's worker threads while they call the
     * run's next and done functions: whoever else reads what those change
     * takes it too.
     */
    GMutex lock;
    /* What the resident QEMUs cost before their first case: booting to
     * /init's wait and saving the snapshot (s, all QEMUs added up). */
    guint resident_qemus;
    double resident_setup_s;
} RsFuzzEnv;

typedef struct {
    guint64 index;
    RsScenario sc;
    gboolean cold;          /* boot, instead of restoring a snapshot */
    char *dir;              /* its run directory */
    /* Filled in when it ran: */
    gboolean judged;        /* there was an event stream to judge */
    char *error;            /* why not */
    RsOutcome out;
    double wall_s;
    gboolean interrupted;   /* no outcome: QEMU did not start (@error
                             * says why) or was killed from outside */
    gint64 end_us;          /* wall-clock time it ended (g_get_real_time) */
    /*
     * A resident case: where its wall time went, in seconds.  guest_s is
     * the case's own run, from the guest's continue to its shutdown; the
     * rest is the harness's overhead.
     */
    gboolean resident;
    guint job;              /* its QEMU: resident/j<job>-smp<smp> */
    double guest_s;
    double reset_s;         /* the RAM put back, system_reset, loadvm */
    double ram_s;           /* of which the RAM */
    double feed_s;          /* the scenario written to the feed, cont */
    double collect_s;       /* the device's last event awaited, the
                             * output split into the case's files */
    double judge_s;         /* judged from those files */
    guint64 ram_pages;      /* guest pages put back by the reset */
    guint skipped_events;   /* events before the case's own: no case's */
    guint64 stray_bytes;    /* console bytes before the case's epoch
                             * line: not its own, left out (should be 0) */
} RsFuzzCase;

/* A zeroed environment with its lock ready; rs_fuzz_env_clear ends it. */
void rs_fuzz_env_init(RsFuzzEnv *env);
void rs_fuzz_env_clear(RsFuzzEnv *env);
void rs_fuzz_case_free(RsFuzzCase *c);

/* The QEMU, kernel and initramfs exist. */
gboolean rs_fuzz_env_check(const RsFuzzEnv *env, GError **error);

/*
 * A run's cases: @next hands out the next (NULL: no more), @done gets each
 * (and owns it) as it ends.
 */
typedef RsFuzzCase *(*RsFuzzNext)(gpointer opaque);
typedef void (*RsFuzzDone)(RsFuzzCase *c, gpointer opaque);

/* The guest configuration a case runs with. */
void rs_fuzz_case_config(const RsFuzzEnv *env, const RsFuzzCase *c,
                         RsGuestConfig *cfg);

/*
 * @cfg's guest reads its scenarios from the feed: a second UART on
 * @dir/feed.sock, which /init reads (ringside.feed=ttyS1 added to the
 * kernel command line).
 */
void rs_fuzz_feed_config(const RsFuzzEnv *env, RsGuestConfig *cfg,
                         const char *dir);

/* Remove a run directory and the files in it. */
void rs_rmtree(const char *dir);

#endif
