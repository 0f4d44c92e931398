/* The guest options the commands share; see guestopts.h. */
#include "guest/guestopts.h"
#include "errors.h"

void rs_guest_given_clear(RsGuestGiven *g)
{
    g_clear_pointer(&g->qemu, g_free);
    g_clear_pointer(&g->kernel, g_free);
    g_clear_pointer(&g->initrd, g_free);
    g_clear_pointer(&g->accel, g_free);
    g_clear_pointer(&g->append, g_free);
    g_clear_pointer(&g->pace, g_free);
    g_clear_pointer(&g->oracle, g_free);
    g_clear_pointer(&g->outdir, g_free);
    g_clear_pointer(&g->case_name, g_free);
}

static void take(char **field, char **given)
{
    if (*given) {
        g_free(*field);
        *field = g_steal_pointer(given);
    }
}

void rs_guest_given_apply(RsGuestGiven *g, RsGuestConfig *cfg)
{
    take(&cfg->qemu, &g->qemu);
    take(&cfg->kernel, &g->kernel);
    take(&cfg->initrd, &g->initrd);
    take(&cfg->accel, &g->accel);
    take(&cfg->append, &g->append);
    take(&cfg->pace, &g->pace);
    take(&cfg->oracle, &g->oracle);
    take(&cfg->outdir, &g->outdir);
    take(&cfg->case_name, &g->case_name);
}

gboolean rs_opt_pace(const char *pace, GError **error)
{
    if (!pace || g_str_equal(pace, "line") || g_str_equal(pace, "off")) {
        return TRUE;
    }
    g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                "--pace must be line or off, not \"%s\"", pace);
    return FALSE;
}

gboolean rs_guest_config_check(const RsGuestConfig *cfg, GError **error)
{
    return rs_opt_range("--smp", cfg->smp, 1, RS_SMP_MAX, error) &&
           rs_opt_range("--memory", cfg->memory_mib, RS_MEMORY_MIN,
                        RS_MEMORY_MAX, error) &&
           rs_opt_range("--timeout", cfg->timeout_s, 1, 0, error) &&
           rs_opt_pace(cfg->pace, error);
}

gboolean rs_origin_int(const char *file, const char *key, const char *text,
                       gint64 lo, gint64 hi, int *out, GError **error)
{
    g_autoptr(GError) local = NULL;
    gint64 v;

    if (!g_ascii_string_to_signed(text, 10, lo, hi, &v, &local)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "%s: %s=%s: %s",
                    file, key, text, local->message);
        return FALSE;
    }
    *out = (int)v;
    return TRUE;
}
