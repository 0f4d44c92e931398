/* Finding the guest's printk ring from its VMCOREINFO note. */
#include "witness/discover.h"
#include "errors.h"

#define SCAN_CHUNK  (64 * 1024)

static gboolean scan_ram(RsGuestMem *mem, char *text, size_t cap,
                         size_t *text_len, uint64_t *note_gpa)
{
    g_autofree void *work = g_malloc(SCAN_CHUNK);
    guint i;

    for (i = 0; i < mem->segs->len; i++) {
        const RsMemSegment *s = &g_array_index(mem->segs, RsMemSegment, i);

        if (rs_note_scan(rs_guestmem_read, mem, s->gpa, s->len,
                         RS_SCAN_PAGE_STARTS, work, SCAN_CHUNK, text, cap,
                         text_len, note_gpa) == RS_OK) {
            return TRUE;
        }
    }
    return FALSE;
}

gboolean rs_discover(RsGuestMem *mem, RsDiscovery *d, GError **error)
{
    static char text[RS_VMCI_TEXT_MAX];
    const char *note;
    size_t len = 0;
    char why[256];
    int rc;
    rs_vm vm;

    memset(d, 0, sizeof(*d));
    if (mem->vmcoreinfo) {
        note = mem->vmcoreinfo;
        len = mem->vmcoreinfo_len;
        d->from_elf_note = TRUE;
    } else if (scan_ram(mem, text, sizeof(text), &len, &d->note_gpa)) {
        note = text;
    } else {
        g_set_error(error, RS_ERROR, RS_ERROR_GUEST,
                    "%s: no VMCOREINFO note in guest memory: not a Linux "
                    "guest, a kernel built without CONFIG_CRASH_CORE, or one "
                    "that has not reached subsys_initcall yet", mem->path);
        return FALSE;
    }

    rc = rs_vmci_parse(note, len, &d->vmci, why, sizeof(why));
    if (rc == RS_ERR_OLD_KERNEL) {
        g_set_error(error, RS_ERROR, RS_ERROR_GUEST,
                    "%s: the guest kernel is older than 5.10 (no lockless "
                    "printk ring); ringside needs Linux >= 5.10", mem->path);
        return FALSE;
    }
    if (rc != RS_OK) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: unusable VMCOREINFO: %s", mem->path, why);
        return FALSE;
    }
    rc = rs_vm_init(&vm, &d->vmci, rs_guestmem_read, mem);
    if (rc == RS_OK) {
        rc = rs_ring_open(&d->ring, &d->vmci, &vm, why, sizeof(why));
    } else {
        g_strlcpy(why, rs_strerror(rc), sizeof(why));
    }
    if (rc != RS_OK) {
        g_set_error(error, RS_ERROR, RS_ERROR_GUEST,
                    "%s: cannot open the printk ring of %s: %s%s", mem->path,
                    d->vmci.osrelease, why,
                    rc == RS_ERR_READ ? " (the dump lacks that memory?)" : "");
        return FALSE;
    }
    return TRUE;
}

void rs_discovery_refresh(RsDiscovery *d)
{
    rs_ring again;

    if (rs_ring_open(&again, &d->vmci, &d->ring.vm, NULL, 0) == RS_OK &&
        again.prb != d->ring.prb) {
        d->ring = again;
    }
}
