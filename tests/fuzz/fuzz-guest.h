/*
 * fuzz-guest.h: a fake guest for the libFuzzer targets in tests/fuzz, shared
 * by them (header-only: each target is one translation unit).
 *
 * A 128 KiB guest memory image is built once: 4-level page tables, a static
 * printk ring in kernel-image addresses, a dynamic ring in direct-map
 * addresses (its data's second page mapped elsewhere, so blocks straddle a
 * non-contiguous page), and a page-aligned VMCOREINFO note.  Each input
 * starts from a copy of it.  The reader callback counts every guest-memory
 * read, so that a target can assert a per-call bound on them, and can apply
 * one deferred patch at the Nth read to play a concurrent writer.
 *
 * Records are written as the 6.1 kernel writes them (see rslib-ring.h):
 * fg_push() appends one to a ring in any image, so targets can also grow
 * the ring while the code under test reads it.
 */
#ifndef FUZZ_GUEST_H
#define FUZZ_GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rslib-ring.h"

#define FG_MEM_SIZE     0x20000u
#define FG_IMG_VA       0xffffffff81000000ull   /* -> PA 0 */
#define FG_PHYS_BASE    (-0x1000000ll)
#define FG_DM           0xffff888000000000ull
#define FG_PRB_SYM      0x4000u
#define FG_RB_STATIC    0x4100u
#define FG_RB_DYN       0x4200u
#define FG_NOTE_PA      0x5000u
#define FG_S_DESCS      0x7000u
#define FG_S_INFOS      0x7800u
#define FG_S_DATA       0x8000u
#define FG_D_DESCS      0x10000u
#define FG_D_INFOS      0x11000u
#define FG_D_DATA       0x14000u    /* 8 KiB; second page remapped */
#define FG_D_DATA_ALIAS 0x17000u
#define FG_ID_MASK      (~(3ull << 62))

/*
 * Guest-memory reads (fg_read() calls) per call into the library.
 *
 * The device gives each guest action a read budget (rs_budget, charged by
 * its reader): read-budget= reads for a register access, tick-read-budget=
 * for a timer tick, RS_BUDGET_BYTES_PER_READ bytes a read on average
 * (ringside-serial.[ch]; their defaults below).  A target's input can turn
 * the same budget on (fg_guest.budgeted): reads beyond it are refused, as
 * the device refuses them, and each call must then stop reading soon:
 * at most FUZZ_REFUSED_MAX refused reads.  Without a budget, each call
 * must still stay under FUZZ_READS_PER_CALL: above the worst case the
 * library's fixed loop bounds allow one line (the audit in issue 18
 * measured 1.07 M for a torn line), so it finds unbounded loops, not
 * costs.  Calls that replay the backlog get either once per line.
 * fg_note_reads() keeps the largest counts seen (per line, for those
 * calls), printed at exit when FUZZ_READ_STATS is set in the environment.
 */
#define FUZZ_ACCESS_READS       1024u   /* read-budget= default */
#define FUZZ_TICK_READS         8192u   /* tick-read-budget= default */
#define FUZZ_BYTES_PER_READ     128u    /* RS_BUDGET_BYTES_PER_READ */
#ifndef FUZZ_READS_PER_CALL
#define FUZZ_READS_PER_CALL     2000000ull
#endif
#ifndef FUZZ_REFUSED_MAX
#define FUZZ_REFUSED_MAX        64ull
#endif

/*
 * The harness's own code: the fake guest's reader, which runs thousands of
 * times an input, and the checks after every call into the library.  Left
 * to libFuzzer's coverage and comparison tracing they took a third (the
 * matcher) to two thirds (level 1) of the targets' time, on code that is
 * not under test.
 */
#define FG_HARNESS __attribute__((no_sanitize("coverage")))

static uint64_t fg_max_reads, fg_max_refused;
static bool fg_counted;

FG_HARNESS
static inline void fg_note_reads(uint64_t n, uint64_t refused)
{
    fg_counted = true;
    if (n > fg_max_reads) {
        fg_max_reads = n;
    }
    if (refused > fg_max_refused) {
        fg_max_refused = refused;
    }
}

