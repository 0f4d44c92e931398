/* A small synchronous client for QEMU's QMP socket. */
#ifndef RINGSIDE_QMP_H
#define RINGSIDE_QMP_H

#include <glib.h>
#include <json-glib/json-glib.h>

typedef struct RsQmp RsQmp;

/* Connect (retrying until @timeout_ms while QEMU creates the socket). */
RsQmp *rs_qmp_connect(const char *path, guint timeout_ms, GError **error);
void rs_qmp_free(RsQmp *q);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsQmp, rs_qmp_free)

/*
 * Run @command with @args (a JSON object's text, or NULL); returns its
 * "return" value, or NULL with QEMU's error in @error.
 */
JsonNode *rs_qmp_execute(RsQmp *q, const char *command, const char *args,
                         GError **error);

/* Forget the events read so far. */
void rs_qmp_clear_events(RsQmp *q);

/*
 * Wait until monotonic time @deadline (us) for one of the events @names
 * (read before, or now); returns its name, or NULL at the deadline or
 * on an error (then set).
 */
char *rs_qmp_wait_event(RsQmp *q, const char *const *names, gint64 deadline,
                        GError **error);

/* A human monitor command; returns what it printed ("" when nothing). */
char *rs_qmp_hmp(RsQmp *q, const char *cmdline, GError **error);

#endif
