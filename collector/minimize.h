/* Shrinking a failing scenario while its failure class holds. */
#ifndef RINGSIDE_MINIMIZE_H
#define RINGSIDE_MINIMIZE_H

#include "fuzzrun.h"

/*
 * Starting from @sc, take each simpler variant (rs_scenario_shrink) that
 * still fails with @klass in at least one of @tries runs, until none does.
 * Each run is reported on stdout.  Returns the number of runs made; @sc
 * holds the smallest scenario found.
 */
guint rs_fuzz_minimize(RsFuzzEnv *env, RsScenario *sc, RsClass klass,
                       guint tries);

#endif
