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

#endif
