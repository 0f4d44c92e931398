/*
 * ringside report --html: fuzz output directories merged into a text table
 * and one self-contained HTML page (inline CSS and SVG, nothing fetched).
 */
#include "htmlreport.h"
#include "errors.h"
#include "events.h"
#include "outcome.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>

#define CASES_MAX       500     /* failing cases listed on the page */
#define MISSING_MAX     200     /* missing record ranges listed */
#define TL_DETAIL_MAX   5000    /* lines drawn one by one; beyond, bucketed */
#define TL_TEXT_MAX     80      /* characters of a line in its tooltip */
#define TL_TICKS_MAX    1000    /* ring records drawn one by one */
#define TL_LINKS_MAX    400     /* records joined to their lines, at most */
#define TL_CPUS_MAX     64      /* vCPU lanes; higher indexes share "other" */

typedef struct {
    char *path;             /* as given */
    char *real;             /* resolved, to spot a directory given twice */
    gboolean has_fuzz;      /* fuzz.json: absent while a run goes on */
    char *shard, *kernel, *pace;
    gint64 seed, jobs;
    double cold_cases, cold_s, snap_cases, snap_s, save_s;
    guint64 cases, duplicates;
} Dir;

typedef struct {
    char *sha, *path, *osrelease;
    guint64 classes[2][RS_N_CLASSES];   /* [cold][class] */
    guint64 lat[RS_LAT_BUCKETS];
} Kernel;

/* A case kept for the page: failing, or with its run directory kept. */
typedef struct {
    guint dir, kernel;
    gboolean cold;
    int klass;
    guint64 index;
    gint64 smp;
    int panic_line;         /* reached the wire: 1, did not: 0, unsaid: -1 */
    char *test, *words, *error, *case_file, *run_dir, *ended;
} Case;

struct RsHtmlReport {
    GPtrArray *dirs;        /* Dir */
    GPtrArray *kernels;     /* Kernel */
    GPtrArray *cases;       /* Case */
    GHashTable *seen;       /* "sha|seed|index|mode" of the cases merged */
    guint64 total[2], failing[2], duplicates;
};

static void dir_free(gpointer p)
{
    Dir *d = p;

    g_free(d->path);
    g_free(d->real);
    g_free(d->shard);
    g_free(d->kernel);
    g_free(d->pace);
    g_free(d);
}

static void kernel_free(gpointer p)
{
    Kernel *k = p;

    g_free(k->sha);
    g_free(k->path);
    g_free(k->osrelease);
    g_free(k);
}

static void case_free(gpointer p)
{
    Case *c = p;

    g_free(c->test);
    g_free(c->words);
    g_free(c->error);
    g_free(c->case_file);
    g_free(c->run_dir);
    g_free(c->ended);
    g_free(c);
}

RsHtmlReport *rs_html_report_new(void)
{
    RsHtmlReport *r = g_new0(RsHtmlReport, 1);

    r->dirs = g_ptr_array_new_with_free_func(dir_free);
    r->kernels = g_ptr_array_new_with_free_func(kernel_free);
    r->cases = g_ptr_array_new_with_free_func(case_free);
    r->seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    return r;
}

void rs_html_report_free(RsHtmlReport *r)
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

static guint find_kernel(RsHtmlReport *r, const char *sha, const char *path)
{
    Kernel *k;
    guint i;

    for (i = 0; i < r->kernels->len; i++) {
        k = r->kernels->pdata[i];
        /* Without a hash (it could not be read), the path tells them. */
        if (*sha ? g_str_equal(k->sha, sha) :
                   !*k->sha && g_str_equal(k->path, path)) {
            return i;
        }
    }
    k = g_new0(Kernel, 1);
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

static gboolean parse_case(RsHtmlReport *r, guint dir_i, JsonParser *parser,
                           const char *line, GError **error)
{
    g_autoptr(GError) json_error = NULL;
    guint64 hist[RS_LAT_BUCKETS];
    const char *mode, *cls, *sha, *kpath, *osrelease, *run_dir;
    gint64 index, seed, smp = 0;
    gboolean cold;
    JsonObject *o;
    JsonNode *node;
    Kernel *k;
    Case *c;
    char *key;
    int klass, b;
    guint ki;

    if (!json_parser_load_from_data(parser, line, -1, &json_error)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "not JSON: %s",
                    json_error->message);
        return FALSE;
    }
    if (!JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
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
        Dir *d = r->dirs->pdata[dir_i];

        d->duplicates++;
        r->duplicates++;
        return TRUE;
    }
    ((Dir *)r->dirs->pdata[dir_i])->cases++;
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
    c = g_new0(Case, 1);
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

static gboolean load_results(RsHtmlReport *r, guint dir_i, const char *path,
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
static gboolean load_fuzz_json(Dir *d, const char *path, GError **error)
{
    g_autoptr(JsonParser) parser = json_parser_new_immutable();
    g_autoptr(GError) local = NULL;
    JsonObject *o;

    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        return TRUE;
    }
    if (!json_parser_load_from_file(parser, path, &local)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "%s: not JSON: %s",
                    path, local->message);
        return FALSE;
    }
    if (!JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: not a JSON object", path);
        return FALSE;
    }
    o = json_node_get_object(json_parser_get_root(parser));
    d->has_fuzz = TRUE;
    d->shard = g_strdup(opt_str(o, "shard"));
    d->kernel = g_strdup(opt_str(o, "kernel"));
    d->pace = g_strdup(opt_str(o, "pace"));
    d->seed = opt_num(o, "seed", -1);
    d->jobs = opt_num(o, "jobs", 0);
    d->cold_cases = opt_num(o, "cold_cases", 0);
    d->cold_s = opt_num(o, "cold_s", 0);
    d->snap_cases = opt_num(o, "snapshot_cases", 0);
    d->snap_s = opt_num(o, "snapshot_s", 0);
    d->save_s = opt_num(o, "snapshot_save_s", -1);
    return TRUE;
}

gboolean rs_html_report_add_dir(RsHtmlReport *r, const char *dir,
                                GError **error)
{
    g_autofree char *results = g_build_filename(dir, "results.jsonl", NULL);
    g_autofree char *fuzz = g_build_filename(dir, "fuzz.json", NULL);
    Dir *d;

    if (!g_file_test(dir, G_FILE_TEST_IS_DIR)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: no such directory", dir);
        return FALSE;
    }
    d = g_new0(Dir, 1);
    d->path = g_strdup(dir);
    d->real = realpath(dir, NULL);
    d->seed = -1;
    g_ptr_array_add(r->dirs, d);
    return load_fuzz_json(d, fuzz, error) &&
           load_results(r, r->dirs->len - 1, results, error);
}

/* The text table */

static char *kernel_label(const Kernel *k)
{
    g_autofree char *base = g_path_get_basename(k->path);

    return g_strdup_printf("%s %.12s %s", k->osrelease ? k->osrelease : "?",
                           *k->sha ? k->sha : "(no-sha256)", base);
}

static guint64 kernel_total(const Kernel *k, gboolean cold)
{
    guint64 n = 0;
    int c;

    for (c = 0; c < RS_N_CLASSES; c++) {
        n += k->classes[cold][c];
    }
    return n;
}

