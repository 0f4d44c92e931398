/* Panic scenarios: drawn from a seed, checked, saved and loaded. */
#include "fuzz/scenario.h"
#include "errors.h"

#include <string.h>

const char *const rs_scenario_tests[] = {
    "panic-task", "panic-softirq", "panic-hardirq", "panic-nmi",
    "port-lock", "nested-oops", "pending-panic", "warn-storm",
    "stress-panic", "hardlockup", NULL,
};

/* A plainer context for each of the panic contexts, for shrinking. */
static const char *const simpler_test[][2] = {
    { "panic-nmi", "panic-hardirq" },
    { "panic-hardirq", "panic-softirq" },
    { "panic-softirq", "panic-task" },
    { "nested-oops", "panic-task" },
    { "port-lock", "panic-task" },
    { "pending-panic", "panic-task" },
    { "warn-storm", "panic-task" },
    { "stress-panic", "panic-task" },
};

/* Bounds: what the module accepts, and what keeps a case short. */
#define STORM_MS_MAX    2000
#define STORM_LEN_MAX   512
#define STORM_GAP_MAX   100000
#define WARNS_MAX       1000
#define PENDING_MAX     5000
#define STRESS_MS_MAX   2000

static gboolean known_test(const char *name)
{
    return g_strv_contains(rs_scenario_tests, name);
}

gboolean rs_scenario_tests_parse(const char *list, GStrv *tests,
                                 GError **error)
{
    g_auto(GStrv) v = g_strsplit(list, ",", -1);
    guint i;

    if (!v[0]) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "no cases given");
        return FALSE;
    }
    for (i = 0; v[i]; i++) {
        if (!known_test(v[i])) {
            g_autofree char *known = g_strjoinv(", ",
                                                (GStrv)rs_scenario_tests);

            g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                        "unknown case \"%s\" (known: %s)", v[i], known);
            return FALSE;
        }
    }
    *tests = g_steal_pointer(&v);
    return TRUE;
}

void rs_scenario_generate(guint64 seed, guint64 index,
                          const char *const *tests, RsScenario *sc)
{
    guint32 key[4] = { seed, seed >> 32, index, index >> 32 };
    g_autoptr(GRand) r = g_rand_new_with_seed_array(key, G_N_ELEMENTS(key));
    /* Mostly short storms and cases: a case is cheap, so many of them are. */
    static const guint storm_ms[] = { 0, 5, 20, 50, 100 };
    guint ntests = g_strv_length((GStrv)tests);

    memset(sc, 0, sizeof(*sc));
    g_strlcpy(sc->test, tests[g_rand_int_range(r, 0, ntests)],
              sizeof(sc->test));
    sc->smp = g_rand_int_range(r, 1, RS_SCENARIO_SMP_MAX + 1);
    /* Two CPUs at least where another one has a part to play. */
    if (sc->smp == 1 && !strcmp(sc->test, "port-lock")) {
        sc->smp = 2;
    }
    sc->storm = g_rand_int_range(r, 0, sc->smp);
    sc->storm_ms = storm_ms[g_rand_int_range(r, 0, G_N_ELEMENTS(storm_ms))];
    /* Lengths spread over 1..512, short ones likelier. */
    sc->storm_len = 1 + g_rand_int_range(r, 0, 1u << g_rand_int_range(r, 3,
                                                                     10));
    sc->storm_level = g_rand_int_range(r, 0, 8);
    sc->storm_gap_us = g_rand_boolean(r) ? 0 :
                       (1u << g_rand_int_range(r, 3, 12));
    sc->warns = g_rand_int_range(r, 5, 51);
    sc->pending = g_rand_int_range(r, 10, 501);
    sc->stress_ms = g_rand_int_range(r, 50, 301);
}

