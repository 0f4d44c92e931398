/*
 * ringside replay: run a case file under QEMU's record/replay, then replay
 * the recording, and check that the replay put the same bytes on the wire
 * at the same virtual times and got the same verdicts: the interleaving
 * that made a case fail, made to happen again.
 */
#include "commands.h"
#include "errors.h"
#include "events/events.h"
#include "fuzz/fuzzrun.h"
#include "guest/guestopts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The wire and the verdicts of a run, in a form two runs compare by. */
static char *run_digest(const RsFuzzCase *c, guint64 *bytes, GError **error)
{
    g_autofree char *path = g_build_filename(c->dir, "events.jsonl", NULL);
    g_autoptr(RsEventStream) s = rs_event_stream_load(path, error);
    g_autoptr(GChecksum) sum = g_checksum_new(G_CHECKSUM_SHA256);
    guint i;

    if (!s) {
        return NULL;
    }
    *bytes = 0;
    for (i = 0; i < s->tx->len; i++) {
        const RsTxByte *b = &g_array_index(s->tx, RsTxByte, i);
        gint64 rec[4] = { b->index, b->vt_ns, b->cpu, b->byte };

        g_checksum_update(sum, (const guchar *)rec, sizeof(rec));
    }
    for (i = 0; i < s->lines->len; i++) {
        const RsLineVerdict *l = &g_array_index(s->lines, RsLineVerdict, i);

        g_checksum_update(sum, (const guchar *)l->verdict,
                          strlen(l->verdict) + 1);
        g_checksum_update(sum, (const guchar *)&l->seq, sizeof(l->seq));
        if (!s->tx->len) {
            /* line events alone: where and when their bytes went */
            gint64 rec[4] = { l->first, l->last, l->vt_ns, l->cpu };

            g_checksum_update(sum, (const guchar *)rec, sizeof(rec));
            *bytes = MAX(*bytes, l->last + 1);
        }
    }
    for (i = 0; i < s->brackets->len; i++) {
        const RsBracket *b = &g_array_index(s->brackets, RsBracket, i);

        g_checksum_update(sum, (const guchar *)b->verdict,
                          strlen(b->verdict) + 1);
        g_checksum_update(sum, (const guchar *)&b->seq, sizeof(b->seq));
    }
    if (s->tx->len) {
        *bytes = s->tx->len;
    }
    return g_strdup(g_checksum_get_string(sum));
}

static void print_run(const char *what, const RsFuzzCase *c)
{
    if (!c->judged) {
        printf("%s: no verdicts (%s)\n", what, c->error);
        return;
    }
    printf("%s: class=%s ended=%s bytes=%" G_GUINT64_FORMAT " lost=%"
           G_GUINT64_FORMAT " torn=%" G_GUINT64_FORMAT " corrupt=%"
           G_GUINT64_FORMAT " duplicated=%" G_GUINT64_FORMAT " wall=%.2fs "
           "dir=%s\n", what, rs_class_names[c->out.klass],
           rs_end_names[c->out.end], c->out.wire_bytes, c->out.lost,
           c->out.torn, c->out.corrupt, c->out.duplicated, c->wall_s, c->dir);
}

/*
 * @env for replaying @file: the case's own kernel and pacing, as its
 * [origin] says, unless --kernel gives another; its memory.
 */
static gboolean replay_configure(RsFuzzEnv *env, const char *file,
                                 GHashTable *origin, RsGuestGiven *given,
                                 int timeout, GError **error)
{
    const char *v;

    rs_guest_config_defaults(&env->base);
    v = g_hash_table_lookup(origin, "kernel");
    if (v && !given->kernel) {
        given->kernel = g_strdup(v);
    }
    v = g_hash_table_lookup(origin, "pace");
    g_free(given->pace);
    given->pace = g_strdup(v && !strcmp(v, "line") ? "line" : "off");
    rs_guest_given_apply(given, &env->base);
    v = g_hash_table_lookup(origin, "memory");
    if (v && !rs_origin_int(file, "memory", v, RS_MEMORY_MIN, RS_MEMORY_MAX,
                            &env->base.memory_mib, error)) {
        return FALSE;
    }
    env->base.timeout_s = timeout;
    env->jobs = 1;
    /* A RAM file would start the replay on the recording's last RAM. */
    env->no_ram_file = TRUE;
    if (!rs_fuzz_env_check(env, error)) {
        return FALSE;
    }
    env->workdir = env->base.outdir ? g_strdup(env->base.outdir) :
                   g_dir_make_tmp("ringside-replay-XXXXXX", error);
    if (!env->workdir) {
        return FALSE;
    }
    env->base.rr_file = g_build_filename(env->workdir, "replay.bin", NULL);
    return TRUE;
}

