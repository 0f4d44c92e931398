/*
 * What ringside run, fuzz, replay and libvirt-xml take alike for the guest
 * they boot: the ranges of its numbers, checked one option at a time, and
 * the strings given on the command line moved over a command's defaults.
 */
#ifndef RINGSIDE_GUESTOPTS_H
#define RINGSIDE_GUESTOPTS_H

#include "errors.h"
#include "guest/guest.h"

#define RS_SMP_MAX      64
#define RS_MEMORY_MIN   64      /* MiB */
#define RS_MEMORY_MAX   65536

/* Strings from the command line; NULL where not given. */
typedef struct {
    char *qemu, *kernel, *initrd, *accel, *append, *pace, *oracle, *outdir;
    char *case_name;
} RsGuestGiven;

void rs_guest_given_clear(RsGuestGiven *g);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(RsGuestGiven, rs_guest_given_clear)

/* Each string given replaces @cfg's, which is freed; @g keeps none. */
void rs_guest_given_apply(RsGuestGiven *g, RsGuestConfig *cfg);

/* FALSE, with @error, unless @pace is NULL, "line" or "off". */
gboolean rs_opt_pace(const char *pace, GError **error);
/* @cfg's smp, memory, timeout and pace, each against its range. */
gboolean rs_guest_config_check(const RsGuestConfig *cfg, GError **error);

/*
 * A number from a case file's [origin] (memory=, for one): FALSE, with
 * @error naming @file and @key, unless @text is a decimal in lo..hi.
 */
gboolean rs_origin_int(const char *file, const char *key, const char *text,
                       gint64 lo, gint64 hi, int *out, GError **error);

#endif