gboolean rs_scenario_check(const RsScenario *sc, GError **error)
{
    const char *bad = NULL;

    if (!known_test(sc->test)) {
        bad = "test";
    } else if (sc->smp < 1 || sc->smp > RS_SCENARIO_SMP_MAX) {
        bad = "smp";
    } else if (sc->storm >= sc->smp) {
        bad = "storm";
    } else if (sc->storm_ms > STORM_MS_MAX) {
        bad = "storm_ms";
    } else if (sc->storm_len < 1 || sc->storm_len > STORM_LEN_MAX) {
        bad = "storm_len";
    } else if (sc->storm_level > 7) {
        bad = "storm_level";
    } else if (sc->storm_gap_us > STORM_GAP_MAX) {
        bad = "storm_gap_us";
    } else if (sc->warns > WARNS_MAX) {
        bad = "warns";
    } else if (sc->pending > PENDING_MAX) {
        bad = "pending";
    } else if (sc->stress_ms > STRESS_MS_MAX) {
        bad = "stress_ms";
    }
    if (bad) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "scenario: %s out of range (smp 1..%d, storm < smp, "
                    "storm_ms <= %d, storm_len 1..%d, storm_level 0..7, "
                    "storm_gap_us <= %d, warns <= %d, pending <= %d, "
                    "stress_ms <= %d, test one of the module's cases)", bad,
                    RS_SCENARIO_SMP_MAX, STORM_MS_MAX, STORM_LEN_MAX,
                    STORM_GAP_MAX, WARNS_MAX, PENDING_MAX, STRESS_MS_MAX);
        return FALSE;
    }
    return TRUE;
}

char *rs_scenario_words(const RsScenario *sc)
{
    GString *w = g_string_new(NULL);

    g_string_append_printf(w, "ringside.panic=%s test_printk_panic.storm=%u "
                           "test_printk_panic.storm_ms=%u "
                           "test_printk_panic.storm_len=%u "
                           "test_printk_panic.storm_level=%u "
                           "test_printk_panic.storm_gap_us=%u",
                           sc->test, sc->storm, sc->storm_ms, sc->storm_len,
                           sc->storm_level, sc->storm_gap_us);
    if (!strcmp(sc->test, "warn-storm")) {
        g_string_append_printf(w, " test_printk_panic.warns=%u", sc->warns);
    } else if (!strcmp(sc->test, "pending-panic")) {
        g_string_append_printf(w, " test_printk_panic.pending=%u",
                               sc->pending);
    } else if (!strcmp(sc->test, "stress-panic")) {
        g_string_append_printf(w, " test_printk_panic.stress_ms=%u",
                               sc->stress_ms);
    }
    return g_string_free(w, FALSE);
}

GArray *rs_scenario_shrink(const RsScenario *sc)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(RsScenario));
    RsScenario c;
    guint i;

#define VARIANT(change) \
    do { c = *sc; change; if (memcmp(&c, sc, sizeof(c))) { \
        g_array_append_val(out, c); } } while (0)
    VARIANT(if (c.storm) { c.storm = 0; });
    VARIANT(if (c.storm > 1) { c.storm--; });
    VARIANT(if (c.smp > 1 && c.smp > c.storm + 1 &&
                (c.smp > 2 || strcmp(c.test, "port-lock"))) { c.smp--; });
    for (i = 0; i < G_N_ELEMENTS(simpler_test); i++) {
        VARIANT(if (!strcmp(c.test, simpler_test[i][0])) {
            g_strlcpy(c.test, simpler_test[i][1], sizeof(c.test)); });
    }
    VARIANT(c.storm_ms /= 2);
    VARIANT(c.storm_len = MAX(1, c.storm_len / 2));
    VARIANT(c.storm_gap_us = 0);
    VARIANT(if (!strcmp(c.test, "warn-storm")) { c.warns /= 2; });
    VARIANT(if (!strcmp(c.test, "pending-panic")) { c.pending /= 2; });
    VARIANT(if (!strcmp(c.test, "stress-panic")) { c.stress_ms /= 2; });
#undef VARIANT
    return out;
}