__attribute__((destructor)) static void fg_print_reads(void)
{
    if (fg_counted && getenv("FUZZ_READ_STATS")) {
        fprintf(stderr, "stat::max_reads_per_call: %llu (bound %llu)\n"
                "stat::max_refused_per_call: %llu (bound %llu)\n",
                (unsigned long long)fg_max_reads,
                (unsigned long long)FUZZ_READS_PER_CALL,
                (unsigned long long)fg_max_refused,
                (unsigned long long)FUZZ_REFUSED_MAX);
    }
}

typedef struct fg_guest {
    uint8_t mem[FG_MEM_SIZE];
    uint64_t reads;             /* read callbacks since the last reset */
    uint64_t refused;           /* of them, refused by the budget */
    bool budgeted;              /* charge budget, as the device does */
    rs_budget budget;           /* the vm's budget (fg_open()) */
    uint64_t hook_at;           /* apply the hook patch at this read */
    const uint8_t *hook_patch;
    size_t hook_len;
    uint32_t hook_off;
} fg_guest;

FG_HARNESS
static inline void fg_check(bool ok)
{
    if (!ok) {
        __builtin_trap();
    }
}

FG_HARNESS
static inline void fg_apply(uint8_t *mem, uint32_t off, const uint8_t *p,
                            size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        mem[(off + i) % FG_MEM_SIZE] = p[i];
    }
}

FG_HARNESS
static inline int fg_read(void *opaque, uint64_t gpa, void *buf, size_t len)
{
    fg_guest *g = opaque;

    fg_check(len > 0 && len <= RS_READ_MAX);
    g->reads++;
    if (g->hook_patch && g->reads == g->hook_at) {
        fg_apply(g->mem, g->hook_off, g->hook_patch, g->hook_len);
    }
    if (!rs_budget_take(&g->budget, len)) {
        g->refused++;
        return -1;
    }
    if (gpa >= FG_MEM_SIZE || len > FG_MEM_SIZE - gpa) {
        return -1;
    }
    memcpy(buf, g->mem + gpa, len);
    return 0;
}

/* A call begins: the budget of a register access or timer tick, if on. */
FG_HARNESS
static inline void fg_call_begin(fg_guest *g, uint64_t reads)
{
    if (g->budgeted) {
        rs_budget_set(&g->budget, reads, reads * FUZZ_BYTES_PER_READ);
    } else {
        rs_budget_set(&g->budget, UINT64_MAX, UINT64_MAX);
    }
}

/*
 * The call that began at reads0 ended: its reads within their bound (times
 * lines: the lines it replayed, at least 1).  Then no budget, as the
 * device leaves it between actions.
 */
FG_HARNESS
static inline void fg_call_end(fg_guest *g, uint64_t reads0,
                               uint64_t refused0, uint64_t lines)
{
    uint64_t n = g->reads - reads0, refused = g->refused - refused0;
    uint64_t per = lines ? lines : 1;

    /* the figures printed are per line, as the bounds are */
    fg_note_reads(n / per, refused / per);
    fg_check(n <= FUZZ_READS_PER_CALL * per);
    fg_check(refused <= FUZZ_REFUSED_MAX * per);
    rs_budget_set(&g->budget, UINT64_MAX, UINT64_MAX);
}

static inline void fg_w64(uint8_t *m, uint32_t pa, uint64_t v)
{
    int i;

    for (i = 0; i < 8; i++) {
        m[pa + i] = (uint8_t)(v >> (8 * i));
    }
}

static inline void fg_w32(uint8_t *m, uint32_t pa, uint32_t v)
{
    int i;

    for (i = 0; i < 4; i++) {
        m[pa + i] = (uint8_t)(v >> (8 * i));
    }
}

