/*
 * ringside attach: follow libvirt domains whose serial0 is ringside-serial,
 * through libvirt's own APIs (console stream, lifecycle events, QMP
 * passthrough), across domain restarts and daemon restarts.
 */
#include "commands.h"
#include "errors.h"
#include "events/evsocket.h"
#include "libvirt/domxml.h"
#include "libvirt/follow.h"
#include "libvirt/virt.h"

#include <errno.h>
#include <glib-unix.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RECONNECT_MS    500

typedef struct {
    char *uri;
    char *domain;           /* NULL: --all */
    char *outdir;           /* --all: one NAME.jsonl each */
    gboolean json, no_events, resume;
    char *events_socket;    /* --events-socket: overrides the domain's */
    char *keep_events;      /* --keep-events FILE */
    goffset rotate_size;
    int rotate_count;
    FILE *journal;          /* --journal */
    int boots;              /* stop after this many boots ended; 0 never */
    int boots_ended;
    gboolean all_clean;

    virConnectPtr conn;
    int lifecycle_id;
    guint reconnect_id;
    GHashTable *followers;  /* domain name -> RsFollower */
    GPtrArray *files;       /* --all: the FILEs to close */
    GMainLoop *loop;
} Attach;

static const char *stop_reason(int detail)
{
    switch (detail) {
    case VIR_DOMAIN_EVENT_STOPPED_SHUTDOWN:
        return "shutdown";
    case VIR_DOMAIN_EVENT_STOPPED_DESTROYED:
        return "destroyed";
    case VIR_DOMAIN_EVENT_STOPPED_CRASHED:
        return "crashed";
    case VIR_DOMAIN_EVENT_STOPPED_MIGRATED:
        return "migrated";
    case VIR_DOMAIN_EVENT_STOPPED_SAVED:
        return "saved";
    case VIR_DOMAIN_EVENT_STOPPED_FAILED:
        return "failed";
    default:
        return "stopped";
    }
}

/* "64M" and the like: bytes, with K, M or G (powers of 1024). */
static gboolean rs_parse_size(const char *s, goffset *out)
{
    char *end;
    guint64 v = g_ascii_strtoull(s, &end, 10);
    int shift = 0;

    if (end == s) {
        return FALSE;
    }
    switch (g_ascii_toupper(*end)) {
    case 'K':
        shift = 10;
        break;
    case 'M':
        shift = 20;
        break;
    case 'G':
        shift = 30;
        break;
    case '\0':
        break;
    default:
        return FALSE;
    }
    if (shift && end[1]) {
        return FALSE;
    }
    if (v > (guint64)(G_MAXINT64 >> shift)) {
        return FALSE;
    }
    *out = (goffset)(v << shift);
    return TRUE;
}

static void on_boot_ended(RsFollower *f G_GNUC_UNUSED, gboolean clean,
                          gpointer opaque)
{
    Attach *a = opaque;

    a->boots_ended++;
    a->all_clean &= clean;
    if (a->boots && a->boots_ended >= a->boots) {
        g_main_loop_quit(a->loop);
    }
}

/*
 * Whether @dom is a ringside domain, and its events file if this host
 * can read it.  FALSE with @error (naming the domain) if not.
 */
