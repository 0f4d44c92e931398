/* Shrinking a failing scenario while its failure class holds. */
#include "fuzz/minimize.h"

#include <glib/gstdio.h>
#include <stdio.h>

/* Races do not fail every time: a variant gets @tries chances. */
static gboolean reproduces(RsFuzzEnv *env, const RsScenario *sc,
                           RsClass klass, guint tries, guint *runs)
{
    g_autoptr(GError) err = NULL;
    guint t;

    if (!env->snapshot[sc->smp] &&
        !rs_fuzz_snapshots(env, 1u << sc->smp, &err)) {
        printf("minimize: no snapshot for %u vCPUs (%s); booting cold\n",
               sc->smp, err->message);
    }
    for (t = 0; t < tries; t++) {
        RsFuzzCase c = { .sc = *sc };
        g_autofree char *words = rs_scenario_words(sc);
        gboolean hit;

        c.index = (*runs)++;
        c.cold = !env->snapshot[sc->smp];
        c.dir = g_strdup_printf("%s/minimize/%" G_GUINT64_FORMAT,
                                env->workdir, c.index);
        rs_fuzz_run_one(env, &c);
        hit = c.judged && c.out.klass == klass;
        printf("minimize: run %" G_GUINT64_FORMAT ": smp=%u %s -> %s\n",
               c.index, sc->smp, words,
               c.judged ? rs_class_names[c.out.klass] : c.error);
        fflush(stdout);
        g_free(c.dir);
        g_free(c.error);
        if (hit) {
            return TRUE;
        }
    }
    return FALSE;
}

gboolean rs_fuzz_minimize(RsFuzzEnv *env, RsScenario *sc, RsClass klass,
                          guint tries, guint *runs)
{
    gboolean shrunk = TRUE;

    *runs = 0;
    if (!reproduces(env, sc, klass, tries, runs)) {
        return FALSE;
    }
    while (shrunk) {
        g_autoptr(GArray) variants = rs_scenario_shrink(sc);
        guint i;

        shrunk = FALSE;
        for (i = 0; i < variants->len; i++) {
            const RsScenario *v = &g_array_index(variants, RsScenario, i);

            if (reproduces(env, v, klass, tries, runs)) {
                *sc = *v;
                shrunk = TRUE;
                break;
            }
        }
    }
    return TRUE;
}
