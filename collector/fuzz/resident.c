/*
 * Resident fuzzing: one QEMU per job and vCPU count runs case after case,
 * reset between them without a new process.
 *
 * Each QEMU starts from the guest saved once per vCPU count (or boots),
 * with its RAM in a shared tmpfs file and a second UART reading a socket
 * we hold: /init's fuzz case waits for a scenario on the mailbox and on
 * that UART (ringside.feed=ttyS1).  When the device's mailbox-waits
 * counter moves, the guest is stopped and saved as an internal snapshot
 * ("savevm", in a small qcow2 image added over QMP: QEMU 7.2 keeps
 * internal snapshots in qcow2 only) without its RAM (x-ignore-shared),
 * of which we keep a copy.  A case is then: the RAM put back where it
 * differs from the copy, loadvm (CPUs and every device's state, the
 * device's judge included), the scenario written to the feed as one line
 * ending in ringside.epoch=INDEX, cont, and the guest's reboot awaited
 * (its panic, with panic=-1: the RESET event, then we stop it), or its
 * poweroff (SHUTDOWN: paused, reset before the next case).
 *
 * Output per case, never mixed, and not by timing: the console and event
 * stream are QEMU's files for all its cases, and each case gets its part.
 *  - Console: the bytes written while the case's vCPUs ran, between our
 *    cont and the stop (the UART's output is synchronous, and loadvm
 *    replaces whatever it still held); they must hold the guest's own
 *    line for the case, "ringside-init: fuzz: scenario ...
 *    ringside.epoch=INDEX", and no other case's, or the case is an
 *    error.  Bytes written while no case ran are counted (stray_bytes).
 *  - Events: by the device's own markers, see collect_events().
 */
#define _GNU_SOURCE         /* memfd_create, fallocate, SEEK_DATA */
#include "fuzz/resident.h"
#include "errors.h"
#include "guest/qmp.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define RESIDENT_BOOT_S     120
#define RESIDENT_POLL_US    20000
/* The device's summary comes at the stop; allow a queue time to drain. */
#define SUMMARY_WAIT_US     (3 * G_USEC_PER_SEC)
#define PATIENCE_US         (2 * G_USEC_PER_SEC)
#define SNAPSHOT_NAME       "fuzz"

typedef struct {
    RsFuzzEnv *env;
    guint job, smp;
    char *dir;
    RsGuestConfig cfg;
    RsGuestResult res;
    GSubprocess *qemu;
    RsQmp *q;
    GSocketConnection *feed;
    char *task_dir;
    char *start_line;       /* the device's "start" event, for every case */
    goffset con_off;        /* console bytes attributed so far */
    goffset ev_off;         /* event bytes attributed so far */
    gboolean shut_down;     /* paused by a guest shutdown: reset first */
    gboolean marks;         /* the kernel marks its records: the device
                             * ends a case with an l1-summary */
    gboolean dead;
    /* Guest RAM: a shared file (x-ignore-shared keeps it out of the
     * snapshot), put back by us from a copy taken at the savevm. */
    int ram_fd, pristine_fd;
    guint8 *ram, *pristine;
    gsize ram_size;
} Resident;

typedef struct {
    RsFuzzEnv *env;
    RsFuzzNext next;
    RsFuzzDone done;
    gpointer opaque;
    gboolean exhausted;
    gint running;
    GMutex stats;
} Pool;

typedef struct {
    Pool *pool;
    guint job;
} Worker;

static goffset file_size(const char *path)
{
    GStatBuf st;

    return g_stat(path, &st) == 0 ? st.st_size : 0;
}

