/* Shrinking a failing scenario while its failure class holds. */
#ifndef RINGSIDE_MINIMIZE_H
#define RINGSIDE_MINIMIZE_H

#include "fuzz/fuzzrun.h"

/*
 * Check that @sc fails with @klass in one of @tries runs, then take each
 * simpler variant (rs_scenario_shrink) that still does, until none does.
 * Each run is reported on stdout; *@runs counts them.  Returns FALSE if
 * @sc itself did not fail (a race too rare for @tries); else @sc holds
 * the smallest scenario found.
 */
gboolean rs_fuzz_minimize(RsFuzzEnv *env, RsScenario *sc, RsClass klass,
                          guint tries, guint *runs);

#endif
