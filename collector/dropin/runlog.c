/* A drop-in QEMU run's directory, its verdicts and the runs kept. */
#include "dropin/runlog.h"
#include "errors.h"
#include "events/events.h"
#include "report/l1verdicts.h"
#include "report/verdicts.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define RUN_PREFIX "run-"

gboolean rs_run_log_open(RsRunLog *log, const char *out, guint keep,
                         GError **error)
{
    g_autoptr(GDateTime) now = g_date_time_new_now_local();
    g_autofree char *stamp = g_date_time_format(now, "%Y%m%d-%H%M%S");
    g_autofree char *name = NULL;

    memset(log, 0, sizeof(*log));
    log->out = g_strdup(out);
    log->keep = keep;
    log->started_us = g_get_real_time();
    if (g_mkdir_with_parents(out, 0755) != 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND,
                    "cannot make the output directory %s: %s", out,
                    g_strerror(errno));
        return FALSE;
    }
    name = g_strdup_printf(RUN_PREFIX "%s-%d", stamp, (int)getpid());
    log->dir = g_build_filename(out, name, NULL);
    if (g_mkdir(log->dir, 0755) != 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND, "cannot make %s: %s",
                    log->dir, g_strerror(errno));
        return FALSE;
    }
    log->events = g_build_filename(log->dir, "events.jsonl", NULL);
    return TRUE;
}

gboolean rs_run_log_write_command(const RsRunLog *log,
                                  const char *const *qemu_argv,
                                  GError **error)
{
    g_autofree char *argv_path = NULL;
    g_autoptr(GString) cmd = g_string_new(NULL);
    guint i;

    for (i = 0; qemu_argv[i]; i++) {
        g_autofree char *q = g_shell_quote(qemu_argv[i]);

        g_string_append_printf(cmd, "%s%s", i ? " " : "", q);
    }
    g_string_append_c(cmd, '\n');
    argv_path = g_build_filename(log->dir, "qemu-command", NULL);
    return g_file_set_contents(argv_path, cmd->str, cmd->len, error);
}

void rs_run_log_clear(RsRunLog *log)
{
    g_free(log->out);
    g_free(log->dir);
    g_free(log->events);
    memset(log, 0, sizeof(*log));
}

