/*
 * The files a libvirt domain's QEMU opens, where it may open them.  Under
 * Debian's default qemu.conf QEMU runs as libvirt-qemu, which cannot reach
 * root's home, and virt-aa-helper refuses a kernel under /usr/lib or
 * /usr/share: libvirt's own place for kernels is /var/lib/libvirt/boot.
 */
#ifndef RINGSIDE_BOOTFILES_H
#define RINGSIDE_BOOTFILES_H

#include <glib.h>

#define RS_LIBVIRT_BOOT_DIR "/var/lib/libvirt/boot"

/* Where @src goes: @dir/@name, or @src itself when it is in @dir. */
char *rs_bootfile_target(const char *src, const char *dir, const char *name);

/* Copy @src to @dest (from rs_bootfile_target) unless the bytes are there. */
gboolean rs_bootfile_copy(const char *src, const char *dest, GError **error);

/*
 * Whether a user with no group or ownership in common with @path's could
 * reach it: every directory on the way searchable by others, the file
 * readable (@exec: executable) by others.  If not, *@why names the part
 * that stops it.
 */
gboolean rs_bootfile_reachable(const char *path, gboolean exec, char **why);

#endif
