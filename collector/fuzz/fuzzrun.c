/* Running fuzz cases from snapshots or cold, in parallel. */
#include "fuzz/fuzzrun.h"
#include "fuzz/resident.h"
#include "errors.h"
#include "guest/qmp.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>

/* How long a boot to the scenario wait may take, and polling it. */
#define SNAPSHOT_BOOT_S     120
#define SNAPSHOT_POLL_US    20000

char *rs_file_sha256(const char *path)
{
    g_autoptr(GMappedFile) m = g_mapped_file_new(path, FALSE, NULL);

    if (!m) {
        return g_strdup("");
    }
    return g_compute_checksum_for_data(G_CHECKSUM_SHA256,
                                       (const guchar *)
                                       g_mapped_file_get_contents(m),
                                       g_mapped_file_get_length(m));
}

gboolean rs_fuzz_save_case(const RsFuzzEnv *env, const RsFuzzCase *c,
                           guint64 seed, const char *kernel_sha,
                           const char *path, GError **error)
{
    g_autoptr(GHashTable) o = g_hash_table_new_full(g_str_hash, g_str_equal,
                                                    NULL, g_free);
    g_autofree char *dir = g_path_get_dirname(path);

    g_hash_table_insert(o, "class", g_strdup(c->judged ?
                        rs_class_names[c->out.klass] : "error"));
    g_hash_table_insert(o, "seed", g_strdup_printf("%" G_GUINT64_FORMAT,
                                                   seed));
    g_hash_table_insert(o, "index", g_strdup_printf("%" G_GUINT64_FORMAT,
                                                    c->index));
    g_hash_table_insert(o, "kernel", g_strdup(env->base.kernel));
    g_hash_table_insert(o, "kernel-sha256", kernel_sha ?
                        g_strdup(kernel_sha) :
                        rs_file_sha256(env->base.kernel));
    if (c->judged && c->out.osrelease[0]) {
        g_hash_table_insert(o, "osrelease", g_strdup(c->out.osrelease));
    }
    g_hash_table_insert(o, "pace", g_strdup(env->base.pace));
    g_hash_table_insert(o, "memory", g_strdup_printf("%d",
                                                     env->base.memory_mib));
    if (g_mkdir_with_parents(dir, 0755) < 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND, "%s: %s", dir,
                    g_strerror(errno));
        return FALSE;
    }
    return rs_scenario_save(&c->sc, o, path, error);
}

/* ---- snapshots ---- */

typedef struct {
    RsGuestConfig cfg;
    RsGuestResult res;
    RsGuestRun *run;
    gboolean exited;
    char *state;
} Boot;

static void boot_exited(RsGuestRun *run G_GNUC_UNUSED, gpointer opaque)
{
    ((Boot *)opaque)->exited = TRUE;
}

static void iterate(void)
{
    while (g_main_context_iteration(NULL, FALSE)) {
    }
}

static gint64 node_int(JsonNode *n)
{
    return n && JSON_NODE_HOLDS_VALUE(n) ? json_node_get_int(n) : -1;
}

