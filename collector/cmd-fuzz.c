/*
 * ringside fuzz: panic scenarios drawn from a seed, each run from a
 * snapshot of the booted guest (a few also booted cold, to measure what
 * the snapshot buys), judged by ringside-serial, classified; failing ones
 * saved as case files.  --minimize shrinks one.
 */
#include "commands.h"
#include "errors.h"
#include "minimize.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    RsFuzzEnv env;
    guint64 seed;
    guint shard_i, shard_n;
    GStrv tests;
    guint64 max_cases;      /* 0: until the deadline */
    gint64 deadline;        /* monotonic us; 0: none */
    char *kernel_sha;

    /* the phase running */
    gboolean cold;
    guint64 next_k;         /* this shard's next case, counted from 0 */
    guint64 limit_k;        /* stop before this one (cold phase) */
    guint64 started, done;
    gint64 phase_t0;

    guint64 classes[2][RS_N_CLASSES];   /* [cold][class] */
    guint64 unfaithful;     /* snapshot cases whose timing was the host's */
    GHashTable *cold_wall;  /* index -> wall s of its cold run (double *) */
    double pair_s[2];       /* wall s of the cases run both ways [cold] */
    guint64 pairs;
    guint64 cases[2];
    double phase_s[2];
    FILE *results;
    gboolean tty;
    gint64 last_progress;
} Fuzz;

/* This shard's k-th case: seed ranges interleave, so shards never meet. */
static guint64 case_index(const Fuzz *f, guint64 k)
{
    return k * f->shard_n + f->shard_i;
}

static RsFuzzCase *next_case(gpointer opaque)
{
    Fuzz *f = opaque;
    RsFuzzCase *c;
    guint64 index;

    if (f->next_k >= f->limit_k ||
        (f->deadline && g_get_monotonic_time() >= f->deadline)) {
        return NULL;
    }
    index = case_index(f, f->next_k++);
    if (f->max_cases && index >= f->max_cases) {
        return NULL;
    }
    c = g_new0(RsFuzzCase, 1);
    c->index = index;
    c->cold = f->cold;
    rs_scenario_generate(f->seed, index, (const char *const *)f->tests,
                         &c->sc);
    c->dir = g_strdup_printf("%s/runs/%" G_GUINT64_FORMAT "%s",
                             f->env.workdir, index, f->cold ? "-cold" : "");
    f->started++;
    return c;
}

static void progress(Fuzz *f, gboolean force)
{
    gint64 now = g_get_monotonic_time();
    double el = (now - f->phase_t0) / 1e6;
    double rate = el > 0 ? f->done * 60.0 / el : 0;
    guint64 failing = f->done - f->classes[f->cold][RS_CLASS_CLEAN];
    g_autofree char *eta = NULL;

    if (!force && now - f->last_progress < (f->tty ? 500000 : 10000000)) {
        return;
    }
    f->last_progress = now;
    if (f->deadline) {
        eta = g_strdup_printf("%.0fs", MAX(0, (f->deadline - now) / 1e6));
    } else if (f->max_cases && rate > 0) {
        guint64 total = f->cold ? f->limit_k :
                        (f->max_cases - f->shard_i + f->shard_n - 1) /
                        f->shard_n;

        eta = g_strdup_printf("%.0fs", total > f->done ?
                              (total - f->done) * 60.0 / rate : 0);
    } else {
        eta = g_strdup("-");
    }
    fprintf(stderr, "%sfuzz %s: %" G_GUINT64_FORMAT " cases, %"
            G_GUINT64_FORMAT " failing, %.0f/min, ETA %s%s",
            f->tty ? "\r\033[K" : "", f->cold ? "cold" : "snapshot",
            f->done, failing, rate, eta, f->tty ? "" : "\n");
}