/* Bytes [@from, @to) of @path. */
static char *read_range(const char *path, goffset from, goffset to,
                        gsize *len)
{
    char *buf;
    FILE *f;
    size_t n = 0;

    *len = 0;
    if (to <= from || !(f = fopen(path, "rb"))) {
        return g_strdup("");
    }
    buf = g_malloc(to - from + 1);
    if (fseeko(f, from, SEEK_SET) == 0) {
        n = fread(buf, 1, to - from, f);
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* The vCPU threads' run and wait time so far (ns), from /proc. */
static void vcpu_sched(const Resident *r, guint64 *run, guint64 *wait,
                       guint *threads)
{
    g_autoptr(GDir) d = g_dir_open(r->task_dir, 0, NULL);
    const char *tid;

    *run = *wait = 0;
    *threads = 0;
    while (d && (tid = g_dir_read_name(d))) {
        g_autofree char *cp = g_build_filename(r->task_dir, tid, "comm", NULL);
        g_autofree char *sp = g_build_filename(r->task_dir, tid, "schedstat",
                                               NULL);
        g_autofree char *comm = NULL, *stat = NULL;
        guint64 a, b;

        if (g_file_get_contents(cp, &comm, NULL, NULL) &&
            g_str_has_prefix(comm, "CPU ") &&
            g_file_get_contents(sp, &stat, NULL, NULL) &&
            sscanf(stat, "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT, &a,
                   &b) == 2) {
            *run += a;
            *wait += b;
            (*threads)++;
        }
    }
}

static void resident_free(Resident *r)
{
    gboolean quit = FALSE;

    if (!r) {
        return;
    }
    if (r->q && !r->dead) {
        g_autoptr(JsonNode) n = rs_qmp_execute(r->q, "quit", NULL, NULL);

        quit = n != NULL;
    }
    g_clear_pointer(&r->q, rs_qmp_free);
    g_clear_object(&r->feed);
    if (r->qemu) {
        /* Asked to quit, it exits; else (no QMP yet) it is killed. */
        if (!quit && g_subprocess_get_identifier(r->qemu)) {
            g_subprocess_force_exit(r->qemu);
        }
        g_subprocess_wait(r->qemu, NULL, NULL);
        g_clear_object(&r->qemu);
    }
    if (r->ram) {
        munmap(r->ram, r->ram_size);
    }
    if (r->pristine) {
        munmap(r->pristine, r->ram_size);
    }
    if (r->ram_fd > 0) {
        close(r->ram_fd);
    }
    if (r->pristine_fd > 0) {
        close(r->pristine_fd);
    }
    if (r->res.ram_path) {
        g_unlink(r->res.ram_path);
    }
    rs_guest_config_clear(&r->cfg);
    rs_guest_result_clear(&r->res);
    g_free(r->task_dir);
    g_free(r->start_line);
    g_free(r->dir);
    g_free(r);
}

static gboolean qmp_ok(Resident *r, const char *cmd, const char *args,
                       GError **error)
{
    g_autoptr(JsonNode) n = rs_qmp_execute(r->q, cmd, args, error);

    return n != NULL;
}

/* An HMP command that prints nothing when it works (savevm, loadvm). */
static gboolean hmp_quiet(Resident *r, const char *cmdline, GError **error)
{
    g_autofree char *out = rs_qmp_hmp(r->q, cmdline, error);

    if (!out) {
        return FALSE;
    }
    if (*g_strstrip(out)) {
        g_set_error(error, RS_ERROR, RS_ERROR_GUEST, "%s: %s", cmdline, out);
        return FALSE;
    }
    return TRUE;
}

/* A qcow2 image to hold the internal snapshot, made by QEMU itself. */
static gboolean add_snapshot_disk(Resident *r, GError **error)
{
    g_autofree char *img = g_build_filename(r->dir, "snapshot.qcow2", NULL);
    g_autofree char *esc = g_strescape(img, NULL);
    g_autofree char *file = g_strdup_printf("{\"driver\":\"file\","
                                            "\"filename\":\"%s\","
                                            "\"node-name\":\"snapfile\"}",
                                            esc);
    gint64 deadline = g_get_monotonic_time() + 30 * G_USEC_PER_SEC;

    if (!g_file_set_contents(img, "", 0, error) ||
        !qmp_ok(r, "blockdev-add", file, error) ||
        !qmp_ok(r, "blockdev-create", "{\"job-id\":\"snapcreate\","
                "\"options\":{\"driver\":\"qcow2\",\"file\":\"snapfile\","
                "\"size\":1048576}}", error)) {
        return FALSE;
    }
    for (;;) {
        g_autoptr(JsonNode) jobs = rs_qmp_execute(r->q, "query-jobs", NULL,
                                                  error);
        JsonArray *a;
        JsonObject *j;

        if (!jobs || !JSON_NODE_HOLDS_ARRAY(jobs)) {
            return FALSE;
        }
        a = json_node_get_array(jobs);
        j = json_array_get_length(a) ?
            json_array_get_object_element(a, 0) : NULL;
        if (j && !g_strcmp0(json_object_get_string_member_with_default(
                                j, "status", ""), "concluded")) {
            if (json_object_has_member(j, "error")) {
                g_set_error(error, RS_ERROR, RS_ERROR_GUEST,
                            "creating %s: %s", img,
                            json_object_get_string_member(j, "error"));
                return FALSE;
            }
            break;
        }
        if (g_get_monotonic_time() > deadline) {
            g_set_error(error, RS_ERROR, RS_ERROR_TIMEOUT,
                        "creating %s timed out", img);
            return FALSE;
        }
        g_usleep(2000);
    }
    return qmp_ok(r, "job-dismiss", "{\"id\":\"snapcreate\"}", error) &&
           qmp_ok(r, "blockdev-add", "{\"driver\":\"qcow2\","
                  "\"node-name\":\"snapshot\",\"file\":\"snapfile\"}",
                  error);
}

/* The next data or hole at or after @off in @fd (@size at the end). */
static off_t seek_to(int fd, off_t off, int whence, off_t size)
{
    off_t o = lseek(fd, off, whence);

    return o < 0 || o > size ? size : o;
}

static gboolean page_is_zero(const guint8 *p)
{
    const guint64 *w = (const guint64 *)p;
    guint i;

    for (i = 0; i < 4096 / 8; i++) {
        if (w[i]) {
            return FALSE;
        }
    }
    return TRUE;
}

/*
 * After the savevm: keep a copy of the guest's RAM, sparse like it (a
 * memfd), and map both.
 */
static gboolean ram_keep(Resident *r, GError **error)
{
    off_t size = r->ram_size, off = 0;

    r->pristine_fd = memfd_create("ringside-pristine", MFD_CLOEXEC);
    if (r->pristine_fd < 0 || ftruncate(r->pristine_fd, size) < 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_GUEST, "memfd: %s",
                    g_strerror(errno));
        return FALSE;
    }
    r->ram = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, r->ram_fd,
                  0);
    r->pristine = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
                       r->pristine_fd, 0);
    if (r->ram == MAP_FAILED || r->pristine == MAP_FAILED) {
        r->ram = r->ram == MAP_FAILED ? NULL : r->ram;
        r->pristine = r->pristine == MAP_FAILED ? NULL : r->pristine;
        g_set_error(error, RS_ERROR, RS_ERROR_GUEST, "mmap of the guest's "
                    "RAM: %s", g_strerror(errno));
        return FALSE;
    }
    /*
     * Zero pages become holes (a restored guest has every page written):
     * a reset then looks at the pages with data only.
     */
    while ((off = seek_to(r->ram_fd, off, SEEK_DATA, size)) < size) {
        off_t end = seek_to(r->ram_fd, off, SEEK_HOLE, size), q, zero = -1;

        for (q = off; q <= end; q += 4096) {
            gboolean z = q < end && page_is_zero(r->ram + q);

            if (z && zero < 0) {
                zero = q;
            } else if (!z && zero >= 0) {
                fallocate(r->ram_fd, FALLOC_FL_PUNCH_HOLE |
                          FALLOC_FL_KEEP_SIZE, zero, q - zero);
                zero = -1;
            }
            if (q < end && !z) {
                memcpy(r->pristine + q, r->ram + q, 4096);
            }
        }
        off = end;
    }
    return TRUE;
}