/* Wait for /init to poll the empty mailbox, then save the guest. */
static gboolean boot_save(Boot *b, GError **error)
{
    g_autoptr(RsQmp) q = NULL;
    g_autofree char *uri = NULL, *args = NULL, *quoted = NULL;
    g_autoptr(JsonNode) r = NULL;
    gint64 deadline = g_get_monotonic_time() + SNAPSHOT_BOOT_S * G_USEC_PER_SEC;

    q = rs_qmp_connect(b->res.qmp_path, 10000, error);
    if (!q) {
        return FALSE;
    }
    for (;;) {
        g_autoptr(JsonNode) waits = rs_qmp_execute(q, "qom-get",
            "{\"path\":\"/machine/peripheral/ringside0\","
            "\"property\":\"mailbox-waits\"}", error);

        if (!waits) {
            return FALSE;
        }
        if (node_int(waits) > 0) {
            break;
        }
        iterate();
        if (b->exited || g_get_monotonic_time() > deadline) {
            g_set_error(error, RS_ERROR, RS_ERROR_GUEST, "the guest (%d "
                        "vCPUs) never waited for a scenario: see %s",
                        b->cfg.smp, b->res.console_path);
            return FALSE;
        }
        g_usleep(SNAPSHOT_POLL_US);
    }
    /*
     * Not stopped first: the state saved says "running", so a QEMU
     * restoring it runs the guest as soon as it is loaded.
     */
    quoted = g_shell_quote(b->state);
    uri = g_strdup_printf("exec:cat > %s", quoted);
    args = g_strdup_printf("{\"uri\":\"%s\"}", uri);
    r = rs_qmp_execute(q, "migrate", args, error);
    if (!r) {
        return FALSE;
    }
    for (;;) {
        g_autoptr(JsonNode) st = rs_qmp_execute(q, "query-migrate", NULL,
                                                error);
        const char *status;

        if (!st || !JSON_NODE_HOLDS_OBJECT(st)) {
            return FALSE;
        }
        status = json_object_get_string_member_with_default(
            json_node_get_object(st), "status", "");
        if (!strcmp(status, "completed")) {
            break;
        }
        if (!strcmp(status, "failed") || !strcmp(status, "cancelled") ||
            g_get_monotonic_time() > deadline) {
            g_set_error(error, RS_ERROR, RS_ERROR_GUEST,
                        "saving the guest to %s: migration %s", b->state,
                        *status ? status : "timed out");
            return FALSE;
        }
        g_usleep(SNAPSHOT_POLL_US);
    }
    g_clear_pointer(&r, json_node_unref);
    r = rs_qmp_execute(q, "quit", NULL, NULL);
    return TRUE;
}

gboolean rs_fuzz_snapshots(RsFuzzEnv *env, guint smps, GError **error)
{
    Boot boots[RS_SCENARIO_SMP_MAX + 1] = { 0 };
    gboolean ok = TRUE;
    guint n;

    /* Boot them all at once: they wait for the mailbox when done. */
    for (n = 1; n <= RS_SCENARIO_SMP_MAX && ok; n++) {
        Boot *b = &boots[n];
        RsFuzzCase c = { .cold = TRUE };

        if (!(smps & (1u << n)) || env->snapshot[n]) {
            continue;
        }
        c.sc.smp = n;
        c.dir = g_strdup_printf("%s/snapshots/boot-%u", env->workdir, n);
        rs_fuzz_case_config(env, &c, &b->cfg);
        g_clear_pointer(&b->cfg.mailbox, g_free);
        b->cfg.timeout_s = SNAPSHOT_BOOT_S + 60;
        if (env->resident) {
            /* What the resident QEMUs restore has /init read the feed. */
            rs_fuzz_feed_config(env, &b->cfg, c.dir);
        }
        b->state = g_strdup_printf("%s/snapshots/smp%u.state", env->workdir,
                                   n);
        g_free(c.dir);
        b->run = rs_guest_start(&b->cfg, &b->res, boot_exited, b, error);
        ok = b->run != NULL;
    }
    for (n = 1; n <= RS_SCENARIO_SMP_MAX; n++) {
        Boot *b = &boots[n];

        if (!b->run) {
            continue;
        }
        if (ok && !boot_save(b, error)) {
            ok = FALSE;
        }
        while (!b->exited && ok) {
            g_main_context_iteration(NULL, TRUE);
        }
        if (ok) {
            env->snapshot[n] = g_steal_pointer(&b->state);
            /* The boot's RAM file is in the state; drop the copy. */
            g_unlink(b->res.ram_path);
        }
    }
    for (n = 1; n <= RS_SCENARIO_SMP_MAX; n++) {
        rs_guest_run_free(boots[n].run);
        rs_guest_config_clear(&boots[n].cfg);
        rs_guest_result_clear(&boots[n].res);
        g_free(boots[n].state);
    }
    return ok;
}

/* ---- cases ---- */

typedef struct {
    RsFuzzEnv *env;
    RsFuzzNext next;
    RsFuzzDone done;
    gpointer opaque;
    guint running;
    gboolean exhausted;
} Pool;

