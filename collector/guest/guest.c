/* Launching QEMU for one guest run. */
#include "guest/guest.h"
#include "errors.h"

#include <gio/gio.h>
#include <signal.h>
#include <sys/prctl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

const char *const rs_firmware_dirs[RS_N_FIRMWARE_DIRS] = {
    "/usr/share/seabios", "/usr/share/qemu", "/usr/lib/ipxe/qemu",
};

char *rs_cache_dir(void)
{
    const char *env = g_getenv("RINGSIDE_CACHE");

    if (env && *env) {
        return g_strdup(env);
    }
    return g_build_filename(g_get_home_dir(), ".cache", "ringside", NULL);
}

/* What a developer built in the cache comes before what is installed. */
static char *built_or_installed(char *built, const char *installed)
{
    if (g_file_test(built, G_FILE_TEST_IS_REGULAR) ||
        !g_file_test(installed, G_FILE_TEST_IS_REGULAR)) {
        return built;
    }
    g_free(built);
    return g_strdup(installed);
}

char *rs_default_qemu(void)
{
    g_autofree char *cache = rs_cache_dir();
    const char *env = g_getenv("RINGSIDE_QEMU");

    if (env && *env) {
        return g_strdup(env);
    }

    return built_or_installed(g_build_filename(cache, "qemu", "build",
                                               "qemu-system-x86_64", NULL),
                              RS_INSTALLED_QEMU);
}

void rs_guest_config_defaults(RsGuestConfig *cfg)
{
    g_autofree char *cache = rs_cache_dir();

    cfg->qemu = rs_default_qemu();
    cfg->kernel = built_or_installed(g_build_filename(cache, "kernel",
                                                      "bzImage", NULL),
                                     RS_INSTALLED_GUEST "/bzImage");
    cfg->initrd = built_or_installed(g_build_filename(cache, "initramfs",
                                                      "initramfs.cpio.gz",
                                                      NULL),
                                     RS_INSTALLED_GUEST "/initramfs.cpio.gz");
    cfg->case_name = g_strdup("sysrq-panic");
    cfg->accel = g_strdup("tcg");
    cfg->pace = g_strdup("line");
    cfg->smp = 2;
    cfg->memory_mib = 256;
    cfg->timeout_s = 120;
}

void rs_guest_config_clear(RsGuestConfig *cfg)
{
    g_free(cfg->qemu);
    g_free(cfg->kernel);
    g_free(cfg->initrd);
    g_free(cfg->case_name);
    g_free(cfg->append);
    g_free(cfg->accel);
    g_free(cfg->pace);
    g_free(cfg->outdir);
    g_free(cfg->mailbox);
    g_free(cfg->incoming);
    g_free(cfg->rr_mode);
    g_free(cfg->rr_file);
    g_free(cfg->oracle);
    g_free(cfg->feed);
}

void rs_guest_result_clear(RsGuestResult *res)
{
    g_free(res->console_path);
    g_free(res->events_path);
    g_free(res->qemu_log_path);
    g_free(res->ram_path);
    g_free(res->qmp_path);
}

#if defined(__x86_64__)
/* The TSC and CLOCK_MONOTONIC_RAW (ns) at one instant, as near as can be. */
static void tsc_sample(guint64 *tsc, gint64 *ns)
{
    gint64 best = G_MAXINT64;
    int i;

    /* The narrowest of a few brackets: a preempted one is wide. */
    for (i = 0; i < 16; i++) {
        struct timespec a, b;
        guint64 t;
        gint64 na, nb;

        clock_gettime(CLOCK_MONOTONIC_RAW, &a);
        t = __rdtsc();
        clock_gettime(CLOCK_MONOTONIC_RAW, &b);
        na = a.tv_sec * G_GINT64_CONSTANT(1000000000) + a.tv_nsec;
        nb = b.tv_sec * G_GINT64_CONSTANT(1000000000) + b.tv_nsec;
        if (nb - na < best) {
            best = nb - na;
            *tsc = t;
            *ns = na + (nb - na) / 2;
        }
    }
}

