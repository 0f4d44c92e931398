/* What both fuzz runners share; see fuzzcase.h. */
#include "fuzz/fuzzcase.h"

#include <glib/gstdio.h>
#include <string.h>

void rs_fuzz_env_init(RsFuzzEnv *env)
{
    memset(env, 0, sizeof(*env));
    g_mutex_init(&env->lock);
}

void rs_fuzz_env_clear(RsFuzzEnv *env)
{
    guint i;

    rs_guest_config_clear(&env->base);
    g_free(env->workdir);
    for (i = 0; i <= RS_SCENARIO_SMP_MAX; i++) {
        g_free(env->snapshot[i]);
    }
    g_mutex_clear(&env->lock);
}

void rs_fuzz_case_free(RsFuzzCase *c)
{
    if (c) {
        g_free(c->dir);
        g_free(c->error);
        g_free(c);
    }
}

static char *dup0(const char *s)
{
    return s ? g_strdup(s) : NULL;
}

void rs_fuzz_case_config(const RsFuzzEnv *env, const RsFuzzCase *c,
                         RsGuestConfig *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->qemu = dup0(env->base.qemu);
    cfg->kernel = dup0(env->base.kernel);
    cfg->initrd = dup0(env->base.initrd);
    cfg->accel = dup0(env->base.accel);
    cfg->pace = dup0(env->base.pace);
    cfg->append = dup0(env->base.append);
    cfg->rr_mode = dup0(env->base.rr_mode);
    cfg->rr_file = dup0(env->base.rr_file);
    cfg->memory_mib = env->base.memory_mib;
    cfg->timeout_s = env->base.timeout_s;
    cfg->case_name = g_strdup("fuzz");
    /*
     * A RAM file costs a restore every page of it (256 MiB: 0.17 s of the
     * 0.33 s a short case takes); with anonymous RAM untouched pages stay
     * the zero page.  Case files rerun with a RAM file.
     */
    cfg->no_ram_file = env->no_ram_file;
    /* Per-byte events are most of a storm case's time: verdicts suffice. */
    cfg->tx_events = !env->no_tx_events;
    cfg->patient = TRUE;
    cfg->smp = c->sc.smp;
    cfg->outdir = g_strdup(c->dir);
    cfg->mailbox = rs_scenario_words(&c->sc);
    if (!c->cold) {
        cfg->incoming = dup0(env->snapshot[c->sc.smp]);
    }
}

void rs_fuzz_feed_config(const RsFuzzEnv *env, RsGuestConfig *cfg,
                         const char *dir)
{
    cfg->feed = g_build_filename(dir, "feed.sock", NULL);
    g_free(cfg->append);
    cfg->append = env->base.append ?
                  g_strdup_printf("%s ringside.feed=ttyS1", env->base.append) :
                  g_strdup("ringside.feed=ttyS1");
}

gboolean rs_fuzz_env_check(const RsFuzzEnv *env, GError **error)
{
    return rs_guest_check_inputs(&env->base, error);
}

void rs_rmtree(const char *dir)
{
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    const char *name;

    while (d && (name = g_dir_read_name(d))) {
        g_autofree char *p = g_build_filename(dir, name, NULL);

        g_unlink(p);
    }
    g_rmdir(dir);
}