/* A ring being written, 6.1 offsets. */
typedef struct fg_ring {
    uint32_t prb, descs, infos, data;       /* PAs */
    uint64_t descs_va, infos_va, data_va;
    unsigned cb, sb;
    uint64_t head_id, head_lpos, seq;
    uint32_t data_pa_page1;                 /* PA of data's 2nd page */
    bool move_tail;             /* fg_push() frees the oldest, as the
                                 * kernel does (off while building the
                                 * base image) */
} fg_ring;

/* What a record carries besides its text. */
typedef struct fg_rec {
    unsigned state;             /* 1 committed, 2 finalized, 3 reusable */
    bool failed;                /* FAILED_LPOS: data lost */
    bool fit;                   /* placed by the 6.19 rule */
    uint8_t level, flags;       /* RS_LOG_* */
    uint64_t ts_nsec;           /* 0: 1000000123 * (seq + 1) */
} fg_rec;

static inline uint32_t fg_data_pa(const fg_ring *r, uint64_t idx)
{
    if (r->data_pa_page1 && idx >= 4096) {
        return r->data_pa_page1 + (uint32_t)(idx - 4096);
    }
    return r->data + (uint32_t)idx;
}

static inline void fg_ring_init(uint8_t *m, fg_ring *r, uint64_t start_idx)
{
    uint64_t count = 1ull << r->cb, dsize = 1ull << r->sb;
    uint64_t d0 = (uint32_t)(0u - (1u << r->cb) - 1u) & FG_ID_MASK;

    fg_w32(m, r->prb + 0, r->cb);
    fg_w64(m, r->prb + 8, r->descs_va);
    fg_w64(m, r->prb + 16, r->infos_va);
    fg_w32(m, r->prb + 48, r->sb);
    fg_w64(m, r->prb + 56, r->data_va);
    fg_w64(m, r->descs + (count - 1) * 24, 3ull << 62 | d0);
    fg_w64(m, r->descs + (count - 1) * 24 + 8, 1);
    fg_w64(m, r->descs + (count - 1) * 24 + 16, 1);
    fg_w64(m, r->infos, 0 - count);
    r->head_id = d0;
    r->head_lpos = 0 - dsize + start_idx;
    r->seq = 0;
    fg_w64(m, r->prb + 24, d0);             /* head_id */
    fg_w64(m, r->prb + 32, d0);             /* tail_id */
    fg_w64(m, r->prb + 64, r->head_lpos);   /* head_lpos */
    fg_w64(m, r->prb + 72, r->head_lpos);   /* tail_lpos */
}

/*
 * Append a record.  With move_tail, once the ring is full the tail moves on
 * as the kernel's would (descriptor and data tails): older records go.
 * The caller keeps len below the data ring's size.
 */
static inline void fg_push(uint8_t *m, fg_ring *r, const char *text,
                           size_t len, const fg_rec *p)
{
    uint64_t dsize = 1ull << r->sb, count = 1ull << r->cb;
    uint64_t id = (r->head_id + 1) & FG_ID_MASK, idx = id & (count - 1);
    uint64_t begin = 3, next = 3, i0, ts;
    uint32_t d = r->descs + (uint32_t)idx * 24, in = r->infos +
                 (uint32_t)idx * 88;
    size_t i;

    if (p->failed) {
        begin = next = 1;
    } else if (len) {
        uint64_t size = (len + 15) & ~7ull;

        begin = r->head_lpos;
        next = begin + size;
        i0 = begin & (dsize - 1);
        fg_w64(m, fg_data_pa(r, i0), id);
        if (begin >> r->sb != (p->fit ? next - 1 : next) >> r->sb) {
            next = (next & ~(dsize - 1)) + size;
            i0 = 0;
            fg_w64(m, fg_data_pa(r, 0), id);
        }
        for (i = 0; i < len; i++) {
            m[fg_data_pa(r, i0 + 8 + i)] = (uint8_t)text[i];
        }
        r->head_lpos = next;
    }
    ts = p->ts_nsec ? p->ts_nsec : 1000000123ull * (r->seq + 1);
    fg_w64(m, d, (uint64_t)(p->state & 3) << 62 | id);
    fg_w64(m, d + 8, begin);
    fg_w64(m, d + 16, next);
    fg_w64(m, in, r->seq);
    fg_w64(m, in + 8, ts);
    m[in + 16] = (uint8_t)len;
    m[in + 17] = (uint8_t)(len >> 8);
    m[in + 18] = 0;
    m[in + 19] = (uint8_t)((p->level & 7) << 5 | (p->flags & 31));
    fg_w32(m, in + 20, r->seq & 1 ? 0x80000000u + (uint32_t)r->seq
                                 : 100 + (uint32_t)r->seq);
    memcpy(m + in + 24, "pci", 3);
    memcpy(m + in + 40, "+pci:0000:00:02.0", 17);
    r->head_id = id;
    r->seq++;
    fg_w64(m, r->prb + 24, id);
    fg_w64(m, r->prb + 64, r->head_lpos);
    /* the kernel frees the oldest descriptor and data before reuse */
    if (!r->move_tail) {
        return;
    }
    if (((id - rs_le64(m + r->prb + 32)) & FG_ID_MASK) >= count) {
        fg_w64(m, r->prb + 32, (id - count + 1) & FG_ID_MASK);
    }
    if (r->head_lpos - rs_le64(m + r->prb + 72) > dsize) {
        fg_w64(m, r->prb + 72, r->head_lpos - dsize);
    }
}