static int cmp_u64(const void *a, const void *b)
{
    guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;

    return x < y ? -1 : x > y;
}

static guint64 measure_tsc_khz(void)
{
    g_autofree char *cpuinfo = NULL;
    guint64 khz[3];
    int i;

    /* Without an invariant TSC there is no one rate to give. */
    if (!g_file_get_contents("/proc/cpuinfo", &cpuinfo, NULL, NULL) ||
        !strstr(cpuinfo, " constant_tsc") || !strstr(cpuinfo, " nonstop_tsc")) {
        return 0;
    }
    for (i = 0; i < 3; i++) {
        guint64 t0, t1;
        gint64 n0, n1;

        tsc_sample(&t0, &n0);
        g_usleep(20000);
        tsc_sample(&t1, &n1);
        if (n1 <= n0 || t1 <= t0) {
            return 0;
        }
        khz[i] = (guint64)((double)(t1 - t0) * 1e6 / (double)(n1 - n0) + 0.5);
    }
    qsort(khz, 3, sizeof(khz[0]), cmp_u64);
    return khz[1];
}
#else
static guint64 measure_tsc_khz(void)
{
    return 0;
}
#endif

guint64 rs_host_tsc_khz(void)
{
    static gsize once;
    static guint64 khz;

    if (g_once_init_enter(&once)) {
        const char *env = g_getenv("RINGSIDE_TSC_KHZ");
        guint64 v;

        if (env && g_ascii_string_to_unsigned(env, 10, 0, 100000000, &v,
                                              NULL)) {
            khz = v;
        } else {
            if (env) {
                g_printerr("ringside: RINGSIDE_TSC_KHZ=%s is not a rate in "
                           "kHz (0 to 100000000); measuring it instead\n",
                           env);
            }
            khz = measure_tsc_khz();
        }
        g_once_init_leave(&once, 1);
    }
    return khz;
}

char *rs_guest_cmdline_tsc(const char *case_name, const char *append,
                           guint64 tsc_khz)
{
    g_autofree char *tsc = NULL;

    /*
     * Under TCG the kernel cannot calibrate its TSC against the PIT early,
     * so udelay() runs uncalibrated until late_time_init() and the 8250
     * console's 10 ms wait for THRE ends far too soon while it replays the
     * early log: it then writes into a full FIFO.  tsc_early_khz= (5.8+)
     * calibrates in setup_arch, as real hardware and KVM do.
     */
    if (tsc_khz && !(append && strstr(append, "tsc_early_khz="))) {
        tsc = g_strdup_printf(" tsc_early_khz=%" G_GUINT64_FORMAT, tsc_khz);
    }
    /* panic=-1: a panicked guest reboots at once, and -no-reboot ends it. */
    return g_strdup_printf("console=ttyS0,115200 panic=-1%s "
                           "ringside.case=%s%s%s", tsc ? tsc : "", case_name,
                           append ? " " : "",
                           append ? append : "");
}

char *rs_guest_cmdline(const char *case_name, const char *append)
{
    return rs_guest_cmdline_tsc(case_name, append, rs_host_tsc_khz());
}

static gboolean check_file(const char *what, const char *path,
                           gboolean executable, const char *hint,
                           GError **error)
{
    if (g_file_test(path, G_FILE_TEST_IS_REGULAR) &&
        (!executable || access(path, X_OK) == 0)) {
        return TRUE;
    }
    g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND, "%s %s not found%s%s",
                what, path, hint ? "; " : "", hint ? hint : "");
    return FALSE;
}

/* Characters that would split or escape a -chardev/-append option. */
static gboolean check_option_safe(const char *what, const char *s,
                                  GError **error)
{
    if (strpbrk(s, ",\n")) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s \"%s\" contains ',' or a newline", what, s);
        return FALSE;
    }
    return TRUE;
}

