/*
 * ringside fuzz output directories read back and merged: results.jsonl
 * (deduplicated), fuzz.json, and the plain-text table of the cases.
 */
#include "report/fuzzresults.h"
#include "errors.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>

static void dir_free(gpointer p)
{
    RsResultDir *d = p;

    g_free(d->path);
    g_free(d->real);
    g_free(d->shard);
    g_free(d->kernel);
    g_free(d->kernel_sha);
    g_free(d->pace);
    g_clear_pointer(&d->ends[0], g_array_unref);
    g_clear_pointer(&d->ends[1], g_array_unref);
    g_clear_pointer(&d->overhead, g_array_unref);
    g_free(d);
}

/* When the case ended and, if resident, its overhead breakdown. */
static void add_timing(RsResultDir *d, JsonObject *o, gboolean cold)
{
    JsonNode *n = json_object_get_member(o, "end_unix_ms");
    JsonObject *ov;
    RsResultOverhead v = { 0 };

    if (n && JSON_NODE_HOLDS_VALUE(n)) {
        gint64 t = json_node_get_int(n);

        if (!d->ends[cold]) {
            d->ends[cold] = g_array_new(FALSE, FALSE, sizeof(gint64));
        }
        g_array_append_val(d->ends[cold], t);
    }
    n = json_object_get_member(o, "overhead_ms");
    if (cold || !n || !JSON_NODE_HOLDS_OBJECT(n)) {
        return;
    }
    ov = json_node_get_object(n);
    v.total = json_object_get_double_member_with_default(ov, "total", 0);
    v.reset = json_object_get_double_member_with_default(ov, "reset", 0);
    v.ram = json_object_get_double_member_with_default(ov, "ram", 0);
    v.feed = json_object_get_double_member_with_default(ov, "feed", 0);
    v.collect = json_object_get_double_member_with_default(ov, "collect", 0);
    v.judge = json_object_get_double_member_with_default(ov, "judge", 0);
    v.guest = json_object_get_double_member_with_default(o, "guest_s", 0) *
              1e3;
    if (!d->overhead) {
        d->overhead = g_array_new(FALSE, FALSE, sizeof(RsResultOverhead));
    }
    g_array_append_val(d->overhead, v);
}

static void kernel_free(gpointer p)
{
    RsResultKernel *k = p;

    g_free(k->sha);
    g_free(k->path);
    g_free(k->osrelease);
    g_free(k);
}

static void case_free(gpointer p)
{
    RsResultCase *c = p;

    g_free(c->test);
    g_free(c->words);
    g_free(c->error);
    g_free(c->case_file);
    g_free(c->run_dir);
    g_free(c->ended);
    g_free(c);
}

RsFuzzResults *rs_fuzz_results_new(void)
{
    RsFuzzResults *r = g_new0(RsFuzzResults, 1);

    r->dirs = g_ptr_array_new_with_free_func(dir_free);
    r->kernels = g_ptr_array_new_with_free_func(kernel_free);
    r->cases = g_ptr_array_new_with_free_func(case_free);
    r->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return r;
}

void rs_fuzz_results_free(RsFuzzResults *r)
{
    if (r) {
        g_ptr_array_unref(r->dirs);
        g_ptr_array_unref(r->kernels);
        g_ptr_array_unref(r->cases);
        g_hash_table_unref(r->seen);
        g_free(r);
    }
}

/* Reading the directories */

static gboolean need_int(JsonObject *o, const char *name, gint64 min,
                         gint64 *out, GError **error)
{
    JsonNode *n = json_object_get_member(o, name);

    if (!n || !JSON_NODE_HOLDS_VALUE(n) ||
        json_node_get_value_type(n) != G_TYPE_INT64 ||
        json_node_get_int(n) < min) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "\"%s\" missing or not an integer >= %" G_GINT64_FORMAT,
                    name, min);
        return FALSE;
    }
    *out = json_node_get_int(n);
    return TRUE;
}

static const char *opt_str(JsonObject *o, const char *name)
{
    JsonNode *n = json_object_get_member(o, name);

    if (!n || !JSON_NODE_HOLDS_VALUE(n) ||
        json_node_get_value_type(n) != G_TYPE_STRING) {
        return NULL;
    }
    return json_node_get_string(n);
}

static gboolean need_str(JsonObject *o, const char *name, const char **out,
                         GError **error)
{
    *out = opt_str(o, name);
    if (!*out) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "\"%s\" missing or not a string", name);
        return FALSE;
    }
    return TRUE;
}

