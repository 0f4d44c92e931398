/*
 * fuzz-ring.c: libFuzzer target for the ringside printk ring decoder
 * (hw/char/rslib-ring.[ch], hw/char/rslib-vmci.[ch]).
 *
 * A valid 128 KiB fake guest is built once (fuzz-guest.h, shared by the
 * other targets): page tables, a static ring in
 * kernel-image addresses, a dynamic ring in direct-map addresses (with a
 * non-contiguous page), and a page-aligned VMCOREINFO note. Each input
 * chooses where VMCOREINFO comes from (built-in, page scan, full scan, or
 * the input itself), patches the guest memory, and can defer one patch to
 * the Nth read callback to play a concurrent writer. Then: discovery,
 * first/next seq, a full iteration with formatting, random reads and
 * translations. The raw input is also fed to the note finder, the
 * VMCOREINFO parser and the console-line classifier. The static ring holds
 * a block placed by the 6.19 rule, ending exactly at the ring end. Any out-of-bounds access, UB or broken invariant
 * (checked with __builtin_trap) is a finding.
 *
 * Input: [mode u8][hook_at u16][if mode&3==3: text_len u16, text]
 *        then patches {offset u24 (mod memory size), len u8, bytes}.
 * mode bits 0-1: 0 built-in text, 1 built-in + prb -> dynamic ring,
 * 2 scan page starts, 3 text from input; bit 2: full 4-byte scan;
 * bit 3: claim 5-level paging; bit 4: the first patch is deferred to read
 * hook_at.
 */
#include "fuzz-guest.h"

#define MEM_SIZE        FG_MEM_SIZE
#define IMG_VA          FG_IMG_VA
#define DM              FG_DM
#define PRB_SYM         FG_PRB_SYM
#define RB_DYN          FG_RB_DYN

typedef fg_guest Guest;

static uint8_t base[MEM_SIZE];
static char base_text[RS_VMCI_TEXT_MAX];
static size_t base_text_len;
static Guest g;

#define check fg_check
#define apply fg_apply
#define gread fg_read

static void build_base(void)
{
    fg_ring s, d;

    fg_build(base, &s, &d, base_text, sizeof(base_text), &base_text_len);
}

static size_t gen_text(char *s, size_t cap, bool l5)
{
    return fg_vmci_text(s, cap, l5);
}

/* ---- the run ------------------------------------------------------------- */

/* the console-line classifier: bounded, consistent, exact */
static void check_notice(const uint8_t *p, size_t n)
{
    uint64_t c = 1, d = 2;
    rs_console_notice k = rs_parse_console_notice(p, n, &c);
    bool dropped = rs_parse_dropped_notice(p, n, &d);

    check(k >= RS_NOTICE_NONE && k <= RS_NOTICE_PERF_EARLY);
    check(rs_parse_console_notice(p, n, NULL) == k);
    check(dropped == (k == RS_NOTICE_DROPPED));
    check(dropped ? d == c && c != 0 : d == 2);
    check(k == RS_NOTICE_DROPPED || k == RS_NOTICE_PERF_EARLY || c == 0);
    check(k == RS_NOTICE_NONE || (n >= 2 && p[n - 1] != '\n'));
}