static GPtrArray *build_argv(const RsGuestConfig *cfg, const RsGuestResult *res)
{
    GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
    g_auto(GStrv) accels = g_strsplit(cfg->accel, ":", -1);
    guint i;

#define ARG(...) g_ptr_array_add(argv, g_strdup_printf(__VA_ARGS__))
    ARG("%s", cfg->qemu);
    if (cfg->rr_mode) {
        /* Record/replay needs the one deterministic clock of icount. */
        ARG("-accel");
        ARG("tcg");
        ARG("-icount");
        ARG("shift=7,rr=%s,rrfile=%s", cfg->rr_mode, cfg->rr_file);
    } else {
        for (i = 0; accels[i]; i++) {
            ARG("-accel");
            ARG("%s", accels[i]);
        }
    }
    /*
     * Guest RAM in a file QEMU shares with us, so the ring can be read
     * while the guest runs, hangs or after it died; vmcoreinfo makes
     * dump-guest-memory include the kernel's note.
     */
    ARG("-object");
    if (cfg->no_ram_file) {
        ARG("memory-backend-ram,id=ram,size=%dM", cfg->memory_mib);
    } else {
        ARG("memory-backend-file,id=ram,size=%dM,mem-path=%s,share=on",
            cfg->memory_mib, res->ram_path);
    }
    /*
     * The pc machine as ringside's guests have always had it: the fork now
     * builds QEMU's default devices (for ringside qemu), whose HPET and
     * VMware port the board would otherwise add.
     */
    ARG("-machine");
    ARG("pc,memory-backend=ram,hpet=off,vmport=off");
    ARG("-m");
    ARG("%d", cfg->memory_mib);
    ARG("-device");
    ARG("vmcoreinfo");
    ARG("-qmp");
    ARG("unix:%s,server=on,wait=off", res->qmp_path);
    ARG("-smp");
    ARG("%d", cfg->smp);
    ARG("-nodefaults");
    /* Named threads ("CPU 0/TCG"): their host scheduling is measured. */
    ARG("-name");
    ARG("ringside,debug-threads=on");
    ARG("-display");
    ARG("none");
    if (!cfg->resident) {
        ARG("-no-reboot");
    }
    for (i = 0; i < RS_N_FIRMWARE_DIRS; i++) {
        ARG("-L");
        ARG("%s", rs_firmware_dirs[i]);
    }
    ARG("-chardev");
    ARG("file,id=console,path=%s", res->console_path);
    ARG("-chardev");
    ARG("file,id=events,path=%s", res->events_path);
    ARG("-device");
    ARG("ringside-serial,id=ringside0,chardev=console,events=events,pace=%s"
        "%s%s%s", cfg->pace, cfg->tx_events ? ",tx-events=on" : "",
        cfg->mailbox ? ",mailbox=" : "", cfg->mailbox ? cfg->mailbox : "");
    if (cfg->oracle) {
        /* A plain 16550 at COM2's address: the guest's ttyS1. */
        ARG("-chardev");
        ARG("file,id=oracle,path=%s", cfg->oracle);
        ARG("-device");
        ARG("isa-serial,chardev=oracle,index=1,iobase=0x2f8,irq=3");
    }
    if (cfg->feed) {
        /* ttyS1 again, read by /init's fuzz case (ringside.feed=ttyS1). */
        ARG("-chardev");
        ARG("socket,id=feed,path=%s,server=on,wait=off", cfg->feed);
        ARG("-device");
        ARG("isa-serial,chardev=feed,index=1,iobase=0x2f8,irq=3");
    }
    if (cfg->resident) {
        /*
         * A guest's reboot (its panic, with panic=-1) resets it and runs
         * on, for the resident fuzzer to stop at the RESET event; its
         * poweroff pauses it.  Not -no-reboot: it makes a reboot, and
         * system_reset too, a shutdown, which only a reset ends.
         */
        ARG("-action");
        ARG("shutdown=pause");
    }
    if (cfg->incoming) {
        g_autofree char *q = g_shell_quote(cfg->incoming);

        ARG("-incoming");
        ARG("exec:cat %s", q);
    }
    ARG("-kernel");
    ARG("%s", cfg->kernel);
    if (cfg->initrd) {
        ARG("-initrd");
        ARG("%s", cfg->initrd);
    }
    ARG("-append");
    /* With -icount the guest's TSC counts virtual ns: 1 GHz. */
    g_ptr_array_add(argv, rs_guest_cmdline_tsc(cfg->case_name, cfg->append,
                                               cfg->rr_mode ? 1000000 :
                                               rs_host_tsc_khz()));
#undef ARG
    g_ptr_array_add(argv, NULL);
    return argv;
}