/* An integer, or @dflt when absent or not an integer. */
static gint64 opt_int(JsonObject *o, const char *name, gint64 dflt)
{
    JsonNode *n = json_object_get_member(o, name);

    if (!n || !JSON_NODE_HOLDS_VALUE(n) ||
        json_node_get_value_type(n) != G_TYPE_INT64) {
        return dflt;
    }
    return json_node_get_int(n);
}

/* A number (integer or not), or @dflt when absent or not a number. */
static double opt_num(JsonObject *o, const char *name, double dflt)
{
    JsonNode *n = json_object_get_member(o, name);

    if (!n || !JSON_NODE_HOLDS_VALUE(n)) {
        return dflt;
    }
    switch (json_node_get_value_type(n)) {
    case G_TYPE_INT64:
        return json_node_get_int(n);
    case G_TYPE_DOUBLE:
        return json_node_get_double(n);
    default:
        return dflt;
    }
}

static guint find_kernel(RsFuzzResults *r, const char *sha, const char *path)
{
    RsResultKernel *k;
    guint i;

    for (i = 0; i < r->kernels->len; i++) {
        k = r->kernels->pdata[i];
        /* Without a hash (it could not be read), the path tells them. */
        if (*sha ? g_str_equal(k->sha, sha) :
                   !*k->sha && g_str_equal(k->path, path)) {
            return i;
        }
    }
    k = g_new0(RsResultKernel, 1);
    k->sha = g_strdup(sha);
    k->path = g_strdup(path);
    g_ptr_array_add(r->kernels, k);
    return r->kernels->len - 1;
}

static gboolean parse_hist(JsonObject *o, guint64 *hist, GError **error)
{
    JsonNode *n = json_object_get_member(o, "lat_hist_log2_us");
    JsonArray *a;
    guint i;

    memset(hist, 0, RS_LAT_BUCKETS * sizeof(*hist));
    if (!n) {
        return TRUE;    /* a case that could not be judged */
    }
    if (!JSON_NODE_HOLDS_ARRAY(n) ||
        json_array_get_length(json_node_get_array(n)) > RS_LAT_BUCKETS) {
        goto bad;
    }
    a = json_node_get_array(n);
    for (i = 0; i < json_array_get_length(a); i++) {
        JsonNode *e = json_array_get_element(a, i);

        if (!JSON_NODE_HOLDS_VALUE(e) ||
            json_node_get_value_type(e) != G_TYPE_INT64 ||
            json_node_get_int(e) < 0) {
            goto bad;
        }
        hist[i] = json_node_get_int(e);
    }
    return TRUE;
bad:
    g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                "\"lat_hist_log2_us\" is not an array of at most %d "
                "counts", RS_LAT_BUCKETS);
    return FALSE;
}

