/*
 * Level-0 discovery: from guest memory alone, find the kernel's VMCOREINFO
 * note (in the dump's notes, else by scanning RAM page starts), parse it,
 * and open the printk ring it describes.
 */
#ifndef RINGSIDE_DISCOVER_H
#define RINGSIDE_DISCOVER_H

#include "rslib-ring.h"
#include "witness/guestmem.h"

typedef struct {
    rs_vmci vmci;
    rs_ring ring;
    uint64_t note_gpa;          /* where the note was found (0: ELF note) */
    gboolean from_elf_note;
} RsDiscovery;

gboolean rs_discover(RsGuestMem *mem, RsDiscovery *d, GError **error);

/*
 * Early boot moves prb to a bigger ring with the same seqs: follow it.  A
 * live guest's reader calls this before each new read.
 */
void rs_discovery_refresh(RsDiscovery *d);

#endif
