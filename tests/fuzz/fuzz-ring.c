/*
 * fuzz-ring.c: libFuzzer target for the ringside printk ring decoder
 * (hw/char/ringside-ring.[ch], hw/char/ringside-vmci.[ch]).
 *
 * A valid 128 KiB fake guest is built once: page tables, a static ring in
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
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ringside-ring.h"

#define MEM_SIZE        0x20000u
#define IMG_VA          0xffffffff81000000ull   /* -> PA 0 */
#define PHYS_BASE       (-0x1000000ll)
#define DM              0xffff888000000000ull
#define PRB_SYM         0x4000u
#define RB_STATIC       0x4100u
#define RB_DYN          0x4200u
#define NOTE_PA         0x5000u
#define S_DESCS         0x7000u
#define S_INFOS         0x7800u
#define S_DATA          0x8000u
#define D_DESCS         0x10000u
#define D_INFOS         0x11000u
#define D_DATA          0x14000u    /* 8 KiB; second page remapped */
#define D_DATA_ALIAS    0x17000u
#define ID_MASK         (~(3ull << 62))

typedef struct Guest {
    uint8_t mem[MEM_SIZE];
    unsigned reads;
    unsigned hook_at;
    const uint8_t *hook_patch;
    size_t hook_len;
    uint32_t hook_off;
} Guest;

static uint8_t base[MEM_SIZE];
static char base_text[RS_VMCI_TEXT_MAX];
static size_t base_text_len;
static Guest g;

static void check(bool ok)
{
    if (!ok) {
        __builtin_trap();
    }
}

static void apply(uint8_t *mem, uint32_t off, const uint8_t *p, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        mem[(off + i) % MEM_SIZE] = p[i];
    }
}

static int gread(void *opaque, uint64_t gpa, void *buf, size_t len)
{
    Guest *gg = opaque;

    check(len > 0 && len <= RS_READ_MAX);
    gg->reads++;
    if (gg->hook_patch && gg->reads == gg->hook_at) {
        apply(gg->mem, gg->hook_off, gg->hook_patch, gg->hook_len);
    }
    if (gpa >= MEM_SIZE || len > MEM_SIZE - gpa) {
        return -1;
    }
    memcpy(buf, gg->mem + gpa, len);
    return 0;
}

/* ---- base image ---------------------------------------------------------- */

static void b64(uint32_t pa, uint64_t v)
{
    int i;

    for (i = 0; i < 8; i++) {
        base[pa + i] = (uint8_t)(v >> (8 * i));
    }
}

static void b32(uint32_t pa, uint32_t v)
{
    int i;

    for (i = 0; i < 4; i++) {
        base[pa + i] = (uint8_t)(v >> (8 * i));
    }
}

/* 6.1 offsets */
typedef struct BRing {
    uint32_t prb, descs, infos, data;       /* PAs */
    uint64_t descs_va, infos_va, data_va;
    unsigned cb, sb;
    uint64_t head_id, head_lpos, seq;
    uint32_t data_pa_page1;                 /* PA of data's 2nd page */
} BRing;

static uint32_t data_pa(const BRing *r, uint64_t idx)
{
    if (r->data_pa_page1 && idx >= 4096) {
        return r->data_pa_page1 + (uint32_t)(idx - 4096);
    }
    return r->data + (uint32_t)idx;
}

static void bring_init(BRing *r, uint64_t start_idx)
{
    uint64_t count = 1ull << r->cb, dsize = 1ull << r->sb;
    uint64_t d0 = (uint32_t)(0u - (1u << r->cb) - 1u) & ID_MASK;

    b32(r->prb + 0, r->cb);
    b64(r->prb + 8, r->descs_va);
    b64(r->prb + 16, r->infos_va);
    b32(r->prb + 48, r->sb);
    b64(r->prb + 56, r->data_va);
    b64(r->descs + (count - 1) * 24, 3ull << 62 | d0);
    b64(r->descs + (count - 1) * 24 + 8, 1);
    b64(r->descs + (count - 1) * 24 + 16, 1);
    b64(r->infos, 0 - count);
    r->head_id = d0;
    r->head_lpos = 0 - dsize + start_idx;
    r->seq = 0;
    b64(r->prb + 24, d0);                   /* head_id */
    b64(r->prb + 32, d0);                   /* tail_id */
    b64(r->prb + 64, r->head_lpos);         /* head_lpos */
    b64(r->prb + 72, r->head_lpos);         /* tail_lpos */
}

