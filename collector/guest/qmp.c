/* A small synchronous client for QEMU's QMP socket. */
#include "guest/qmp.h"
#include "errors.h"

#include <gio/gio.h>
#include <gio/gunixsocketaddress.h>

/* QEMU answers at once; a reply that takes this long will not come. */
#define QMP_REPLY_TIMEOUT_S 30
#define QMP_LINE_MAX        (1 << 20)

struct RsQmp {
    GSocketConnection *conn;
    GDataInputStream *in;
    GOutputStream *out;
    GQueue events;          /* names of events read while awaiting replies */
};

void rs_qmp_free(RsQmp *q)
{
    if (!q) {
        return;
    }
    g_queue_clear_full(&q->events, g_free);
    g_clear_object(&q->in);
    g_clear_object(&q->conn);
    g_free(q);
}

/*
 * The next message that is not an event, parsed; events met on the way
 * are queued by name.  With @event_only, return after the first event
 * instead (NULL, nothing set in @error).
 */
static JsonNode *read_message(RsQmp *q, gboolean event_only, GError **error)
{
    for (;;) {
        g_autofree char *line = NULL;
        g_autoptr(JsonParser) p = json_parser_new();
        JsonObject *o;
        gsize len;

        line = g_data_input_stream_read_line(q->in, &len, NULL, error);
        if (!line) {
            if (error && !*error) {
                g_set_error(error, RS_ERROR, RS_ERROR_GUEST,
                            "QMP: QEMU closed the connection");
            }
            return NULL;
        }
        if (len > QMP_LINE_MAX || !json_parser_load_from_data(p, line, len,
                                                              NULL) ||
            !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p))) {
            g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                        "QMP: not a JSON object: %.80s", line);
            return NULL;
        }
        o = json_node_get_object(json_parser_get_root(p));
        if (!json_object_has_member(o, "event")) {
            return json_node_copy(json_parser_get_root(p));
        }
        g_queue_push_tail(&q->events, g_strdup(
            json_object_get_string_member_with_default(o, "event", "")));
        if (event_only) {
            return NULL;
        }
    }
}

static JsonNode *read_reply(RsQmp *q, GError **error)
{
    return read_message(q, FALSE, error);
}

RsQmp *rs_qmp_connect(const char *path, guint timeout_ms, GError **error)
{
    g_autoptr(GSocketClient) client = g_socket_client_new();
    g_autoptr(GSocketAddress) addr = g_unix_socket_address_new(path);
    g_autoptr(RsQmp) q = g_new0(RsQmp, 1);
    g_autoptr(JsonNode) greeting = NULL;
    g_autoptr(JsonNode) caps = NULL;
    gint64 deadline = g_get_monotonic_time() + timeout_ms * 1000LL;

    for (;;) {
        g_autoptr(GError) err = NULL;

        q->conn = g_socket_client_connect(client,
                                          G_SOCKET_CONNECTABLE(addr), NULL,
                                          &err);
        if (q->conn) {
            break;
        }
        if (g_get_monotonic_time() > deadline) {
            g_set_error(error, RS_ERROR, RS_ERROR_TIMEOUT,
                        "QMP: cannot connect to %s: %s", path, err->message);
            return NULL;
        }
        g_usleep(10000);
    }
    g_socket_set_timeout(g_socket_connection_get_socket(q->conn),
                         QMP_REPLY_TIMEOUT_S);
    q->in = g_data_input_stream_new(
        g_io_stream_get_input_stream(G_IO_STREAM(q->conn)));
    q->out = g_io_stream_get_output_stream(G_IO_STREAM(q->conn));
    greeting = read_reply(q, error);
    if (!greeting) {
        return NULL;
    }
    caps = rs_qmp_execute(q, "qmp_capabilities", NULL, error);
    if (!caps) {
        return NULL;
    }
    return g_steal_pointer(&q);
}

JsonNode *rs_qmp_execute(RsQmp *q, const char *command, const char *args,
                         GError **error)
{
    g_autofree char *msg = g_strdup_printf("{\"execute\":\"%s\"%s%s}\n",
                                           command,
                                           args ? ",\"arguments\":" : "",
                                           args ? args : "");
    g_autoptr(JsonNode) reply = NULL;
    JsonObject *o;

    if (!g_output_stream_write_all(q->out, msg, strlen(msg), NULL, NULL,
                                   error)) {
        return NULL;
    }
    reply = read_reply(q, error);
    if (!reply) {
        return NULL;
    }
    o = json_node_get_object(reply);
    if (json_object_has_member(o, "return")) {
        return json_node_copy(json_object_get_member(o, "return"));
    }
    if (json_object_has_member(o, "error") &&
        JSON_NODE_HOLDS_OBJECT(json_object_get_member(o, "error"))) {
        JsonObject *e = json_object_get_object_member(o, "error");

        g_set_error(error, RS_ERROR, RS_ERROR_GUEST, "QMP %s: %s", command,
                    json_object_get_string_member_with_default(e, "desc",
                                                               "error"));
        return NULL;
    }
    g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                "QMP %s: a reply with neither return nor error", command);
    return NULL;
}

void rs_qmp_clear_events(RsQmp *q)
{
    g_queue_clear_full(&q->events, g_free);
}

char *rs_qmp_wait_event(RsQmp *q, const char *const *names, gint64 deadline,
                        GError **error)
{
    GSocket *sock = g_socket_connection_get_socket(q->conn);

    for (;;) {
        char *ev;
        gint64 now;

        while ((ev = g_queue_pop_head(&q->events))) {
            if (g_strv_contains(names, ev)) {
                return ev;
            }
            g_free(ev);
        }
        now = g_get_monotonic_time();
        if (!g_buffered_input_stream_get_available(
                G_BUFFERED_INPUT_STREAM(q->in))) {
            g_autoptr(GError) err = NULL;

            if (now >= deadline) {
                return NULL;
            }
            if (!g_socket_condition_timed_wait(sock, G_IO_IN,
                                               deadline - now, NULL, &err)) {
                if (g_error_matches(err, G_IO_ERROR, G_IO_ERROR_TIMED_OUT)) {
                    return NULL;
                }
                g_propagate_error(error, g_steal_pointer(&err));
                return NULL;
            }
        }
        {
            g_autoptr(GError) err = NULL;
            g_autoptr(JsonNode) n = read_message(q, TRUE, &err);

            if (err) {
                g_propagate_error(error, g_steal_pointer(&err));
                return NULL;
            }
        }
    }
}

char *rs_qmp_hmp(RsQmp *q, const char *cmdline, GError **error)
{
    g_autofree char *quoted = g_strescape(cmdline, NULL);
    g_autofree char *args = g_strdup_printf("{\"command-line\":\"%s\"}",
                                            quoted);
    g_autoptr(JsonNode) r = rs_qmp_execute(q, "human-monitor-command", args,
                                           error);

    if (!r) {
        return NULL;
    }
    return g_strdup(JSON_NODE_HOLDS_VALUE(r) && json_node_get_string(r) ?
                    json_node_get_string(r) : "");
}
