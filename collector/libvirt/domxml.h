/*
 * libvirt domain XML for ringside: a new domain that boots the project's
 * guest kernel, the addition that turns an existing domain's serial0 into
 * a validating ringside-serial under the QEMU fork, and reading that
 * addition back.
 */
#ifndef RINGSIDE_DOMXML_H
#define RINGSIDE_DOMXML_H

#include <glib.h>

#define RS_QEMU_NS "http://libvirt.org/schemas/domain/qemu/1.0"
/* The id of the -chardev the device writes its events to. */
#define RS_EVENTS_CHARDEV "ringside-events"

typedef struct {
    char *qemu;         /* <emulator>: the fork's qemu-system-x86_64, or
                         * the drop-in (with @dropin) */
    gboolean dropin;    /* no passthrough: the drop-in puts the device in
                         * and writes the events where attach reads them;
                         * @events, @socket and @pace do not apply */
    char *events;       /* events file, appended to by each boot, or a
                         * socket "unix:PATH" / "tcp:HOST:PORT" that
                         * attach reads; NULL: the default for <name> */
    gboolean socket;    /* the default is rs_domxml_default_socket() */
    char *pace;         /* ringside-serial pace=, NULL: the device's */
    gboolean shared_memory; /* guest RAM in a file shared with the host,
                             * so that attach can read the printk ring */
} RsDomXmlOptions;

typedef struct {
    char *name;
    char *kernel, *initrd, *cmdline;
    int memory_mib, vcpus;
} RsDomSpec;

/*
 * The socket, "unix:PATH", ringside libvirt-xml picks for domain @name
 * with --events-socket (its events file: rs_events_libvirt_path()).
 */
char *rs_domxml_default_socket(const char *name);

/* A complete domain: direct kernel boot, TCG, no disks; serial0 a pty
 * that libvirt also logs to /var/log/libvirt/qemu/NAME-serial0.log. */
char *rs_domxml_new(const RsDomSpec *spec, const RsDomXmlOptions *opt,
                    GError **error);

/*
 * @xml with the ringside addition made (or remade: running it twice gives
 * the same XML).  Adds a pty serial0 and its console when the domain has
 * no serial port.
 */
char *rs_domxml_patch(const char *xml, const RsDomXmlOptions *opt,
                      GError **error);

/*
 * Whether @xml has the addition, and the events file it names (NULL if
 * none; "unix:PATH" or "tcp:HOST:PORT" for a socket).  FALSE with @error only when @xml is not a domain at all.
 */
gboolean rs_domxml_inspect(const char *xml, gboolean *ringside,
                           char **events, GError **error);

#endif