static gboolean parse_case(RsFuzzResults *r, guint dir_i, JsonParser *parser,
                           const char *line, GError **error)
{
    g_autoptr(GError) json_error = NULL;
    guint64 hist[RS_LAT_BUCKETS];
    const char *mode, *cls, *sha, *kpath, *osrelease, *run_dir;
    gint64 index, seed, smp = 0;
    gboolean cold;
    JsonObject *o;
    JsonNode *node;
    RsResultKernel *k;
    RsResultCase *c;
    char *key;
    int klass, b;
    guint ki;

    if (!json_parser_load_from_data(parser, line, -1, &json_error)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "not JSON: %s",
                    json_error->message);
        return FALSE;
    }
    if (!json_parser_get_root(parser) ||
        !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "not a JSON object");
        return FALSE;
    }
    o = json_node_get_object(json_parser_get_root(parser));
    if (!need_int(o, "index", 0, &index, error) ||
        !need_int(o, "seed", 0, &seed, error) ||
        !need_str(o, "mode", &mode, error) ||
        !need_str(o, "class", &cls, error) ||
        !need_str(o, "kernel", &kpath, error) ||
        !need_str(o, "kernel_sha256", &sha, error) ||
        (json_object_has_member(o, "smp") &&
         !need_int(o, "smp", 0, &smp, error)) ||
        !parse_hist(o, hist, error)) {
        return FALSE;
    }
    if (!g_str_equal(mode, "cold") && !g_str_equal(mode, "snapshot")) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "\"mode\" is neither cold nor snapshot");
        return FALSE;
    }
    klass = rs_class_from_name(cls);
    if (klass < 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "unknown class \"%s\"", cls);
        return FALSE;
    }
    cold = g_str_equal(mode, "cold");

    key = g_strdup_printf("%s|%" G_GINT64_FORMAT "|%" G_GINT64_FORMAT "|%s",
                          sha, seed, index, mode);
    if (!g_hash_table_add(r->seen, key)) {
        RsResultDir *d = r->dirs->pdata[dir_i];

        d->duplicates++;
        r->duplicates++;
        return TRUE;
    }
    ((RsResultDir *)r->dirs->pdata[dir_i])->cases++;
    add_timing(r->dirs->pdata[dir_i], o, cold);
    if (!cold) {
        ((RsResultDir *)r->dirs->pdata[dir_i])->snap_new++;
    }
    if (r->merged) {
        fputs(line, r->merged);
        fputc('\n', r->merged);
    }
    r->total[cold]++;
    if (klass != RS_CLASS_CLEAN) {
        r->failing[cold]++;
    }
    ki = find_kernel(r, sha, kpath);
    k = r->kernels->pdata[ki];
    k->classes[cold][klass]++;
    for (b = 0; b < RS_LAT_BUCKETS; b++) {
        k->lat[b] += hist[b];
    }
    osrelease = opt_str(o, "osrelease");
    if (!k->osrelease && osrelease && *osrelease) {
        k->osrelease = g_strdup(osrelease);
    }

    run_dir = opt_str(o, "dir");
    if (klass == RS_CLASS_CLEAN && !run_dir) {
        return TRUE;
    }
    c = g_new0(RsResultCase, 1);
    c->dir = dir_i;
    c->kernel = ki;
    c->cold = cold;
    c->klass = klass;
    c->index = index;
    c->smp = smp;
    c->test = g_strdup(opt_str(o, "test"));
    c->words = g_strdup(opt_str(o, "words"));
    c->error = g_strdup(opt_str(o, "error"));
    c->case_file = g_strdup(opt_str(o, "case"));
    c->run_dir = g_strdup(run_dir);
    c->ended = g_strdup(opt_str(o, "ended"));
    node = json_object_get_member(o, "panic_line");
    c->panic_line = node && JSON_NODE_HOLDS_VALUE(node) &&
                    json_node_get_value_type(node) == G_TYPE_BOOLEAN ?
                    json_node_get_boolean(node) : -1;
    g_ptr_array_add(r->cases, c);
    return TRUE;
}

static gboolean load_results(RsFuzzResults *r, guint dir_i, const char *path,
                             GError **error)
{
    g_autoptr(GFile) file = g_file_new_for_path(path);
    g_autoptr(GFileInputStream) fin = NULL;
    g_autoptr(GDataInputStream) in = NULL;
    g_autoptr(JsonParser) parser = json_parser_new_immutable();
    g_autoptr(GError) local = NULL;
    guint64 lineno = 0;

    fin = g_file_read(file, NULL, &local);
    if (!fin) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "%s: %s", path,
                    g_error_matches(local, G_IO_ERROR, G_IO_ERROR_NOT_FOUND) ?
                    "not found (not a ringside fuzz output directory?)" :
                    local->message);
        return FALSE;
    }
    in = g_data_input_stream_new(G_INPUT_STREAM(fin));
    for (;;) {
        gsize len;
        g_autofree char *line = g_data_input_stream_read_line(in, &len, NULL,
                                                              &local);

        if (local) {
            g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "%s: %s", path,
                        local->message);
            return FALSE;
        }
        if (!line) {
            return TRUE;
        }
        lineno++;
        if (strlen(line) != len) {
            g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                        "%s:%" G_GUINT64_FORMAT ": NUL byte in line", path,
                        lineno);
            return FALSE;
        }
        if (!*g_strstrip(line)) {
            continue;
        }
        if (!parse_case(r, dir_i, parser, line, &local)) {
            g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                        "%s:%" G_GUINT64_FORMAT ": %s", path, lineno,
                        local->message);
            return FALSE;
        }
    }
}

