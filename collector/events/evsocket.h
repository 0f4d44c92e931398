/*
 * A client of the device's event stream on a socket chardev
 * (-chardev socket,...,server=on,wait=off): connects, hands over each
 * complete record, and reconnects when QEMU goes away or restarts.
 * Everything runs on the GLib main loop.
 */
#ifndef RINGSIDE_EVSOCKET_H
#define RINGSIDE_EVSOCKET_H

#include <glib.h>

typedef struct RsEvSocket RsEvSocket;

/* One record, without its newline and NUL-terminated. */
typedef void (*RsEvSocketRecord)(const char *rec, gsize len, gpointer opaque);
/* Connected (@up) or disconnected, with why. */
typedef void (*RsEvSocketState)(gboolean up, const char *why, gpointer opaque);

/*
 * @address: "unix:PATH" or "tcp:HOST:PORT" (a plain path is unix).  The
 * first connection is tried at once; then every @retry_ms while down.
 */
RsEvSocket *rs_ev_socket_new(const char *address, guint retry_ms,
                             RsEvSocketRecord record, RsEvSocketState state,
                             gpointer opaque);
/* Read what has arrived now: at most @budget bytes (0: all there is). */
void rs_ev_socket_poll(RsEvSocket *s, gsize budget);
gboolean rs_ev_socket_connected(RsEvSocket *s);
void rs_ev_socket_free(RsEvSocket *s);

/* Whether @address is a socket address rather than a file's path. */
gboolean rs_ev_socket_address(const char *address);

#endif