void rs_html_report_print(const RsHtmlReport *r, FILE *f)
{
    guint i;
    int c;

    for (i = 0; i < r->kernels->len; i++) {
        const Kernel *k = r->kernels->pdata[i];
        g_autofree char *label = kernel_label(k);

        fprintf(f, "kernel %s\n", label);
        fprintf(f, "  %-22s %10s %10s\n", "class", "snapshot", "cold");
        for (c = 0; c < RS_N_CLASSES; c++) {
            fprintf(f, "  %-22s %10" G_GUINT64_FORMAT " %10" G_GUINT64_FORMAT
                    "\n", rs_class_names[c], k->classes[0][c],
                    k->classes[1][c]);
        }
        fprintf(f, "  %-22s %10" G_GUINT64_FORMAT " %10" G_GUINT64_FORMAT
                "\n\n", "total", kernel_total(k, FALSE),
                kernel_total(k, TRUE));
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
}

/* HTML helpers */

/*
 * Append @s escaped for HTML text and attribute values.  Control bytes
 * become spaces and invalid UTF-8 U+FFFD, so console bytes are safe too.
 */
static void esc_len(GString *o, const char *s, gssize len)
{
    g_autofree char *copy = NULL, *valid = NULL;
    const char *p;
    gssize i;

    if (!s) {
        return;
    }
    if (len < 0) {
        len = strlen(s);
    }
    copy = g_malloc(len + 1);
    for (i = 0; i < len; i++) {
        guchar ch = s[i];

        copy[i] = ch < 0x20 || ch == 0x7f ? ' ' : ch;
    }
    copy[len] = '\0';
    valid = g_utf8_make_valid(copy, len);
    for (p = valid; *p; p++) {
        switch (*p) {
        case '&':
            g_string_append(o, "&amp;");
            break;
        case '<':
            g_string_append(o, "&lt;");
            break;
        case '>':
            g_string_append(o, "&gt;");
            break;
        case '"':
            g_string_append(o, "&quot;");
            break;
        case '\'':
            g_string_append(o, "&#39;");
            break;
        default:
            g_string_append_c(o, *p);
        }
    }
}

static void esc(GString *o, const char *s)
{
    esc_len(o, s, -1);
}

/* A round step (1, 2 or 5 times a power of ten) for at most @n ticks. */
static double nice_step(double span, int n)
{
    static const double m[] = { 1, 2, 5 };
    double p = 1e-6;
    int i;

    while (p < 1e15) {
        for (i = 0; i < 3; i++) {
            if (span / (p * m[i]) <= n) {
                return p * m[i];
            }
        }
        p *= 10;
    }
    return p;
}

/* Decimals that show a multiple of @step exactly. */
static int step_decimals(double step)
{
    int d = 0;

    while (step < 0.999 && d < 6) {
        step *= 10;
        d++;
    }
    return d;
}

/* log2 bucket k's lower bound, 2^k microseconds: "1µs" ... "512ms", "1s". */
static void bucket_label(GString *o, int k)
{
    if (k < 10) {
        g_string_append_printf(o, "%u\xc2\xb5s", 1u << k);
    } else if (k < 20) {
        g_string_append_printf(o, "%ums", 1u << (k - 10));
    } else {
        g_string_append_printf(o, "%us", 1u << (k - 20));
    }
}

/* Failure classes, worst first, as rs_class_names[]. */
static const char *const class_colors[RS_N_CLASSES] = {
    "#6d28d9", "#9a3412", "#c2410c", "#dc2626", "#e11d48", "#ea580c",
    "#a16207", "#15803d",
};

/* Line verdicts: colour, and precedence when lines share a pixel. */
static const struct {
    const char *name, *color, *meaning;
    int rank;
} line_styles[] = {
    { "ok", "#2f9e5f", "matched its ring record", 3 },
    { "torn", "#d62828", "another record cut into it", 9 },
    { "corrupt", "#f06a1d", "bytes differ from the record", 8 },
    { "unmatched", "#f2a03d", "no record explains it", 7 },
    { "duplicate", "#8b5cf6", "a record printed again", 6 },
    { "reordered", "#c084fc", "out of order", 5 },
    { "dropped-notice", "#d4a90a", "the kernel's own drop notice", 4 },
    { "overwritten", "#7b8494", "record overwritten before checked", 2 },
    { "unchecked", "#b5bcc8", "no ring to check against", 1 },
    { "other", "#404040", "a verdict this ringside does not know", 0 },
};
#define N_LINE_STYLES G_N_ELEMENTS(line_styles)

static guint line_style(const char *verdict)
{
    guint i;

    for (i = 0; i < N_LINE_STYLES - 1; i++) {
        if (g_str_equal(line_styles[i].name, verdict)) {
            return i;
        }
    }
    return N_LINE_STYLES - 1;
}

static const char page_css[] =
    "*{box-sizing:border-box}"
    "body{margin:0;background:#f4f5f7;color:#1f2430;"
    "font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif}"
    "main{max-width:1260px;margin:0 auto;padding:20px 24px 40px}"
    "h1{font-size:22px;margin:4px 0 2px}"
    "h2{font-size:16px;margin:0 0 10px}"
    "h3{font-size:14px;margin:14px 0 6px}"
    ".sub{color:#5b6475;margin:0 0 14px}"
    ".card{background:#fff;border:1px solid #dfe3ea;border-radius:8px;"
    "padding:16px 20px;margin:14px 0;overflow-x:auto}"
    "table{border-collapse:collapse;font-variant-numeric:tabular-nums}"
    "th,td{padding:4px 10px;border-bottom:1px solid #eceef2;"
    "text-align:right;vertical-align:top;white-space:nowrap}"
    "th{font-weight:600;color:#4a5263;background:#f3f5f8;font-size:12.5px}"
    ".l{text-align:left}"
    ".z{color:#c2c7d0}"
    ".mono{font-family:ui-monospace,'SF Mono',Menlo,Consolas,monospace;"
    "font-size:12px}"
    ".dim{color:#7a8294}"
    "td.words{white-space:normal;word-break:break-word;color:#4a5263;"
    "padding-top:0}"
    "table.cases tr:first-child td{border-bottom:0;padding-bottom:2px}"
    "table.cases tbody:hover{background:#f8f9fb}"
    ".pill{display:inline-block;min-width:22px;padding:0 7px;"
    "border-radius:10px;color:#fff;font-weight:600;text-align:center}"
    ".err{color:#b91c1c}"
    ".note{color:#5b6475;font-size:12.5px;margin:6px 0 0}"
    ".legend{display:flex;flex-wrap:wrap;gap:6px 16px;font-size:12.5px;"
    "margin:8px 0 4px;color:#3b4252}"
    ".legend span{display:inline-flex;align-items:center;gap:5px}"
    ".legend i{display:inline-block;width:14px;height:10px;"
    "border-radius:2px}"
    ".kv{display:grid;grid-template-columns:max-content 1fr;"
    "gap:2px 14px;font-size:13px;margin:0 0 8px}"
    ".kv dt{color:#5b6475}.kv dd{margin:0}"
    "svg{display:block;width:100%;height:auto}"
    "svg text{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;"
    "fill:#3b4252}"
    ".missing{color:#b91c1c;font-size:12.5px;margin:6px 0 0}";

static void class_cell(GString *o, int klass, guint64 n)
{
    if (!n) {
        g_string_append(o, "<td class=\"z\">0</td>");
    } else if (klass == RS_CLASS_CLEAN) {
        g_string_append_printf(o, "<td>%" G_GUINT64_FORMAT "</td>", n);
    } else {
        g_string_append_printf(o, "<td><span class=\"pill\" style=\""
                               "background:%s\">%" G_GUINT64_FORMAT
                               "</span></td>", class_colors[klass], n);
    }
}

static void kernel_label_html(GString *o, const Kernel *k)
{
    g_autofree char *base = g_path_get_basename(k->path);

    g_string_append(o, "<span title=\"");
    esc(o, k->path);
    g_string_append(o, " sha256 ");
    esc(o, k->sha);
    g_string_append(o, "\"><b>");
    esc(o, k->osrelease ? k->osrelease : "?");
    g_string_append(o, "</b> <span class=\"mono dim\">");
    if (*k->sha) {
        esc_len(o, k->sha, MIN(strlen(k->sha), 12));
    } else {
        g_string_append(o, "no sha256");
    }
    g_string_append(o, "</span> <span class=\"mono\">");
    esc(o, base);
    g_string_append(o, "</span></span>");
}

/* Cases per kernel and class, in one mode. */
static void class_table(GString *o, const RsHtmlReport *r, gboolean cold)
{
    guint i;
    int c;

    g_string_append(o, "<table><thead><tr><th class=\"l\">kernel</th>");
    for (c = 0; c < RS_N_CLASSES; c++) {
        g_string_append_printf(o, "<th>%s</th>", rs_class_names[c]);
    }
    g_string_append(o, "<th>total</th><th>failing</th></tr></thead><tbody>");
    for (i = 0; i < r->kernels->len; i++) {
        const Kernel *k = r->kernels->pdata[i];
        guint64 total = kernel_total(k, cold);

        if (!total) {
            continue;
        }
        g_string_append(o, "<tr><td class=\"l\">");
        kernel_label_html(o, k);
        g_string_append(o, "</td>");
        for (c = 0; c < RS_N_CLASSES; c++) {
            class_cell(o, c, k->classes[cold][c]);
        }
        g_string_append_printf(o, "<td><b>%" G_GUINT64_FORMAT "</b></td>"
                               "<td>%.1f%%</td></tr>", total,
                               100.0 * (total - k->classes[cold][RS_CLASS_CLEAN])
                               / total);
    }
    g_string_append(o, "</tbody></table>");
}

static void rate_cell(GString *o, double cases, double s)
{
    if (cases > 0 && s > 0) {
        g_string_append_printf(o, "<td>%.1f <span class=\"dim\">(%.0f in "
                               "%.1f s)</span></td>", cases * 60 / s, cases,
                               s);
    } else {
        g_string_append(o, "<td class=\"z\">&ndash;</td>");
    }
}

static void rates_table(GString *o, const RsHtmlReport *r)
{
    guint i, j;

    g_string_append(o, "<h3>Rates per input directory</h3><table><thead><tr>"
                    "<th class=\"l\">directory</th><th class=\"l\">shard"
                    "</th><th>seed</th><th class=\"l\">kernel</th>"
                    "<th>jobs</th><th class=\"l\">pace</th>"
                    "<th>cold cases/min</th><th>snapshot cases/min</th>"
                    "<th>speed-up</th><th>snapshot save</th>"
                    "<th>cases merged</th></tr></thead><tbody>");
    for (i = 0; i < r->dirs->len; i++) {
        const Dir *d = r->dirs->pdata[i];
        g_autofree char *kbase = d->kernel ? g_path_get_basename(d->kernel)
                                           : NULL;
        gboolean again = FALSE;

        for (j = 0; j < i && d->real; j++) {
            const Dir *e = r->dirs->pdata[j];

            again |= e->real && g_str_equal(e->real, d->real);
        }
        g_string_append(o, "<tr><td class=\"l mono\">");
        esc(o, d->path);
        if (again) {
            g_string_append(o, " <span class=\"dim\">(again)</span>");
        }
        g_string_append(o, "</td>");
        if (!d->has_fuzz) {
            g_string_append(o, "<td class=\"l dim\" colspan=\"9\">no "
                            "fuzz.json (the run did not finish)</td>");
        } else {
            g_string_append(o, "<td class=\"l\">");
            esc(o, d->shard ? d->shard : "?");
            g_string_append_printf(o, "</td><td>%" G_GINT64_FORMAT "</td>"
                                   "<td class=\"l mono\">", d->seed);
            esc(o, kbase ? kbase : "?");
            g_string_append_printf(o, "</td><td>%" G_GINT64_FORMAT "</td>"
                                   "<td class=\"l\">", d->jobs);
            esc(o, d->pace ? d->pace : "?");
            g_string_append(o, "</td>");
            rate_cell(o, d->cold_cases, d->cold_s);
            rate_cell(o, d->snap_cases, d->snap_s);
            if (d->cold_cases > 0 && d->cold_s > 0 && d->snap_cases > 0 &&
                d->snap_s > 0) {
                g_string_append_printf(o, "<td>%.1f&times;</td>",
                                       (d->snap_cases / d->snap_s) /
                                       (d->cold_cases / d->cold_s));
            } else {
                g_string_append(o, "<td class=\"z\">&ndash;</td>");
            }
            if (d->save_s >= 0) {
                g_string_append_printf(o, "<td>%.1f s</td>", d->save_s);
            } else {
                g_string_append(o, "<td class=\"z\">&ndash;</td>");
            }
        }
        g_string_append_printf(o, "<td>%" G_GUINT64_FORMAT, d->cases);
        if (d->duplicates) {
            g_string_append_printf(o, " <span class=\"dim\">+%"
                                   G_GUINT64_FORMAT " duplicate</span>",
                                   d->duplicates);
        }
        g_string_append(o, "</td></tr>");
    }
    g_string_append(o, "</tbody></table>");
}

static void summary_section(GString *o, const RsHtmlReport *r)
{
    g_string_append(o, "<section class=\"card\"><h2>Cases by kernel and "
                    "failure class</h2>");
    if (!r->total[0] && !r->total[1]) {
        g_string_append(o, "<p class=\"dim\">No cases.</p>");
    }
    if (r->total[0]) {
        g_string_append(o, "<h3>From snapshots</h3>");
        class_table(o, r, FALSE);
    }
    if (r->total[1]) {
        g_string_append(o, "<h3>Booted cold <span class=\"dim\">(the first "
                        "scenarios again, to measure what the snapshot "
                        "buys)</span></h3>");
        class_table(o, r, TRUE);
    }
    rates_table(o, r);
    g_string_append(o, "</section>");
}

/* Latency histograms */

#define HG_W    1200
#define HG_H    250
#define HG_L    62
#define HG_R    14
#define HG_T    22
#define HG_B    44

/* The bucket holding the @q-quantile of @n counts. */
static int hist_quantile(const guint64 *h, guint64 n, double q)
{
    guint64 sum = 0;
    int k;

    for (k = 0; k < RS_LAT_BUCKETS; k++) {
        sum += h[k];
        if (sum >= q * n) {
            return k;
        }
    }
    return RS_LAT_BUCKETS - 1;
}

static void histogram_svg(GString *o, const guint64 *h)
{
    double slot = (HG_W - HG_L - HG_R) / (double)RS_LAT_BUCKETS;
    double ph = HG_H - HG_T - HG_B, step, y;
    guint64 max = 1;
    int k;

    for (k = 0; k < RS_LAT_BUCKETS; k++) {
        max = MAX(max, h[k]);
    }
    step = nice_step(max, 5);
    if (step < 1) {
        step = 1;
    }
    while (step * 5 < max) {
        step *= 2;
    }
    /* The axis tops at the first whole step at or above the highest bar. */
    max = ((guint64)(max / step) + ((guint64)(max / step) * step < max))
          * step;

    g_string_append_printf(o, "<svg class=\"hist\" viewBox=\"0 0 %d %d\" "
                           "role=\"img\" aria-label=\"latency histogram\">",
                           HG_W, HG_H);
    for (y = 0; y <= max + 0.5; y += step) {
        double py = HG_T + ph - y * ph / max;

        g_string_append_printf(o, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" "
                               "y2=\"%.1f\" stroke=\"%s\"/>"
                               "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" "
                               "text-anchor=\"end\">%.0f</text>",
                               HG_L, HG_W - HG_R, py, py,
                               y ? "#eceef2" : "#9aa3b2", HG_L - 6, py + 4, y);
    }
    for (k = 0; k < RS_LAT_BUCKETS; k++) {
        double x = HG_L + k * slot, bh = h[k] * ph / max;

        if (h[k]) {
            g_string_append_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" "
                                   "width=\"%.1f\" height=\"%.1f\" rx=\"2\" "
                                   "fill=\"#4c7bd9\"><title>",
                                   x + slot * 0.14, HG_T + ph - bh,
                                   slot * 0.72, MAX(bh, 1.0));
            bucket_label(o, k);
            g_string_append(o, " to ");
            bucket_label(o, k + 1);
            g_string_append_printf(o, ": %" G_GUINT64_FORMAT " lines</title>"
                                   "</rect><text x=\"%.1f\" y=\"%.1f\" "
                                   "font-size=\"10.5\" text-anchor=\"middle\">"
                                   "%" G_GUINT64_FORMAT "</text>", h[k],
                                   x + slot / 2, HG_T + ph - bh - 4, h[k]);
        }
        g_string_append_printf(o, "<text x=\"%.1f\" y=\"%d\" font-size=\"11\" "
                               "text-anchor=\"middle\">", x + slot / 2,
                               HG_H - HG_B + 16);
        bucket_label(o, k);
        g_string_append(o, "</text>");
    }
    g_string_append_printf(o, "<text x=\"%d\" y=\"%d\" font-size=\"11.5\" "
                           "text-anchor=\"middle\">ok-line wire latency: "
                           "log2 buckets, labelled by their lower bound"
                           "</text><text x=\"14\" y=\"%d\" font-size=\"11.5\" "
                           "transform=\"rotate(-90 14 %d)\" "
                           "text-anchor=\"middle\">lines</text></svg>",
                           HG_L + (HG_W - HG_L - HG_R) / 2, HG_H - 6,
                           HG_T + (int)ph / 2, HG_T + (int)ph / 2);
}

