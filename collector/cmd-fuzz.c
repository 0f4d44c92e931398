/*
 * ringside fuzz: panic scenarios drawn from a seed, each run from a
 * snapshot of the booted guest (a few also booted cold, to measure what
 * the snapshot buys), judged by ringside-serial, classified; failing ones
 * saved as case files.  --minimize shrinks one.  A run stopped at any
 * point goes on where it stopped when run again with the same --out.
 */
#include "commands.h"
#include "errors.h"
#include "fuzz/campaign.h"
#include "fuzz/minimize.h"
#include "guest/guestopts.h"

#include <glib-unix.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <signal.h>
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
    guint64 cases[2];       /* timed: this run's, in each phase */
    double phase_s[2];
    RsCampaign camp;        /* results.jsonl, and the cases done */
    gboolean resumed;
    guint64 todo;           /* this phase's cases left when it began */
    guint64 interrupted;    /* cases that ran to no outcome */
    gboolean halt;          /* start no more: one could not start */
    /* What earlier runs of this campaign timed (their fuzz.json). */
    guint64 base_cases[2];
    double base_s[2], base_save_s, save_s;
    guint64 runs;
    guint cold_n;           /* --cold */
    gint64 recorded_cold;   /* the --cold earlier runs had, or -1 */
    gboolean tty;
    gint64 last_progress;
    gboolean resident;      /* --mode resident (the default) */
    gboolean keep_runs;     /* --keep-runs */
    GArray *ovh;            /* Overhead: this run's resident cases */
} Fuzz;

/* Where a resident case's wall time went, in ms (see RsFuzzCase). */
typedef struct {
    double total, reset, ram, feed, collect, judge, guest;
} Overhead;

static Fuzz *fuzz_running;      /* for the signal handlers */

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

    do {
        if (f->halt || f->next_k >= f->limit_k ||
            (f->deadline && g_get_monotonic_time() >= f->deadline)) {
            return NULL;
        }
        index = case_index(f, f->next_k++);
        if (f->max_cases && index >= f->max_cases) {
            return NULL;
        }
    } while (rs_campaign_is_done(&f->camp, f->cold, index));
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
    guint64 failing = 0;
    int k;

    /* Earlier runs' too when resumed: they are in the classes, not done. */
    for (k = 0; k < RS_N_CLASSES; k++) {
        failing += k != RS_CLASS_CLEAN ? f->classes[f->cold][k] : 0;
    }
    g_autofree char *eta = NULL;

    if (!force && now - f->last_progress < (f->tty ? 500000 : 10000000)) {
        return;
    }
    f->last_progress = now;
    if (f->deadline) {
        eta = g_strdup_printf("%.0fs", MAX(0, (f->deadline - now) / 1e6));
    } else if ((f->max_cases || f->cold) && rate > 0) {
        eta = g_strdup_printf("%.0fs", f->todo > f->done ?
                              (f->todo - f->done) * 60.0 / rate : 0);
    } else {
        eta = g_strdup("-");
    }
    fprintf(stderr, "%sfuzz %s: %" G_GUINT64_FORMAT " cases, %"
            G_GUINT64_FORMAT " failing, %.0f/min, ETA %s%s",
            f->tty ? "\r\033[K" : "", f->cold ? "cold" : "snapshot",
            f->done, failing, rate, eta, f->tty ? "" : "\n");
}

/* A case in the run's tallies, whether run now or by an earlier run. */
static void count_case(Fuzz *f, guint64 index, gboolean cold, RsClass k,
                       gboolean faithful, double wall_s)
{
    f->classes[cold][k]++;
    if (k != RS_CLASS_ERROR && !cold && !faithful) {
        f->unfaithful++;
    }
    /* The same scenarios both ways, hung ones left out: the fair ratio. */
    if (k != RS_CLASS_HUNG && k != RS_CLASS_ERROR) {
        double *cw;

        if (cold) {
            g_hash_table_insert(f->cold_wall, g_memdup2(&index,
                                                        sizeof(index)),
                                g_memdup2(&wall_s, sizeof(wall_s)));
        } else if ((cw = g_hash_table_lookup(f->cold_wall, &index))) {
            f->pair_s[1] += *cw;
            f->pair_s[0] += wall_s;
            f->pairs++;
        }
    }
}