static void case_done(RsFuzzCase *c, gpointer opaque)
{
    Fuzz *f = opaque;
    g_autoptr(GString) line = g_string_new(NULL);
    g_autofree char *words = rs_scenario_words(&c->sc);
    g_autofree char *case_file = NULL;
    RsClass k = c->judged ? c->out.klass : RS_CLASS_ERROR;

    f->done++;
    f->classes[c->cold][k]++;
    if (c->judged && !c->cold && !c->out.faithful) {
        f->unfaithful++;
    }
    /* The same scenarios both ways, hung ones left out: the fair ratio. */
    if (k != RS_CLASS_HUNG && k != RS_CLASS_ERROR) {
        double *cw;

        if (c->cold) {
            g_hash_table_insert(f->cold_wall, g_memdup2(&c->index,
                                                        sizeof(c->index)),
                                g_memdup2(&c->wall_s, sizeof(c->wall_s)));
        } else if ((cw = g_hash_table_lookup(f->cold_wall, &c->index))) {
            f->pair_s[1] += *cw;
            f->pair_s[0] += c->wall_s;
            f->pairs++;
        }
    }
    f->cases[c->cold]++;
    if (k != RS_CLASS_CLEAN && !c->cold) {
        g_autoptr(GError) err = NULL;

        case_file = g_strdup_printf("%s/cases/%s-%" G_GUINT64_FORMAT ".case",
                                    f->env.workdir, rs_class_names[k],
                                    c->index);
        if (!rs_fuzz_save_case(&f->env, c, f->seed, f->kernel_sha,
                               case_file, &err)) {
            fprintf(stderr, "\nringside fuzz: %s\n", err->message);
        }
    } else if (c->index != 0) {
        rs_rmtree(c->dir);      /* kept: failing runs and the first */
    }
    g_string_append_printf(line, "{\"index\":%" G_GUINT64_FORMAT
                           ",\"seed\":%" G_GUINT64_FORMAT ",\"mode\":\"%s\","
                           "\"shard\":\"%u/%u\",\"kernel\":\"%s\","
                           "\"kernel_sha256\":\"%s\",\"smp\":%u,"
                           "\"test\":\"%s\",\"words\":\"%s\","
                           "\"wall_s\":%.3f,",
                           c->index, f->seed, c->cold ? "cold" : "snapshot",
                           f->shard_i, f->shard_n, f->env.base.kernel,
                           f->kernel_sha, c->sc.smp, c->sc.test, words,
                           c->wall_s);
    if (c->judged) {
        g_string_append_printf(line, "\"osrelease\":\"%s\",",
                               c->out.osrelease);
        rs_outcome_json(line, &c->out);
    } else {
        g_autofree char *why = g_strescape(c->error ? c->error : "", NULL);

        g_string_append_printf(line, "\"class\":\"error\",\"error\":\"%s\"",
                               why);
    }
    if (case_file) {
        g_autofree char *base = g_path_get_basename(case_file);

        g_string_append_printf(line, ",\"case\":\"cases/%s\"", base);
    }
    if (g_file_test(c->dir, G_FILE_TEST_IS_DIR)) {
        g_string_append_printf(line, ",\"dir\":\"runs/%s\"",
                               strrchr(c->dir, '/') + 1);
    }
    g_string_append(line, "}\n");
    fputs(line->str, f->results);
    fflush(f->results);
    rs_fuzz_case_free(c);
    progress(f, FALSE);
}

static gboolean progress_tick(gpointer opaque)
{
    progress(opaque, FALSE);
    return G_SOURCE_CONTINUE;
}

static void run_phase(Fuzz *f, gboolean cold, guint64 limit_k)
{
    guint tick;

    f->cold = cold;
    f->next_k = 0;
    f->limit_k = limit_k;
    f->started = f->done = 0;
    f->phase_t0 = g_get_monotonic_time();
    tick = g_timeout_add(500, progress_tick, f);
    rs_fuzz_run(&f->env, next_case, case_done, f);
    g_source_remove(tick);
    f->phase_s[cold] = (g_get_monotonic_time() - f->phase_t0) / 1e6;
    progress(f, TRUE);
    fprintf(stderr, "\n");
}