static void histogram_section(GString *o, const RsHtmlReport *r)
{
    guint i;

    g_string_append(o, "<section class=\"card\"><h2>Wire latency of ok "
                    "lines</h2><p class=\"note\">Per kernel, all cases "
                    "summed. Latency is the time from printk's time stamp "
                    "to the line's last byte on the wire, relative to the "
                    "quickest line of its run (the guest and virtual clocks "
                    "have different origins).</p>");
    for (i = 0; i < r->kernels->len; i++) {
        const Kernel *k = r->kernels->pdata[i];
        guint64 n = 0;
        int b;

        for (b = 0; b < RS_LAT_BUCKETS; b++) {
            n += k->lat[b];
        }
        g_string_append(o, "<h3>");
        kernel_label_html(o, k);
        g_string_append_printf(o, " <span class=\"dim\">&middot; %"
                               G_GUINT64_FORMAT " lines from %"
                               G_GUINT64_FORMAT " cases", n,
                               kernel_total(k, FALSE) + kernel_total(k, TRUE));
        if (n) {
            int p50 = hist_quantile(k->lat, n, 0.5);
            int p99 = hist_quantile(k->lat, n, 0.99);

            g_string_append(o, " &middot; median in [");
            bucket_label(o, p50);
            g_string_append(o, ", ");
            bucket_label(o, p50 + 1);
            g_string_append(o, "), p99 in [");
            bucket_label(o, p99);
            g_string_append(o, ", ");
            bucket_label(o, p99 + 1);
            g_string_append(o, ")");
        }
        g_string_append(o, "</span></h3>");
        if (n) {
            histogram_svg(o, k->lat);
        } else {
            g_string_append(o, "<p class=\"dim\">No latency measured.</p>");
        }
    }
    if (!r->kernels->len) {
        g_string_append(o, "<p class=\"dim\">No cases.</p>");
    }
    g_string_append(o, "</section>");
}