static const struct {
    const char *key;
    size_t off;
} uint_fields[] = {
    { "smp", G_STRUCT_OFFSET(RsScenario, smp) },
    { "storm", G_STRUCT_OFFSET(RsScenario, storm) },
    { "storm_ms", G_STRUCT_OFFSET(RsScenario, storm_ms) },
    { "storm_len", G_STRUCT_OFFSET(RsScenario, storm_len) },
    { "storm_level", G_STRUCT_OFFSET(RsScenario, storm_level) },
    { "storm_gap_us", G_STRUCT_OFFSET(RsScenario, storm_gap_us) },
    { "warns", G_STRUCT_OFFSET(RsScenario, warns) },
    { "pending", G_STRUCT_OFFSET(RsScenario, pending) },
    { "stress_ms", G_STRUCT_OFFSET(RsScenario, stress_ms) },
};

gboolean rs_case_file_named(const char *arg)
{
    /* Not "a file by that name exists": ./poweroff must not hide poweroff. */
    return strchr(arg, '/') || g_str_has_suffix(arg, ".case");
}

gboolean rs_scenario_save(const RsScenario *sc, GHashTable *origin,
                          const char *path, GError **error)
{
    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_autofree char *words = rs_scenario_words(sc);
    GHashTableIter it;
    gpointer k, v;
    guint i;

    g_key_file_set_comment(kf, NULL, NULL, " ringside case file: rerun with "
                           "'ringside run --case FILE', replay with "
                           "'ringside replay FILE'", NULL);
    g_key_file_set_string(kf, "scenario", "test", sc->test);
    for (i = 0; i < G_N_ELEMENTS(uint_fields); i++) {
        g_key_file_set_uint64(kf, "scenario", uint_fields[i].key,
                              G_STRUCT_MEMBER(guint, sc, uint_fields[i].off));
    }
    g_key_file_set_string(kf, "scenario", "words", words);
    if (origin) {
        g_hash_table_iter_init(&it, origin);
        while (g_hash_table_iter_next(&it, &k, &v)) {
            g_key_file_set_string(kf, "origin", k, v);
        }
    }
    return g_key_file_save_to_file(kf, path, error);
}

gboolean rs_scenario_load(const char *path, RsScenario *sc,
                          GHashTable **origin, GError **error)
{
    g_autoptr(GKeyFile) kf = g_key_file_new();
    g_autofree char *test = NULL;
    g_autoptr(GError) err = NULL;
    guint i;

    memset(sc, 0, sizeof(*sc));
    if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &err)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: not a case file: %s", path, err->message);
        return FALSE;
    }
    if (!g_key_file_has_group(kf, "scenario")) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: not a case file: no [scenario] group", path);
        return FALSE;
    }
    test = g_key_file_get_string(kf, "scenario", "test", &err);
    if (!test || strlen(test) >= sizeof(sc->test)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: no usable [scenario] test", path);
        return FALSE;
    }
    g_strlcpy(sc->test, test, sizeof(sc->test));
    for (i = 0; i < G_N_ELEMENTS(uint_fields); i++) {
        guint64 v = g_key_file_get_uint64(kf, "scenario", uint_fields[i].key,
                                          &err);

        if (err || v > G_MAXUINT) {
            g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                        "%s: [scenario] %s: %s", path, uint_fields[i].key,
                        err ? err->message : "too large");
            return FALSE;
        }
        G_STRUCT_MEMBER(guint, sc, uint_fields[i].off) = v;
    }
    if (!rs_scenario_check(sc, &err)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "%s: %s", path,
                    err->message);
        return FALSE;
    }
    if (origin) {
        g_auto(GStrv) keys = g_key_file_get_keys(kf, "origin", NULL, NULL);

        *origin = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                        g_free);
        for (i = 0; keys && keys[i]; i++) {
            g_hash_table_insert(*origin, g_strdup(keys[i]),
                                g_key_file_get_string(kf, "origin", keys[i],
                                                      NULL));
        }
    }
    return TRUE;
}
