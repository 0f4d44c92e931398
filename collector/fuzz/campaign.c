/* A fuzz campaign's results.jsonl as an append-only journal: see campaign.h. */
#include "fuzz/campaign.h"
#include "errors.h"
#include "fuzz/fuzzrun.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

static gint64 member_int(JsonObject *o, const char *name, gint64 dflt)
{
    JsonNode *n = json_object_get_member(o, name);

    return n && JSON_NODE_HOLDS_VALUE(n) &&
           json_node_get_value_type(n) == G_TYPE_INT64 ?
           json_node_get_int(n) : dflt;
}

static const char *member_str(JsonObject *o, const char *name)
{
    JsonNode *n = json_object_get_member(o, name);

    return n && JSON_NODE_HOLDS_VALUE(n) &&
           json_node_get_value_type(n) == G_TYPE_STRING ?
           json_node_get_string(n) : NULL;
}

static JsonObject *parse_object(JsonParser *p, const char *text, gssize len)
{
    JsonNode *root;

    if (!json_parser_load_from_data(p, text, len, NULL)) {
        return NULL;
    }
    root = json_parser_get_root(p);
    return root && JSON_NODE_HOLDS_OBJECT(root) ?
           json_node_get_object(root) : NULL;
}

gboolean rs_campaign_recorded_seed(const char *dir, guint64 *seed)
{
    g_autofree char *fuzz = g_build_filename(dir, "fuzz.json", NULL);
    g_autofree char *results = g_build_filename(dir, "results.jsonl", NULL);
    g_autoptr(JsonParser) p = json_parser_new_immutable();
    g_autofree char *text = NULL;
    const char *nl;
    JsonObject *o;
    gint64 s;

    if (g_file_get_contents(fuzz, &text, NULL, NULL) &&
        (o = parse_object(p, text, -1)) &&
        (s = member_int(o, "seed", -1)) >= 0) {
        *seed = s;
        return TRUE;
    }
    g_clear_pointer(&text, g_free);
    if (g_file_get_contents(results, &text, NULL, NULL) &&
        (nl = strchr(text, '\n')) &&
        (o = parse_object(p, text, nl - text)) &&
        (s = member_int(o, "seed", -1)) >= 0) {
        *seed = s;
        return TRUE;
    }
    return FALSE;
}

static void campaign_init(RsCampaign *c, const char *dir)
{
    memset(c, 0, sizeof(*c));
    c->dir = g_strdup(dir);
    c->fd = c->lock_fd = -1;
    c->done[0] = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                       NULL);
    c->done[1] = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free,
                                       NULL);
    c->earlier = g_array_new(FALSE, TRUE, sizeof(RsCampaignCase));
}

void rs_campaign_close(RsCampaign *c)
{
    if (c->fd >= 0) {
        close(c->fd);
    }
    if (c->lock_fd >= 0) {
        close(c->lock_fd);     /* and with it the lock */
    }
    g_clear_pointer(&c->done[0], g_hash_table_unref);
    g_clear_pointer(&c->done[1], g_hash_table_unref);
    g_clear_pointer(&c->earlier, g_array_unref);
    g_clear_pointer(&c->dir, g_free);
    c->fd = c->lock_fd = -1;
}

gboolean rs_campaign_is_done(const RsCampaign *c, gboolean cold,
                             guint64 index)
{
    gint64 i = index;

    return g_hash_table_contains(c->done[!!cold], &i);
}

static void mark_done(RsCampaign *c, gboolean cold, guint64 index)
{
    gint64 i = index;

    g_hash_table_add(c->done[!!cold], g_memdup2(&i, sizeof(i)));
}

