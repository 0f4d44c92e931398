/* Mapping guest memory files and reading them by guest physical address. */
#include "witness/guestmem.h"
#include "errors.h"
#include "rslib-vmci.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* QEMU's pc (i440fx) machine: RAM below 4 GiB ends here for big guests. */
#define PC_BIG_RAM          0xe0000000ull
#define PC_LOWMEM_BIG       0xc0000000ull
#define GIB4                0x100000000ull

void rs_guestmem_free(RsGuestMem *m)
{
    if (!m) {
        return;
    }
    if (m->map && m->map != MAP_FAILED) {
        munmap(m->map, m->map_len);
    }
    if (m->segs) {
        g_array_unref(m->segs);
    }
    g_free(m->path);
    g_free(m);
}

static RsGuestMem *map_file(const char *path, GError **error)
{
    g_autoptr(RsGuestMem) m = g_new0(RsGuestMem, 1);
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND, "%s: %s", path,
                    g_strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: not a non-empty regular file", path);
        close(fd);
        return NULL;
    }
    m->map_len = st.st_size;
    m->map = mmap(NULL, m->map_len, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m->map == MAP_FAILED) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "%s: mmap: %s", path,
                    g_strerror(errno));
        return NULL;
    }
    m->path = g_strdup(path);
    m->segs = g_array_new(FALSE, FALSE, sizeof(RsMemSegment));
    return g_steal_pointer(&m);
}

static void add_seg(RsGuestMem *m, uint64_t gpa, uint64_t off, uint64_t len)
{
    RsMemSegment s = {
        .gpa = gpa, .len = len, .host = (const uint8_t *)m->map + off,
    };

    g_array_append_val(m->segs, s);
}

static gint seg_cmp(gconstpointer a, gconstpointer b)
{
    const RsMemSegment *x = a, *y = b;

    return x->gpa < y->gpa ? -1 : x->gpa > y->gpa;
}

RsGuestMem *rs_guestmem_open_raw(const char *path, uint64_t base,
                                 GError **error)
{
    RsGuestMem *m = map_file(path, error);

    if (!m) {
        return NULL;
    }
    if (base + m->map_len < base) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: base 0x%" G_GINT64_MODIFIER "x + size passes 2^64",
                    path, base);
        rs_guestmem_free(m);
        return NULL;
    }
    add_seg(m, base, 0, m->map_len);
    return m;
}

RsGuestMem *rs_guestmem_open_ram(const char *path, GError **error)
{
    RsGuestMem *m = map_file(path, error);

    if (!m) {
        return NULL;
    }
    if (m->map_len < PC_BIG_RAM) {
        add_seg(m, 0, 0, m->map_len);
    } else {
        add_seg(m, 0, 0, PC_LOWMEM_BIG);
        add_seg(m, GIB4, PC_LOWMEM_BIG, m->map_len - PC_LOWMEM_BIG);
    }
    return m;
}

/* ELF64 little-endian x86_64, read field by field from the mapping. */
#define EHDR_SIZE   64
#define PHDR_SIZE   56
#define PT_LOAD     1
#define PT_NOTE     4
#define EM_X86_64   62