/* Failing cases */

static gint case_order(gconstpointer a, gconstpointer b)
{
    const Case *x = *(Case *const *)a, *y = *(Case *const *)b;

    if (x->klass != y->klass) {
        return x->klass - y->klass;
    }
    if (x->cold != y->cold) {
        return x->cold - y->cold;
    }
    if (x->kernel != y->kernel) {
        return x->kernel < y->kernel ? -1 : 1;
    }
    if (x->dir != y->dir) {
        return x->dir < y->dir ? -1 : 1;
    }
    return x->index < y->index ? -1 : x->index > y->index;
}

static void failing_section(GString *o, const RsHtmlReport *r)
{
    guint i, shown = 0;
    guint64 failing = r->failing[0] + r->failing[1];

    g_string_append_printf(o, "<section class=\"card\"><h2>Failing cases "
                           "<span class=\"dim\">(%" G_GUINT64_FORMAT
                           ")</span></h2>", failing);
    if (!failing) {
        g_string_append(o, "<p class=\"dim\">None: every case was clean."
                        "</p></section>");
        return;
    }
    g_string_append(o, "<table class=\"cases\"><thead><tr>"
                    "<th class=\"l\">class</th><th class=\"l\">mode</th>"
                    "<th class=\"l\">kernel</th><th>smp</th>"
                    "<th class=\"l\">test</th><th class=\"l\">case file"
                    "</th></tr></thead>");
    for (i = 0; i < r->cases->len && shown < CASES_MAX; i++) {
        const Case *c = r->cases->pdata[i];
        const Dir *d = r->dirs->pdata[c->dir];

        if (c->klass == RS_CLASS_CLEAN) {
            continue;
        }
        shown++;
        /* One body per case: its facts, then its scenario underneath. */
        g_string_append_printf(o, "<tbody><tr><td class=\"l\"><span "
                               "class=\"pill\" style=\"background:%s\">%s"
                               "</span></td><td class=\"l\">%s</td>"
                               "<td class=\"l\">", class_colors[c->klass],
                               rs_class_names[c->klass],
                               c->cold ? "cold" : "snapshot");
        kernel_label_html(o, r->kernels->pdata[c->kernel]);
        g_string_append_printf(o, "</td><td>%" G_GINT64_FORMAT "</td>"
                               "<td class=\"l\">", c->smp);
        esc(o, c->test);
        g_string_append(o, "</td><td class=\"l mono\">");
        if (c->case_file) {
            g_string_append(o, "<span class=\"dim\">");
            esc(o, d->path);
            g_string_append(o, "/</span>");
            esc(o, c->case_file);
        } else {
            g_string_append_printf(o, "<span class=\"dim\">none (%s)</span>",
                                   c->cold ? "cold runs save none" :
                                   "not saved");
        }
        g_string_append(o, "</td></tr><tr class=\"sc\"><td></td>"
                        "<td class=\"l mono words\" colspan=\"5\">");
        esc(o, c->words);
        if (c->error) {
            g_string_append(o, "<div class=\"err\">");
            esc(o, c->error);
            g_string_append(o, "</div>");
        }
        g_string_append(o, "</td></tr></tbody>");
    }
    g_string_append(o, "</table>");
    if (failing > shown) {
        g_string_append_printf(o, "<p class=\"note\">and %" G_GUINT64_FORMAT
                               " more, not listed.</p>", failing - shown);
    }
    g_string_append(o, "</section>");
}

/* The timeline of one run */

#define TL_W        1200
#define TL_LX       96      /* lane labels on the left */
#define TL_NT       118     /* "no time" column on the right */
#define TL_PX       TL_LX
#define TL_PW       (TL_W - TL_LX - TL_NT - 14)
#define TL_TOP      24
#define TL_RING_H   30
#define TL_LANE_H   22
#define TL_LANE_GAP 8

typedef struct {
    gint64 t0, t1;          /* virtual ns, first and last byte on the wire */
    int cpu;                /* of the first byte; -1: the "other" lane */
    guint lane, style;
    const RsLineVerdict *lv;
} TlLine;

/* A ring record on the time axis, by the line that carried its stamp. */
typedef struct {
    gint64 t;               /* virtual ns it was logged at */
    guint64 seq;
    guint line;             /* index in Timeline.lines */
} TlTick;