/* fit: place the block by the 6.19 rule (may end on the ring end) */
static void bring_push_len(BRing *r, const char *text, size_t len,
                           unsigned state, bool failed, bool fit)
{
    uint64_t dsize = 1ull << r->sb, count = 1ull << r->cb;
    uint64_t id = (r->head_id + 1) & ID_MASK, idx = id & (count - 1);
    uint64_t begin = 3, next = 3, i0;
    uint32_t d = r->descs + (uint32_t)idx * 24, in = r->infos +
                 (uint32_t)idx * 88;
    size_t i;

    if (failed) {
        begin = next = 1;
    } else if (len) {
        uint64_t size = (len + 15) & ~7ull;

        begin = r->head_lpos;
        next = begin + size;
        i0 = begin & (dsize - 1);
        b64(data_pa(r, i0), id);
        if (begin >> r->sb != (fit ? next - 1 : next) >> r->sb) {
            next = (next & ~(dsize - 1)) + size;
            i0 = 0;
            b64(data_pa(r, 0), id);
        }
        for (i = 0; i < len; i++) {
            base[data_pa(r, i0 + 8 + i)] = (uint8_t)text[i];
        }
        r->head_lpos = next;
    }
    b64(d, (uint64_t)state << 62 | id);
    b64(d + 8, begin);
    b64(d + 16, next);
    b64(in, r->seq);
    b64(in + 8, 1000000123ull * (r->seq + 1));
    base[in + 16] = (uint8_t)len;
    base[in + 17] = (uint8_t)(len >> 8);
    base[in + 18] = 0;
    base[in + 19] = (uint8_t)(6 << 5 | 2);
    b32(in + 20, r->seq & 1 ? 0x80000000u + (uint32_t)r->seq
                            : 100 + (uint32_t)r->seq);
    memcpy(base + in + 24, "pci", 3);
    memcpy(base + in + 40, "+pci:0000:00:02.0", 17);
    r->head_id = id;
    r->seq++;
    b64(r->prb + 24, id);
    b64(r->prb + 64, r->head_lpos);
}

static void bring_push(BRing *r, const char *text, unsigned state, bool failed)
{
    bring_push_len(r, text, strlen(text), state, failed, false);
}

/* A record whose block ends exactly at the end of the data ring, left in
 * place as 6.19 does (before, it would have wrapped to index 0). */
static void bring_push_fit(BRing *r)
{
    static const char pat[] = "in place up to the ring end\n";
    static char t[8192];
    uint64_t rem = (1ull << r->sb) - (r->head_lpos & ((1ull << r->sb) - 1));
    size_t i, len = (size_t)rem - 8;

    check(rem >= 16 && len <= sizeof(t));
    for (i = 0; i < len; i++) {
        t[i] = pat[i % (sizeof(pat) - 1)];
    }
    bring_push_len(r, t, len, 2, false, true);
    check((r->head_lpos & ((1ull << r->sb) - 1)) == 0);
}

static void fill_ring(BRing *r, bool fit)
{
    bring_push(r, "Linux version 6.1.0-57-amd64", 2, false);
    bring_push(r, "multi\nline\nrecord", 2, false);
    bring_push(r, "wrapping block: the data sits at index 0", 2, false);
    bring_push(r, "", 2, false);
    bring_push(r, "lost", 2, true);
    bring_push(r, "x\n", 2, false);
    bring_push(r, "reusable", 3, false);
    if (fit) {
        bring_push_fit(r);
    }
    bring_push(r, "committed, not final", 1, false);
}