static void print_summary(Fuzz *f, double snap_s, guint64 cold_n)
{
    double cold_rate = f->phase_s[1] > 0 ? f->cases[1] * 60 / f->phase_s[1]
                                         : 0;
    double snap_rate = f->phase_s[0] > 0 ? f->cases[0] * 60 / f->phase_s[0]
                                         : 0;
    g_autofree char *path = g_build_filename(f->env.workdir, "fuzz.json",
                                             NULL);
    g_autoptr(GString) js = g_string_new(NULL);
    int k;

    printf("%-22s %10s %10s\n", "class", "snapshot", "cold");
    for (k = 0; k < RS_N_CLASSES; k++) {
        printf("%-22s %10" G_GUINT64_FORMAT " %10" G_GUINT64_FORMAT "\n",
               rs_class_names[k], f->classes[0][k], f->classes[1][k]);
    }
    if (cold_n) {
        printf("cold boots:     %" G_GUINT64_FORMAT " cases in %.1f s, "
               "%.1f cases/min\n", f->cases[1], f->phase_s[1], cold_rate);
    }
    printf("from snapshots: %" G_GUINT64_FORMAT " cases in %.1f s, "
           "%.1f cases/min", f->cases[0], f->phase_s[0], snap_rate);
    if (cold_rate > 0) {
        printf(" (%.1fx the cold rate)", snap_rate / cold_rate);
    }
    printf("; saving the snapshots took %.1f s\n", snap_s);
    if (f->pairs && f->pair_s[0] > 0) {
        printf("the same %" G_GUINT64_FORMAT " scenarios both ways: %.2f s "
               "a case booted cold, %.2f s from a snapshot (%.1fx)\n",
               f->pairs, f->pair_s[1] / f->pairs, f->pair_s[0] / f->pairs,
               f->pair_s[1] / f->pair_s[0]);
    }
    printf("ringside: fuzz seed=%" G_GUINT64_FORMAT " shard=%u/%u kernel=%s "
           "cases=%" G_GUINT64_FORMAT " failing=%" G_GUINT64_FORMAT
           " unfaithful=%" G_GUINT64_FORMAT " out=%s\n", f->seed, f->shard_i,
           f->shard_n, f->env.base.kernel, f->cases[0],
           f->cases[0] - f->classes[0][RS_CLASS_CLEAN], f->unfaithful,
           f->env.workdir);

    g_string_append_printf(js, "{\"seed\":%" G_GUINT64_FORMAT ",\"shard\":"
                           "\"%u/%u\",\"kernel\":\"%s\",\"kernel_sha256\":"
                           "\"%s\",\"jobs\":%u,\"pace\":\"%s\",\"cold_cases\":%"
                           G_GUINT64_FORMAT ",\"cold_s\":%.3f,"
                           "\"snapshot_cases\":%" G_GUINT64_FORMAT
                           ",\"snapshot_s\":%.3f,\"snapshot_save_s\":%.3f,"
                           "\"pairs\":%" G_GUINT64_FORMAT ",\"pair_cold_s\":%.3f,"
                           "\"pair_snapshot_s\":%.3f,\"unfaithful\":%"
                           G_GUINT64_FORMAT "}\n",
                           f->seed, f->shard_i, f->shard_n, f->env.base.kernel,
                           f->kernel_sha, f->env.jobs, f->env.base.pace,
                           f->cases[1], f->phase_s[1], f->cases[0],
                           f->phase_s[0], snap_s, f->pairs, f->pair_s[1],
                           f->pair_s[0], f->unfaithful);
    g_file_set_contents(path, js->str, js->len, NULL);
}

static int minimize_main(RsFuzzEnv *env, const char *path, guint tries)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(GHashTable) origin = NULL;
    g_autofree char *out = NULL, *words = NULL;
    RsScenario sc;
    RsFuzzCase c = { 0 };
    const char *cls;
    int klass;
    guint runs;

    if (!rs_scenario_load(path, &sc, &origin, &err)) {
        g_printerr("ringside fuzz: %s\n", err->message);
        return 2;
    }
    cls = g_hash_table_lookup(origin, "class");
    klass = cls ? rs_class_from_name(cls) : -1;
    if (klass < 0 || klass == RS_CLASS_CLEAN) {
        g_printerr("ringside fuzz: %s: no failure class to keep "
                   "([origin] class)\n", path);
        return 2;
    }
    if (!rs_fuzz_minimize(env, &sc, klass, tries, &runs)) {
        printf("ringside: minimize: %s did not fail (%s) in %u runs: "
               "nothing to shrink (try more --tries)\n", path, cls, runs);
        return 1;
    }
    words = rs_scenario_words(&sc);
    out = g_strdup_printf("%s/minimized.case", env->workdir);
    c.sc = sc;
    c.judged = TRUE;
    c.out.klass = klass;
    if (!rs_fuzz_save_case(env, &c, 0, NULL, out, &err)) {
        g_printerr("ringside fuzz: %s\n", err->message);
        return 2;
    }
    printf("ringside: minimized class=%s runs=%u smp=%u %s case=%s\n",
           rs_class_names[klass], runs, sc.smp, words, out);
    return 0;
}

static gboolean parse_shard(const char *s, guint *i, guint *n)
{
    guint64 a, b;
    char *end;

    a = g_ascii_strtoull(s, &end, 10);
    if (end == s || *end != '/') {
        return FALSE;
    }
    s = end + 1;
    b = g_ascii_strtoull(s, &end, 10);
    if (end == s || *end || b == 0 || b > 65536 || a >= b) {
        return FALSE;
    }
    *i = a;
    *n = b;
    return TRUE;
}