/* One complete line of results.jsonl: a case of this campaign, recorded. */
static gboolean read_case(RsCampaign *c, const RsCampaignId *id,
                          JsonParser *p, const char *line, gsize len,
                          guint64 lineno, GError **error)
{
    g_autofree char *shard = g_strdup_printf("%u/%u", id->shard_i,
                                             id->shard_n);
    g_autofree char *want = NULL;
    const char *mode, *cls, *sha, *sh, *words;
    RsCampaignCase k = { 0 };
    RsScenario sc;
    JsonObject *o = parse_object(p, line, len);
    JsonNode *faithful;
    gint64 index, seed;

    if (!o) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s/results.jsonl:%" G_GUINT64_FORMAT ": not a JSON "
                    "object: the file is damaged", c->dir, lineno);
        return FALSE;
    }
    index = member_int(o, "index", -1);
    seed = member_int(o, "seed", -1);
    mode = member_str(o, "mode");
    cls = member_str(o, "class");
    sha = member_str(o, "kernel_sha256");
    sh = member_str(o, "shard");
    words = member_str(o, "words");
    if (index < 0 || seed < 0 || !mode || !cls || !sha || !sh || !words ||
        (strcmp(mode, "cold") && strcmp(mode, "snapshot")) ||
        rs_class_from_name(cls) < 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s/results.jsonl:%" G_GUINT64_FORMAT ": not a case "
                    "line of ringside fuzz", c->dir, lineno);
        return FALSE;
    }
    if ((guint64)seed != id->seed || strcmp(sh, shard) ||
        strcmp(sha, id->kernel_sha)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s holds another campaign (seed %" G_GINT64_FORMAT
                    ", shard %s, kernel %.12s; this run: seed %"
                    G_GUINT64_FORMAT ", shard %s, kernel %.12s): resume it "
                    "with its own options, or use another --out", c->dir,
                    seed, sh, sha, id->seed, shard, id->kernel_sha);
        return FALSE;
    }
    rs_scenario_generate(id->seed, index, id->tests, &sc);
    want = rs_scenario_words(&sc);
    if (strcmp(words, want)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: case %" G_GINT64_FORMAT " was \"%s\", this run's "
                    "is \"%s\": resume with the --tests of the run that "
                    "made it, or use another --out", c->dir, index, words,
                    want);
        return FALSE;
    }
    k.index = index;
    k.cold = !strcmp(mode, "cold");
    if (rs_campaign_is_done(c, k.cold, k.index)) {
        /* An older ringside appended reruns: the first one counts. */
        return TRUE;
    }
    k.klass = rs_class_from_name(cls);
    k.judged = !json_object_has_member(o, "error");
    faithful = json_object_get_member(o, "faithful");
    k.faithful = !faithful || !JSON_NODE_HOLDS_VALUE(faithful) ||
                 json_node_get_boolean(faithful);
    k.wall_s = json_object_get_double_member_with_default(o, "wall_s", 0);
    mark_done(c, k.cold, k.index);
    g_array_append_val(c->earlier, k);
    return TRUE;
}

/* Read the recorded cases; cut a torn last line off the file. */
static gboolean read_results(RsCampaign *c, const RsCampaignId *id,
                             const char *path, GError **error)
{
    g_autoptr(GError) local = NULL;
    g_autoptr(GMappedFile) m = NULL;
    g_autoptr(JsonParser) p = json_parser_new_immutable();
    const char *data, *line, *end, *nl;
    guint64 lineno = 0;
    gsize len;

    m = g_mapped_file_new(path, FALSE, &local);
    if (!m) {
        if (g_error_matches(local, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
            return TRUE;
        }
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "%s: %s", path,
                    local->message);
        return FALSE;
    }
    data = g_mapped_file_get_contents(m);
    len = g_mapped_file_get_length(m);
    end = data + len;
    for (line = data; line < end; line = nl + 1) {
        nl = memchr(line, '\n', end - line);
        if (!nl) {
            /* The write of the last case was cut: it never happened. */
            c->torn_bytes = end - line;
            if (truncate(path, line - data) < 0) {
                g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                            "%s: cutting its torn last line: %s", path,
                            g_strerror(errno));
                return FALSE;
            }
            break;
        }
        lineno++;
        if (nl == line) {
            continue;
        }
        if (memchr(line, '\0', nl - line)) {
            g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                        "%s:%" G_GUINT64_FORMAT ": NUL byte: the file is "
                        "damaged", path, lineno);
            return FALSE;
        }
        if (!read_case(c, id, p, line, nl - line, lineno, error)) {
            return FALSE;
        }
    }
    return TRUE;
}

/* "12" or "12-cold": the case a run directory belongs to. */
static gboolean run_dir_case(const char *name, guint64 *index,
                             gboolean *cold)
{
    char *end;

    if (!g_ascii_isdigit(*name)) {
        return FALSE;
    }
    *index = g_ascii_strtoull(name, &end, 10);
    *cold = !strcmp(end, "-cold");
    return !*end || *cold;
}