/*
 * Put the guest's RAM back as it was at the savevm, while it is stopped:
 * only where it has pages, a page at a time where they differ; where the
 * copy has none, the pages are dropped (a hole reads as zeros).
 */
static guint64 ram_restore(Resident *r)
{
    off_t size = r->ram_size, off = 0;
    guint64 pages = 0;

    while ((off = seek_to(r->ram_fd, off, SEEK_DATA, size)) < size) {
        off_t end = seek_to(r->ram_fd, off, SEEK_HOLE, size), p = off;

        while (p < end) {
            off_t pd = seek_to(r->pristine_fd, p, SEEK_DATA, size);
            off_t e, q;

            if (pd > p) {
                e = MIN(pd, end);
                if (fallocate(r->ram_fd, FALLOC_FL_PUNCH_HOLE |
                              FALLOC_FL_KEEP_SIZE, p, e - p) < 0) {
                    memset(r->ram + p, 0, e - p);
                }
                pages += (e - p) / 4096;
                p = e;
                continue;
            }
            e = MIN(seek_to(r->pristine_fd, p, SEEK_HOLE, size), end);
            for (q = p; q < e; q += 4096) {
                if (memcmp(r->ram + q, r->pristine + q, 4096)) {
                    memcpy(r->ram + q, r->pristine + q, 4096);
                    pages++;
                }
            }
            p = e;
        }
        off = end;
    }
    return pages;
}