/* A patient run's timeout is put off this long while the console grows. */
#define PATIENCE_S 2

struct RsGuestRun {
    GSubprocess *qemu;
    GSource *timeout;
    gboolean patient;
    gint64 deadline;        /* monotonic us: no more patience after it */
    goffset console_size;   /* at the last look */
    RsGuestResult *res;
    RsGuestDone done;
    gpointer opaque;
    gint64 t0;
    gboolean timed_out;
    gboolean reaped;        /* the wait finished: nothing left to cancel */
    GCancellable *cancel;
    GSource *sampler;
    GHashTable *vcpus;      /* tid -> guint64[2]: run, wait ns */
    char *task_dir;         /* /proc/PID/task */
};

/* A vCPU thread's host scheduling so far, if @tid is one. */
static gboolean read_vcpu_sched(const char *task_dir, const char *tid,
                                guint64 *run, guint64 *wait)
{
    g_autofree char *comm_path = g_build_filename(task_dir, tid, "comm",
                                                  NULL);
    g_autofree char *stat_path = g_build_filename(task_dir, tid, "schedstat",
                                                  NULL);
    g_autofree char *comm = NULL, *stat = NULL;

    if (!g_file_get_contents(comm_path, &comm, NULL, NULL) ||
        !g_str_has_prefix(comm, "CPU ") ||
        !g_file_get_contents(stat_path, &stat, NULL, NULL)) {
        return FALSE;
    }
    return sscanf(stat, "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT,
                  run, wait) == 2;
}

static gboolean sample_vcpus(gpointer opaque)
{
    RsGuestRun *run = opaque;
    g_autoptr(GDir) dir = g_dir_open(run->task_dir, 0, NULL);
    const char *tid;

    while (dir && (tid = g_dir_read_name(dir))) {
        guint64 r, w, *v;

        if (!read_vcpu_sched(run->task_dir, tid, &r, &w)) {
            continue;
        }
        v = g_hash_table_lookup(run->vcpus, tid);
        if (!v) {
            v = g_new0(guint64, 2);
            g_hash_table_insert(run->vcpus, g_strdup(tid), v);
        }
        v[0] = r;
        v[1] = w;
    }
    return G_SOURCE_CONTINUE;
}

static void stop_sampling(RsGuestRun *run)
{
    if (run->sampler) {
        g_source_destroy(run->sampler);
        g_clear_pointer(&run->sampler, g_source_unref);
    }
}

static void on_qemu_exit(GObject *source, GAsyncResult *result, gpointer opaque)
{
    RsGuestRun *run = opaque;
    GSubprocess *qemu = G_SUBPROCESS(source);

    if (!g_subprocess_wait_finish(qemu, result, NULL)) {
        return;                 /* cancelled: the run is being freed */
    }
    run->reaped = TRUE;
    stop_sampling(run);
    if (run->vcpus) {
        GHashTableIter it;
        guint64 *v;

        g_hash_table_iter_init(&it, run->vcpus);
        while (g_hash_table_iter_next(&it, NULL, (gpointer *)&v)) {
            run->res->vcpu_threads++;
            run->res->vcpu_run_ns += v[0];
            run->res->vcpu_wait_ns += v[1];
        }
    }
    if (run->timeout) {
        g_source_destroy(run->timeout);
        g_clear_pointer(&run->timeout, g_source_unref);
    }
    run->res->wall_s = (g_get_monotonic_time() - run->t0) / 1e6;
    run->res->timed_out = run->timed_out;
    run->res->exit_status = g_subprocess_get_if_exited(qemu) ?
                            g_subprocess_get_exit_status(qemu) : -1;
    run->res->term_signal = g_subprocess_get_if_signaled(qemu) ?
                            g_subprocess_get_term_sig(qemu) : 0;
    run->done(run, run->opaque);
}