/* Time in each phase so far, this run's and earlier runs' together. */
static double phase_time(const Fuzz *f, gboolean cold)
{
    double s = f->base_s[cold] + f->phase_s[cold];

    if (f->phase_t0 && f->cold == cold) {
        s += (g_get_monotonic_time() - f->phase_t0) / 1e6;
    }
    return s;
}

/* Every scenario of this shard below --cases has its line. */
static gboolean campaign_complete(const Fuzz *f)
{
    guint64 k, index;

    if (!f->max_cases) {
        return FALSE;
    }
    for (k = 0; (index = case_index(f, k)) < f->max_cases; k++) {
        if (!rs_campaign_is_done(&f->camp, FALSE, index) ||
            (k < f->cold_n && !rs_campaign_is_done(&f->camp, TRUE, index))) {
            return FALSE;
        }
    }
    return TRUE;
}

/*
 * fuzz.json, replaced whole after every case: what the campaign is and
 * what all its runs timed, so that a resumed run adds to it.
 */
static void write_state(Fuzz *f)
{
    g_autofree char *path = g_build_filename(f->env.workdir, "fuzz.json",
                                             NULL);
    g_autofree char *tests = g_strjoinv(",", f->tests);
    g_autoptr(GString) js = g_string_new(NULL);

    g_string_append_printf(js, "{\"seed\":%" G_GUINT64_FORMAT ",\"shard\":"
                           "\"%u/%u\",\"kernel\":\"%s\",\"kernel_sha256\":"
                           "\"%s\",\"mode\":\"%s\",\"jobs\":%u,"
                           "\"pace\":\"%s\","
                           "\"memory\":%d,\"tests\":\"%s\",\"wire_events\":"
                           "%s,\"cases\":%" G_GUINT64_FORMAT ",\"cold\":%u,"
                           "\"complete\":%s,\"runs\":%" G_GUINT64_FORMAT ","
                           "\"cold_cases\":%" G_GUINT64_FORMAT
                           ",\"cold_s\":%.3f,"
                           "\"snapshot_cases\":%" G_GUINT64_FORMAT
                           ",\"snapshot_s\":%.3f,\"snapshot_save_s\":%.3f,"
                           "\"pairs\":%" G_GUINT64_FORMAT ",\"pair_cold_s\":%.3f,"
                           "\"pair_snapshot_s\":%.3f,\"unfaithful\":%"
                           G_GUINT64_FORMAT "}\n",
                           f->seed, f->shard_i, f->shard_n, f->env.base.kernel,
                           f->kernel_sha,
                           f->resident ? "resident" : "process",
                           f->env.jobs, f->env.base.pace,
                           f->env.base.memory_mib, tests,
                           f->env.no_tx_events ? "false" : "true",
                           f->max_cases, f->cold_n,
                           campaign_complete(f) ? "true" : "false", f->runs,
                           f->base_cases[1] + f->cases[1], phase_time(f, TRUE),
                           f->base_cases[0] + f->cases[0],
                           phase_time(f, FALSE), f->base_save_s + f->save_s,
                           f->pairs, f->pair_s[1], f->pair_s[0],
                           f->unfaithful);
    g_file_set_contents(path, js->str, js->len, NULL);
}