int rs_cmd_fuzz(int argc, char **argv)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GOptionContext) ctx = NULL;
    g_autofree char *kernel = NULL, *initrd = NULL, *qemu = NULL;
    g_autofree char *out = NULL, *shard = NULL, *tests = NULL, *pace = NULL;
    g_autofree char *minimize = NULL, *accel = NULL, *results = NULL;
    gint64 seed = -1, cases = -1;
    int duration = -1, jobs = -1, cold = -1, timeout = 20, tries = 3;
    int memory = 256;
    gboolean wire_events = FALSE;
    Fuzz f = { 0 };
    gint64 t0;
    double snap_s;
    int status = 2;
    const GOptionEntry entries[] = {
        { "kernel", 'k', 0, G_OPTION_ARG_FILENAME, &kernel,
          "Guest bzImage (default: the cached project kernel)", "FILE" },
        { "initrd", 0, 0, G_OPTION_ARG_FILENAME, &initrd,
          "Initramfs (default: the cached project initramfs)", "FILE" },
        { "qemu", 0, 0, G_OPTION_ARG_FILENAME, &qemu,
          "QEMU fork binary (default: the cached build)", "FILE" },
        { "seed", 's', 0, G_OPTION_ARG_INT64, &seed,
          "Seed of the scenarios (default: from the clock, printed)", "N" },
        { "cases", 'n', 0, G_OPTION_ARG_INT64, &cases,
          "Scenarios 0..N-1 of the seed (split between shards)", "N" },
        { "duration", 'd', 0, G_OPTION_ARG_INT, &duration,
          "Seconds to fuzz for (default 60 when --cases is not given)", "S" },
        { "jobs", 'j', 0, G_OPTION_ARG_INT, &jobs,
          "QEMUs at a time (default: the cores)", "N" },
        { "cold", 0, 0, G_OPTION_ARG_INT, &cold,
          "First scenarios also booted cold, to compare rates (default 4 "
          "per job; 0: none)", "N" },
        { "shard", 0, 0, G_OPTION_ARG_STRING, &shard,
          "Run shard I of N (0-based): scenarios I, I+N, I+2N...", "I/N" },
        { "tests", 0, 0, G_OPTION_ARG_STRING, &tests,
          "The module's cases to draw from (default "
          RS_SCENARIO_DEFAULT_TESTS ")", "LIST" },
        { "pace", 0, 0, G_OPTION_ARG_STRING, &pace,
          "off (default): the instant transmitter; line: 115200 baud",
          "off|line" },
        { "accel", 0, 0, G_OPTION_ARG_STRING, &accel,
          "QEMU accelerators (default tcg)", "LIST" },
        { "memory", 'm', 0, G_OPTION_ARG_INT, &memory,
          "Guest RAM in MiB (default 256)", "MIB" },
        { "timeout", 't', 0, G_OPTION_ARG_INT, &timeout,
          "Seconds before a case is hung (default 20)", "S" },
        { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
          "Directory for results.jsonl, cases/ and runs/ (default: a new "
          "directory under /tmp)", "DIR" },
        { "wire-events", 0, 0, G_OPTION_ARG_NONE, &wire_events,
          "Keep the device's event per byte (times and vCPU of every byte, "
          "for the report's timeline; slower)", NULL },
        { "minimize", 0, 0, G_OPTION_ARG_FILENAME, &minimize,
          "Shrink the scenario of this case file while its class holds",
          "CASE" },
        { "tries", 0, 0, G_OPTION_ARG_INT, &tries,
          "--minimize: runs a variant gets to fail (default 3)", "N" },
        { NULL }
    };

    ctx = g_option_context_new("- fuzz the guest's panic paths");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx,
        "Exit status: 0 when the run was made (failing cases are its "
        "output, in DIR/cases), or --minimize shrank the case; 1 when the "
        "case to minimize did not fail in --tries runs; 2 on bad input or "
        "a run that could not be made.");
    if (!rs_parse_options(ctx, &argc, &argv, 0)) {
        return 2;
    }
    f.shard_n = 1;
    if (shard && !parse_shard(shard, &f.shard_i, &f.shard_n)) {
        g_printerr("ringside fuzz: --shard wants I/N with 0 <= I < N\n");
        return 2;
    }
    if (!rs_scenario_tests_parse(tests ? tests : RS_SCENARIO_DEFAULT_TESTS,
                                 &f.tests, &error)) {
        g_printerr("ringside fuzz: --tests: %s\n", error->message);
        return 2;
    }
    if ((cases != -1 && cases < 1) || (duration != -1 && duration < 1) ||
        (jobs != -1 && (jobs < 1 || jobs > 64)) || cold < -1 ||
        timeout < 1 || tries < 1 || memory < 64 || memory > 65536) {
        g_printerr("ringside fuzz: --cases, --duration, --timeout and "
                   "--tries must be at least 1, --jobs 1..64, --cold at "
                   "least 0, --memory 64..65536\n");
        return 2;
    }
    if (pace && strcmp(pace, "off") && strcmp(pace, "line")) {
        g_printerr("ringside fuzz: --pace must be off or line\n");
        return 2;
    }

    rs_guest_config_defaults(&f.env.base);