static Resident *resident_start(RsFuzzEnv *env, guint job, guint smp,
                                 GError **error)
{
    g_autoptr(GSubprocessLauncher) launcher = NULL;
    g_autoptr(GPtrArray) argv = NULL;
    g_autoptr(GSocketClient) client = NULL;
    g_autoptr(GSocketAddress) addr = NULL;
    g_autofree char *first = NULL;
    Resident *r = g_new0(Resident, 1);
    RsFuzzCase c = { .cold = TRUE };
    gint64 t0 = g_get_monotonic_time();
    gint64 deadline = t0 + RESIDENT_BOOT_S * G_USEC_PER_SEC;
    gsize len;
    char *nl;

    r->env = env;
    r->job = job;
    r->smp = smp;
    r->dir = g_strdup_printf("%s/resident/j%u-smp%u", env->workdir, job, smp);
    rs_rmtree(r->dir);
    c.sc.smp = smp;
    c.dir = r->dir;
    rs_fuzz_case_config(env, &c, &r->cfg);
    g_clear_pointer(&r->cfg.mailbox, g_free);   /* waits: the feed fills */
    rs_fuzz_feed_config(env, &r->cfg, r->dir);
    r->cfg.resident = TRUE;
    r->cfg.no_ram_file = FALSE;
    /* From the guest booted once per vCPU count, when there is one. */
    r->cfg.incoming = env->snapshot[smp] ? g_strdup(env->snapshot[smp])
                                         : NULL;
    r->ram_size = (gsize)r->cfg.memory_mib << 20;
    if (!rs_guest_prepare(&r->cfg, &r->res, error)) {
        goto fail;
    }
    /* In memory (tmpfs), so that the guest's writes are not written back. */
    if (g_file_test("/dev/shm", G_FILE_TEST_IS_DIR)) {
        g_free(r->res.ram_path);
        r->res.ram_path = g_strdup_printf("/dev/shm/ringside-%d-j%u-smp%u.ram",
                                          (int)getpid(), job, smp);
    }
    argv = rs_guest_argv(&r->cfg, &r->res);
    launcher = g_subprocess_launcher_new(G_SUBPROCESS_FLAGS_STDERR_MERGE);
    g_subprocess_launcher_set_stdout_file_path(launcher, r->res.qemu_log_path);
    g_subprocess_launcher_set_child_setup(launcher, rs_guest_child_setup,
                                          GINT_TO_POINTER(getpid()), NULL);
    r->qemu = g_subprocess_launcher_spawnv(launcher,
                                           (const char *const *)argv->pdata,
                                           error);
    if (!r->qemu) {
        goto fail;
    }
    r->task_dir = g_strdup_printf("/proc/%s/task",
                                  g_subprocess_get_identifier(r->qemu));
    r->q = rs_qmp_connect(r->res.qmp_path, 10000, error);
    if (!r->q) {
        goto fail;
    }
    /*
     * QEMU answers QMP once its machine is made, the RAM file mapped: the
     * file is ours from now on, gone when both let go (a killed run
     * leaves nothing in /dev/shm).
     */
    r->ram_fd = open(r->res.ram_path, O_RDWR | O_CLOEXEC);
    if (r->ram_fd < 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_GUEST, "%s: %s",
                    r->res.ram_path, g_strerror(errno));
        goto fail;
    }
    g_unlink(r->res.ram_path);
    client = g_socket_client_new();
    addr = g_unix_socket_address_new(r->cfg.feed);
    r->feed = g_socket_client_connect(client, G_SOCKET_CONNECTABLE(addr),
                                      NULL, error);
    if (!r->feed) {
        goto fail;
    }
    /* Booted when /init first finds the mailbox empty. */
    for (;;) {
        g_autoptr(JsonNode) waits = rs_qmp_execute(r->q, "qom-get",
            "{\"path\":\"/machine/peripheral/ringside0\","
            "\"property\":\"mailbox-waits\"}", error);

        if (!waits) {
            goto fail;
        }
        if (JSON_NODE_HOLDS_VALUE(waits) && json_node_get_int(waits) > 0) {
            break;
        }
        if (g_get_monotonic_time() > deadline) {
            g_set_error(error, RS_ERROR, RS_ERROR_GUEST, "the guest (%u "
                        "vCPUs) never waited for a scenario: see %s", smp,
                        r->res.console_path);
            goto fail;
        }
        g_usleep(RESIDENT_POLL_US);
    }
    if (!add_snapshot_disk(r, error) ||
        !qmp_ok(r, "migrate-set-capabilities", "{\"capabilities\":[{"
                "\"capability\":\"x-ignore-shared\",\"state\":true}]}",
                error) ||
        !qmp_ok(r, "stop", NULL, error) ||
        !hmp_quiet(r, "savevm " SNAPSHOT_NAME, error) || !ram_keep(r, error)) {
        goto fail;
    }
    /* The boot's output is no case's: start after it. */
    r->con_off = file_size(r->res.console_path);
    r->ev_off = file_size(r->res.events_path);
    first = read_range(r->res.events_path, 0, r->ev_off, &len);
    nl = strchr(first, '\n');
    r->start_line = g_strndup(first, nl ? (gsize)(nl - first + 1) : 0);
    {
        /* Records it saw bracketed: the device will close with an l1-summary. */
        g_autoptr(JsonNode) ok = rs_qmp_execute(r->q, "qom-get",
            "{\"path\":\"/machine/peripheral/ringside0\","
            "\"property\":\"l1-bracket-ok\"}", NULL);

        r->marks = (ok && JSON_NODE_HOLDS_VALUE(ok) &&
                    json_node_get_int(ok) > 0) ||
                   strstr(first, "\"ev\":\"handshake\"");
    }
    return r;