static inline void fg_push_s(uint8_t *m, fg_ring *r, const char *text,
                             unsigned state, bool failed)
{
    fg_rec p = { .state = state, .failed = failed, .level = 6,
                 .flags = RS_LOG_NEWLINE };

    fg_push(m, r, text, strlen(text), &p);
}

/* A record whose block ends exactly at the end of the data ring, left in
 * place as 6.19 does (before, it would have wrapped to index 0). */
static inline void fg_push_fit(uint8_t *m, fg_ring *r)
{
    static const char pat[] = "in place up to the ring end\n";
    static char t[8192];
    uint64_t rem = (1ull << r->sb) - (r->head_lpos & ((1ull << r->sb) - 1));
    size_t i, len = (size_t)rem - 8;
    fg_rec p = { .state = 2, .fit = true, .level = 6,
                 .flags = RS_LOG_NEWLINE };

    fg_check(rem >= 16 && len <= sizeof(t));
    for (i = 0; i < len; i++) {
        t[i] = pat[i % (sizeof(pat) - 1)];
    }
    fg_push(m, r, t, len, &p);
    fg_check((r->head_lpos & ((1ull << r->sb) - 1)) == 0);
}

static inline void fg_fill(uint8_t *m, fg_ring *r, bool fit)
{
    fg_push_s(m, r, "Linux version 6.1.0-57-amd64", 2, false);
    fg_push_s(m, r, "multi\nline\nrecord", 2, false);
    fg_push_s(m, r, "wrapping block: the data sits at index 0", 2, false);
    fg_push_s(m, r, "", 2, false);
    fg_push_s(m, r, "lost", 2, true);
    fg_push_s(m, r, "x\n", 2, false);
    fg_push_s(m, r, "reusable", 3, false);
    if (fit) {
        fg_push_fit(m, r);
    }
    fg_push_s(m, r, "committed, not final", 1, false);
}

static inline size_t fg_vmci_text(char *s, size_t cap, bool l5)
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
        (unsigned long long)FG_IMG_VA, (unsigned long long)FG_IMG_VA +
        FG_PRB_SYM, (unsigned long long)FG_IMG_VA + FG_RB_STATIC,
        (long long)FG_PHYS_BASE, (unsigned long long)FG_IMG_VA, l5 ? 1 : 0);

    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/*
 * The base image in m (FG_MEM_SIZE bytes, zeroed): SYMBOL(prb) points at
 * the static ring; rings out with the rings' write positions, text and
 * text_len with the VMCOREINFO text (also in the note at FG_NOTE_PA).
 */