#define OVERRIDE(field, value) \
    if (value) { g_free(f.env.base.field); \
                 f.env.base.field = g_steal_pointer(&value); }
    OVERRIDE(qemu, qemu);
    OVERRIDE(kernel, kernel);
    OVERRIDE(initrd, initrd);
    OVERRIDE(accel, accel);
#undef OVERRIDE
    g_free(f.env.base.pace);
    f.env.base.pace = g_strdup(pace ? pace : "off");
    f.env.base.timeout_s = timeout;
    f.env.base.memory_mib = memory;
    f.env.no_ram_file = TRUE;
    f.env.no_tx_events = !wire_events;
    f.env.jobs = jobs > 0 ? (guint)jobs : MAX(1u, g_get_num_processors());
    if (!rs_fuzz_env_check(&f.env, &error)) {
        g_printerr("ringside fuzz: %s\n", error->message);
        goto out;
    }
    f.env.workdir = out ? g_steal_pointer(&out) :
                    g_dir_make_tmp("ringside-fuzz-XXXXXX", &error);
    if (!f.env.workdir || g_mkdir_with_parents(f.env.workdir, 0755) < 0) {
        g_printerr("ringside fuzz: cannot create the output directory: %s\n",
                   error ? error->message : g_strerror(errno));
        goto out;
    }
    if (minimize) {
        status = minimize_main(&f.env, minimize, tries);
        goto out;
    }

    f.seed = seed >= 0 ? (guint64)seed : (guint64)g_get_real_time() / 1000;
    f.max_cases = cases > 0 ? cases : 0;
    f.tty = isatty(STDERR_FILENO);
    f.kernel_sha = rs_file_sha256(f.env.base.kernel);
    f.cold_wall = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                        g_free);
    results = g_build_filename(f.env.workdir, "results.jsonl", NULL);
    f.results = fopen(results, "a");
    if (!f.results) {
        g_printerr("ringside fuzz: %s: %s\n", results, g_strerror(errno));
        goto out;
    }
    printf("ringside fuzz: seed %" G_GUINT64_FORMAT ", shard %u/%u, %u jobs, "
           "kernel %s, out %s\n", f.seed, f.shard_i, f.shard_n, f.env.jobs,
           f.env.base.kernel, f.env.workdir);
    fflush(stdout);

    /* The cold rate, on the scenarios the snapshot phase starts with. */
    if (cold == -1) {
        cold = 4 * f.env.jobs;
    }
    if (cold > 0) {
        run_phase(&f, TRUE, cold);
    }
    t0 = g_get_monotonic_time();
    if (!rs_fuzz_snapshots(&f.env, RS_FUZZ_ALL_SMPS, &error)) {
        g_printerr("ringside fuzz: %s\n", error->message);
        goto out;
    }
    snap_s = (g_get_monotonic_time() - t0) / 1e6;
    if (!f.max_cases) {
        f.deadline = g_get_monotonic_time() +
                     (duration > 0 ? duration : 60) * G_USEC_PER_SEC;
    } else if (duration > 0) {
        f.deadline = g_get_monotonic_time() + duration * G_USEC_PER_SEC;
    }
    run_phase(&f, FALSE, G_MAXUINT64);
    print_summary(&f, snap_s, cold);
    status = 0;
out:
    if (f.results) {
        fclose(f.results);
    }
    g_strfreev(f.tests);
    g_clear_pointer(&f.cold_wall, g_hash_table_unref);
    g_free(f.kernel_sha);
    rs_fuzz_env_clear(&f.env);
    return status;
}