typedef struct {
    const char *verdict;    /* missing, cut, damaged */
    gboolean l1;
    guint64 seq, count;
} TlLost;

typedef struct {
    RsEventStream *s;
    GArray *lines;          /* TlLine */
    GArray *ticks;          /* TlTick */
    GArray *lost;           /* TlLost */
    guint64 lost_records;
    guint nlanes, ncpus;
    gboolean other_lane;    /* lines not from a vCPU, from one past
                             * TL_CPUS_MAX, or from one not known */
    gboolean no_bytes;      /* the device ran with tx-events=off */
    gint64 tmin, tmax, offset;
    gboolean has_offset;
} Timeline;

static gint64 byte_time(const RsTxByte *b)
{
    return b->wt_ns >= 0 ? b->wt_ns : b->vt_ns;
}

static double tl_x(const Timeline *tl, gint64 t)
{
    return TL_PX + (double)(t - tl->tmin) * TL_PW / (tl->tmax - tl->tmin);
}

static double lane_y(guint lane)
{
    return TL_TOP + TL_RING_H + 12 + lane * (TL_LANE_H + TL_LANE_GAP);
}

/* The line's text from its bytes, without the line end, shortened. */
static void line_text(GString *o, RsEventStream *s, const RsLineVerdict *lv)
{
    RsTxByte *b = rs_event_stream_byte(s, lv->first);
    guint i, n = 0;
    char buf[TL_TEXT_MAX + 1];

    if (!b) {
        return;
    }
    for (i = b - (RsTxByte *)s->tx->data;
         i < s->tx->len && n < TL_TEXT_MAX; i++) {
        b = &g_array_index(s->tx, RsTxByte, i);
        if (b->index > lv->last) {
            break;
        }
        if (b->byte != '\r' && b->byte != '\n' && !b->loopback) {
            buf[n++] = b->byte;
        }
    }
    esc_len(o, buf, n);
    if (n == TL_TEXT_MAX) {
        g_string_append(o, "\xe2\x80\xa6");
    }
}

/* A bracketed record's bytes and vCPU, to place lines without byte events. */
typedef struct {
    guint64 first, last;
    int cpu;
} TlSpan;

static gint span_order(gconstpointer a, gconstpointer b)
{
    const TlSpan *x = a, *y = b;

    return x->first < y->first ? -1 : x->first > y->first;
}

static GArray *bracket_spans(const RsEventStream *s)
{
    GArray *spans = g_array_new(FALSE, FALSE, sizeof(TlSpan));
    guint i;

    for (i = 0; i < s->brackets->len; i++) {
        const RsBracket *b = &g_array_index(s->brackets, RsBracket, i);
        TlSpan sp = { b->first, b->last, b->cpu };

        if (b->has_bytes && b->cpu >= 0) {
            g_array_append_val(spans, sp);
        }
    }
    g_array_sort(spans, span_order);
    return spans;
}

/* The vCPU of the bracket holding byte @index, or -1. */
static int span_cpu(GArray *spans, guint64 index)
{
    guint lo = 0, hi = spans->len;

    /* The last span starting at or before @index. */
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;

        if (g_array_index(spans, TlSpan, mid).first <= index) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo && index <= g_array_index(spans, TlSpan, lo - 1).last) {
        return g_array_index(spans, TlSpan, lo - 1).cpu;
    }
    return -1;
}

static void timeline_build(Timeline *tl, guint smp)
{
    RsEventStream *s = tl->s;
    g_autoptr(GHashTable) seqs = g_hash_table_new(g_int64_hash,
                                                  g_int64_equal);
    g_autoptr(GArray) spans = bracket_spans(s);
    gint maxcpu = -1;
    guint i;

    tl->lines = g_array_new(FALSE, FALSE, sizeof(TlLine));
    tl->ticks = g_array_new(FALSE, FALSE, sizeof(TlTick));
    tl->lost = g_array_new(FALSE, FALSE, sizeof(TlLost));
    tl->tmin = G_MAXINT64;
    tl->tmax = G_MININT64;
    tl->no_bytes = s->tx->len == 0;

    for (i = 0; i < s->lines->len; i++) {
        const RsLineVerdict *lv = &g_array_index(s->lines, RsLineVerdict, i);
        const RsTxByte *b = rs_event_stream_byte(s, lv->first);
        TlLine l = { .t0 = lv->vt_ns, .t1 = lv->vt_ns, .lv = lv };

        /*
         * Without its bytes a line is a mark at the time of its last
         * byte, in the lane of the vCPU that bracketed its record.
         */
        l.cpu = b ? b->cpu : span_cpu(spans, lv->first);
        if (l.cpu >= TL_CPUS_MAX) {
            l.cpu = -1;
        }
        if (b) {
            l.t0 = MIN(byte_time(b), l.t1);
        }
        l.style = line_style(lv->verdict);
        maxcpu = MAX(maxcpu, l.cpu);
        tl->other_lane |= l.cpu < 0;
        g_array_append_val(tl->lines, l);
        tl->tmin = MIN(tl->tmin, l.t0);
        tl->tmax = MAX(tl->tmax, l.t1);
        if (lv->has_ts && (gint64)lv->ts_ns >= 0 &&
            (!tl->has_offset || lv->vt_ns - (gint64)lv->ts_ns < tl->offset)) {
            tl->offset = lv->vt_ns - (gint64)lv->ts_ns;
            tl->has_offset = TRUE;
        }
    }
    /* No line's vCPU known: one lane, not a row of empty ones. */
    tl->ncpus = maxcpu < 0 && tl->lines->len ? 0 :
                MAX((guint)(maxcpu + 1), CLAMP(smp, 1u, TL_CPUS_MAX));
    tl->nlanes = tl->ncpus + tl->other_lane;
    for (i = 0; i < tl->lines->len; i++) {
        TlLine *l = &g_array_index(tl->lines, TlLine, i);

        l->lane = l->cpu < 0 ? tl->ncpus : (guint)l->cpu;
    }

    /* A record's time stamp is on its last line; a line printed twice
     * must not make two ticks. */
    for (i = 0; tl->has_offset && i < s->lines->len; i++) {
        const RsLineVerdict *lv = &g_array_index(s->lines, RsLineVerdict, i);
        TlTick tk = { -1, lv->seq, i };

        if (tl->offset <= 0 || (gint64)lv->ts_ns <= G_MAXINT64 - tl->offset) {
            tk.t = (gint64)lv->ts_ns + tl->offset;
        }

        /* Before the virtual clock started: only a hostile stream. */
        if (!lv->has_ts || tk.t < 0 ||
            (lv->has_seq && g_hash_table_contains(seqs, &lv->seq))) {
            continue;
        }
        if (lv->has_seq) {
            g_hash_table_add(seqs, (gpointer)&lv->seq);
        }
        g_array_append_val(tl->ticks, tk);
        tl->tmin = MIN(tl->tmin, tk.t);
        tl->tmax = MAX(tl->tmax, tk.t);
    }

    for (i = 0; i < s->records->len; i++) {
        const RsRecordVerdict *rv = &g_array_index(s->records,
                                                   RsRecordVerdict, i);

        if (g_str_equal(rv->verdict, "missing")) {
            TlLost l = { "missing", FALSE, rv->seq, rv->count };

            g_array_append_val(tl->lost, l);
            tl->lost_records += rv->count;
        }
    }
    for (i = 0; i < s->l1_records->len; i++) {
        const RsRecordVerdict *rv = &g_array_index(s->l1_records,
                                                   RsRecordVerdict, i);

        if (g_str_equal(rv->verdict, "missing") ||
            g_str_equal(rv->verdict, "cut") ||
            g_str_equal(rv->verdict, "damaged")) {
            TlLost l = { NULL, TRUE, rv->seq, rv->count };

            l.verdict = g_str_equal(rv->verdict, "missing") ? "missing" :
                        g_str_equal(rv->verdict, "cut") ? "cut" : "damaged";
            g_array_append_val(tl->lost, l);
            tl->lost_records += rv->count;
        }
    }

    if (tl->tmin > tl->tmax) {
        tl->tmin = tl->tmax = 0;
    }
    if (tl->tmax - tl->tmin < 1000) {
        tl->tmax = tl->tmin + 1000;
    }
}