typedef struct {
    Pool *pool;
    RsFuzzCase *c;
    RsGuestConfig cfg;
    RsGuestResult res;
    RsGuestRun *run;
} Slot;

static void slot_free(Slot *s)
{
    rs_guest_run_free(s->run);
    rs_guest_config_clear(&s->cfg);
    rs_guest_result_clear(&s->res);
    g_free(s);
}

static gboolean qemu_log_says(const char *path, const char *what)
{
    g_autofree char *text = NULL;

    return path && g_file_get_contents(path, &text, NULL, NULL) &&
           strstr(text, what);
}

static void judge(Slot *s)
{
    g_autoptr(GError) err = NULL;
    RsFuzzCase *c = s->c;

    c->wall_s = s->res.wall_s;
    c->end_us = g_get_real_time();
    /*
     * A signal we did not send (we kill only a hung guest) or QEMU's own
     * "terminating on signal": the job is being stopped, and what the
     * guest got to say is no outcome.  The case is left to a resumed run.
     */
    c->interrupted = (!s->res.timed_out &&
                      (s->res.term_signal == SIGKILL ||
                       s->res.term_signal == SIGTERM ||
                       s->res.term_signal == SIGINT ||
                       s->res.term_signal == SIGHUP)) ||
                     qemu_log_says(s->res.qemu_log_path,
                                   "terminating on signal");
    c->judged = rs_outcome_judge(&s->res, RS_END_PANIC, &c->out, &err);
    if (!c->judged) {
        c->error = g_strdup(err->message);
    }
    /* Only the RAM is big; the scenario replays from the case file. */
    g_unlink(s->res.ram_path);
}

static void pool_fill(Pool *p);

static void slot_done(RsGuestRun *run G_GNUC_UNUSED, gpointer opaque)
{
    Slot *s = opaque;
    Pool *p = s->pool;
    RsFuzzCase *c = s->c;

    judge(s);
    s->c = NULL;
    p->running--;
    /* Free the run from an idle callback: we are inside its callback. */
    g_idle_add_once((GSourceOnceFunc)slot_free, s);
    p->done(c, p->opaque);
    pool_fill(p);
}

static void pool_fill(Pool *p)
{
    while (!p->exhausted && p->running < p->env->jobs) {
        g_autoptr(GError) err = NULL;
        RsFuzzCase *c = p->next(p->opaque);
        Slot *s;

        if (!c) {
            p->exhausted = TRUE;
            break;
        }
        s = g_new0(Slot, 1);
        s->pool = p;
        s->c = c;
        rs_fuzz_case_config(p->env, c, &s->cfg);
        s->run = rs_guest_start(&s->cfg, &s->res, slot_done, s, &err);
        if (!s->run) {
            c->error = g_strdup(err->message);
            c->interrupted = TRUE;      /* never ran: no outcome either */
            slot_free(s);
            p->done(c, p->opaque);
            continue;
        }
        p->running++;
    }
}

void rs_fuzz_run(RsFuzzEnv *env, RsFuzzNext next, RsFuzzDone done,
                 gpointer opaque)
{
    Pool p = { env, next, done, opaque, 0, FALSE };

    if (env->resident) {
        rs_fuzz_run_resident(env, next, done, opaque);
        return;
    }

    pool_fill(&p);
    while (p.running) {
        g_main_context_iteration(NULL, TRUE);
    }
    iterate();
}

typedef struct {
    RsFuzzCase *c;
    gboolean taken;
} One;

static RsFuzzCase *one_next(gpointer opaque)
{
    One *o = opaque;

    if (o->taken) {
        return NULL;
    }
    o->taken = TRUE;
    return o->c;
}

static void one_done(RsFuzzCase *c G_GNUC_UNUSED, gpointer opaque G_GNUC_UNUSED)
{
}

void rs_fuzz_run_one(RsFuzzEnv *env, RsFuzzCase *c)
{
    One o = { c, FALSE };

    rs_fuzz_run(env, one_next, one_done, &o);
}
