/*
 * Booting a guest under ringside's QEMU fork with ringside-serial as its
 * console, and waiting for it to end.
 */
#ifndef RINGSIDE_GUEST_H
#define RINGSIDE_GUEST_H

#include <glib.h>

typedef struct {
    char *qemu;         /* qemu-system-x86_64 of the fork */
    char *kernel;       /* bzImage */
    char *initrd;       /* the project's initramfs (may be NULL) */
    char *case_name;    /* passed to /init as ringside.case= */
    char *append;       /* extra kernel command line, may be NULL */
    char *accel;        /* "tcg", "kvm", "kvm:tcg", ... */
    char *pace;         /* ringside-serial pace=: "line" or "off" */
    char *outdir;       /* console.log, events.jsonl, qemu.log go here */
    char *mailbox;      /* ringside-serial mailbox= (a fuzz scenario) */
    char *incoming;     /* start from this saved state (ringside fuzz) */
    char *rr_mode;      /* "record" or "replay": QEMU record/replay */
    char *rr_file;      /* its log */
    char *oracle;       /* a second UART (ttyS1) writing to this file */
    int smp;
    int memory_mib;
    int timeout_s;
    gboolean print_only;    /* print the QEMU command line, do not run */
    gboolean tx_events;     /* a "tx" event per byte besides the lines' */
    gboolean patient;       /* at the timeout, wait on (up to 3 times as
                             * long) while the console still grows */
    gboolean no_ram_file;   /* anonymous guest RAM: cheaper to restore, but
                             * no guest.ram for ringside dmesg */
    char *feed;             /* a second UART (ttyS1) reading this socket,
                             * which QEMU listens on (resident fuzzing) */
    gboolean resident;      /* a guest reboot resets it and a shutdown
                             * pauses it, instead of ending QEMU */
} RsGuestConfig;

typedef struct {
    gboolean timed_out;
    int exit_status;        /* QEMU's exit status, when it exited */
    int term_signal;        /* the signal that killed it, or 0 */
    double wall_s;          /* from launch to exit (or kill) */
    char *console_path;
    char *events_path;
    char *qemu_log_path;
    char *ram_path;         /* the guest's RAM, shared: ringside dmesg reads it */
    char *qmp_path;         /* QMP socket while QEMU runs */
    /* The vCPU threads' host scheduling, sampled while QEMU ran (from
     * /proc/PID/task/TID/schedstat): time on a core, time runnable but
     * waiting for one.  vcpu_threads 0: not measured. */
    int smp;
    guint vcpu_threads;
    guint64 vcpu_run_ns, vcpu_wait_ns;
} RsGuestResult;

/*
 * Where the fork finds its firmware: Debian's seabios, qemu-system-data
 * and ipxe-qemu (-L, in this order).
 */
#define RS_N_FIRMWARE_DIRS 3
extern const char *const rs_firmware_dirs[RS_N_FIRMWARE_DIRS];

/*
 * The guest kernel's command line for /init's case @case_name, with the
 * host's TSC rate for the kernel's early calibration (see
 * rs_host_tsc_khz()).
 */
char *rs_guest_cmdline(const char *case_name, const char *append);
/* The same with the guest TSC's rate @tsc_khz (0: leave it out). */
char *rs_guest_cmdline_tsc(const char *case_name, const char *append,
                           guint64 tsc_khz);

/*
 * The host's TSC rate in kHz, which is the guest's under TCG without
 * -icount: measured once (rdtsc against CLOCK_MONOTONIC_RAW) on an x86-64
 * host with an invariant TSC; $RINGSIDE_TSC_KHZ overrides it.  0: unknown.
 */
guint64 rs_host_tsc_khz(void);

/* Where the ringside-qemu and ringside-guest packages install the fork
 * and the guest kernel and initramfs that ringside run boots. */
#define RS_INSTALLED_QEMU "/usr/lib/ringside/qemu/qemu-system-x86_64"
#define RS_INSTALLED_GUEST "/usr/lib/ringside/guest"
/* The drop-in (ringside, by the name of QEMU's binary) ends so. */
#define RS_DROPIN_SUFFIX "/ringside/bin/qemu-system-x86_64"
#define RS_INSTALLED_DROPIN "/usr/lib" RS_DROPIN_SUFFIX

/* Defaults for the paths: built in $RINGSIDE_CACHE (or ~/.cache/ringside),
 * else installed. */
char *rs_cache_dir(void);
/* $RINGSIDE_QEMU, else the fork built in the cache, else the installed
 * one. */
char *rs_default_qemu(void);
void rs_guest_config_defaults(RsGuestConfig *cfg);
void rs_guest_config_clear(RsGuestConfig *cfg);
void rs_guest_result_clear(RsGuestResult *res);

/*
 * Check the inputs exist, run the guest to its end or the timeout.  Fails
 * (with a one-line reason) if an input is missing or QEMU cannot start; a
 * timeout is reported in @res, not as an error, so the caller can still
 * show what was captured.
 */
gboolean rs_guest_run(const RsGuestConfig *cfg, RsGuestResult *res,
                      GError **error);

/* The QEMU binary, kernel, initramfs and saved state it names exist. */
gboolean rs_guest_check_inputs(const RsGuestConfig *cfg, GError **error);

/*
 * The same, asynchronously: check the inputs, fill in @res's paths and
 * start QEMU in the thread-default main context.  @done runs there when
 * QEMU has exited or, after the timeout, been killed; @res then holds how.
 * Returns NULL (and sets @error) if it could not start.
 */
typedef struct RsGuestRun RsGuestRun;
typedef void (*RsGuestDone)(RsGuestRun *run, gpointer opaque);
RsGuestRun *rs_guest_start(const RsGuestConfig *cfg, RsGuestResult *res,
                           RsGuestDone done, gpointer opaque,
                           GError **error);
void rs_guest_run_free(RsGuestRun *run);

/*
 * The pieces of rs_guest_start, for a caller that runs QEMU itself (the
 * resident fuzzer): check the inputs and set @res's paths; QEMU's argv
 * (NULL-terminated); the child setup that ties QEMU's life to ours
 * (@parent: GINT_TO_POINTER(getpid())).
 */
gboolean rs_guest_prepare(const RsGuestConfig *cfg, RsGuestResult *res,
                          GError **error);
GPtrArray *rs_guest_argv(const RsGuestConfig *cfg, const RsGuestResult *res);
void rs_guest_child_setup(gpointer parent);

#endif
