/*
 * Following one libvirt domain's ringside-serial: its console through
 * libvirt's console stream, the device's judgement of each line from its
 * event file, one boot after another, across console and daemon
 * reconnects.  Everything runs on the GLib main loop.
 */
#ifndef RINGSIDE_FOLLOW_H
#define RINGSIDE_FOLLOW_H

#include "report/verdicts.h"

#include <glib.h>
#include <libvirt/libvirt.h>
#include <stdio.h>

typedef struct RsFollower RsFollower;

/* Called when a boot has been judged to its end. */
typedef void (*RsBootEnded)(RsFollower *f, gboolean clean, gpointer opaque);

/*
 * Follow domain @name, writing to @out (text, or JSON Lines if @json).
 * @events is the device's event file (NULL if the domain names none or it
 * is not on this host: then lines come from the console alone and the
 * verdict counts from QMP).
 */
RsFollower *rs_follower_new(const char *name, const char *events, FILE *out,
                            gboolean json, RsBootEnded ended,
                            gpointer opaque);
void rs_follower_free(RsFollower *f);

/*
 * Read the events from the socket chardev at @address ("unix:PATH",
 * "tcp:HOST:PORT") instead of a file, reconnecting as needed, and keep
 * them in @keep (NULL: not kept), rotated at @max_size bytes with
 * @count older files (events/evrotate.h).  Lines the stream did not
 * bring are counted and said ("gap").
 */
gboolean rs_follower_set_socket(RsFollower *f, const char *address,
                                const char *keep, goffset max_size,
                                guint count, GError **error);

/* Also write each line and missing record as a journal entry to @journal. */
void rs_follower_set_journal(RsFollower *f, FILE *journal);

/*
 * Resume the domain if it is paused once its console is open: with
 * 'virsh start --paused', nothing it prints is missed.
 */
void rs_follower_set_resume(RsFollower *f, gboolean resume);

/*
 * The domain runs (again), under the connection @dom belongs to: take a
 * reference to it and open its console.  @new_boot: it has just been
 * started, rather than found running.
 */
void rs_follower_running(RsFollower *f, virDomainPtr dom, gboolean new_boot);

/* The domain stopped (@why): close the console, judge the boot. */
void rs_follower_stopped(RsFollower *f, const char *why);

/* The connection is gone: drop the console and the domain reference. */
void rs_follower_disconnected(RsFollower *f);

/* One line of text about the follower, not part of a boot ("says so"). */
void rs_follower_say(RsFollower *f, const char *ev, const char *fmt, ...)
    G_GNUC_PRINTF(3, 4);

#endif