static gboolean inspect(Attach *a, virDomainPtr dom, char **events,
                        GError **error)
{
    g_autofree char *xml = virDomainGetXMLDesc(dom, 0);
    g_autofree char *path = NULL, *dir = NULL;
    gboolean ringside;

    *events = NULL;
    if (!xml) {
        rs_virt_error(error, "cannot read domain %s's XML",
                      virDomainGetName(dom));
        return FALSE;
    }
    if (!rs_domxml_inspect(xml, &ringside, &path, error)) {
        return FALSE;
    }
    if (!ringside) {
        g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND,
                    "domain %s is not a ringside domain: its serial0 is not "
                    "ringside-serial (ringside libvirt-xml --domain %s "
                    "--define adds it)", virDomainGetName(dom),
                    virDomainGetName(dom));
        return FALSE;
    }
    if (virDomainIsActive(dom) == 1) {
        g_autofree char *type = rs_virt_qom_get(dom, RS_VIRT_DEVICE, "type",
                                                NULL);

        if (g_strcmp0(type, "\"ringside-serial\"")) {
            g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND,
                        "domain %s runs without a ringside-serial at %s "
                        "(QEMU says %s): restart it under the fork",
                        virDomainGetName(dom), RS_VIRT_DEVICE,
                        type ? type : "there is none");
            return FALSE;
        }
    }
    if (a->events_socket && !a->no_events) {
        *events = g_strdup(a->events_socket);
        return TRUE;
    }
    /* A socket chardev is read wherever it can be reached. */
    if (path && !a->no_events && rs_ev_socket_address(path)) {
        *events = g_steal_pointer(&path);
        return TRUE;
    }
    dir = path ? g_path_get_dirname(path) : NULL;
    if (path && !a->no_events && g_file_test(dir, G_FILE_TEST_IS_DIR)) {
        *events = g_steal_pointer(&path);
    }
    return TRUE;
}

/*
 * Where a socket's events are kept: --keep-events, else next to a local
 * socket (NAME.ringside-events.sock -> NAME.ringside-events.jsonl); a TCP
 * stream is not kept unless asked.
 */
static char *keep_path(Attach *a, const char *address)
{
    const char *path = address + 5;

    if (a->keep_events) {
        return g_strdup(a->keep_events);
    }
    if (!g_str_has_prefix(address, "unix:")) {
        return NULL;
    }
    if (g_str_has_suffix(path, ".sock")) {
        return g_strdup_printf("%.*s.jsonl", (int)strlen(path) - 5, path);
    }
    return g_strdup_printf("%s.jsonl", path);
}

static RsFollower *follow(Attach *a, virDomainPtr dom, GError **error)
{
    const char *name = virDomainGetName(dom);
    g_autofree char *events = NULL;
    RsFollower *f;
    FILE *out = stdout;

    if (!inspect(a, dom, &events, error)) {
        return NULL;
    }
    if (a->outdir) {
        g_autofree char *path = g_strdup_printf("%s/%s.jsonl", a->outdir,
                                                name);

        out = fopen(path, "a");
        if (!out) {
            g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND,
                        "cannot write %s: %s", path, g_strerror(errno));
            return NULL;
        }
        g_ptr_array_add(a->files, out);
    }
    if (events && rs_ev_socket_address(events)) {
        g_autofree char *keep = keep_path(a, events);

        f = rs_follower_new(name, NULL, out, a->json || a->outdir,
                            on_boot_ended, a);
        if (!rs_follower_set_socket(f, events, keep, a->rotate_size,
                                    a->rotate_count, error)) {
            rs_follower_free(f);
            return NULL;
        }
        if (keep) {
            rs_follower_say(f, "events", "keeping the events in %s (%"
                            G_GOFFSET_FORMAT " bytes a file, %d older "
                            "files)", keep, a->rotate_size,
                            a->rotate_count);
        }
    } else {
        f = rs_follower_new(name, events, out, a->json || a->outdir,
                            on_boot_ended, a);
    }
    rs_follower_set_resume(f, a->resume);
    if (a->journal) {
        rs_follower_set_journal(f, a->journal);
    }
    g_hash_table_insert(a->followers, g_strdup(name), f);
    rs_follower_say(f, "attached", "following %s on %s; %s", name, a->uri,
                    events && rs_ev_socket_address(events) ?
                    "verdicts from the device's event socket" :
                    events ? "verdicts from the device's event file" :
                    "no event file read: console lines, verdict counts "
                    "over QMP");
    if (!a->domain) {
        fprintf(stderr, "ringside attach: following %s -> %s/%s.jsonl\n",
                name, a->outdir, name);
    }
    return f;
}