static void timeline_clear(Timeline *tl)
{
    g_clear_pointer(&tl->lines, g_array_unref);
    g_clear_pointer(&tl->ticks, g_array_unref);
    g_clear_pointer(&tl->lost, g_array_unref);
    g_clear_pointer(&tl->s, rs_event_stream_free);
}

static void tl_axis(GString *o, const Timeline *tl, double y0, double y1)
{
    double lo = tl->tmin / 1e6, hi = tl->tmax / 1e6;
    double step = nice_step(hi - lo, 9), v;
    int dec = step_decimals(step);
    gint64 k = (gint64)(lo / step);

    if (k * step < lo) {
        k++;
    }
    g_string_append_printf(o, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" "
                           "y2=\"%.1f\" stroke=\"#9aa3b2\"/>", TL_PX,
                           TL_PX + TL_PW, y1, y1);
    for (v = k * step; v <= hi + step * 1e-9; k++, v = k * step) {
        double x = tl_x(tl, (gint64)(v * 1e6));

        g_string_append_printf(o, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                               "y2=\"%.1f\" stroke=\"#e3e6ec\"/>"
                               "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" "
                               "y2=\"%.1f\" stroke=\"#9aa3b2\"/>"
                               "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                               "text-anchor=\"middle\">%.*f</text>",
                               x, x, y0, y1, x, x, y1, y1 + 4, x, y1 + 16,
                               dec, v);
    }
    g_string_append_printf(o, "<text x=\"%d\" y=\"%.1f\" font-size=\"11.5\" "
                           "text-anchor=\"middle\">guest virtual time (ms)"
                           "</text>", TL_PX + TL_PW / 2, y1 + 34);
}

static void tl_line_rect(GString *o, const Timeline *tl, const TlLine *l)
{
    double x0 = tl_x(tl, l->t0), x1 = tl_x(tl, l->t1);

    g_string_append_printf(o, "<rect class=\"v%u\" x=\"%.1f\" y=\"%.1f\" "
                           "width=\"%.1f\" height=\"%d\"><title>%s",
                           l->style, x0, lane_y(l->lane),
                           MAX(x1 - x0, tl->no_bytes ? 1.5 : 1.0),
                           TL_LANE_H, line_styles[l->style].name);
    if (l->style == N_LINE_STYLES - 1) {
        g_string_append(o, " (");
        esc(o, l->lv->verdict);
        g_string_append(o, ")");
    }
    if (l->lv->has_seq) {
        g_string_append_printf(o, ", seq %" G_GUINT64_FORMAT, l->lv->seq);
    }
    if (l->lv->has_lat) {
        g_string_append_printf(o, ", latency %.3f ms", l->lv->lat_ns / 1e6);
    }
    g_string_append_printf(o, ", %.3f\xe2\x80\x93%.3f ms\n", l->t0 / 1e6,
                           l->t1 / 1e6);
    line_text(o, tl->s, l->lv);
    g_string_append(o, "</title></rect>");
}

/*
 * Too many lines to draw one by one: per lane and pixel column, the
 * verdict that takes precedence, drawn as runs of equal columns.
 */
static void tl_lines_bucketed(GString *o, const Timeline *tl)
{
    guint ncol = TL_PW, nv = N_LINE_STYLES, lane, c, v, i;
    g_autofree guint32 *count = g_new0(guint32,
                                       (gsize)tl->nlanes * ncol * nv);
    g_autofree gint8 *top = g_new(gint8, (gsize)tl->nlanes * ncol);

    memset(top, -1, (gsize)tl->nlanes * ncol);
    for (i = 0; i < tl->lines->len; i++) {
        const TlLine *l = &g_array_index(tl->lines, TlLine, i);
        guint c0 = MIN((guint)(tl_x(tl, l->t0) - TL_PX), ncol - 1);
        guint c1 = MIN((guint)(tl_x(tl, l->t1) - TL_PX), ncol - 1);
        gint8 *t = &top[l->lane * ncol];

        count[((gsize)l->lane * ncol + c0) * nv + l->style]++;
        for (c = c0; c <= c1; c++) {
            if (t[c] < 0 || line_styles[l->style].rank >
                            line_styles[(int)t[c]].rank) {
                t[c] = l->style;
            }
        }
    }
    for (lane = 0; lane < tl->nlanes; lane++) {
        const gint8 *t = &top[lane * ncol];

        for (c = 0; c < ncol; c++) {
            guint64 sum[N_LINE_STYLES] = { 0 }, n = 0;
            guint end;

            if (t[c] < 0) {
                continue;
            }
            for (end = c; end + 1 < ncol && t[end + 1] == t[c]; end++) {
            }
            for (i = c; i <= end; i++) {
                for (v = 0; v < nv; v++) {
                    sum[v] += count[((gsize)lane * ncol + i) * nv + v];
                    n += count[((gsize)lane * ncol + i) * nv + v];
                }
            }
            g_string_append_printf(o, "<rect class=\"v%d\" x=\"%u\" "
                                   "y=\"%.1f\" width=\"%u\" height=\"%d\">"
                                   "<title>%" G_GUINT64_FORMAT " lines "
                                   "starting %.3f\xe2\x80\x93%.3f ms:",
                                   t[c], TL_PX + c, lane_y(lane),
                                   end - c + 1, TL_LANE_H, n,
                                   (tl->tmin + (double)c * (tl->tmax - tl->tmin)
                                    / ncol) / 1e6,
                                   (tl->tmin + (double)(end + 1) *
                                    (tl->tmax - tl->tmin) / ncol) / 1e6);
            for (v = 0; v < nv; v++) {
                if (sum[v]) {
                    g_string_append_printf(o, " %s %" G_GUINT64_FORMAT,
                                           line_styles[v].name, sum[v]);
                }
            }
            g_string_append(o, "</title></rect>");
            c = end;
        }
    }
}

static void tl_ticks(GString *o, const Timeline *tl, double y)
{
    gboolean dense = tl->ticks->len > TL_TICKS_MAX;
    g_autofree gboolean *drawn = g_new0(gboolean, TL_PW + 1);
    guint i;

    /* Few enough: each record joined to the end of its line on the wire. */
    for (i = 0; tl->ticks->len <= TL_LINKS_MAX && i < tl->ticks->len; i++) {
        const TlTick *tk = &g_array_index(tl->ticks, TlTick, i);
        const TlLine *l = &g_array_index(tl->lines, TlLine, tk->line);

        g_string_append_printf(o, "<line class=\"cn\" x1=\"%.1f\" "
                               "y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                               tl_x(tl, tk->t), y + TL_RING_H - 6,
                               tl_x(tl, l->t1), lane_y(l->lane));
    }
    for (i = 0; i < tl->ticks->len; i++) {
        const TlTick *tk = &g_array_index(tl->ticks, TlTick, i);
        double x = tl_x(tl, tk->t);
        guint col = MIN((guint)(x - TL_PX), TL_PW);

        /* Dense: one tick per pixel column is all the eye can see. */
        if (dense && drawn[col]) {
            continue;
        }
        drawn[col] = TRUE;
        g_string_append_printf(o, "<rect class=\"tk\" x=\"%.1f\" y=\"%.1f\" "
                               "width=\"1.4\" height=\"%d\">", x - 0.7, y + 6,
                               TL_RING_H - 12);
        if (!dense) {
            g_string_append_printf(o, "<title>record %" G_GUINT64_FORMAT
                                   " logged at %.3f ms</title>", tk->seq,
                                   tk->t / 1e6);
        }
        g_string_append(o, "</rect>");
    }
}