/* Run directories and case files of cases that never got their line. */
static void clear_unfinished(RsCampaign *c)
{
    g_autofree char *runs = g_build_filename(c->dir, "runs", NULL);
    g_autofree char *cases = g_build_filename(c->dir, "cases", NULL);
    g_autoptr(GDir) d = g_dir_open(runs, 0, NULL);
    const char *name;

    while (d && (name = g_dir_read_name(d))) {
        guint64 index;
        gboolean cold;

        if (run_dir_case(name, &index, &cold) &&
            !rs_campaign_is_done(c, cold, index)) {
            g_autofree char *p = g_build_filename(runs, name, NULL);

            rs_rmtree(p);
            c->unfinished++;
        }
    }
    g_clear_pointer(&d, g_dir_close);
    d = g_dir_open(cases, 0, NULL);
    while (d && (name = g_dir_read_name(d))) {
        const char *dash = strrchr(name, '-');
        char *end;
        guint64 index;

        if (!dash || !g_str_has_suffix(name, ".case") ||
            !g_ascii_isdigit(dash[1])) {
            continue;
        }
        index = g_ascii_strtoull(dash + 1, &end, 10);
        if (!strcmp(end, ".case") && !rs_campaign_is_done(c, FALSE, index)) {
            g_autofree char *p = g_build_filename(cases, name, NULL);

            g_unlink(p);
        }
    }
}

gboolean rs_campaign_open(RsCampaign *c, const char *dir,
                          const RsCampaignId *id, GError **error)
{
    g_autofree char *lock = g_build_filename(dir, "fuzz.lock", NULL);
    g_autofree char *results = g_build_filename(dir, "results.jsonl", NULL);

    campaign_init(c, dir);
    c->lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (c->lock_fd < 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND, "%s: %s", lock,
                    g_strerror(errno));
        goto fail;
    }
    if (flock(c->lock_fd, LOCK_EX | LOCK_NB) < 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    errno == EWOULDBLOCK ?
                    "%s is in use by another ringside fuzz run" : "%s: %s",
                    dir, g_strerror(errno));
        goto fail;
    }
    if (!read_results(c, id, results, error)) {
        goto fail;
    }
    clear_unfinished(c);
    c->fd = open(results, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (c->fd < 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND, "%s: %s", results,
                    g_strerror(errno));
        goto fail;
    }
    return TRUE;
fail:
    rs_campaign_close(c);
    return FALSE;
}

gboolean rs_campaign_append(RsCampaign *c, gboolean cold, guint64 index,
                            const char *line, gsize len, GError **error)
{
    struct stat st;
    gsize off = 0;

    g_return_val_if_fail(len > 0 && line[len - 1] == '\n', FALSE);
    if (fstat(c->fd, &st) < 0) {
        st.st_size = -1;
    }
    while (off < len) {
        gssize n = write(c->fd, line + off, len - off);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            int e = n < 0 ? errno : ENOSPC;

            /* No half line left behind for the next case to follow. */
            if (st.st_size >= 0 && ftruncate(c->fd, st.st_size) < 0) {
                /* a resumed run cuts it */
            }
            g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND,
                        "%s/results.jsonl: %s", c->dir, g_strerror(e));
            return FALSE;
        }
        off += n;
    }
    fdatasync(c->fd);
    mark_done(c, cold, index);
    return TRUE;
}

void rs_campaign_clear_case(const RsCampaign *c, gboolean cold,
                            guint64 index)
{
    g_autofree char *run = g_strdup_printf("%s/runs/%" G_GUINT64_FORMAT "%s",
                                           c->dir, index, cold ? "-cold" : "");
    int k;

    if (g_file_test(run, G_FILE_TEST_IS_DIR)) {
        rs_rmtree(run);
    }
    for (k = 0; !cold && k < RS_N_CLASSES; k++) {
        g_autofree char *p = g_strdup_printf("%s/cases/%s-%" G_GUINT64_FORMAT
                                             ".case", c->dir,
                                             rs_class_names[k], index);

        g_unlink(p);
    }
}