static void on_lifecycle(virConnectPtr conn G_GNUC_UNUSED, virDomainPtr dom,
                         int event, int detail, void *opaque)
{
    Attach *a = opaque;
    const char *name = virDomainGetName(dom);
    RsFollower *f = g_hash_table_lookup(a->followers, name);

    if (!f && !a->domain && (event == VIR_DOMAIN_EVENT_STARTED ||
                             event == VIR_DOMAIN_EVENT_DEFINED)) {
        g_autoptr(GError) error = NULL;

        /* --all picks up domains as they appear; others are not ours. */
        f = follow(a, dom, &error);
        if (!f && !g_error_matches(error, RS_ERROR, RS_ERROR_NOT_FOUND)) {
            g_printerr("ringside attach: %s\n", error->message);
        }
    }
    if (!f) {
        return;
    }
    if (event == VIR_DOMAIN_EVENT_STARTED) {
        rs_follower_say(f, "started", "domain started");
        rs_follower_running(f, dom, TRUE);
    } else if (event == VIR_DOMAIN_EVENT_STOPPED) {
        rs_follower_stopped(f, stop_reason(detail));
    }
}

static void try_connect_later(Attach *a);

static void on_close(virConnectPtr conn G_GNUC_UNUSED, int reason,
                     void *opaque)
{
    Attach *a = opaque;
    GHashTableIter it;
    gpointer f;

    g_hash_table_iter_init(&it, a->followers);
    while (g_hash_table_iter_next(&it, NULL, &f)) {
        rs_follower_disconnected(f);
        rs_follower_say(f, "disconnected", "lost the connection to %s (%s); "
                        "reconnecting, the device's event file is still read",
                        a->uri, reason == VIR_CONNECT_CLOSE_REASON_EOF ?
                        "the daemon went away" : "connection closed");
    }
    try_connect_later(a);
}

/* The domains to follow on a (re)connection, and their state now. */
static gboolean sync_domains(Attach *a, GError **error)
{
    virDomainPtr *doms = NULL;
    gboolean ok = TRUE;
    int n, i;

    if (a->domain) {
        virDomainPtr dom = virDomainLookupByName(a->conn, a->domain);

        if (!dom) {
            rs_virt_error(error, "no domain \"%s\" on %s", a->domain, a->uri);
            return FALSE;
        }
        doms = malloc(sizeof(*doms));
        if (!doms) {
            virDomainFree(dom);
            g_set_error(error, RS_ERROR, RS_ERROR_GUEST, "out of memory");
            return FALSE;
        }
        doms[0] = dom;
        n = 1;
    } else {
        n = virConnectListAllDomains(a->conn, &doms, 0);
        if (n < 0) {
            rs_virt_error(error, "cannot list the domains on %s", a->uri);
            return FALSE;
        }
    }
    for (i = 0; i < n; i++) {
        const char *name = virDomainGetName(doms[i]);
        RsFollower *f = g_hash_table_lookup(a->followers, name);
        g_autoptr(GError) local = NULL;

        if (!f) {
            f = follow(a, doms[i], &local);
        }
        if (!f && a->domain) {
            g_propagate_error(error, g_steal_pointer(&local));
            ok = FALSE;
            break;
        }
        if (f && virDomainIsActive(doms[i]) == 1) {
            rs_follower_running(f, doms[i], FALSE);
        } else if (f) {
            rs_follower_stopped(f, "not running");
        }
    }
    for (i = 0; i < n; i++) {
        virDomainFree(doms[i]);
    }
    free(doms);
    return ok;
}

static gboolean connect_now(Attach *a, GError **error)
{
    a->conn = rs_virt_connect(a->uri, error);
    if (!a->conn) {
        return FALSE;
    }
    /* A daemon that hangs is noticed too, not only one that exits. */
    virConnectSetKeepAlive(a->conn, 5, 3);
    virConnectRegisterCloseCallback(a->conn, on_close, a, NULL);
    a->lifecycle_id = virConnectDomainEventRegisterAny(
        a->conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
        VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), a, NULL);
    if (a->lifecycle_id < 0) {
        rs_virt_error(error, "cannot follow domain events on %s", a->uri);
        return FALSE;
    }
    return sync_domains(a, error);
}

static void disconnect(Attach *a)
{
    if (!a->conn) {
        return;
    }
    if (a->lifecycle_id >= 0) {
        virConnectDomainEventDeregisterAny(a->conn, a->lifecycle_id);
        a->lifecycle_id = -1;
    }
    virConnectUnregisterCloseCallback(a->conn, on_close);
    virConnectClose(a->conn);
    a->conn = NULL;
}