/* Records that have no time on the wire: red marks in their own column. */
static void tl_lost_column(GString *o, const Timeline *tl, double y)
{
    double x0 = TL_PX + TL_PW + 14, w = TL_W - x0 - 2;
    guint i, room = (w - 8) / 3;

    g_string_append_printf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                           "height=\"%d\" rx=\"3\" fill=\"%s\"/>"
                           "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10.5\" "
                           "text-anchor=\"middle\" style=\"fill:#7a8294\">"
                           "never on the wire</text>",
                           x0, y, w, TL_RING_H,
                           tl->lost->len ? "#fde8e8" : "#f3f4f6",
                           x0 + w / 2, y - 6);
    if (!tl->lost->len) {
        g_string_append_printf(o, "<text x=\"%.1f\" y=\"%.1f\" "
                               "font-size=\"11\" text-anchor=\"middle\" "
                               "style=\"fill:#7a8294\">none</text>",
                               x0 + w / 2, y + TL_RING_H / 2 + 4);
        return;
    }
    for (i = 0; i < tl->lost->len && i < room; i++) {
        const TlLost *l = &g_array_index(tl->lost, TlLost, i);

        g_string_append_printf(o, "<rect class=\"lost\" x=\"%.1f\" "
                               "y=\"%.1f\" width=\"2\" height=\"%d\">"
                               "<title>%s%s seq %" G_GUINT64_FORMAT,
                               x0 + 4 + i * 3, y + 4, TL_RING_H - 8,
                               l->l1 ? "level 1: " : "", l->verdict, l->seq);
        if (l->count > 1) {
            g_string_append_printf(o, "\xe2\x80\x93%" G_GUINT64_FORMAT,
                                   l->seq + l->count - 1);
        }
        g_string_append(o, "</title></rect>");
    }
}

static void tl_lost_list(GString *o, const Timeline *tl)
{
    guint i;

    if (!tl->lost->len) {
        return;
    }
    g_string_append_printf(o, "<p class=\"missing\"><b>%" G_GUINT64_FORMAT
                           " record%s did not reach the wire whole:</b> ",
                           tl->lost_records, tl->lost_records == 1 ? "" : "s");
    for (i = 0; i < tl->lost->len && i < MISSING_MAX; i++) {
        const TlLost *l = &g_array_index(tl->lost, TlLost, i);

        g_string_append_printf(o, "%s%s%s %" G_GUINT64_FORMAT, i ? ", " : "",
                               l->l1 ? "L1 " : "", l->verdict, l->seq);
        if (l->count > 1) {
            g_string_append_printf(o, "\xe2\x80\x93%" G_GUINT64_FORMAT,
                                   l->seq + l->count - 1);
        }
    }
    if (tl->lost->len > MISSING_MAX) {
        g_string_append_printf(o, " and %u more ranges", tl->lost->len -
                               MISSING_MAX);
    }
    g_string_append(o, "</p>");
}

static void tl_legend(GString *o, const Timeline *tl)
{
    gboolean used[N_LINE_STYLES] = { FALSE };
    guint i;

    for (i = 0; i < tl->lines->len; i++) {
        used[g_array_index(tl->lines, TlLine, i).style] = TRUE;
    }
    g_string_append(o, "<div class=\"legend\">");
    for (i = 0; i < N_LINE_STYLES; i++) {
        /* The common verdicts always, the rare ones when they occur. */
        if (used[i] || i < 4) {
            g_string_append_printf(o, "<span title=\"%s\"><i style=\""
                                   "background:%s\"></i>line %s</span>",
                                   line_styles[i].meaning,
                                   line_styles[i].color, line_styles[i].name);
        }
    }
    g_string_append(o, "<span><i style=\"background:#3b4a63;width:2px\"></i>"
                    "ring record, at its printk time</span>"
                    "<span><i style=\"background:#d62828;width:3px\"></i>"
                    "record missing, cut or damaged</span></div>");
}

static void timeline_svg(GString *o, const Timeline *tl)
{
    double ring_y = TL_TOP, bottom = lane_y(tl->nlanes) - TL_LANE_GAP + 6;
    gboolean pass;
    guint i;

    g_string_append_printf(o, "<svg class=\"timeline\" viewBox=\"0 0 %d %.0f\" "
                           "role=\"img\" aria-label=\"timeline\"><style>",
                           TL_W, bottom + 44);
    for (i = 0; i < N_LINE_STYLES; i++) {
        g_string_append_printf(o, ".v%u{fill:%s}", i, line_styles[i].color);
    }
    g_string_append(o, ".tk{fill:#3b4a63}.lost{fill:#d62828}"
                    ".cn{stroke:#3b4a63;stroke-opacity:.28;stroke-width:.8}"
                    ".lane{fill:#f3f4f6}</style>");

    /* Lanes, grid and axis underneath everything */
    g_string_append_printf(o, "<rect class=\"lane\" x=\"%d\" y=\"%.1f\" "
                           "width=\"%d\" height=\"%d\" rx=\"3\"/>"
                           "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" "
                           "text-anchor=\"end\">ring records</text>",
                           TL_PX, ring_y, TL_PW, TL_RING_H, TL_PX - 10,
                           ring_y + TL_RING_H / 2 + 4);
    for (i = 0; i < tl->nlanes; i++) {
        g_string_append_printf(o, "<rect class=\"lane\" x=\"%d\" y=\"%.1f\" "
                               "width=\"%d\" height=\"%d\" rx=\"2\"/>"
                               "<text x=\"%d\" y=\"%.1f\" font-size=\"12\" "
                               "text-anchor=\"end\">", TL_PX, lane_y(i),
                               TL_PW, TL_LANE_H, TL_PX - 10,
                               lane_y(i) + TL_LANE_H / 2 + 4);
        if (i < tl->ncpus) {
            g_string_append_printf(o, "vCPU %u", i);
        } else {
            g_string_append(o, tl->ncpus ? "other" : "console");
        }
        g_string_append(o, "</text>");
    }
    tl_axis(o, tl, ring_y, bottom);

    tl_ticks(o, tl, ring_y);
    if (!tl->has_offset) {
        g_string_append_printf(o, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" "
                               "style=\"fill:#7a8294\">no line carried a "
                               "printk time stamp</text>", TL_PX + 8,
                               ring_y + TL_RING_H / 2 + 4);
    }
    tl_lost_column(o, tl, ring_y);

    if (tl->lines->len > TL_DETAIL_MAX) {
        tl_lines_bucketed(o, tl);
    } else {
        /* Lines with a problem last, so that nothing covers them. */
        for (pass = 0; pass < 2; pass++) {
            for (i = 0; i < tl->lines->len; i++) {
                const TlLine *l = &g_array_index(tl->lines, TlLine, i);
                gboolean problem = line_styles[l->style].rank > 3 ||
                                   l->style == N_LINE_STYLES - 1;

                if (problem == pass) {
                    tl_line_rect(o, tl, l);
                }
            }
        }
    }
    g_string_append(o, "</svg>");
}

