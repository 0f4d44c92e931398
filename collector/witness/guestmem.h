/*
 * Guest physical memory from a file: a live guest's shared RAM backend, a
 * QEMU ELF dump, or a raw image at a given base.  Files are mapped
 * read-only; reads are bounds-checked against the segments the file holds.
 */
#ifndef RINGSIDE_GUESTMEM_H
#define RINGSIDE_GUESTMEM_H

#include <glib.h>
#include <stdint.h>

typedef struct {
    uint64_t gpa;
    uint64_t len;
    const uint8_t *host;    /* inside the mapping */
} RsMemSegment;

typedef struct {
    char *path;
    void *map;
    gsize map_len;
    GArray *segs;               /* RsMemSegment, sorted by gpa */
    guint last_seg;             /* index of the segment read last */
    const char *vmcoreinfo;     /* note text found in an ELF dump, or NULL */
    gsize vmcoreinfo_len;
} RsGuestMem;

/*
 * A QEMU RAM backend file (-object memory-backend-file,...,share=on) of a
 * pc machine: the file's first bytes are guest RAM from address 0; with
 * 3.5 GiB or more, RAM above 3 GiB sits at 4 GiB, as QEMU's i440fx lays it.
 */
RsGuestMem *rs_guestmem_open_ram(const char *path, GError **error);
/* A raw image whose first byte is guest physical address @base. */
RsGuestMem *rs_guestmem_open_raw(const char *path, uint64_t base,
                                 GError **error);
/* A QEMU dump-guest-memory ELF (paging on or off). */
RsGuestMem *rs_guestmem_open_elf(const char *path, GError **error);
/* Whichever of the three @path is: ELF by its magic, else a RAM file. */
RsGuestMem *rs_guestmem_open_auto(const char *path, GError **error);

void rs_guestmem_free(RsGuestMem *m);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsGuestMem, rs_guestmem_free)

/* An rs_read_fn over @opaque = RsGuestMem: 0 if all of it is readable. */
int rs_guestmem_read(void *opaque, uint64_t gpa, void *buf, size_t len);

#endif