static gboolean on_reconnect(gpointer opaque)
{
    Attach *a = opaque;
    g_autoptr(GError) error = NULL;
    GHashTableIter it;
    gpointer f;

    disconnect(a);
    if (!connect_now(a, &error)) {
        disconnect(a);
        return G_SOURCE_CONTINUE;
    }
    a->reconnect_id = 0;
    g_hash_table_iter_init(&it, a->followers);
    while (g_hash_table_iter_next(&it, NULL, &f)) {
        rs_follower_say(f, "reconnected", "reconnected to %s", a->uri);
    }
    return G_SOURCE_REMOVE;
}

static void try_connect_later(Attach *a)
{
    if (!a->reconnect_id) {
        a->reconnect_id = g_timeout_add(RECONNECT_MS, on_reconnect, a);
    }
}

static gboolean on_signal(gpointer opaque)
{
    Attach *a = opaque;

    g_main_loop_quit(a->loop);
    return G_SOURCE_CONTINUE;
}

/* The options' own checks, each failure said. */
static gboolean attach_check(Attach *a, gboolean all, const char *rotate_size)
{
    g_autoptr(GError) error = NULL;

    if (!a->domain == !all) {
        g_printerr("ringside attach: give --domain NAME or --all\n");
        return FALSE;
    }
    if (a->outdir && !all) {
        g_printerr("ringside attach: --output is for --all\n");
        return FALSE;
    }
    if (a->boots < 0) {
        g_printerr("ringside attach: --boots must be 0 or more\n");
        return FALSE;
    }
    if ((a->events_socket || a->keep_events) && all) {
        g_printerr("ringside attach: --events-socket and --keep-events are "
                   "for one --domain\n");
        return FALSE;
    }
    if (a->events_socket && !rs_ev_socket_address(a->events_socket)) {
        g_printerr("ringside attach: --events-socket takes unix:PATH or "
                   "tcp:HOST:PORT\n");
        return FALSE;
    }
    a->rotate_size = 64 * 1024 * 1024;
    if (rotate_size && !rs_parse_size(rotate_size, &a->rotate_size)) {
        g_printerr("ringside attach: --rotate-size %s: expected a size in "
                   "bytes, with K, M or G\n", rotate_size);
        return FALSE;
    }
    if (!rs_opt_range("--rotate-count", a->rotate_count, 0, 1000, &error) ||
        !rs_opt_range("--rotate-size", a->rotate_size, 4096, 0, &error)) {
        g_printerr("ringside attach: %s\n", error->message);
        return FALSE;
    }
    return TRUE;
}

/* Follow until stopped: 0, or 1 if a boot was not clean (or the first
 * connection failed, @error set). */
static int attach_follow(Attach *a, GError **error)
{
    guint sig_int, sig_term;

    rs_virt_init();
    a->followers = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                        (GDestroyNotify)rs_follower_free);
    a->files = g_ptr_array_new();
    a->loop = g_main_loop_new(NULL, FALSE);
    if (!connect_now(a, error)) {
        return 1;
    }
    sig_int = g_unix_signal_add(SIGINT, on_signal, a);
    sig_term = g_unix_signal_add(SIGTERM, on_signal, a);
    g_main_loop_run(a->loop);
    g_source_remove(sig_int);
    g_source_remove(sig_term);
    return a->boots && !a->all_clean ? 1 : 0;
}

static void attach_clear(Attach *a)
{
    guint i;

    g_clear_handle_id(&a->reconnect_id, g_source_remove);
    /* Judges what is still open before the connection goes. */
    g_hash_table_unref(a->followers);
    disconnect(a);
    for (i = 0; i < a->files->len; i++) {
        fclose(a->files->pdata[i]);
    }
    g_ptr_array_unref(a->files);
    g_main_loop_unref(a->loop);
    g_free(a->uri);
    g_free(a->domain);
    g_free(a->outdir);
    g_free(a->events_socket);
    g_free(a->keep_events);
    if (a->journal && a->journal != stdout) {
        fclose(a->journal);
    }
}

