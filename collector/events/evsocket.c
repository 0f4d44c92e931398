/* A reconnecting client of the device's events socket chardev. */
#include "events/evsocket.h"

#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>
#include <string.h>

/* Bytes read per wakeup at most, so that a flood shares the loop. */
#define READ_BUDGET     (4 * 1024 * 1024)

struct RsEvSocket {
    GSocketConnectable *addr;
    guint retry_ms;
    RsEvSocketRecord record;
    RsEvSocketState state;
    gpointer opaque;

    GSocketConnection *conn;
    GSocket *sock;
    GSource *source;
    guint retry_id;
    GString *buf;
    gboolean fragment;      /* a new connection: may begin mid-record */
    gboolean said_down;
};

gboolean rs_ev_socket_address(const char *address)
{
    return g_str_has_prefix(address, "unix:") ||
           g_str_has_prefix(address, "tcp:");
}

static void disconnect(RsEvSocket *s, const char *why);
static gboolean on_readable(GSocket *sock, GIOCondition cond, gpointer opaque);

static void try_connect(RsEvSocket *s)
{
    g_autoptr(GSocketClient) client = g_socket_client_new();
    g_autoptr(GError) error = NULL;

    g_socket_client_set_timeout(client, 2);
    s->conn = g_socket_client_connect(client, s->addr, NULL, &error);
    if (!s->conn) {
        if (!s->said_down) {
            s->state(FALSE, error->message, s->opaque);
            s->said_down = TRUE;
        }
        return;
    }
    s->sock = g_socket_connection_get_socket(s->conn);
    g_socket_set_blocking(s->sock, FALSE);
    s->source = g_socket_create_source(s->sock, G_IO_IN | G_IO_HUP |
                                       G_IO_ERR, NULL);
    g_source_set_callback(s->source, (GSourceFunc)(void (*)(void))on_readable,
                          s, NULL);
    g_source_attach(s->source, NULL);
    g_string_truncate(s->buf, 0);
    s->fragment = TRUE;
    s->said_down = FALSE;
    s->state(TRUE, "connected", s->opaque);
}

static gboolean on_retry(gpointer opaque)
{
    RsEvSocket *s = opaque;

    if (!s->conn) {
        try_connect(s);
    }
    if (s->conn) {
        s->retry_id = 0;
        return G_SOURCE_REMOVE;
    }
    return G_SOURCE_CONTINUE;
}

static void disconnect(RsEvSocket *s, const char *why)
{
    if (!s->conn) {
        return;
    }
    g_source_destroy(s->source);
    g_clear_pointer(&s->source, g_source_unref);
    g_io_stream_close(G_IO_STREAM(s->conn), NULL, NULL);
    g_clear_object(&s->conn);
    s->sock = NULL;
    /* A record cut off by the drop is not a record. */
    g_string_truncate(s->buf, 0);
    s->state(FALSE, why, s->opaque);
    s->said_down = TRUE;
    if (!s->retry_id) {
        s->retry_id = g_timeout_add(s->retry_ms, on_retry, s);
    }
}

static void split(RsEvSocket *s)
{
    gsize used = 0;
    char *nl;

    while ((nl = memchr(s->buf->str + used, '\n', s->buf->len - used))) {
        char *rec = s->buf->str + used;
        gsize len = nl - rec;

        *nl = '\0';
        used += len + 1;
        /*
         * The device may have sent the head of a record to the client
         * before: the rest comes first and is dropped (the ledger counts
         * a line lost that way at the next "connected").
         */
        if (s->fragment) {
            s->fragment = FALSE;
            if (!g_str_has_prefix(rec, "{\"v\":")) {
                continue;
            }
        }
        s->record(rec, len, s->opaque);
        if (!s->conn) {
            break;
        }
    }
    g_string_erase(s->buf, 0, used);
}

void rs_ev_socket_poll(RsEvSocket *s, gsize budget)
{
    char chunk[65536];
    gsize done = 0;

    while (s->conn && (!budget || done < budget)) {
        g_autoptr(GError) error = NULL;
        gssize n = g_socket_receive(s->sock, chunk, sizeof(chunk), NULL,
                                    &error);

        if (n == 0) {
            split(s);
            disconnect(s, "QEMU closed the events socket");
            return;
        }
        if (n < 0) {
            if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK)) {
                disconnect(s, error->message);
            }
            break;
        }
        done += n;
        g_string_append_len(s->buf, chunk, n);
        split(s);
    }
}

static gboolean on_readable(GSocket *sock G_GNUC_UNUSED,
                            GIOCondition cond G_GNUC_UNUSED, gpointer opaque)
{
    rs_ev_socket_poll(opaque, READ_BUDGET);
    return G_SOURCE_CONTINUE;
}

gboolean rs_ev_socket_connected(RsEvSocket *s)
{
    return s->conn != NULL;
}

RsEvSocket *rs_ev_socket_new(const char *address, guint retry_ms,
                             RsEvSocketRecord record, RsEvSocketState state,
                             gpointer opaque)
{
    RsEvSocket *s = g_new0(RsEvSocket, 1);

    if (g_str_has_prefix(address, "tcp:")) {
        s->addr = g_network_address_parse(address + 4, 0, NULL);
    }
    if (!s->addr) {
        const char *path = g_str_has_prefix(address, "unix:") ?
                           address + 5 : address;

        s->addr = G_SOCKET_CONNECTABLE(g_unix_socket_address_new(path));
    }
    s->retry_ms = retry_ms;
    s->record = record;
    s->state = state;
    s->opaque = opaque;
    s->buf = g_string_new(NULL);
    try_connect(s);
    if (!s->conn) {
        s->retry_id = g_timeout_add(retry_ms, on_retry, s);
    }
    return s;
}

void rs_ev_socket_free(RsEvSocket *s)
{
    if (!s) {
        return;
    }
    g_clear_handle_id(&s->retry_id, g_source_remove);
    if (s->conn) {
        g_source_destroy(s->source);
        g_source_unref(s->source);
        g_io_stream_close(G_IO_STREAM(s->conn), NULL, NULL);
        g_object_unref(s->conn);
    }
    g_object_unref(s->addr);
    g_string_free(s->buf, TRUE);
    g_free(s);
}
