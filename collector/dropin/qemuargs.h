/*
 * A QEMU command line with ringside-serial put in front of the guest's
 * console: the first serial port (ttyS0), however the caller gave it.
 *
 * The console's chardev is left as the caller asked for it (the same
 * backend, the same label QEMU would give it), so the bytes the caller
 * reads are the ones plain QEMU would write; only the UART model changes.
 */
#ifndef RINGSIDE_QEMUARGS_H
#define RINGSIDE_QEMUARGS_H

#include <glib.h>

typedef struct {
    const char *events_path;    /* the device's event file (appended) */
    const char *pace;           /* ringside-serial pace=, NULL: the default */
    gboolean vmcoreinfo;        /* add -device vmcoreinfo if the line has
                                 * none (a device the guest sees) */
} RsQemuArgsOpts;

typedef struct {
    GPtrArray *argv;        /* the new command line, without argv[0] */
    char *console;          /* how the console was given, for the run log;
                             * NULL: the command line has no serial port
                             * and is unchanged */
    char *name;             /* -name's guest name, or NULL */
    gboolean daemonize;     /* -daemonize: QEMU leaves the process we exec */
    gboolean libvirt;       /* libvirt's line (-name guest=NAME,...) */
} RsQemuArgs;

/*
 * ringside's own settings given among QEMU's as "-ringside KEY=VALUE,..."
 * (for tools whose configuration only adds QEMU arguments) are removed
 * from @args and returned as KEY -> VALUE ("" for a bare word), or NULL
 * if there were none.  Commas in a value are doubled, as in QEMU's.
 */
GHashTable *rs_qemu_args_take_own(GPtrArray *args);

/* Rewrite @argv (QEMU's arguments, without argv[0]). */
gboolean rs_qemu_args_rewrite(char **argv, const RsQemuArgsOpts *opts,
                              RsQemuArgs *out, GError **error);
void rs_qemu_args_clear(RsQemuArgs *a);

#endif
