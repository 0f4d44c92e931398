/*
 * libvirt for ringside: its events on the GLib main loop, its errors as
 * GErrors, and what a running ringside domain's device says over QMP.
 */
#ifndef RINGSIDE_VIRT_H
#define RINGSIDE_VIRT_H

#include <glib.h>
#include <libvirt/libvirt.h>

/* Once, before the first connection. */
void rs_virt_init(void);

/* Set @error from libvirt's last error, prefixed with @what. */
void rs_virt_error(GError **error, const char *what, ...) G_GNUC_PRINTF(2, 3);

virConnectPtr rs_virt_connect(const char *uri, GError **error);

/*
 * The value of QOM property @prop of object @path (e.g. RS_VIRT_DEVICE)
 * in the running domain, as JSON text, through libvirt's QMP passthrough;
 * NULL with @error if the domain does not run or has no such object.
 */
char *rs_virt_qom_get(virDomainPtr dom, const char *path, const char *prop,
                      GError **error);

/*
 * The shared RAM file of a running domain with <memoryBacking><source
 * type='file'/><access mode='shared'/>: QEMU's memory backend "pc.ram".
 * NULL with @error if it has none, or it is not shared.
 */
char *rs_virt_ram_file(virDomainPtr dom, GError **error);

/* The device's QOM path: libvirt names the first serial port serial0. */
#define RS_VIRT_DEVICE "/machine/peripheral/serial0"

#endif