static inline void fg_build(uint8_t *m, fg_ring *s, fg_ring *d,
                            char *text, size_t cap, size_t *text_len)
{
    uint32_t i;

    /* 4-level tables at PA 0: PML4 -> PDPT (0x1000) -> PD (0x2000) ->
     * PT (0x3000) mapping DM + [0x10000, 0x20000); PD[1] is a 2 MiB page
     * past the end of memory */
    fg_w64(m, 0x0000 + 273 * 8, 0x1000 | 0x63);
    fg_w64(m, 0x1000 + 0 * 8, 0x2000 | 0x63 | 1ull << 63);
    fg_w64(m, 0x2000 + 0 * 8, 0x3000 | 0x63);
    fg_w64(m, 0x2000 + 1 * 8, 0x200000 | 0xe3 | 0x1000);
    for (i = 0x10; i < 0x20; i++) {
        fg_w64(m, 0x3000 + i * 8, (uint64_t)i << 12 | 0x63 | 1ull << 63);
    }
    /* the data ring's second page lives elsewhere */
    fg_w64(m, 0x3000 + 0x15 * 8, FG_D_DATA_ALIAS | 0x63);
    fg_w64(m, FG_PRB_SYM, FG_IMG_VA + FG_RB_STATIC);

    memset(s, 0, sizeof(*s));
    s->prb = FG_RB_STATIC;
    s->descs = FG_S_DESCS;
    s->infos = FG_S_INFOS;
    s->data = FG_S_DATA;
    s->descs_va = FG_IMG_VA + FG_S_DESCS;
    s->infos_va = FG_IMG_VA + FG_S_INFOS;
    s->data_va = FG_IMG_VA + FG_S_DATA;
    s->cb = 4;
    s->sb = 10;
    fg_ring_init(m, s, 1024 - 96);
    fg_fill(m, s, true);

    memset(d, 0, sizeof(*d));
    d->prb = FG_RB_DYN;
    d->descs = FG_D_DESCS;
    d->infos = FG_D_INFOS;
    d->data = FG_D_DATA;
    d->data_pa_page1 = FG_D_DATA_ALIAS;
    d->descs_va = FG_DM + FG_D_DESCS;
    d->infos_va = FG_DM + FG_D_INFOS;
    d->data_va = FG_DM + FG_D_DATA;
    d->cb = 5;
    d->sb = 13;
    fg_ring_init(m, d, 4096 - 40);  /* blocks straddle the page split */
    fg_fill(m, d, false);
    fg_fill(m, d, false);

    *text_len = fg_vmci_text(text, cap, false);
    fg_check(*text_len > 0);
    fg_w32(m, FG_NOTE_PA, 11);
    fg_w32(m, FG_NOTE_PA + 4, (uint32_t)*text_len);
    fg_w32(m, FG_NOTE_PA + 8, 0);
    memcpy(m + FG_NOTE_PA + 12, "VMCOREINFO", 11);
    memcpy(m + FG_NOTE_PA + 24, text, *text_len);
}

/* Point SYMBOL(prb) at the dynamic ring (setup_log_buf). */
static inline void fg_use_dyn(uint8_t *m)
{
    fg_w64(m, FG_PRB_SYM, FG_IMG_VA + FG_RB_DYN);
}

/* Open the ring SYMBOL(prb) points at in g, its reads charged to g's
 * budget; false if it does not open. */
/* The guest every input starts from: built once, copied in per input. */
typedef struct fg_base {
    uint8_t mem[FG_MEM_SIZE];
    char text[RS_VMCI_TEXT_MAX];
    size_t text_len;
    fg_ring rings[2];
    bool built;
} fg_base;

static inline void fg_start(fg_base *b, fg_guest *g, bool dyn)
{
    if (!b->built) {
        fg_build(b->mem, &b->rings[0], &b->rings[1], b->text,
                 sizeof(b->text), &b->text_len);
        b->built = true;
    }
    memcpy(g->mem, b->mem, FG_MEM_SIZE);
    if (dyn) {
        fg_use_dyn(g->mem);
    }
    g->reads = g->refused = 0;
    g->hook_patch = NULL;
    g->budgeted = false;
    rs_budget_set(&g->budget, UINT64_MAX, UINT64_MAX);
}

