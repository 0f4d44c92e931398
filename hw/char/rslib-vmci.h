/*
 * rslib-vmci.h: VMCOREINFO parsing, VMCOREINFO note discovery and x86_64
 * guest virtual-to-physical translation for the ringside printk ring decoder.
 *
 * Plain C99, no QEMU or GLib. Guest memory is only ever reached through a
 * caller-supplied rs_read_fn; every guest value is treated as hostile.
 * Multi-byte guest values are decoded as little-endian (x86_64 guests).
 *
 * Facts this file relies on (Linux 6.1):
 *  - kernel/crash_core.c: the note is Elf64_Nhdr{namesz 11, descsz, type 0},
 *    "VMCOREINFO\0" padded to 12, then descsz bytes of "KEY=VALUE\n" text.
 *    The text is at most VMCOREINFO_BYTES = PAGE_SIZE (4096 on x86_64), each
 *    line at most 0x4f bytes (vmcoreinfo_append_str uses a 0x50 buffer).
 *    vmcoreinfo_note comes from alloc_pages_exact(), so the note header is
 *    always at the start of a page: page-start scanning is sufficient.
 *  - include/linux/crash_core.h: SYMBOL() is %lx (hex, no 0x), SIZE/OFFSET/
 *    LENGTH are %lu, NUMBER() is %ld (signed), PAGESIZE %ld.
 *  - arch/x86/kernel/crash_core_64.c: NUMBER(phys_base), SYMBOL(init_top_pgt),
 *    NUMBER(pgtable_l5_enabled), KERNELOFFSET=%lx, NUMBER(KERNEL_IMAGE_SIZE),
 *    NUMBER(sme_mask).
 */
#ifndef RSLIB_VMCI_H
#define RSLIB_VMCI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Read len bytes of guest physical memory at gpa into buf. Return 0 on
 * success, non-zero if any byte of [gpa, gpa + len) is not readable (buf
 * contents are then unspecified). len is never 0 and never above
 * RS_READ_MAX. The callback may be called many times per decoder call.
 */
typedef int (*rs_read_fn)(void *opaque, uint64_t gpa, void *buf, size_t len);

/* Largest single len the decoder passes to an rs_read_fn. */
#define RS_READ_MAX             (256u * 1024u)

/*
 * A read budget: what one caller action (a device register write, a timer
 * tick) may read of guest memory, in reads and in bytes.  The rs_read_fn
 * charges it (rs_budget_take()) and fails once it is spent; the decoder
 * and its users look at .out to tell a spent budget from memory that is
 * not readable, and put the work off instead of blaming the guest.
 */
typedef struct rs_budget {
    uint64_t reads, bytes;      /* left */
    uint64_t spent_reads, spent_bytes;
    bool out;                   /* a read was refused for want of budget */
} rs_budget;

static inline void rs_budget_set(rs_budget *b, uint64_t reads, uint64_t bytes)
{
    b->reads = reads;
    b->bytes = bytes;
    b->spent_reads = b->spent_bytes = 0;
    b->out = false;
}

/* Charge one read of len bytes; false (and .out set) if it does not fit. */
static inline bool rs_budget_take(rs_budget *b, size_t len)
{
    if (!b) {
        return true;
    }
    if (b->out || b->reads == 0 || len > b->bytes) {
        b->out = true;
        return false;
    }
    b->reads--;
    b->bytes -= len;
    b->spent_reads++;
    b->spent_bytes += len;
    return true;
}

static inline bool rs_budget_out(const rs_budget *b)
{
    return b && b->out;
}

/* Error codes (0 is success). rs_strerror() gives a short description. */
enum {
    RS_OK = 0,
    RS_ERR_ARG,         /* bad argument from the caller */
    RS_ERR_TOO_BIG,     /* text/length above a documented bound */
    RS_ERR_SYNTAX,      /* VMCOREINFO text is not KEY=VALUE lines */
    RS_ERR_RANGE,       /* number does not fit / out of its allowed range */
    RS_ERR_DUP,         /* a key the decoder uses appears twice */
    RS_ERR_MISSING,     /* a required key is missing (message names it) */
    RS_ERR_OLD_KERNEL,  /* kernel older than 5.10: no lockless printk ring */
    RS_ERR_LAYOUT,      /* SIZE/OFFSET values are inconsistent */
    RS_ERR_NOT_FOUND,   /* no VMCOREINFO note found */
    RS_ERR_READ,        /* guest physical memory not readable */
    RS_ERR_XLATE,       /* virtual address not mapped / not canonical */
    RS_ERR_RING,        /* ring header values out of bounds */
    RS_ERR_RACE,        /* values kept changing, retries exhausted */
    RS_ERR_BUDGET,      /* the caller's read budget ran out: try later */
};

const char *rs_strerror(int err);