static goffset file_size(const char *path)
{
    GStatBuf st;

    return g_stat(path, &st) == 0 ? st.st_size : -1;
}

static gboolean on_timeout(gpointer opaque)
{
    RsGuestRun *run = opaque;

    /* Still printing: slow (a WARN storm under TCG), not hung. */
    if (run->patient && g_get_monotonic_time() < run->deadline) {
        goffset size = file_size(run->res->console_path);

        if (size > run->console_size) {
            run->console_size = size;
            g_source_unref(run->timeout);
            run->timeout = g_timeout_source_new_seconds(PATIENCE_S);
            g_source_set_callback(run->timeout, on_timeout, run, NULL);
            g_source_attach(run->timeout,
                            g_main_context_get_thread_default());
            return G_SOURCE_REMOVE;
        }
    }
    /* Stop QEMU so the files are complete; on_qemu_exit reaps it. */
    run->timed_out = TRUE;
    g_subprocess_force_exit(run->qemu);
    g_clear_pointer(&run->timeout, g_source_unref);
    return G_SOURCE_REMOVE;
}

gboolean rs_guest_check_inputs(const RsGuestConfig *cfg, GError **error)
{
    return check_file("QEMU fork binary", cfg->qemu, TRUE,
                      "build it with scripts/build-qemu.sh or pass --qemu",
                      error) &&
           check_file("guest kernel", cfg->kernel, FALSE,
                      "build it with scripts/build-kernel.sh or pass --kernel",
                      error) &&
           (!cfg->initrd ||
            check_file("initramfs", cfg->initrd, FALSE,
                       "build it with scripts/build-initramfs.sh or pass "
                       "--initrd", error)) &&
           (!cfg->incoming ||
            check_file("saved guest state", cfg->incoming, FALSE, NULL,
                       error));
}

/* Inputs exist and are safe on a QEMU command line; output paths set. */
static gboolean prepare(const RsGuestConfig *cfg, RsGuestResult *res,
                        GError **error)
{
    if (!rs_guest_check_inputs(cfg, error)) {
        return FALSE;
    }
    if (!check_option_safe("output directory", cfg->outdir, error) ||
        (cfg->append && !check_option_safe("--append", cfg->append, error)) ||
        (cfg->mailbox && !check_option_safe("scenario", cfg->mailbox,
                                            error)) ||
        (cfg->rr_file && !check_option_safe("replay log", cfg->rr_file,
                                            error)) ||
        (cfg->oracle && !check_option_safe("--oracle", cfg->oracle,
                                           error)) ||
        (cfg->feed && !check_option_safe("feed socket", cfg->feed,
                                         error))) {
        return FALSE;
    }
    if (g_mkdir_with_parents(cfg->outdir, 0755) < 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND,
                    "cannot create output directory %s: %s", cfg->outdir,
                    g_strerror(errno));
        return FALSE;
    }
    res->console_path = g_build_filename(cfg->outdir, "console.log", NULL);
    res->events_path = g_build_filename(cfg->outdir, "events.jsonl", NULL);
    res->qemu_log_path = g_build_filename(cfg->outdir, "qemu.log", NULL);
    res->ram_path = g_build_filename(cfg->outdir, "guest.ram", NULL);
    res->qmp_path = g_build_filename(cfg->outdir, "qmp.sock", NULL);
    return TRUE;
}

/*
 * In the child before exec: QEMU dies with the ringside that started it,
 * however that one ends (a SIGKILL too), so that no guest goes on writing
 * into a run directory a resumed fuzz run is about to use again.
 */
void rs_guest_child_setup(gpointer parent)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != GPOINTER_TO_INT(parent)) {
        _exit(127);             /* it died before the line above */
    }
}