/* The case run under QEMU's record, then under its replay: both judged? */
static gboolean record_and_replay(RsFuzzEnv *env, RsFuzzCase *rec,
                                  RsFuzzCase *rep)
{
    rec->cold = rep->cold = TRUE;
    rep->sc = rec->sc;
    rec->dir = g_build_filename(env->workdir, "record", NULL);
    rep->dir = g_build_filename(env->workdir, "replay", NULL);
    env->base.rr_mode = g_strdup("record");
    rs_fuzz_run_one(env, rec);
    print_run("record", rec);
    if (!rec->judged) {
        return FALSE;
    }
    g_free(env->base.rr_mode);
    env->base.rr_mode = g_strdup("replay");
    rs_fuzz_run_one(env, rep);
    print_run("replay", rep);
    return rep->judged;
}

/* 0 if the two runs had the same wire and verdicts, 1 if not (said);
 * 2 if they could not be compared. */
static int compare_runs(const char *file, const RsFuzzEnv *env,
                        const RsFuzzCase *rec, const RsFuzzCase *rep)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *dig1 = NULL, *dig2 = NULL;
    guint64 n1 = 0, n2 = 0;

    dig1 = run_digest(rec, &n1, &error);
    dig2 = dig1 ? run_digest(rep, &n2, &error) : NULL;
    if (!dig2) {
        g_printerr("ringside replay: %s\n", error->message);
        return 2;
    }
    if (!strcmp(dig1, dig2) && rec->out.klass == rep->out.klass) {
        printf("ringside: replay reproduced %s: %" G_GUINT64_FORMAT
               " wire bytes at the same virtual times, the same verdicts, "
               "class=%s out=%s\n", file, n1,
               rs_class_names[rep->out.klass], env->workdir);
        return 0;
    }
    printf("ringside: replay DIFFERS from the recording of %s: %"
           G_GUINT64_FORMAT " vs %" G_GUINT64_FORMAT " wire bytes, "
           "class %s vs %s out=%s\n", file, n1, n2,
           rs_class_names[rec->out.klass], rs_class_names[rep->out.klass],
           env->workdir);
    return 1;
}

int rs_cmd_replay(int argc, char **argv)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GOptionContext) ctx = NULL;
    g_autoptr(GHashTable) origin = NULL;
    g_auto(RsGuestGiven) given = { 0 };
    RsFuzzEnv env;
    RsFuzzCase rec = { 0 }, rep = { 0 };
    int timeout = 120;
    int status = 2;
    const GOptionEntry entries[] = {
        { "kernel", 'k', 0, G_OPTION_ARG_FILENAME, &given.kernel,
          "Guest bzImage (default: the one the case file names)", "FILE" },
        { "qemu", 0, 0, G_OPTION_ARG_FILENAME, &given.qemu,
          "QEMU fork binary (default: the cached build)", "FILE" },
        { "timeout", 't', 0, G_OPTION_ARG_INT, &timeout,
          "Seconds each of the two runs may take (default 120)", "S" },
        { "out", 'o', 0, G_OPTION_ARG_FILENAME, &given.outdir,
          "Directory for the recording and both runs (default: a new "
          "directory under /tmp)", "DIR" },
        { NULL }
    };

    rs_fuzz_env_init(&env);
    ctx = g_option_context_new("CASE - record a case, replay it, compare");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx,
        "Exit status: 0 if the replay reproduced the recorded run's wire "
        "bytes, their virtual times and the verdicts; 1 if not; 2 on bad "
        "input or a run that could not be made.");
    if (!rs_parse_options(ctx, &argc, &argv, 1)) {
        return 2;
    }
    if (argc != 2) {
        g_printerr("ringside replay: expected one case file (try --help)\n");
        return 2;
    }
    if (!rs_opt_range("--timeout", timeout, 1, 0, &error)) {
        g_printerr("ringside replay: %s\n", error->message);
        return 2;
    }
    if (!rs_scenario_load(argv[1], &rec.sc, &origin, &error)) {
        g_printerr("ringside replay: %s\n", error->message);
        return 2;
    }
    if (rec.sc.smp != 1) {
        g_printerr("ringside replay: %s runs on %u vCPUs; QEMU 7.2's "
                   "record/replay supports one (shrink the case with "
                   "'ringside fuzz --minimize', or rerun it with 'ringside "
                   "run --case')\n", argv[1], rec.sc.smp);
        return 2;
    }
    if (!replay_configure(&env, argv[1], origin, &given, timeout, &error)) {
        g_printerr("ringside replay: %s\n", error->message);
        goto out;
    }
    if (record_and_replay(&env, &rec, &rep)) {
        status = compare_runs(argv[1], &env, &rec, &rep);
    }
out:
    g_free(rec.dir);
    g_free(rep.dir);
    g_free(rec.error);
    g_free(rep.error);
    rs_fuzz_env_clear(&env);
    return status;
}
