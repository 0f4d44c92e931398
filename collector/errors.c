/* The collector's error domain. */
#include "errors.h"

G_DEFINE_QUARK(ringside-error-quark, rs_error)

gboolean rs_parse_options(GOptionContext *ctx, int *argc, char ***argv,
                          int max_args)
{
    g_autoptr(GError) error = NULL;

    if (!g_option_context_parse(ctx, argc, argv, &error)) {
        g_printerr("%s: %s\n", g_get_prgname(), error->message);
        return FALSE;
    }
    if (*argc - 1 > max_args) {
        g_printerr("%s: unexpected argument \"%s\"\n", g_get_prgname(),
                   (*argv)[max_args + 1]);
        return FALSE;
    }
    return TRUE;
}

gboolean rs_opt_range(const char *opt, gint64 v, gint64 lo, gint64 hi,
                      GError **error)
{
    if (v >= lo && (hi < lo || v <= hi)) {
        return TRUE;
    }
    if (hi < lo) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s must be at least %" G_GINT64_FORMAT, opt, lo);
    } else {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s must be %" G_GINT64_FORMAT "..%" G_GINT64_FORMAT,
                    opt, lo, hi);
    }
    return FALSE;
}