static void exercise_ring(const rs_ring *r, const uint8_t *in, size_t n)
{
    static char text[2048], out[4096];
    rs_record rec;
    rs_iter it;
    rs_iter_ev ev;
    uint64_t first = 0, next = 0, last;
    unsigned steps = 0;
    size_t k;
    rs_ring_pos pos;

    (void)rs_ring_pos_read(r, &pos);
    if (rs_ring_first_seq(r, &first) != RS_OK) {
        first = 0;
    }
    if (rs_ring_next_seq(r, &next) != RS_OK) {
        next = UINT64_MAX;
    }
    rs_iter_init(&it, r, first > 4 ? first - 4 : 0, next, 256,
                 n & 1 ? RS_ITER_NODATA : 0);
    last = it.seq;
    while ((ev = rs_iter_next(&it, &rec, text, (n & 2) ? 16 : sizeof(text)))
           < RS_IT_END) {
        check(++steps <= 256);
        check(it.seq > last);           /* always progresses */
        last = it.seq;
        if (ev == RS_IT_RECORD) {
            size_t cap = (n & 2) ? 16 : sizeof(text);
            size_t want = rec.text_len < cap ? rec.text_len : cap;
            size_t m;

            check(rec.text_copied == want);
            check(rec.truncated == (rec.text_len > cap));
            m = rs_format(&rec, RS_FMT_TIME, 0, out, sizeof(out));
            check(m >= rec.text_copied + 1);
            m = rs_format(&rec, RS_FMT_TIME | RS_FMT_CALLER | RS_FMT_SYSLOG,
                          RS_CONSOLE_LOG_MAX, out, sizeof(out));
            check(m < RS_CONSOLE_LOG_MAX);
            (void)rs_format(&rec, (unsigned)n & 7, n % 64, out, n % 32);
            check(rec.force_con == ((rec.flags & RS_LOG_FORCE_CON) != 0));
            check(!rec.force_con ||
                  !rs_console_filtered_flags((int)(n % 9), NULL, rec.level,
                                             rec.flags, rec.seq));
            m = rs_format(&rec, 0, 0, out, sizeof(out));
            if (m && m < sizeof(out)) {
                check_notice((const uint8_t *)out, m - 1);
            }
        }
    }
    /* random seqs and addresses */
    for (k = 0; k + 8 <= n && k < 64; k += 8) {
        uint64_t v = rs_le64(in + k), pa;

        (void)rs_ring_read(r, v, &rec, text, sizeof(text));
        (void)rs_ring_read(r, first + (v & 31), &rec, NULL, 0);
        (void)rs_vm_translate(&r->vm, v, &pa, NULL);
        (void)rs_vm_translate(&r->vm, DM + (v & 0xfffff), &pa, NULL);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool inited;
    static uint8_t work[16384];
    static char text[RS_VMCI_TEXT_MAX];
    static char tbuf[RS_VMCI_TEXT_MAX];
    const char *vtext = base_text;
    size_t vlen = base_text_len, p = 3, tl;
    unsigned mode;
    rs_vmci vi;
    rs_vm vm;
    rs_ring ring;
    char err[160];
    bool deferred;

    if (!inited) {
        static char t[2048];
        rs_record rec;

        build_base();
        inited = true;
        /* the base image must decode, the 6.19 block (seq 7) included */
        memcpy(g.mem, base, MEM_SIZE);
        rs_budget_set(&g.budget, UINT64_MAX, UINT64_MAX);
        check(rs_vmci_parse(base_text, base_text_len, &vi, err,
                            sizeof(err)) == RS_OK);
        check(rs_vm_init(&vm, &vi, gread, &g) == RS_OK);
        check(rs_ring_open(&ring, &vi, &vm, err, sizeof(err)) == RS_OK);
        check(rs_ring_read(&ring, 7, &rec, t, sizeof(t)) == RS_REC_OK);
        check(rec.text_len == 1024 - 80 - 8 && (rec.lpos_next & 1023) == 0);
    }
    /* the raw input as a buffer to search and as VMCOREINFO text */
    (void)rs_note_find(data, size, &tl, NULL);
    (void)rs_vmci_parse((const char *)data, size, &vi, err, sizeof(err));
    check_notice(data, size);

    if (size < 3) {
        return 0;
    }
    mode = data[0];
    memcpy(g.mem, base, MEM_SIZE);
    g.reads = 0;
    rs_budget_set(&g.budget, UINT64_MAX, UINT64_MAX);   /* none */
    g.hook_at = (unsigned)data[1] | (unsigned)data[2] << 8;
    g.hook_patch = NULL;
    deferred = mode & 16;

    if ((mode & 3) == 3) {
        size_t n;

        if (size < p + 2) {
            return 0;
        }
        n = (size_t)data[p] | (size_t)data[p + 1] << 8;
        p += 2;
        if (n > size - p) {
            n = size - p;
        }
        vtext = (const char *)data + p;
        vlen = n;
        p += n;
    } else if (mode & 8) {
        vlen = gen_text(tbuf, sizeof(tbuf), true);
        vtext = tbuf;
    }
    /* patches */
    while (p + 4 <= size) {
        uint32_t off = ((uint32_t)data[p] | (uint32_t)data[p + 1] << 8 |
                        (uint32_t)data[p + 2] << 16) % MEM_SIZE;
        size_t n = data[p + 3];

        p += 4;
        if (n > size - p) {
            n = size - p;
        }
        if (deferred) {
            g.hook_patch = data + p;
            g.hook_len = n;
            g.hook_off = off;
            deferred = false;
        } else {
            apply(g.mem, off, data + p, n);
        }
        p += n;
    }
    if ((mode & 3) == 1) {
        uint64_t v = IMG_VA + RB_DYN;
        size_t i;

        for (i = 0; i < 8; i++) {
            g.mem[PRB_SYM + i] = (uint8_t)(v >> (8 * i));
        }
    }
    if ((mode & 3) == 2) {
        uint64_t gpa = 0;

        if (rs_note_scan(gread, &g, 0, MEM_SIZE,
                         (mode & 4) ? 0 : RS_SCAN_PAGE_STARTS, work,
                         sizeof(work), text, sizeof(text), &tl, &gpa)
            != RS_OK) {
            return 0;
        }
        check(tl <= RS_VMCI_TEXT_MAX && gpa < MEM_SIZE);
        vtext = text;
        vlen = tl;
    }
    if (rs_vmci_parse(vtext, vlen, &vi, err, sizeof(err)) != RS_OK) {
        return 0;
    }
    check(vi.osrelease[0] != '\0');
    if (rs_vm_init(&vm, &vi, gread, &g) != RS_OK) {
        return 0;
    }
    if (rs_ring_open(&ring, &vi, &vm, err, sizeof(err)) != RS_OK) {
        return 0;
    }
    check(ring.count_bits >= RS_COUNT_BITS_MIN &&
          ring.count_bits <= RS_COUNT_BITS_MAX);
    exercise_ring(&ring, data, size);
    return 0;
}