static void case_done(RsFuzzCase *c, gpointer opaque)
{
    Fuzz *f = opaque;
    g_autoptr(GString) line = g_string_new(NULL);
    g_autofree char *words = rs_scenario_words(&c->sc);
    g_autofree char *case_file = NULL;
    g_autoptr(GError) err = NULL;
    RsClass k = c->judged ? c->out.klass : RS_CLASS_ERROR;

    if (c->interrupted) {
        /* No outcome: left for a resumed run, as if never started. */
        rs_campaign_clear_case(&f->camp, c->cold, c->index);
        f->interrupted++;
        if (c->error && !f->halt) {
            /* The next would not start either: stop here. */
            fprintf(stderr, "%sringside fuzz: case %" G_GUINT64_FORMAT
                    " could not start, stopping: %s\n", f->tty ? "\n" : "",
                    c->index, c->error);
            f->halt = TRUE;
        }
        rs_fuzz_case_free(c);
        return;
    }
    f->done++;
    count_case(f, c->index, c->cold, k, c->judged && c->out.faithful,
               c->wall_s);
    f->cases[c->cold]++;
    if (k != RS_CLASS_CLEAN && !c->cold) {
        case_file = g_strdup_printf("%s/cases/%s-%" G_GUINT64_FORMAT ".case",
                                    f->env.workdir, rs_class_names[k],
                                    c->index);
        if (!rs_fuzz_save_case(&f->env, c, f->seed, f->kernel_sha,
                               case_file, &err)) {
            fprintf(stderr, "\nringside fuzz: %s\n", err->message);
            g_clear_error(&err);
        }
    } else if (c->index != 0 && !f->keep_runs) {
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
    g_string_append_printf(line, "\"end_unix_ms\":%" G_GINT64_FORMAT ",",
                           c->end_us / 1000);
    if (c->resident) {
        Overhead o = {
            .total = (c->wall_s - c->guest_s) * 1e3,
            .reset = c->reset_s * 1e3, .ram = c->ram_s * 1e3,
            .feed = c->feed_s * 1e3,
            .collect = c->collect_s * 1e3, .judge = c->judge_s * 1e3,
            .guest = c->guest_s * 1e3,
        };

        g_array_append_val(f->ovh, o);
        g_string_append_printf(line, "\"restore\":\"resident\","
                               "\"qemu\":\"resident/j%u-smp%u\","
                               "\"guest_s\":%.4f,\"overhead_ms\":{"
                               "\"total\":%.2f,\"reset\":%.2f,\"ram\":%.2f,"
                               "\"feed\":%.2f,\"collect\":%.2f,"
                               "\"judge\":%.2f},\"ram_pages\":%"
                               G_GUINT64_FORMAT ",\"stray_bytes\":%"
                               G_GUINT64_FORMAT ",\"skipped_events\":%u,",
                               c->job, c->sc.smp, c->guest_s, o.total,
                               o.reset, o.ram, o.feed,
                               o.collect, o.judge, c->ram_pages,
                               c->stray_bytes, c->skipped_events);
    }
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
    /* The line last: a case with its line is complete, files and all. */
    if (!rs_campaign_append(&f->camp, c->cold, c->index, line->str,
                            line->len, &err)) {
        fprintf(stderr, "\nringside fuzz: %s\n", err->message);
    }
    write_state(f);
    rs_fuzz_case_free(c);
    progress(f, FALSE);
}

static gboolean progress_tick(gpointer opaque)
{
    Fuzz *f = opaque;

    g_mutex_lock(&f->env.lock); /* resident workers change the counts */
    progress(f, FALSE);
    g_mutex_unlock(&f->env.lock);
    return G_SOURCE_CONTINUE;
}

static void run_phase(Fuzz *f, gboolean cold, guint64 limit_k)
{
    guint tick;

    guint64 k, index;

    f->cold = cold;
    f->next_k = 0;
    f->limit_k = limit_k;
    f->started = f->done = 0;
    f->todo = 0;
    for (k = 0; (cold || f->max_cases) && k < limit_k &&
                (index = case_index(f, k)) <
                (f->max_cases ? f->max_cases : G_MAXUINT64); k++) {
        f->todo += !rs_campaign_is_done(&f->camp, cold, index);
    }
    if (!f->todo && (cold || f->max_cases)) {
        return;                 /* all recorded by earlier runs */
    }
    f->phase_t0 = g_get_monotonic_time();
    tick = g_timeout_add(500, progress_tick, f);
    f->env.resident = f->resident && !cold;
    rs_fuzz_run(&f->env, next_case, case_done, f);
    f->env.resident = FALSE;
    g_source_remove(tick);
    progress(f, TRUE);
    f->phase_s[cold] += (g_get_monotonic_time() - f->phase_t0) / 1e6;
    f->phase_t0 = 0;
    write_state(f);
    fprintf(stderr, "\n");
}

static int cmp_double(gconstpointer a, gconstpointer b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* The @q quantile (0..1) of member @off of the Overhead array. */
static double quantile(GArray *ovh, gsize off, double q)
{
    g_autoptr(GArray) v = g_array_sized_new(FALSE, FALSE, sizeof(double),
                                            ovh->len);
    guint i;

    for (i = 0; i < ovh->len; i++) {
        double x = *(double *)((char *)&g_array_index(ovh, Overhead, i) +
                               off);

        g_array_append_val(v, x);
    }
    g_array_sort(v, cmp_double);
    return v->len ? g_array_index(v, double, (guint)(q * (v->len - 1) +
                                                     0.5)) : 0;
}

#define Q(field, q) quantile(f->ovh, G_STRUCT_OFFSET(Overhead, field), q)

/*
 * The resident mode's targets side by side: the cold-boot rate, the
 * resident rate and their ratio (5x), the median harness overhead a case
 * (50 ms), and where that overhead goes.
 */
static void print_targets(Fuzz *f, double cold_rate, double rate)
{
    double med = Q(total, 0.5);

    printf("targets: cold boots %.1f cases/min | resident %.1f cases/min | "
           "%s%.1fx%s (target 5x: %s) | median overhead %.1f ms a case "
           "(target 50 ms: %s)\n", cold_rate, rate, cold_rate > 0 ? "" : "(",
           cold_rate > 0 ? rate / cold_rate : 0, cold_rate > 0 ? "" :
           " no cold cases)", cold_rate <= 0 ? "-" :
           rate >= 5 * cold_rate ? "met" : "missed", med,
           med <= 50 ? "met" : "missed");
    printf("per-case overhead, median (p90) ms over %u cases: reset %.1f "
           "(%.1f; of which the RAM %.1f), feed+cont %.1f (%.1f), collect %.1f (%.1f), judge %.1f "
           "(%.1f), total %.1f (%.1f); the case's own guest time %.0f "
           "(%.0f) ms\n", f->ovh->len, Q(reset, 0.5), Q(reset, 0.9), Q(ram, 0.5),
           Q(feed, 0.5), Q(feed, 0.9), Q(collect, 0.5), Q(collect, 0.9),
           Q(judge, 0.5), Q(judge, 0.9), med, Q(total, 0.9), Q(guest, 0.5),
           Q(guest, 0.9));
}

static void print_summary(Fuzz *f)
{
    double cold_s = phase_time(f, TRUE), snap_s = phase_time(f, FALSE);
    guint64 cold_n = f->base_cases[1] + f->cases[1];
    guint64 snap_n = f->base_cases[0] + f->cases[0];
    double cold_rate = cold_s > 0 ? cold_n * 60 / cold_s : 0;
    double snap_rate = snap_s > 0 ? snap_n * 60 / snap_s : 0;
    guint64 total = 0;
    int k;

    printf("%-22s %10s %10s\n", "class", "snapshot", "cold");
    for (k = 0; k < RS_N_CLASSES; k++) {
        printf("%-22s %10" G_GUINT64_FORMAT " %10" G_GUINT64_FORMAT "\n",
               rs_class_names[k], f->classes[0][k], f->classes[1][k]);
        total += f->classes[0][k];
    }
    if (f->runs > 1) {
        printf("resumed: %u cases from %" G_GUINT64_FORMAT " earlier "
               "run%s; the figures below are for all %" G_GUINT64_FORMAT
               " runs\n",
               f->camp.earlier->len, f->runs - 1, f->runs > 2 ? "s" : "",
               f->runs);
    }
    if (cold_n) {
        printf("cold boots:     %" G_GUINT64_FORMAT " cases in %.1f s, "
               "%.1f cases/min\n", cold_n, cold_s, cold_rate);
    }
    printf("from snapshots: %" G_GUINT64_FORMAT " cases in %.1f s, "
           "%.1f cases/min", snap_n, snap_s, snap_rate);
    if (cold_rate > 0) {
        printf(" (%.1fx the cold rate)", snap_rate / cold_rate);
    }
    printf("; saving the snapshots took %.1f s\n",
           f->base_save_s + f->save_s);
    if (f->resident && f->env.resident_qemus) {
        printf("resident: %u QEMUs (one per job and vCPU count) started "
               "from them and saved for loadvm in %.1f s, inside the time "
               "above\n", f->env.resident_qemus, f->env.resident_setup_s);
    }
    if (f->pairs && f->pair_s[0] > 0) {
        printf("the same %" G_GUINT64_FORMAT " scenarios both ways: %.2f s "
               "a case booted cold, %.2f s from a snapshot (%.1fx)\n",
               f->pairs, f->pair_s[1] / f->pairs, f->pair_s[0] / f->pairs,
               f->pair_s[1] / f->pair_s[0]);
    }
    if (f->resident && f->ovh->len) {
        print_targets(f, cold_n ? cold_rate : 0, snap_rate);
    }
    if (f->interrupted) {
        printf("interrupted: %" G_GUINT64_FORMAT " case%s that did not "
               "start or whose QEMU was killed from outside, not recorded: "
               "the same command runs them\n", f->interrupted,
               f->interrupted == 1 ? "" : "s");
    }
    printf("ringside: fuzz seed=%" G_GUINT64_FORMAT " shard=%u/%u kernel=%s "
           "cases=%" G_GUINT64_FORMAT " failing=%" G_GUINT64_FORMAT
           " unfaithful=%" G_GUINT64_FORMAT " complete=%s out=%s\n", f->seed,
           f->shard_i, f->shard_n, f->env.base.kernel, total,
           total - f->classes[0][RS_CLASS_CLEAN], f->unfaithful,
           f->max_cases ? (campaign_complete(f) ? "yes" : "no") : "-",
           f->env.workdir);
}

/*
 * Stopped by a signal (a scheduler's SIGTERM, ^C): every case that ended
 * has its line; say how to go on.  The QEMUs die with us.
 */
static gboolean on_stop_signal(gpointer sig)
{
    Fuzz *f = fuzz_running;

    g_mutex_lock(&f->env.lock); /* no resident worker mid-case-line */
    write_state(f);
    fprintf(stderr, "%sringside fuzz: stopped by %s: %u cases recorded in "
            "%s; the same command goes on where it stopped\n",
            f->tty ? "\n" : "", g_strsignal(GPOINTER_TO_INT(sig)),
            g_hash_table_size(f->camp.done[0]) +
            g_hash_table_size(f->camp.done[1]), f->env.workdir);
    fflush(stdout);
    fflush(stderr);
    _exit(128 + GPOINTER_TO_INT(sig));
    return G_SOURCE_REMOVE;
}

/* The figures earlier runs left in fuzz.json; refuse a changed set-up. */
static gboolean load_earlier(Fuzz *f, GError **error)
{
    g_autofree char *path = g_build_filename(f->env.workdir, "fuzz.json",
                                             NULL);
    g_autoptr(JsonParser) p = json_parser_new_immutable();
    g_autofree char *text = NULL;
    JsonObject *o;
    JsonNode *root;
    const char *pace;
    gint64 memory;
    gboolean wire;
    guint i;

    for (i = 0; i < f->camp.earlier->len; i++) {
        const RsCampaignCase *k = &g_array_index(f->camp.earlier,
                                                 RsCampaignCase, i);

        count_case(f, k->index, k->cold, k->klass, !k->judged || k->faithful,
                   k->wall_s);
    }
    if (!g_file_get_contents(path, &text, NULL, NULL)) {
        f->runs = f->camp.earlier->len > 0;
        return TRUE;
    }
    if (!json_parser_load_from_data(p, text, -1, NULL) ||
        !(root = json_parser_get_root(p)) || !JSON_NODE_HOLDS_OBJECT(root)) {
        return TRUE;    /* replaced whole: damaged only by hand */
    }
    o = json_node_get_object(root);
    pace = json_object_get_string_member_with_default(o, "pace", NULL);
    memory = json_object_get_int_member_with_default(o, "memory", 0);
    wire = json_object_get_boolean_member_with_default(o, "wire_events",
                                                       f->env.no_tx_events ?
                                                       FALSE : TRUE);
    if (f->camp.earlier->len &&
        ((pace && strcmp(pace, f->env.base.pace)) ||
         (memory && memory != f->env.base.memory_mib) ||
         wire != !f->env.no_tx_events)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s was run with --pace %s --memory %" G_GINT64_FORMAT
                    "%s: resume it with the same, or use another --out",
                    f->env.workdir, pace ? pace : "?", memory,
                    wire ? " --wire-events" : "");
        return FALSE;
    }
    f->runs = json_object_get_int_member_with_default(o, "runs", 1);
    f->recorded_cold = json_object_get_int_member_with_default(o, "cold",
                                                               -1);
    f->base_cases[1] = json_object_get_int_member_with_default(o,
                                                               "cold_cases",
                                                               0);
    f->base_cases[0] = json_object_get_int_member_with_default(o,
        "snapshot_cases", 0);
    f->base_s[1] = json_object_get_double_member_with_default(o, "cold_s", 0);
    f->base_s[0] = json_object_get_double_member_with_default(o,
                                                              "snapshot_s", 0);
    f->base_save_s = MAX(0, json_object_get_double_member_with_default(o,
        "snapshot_save_s", 0));
    return TRUE;
}

/* The vCPU counts of the scenarios left, when they are known. */
static guint smps_needed(const Fuzz *f)
{
    guint smps = 0;
    guint64 k, index;

    if (!f->max_cases) {
        return RS_FUZZ_ALL_SMPS;
    }
    for (k = 0; (index = case_index(f, k)) < f->max_cases &&
                smps != RS_FUZZ_ALL_SMPS; k++) {
        RsScenario sc;

        if (!rs_campaign_is_done(&f->camp, FALSE, index)) {
            rs_scenario_generate(f->seed, index,
                                 (const char *const *)f->tests, &sc);
            smps |= 1u << sc.smp;
        }
    }
    return smps;
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

/*
 * The campaign in f->env.workdir, opened (or resumed: its seed unless
 * @seed is given, its cases recorded), and said; *@cold the cold cases
 * to run, its default settled.
 */
static gboolean open_campaign(Fuzz *f, gint64 seed, gint64 cases, int *cold,
                              GError **error)
{
    RsCampaignId id = { 0 };

    /* A directory that holds a campaign already: its seed, unless given. */
    if (seed < 0 && rs_campaign_recorded_seed(f->env.workdir, &f->seed)) {
        seed = f->seed;
    }
    f->seed = seed >= 0 ? (guint64)seed : (guint64)g_get_real_time() / 1000;
    f->max_cases = cases > 0 ? cases : 0;
    f->tty = isatty(STDERR_FILENO);
    f->kernel_sha = rs_file_sha256(f->env.base.kernel);
    f->cold_wall = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                         g_free);
    f->recorded_cold = -1;
    id.seed = f->seed;
    id.shard_i = f->shard_i;
    id.shard_n = f->shard_n;
    id.kernel_sha = f->kernel_sha;
    id.tests = (const char *const *)f->tests;
    if (!rs_campaign_open(&f->camp, f->env.workdir, &id, error) ||
        !load_earlier(f, error)) {
        return FALSE;
    }
    f->runs++;
    /* The cold rate, on the scenarios the snapshot phase starts with. */
    if (*cold == -1) {
        *cold = f->recorded_cold >= 0 ? f->recorded_cold : 4 * f->env.jobs;
    }
    f->cold_n = *cold;
    printf("ringside fuzz: seed %" G_GUINT64_FORMAT ", shard %u/%u, %u jobs, "
           "kernel %s, out %s\n", f->seed, f->shard_i, f->shard_n, f->env.jobs,
           f->env.base.kernel, f->env.workdir);
    if (f->camp.earlier->len || f->camp.torn_bytes) {
        printf("ringside fuzz: resuming: %u cases recorded (%u cold), %u "
               "left unfinished to run again, %" G_GUINT64_FORMAT " bytes "
               "of a torn last line dropped\n", f->camp.earlier->len,
               g_hash_table_size(f->camp.done[1]), f->camp.unfinished,
               f->camp.torn_bytes);
    }
    fflush(stdout);
    return TRUE;
}

/* The cold phase, then the snapshot phase, stoppable by a signal. */
static gboolean run_campaign(Fuzz *f, int cold, int duration, GError **error)
{
    gint64 t0;
    guint smps;

    fuzz_running = f;
    g_unix_signal_add(SIGTERM, on_stop_signal, GINT_TO_POINTER(SIGTERM));
    g_unix_signal_add(SIGINT, on_stop_signal, GINT_TO_POINTER(SIGINT));
    g_unix_signal_add(SIGHUP, on_stop_signal, GINT_TO_POINTER(SIGHUP));
    write_state(f);

    if (cold > 0) {
        run_phase(f, TRUE, cold);
    }
    smps = smps_needed(f);
    if (smps) {
        t0 = g_get_monotonic_time();
        /* Resident QEMUs start from these (with the feed's UART). */
        f->env.resident = f->resident;
        if (!rs_fuzz_snapshots(&f->env, smps, error)) {
            return FALSE;
        }
        f->save_s = (g_get_monotonic_time() - t0) / 1e6;
        if (!f->max_cases) {
            f->deadline = g_get_monotonic_time() +
                          (duration > 0 ? duration : 60) * G_USEC_PER_SEC;
        } else if (duration > 0) {
            f->deadline = g_get_monotonic_time() + duration * G_USEC_PER_SEC;
        }
        run_phase(f, FALSE, G_MAXUINT64);
    }
    return TRUE;
}

int rs_cmd_fuzz(int argc, char **argv)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GOptionContext) ctx = NULL;
    g_auto(RsGuestGiven) given = { 0 };
    g_autofree char *out = NULL, *shard = NULL, *tests = NULL;
    g_autofree char *minimize = NULL;
    gint64 seed = -1, cases = -1;
    int duration = -1, jobs = -1, cold = -1, timeout = 20, tries = 3;
    int memory = 256;
    gboolean wire_events = FALSE;
    g_autofree char *mode = NULL;
    Fuzz f = { 0 };
    int status = 2;
    const GOptionEntry entries[] = {
        { "kernel", 'k', 0, G_OPTION_ARG_FILENAME, &given.kernel,
          "Guest bzImage (default: the cached project kernel)", "FILE" },
        { "initrd", 0, 0, G_OPTION_ARG_FILENAME, &given.initrd,
          "Initramfs (default: the cached project initramfs)", "FILE" },
        { "qemu", 0, 0, G_OPTION_ARG_FILENAME, &given.qemu,
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
        { "pace", 0, 0, G_OPTION_ARG_STRING, &given.pace,
          "off (default): the instant transmitter; line: 115200 baud",
          "off|line" },
        { "accel", 0, 0, G_OPTION_ARG_STRING, &given.accel,
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
        { "mode", 0, 0, G_OPTION_ARG_STRING, &mode,
          "resident (default): one QEMU per job and vCPU count runs case "
          "after case, reset by loadvm; process: a new QEMU per case, "
          "restoring a saved migration stream", "resident|process" },
        { "keep-runs", 0, 0, G_OPTION_ARG_NONE, &f.keep_runs,
          "Keep every case's run directory (default: the failing ones and "
          "case 0's)", NULL },
        { "minimize", 0, 0, G_OPTION_ARG_FILENAME, &minimize,
          "Shrink the scenario of this case file while its class holds",
          "CASE" },
        { "tries", 0, 0, G_OPTION_ARG_INT, &tries,
          "--minimize: runs a variant gets to fail (default 3)", "N" },
        { NULL }
    };

    rs_fuzz_env_init(&f.env);
    ctx = g_option_context_new("- fuzz the guest's panic paths");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx,
        "A run stopped at any point (killed, or by SIGTERM, SIGINT or "
        "SIGHUP) goes on where it stopped when run again with the same "
        "--out: the cases recorded are not run again, the ones in flight "
        "are (--seed may then be left out).\n\n"
        "Exit status: 0 when the run was made (failing cases are its "
        "output, in DIR/cases), or --minimize shrank the case; 1 when the "
        "case to minimize did not fail in --tries runs; 2 on bad input or "
        "a run that could not be made; 3 when cases did not start or were "
        "cut short by their QEMU being killed from outside (run again to "
        "finish them); "
        "128+N when stopped by signal N.");
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
    if ((cases != -1 && !rs_opt_range("--cases", cases, 1, 0, &error)) ||
        (duration != -1 &&
         !rs_opt_range("--duration", duration, 1, 0, &error)) ||
        (jobs != -1 && !rs_opt_range("--jobs", jobs, 1, 64, &error)) ||
        (cold != -1 && !rs_opt_range("--cold", cold, 0, -1, &error)) ||
        !rs_opt_range("--timeout", timeout, 1, 0, &error) ||
        !rs_opt_range("--tries", tries, 1, 0, &error) ||
        !rs_opt_range("--memory", memory, RS_MEMORY_MIN, RS_MEMORY_MAX,
                      &error) ||
        !rs_opt_pace(given.pace, &error)) {
        g_printerr("ringside fuzz: %s\n", error->message);
        return 2;
    }
    if (mode && strcmp(mode, "resident") && strcmp(mode, "process")) {
        g_printerr("ringside fuzz: --mode must be resident or process\n");
        return 2;
    }
    f.resident = !mode || !strcmp(mode, "resident");
    f.ovh = g_array_new(FALSE, FALSE, sizeof(Overhead));

    rs_guest_config_defaults(&f.env.base);
    if (!given.pace) {
        given.pace = g_strdup("off");
    }
    rs_guest_given_apply(&given, &f.env.base);
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

    if (!open_campaign(&f, seed, cases, &cold, &error)) {
        g_printerr("ringside fuzz: %s\n", error->message);
        goto out;
    }
    fflush(stdout);
    if (!run_campaign(&f, cold, duration, &error)) {
        g_printerr("ringside fuzz: %s\n", error->message);
        goto out;
    }
    print_summary(&f);
    /* Cases whose QEMU something else killed are not done: say so. */
    status = f.interrupted ? 3 : 0;
out:
    fuzz_running = NULL;
    rs_campaign_close(&f.camp);
    g_strfreev(f.tests);
    g_clear_pointer(&f.cold_wall, g_hash_table_unref);
    g_clear_pointer(&f.ovh, g_array_unref);
    g_free(f.kernel_sha);
    rs_fuzz_env_clear(&f.env);
    return status;
}