fail:
    resident_free(r);
    return NULL;
}

/* QEMU is gone or going: how it ended, for the case's error. */
static void resident_dead(Resident *r, RsFuzzCase *c, const char *why)
{
    int sig = 0;

    r->dead = TRUE;
    if (r->qemu) {
        g_subprocess_wait(r->qemu, NULL, NULL);
        sig = g_subprocess_get_if_signaled(r->qemu) ?
              g_subprocess_get_term_sig(r->qemu) : 0;
    }
    /* Killed from outside (we never signal a resident QEMU): no outcome. */
    c->interrupted = sig == SIGKILL || sig == SIGTERM || sig == SIGINT ||
                     sig == SIGHUP;
    c->error = g_strdup_printf("resident QEMU %s: %s%s", r->dir, why,
                               sig ? " (killed by a signal)" : "");
}

/*
 * The case's part of the event stream, by content, not by when it was
 * written.  The device writes its events in order, even when it has to
 * queue them (a reset that follows a panic mid-flush), and:
 *  - a restore begins with its reset's "ring" event ("why":"reset"): the
 *    case's events start at the first after the previous case's end
 *    (whatever comes before it is no case's: a later reset judging a hung
 *    case again; counted in @skipped);
 *  - the guest's end (its reset or poweroff) closes the case with a
 *    "summary", then, for a kernel that marks its records (the device
 *    counted bracketed records before the savevm), the brackets still
 *    held and an
 *    "l1-summary", its last event; our stop of a hung guest with a
 *    "summary" only.
 * Those closing events are awaited.
 */