/* Bound on VMCOREINFO text (descsz): one 4 KiB page, as the kernel writes. */
#define RS_VMCI_TEXT_MAX        4096u
/* Bound on one KEY=VALUE line (the kernel's lines are < 80 bytes). */
#define RS_VMCI_LINE_MAX        256u
/* Bound on every SIZE/OFFSET/LENGTH value the ring decoder uses. */
#define RS_STRUCT_MAX           512u
/* Size of the ELF note header plus padded name in front of the text. */
#define RS_NOTE_HDR_SIZE        24u

/*
 * Printk ring layout from log_buf_vmcoreinfo_setup() (kernel/printk/
 * printk.c). All values are bytes; each is <= RS_STRUCT_MAX after parsing,
 * and rs_vmci_parse() checks that every field fits in its struct. atomic_*
 * fields are offsets of an atomic_long_t whose value lives at
 * + atomic_long_counter.
 */
typedef struct rs_layout {
    uint32_t prb_size, prb_desc_ring, prb_text_data_ring, prb_fail;
    uint32_t dr_size, dr_count_bits, dr_descs, dr_infos, dr_head_id,
             dr_tail_id;
    uint32_t desc_size, desc_state_var, desc_text_blk_lpos;
    uint32_t lpos_size, lpos_begin, lpos_next;
    uint32_t info_size, info_seq, info_ts_nsec, info_text_len,
             info_caller_id, info_dev_info;
    uint32_t devinfo_size, devinfo_subsystem, devinfo_device;
    uint32_t subsystem_len, device_len;
    uint32_t data_size, data_size_bits, data_data, data_head_lpos,
             data_tail_lpos;
    uint32_t atomic_long_size, atomic_long_counter;
} rs_layout;

/* The facts parsed out of a VMCOREINFO note. */
typedef struct rs_vmci {
    char osrelease[65];         /* NUL-terminated, non-empty */
    uint64_t pagesize;          /* must be 4096 */
    uint64_t sym_prb;           /* VA of "struct printk_ringbuffer *prb" */
    uint64_t sym_top_pgt;       /* VA of init_top_pgt (or swapper_pg_dir) */
    uint64_t sym_log_buf;       /* only to recognise pre-5.10 kernels */
    int64_t phys_base;          /* signed; may be negative */
    uint64_t kerneloffset;      /* KASLR shift (0 if absent) */
    uint64_t kernel_image_size; /* 1 GiB if absent or out of (0, 1 GiB] */
    uint64_t sme_mask;          /* 0 if absent */
    bool pgtable_l5;            /* false if absent */
    bool text_truncated;        /* text ended inside a line (ignored) */
    uint64_t have;              /* internal: bitmap of keys seen */
    rs_layout lay;
} rs_vmci;

/*
 * Parse VMCOREINFO text (text[0..len), need not be NUL-terminated; parsing
 * stops at a NUL byte). Unknown keys are ignored; the keys the decoder uses
 * must be well-formed and unique. Required: OSRELEASE, PAGESIZE (=4096),
 * SYMBOL(prb), SYMBOL(init_top_pgt) or SYMBOL(swapper_pg_dir),
 * NUMBER(phys_base) and every printk SIZE/OFFSET/LENGTH of 6.1's
 * log_buf_vmcoreinfo_setup() except latched_seq. An unterminated last
 * line is ignored (the kernel truncates at one page) and flagged.
 * Returns RS_OK or an RS_ERR_* code; err (if non-NULL) gets a message that
 * names the offending key or line. RS_ERR_OLD_KERNEL when SYMBOL(log_buf)
 * is present without SYMBOL(prb).
 */
int rs_vmci_parse(const char *text, size_t len, rs_vmci *out,
                  char *err, size_t errlen);

/*
 * The kernel version an OSRELEASE value begins with: "6.12.118+deb12-amd64"
 * gives 6 and 12 (the kernel's UTS_RELEASE always starts with VERSION and
 * PATCHLEVEL, whatever LOCALVERSION adds).  False, and 0.0, unless it
 * starts with two decimal numbers of 1 to 4 digits joined by a '.'.
 */
bool rs_osrelease_version(const char *osrelease, unsigned *major,
                          unsigned *minor);

/*
 * Cheap plausibility check used by the note finders: text is well-formed
 * KEY=VALUE lines with a non-empty OSRELEASE. Returns RS_OK or an error.
 */
int rs_vmci_check_text(const char *text, size_t len);

/*
 * Find a VMCOREINFO note in buf[0..len) (guest RAM chunk or an ELF PT_NOTE
 * payload), scanning 4-byte aligned offsets. The note's text must lie inside
 * buf and pass rs_vmci_check_text(). Returns a pointer to the text (inside
 * buf) and sets *text_len and, if non-NULL, *note_off (offset of the header);
 * NULL if none.
 */
const char *rs_note_find(const void *buf, size_t len, size_t *text_len,
                         size_t *note_off);

/* rs_note_scan() flags */
#define RS_SCAN_PAGE_STARTS     1u  /* only page-aligned headers (fast) */