/* fuzz.json, written when a run finishes: absent is fine. */
static gboolean load_fuzz_json(RsResultDir *d, const char *path,
                               GError **error)
{
    g_autoptr(JsonParser) parser = json_parser_new_immutable();
    g_autoptr(GError) local = NULL;
    g_autofree char *text = NULL;
    gsize len;
    JsonObject *o;
    JsonNode *n;

    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        return TRUE;
    }
    if (!g_file_get_contents(path, &text, &len, &local)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "%s: %s", path,
                    local->message);
        return FALSE;
    }
    if (!json_parser_load_from_data(parser, text, len, &local)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "%s: not JSON: %s",
                    path, local->message);
        return FALSE;
    }
    if (!json_parser_get_root(parser) ||
        !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: not a JSON object", path);
        return FALSE;
    }
    o = json_node_get_object(json_parser_get_root(parser));
    d->has_fuzz = TRUE;
    d->shard = g_strdup(opt_str(o, "shard"));
    d->kernel = g_strdup(opt_str(o, "kernel"));
    d->kernel_sha = g_strdup(opt_str(o, "kernel_sha256"));
    d->pace = g_strdup(opt_str(o, "pace"));
    d->seed = opt_int(o, "seed", -1);
    d->jobs = opt_int(o, "jobs", 0);
    d->cold_cases = opt_num(o, "cold_cases", 0);
    d->cold_s = opt_num(o, "cold_s", 0);
    d->snap_cases = opt_num(o, "snapshot_cases", 0);
    d->snap_s = opt_num(o, "snapshot_s", 0);
    d->save_s = opt_num(o, "snapshot_save_s", -1);
    d->wanted = opt_int(o, "cases", 0);
    n = json_object_get_member(o, "complete");
    d->complete = n && JSON_NODE_HOLDS_VALUE(n) &&
                  json_node_get_value_type(n) == G_TYPE_BOOLEAN ?
                  json_node_get_boolean(n) : -1;
    if (d->shard) {
        guint64 i, m;
        char *end;

        i = g_ascii_strtoull(d->shard, &end, 10);
        if (*end == '/' && (m = g_ascii_strtoull(end + 1, &end, 10)) &&
            !*end && i < m && m <= G_MAXUINT) {
            d->shard_i = i;
            d->shard_n = m;
        }
    }
    return TRUE;
}

gboolean rs_fuzz_results_add_dir(RsFuzzResults *r, const char *dir,
                                 GError **error)
{
    g_autofree char *results = g_build_filename(dir, "results.jsonl", NULL);
    g_autofree char *fuzz = g_build_filename(dir, "fuzz.json", NULL);
    RsResultDir *d;

    if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: no such directory", dir);
        return FALSE;
    }
    d = g_new0(RsResultDir, 1);
    d->path = g_strdup(dir);
    d->real = realpath(dir, NULL);
    d->seed = -1;
    d->complete = -1;
    g_ptr_array_add(r->dirs, d);
    return load_fuzz_json(d, fuzz, error) &&
           load_results(r, r->dirs->len - 1, results, error);
}

/* The text table */

static char *kernel_label(const RsResultKernel *k)
{
    g_autofree char *base = g_path_get_basename(k->path);

    return g_strdup_printf("%s %.12s %s", k->osrelease ? k->osrelease : "?",
                           *k->sha ? k->sha : "(no-sha256)", base);
}

guint64 rs_result_kernel_total(const RsResultKernel *k, gboolean cold)
{
    guint64 n = 0;
    int c;

    for (c = 0; c < RS_N_CLASSES; c++) {
        n += k->classes[cold][c];
    }
    return n;
}

