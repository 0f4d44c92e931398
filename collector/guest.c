/* Launching QEMU for one guest run. */
#include "guest.h"
#include "errors.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <unistd.h>

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

void rs_guest_config_defaults(RsGuestConfig *cfg)
{
    g_autofree char *cache = rs_cache_dir();

    cfg->qemu = g_build_filename(cache, "qemu", "build",
                                 "qemu-system-x86_64", NULL);
    cfg->kernel = g_build_filename(cache, "kernel", "bzImage", NULL);
    cfg->initrd = g_build_filename(cache, "initramfs", "initramfs.cpio.gz",
                                   NULL);
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
}

void rs_guest_result_clear(RsGuestResult *res)
{
    g_free(res->console_path);
    g_free(res->events_path);
    g_free(res->qemu_log_path);
    g_free(res->ram_path);
    g_free(res->qmp_path);
}

char *rs_guest_cmdline(const char *case_name, const char *append)
{
    /* panic=-1: a panicked guest reboots at once, and -no-reboot ends it. */
    return g_strdup_printf("console=ttyS0,115200 panic=-1 "
                           "ringside.case=%s%s%s", case_name,
                           append ? " " : "",
                           append ? append : "");
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
    ARG("-machine");
    ARG("pc,memory-backend=ram");
    ARG("-m");
    ARG("%d", cfg->memory_mib);
    ARG("-device");
    ARG("vmcoreinfo");
    ARG("-qmp");
    ARG("unix:%s,server=on,wait=off", res->qmp_path);
    ARG("-smp");
    ARG("%d", cfg->smp);
    ARG("-nodefaults");
    ARG("-display");
    ARG("none");
    ARG("-no-reboot");
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
        "%s%s%s", cfg->pace, cfg->no_tx_events ? ",tx-events=off" : "",
        cfg->mailbox ? ",mailbox=" : "", cfg->mailbox ? cfg->mailbox : "");
    if (cfg->oracle) {
        /* A plain 16550 at COM2's address: the guest's ttyS1. */
        ARG("-chardev");
        ARG("file,id=oracle,path=%s", cfg->oracle);
        ARG("-device");
        ARG("isa-serial,chardev=oracle,index=1,iobase=0x2f8,irq=3");
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
    g_ptr_array_add(argv, rs_guest_cmdline(cfg->case_name, cfg->append));
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
    GCancellable *cancel;
};

static void on_qemu_exit(GObject *source, GAsyncResult *result, gpointer opaque)
{
    RsGuestRun *run = opaque;
    GSubprocess *qemu = G_SUBPROCESS(source);

    if (!g_subprocess_wait_finish(qemu, result, NULL)) {
        return;                 /* cancelled: the run is being freed */
    }
    if (run->timeout) {
        g_source_destroy(run->timeout);
        g_clear_pointer(&run->timeout, g_source_unref);
    }
    run->res->wall_s = (g_get_monotonic_time() - run->t0) / 1e6;
    run->res->timed_out = run->timed_out;
    run->res->exit_status = g_subprocess_get_if_exited(qemu) ?
                            g_subprocess_get_exit_status(qemu) : -1;
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
    g_cancellable_cancel(run->cancel);
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
