/* The collector's error domain. */
#ifndef RINGSIDE_ERRORS_H
#define RINGSIDE_ERRORS_H

#include <glib.h>

#define RS_ERROR (rs_error_quark())
GQuark rs_error_quark(void);

typedef enum {
    RS_ERROR_BAD_INPUT,     /* a file or stream that is not what it claims */
    RS_ERROR_NOT_FOUND,     /* a kernel, QEMU build or file is missing */
    RS_ERROR_GUEST,         /* the guest did not do what the case needs */
    RS_ERROR_TIMEOUT,
} RsError;

/*
 * Parse a command's options.  FALSE, after one line on stderr that names
 * the command (g_get_prgname()), on a bad option or more than @max_args
 * arguments left.
 */
gboolean rs_parse_options(GOptionContext *ctx, int *argc, char ***argv,
                          int max_args);

/*
 * FALSE, with @error saying "OPT must be LO..HI" (or "at least LO" when
 * @hi < @lo), if @v is out of range.
 */
gboolean rs_opt_range(const char *opt, gint64 v, gint64 lo, gint64 hi,
                      GError **error);

#endif