/*
 * Scan guest physical memory [gpa, gpa + max_bytes) for a VMCOREINFO note
 * through rd, checking page starts only (RS_SCAN_PAGE_STARTS: one 24-byte
 * read per page, the kernel's note being page-aligned) or every 4-byte
 * aligned offset. work/work_len is scratch space for chunked reads
 * (at least 4 KiB; 64 KiB is a good size; chunks are capped at
 * RS_READ_MAX); an unreadable chunk is retried page by page and unreadable
 * pages are skipped. A header that straddles a chunk end is read on its own
 * (24 bytes). For each header that matches, its text is read into text
 * (text_cap must be >= RS_VMCI_TEXT_MAX) and checked with
 * rs_vmci_check_text(). On success *text_len and, if non-NULL, *note_gpa
 * are set. Returns RS_OK, RS_ERR_NOT_FOUND or RS_ERR_ARG.
 */
int rs_note_scan(rs_read_fn rd, void *opaque, uint64_t gpa,
                 uint64_t max_bytes, unsigned flags,
                 void *work, size_t work_len,
                 char *text, size_t text_cap, size_t *text_len,
                 uint64_t *note_gpa);

/*
 * rs_note_scan() whose rd charges budget (may be NULL: none).  When a read
 * fails with the budget spent, the scan stops and returns RS_ERR_BUDGET
 * with *resume set to the address to go on from (a later call from there
 * misses nothing); otherwise *resume is the end of the range.
 */
int rs_note_scan_budget(rs_read_fn rd, void *opaque, const rs_budget *budget,
                        uint64_t gpa, uint64_t max_bytes, unsigned flags,
                        void *work, size_t work_len,
                        char *text, size_t text_cap, size_t *text_len,
                        uint64_t *note_gpa, uint64_t *resume);

/*
 * x86_64 kernel virtual memory. Image VAs [0xffffffff80000000,
 * +kernel_image_size) translate as VA - 0xffffffff80000000 + phys_base
 * (mod 2^64); any other VA is walked through the page tables from the
 * root (by default PA of SYMBOL(init_top_pgt) by the image rule), 4 or 5
 * levels, 1 GiB / 2 MiB pages, entries masked with 0x000ffffffffff000 &
 * ~sme_mask, present bit required at every level.
 */
typedef struct rs_vm {
    rs_read_fn read;
    void *opaque;
    uint64_t phys_base;         /* two's complement of the signed value */
    uint64_t image_size;
    uint64_t root;              /* PA of the top-level page table */
    uint64_t entry_mask;
    bool l5;
    bool have_root;             /* false: only image VAs translate */
    /*
     * The budget read charges, if any (NULL from rs_vm_init()): lets the
     * decoder's users tell a spent budget from unreadable memory.
     */
    const rs_budget *budget;
} rs_vm;

#define RS_START_KERNEL_MAP     0xffffffff80000000ull
#define RS_PTE_ADDR_MASK        0x000ffffffffff000ull

/* Set up vm from parsed info. Returns RS_OK or RS_ERR_ARG. */
int rs_vm_init(rs_vm *vm, const rs_vmci *vi, rs_read_fn rd, void *opaque);

/*
 * Use a vCPU's CR3 as the page-table root instead. PCID/flag bits and
 * sme_mask are cleared; with pti, bit 12 too (a PTI user PGD is the kernel
 * PGD + 4 KiB, and only the kernel one maps the direct map).
 */
void rs_vm_set_cr3(rs_vm *vm, uint64_t cr3, bool pti);

/*
 * Translate one VA. *pa gets the physical address; *page_left (optional)
 * the bytes from va to the end of its 4 KiB page. Returns RS_OK,
 * RS_ERR_XLATE (not canonical, not present, reserved PS bit) or
 * RS_ERR_READ (a page-table entry was unreadable). At most 5 reads.
 */
int rs_vm_translate(const rs_vm *vm, uint64_t va, uint64_t *pa,
                    uint64_t *page_left);

/*
 * Read len bytes at kernel VA va, translating and reading each 4 KiB page
 * separately. len must be <= RS_READ_MAX (RS_ERR_TOO_BIG otherwise); a range
 * wrapping past 2^64 is RS_ERR_XLATE.
 */
int rs_vm_read(const rs_vm *vm, uint64_t va, void *buf, size_t len);

/* Little-endian loads from a byte buffer. */
static inline uint64_t rs_le64(const uint8_t *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
           (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 |
           (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}

static inline uint32_t rs_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint16_t rs_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

/*
 * For the decoder's own functions that take (char *err, size_t errlen):
 * describe the failure there if the caller gave room for it.
 */
#define RS_SETERR(...) \
    do { \
        if (err && errlen) { \
            snprintf(err, errlen, __VA_ARGS__); \
        } \
    } while (0)

#endif /* RSLIB_VMCI_H */