static size_t gen_text(char *s, size_t cap, bool l5)
{
    int n = snprintf(s, cap,
        "OSRELEASE=6.1.0-57-amd64\nBUILD-ID=0123456789abcdef\nPAGESIZE=4096\n"
        "SYMBOL(swapper_pg_dir)=%llx\n"
        "SYMBOL(prb)=%llx\nSYMBOL(printk_rb_static)=%llx\n"
        "SIZE(printk_ringbuffer)=88\nOFFSET(printk_ringbuffer.desc_ring)=0\n"
        "OFFSET(printk_ringbuffer.text_data_ring)=48\n"
        "OFFSET(printk_ringbuffer.fail)=80\n"
        "SIZE(prb_desc_ring)=48\nOFFSET(prb_desc_ring.count_bits)=0\n"
        "OFFSET(prb_desc_ring.descs)=8\nOFFSET(prb_desc_ring.infos)=16\n"
        "OFFSET(prb_desc_ring.head_id)=24\nOFFSET(prb_desc_ring.tail_id)=32\n"
        "SIZE(prb_desc)=24\nOFFSET(prb_desc.state_var)=0\n"
        "OFFSET(prb_desc.text_blk_lpos)=8\n"
        "SIZE(prb_data_blk_lpos)=16\nOFFSET(prb_data_blk_lpos.begin)=0\n"
        "OFFSET(prb_data_blk_lpos.next)=8\n"
        "SIZE(printk_info)=88\nOFFSET(printk_info.seq)=0\n"
        "OFFSET(printk_info.ts_nsec)=8\nOFFSET(printk_info.text_len)=16\n"
        "OFFSET(printk_info.caller_id)=20\nOFFSET(printk_info.dev_info)=24\n"
        "SIZE(dev_printk_info)=64\nOFFSET(dev_printk_info.subsystem)=0\n"
        "LENGTH(printk_info_subsystem)=16\n"
        "OFFSET(dev_printk_info.device)=16\nLENGTH(printk_info_device)=48\n"
        "SIZE(prb_data_ring)=32\nOFFSET(prb_data_ring.size_bits)=0\n"
        "OFFSET(prb_data_ring.data)=8\nOFFSET(prb_data_ring.head_lpos)=16\n"
        "OFFSET(prb_data_ring.tail_lpos)=24\n"
        "SIZE(atomic_long_t)=8\nOFFSET(atomic_long_t.counter)=0\n"
        "SIZE(latched_seq)=24\nOFFSET(latched_seq.val)=8\n"
        "NUMBER(phys_base)=%lld\nSYMBOL(init_top_pgt)=%llx\n"
        "NUMBER(pgtable_l5_enabled)=%d\nKERNELOFFSET=0\n"
        "NUMBER(KERNEL_IMAGE_SIZE)=1073741824\nNUMBER(sme_mask)=0\n",
        (unsigned long long)IMG_VA, (unsigned long long)IMG_VA + PRB_SYM,
        (unsigned long long)IMG_VA + RB_STATIC, (long long)PHYS_BASE,
        (unsigned long long)IMG_VA, l5 ? 1 : 0);

    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

static void build_base(void)
{
    BRing s = { 0 }, d = { 0 };
    uint32_t i;

    /* 4-level tables at PA 0: PML4 -> PDPT (0x1000) -> PD (0x2000) ->
     * PT (0x3000) mapping DM + [0x10000, 0x20000); PD[1] is a 2 MiB page
     * past the end of memory */
    b64(0x0000 + 273 * 8, 0x1000 | 0x63);
    b64(0x1000 + 0 * 8, 0x2000 | 0x63 | 1ull << 63);
    b64(0x2000 + 0 * 8, 0x3000 | 0x63);
    b64(0x2000 + 1 * 8, 0x200000 | 0xe3 | 0x1000);
    for (i = 0x10; i < 0x20; i++) {
        b64(0x3000 + i * 8, (uint64_t)i << 12 | 0x63 | 1ull << 63);
    }
    /* the data ring's second page lives elsewhere */
    b64(0x3000 + 0x15 * 8, D_DATA_ALIAS | 0x63);
    b64(PRB_SYM, IMG_VA + RB_STATIC);

    s.prb = RB_STATIC;
    s.descs = S_DESCS;
    s.infos = S_INFOS;
    s.data = S_DATA;
    s.descs_va = IMG_VA + S_DESCS;
    s.infos_va = IMG_VA + S_INFOS;
    s.data_va = IMG_VA + S_DATA;
    s.cb = 4;
    s.sb = 10;
    bring_init(&s, 1024 - 96);
    fill_ring(&s, true);

    d.prb = RB_DYN;
    d.descs = D_DESCS;
    d.infos = D_INFOS;
    d.data = D_DATA;
    d.data_pa_page1 = D_DATA_ALIAS;
    d.descs_va = DM + D_DESCS;
    d.infos_va = DM + D_INFOS;
    d.data_va = DM + D_DATA;
    d.cb = 5;
    d.sb = 13;
    bring_init(&d, 4096 - 40);      /* blocks straddle the page split */
    fill_ring(&d, false);
    fill_ring(&d, false);

    base_text_len = gen_text(base_text, sizeof(base_text), false);
    check(base_text_len > 0);
    b32(NOTE_PA, 11);
    b32(NOTE_PA + 4, (uint32_t)base_text_len);
    b32(NOTE_PA + 8, 0);
    memcpy(base + NOTE_PA + 12, "VMCOREINFO", 11);
    memcpy(base + NOTE_PA + 24, base_text, base_text_len);
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
