/*
 * A panic scenario for the guest's test module (test_printk_panic, patch
 * 0005): which case it runs on how many vCPUs, and the printk storm around
 * it.  ringside fuzz draws them from a seed, hands them to the guest
 * through ringside-serial's mailbox, and saves failing ones as case files.
 */
#ifndef RINGSIDE_SCENARIO_H
#define RINGSIDE_SCENARIO_H

#include <glib.h>

#define RS_SCENARIO_SMP_MAX 4

typedef struct {
    char test[16];          /* the module's case: panic-task, ... */
    guint smp;              /* vCPUs, 1..RS_SCENARIO_SMP_MAX */
    guint storm;            /* storming CPUs, < smp */
    guint storm_ms, storm_len, storm_level, storm_gap_us;
    guint warns;            /* warn-storm */
    guint pending;          /* pending-panic */
    guint stress_ms;        /* stress-panic */
} RsScenario;

/* The module's cases a scenario may run, and which ones fuzz draws from. */
extern const char *const rs_scenario_tests[];
#define RS_SCENARIO_DEFAULT_TESTS \
    "panic-task,panic-softirq,panic-hardirq,panic-nmi,port-lock," \
    "nested-oops,pending-panic,warn-storm,stress-panic"

/* Check a comma-separated list of the module's cases. */
gboolean rs_scenario_tests_parse(const char *list, GStrv *tests,
                                 GError **error);

/* Scenario @index of the run with @seed: the same pair, the same scenario. */
void rs_scenario_generate(guint64 seed, guint64 index,
                          const char *const *tests, RsScenario *sc);

/* Every value within the bounds the module and the harness accept. */
gboolean rs_scenario_check(const RsScenario *sc, GError **error);

/* The words /init reads from the mailbox ("ringside.panic=... ..."). */
char *rs_scenario_words(const RsScenario *sc);

/*
 * Simpler variants of @sc, one change each (fewer CPUs, a shorter or
 * quieter storm, a plainer context), simplest change first.
 */
GArray *rs_scenario_shrink(const RsScenario *sc);

/*
 * Case files: a key file with the scenario, where it came from and what
 * happened ([scenario], [origin]).  @origin's keys are written as given.
 */
/* A case file (a path with a /, or a name ending in .case) rather than
 * the name of one of /init's cases. */
gboolean rs_case_file_named(const char *arg);

gboolean rs_scenario_save(const RsScenario *sc, GHashTable *origin,
                          const char *path, GError **error);
gboolean rs_scenario_load(const char *path, RsScenario *sc,
                          GHashTable **origin, GError **error);

#endif