static int cmp_names(gconstpointer a, gconstpointer b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A run directory holds only the files a run writes; nothing else goes. */
static void remove_run_dir(const char *path)
{
    static const char *const files[] = {
        "events.jsonl", "qemu-command", "report.json", "watch-error",
    };
    guint i;

    for (i = 0; i < G_N_ELEMENTS(files); i++) {
        g_autofree char *f = g_build_filename(path, files[i], NULL);

        g_unlink(f);
    }
    g_rmdir(path);
}

static void prune(const RsRunLog *log)
{
    g_autoptr(GDir) d = g_dir_open(log->out, 0, NULL);
    g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func(g_free);
    const char *n;
    guint i;

    if (!d || !log->keep) {
        return;
    }
    while ((n = g_dir_read_name(d))) {
        if (g_str_has_prefix(n, RUN_PREFIX)) {
            g_ptr_array_add(runs, g_strdup(n));
        }
    }
    /* Names sort by start time; the oldest go. */
    g_ptr_array_sort(runs, cmp_names);
    for (i = 0; i + log->keep < runs->len; i++) {
        g_autofree char *p = g_build_filename(log->out, runs->pdata[i], NULL);

        remove_run_dir(p);
    }
}

static char *iso_time(gint64 us)
{
    g_autoptr(GDateTime) t = g_date_time_new_from_unix_local(us / 1000000);

    return t ? g_date_time_format_iso8601(t) : g_strdup("");
}

gboolean rs_run_log_finish(const RsRunLog *log, const char *console, int pid,
                           GError **error)
{
    g_autoptr(RsEventStream) events = NULL;
    g_autoptr(GError) load_error = NULL;
    g_autoptr(JsonBuilder) b = json_builder_new();
    g_autoptr(JsonGenerator) gen = json_generator_new();
    g_autoptr(JsonNode) root = NULL;
    g_autofree char *report_path = NULL, *runs_path = NULL, *line = NULL;
    g_autofree char *json = NULL;
    g_autofree char *started = iso_time(log->started_us);
    g_autofree char *ended = iso_time(g_get_real_time());
    g_autofree char *base = g_path_get_basename(log->dir);
    RsVerdictReport r;
    RsL1Report l1;
    FILE *f;
    int fd;
    gboolean ok = TRUE;

    events = rs_event_stream_load(log->events, &load_error);
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "run");
    json_builder_add_string_value(b, base);
    json_builder_set_member_name(b, "qemu_pid");
    json_builder_add_int_value(b, pid);
    json_builder_set_member_name(b, "started");
    json_builder_add_string_value(b, started);
    json_builder_set_member_name(b, "ended");
    json_builder_add_string_value(b, ended);
    json_builder_set_member_name(b, "console");
    json_builder_add_string_value(b, console);
    if (!events || !events->saw_start) {
        /* QEMU refused its command line, or died before the device did
         * anything: nothing was judged. */
        json_builder_set_member_name(b, "judged");
        json_builder_add_boolean_value(b, FALSE);
        json_builder_set_member_name(b, "why");
        json_builder_add_string_value(b, load_error ? load_error->message :
                                      "the device wrote no events");
    } else {
        rs_verdict_report_build(events, &r);
        rs_l1_report_build(events, &l1);
        report_path = g_build_filename(log->dir, "report.json", NULL);
        f = fopen(report_path, "w");
        if (f) {
            rs_verdict_report_print_json(f, events, &r, &l1);
            ok = fclose(f) == 0;
        }
        if (!f || !ok) {
            g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND,
                        "cannot write %s: %s", report_path,
                        g_strerror(errno));
            return FALSE;
        }
        json_builder_set_member_name(b, "judged");
        json_builder_add_boolean_value(b, TRUE);
        json_builder_set_member_name(b, "clean");
        json_builder_add_boolean_value(b, !r.problems && !l1.problems);
        json_builder_set_member_name(b, "lines");
        json_builder_add_int_value(b, events->lines->len);
        json_builder_set_member_name(b, "problems");
        json_builder_add_int_value(b, r.problems + l1.problems);
        json_builder_set_member_name(b, "device_summary");
        json_builder_add_boolean_value(b, events->saw_summary);
        json_builder_set_member_name(b, "ring");
        json_builder_add_string_value(b, events->ring_state);
    }
    json_builder_end_object(b);
    root = json_builder_get_root(b);
    json_generator_set_root(gen, root);
    json = json_generator_to_data(gen, NULL);
    line = g_strconcat(json, "\n", NULL);

    /* One write with O_APPEND: runs of several VMs sharing OUT do not
     * interleave inside a line. */
    runs_path = g_build_filename(log->out, "runs.jsonl", NULL);
    fd = open(runs_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || write(fd, line, strlen(line)) != (ssize_t)strlen(line)) {
        g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND,
                    "cannot write %s: %s", runs_path, g_strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return FALSE;
    }
    close(fd);
    prune(log);
    return TRUE;
}

static void watch_and_finish(const RsRunLog *log, const char *console,
                             int pidfd, int pid)
{
    g_autoptr(GError) error = NULL;
    struct pollfd p = { .fd = pidfd, .events = POLLIN };
    g_autofree char *err_path = g_build_filename(log->dir, "watch-error",
                                                 NULL);

    /* A pidfd polls readable once its process has exited. */
    while (poll(&p, 1, -1) < 0 && errno == EINTR) {
    }
    if (!rs_run_log_finish(log, console, pid, &error)) {
        g_file_set_contents(err_path, error->message, -1, NULL);
    }
}

gboolean rs_run_log_watch(const RsRunLog *log, const char *console,
                          GError **error)
{
    int pid = getpid();
    int pidfd = syscall(SYS_pidfd_open, pid, 0);
    pid_t child;
    int status;

    if (pidfd < 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND,
                    "pidfd_open: %s", g_strerror(errno));
        return FALSE;
    }
    child = fork();
    if (child < 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND, "fork: %s",
                    g_strerror(errno));
        close(pidfd);
        return FALSE;
    }
    if (child == 0) {
        int null = open("/dev/null", O_RDWR);

        /* A grandchild, so QEMU never has a child of ours to reap, in
         * its own session, so the terminal's ^C reaches only QEMU. */
        if (fork() != 0) {
            _exit(0);
        }
        setsid();
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (pidfd != 3) {
            dup2(pidfd, 3);
        }
        /* Libvirt's and the caller's descriptors stay with QEMU alone. */
        syscall(SYS_close_range, 4, ~0U, 0);
        watch_and_finish(log, console, 3, pid);
        _exit(0);
    }
    close(pidfd);
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return TRUE;
}