static char *collect_events(Resident *r, gboolean stopped, gboolean *complete,
                            gsize *len, guint *skipped)
{
    gint64 deadline = g_get_monotonic_time() + SUMMARY_WAIT_US;

    for (;;) {
        goffset end = file_size(r->res.events_path);
        gsize n = 0, head = 0, close = 0;
        g_autofree char *text = read_range(r->res.events_path, r->ev_off,
                                           end, &n);
        gboolean started = FALSE, summary = FALSE;
        const char *p = text;

        *skipped = 0;
        while (*p && !close) {
            const char *nl = strchr(p, '\n');
            gsize l;
            int ev;

            if (!nl) {
                break;          /* not written whole yet */
            }
            l = nl + 1 - p;
            ev = rs_event_line_type(p, l);
            if (!started) {
                started = ev == RS_EV_RING &&
                          g_strstr_len(p, l, "\"why\":\"reset\"");
                if (!started) {
                    head = nl + 1 - text;
                    (*skipped)++;
                }
            }
            if (started) {
                if (!summary && ev == RS_EV_SUMMARY) {
                    summary = TRUE;
                    if (!r->marks || stopped) {
                        close = nl + 1 - text;
                    }
                } else if (summary && ev == RS_EV_L1_SUMMARY) {
                    close = nl + 1 - text;
                }
            }
            p = nl + 1;
        }
        if (close || g_get_monotonic_time() > deadline) {
            gsize stop = close ? close : (gsize)(p - text);

            *complete = close != 0;
            r->ev_off += stop;
            *len = stop - MIN(head, stop);
            memmove(text, text + stop - *len, *len);
            text[*len] = '\0';
            return g_steal_pointer(&text);
        }
        g_usleep(1000);
    }
}

static gboolean write_file(const char *dir, const char *name,
                           const char *a, gsize alen,
                           const char *b, gsize blen, char **path)
{
    g_autofree char *p = g_build_filename(dir, name, NULL);
    FILE *f = fopen(p, "wb");
    gboolean ok;

    if (!f) {
        return FALSE;
    }
    ok = fwrite(a, 1, alen, f) == alen && fwrite(b, 1, blen, f) == blen;
    ok = (fclose(f) == 0) && ok;
    if (path) {
        *path = g_steal_pointer(&p);
    }
    return ok;
}

/*
 * The console's part: what the case's vCPUs wrote, from the guest's own
 * line for the case on (@start).  FALSE (with @why) when that line is
 * missing, or another case's is in it.
 */
static gboolean split_console(const char *text, guint64 index, gsize *start,
                              char **why)
{
    g_autofree char *mark = g_strdup_printf(" ringside.epoch=%"
                                            G_GUINT64_FORMAT, index);
    const char *p = text, *own = NULL, *m, *ls;

    while ((m = strstr(p, "ringside-init: fuzz: scenario "))) {
        const char *eol = strchr(m, '\n');
        gsize n = eol ? (gsize)(eol - m) : strlen(m);
        g_autofree char *line = g_strchomp(g_strndup(m, n));

        if (strstr(line, " ringside.epoch=")) {
            if (!g_str_has_suffix(line, mark)) {
                *why = g_strdup_printf("the console holds another case's "
                                       "line: %.300s", line);
                return FALSE;
            }
            own = own ? own : m;
        }
        p = m + n;
    }
    if (!own) {
        *why = g_strdup_printf("the console has no line of the case's epoch "
                               "(ringside.epoch=%" G_GUINT64_FORMAT ")",
                               index);
        return FALSE;
    }
    for (ls = own; ls > text && ls[-1] != '\n'; ls--) {
    }
    *start = ls - text;
    return TRUE;
}