RsGuestRun *rs_guest_start(const RsGuestConfig *cfg, RsGuestResult *res,
                           RsGuestDone done, gpointer opaque, GError **error)
{
    g_autoptr(GSubprocessLauncher) launcher = NULL;
    g_autoptr(GPtrArray) argv = NULL;
    RsGuestRun *run;

    if (!prepare(cfg, res, error)) {
        return NULL;
    }
    argv = build_argv(cfg, res);
    launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDERR_MERGE);
    g_subprocess_launcher_set_stdout_file_path(launcher, res->qemu_log_path);
    g_subprocess_launcher_set_child_setup(launcher, rs_guest_child_setup,
                                          GINT_TO_POINTER(getpid()), NULL);

    run = g_new0(RsGuestRun, 1);
    run->res = res;
    run->done = done;
    run->opaque = opaque;
    run->t0 = g_get_monotonic_time();
    run->qemu = g_subprocess_launcher_spawnv(launcher,
                                             (const char *const *)argv->pdata,
                                             error);
    if (!run->qemu) {
        g_free(run);
        return NULL;
    }
    res->smp = cfg->smp;
    run->task_dir = g_strdup_printf("/proc/%s/task",
                                    g_subprocess_get_identifier(run->qemu));
    run->vcpus = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                       g_free);
    run->sampler = g_timeout_source_new(200);
    g_source_set_callback(run->sampler, sample_vcpus, run, NULL);
    g_source_attach(run->sampler, g_main_context_get_thread_default());
    run->patient = cfg->patient;
    run->deadline = run->t0 + 3 * (gint64)cfg->timeout_s * G_USEC_PER_SEC;
    run->console_size = -1;
    run->cancel = g_cancellable_new();
    g_subprocess_wait_async(run->qemu, run->cancel, on_qemu_exit, run);
    run->timeout = g_timeout_source_new_seconds(cfg->timeout_s);
    g_source_set_callback(run->timeout, on_timeout, run, NULL);
    g_source_attach(run->timeout, g_main_context_get_thread_default());
    return run;
}

void rs_guest_run_free(RsGuestRun *run)
{
    if (!run) {
        return;
    }
    /*
     * Only a wait still pending is cancelled: GSubprocess's worker thread
     * may still hold a finished wait's task, and cancelling then runs its
     * handler on a task being freed (a GLib-GIO-CRITICAL seen under load).
     */
    if (!run->reaped) {
        g_cancellable_cancel(run->cancel);
    }
    stop_sampling(run);
    g_clear_pointer(&run->vcpus, g_hash_table_unref);
    g_free(run->task_dir);
    if (run->timeout) {
        g_source_destroy(run->timeout);
        g_source_unref(run->timeout);
    }
    if (run->qemu && !g_subprocess_get_if_exited(run->qemu) &&
        !g_subprocess_get_if_signaled(run->qemu)) {
        g_subprocess_force_exit(run->qemu);
    }
    g_clear_object(&run->qemu);
    g_clear_object(&run->cancel);
    g_free(run);
}

static void on_sync_done(RsGuestRun *run G_GNUC_UNUSED, gpointer opaque)
{
    gboolean *done = opaque;

    *done = TRUE;
}

gboolean rs_guest_run(const RsGuestConfig *cfg, RsGuestResult *res,
                      GError **error)
{
    g_autoptr(GMainContext) ctx = g_main_context_new();
    RsGuestRun *run;
    gboolean done = FALSE;

    if (cfg->print_only) {
        g_autoptr(GPtrArray) argv = NULL;
        guint i;

        if (!prepare(cfg, res, error)) {
            return FALSE;
        }
        argv = build_argv(cfg, res);
        for (i = 0; argv->pdata[i]; i++) {
            g_autofree char *q = g_shell_quote(argv->pdata[i]);

            printf("%s%s", i ? " " : "", q);
        }
        printf("\n");
        return TRUE;
    }
    g_main_context_push_thread_default(ctx);
    run = rs_guest_start(cfg, res, on_sync_done, &done, error);
    while (run && !done) {
        g_main_context_iteration(ctx, TRUE);
    }
    rs_guest_run_free(run);
    g_main_context_pop_thread_default(ctx);
    return run != NULL;
}

gboolean rs_guest_prepare(const RsGuestConfig *cfg, RsGuestResult *res,
                          GError **error)
{
    return prepare(cfg, res, error);
}

GPtrArray *rs_guest_argv(const RsGuestConfig *cfg, const RsGuestResult *res)
{
    return build_argv(cfg, res);
}