RsGuestMem *rs_guestmem_open_elf(const char *path, GError **error)
{
    g_autoptr(RsGuestMem) m = map_file(path, error);
    const uint8_t *f;
    uint64_t phoff, i;
    uint16_t phentsize, phnum;

    if (!m) {
        return NULL;
    }
    f = m->map;
    if (m->map_len < EHDR_SIZE || memcmp(f, "\177ELF", 4) != 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: not an ELF file%s", path,
                    m->map_len >= 8 && !memcmp(f, "KDUMP   ", 8) ?
                    " (a kdump-compressed dump: use dump-guest-memory's "
                    "ELF format)" : "");
        return NULL;
    }
    if (f[4] != 2 || f[5] != 1) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: not a 64-bit little-endian ELF file", path);
        return NULL;
    }
    if (rs_le16(f + 16) != 4 || rs_le16(f + 18) != EM_X86_64) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: not an x86_64 core dump (ELF type %u, machine %u)",
                    path, rs_le16(f + 16), rs_le16(f + 18));
        return NULL;
    }
    phoff = rs_le64(f + 32);
    phentsize = rs_le16(f + 54);
    phnum = rs_le16(f + 56);
    if (phentsize < PHDR_SIZE || phoff > m->map_len ||
        (uint64_t)phnum * phentsize > m->map_len - phoff) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: program headers lie outside the file", path);
        return NULL;
    }
    for (i = 0; i < phnum; i++) {
        const uint8_t *ph = f + phoff + i * phentsize;
        uint32_t type = rs_le32(ph);
        uint64_t off = rs_le64(ph + 8), paddr = rs_le64(ph + 24);
        uint64_t filesz = rs_le64(ph + 32);

        if (type != PT_LOAD && type != PT_NOTE) {
            continue;
        }
        if (off > m->map_len || filesz > m->map_len - off) {
            g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                        "%s: segment %" G_GUINT64_FORMAT " runs past the end "
                        "of the file (truncated dump?)", path, i);
            return NULL;
        }
        if (type == PT_LOAD && filesz) {
            if (paddr + filesz < paddr) {
                g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                            "%s: segment %" G_GUINT64_FORMAT " wraps the "
                            "address space", path, i);
                return NULL;
            }
            add_seg(m, paddr, off, filesz);
        } else if (type == PT_NOTE && !m->vmcoreinfo) {
            size_t text_len;
            const char *text = rs_note_find(f + off, filesz, &text_len, NULL);

            if (text) {
                m->vmcoreinfo = text;
                m->vmcoreinfo_len = text_len;
            }
        }
    }
    if (!m->segs->len) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "%s: the dump holds no guest memory (no PT_LOAD)", path);
        return NULL;
    }
    g_array_sort(m->segs, seg_cmp);
    return g_steal_pointer(&m);
}

RsGuestMem *rs_guestmem_open_auto(const char *path, GError **error)
{
    char magic[8] = { 0 };
    FILE *f = fopen(path, "rb");

    if (f) {
        size_t n = fread(magic, 1, sizeof(magic), f);

        fclose(f);
        if (n >= 4 && !memcmp(magic, "\177ELF", 4)) {
            return rs_guestmem_open_elf(path, error);
        }
        if (n == 8 && (!memcmp(magic, "KDUMP   ", 8) ||
                       !memcmp(magic, "makedump", 8))) {
            g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                        "%s: a kdump-compressed or flattened dump; ringside "
                        "reads QEMU's ELF dumps (dump-guest-memory without "
                        "a format)", path);
            return NULL;
        }
    }
    return rs_guestmem_open_ram(path, error);
}

static gboolean seg_has(const RsMemSegment *s, uint64_t gpa)
{
    return gpa >= s->gpa && gpa - s->gpa < s->len;
}

/*
 * Segments are few (one per RAM block), so a linear search is enough;
 * reads cluster, so the last segment hit is tried first.
 */
int rs_guestmem_read(void *opaque, uint64_t gpa, void *buf, size_t len)
{
    RsGuestMem *m = opaque;
    uint8_t *out = buf;
    guint i;

    while (len) {
        const RsMemSegment *hit = NULL;
        uint64_t n;

        if (m->last_seg < m->segs->len &&
            seg_has(&g_array_index(m->segs, RsMemSegment, m->last_seg), gpa)) {
            hit = &g_array_index(m->segs, RsMemSegment, m->last_seg);
        }
        for (i = 0; !hit && i < m->segs->len; i++) {
            if (seg_has(&g_array_index(m->segs, RsMemSegment, i), gpa)) {
                hit = &g_array_index(m->segs, RsMemSegment, i);
                m->last_seg = i;
            }
        }
        if (!hit) {
            return -1;
        }
        n = MIN(len, hit->len - (gpa - hit->gpa));
        memcpy(out, hit->host + (gpa - hit->gpa), n);
        out += n;
        gpa += n;
        len -= n;
    }
    return 0;
}