static void run_case(Resident *r, RsFuzzCase *c)
{
    static const char *const ended[] = { "RESET", "SHUTDOWN", NULL };
    g_autoptr(GError) err = NULL;
    g_autofree char *words = rs_scenario_words(&c->sc);
    g_autofree char *line = NULL, *evs = NULL, *con = NULL, *why = NULL;
    g_autofree char *ev = NULL;
    RsGuestResult res = { 0 };
    gint64 t0 = g_get_monotonic_time(), t1, t2, t3, t4, t5;
    gint64 deadline, hard, tr;
    goffset con_start, con_end, grown = -1;
    guint64 run0, wait0, run1, wait1;
    guint threads;
    gsize evlen = 0, conlen = 0, start = 0;
    guint skipped = 0;
    gboolean complete = FALSE, timed_out = FALSE;

    c->resident = TRUE;
    c->job = r->job;
    /* 1. Back to the snapshot. */
    if (r->shut_down) {
        static const char *const reset[] = { "RESET", NULL };
        g_autofree char *got = NULL;

        rs_qmp_clear_events(r->q);
        if (!qmp_ok(r, "system_reset", NULL, &err) ||
            !(got = rs_qmp_wait_event(r->q, reset, g_get_monotonic_time() +
                                      10 * G_USEC_PER_SEC, &err))) {
            resident_dead(r, c, err ? err->message : "no RESET");
            return;
        }
        r->shut_down = FALSE;
    }
    tr = g_get_monotonic_time();
    c->ram_pages = ram_restore(r);
    c->ram_s = (g_get_monotonic_time() - tr) / 1e6;
    if (!hmp_quiet(r, "loadvm " SNAPSHOT_NAME, &err)) {
        resident_dead(r, c, err->message);
        return;
    }
    t1 = g_get_monotonic_time();
    /* 2. The scenario, marked with the case's epoch; then run. */
    line = g_strdup_printf("%s ringside.epoch=%" G_GUINT64_FORMAT "\n", words,
                           c->index);
    con_start = file_size(r->res.console_path);
    c->stray_bytes = con_start - r->con_off;    /* between cases: none */
    vcpu_sched(r, &run0, &wait0, &threads);
    rs_qmp_clear_events(r->q);
    if (!g_output_stream_write_all(
            g_io_stream_get_output_stream(G_IO_STREAM(r->feed)), line,
            strlen(line), NULL, NULL, &err) ||
        !qmp_ok(r, "cont", NULL, &err)) {
        resident_dead(r, c, err->message);
        return;
    }
    t2 = g_get_monotonic_time();
    /* 3. Its end: a shutdown, or the timeout (put off while it prints). */
    deadline = t2 + (gint64)r->env->base.timeout_s * G_USEC_PER_SEC;
    hard = t2 + 3 * (gint64)r->env->base.timeout_s * G_USEC_PER_SEC;
    for (;;) {
        ev = rs_qmp_wait_event(r->q, ended, deadline, &err);
        if (ev || err) {
            break;
        }
        if (g_get_monotonic_time() < hard) {
            goffset size = file_size(r->res.console_path);

            if (size > grown) {
                grown = size;
                deadline = g_get_monotonic_time() + PATIENCE_US;
                continue;
            }
        }
        timed_out = TRUE;
        if (!qmp_ok(r, "stop", NULL, &err)) {
            break;
        }
        break;
    }
    /* Its reboot: the reset is done and the vCPUs run on; stop them. */
    if (ev && !strcmp(ev, "RESET")) {
        qmp_ok(r, "stop", NULL, &err);
    }
    if (err) {
        resident_dead(r, c, err->message);
        return;
    }
    t3 = g_get_monotonic_time();
    /* A poweroff paused it in a state only a reset leaves. */
    r->shut_down = ev && !strcmp(ev, "SHUTDOWN");
    vcpu_sched(r, &run1, &wait1, &threads);
    /* 4. Its output: see the top of the file. */
    con_end = file_size(r->res.console_path);
    con = read_range(r->res.console_path, con_start, con_end, &conlen);
    r->con_off = con_end;
    evs = collect_events(r, timed_out, &complete, &evlen, &skipped);
    c->skipped_events = skipped;
    if (!split_console(con, c->index, &start, &why)) {
        c->error = g_steal_pointer(&why);
    }
    start = 0;      /* what the guest said before its line is still its own */
    if (!write_file(c->dir, "console.log", con + start, conlen - start, "",
                    0, &res.console_path) ||
        !write_file(c->dir, "events.jsonl", r->start_line,
                    strlen(r->start_line), evs, evlen, &res.events_path) ||
        !write_file(c->dir, "qemu.log", "", 0, "", 0, &res.qemu_log_path)) {
        g_free(c->error);
        c->error = g_strdup_printf("%s: cannot write the case's files",
                                   c->dir);
    }
    t4 = g_get_monotonic_time();
    /* 5. Judged as a case of its own QEMU would be. */
    if (!c->error) {
        res.timed_out = timed_out;
        res.smp = r->smp;
        res.vcpu_threads = threads;
        res.vcpu_run_ns = run1 - run0;
        res.vcpu_wait_ns = wait1 - wait0;
        res.wall_s = (t3 - t2) / 1e6;
        c->judged = rs_outcome_judge(&res, RS_END_PANIC, &c->out, &err);
        if (!c->judged) {
            c->error = g_strdup(err->message);
        } else if (!complete && !timed_out) {
            /* The device never closed the case: its verdicts are cut. */
            c->judged = FALSE;
            c->error = g_strdup("the device wrote no summary for the case");
        }
    }
    rs_guest_result_clear(&res);
    t5 = g_get_monotonic_time();
    c->reset_s = (t1 - t0) / 1e6;
    c->feed_s = (t2 - t1) / 1e6;
    c->guest_s = (t3 - t2) / 1e6;
    c->collect_s = (t4 - t3) / 1e6;
    c->judge_s = (t5 - t4) / 1e6;
    c->wall_s = (t5 - t0) / 1e6;
}