int rs_cmd_attach(int argc, char **argv)
{
    g_autoptr(GOptionContext) ctx = NULL;
    g_autoptr(GError) error = NULL;
    Attach a = { .lifecycle_id = -1, .all_clean = TRUE, .rotate_count = 4 };
    g_autofree char *rotate_size = NULL, *journal = NULL;
    gboolean all = FALSE;
    int status = 1;
    const GOptionEntry entries[] = {
        { "connect", 'c', 0, G_OPTION_ARG_STRING, &a.uri,
          "libvirt URI (default qemu:///system)", "URI" },
        { "domain", 'd', 0, G_OPTION_ARG_STRING, &a.domain,
          "The domain to follow", "NAME" },
        { "all", 'a', 0, G_OPTION_ARG_NONE, &all,
          "Follow every ringside domain on the connection, and those that "
          "appear later, each into DIR/NAME.jsonl", NULL },
        { "output", 'o', 0, G_OPTION_ARG_FILENAME, &a.outdir,
          "--all: directory for the JSON Lines files (default .)", "DIR" },
        { "json", 0, 0, G_OPTION_ARG_NONE, &a.json,
          "JSON Lines instead of text", NULL },
        { "boots", 0, 0, G_OPTION_ARG_INT, &a.boots,
          "Exit after N boots have ended (default: follow until "
          "interrupted); the status is then 0 only if all were clean", "N" },
        { "resume", 0, 0, G_OPTION_ARG_NONE, &a.resume,
          "Resume a paused domain once its console is open (start it with "
          "virsh start --paused: nothing it prints is missed)", NULL },
        { "events-socket", 0, 0, G_OPTION_ARG_STRING, &a.events_socket,
          "Read the device's events from this socket chardev instead of "
          "the one the domain names (another host's, forwarded)",
          "unix:PATH|tcp:HOST:PORT" },
        { "keep-events", 0, 0, G_OPTION_ARG_FILENAME, &a.keep_events,
          "Keep the events read from a socket in FILE, rotated (default: "
          "next to a local socket, as NAME.ringside-events.jsonl)", "FILE" },
        { "rotate-size", 0, 0, G_OPTION_ARG_STRING, &rotate_size,
          "Rotate the kept events at this size (default 64M)", "BYTES[KMG]" },
        { "rotate-count", 0, 0, G_OPTION_ARG_INT, &a.rotate_count,
          "Rotated event files kept: FILE.1 .. FILE.N (default 4)", "N" },
        { "journal", 0, 0, G_OPTION_ARG_FILENAME, &journal,
          "Also write each console line (and each record that never "
          "reached the console) as a journal entry in the Journal Export "
          "Format to FILE, appending (- for standard output)", "FILE" },
        { "no-events", 0, 0, G_OPTION_ARG_NONE, &a.no_events,
          "Do not read the device's event file even if this host has it: "
          "console lines and QMP counters only", NULL },
        { NULL }
    };

    ctx = g_option_context_new("- follow ringside domains under libvirt");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!rs_parse_options(ctx, &argc, &argv, 0)) {
        return 2;
    }
    if (!attach_check(&a, all, rotate_size)) {
        return 2;
    }
    if (journal && !strcmp(journal, "-")) {
        a.journal = stdout;
    } else if (journal) {
        a.journal = fopen(journal, "a");
        if (!a.journal) {
            g_printerr("ringside attach: cannot write %s: %s\n", journal,
                       g_strerror(errno));
            return 1;
        }
    }
    if (!a.uri) {
        a.uri = g_strdup("qemu:///system");
    }
    if (all && !a.outdir) {
        a.outdir = g_strdup(".");
    }
    if (a.outdir && !g_file_test(a.outdir, G_FILE_TEST_IS_DIR)) {
        g_printerr("ringside attach: %s is not a directory\n", a.outdir);
        return 1;
    }

    status = attach_follow(&a, &error);
    if (error) {
        g_printerr("ringside attach: %s\n", error->message);
    }
    attach_clear(&a);
    return status;
}