static void timeline_header(GString *o, const RsHtmlReport *r,
                            const char *rundir, const Case *c,
                            const Timeline *tl)
{
    guint counts[N_LINE_STYLES] = { 0 }, i;
    gboolean first = TRUE;

    g_string_append(o, "<dl class=\"kv\"><dt>run</dt><dd class=\"mono\">");
    esc(o, rundir);
    g_string_append(o, "</dd>");
    if (c) {
        g_string_append_printf(o, "<dt>case</dt><dd><span class=\"pill\" "
                               "style=\"background:%s\">%s</span> %s case %"
                               G_GUINT64_FORMAT ", ended ",
                               class_colors[c->klass],
                               rs_class_names[c->klass],
                               c->cold ? "cold" : "snapshot", c->index);
        esc(o, c->ended ? c->ended : "?");
        if (!c->panic_line) {
            g_string_append(o, " <span class=\"err\">(the panic line never "
                            "reached the wire)</span>");
        }
        g_string_append_printf(o, ", %" G_GINT64_FORMAT " vCPU%s, ", c->smp,
                               c->smp == 1 ? "" : "s");
        kernel_label_html(o, r->kernels->pdata[c->kernel]);
        g_string_append(o, "</dd><dt>scenario</dt><dd class=\"mono\">");
        esc(o, c->words);
        g_string_append(o, "</dd>");
    }
    for (i = 0; i < tl->lines->len; i++) {
        counts[g_array_index(tl->lines, TlLine, i).style]++;
    }
    g_string_append_printf(o, "<dt>lines</dt><dd>%u:", tl->lines->len);
    for (i = 0; i < N_LINE_STYLES; i++) {
        if (counts[i]) {
            g_string_append_printf(o, "%s %s %u", first ? "" : ",",
                                   line_styles[i].name, counts[i]);
            first = FALSE;
        }
    }
    g_string_append_printf(o, "</dd><dt>span</dt><dd>%.3f\xe2\x80\x93%.3f ms "
                           "of guest virtual time", tl->tmin / 1e6,
                           tl->tmax / 1e6);
    if (tl->has_offset) {
        g_string_append_printf(o, "; records placed at printk time + %.3f "
                               "ms, the smallest (virtual time &minus; "
                               "printk time) of any line", tl->offset / 1e6);
    }
    g_string_append(o, "</dd></dl>");
}

/* The run directory of a case, if it was kept. */
static char *case_run_dir(const RsHtmlReport *r, const Case *c)
{
    const Dir *d = r->dirs->pdata[c->dir];
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

static const Case *case_of_run_dir(const RsHtmlReport *r, const char *rundir)
{
    g_autofree char *want = realpath(rundir, NULL);
    guint i;

    for (i = 0; want && i < r->cases->len; i++) {
        g_autofree char *dir = case_run_dir(r, r->cases->pdata[i]);
        g_autofree char *real = dir ? realpath(dir, NULL) : NULL;

        if (real && g_str_equal(real, want)) {
            return r->cases->pdata[i];
        }
    }
    return NULL;
}

static gboolean timeline_load(Timeline *tl, const char *rundir, guint smp,
                              GError **error)
{
    g_autofree char *events = g_build_filename(rundir, "events.jsonl", NULL);

    memset(tl, 0, sizeof(*tl));
    if (!g_file_test(events, G_FILE_TEST_IS_REGULAR)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: no events.jsonl (not a run directory)", rundir);
        return FALSE;
    }
    tl->s = rs_event_stream_load(events, error);
    if (!tl->s) {
        return FALSE;
    }
    if (!tl->s->saw_start) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: empty event stream", events);
        timeline_clear(tl);
        return FALSE;
    }
    timeline_build(tl, smp);
    return TRUE;
}

static gboolean timeline_section(GString *o, const RsHtmlReport *r,
                                 const char *chosen, GError **error)
{
    g_autofree char *rundir = NULL;
    const Case *c = NULL;
    Timeline tl = { 0 };
    gboolean loaded = FALSE;
    guint pass, i;

    g_string_append(o, "<section class=\"card\"><h2>Timeline of one run"
                    "</h2>");
    if (chosen) {
        c = case_of_run_dir(r, chosen);
        if (!timeline_load(&tl, chosen, c ? c->smp : 1, error)) {
            return FALSE;
        }
        rundir = g_strdup(chosen);
        loaded = TRUE;
    }
    /* The first failing case kept, else any kept run. */
    for (pass = 0; pass < 2 && !loaded; pass++) {
        for (i = 0; i < r->cases->len && !loaded; i++) {
            g_autoptr(GError) local = NULL;

            c = r->cases->pdata[i];
            if ((c->klass == RS_CLASS_CLEAN) == !pass) {
                continue;
            }
            g_free(rundir);
            rundir = case_run_dir(r, c);
            if (!rundir) {
                continue;
            }
            loaded = timeline_load(&tl, rundir, c->smp, &local);
            if (!loaded) {
                g_printerr("ringside report: timeline: %s\n",
                           local->message);
            }
        }
    }
    if (!loaded) {
        g_string_append(o, "<p class=\"dim\">No run directory was kept to "
                        "draw.</p></section>");
        return TRUE;
    }
    timeline_header(o, r, rundir, c, &tl);
    tl_legend(o, &tl);
    timeline_svg(o, &tl);
    tl_lost_list(o, &tl);
    g_string_append(o, "<p class=\"note\">");
    if (tl.no_bytes) {
        g_string_append(o, "This run has no byte events (the device ran "
                        "with tx-events=off, as ringside fuzz runs unless "
                        "given --wire-events): each console line is a mark "
                        "at the time of its last byte on the wire, in the "
                        "lane of the vCPU that bracketed its record (level "
                        "1), else in one lane.");
    } else {
        g_string_append(o, "Each console line is drawn from its first to its "
                        "last byte on the wire, in the lane of the vCPU that "
                        "wrote its first byte.");
    }
    if (tl.lines->len > TL_DETAIL_MAX) {
        g_string_append(o, " There are too many lines to draw one by one: "
                        "each pixel shows the verdict that matters most.");
    }
    if (tl.ticks->len && tl.ticks->len <= TL_LINKS_MAX) {
        g_string_append(o, " Thin lines join a record to the end of its line "
                        "on the wire; the offset between the clocks is one "
                        "for the whole run, so a drift between them shows "
                        "as a slope.");
    }
    g_string_append(o, " Hover for details.</p></section>");
    timeline_clear(&tl);
    return TRUE;
}

gboolean rs_html_report_write(RsHtmlReport *r, const char *path,
                              const char *timeline, GError **error)
{
    g_autoptr(GString) o = g_string_sized_new(64 * 1024);
    g_autoptr(GDateTime) now = g_date_time_new_now_local();
    g_autofree char *when = g_date_time_format(now, "%Y-%m-%d %H:%M");
    guint64 total = r->total[0] + r->total[1];
    guint i;

    g_ptr_array_sort(r->cases, case_order);
    g_string_append_printf(o, "<!DOCTYPE html>\n<html lang=\"en\"><head>"
                           "<meta charset=\"utf-8\"><meta name=\"viewport\" "
                           "content=\"width=device-width,initial-scale=1\">"
                           "<title>ringside fuzz report</title><style>%s"
                           "</style></head><body><main>"
                           "<h1>ringside fuzz report</h1><p class=\"sub\">%"
                           G_GUINT64_FORMAT " cases (%" G_GUINT64_FORMAT
                           " failing) on %u kernel%s from ", page_css, total,
                           r->failing[0] + r->failing[1], r->kernels->len,
                           r->kernels->len == 1 ? "" : "s");
    for (i = 0; i < r->dirs->len; i++) {
        g_string_append(o, i ? ", <span class=\"mono\">" :
                               "<span class=\"mono\">");
        esc(o, ((Dir *)r->dirs->pdata[i])->path);
        g_string_append(o, "</span>");
    }
    g_string_append(o, " &middot; generated ");
    esc(o, when);
    g_string_append(o, "</p>");

    summary_section(o, r);
    histogram_section(o, r);
    failing_section(o, r);
    if (!timeline_section(o, r, timeline, error)) {
        return FALSE;
    }
    g_string_append(o, "</main></body></html>\n");
    return g_file_set_contents(path, o->str, o->len, error);
}
