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