static inline bool fg_open(fg_guest *g, const char *text, size_t len,
                           rs_vmci *vi, rs_ring *ring)
{
    char err[160];
    rs_vm vm;

    if (rs_vmci_parse(text, len, vi, err, sizeof(err)) != RS_OK ||
        rs_vm_init(&vm, vi, fg_read, g) != RS_OK) {
        return false;
    }
    vm.budget = &g->budget;
    return rs_ring_open(ring, vi, &vm, err, sizeof(err)) == RS_OK;
}

/*
 * Record seq as the 8250 console writes it: rs_format() with fmt into the
 * console's buffer (rs_ring_console_max() bytes), each '\n' as "\r\n".
 * Returns its length (0 if the record does not read; out holds at most cap
 * bytes).
 */
static inline size_t fg_console_text(const rs_ring *r, uint64_t seq,
                                     unsigned fmt, uint8_t *out, size_t cap)
{
    char text[RS_CONSOLE_TEXT_MAX], line[RS_CONSOLE_TEXT_MAX];
    rs_record rec;
    size_t n, i, o = 0;

    if (rs_ring_read(r, seq, &rec, text, sizeof(text)) != RS_REC_OK) {
        return 0;
    }
    n = rs_format(&rec, fmt, rs_ring_console_max(r), line, sizeof(line));
    if (n >= sizeof(line)) {
        n = sizeof(line) - 1;
    }
    for (i = 0; i < n && o + 2 <= cap; i++) {
        if (line[i] == '\n') {
            out[o++] = '\r';
        }
        out[o++] = (uint8_t)line[i];
    }
    return o;
}

/* ---- the targets' input: a cursor and the operations they share ---- */

typedef struct fg_in {
    const uint8_t *p;
    size_t n;
} fg_in;

static inline bool fg_take(fg_in *in, size_t k, const uint8_t **out)
{
    if (in->n < k) {
        return false;
    }
    *out = in->p;
    in->p += k;
    in->n -= k;
    return true;
}

static inline bool fg_take8(fg_in *in, unsigned *v)
{
    const uint8_t *b;

    if (!fg_take(in, 1, &b)) {
        return false;
    }
    *v = b[0];
    return true;
}

/* Up to k bytes, fewer at the end of the input. */
static inline size_t fg_take_upto(fg_in *in, size_t k, const uint8_t **out)
{
    size_t n = k < in->n ? k : in->n;

    fg_take(in, n, out);
    return n;
}

/* [level/flags u8][len u8][text]: a finalized record appended to w. */
static inline void fg_op_push(fg_in *in, uint8_t *mem, fg_ring *w)
{
    const uint8_t *p;
    unsigned v, k;
    size_t n;

    if (fg_take8(in, &v) && fg_take8(in, &k)) {
        fg_rec rec = { .state = 2, .level = v & 7, .flags = (v >> 3) & 31 };

        n = fg_take_upto(in, k, &p);
        fg_push(mem, w, (const char *)p, n, &rec);
    }
}

/*
 * [offset u24][len u8][bytes]: guest memory patched now, or (deferred) at
 * a read soon after (offset's top bits choose which), as a vCPU writing
 * while the device reads.
 */
static inline void fg_op_patch(fg_in *in, fg_guest *g, bool deferred)
{
    const uint8_t *p, *d;
    uint32_t off;
    size_t n;

    if (!fg_take(in, 4, &p)) {
        return;
    }
    off = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
    n = fg_take_upto(in, p[3], &d);
    if (!deferred) {
        fg_apply(g->mem, off % FG_MEM_SIZE, d, n);
        return;
    }
    g->hook_patch = d;
    g->hook_len = n;
    g->hook_off = off % FG_MEM_SIZE;
    g->hook_at = g->reads + 1 + (off >> 17) * 37;
}

#endif /* FUZZ_GUEST_H */