/* The shards of one campaign, in the order the directories came. */
static void print_campaigns(const RsFuzzResults *r, FILE *f)
{
    g_autofree gboolean *said = g_new0(gboolean, r->dirs->len + 1);
    guint i, j, s;

    for (i = 0; i < r->dirs->len; i++) {
        const RsResultDir *d = r->dirs->pdata[i];
        g_autofree char *stopped = NULL;
        g_autofree guint *found = NULL;
        g_autoptr(GString) missing = g_string_new(NULL);
        g_autoptr(GString) open = g_string_new(NULL);
        guint64 merged = 0;
        gboolean done = TRUE;

        if (said[i] || !d->has_fuzz || d->wanted <= 0 || !d->shard_n ||
            !d->kernel_sha || d->seed < 0) {
            continue;
        }
        found = g_new0(guint, d->shard_n);
        for (j = i; j < r->dirs->len; j++) {
            const RsResultDir *e = r->dirs->pdata[j];

            if (said[j] || !e->has_fuzz || e->seed != d->seed ||
                e->shard_n != d->shard_n || e->wanted != d->wanted ||
                !e->kernel_sha || strcmp(e->kernel_sha, d->kernel_sha)) {
                continue;
            }
            said[j] = TRUE;
            merged += e->snap_new;      /* a case merged twice counts once */
            if (found[e->shard_i]++ == 0 && e->complete == 0) {
                g_string_append_printf(open, "%s%u/%u (%s)",
                                       open->len ? ", " : "", e->shard_i,
                                       e->shard_n, e->path);
            }
        }
        for (s = 0; s < d->shard_n; s++) {
            if (!found[s]) {
                if (missing->len < 200) {
                    g_string_append_printf(missing, "%s%u/%u",
                                           missing->len ? ", " : "", s,
                                           d->shard_n);
                } else if (!g_str_has_suffix(missing->str, "...")) {
                    g_string_append(missing, ", ...");
                }
                done = FALSE;
            }
        }
        done = done && !open->len && merged == (guint64)d->wanted;
        fprintf(f, "campaign seed %" G_GINT64_FORMAT ", %u shard%s of %"
                G_GINT64_FORMAT " cases: %" G_GUINT64_FORMAT " of %"
                G_GINT64_FORMAT " merged, %s", d->seed, d->shard_n,
                d->shard_n == 1 ? "" : "s", d->wanted, merged,
                d->wanted, done ? "complete" : "incomplete");
        if (missing->len) {
            fprintf(f, "; shards missing: %s", missing->str);
        }
        if (open->len) {
            fprintf(f, "; shards not finished (run them again to resume): "
                    "%s", open->str);
        }
        fputc('\n', f);
    }
}

void rs_fuzz_results_print(const RsFuzzResults *r, FILE *f)
{
    guint i;
    int c;

    for (i = 0; i < r->kernels->len; i++) {
        const RsResultKernel *k = r->kernels->pdata[i];
        g_autofree char *label = kernel_label(k);

        fprintf(f, "kernel %s\n", label);
        fprintf(f, "  %-22s %10s %10s\n", "class", "snapshot", "cold");
        for (c = 0; c < RS_N_CLASSES; c++) {
            fprintf(f, "  %-22s %10" G_GUINT64_FORMAT " %10" G_GUINT64_FORMAT
                    "\n", rs_class_names[c], k->classes[0][c],
                    k->classes[1][c]);
        }
        fprintf(f, "  %-22s %10" G_GUINT64_FORMAT " %10" G_GUINT64_FORMAT
                "\n\n", "total", rs_result_kernel_total(k, FALSE),
                rs_result_kernel_total(k, TRUE));
    }
    fprintf(f, "cases: %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT
            " snapshot, %" G_GUINT64_FORMAT " cold), %" G_GUINT64_FORMAT
            " failing, %u kernel%s, %u director%s", r->total[0] + r->total[1],
            r->total[0], r->total[1], r->failing[0] + r->failing[1],
            r->kernels->len, r->kernels->len == 1 ? "" : "s", r->dirs->len,
            r->dirs->len == 1 ? "y" : "ies");
    if (r->duplicates) {
        fprintf(f, "; %" G_GUINT64_FORMAT " duplicate entr%s skipped",
                r->duplicates, r->duplicates == 1 ? "y" : "ies");
    }
    fputc('\n', f);
    print_campaigns(r, f);
}

/* Kept run directories */

char *rs_fuzz_results_run_dir(const RsFuzzResults *r, const RsResultCase *c)
{
    const RsResultDir *d = r->dirs->pdata[c->dir];
    g_autofree char *events = NULL;
    char *path;

    if (!c->run_dir) {
        return NULL;
    }
    path = g_build_filename(d->path, c->run_dir, NULL);
    events = g_build_filename(path, "events.jsonl", NULL);
    if (!g_file_test(events, G_FILE_TEST_IS_REGULAR)) {
        g_free(path);
        return NULL;
    }
    return path;
}

const RsResultCase *rs_fuzz_results_case_of_run(const RsFuzzResults *r,
                                                const char *rundir)
{
    g_autofree char *want = realpath(rundir, NULL);
    guint i;

    for (i = 0; want && i < r->cases->len; i++) {
        g_autofree char *dir = rs_fuzz_results_run_dir(r, r->cases->pdata[i]);
        g_autofree char *real = dir ? realpath(dir, NULL) : NULL;

        if (real && g_str_equal(real, want)) {
            return r->cases->pdata[i];
        }
    }
    return NULL;
}