static gpointer worker(gpointer opaque)
{
    Worker *w = opaque;
    Pool *p = w->pool;
    Resident *rs[RS_SCENARIO_SMP_MAX + 1] = { 0 };
    guint i;

    for (;;) {
        RsFuzzCase *c;
        Resident *r;

        g_mutex_lock(&p->env->lock);
        c = p->exhausted ? NULL : p->next(p->opaque);
        if (!c) {
            p->exhausted = TRUE;
        }
        g_mutex_unlock(&p->env->lock);
        if (!c) {
            break;
        }
        /*
         * Made first, before its QEMU may have to start: a run stopped
         * mid-case finds it, and runs the case again.
         */
        if (g_mkdir_with_parents(c->dir, 0755) < 0) {
            c->error = g_strdup_printf("%s: %s", c->dir, g_strerror(errno));
            c->interrupted = TRUE;
        }
        r = c->error ? NULL : rs[c->sc.smp];
        if (!r && !c->error) {
            g_autoptr(GError) err = NULL;
            gint64 t0 = g_get_monotonic_time();

            r = rs[c->sc.smp] = resident_start(p->env, w->job, c->sc.smp,
                                               &err);
            if (!r) {
                c->error = g_strdup(err->message);
                c->interrupted = TRUE;  /* never ran: no outcome */
            } else {
                g_mutex_lock(&p->stats);
                p->env->resident_qemus++;
                p->env->resident_setup_s += (g_get_monotonic_time() - t0) /
                                            1e6;
                g_mutex_unlock(&p->stats);
            }
        }
        if (r) {
            run_case(r, c);
            if (r->dead) {
                resident_free(r);
                rs[c->sc.smp] = NULL;
            }
        }
        c->end_us = g_get_real_time();
        g_mutex_lock(&p->env->lock);
        p->done(c, p->opaque);
        g_mutex_unlock(&p->env->lock);
    }
    for (i = 0; i <= RS_SCENARIO_SMP_MAX; i++) {
        resident_free(rs[i]);
    }
    g_atomic_int_dec_and_test(&p->running);
    g_main_context_wakeup(NULL);
    g_free(w);
    return NULL;
}

void rs_fuzz_run_resident(RsFuzzEnv *env, RsFuzzNext next, RsFuzzDone done,
                          gpointer opaque)
{
    Pool p = { .env = env, .next = next, .done = done, .opaque = opaque };
    GPtrArray *threads = g_ptr_array_new();
    guint i;

    g_mutex_init(&p.stats);
    g_atomic_int_set(&p.running, env->jobs);
    for (i = 0; i < env->jobs; i++) {
        Worker *w = g_new0(Worker, 1);

        w->pool = &p;
        w->job = i;
        g_ptr_array_add(threads, g_thread_new("resident", worker, w));
    }
    /* The main loop goes on: the progress line, the stop signals. */
    while (g_atomic_int_get(&p.running) > 0) {
        g_main_context_iteration(NULL, TRUE);
    }
    for (i = 0; i < threads->len; i++) {
        g_thread_join(threads->pdata[i]);
    }
    g_ptr_array_free(threads, TRUE);
    g_mutex_clear(&p.stats);
}
