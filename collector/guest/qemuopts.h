/*
 * QEMU's option strings ("file,id=ev,path=/a,,b"): a ',' inside a value
 * is written ",,".
 */
#ifndef RINGSIDE_QEMUOPTS_H
#define RINGSIDE_QEMUOPTS_H

#include <glib.h>

/* @s as a value in such a string: its commas doubled. */
char *rs_qemu_opts_escape(const char *s);

/*
 * The keys of such a string, unescaped: key -> value, and "" -> a first
 * item without '=' (a driver or backend name).  A key given twice keeps
 * its last value, as QEMU does.
 */
GHashTable *rs_qemu_opts_split(const char *s);

/* The value of @key in @opts, or NULL. */
char *rs_qemu_opts_value(const char *opts, const char *key);

#endif
