/* Launching QEMU for one guest run. */
#include "guest.h"
#include "errors.h"

#include <gio/gio.h>
#include <stdio.h>
#include <unistd.h>

/* Debian's firmware packages: seabios, qemu-system-data, ipxe-qemu. */
static const char *const firmware_dirs[] = {
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
}

void rs_guest_result_clear(RsGuestResult *res)
{
    g_free(res->console_path);
    g_free(res->events_path);
    g_free(res->qemu_log_path);
    g_free(res->ram_path);
    g_free(res->qmp_path);
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
    for (i = 0; accels[i]; i++) {
        ARG("-accel");
        ARG("%s", accels[i]);
    }
    /*
     * Guest RAM in a file QEMU shares with us, so the ring can be read
     * while the guest runs, hangs or after it died; vmcoreinfo makes
     * dump-guest-memory include the kernel's note.
     */
    ARG("-object");
    ARG("memory-backend-file,id=ram,size=%dM,mem-path=%s,share=on",
        cfg->memory_mib, res->ram_path);
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
    for (i = 0; i < G_N_ELEMENTS(firmware_dirs); i++) {
        ARG("-L");
        ARG("%s", firmware_dirs[i]);
    }
    ARG("-chardev");
    ARG("file,id=console,path=%s", res->console_path);
    ARG("-chardev");
    ARG("file,id=events,path=%s", res->events_path);
    ARG("-device");
    ARG("ringside-serial,id=ringside0,chardev=console,events=events,pace=%s",
        cfg->pace);
    ARG("-kernel");
    ARG("%s", cfg->kernel);
    if (cfg->initrd) {
        ARG("-initrd");
        ARG("%s", cfg->initrd);
    }
    ARG("-append");
    ARG("console=ttyS0,115200 panic=-1 ringside.case=%s%s%s", cfg->case_name,
        cfg->append ? " " : "", cfg->append ? cfg->append : "");
#undef ARG
    g_ptr_array_add(argv, NULL);
    return argv;
}

typedef struct {
    GMainLoop *loop;
    gboolean timed_out;
    gboolean done;
} Waiter;

static void on_qemu_exit(GObject *source, GAsyncResult *result, gpointer opaque)
{
    Waiter *w = opaque;

    g_subprocess_wait_finish(G_SUBPROCESS(source), result, NULL);
    w->done = TRUE;
    g_main_loop_quit(w->loop);
}

static gboolean on_timeout(gpointer opaque)
{
    Waiter *w = opaque;

    w->timed_out = TRUE;
    g_main_loop_quit(w->loop);
    return G_SOURCE_REMOVE;
}

gboolean rs_guest_run(const RsGuestConfig *cfg, RsGuestResult *res,
                      GError **error)
{
    g_autoptr(GSubprocessLauncher) launcher = NULL;
    g_autoptr(GSubprocess) qemu = NULL;
    g_autoptr(GPtrArray) argv = NULL;
    g_autoptr(GMainContext) ctx = g_main_context_new();
    g_autoptr(GMainLoop) loop = NULL;
    g_autoptr(GSource) timeout = NULL;
    Waiter w = { 0 };
    gint64 t0;

    if (!check_file("QEMU fork binary", cfg->qemu, TRUE,
                    "build it with scripts/build-qemu.sh or pass --qemu",
                    error) ||
        !check_file("guest kernel", cfg->kernel, FALSE,
                    "build it with scripts/build-kernel.sh or pass --kernel",
                    error) ||
        (cfg->initrd && !check_file("initramfs", cfg->initrd, FALSE,
                                    "build it with scripts/build-initramfs.sh"
                                    " or pass --initrd", error))) {
        return FALSE;
    }
    if (!check_option_safe("output directory", cfg->outdir, error) ||
        (cfg->append && !check_option_safe("--append", cfg->append, error))) {
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

    argv = build_argv(cfg, res);
    if (cfg->print_only) {
        guint i;

        for (i = 0; argv->pdata[i]; i++) {
            g_autofree char *q = g_shell_quote(argv->pdata[i]);

            printf("%s%s", i ? " " : "", q);
        }
        printf("\n");
        return TRUE;
    }
    launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDERR_MERGE);
    g_subprocess_launcher_set_stdout_file_path(launcher, res->qemu_log_path);

    g_main_context_push_thread_default(ctx);
    t0 = g_get_monotonic_time();
    qemu = g_subprocess_launcher_spawnv(launcher,
                                        (const char *const *)argv->pdata,
                                        error);
    if (!qemu) {
        g_main_context_pop_thread_default(ctx);
        return FALSE;
    }
    loop = g_main_loop_new(ctx, FALSE);
    w.loop = loop;
    g_subprocess_wait_async(qemu, NULL, on_qemu_exit, &w);
    timeout = g_timeout_source_new_seconds(cfg->timeout_s);
    g_source_set_callback(timeout, on_timeout, &w, NULL);
    g_source_attach(timeout, ctx);
    g_main_loop_run(loop);

    if (!w.done) {
        /* Timed out: stop QEMU so the files are complete, then reap it. */
        g_subprocess_force_exit(qemu);
        while (!w.done) {
            g_main_context_iteration(ctx, TRUE);
        }
    }
    g_source_destroy(timeout);
    g_main_context_pop_thread_default(ctx);

    res->wall_s = (g_get_monotonic_time() - t0) / 1e6;
    res->timed_out = w.timed_out;
    res->exit_status = g_subprocess_get_if_exited(qemu) ?
                       g_subprocess_get_exit_status(qemu) : -1;
    return TRUE;
}
