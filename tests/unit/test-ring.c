/*
 * test-ring.c: GLib g_test unit tests for the ringside printk ring decoder
 * (hw/char/rslib-ring.[ch], hw/char/rslib-vmci.[ch]).
 *
 * Each test builds a byte-exact fake guest in a buffer standing for guest
 * physical memory: a VMCOREINFO note text generated with the real Linux
 * 6.1 x86_64 offsets (or a deliberately different layout), the prb
 * pointer, a printk_ringbuffer, desc/info/data arrays written by a small
 * independent writer, and x86_64 page tables for direct-map addresses. The
 * read callback bounds-checks every access, can refuse ranges (holes) and
 * can run a hook on its Nth call to simulate a concurrent writer.
 */
#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rslib-ring.h"

#define MEM_SIZE        (16u << 20)
#define START_MAP       0xffffffff80000000ull
#define IMG_VA          0xffffffff81000000ull   /* _text, no KASLR shift */
#define IMG_PA          0x800000ull
#define PHYS_BASE       ((int64_t)IMG_PA - 0x1000000)   /* negative */
#define PT_ARENA        0x100000ull
#define PT_ARENA_END    0x400000ull
#define ROOT_VA         IMG_VA                  /* init_top_pgt */
#define PRB_SYM_VA      (IMG_VA + 0x2000)       /* struct printk_ringbuffer *prb */
#define RB_STATIC_VA    (IMG_VA + 0x2100)
#define RB_DYN_VA       (IMG_VA + 0x2200)
#define S_DESCS         (IMG_VA + 0x100000)
#define S_INFOS         (IMG_VA + 0x200000)
#define S_DATA          (IMG_VA + 0x300000)
#define DM4             0xffff888000000000ull
#define DM5             0xff11000000000000ull
#define D_DESCS_OFF     0x400000ull
#define D_INFOS_OFF     0x480000ull
#define D_DATA_OFF      0x600000ull
#define NOTE_PA         0x5000ull

#define ID_MASK         (~(3ull << 62))
#define SV(id, st)      ((uint64_t)(st) << 62 | ((id) & ID_MASK))

/* Linux 6.1 x86_64 (log_buf_vmcoreinfo_setup values on Debian 6.1.0-57) */
static const rs_layout L61 = {
    .prb_size = 88, .prb_desc_ring = 0, .prb_text_data_ring = 48,
    .prb_fail = 80,
    .dr_size = 48, .dr_count_bits = 0, .dr_descs = 8, .dr_infos = 16,
    .dr_head_id = 24, .dr_tail_id = 32,
    .desc_size = 24, .desc_state_var = 0, .desc_text_blk_lpos = 8,
    .lpos_size = 16, .lpos_begin = 0, .lpos_next = 8,
    .info_size = 88, .info_seq = 0, .info_ts_nsec = 8, .info_text_len = 16,
    .info_caller_id = 20, .info_dev_info = 24,
    .devinfo_size = 64, .devinfo_subsystem = 0, .devinfo_device = 16,
    .subsystem_len = 16, .device_len = 48,
    .data_size = 32, .data_size_bits = 0, .data_data = 8,
    .data_head_lpos = 16, .data_tail_lpos = 24,
    .atomic_long_size = 8, .atomic_long_counter = 0,
};

/* A layout no kernel has: every offset moved, structs padded. */
static const rs_layout LODD = {
    .prb_size = 128, .prb_desc_ring = 8, .prb_text_data_ring = 64,
    .prb_fail = 120,
    .dr_size = 56, .dr_count_bits = 48, .dr_descs = 0, .dr_infos = 8,
    .dr_head_id = 16, .dr_tail_id = 32,
    .desc_size = 32, .desc_state_var = 24, .desc_text_blk_lpos = 0,
    .lpos_size = 16, .lpos_begin = 8, .lpos_next = 0,
    .info_size = 120, .info_seq = 32, .info_ts_nsec = 0, .info_text_len = 8,
    .info_caller_id = 16, .info_dev_info = 40,
    .devinfo_size = 80, .devinfo_subsystem = 60, .devinfo_device = 0,
    .subsystem_len = 20, .device_len = 56,
    .data_size = 40, .data_size_bits = 36, .data_data = 0,
    .data_head_lpos = 8, .data_tail_lpos = 24,
    .atomic_long_size = 8, .atomic_long_counter = 0,
};

/* ---- fake guest memory -------------------------------------------------- */

typedef struct Fake Fake;
struct Fake {
    uint8_t *mem;
    uint64_t size;
    uint64_t hole_lo, hole_hi;      /* reads touching [lo, hi) fail */
    unsigned reads;
    unsigned fire_at;               /* run hook before this read (1-based) */
    void (*hook)(Fake *f, void *data);
    void *hook_data;
    uint64_t watch_pa;              /* run watch before each read of it */
    unsigned watch_hits;
    void (*watch)(Fake *f);
};

static int fake_read(void *opaque, uint64_t gpa, void *buf, size_t len)
{
    Fake *f = opaque;

    f->reads++;
    if (f->hook && f->reads == f->fire_at) {
        f->hook(f, f->hook_data);
    }
    if (f->watch && gpa <= f->watch_pa && f->watch_pa - gpa < len) {
        f->watch_hits++;
        f->watch(f);
    }
    g_assert_cmpuint(len, >, 0);
    g_assert_cmpuint(len, <=, RS_READ_MAX);
    if (gpa >= f->size || len > f->size - gpa) {
        return -1;
    }
    if (gpa < f->hole_hi && gpa + len > f->hole_lo) {
        return -1;
    }
    memcpy(buf, f->mem + gpa, len);
    return 0;
}

static void pw64(Fake *f, uint64_t pa, uint64_t v)
{
    int i;

    g_assert_cmpuint(pa + 8, <=, f->size);
    for (i = 0; i < 8; i++) {
        f->mem[pa + i] = (uint8_t)(v >> (8 * i));
    }
}

static uint64_t pr64(Fake *f, uint64_t pa)
{
    g_assert_cmpuint(pa + 8, <=, f->size);
    return rs_le64(f->mem + pa);
}

/* ---- the test guest ----------------------------------------------------- */

typedef struct Opts {
    bool dynamic;       /* ring arrays in the direct map */
    bool l5;
    bool map1g;         /* direct map through one 1 GiB page */
    unsigned cb, sb;    /* count_bits, size_bits */
    const rs_layout *lay;
    uint64_t sme_bit;   /* set in every page-table entry and sme_mask */
    bool wrap619;       /* 6.19 placement: a block may end at the ring end */
} Opts;

typedef struct Shadow {
    uint64_t id, seq, begin, next;
    bool has_data, reusable;
} Shadow;

typedef struct T {
    Fake f;
    Opts o;
    rs_layout L;
    uint64_t dm;                /* page_offset_base */
    uint64_t pt_next;
    uint64_t prb_va, descs, infos, data;
    uint64_t count, dsize;
    uint64_t head_id, tail_id, head_lpos, tail_lpos;
    uint64_t next_seq;
    GArray *sh;                 /* Shadow, oldest first */
    guint desc_tail, data_tail; /* indexes into sh */
    GString *vmci;
    rs_vmci vi;
    rs_vm vm;
    rs_ring r;
} T;

static uint64_t tpa(T *t, uint64_t va)
{
    if (va >= START_MAP && va - START_MAP < (1ull << 30)) {
        return va - START_MAP + (uint64_t)PHYS_BASE;
    }
    return va - t->dm;          /* the direct map is identity */
}

static void wva(T *t, uint64_t va, const void *p, size_t n)
{
    uint64_t pa = tpa(t, va);

    g_assert_cmpuint(pa + n, <=, t->f.size);
    memcpy(t->f.mem + pa, p, n);
}

static void w64(T *t, uint64_t va, uint64_t v)
{
    pw64(&t->f, tpa(t, va), v);
}

static void w32(T *t, uint64_t va, uint32_t v)
{
    uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
                     (uint8_t)(v >> 24) };
    wva(t, va, b, 4);
}

static uint64_t r64(T *t, uint64_t va)
{
    return pr64(&t->f, tpa(t, va));
}

/* page tables: entries carry NX, a pkey bit and (large) the PAT bit, which
 * the walker must mask; sme_bit is the SME C-bit */
static uint64_t pt_alloc(T *t)
{
    uint64_t pa = t->pt_next;

    t->pt_next += 4096;
    g_assert_cmpuint(t->pt_next, <=, PT_ARENA_END);
    memset(t->f.mem + pa, 0, 4096);
    return pa;
}

static void pt_map(T *t, uint64_t va, uint64_t pa, int pshift)
{
    uint64_t table = tpa(t, ROOT_VA);
    const uint64_t hi = 1ull << 63 | 1ull << 59 | t->o.sme_bit;
    int shift;

    for (shift = t->o.l5 ? 48 : 39; ; shift -= 9) {
        uint64_t ea = table + ((va >> shift) & 511) * 8;
        uint64_t e = pr64(&t->f, ea);

        if (shift == pshift) {
            e = pa | hi | 0x63;
            if (pshift > 12) {
                e |= 0x80 | 0x1000;     /* PS, PAT */
            }
            pw64(&t->f, ea, e);
            return;
        }
        if (!(e & 1)) {
            e = pt_alloc(t) | t->o.sme_bit | 0x63;
            pw64(&t->f, ea, e);
        }
        table = e & 0x000ffffffffff000ull & ~t->o.sme_bit;
    }
}

static void gen_vmci(T *t)
{
    const rs_layout *l = &t->L;
    GString *s = g_string_new(NULL);

    g_string_append(s, "OSRELEASE=6.1.0-57-amd64\n"
                    "BUILD-ID=0123456789abcdef0123456789abcdef01234567\n"
                    "PAGESIZE=4096\n");
    g_string_append_printf(s, "SYMBOL(init_uts_ns)=%llx\n",
                           (unsigned long long)IMG_VA + 0x3000);
    g_string_append(s, "OFFSET(uts_namespace.name)=4\n"
                    "SYMBOL(node_online_map)=ffffffff82c3e1a0\n");
    g_string_append_printf(s, "SYMBOL(swapper_pg_dir)=%llx\n",
                           (unsigned long long)ROOT_VA);
    g_string_append(s, "SYMBOL(_stext)=ffffffff81000000\n"
                    "SYMBOL(vmap_area_list)=ffffffff82c52f70\n"
                    "SYMBOL(mem_section)=ffff888237fd2000\n"
                    "LENGTH(mem_section)=2048\n"
                    "SIZE(mem_section)=16\n"
                    "OFFSET(mem_section.section_mem_map)=0\n"
                    "NUMBER(SECTION_SIZE_BITS)=27\n"
                    "NUMBER(MAX_PHYSMEM_BITS)=46\n"
                    "SIZE(page)=64\n"
                    "SIZE(pglist_data)=174336\n"
                    "OFFSET(page.flags)=0\n"
                    "LENGTH(zone.free_area)=11\n");
    g_string_append_printf(s, "SYMBOL(prb)=%llx\n",
                           (unsigned long long)PRB_SYM_VA);
    g_string_append_printf(s, "SYMBOL(printk_rb_static)=%llx\n",
                           (unsigned long long)RB_STATIC_VA);
    g_string_append(s, "SYMBOL(clear_seq)=ffffffff82a4ee80\n");
#define P(k, v) g_string_append_printf(s, k "=%u\n", (unsigned)(v))
    P("SIZE(printk_ringbuffer)", l->prb_size);
    P("OFFSET(printk_ringbuffer.desc_ring)", l->prb_desc_ring);
    P("OFFSET(printk_ringbuffer.text_data_ring)", l->prb_text_data_ring);
    P("OFFSET(printk_ringbuffer.fail)", l->prb_fail);
    P("SIZE(prb_desc_ring)", l->dr_size);
    P("OFFSET(prb_desc_ring.count_bits)", l->dr_count_bits);
    P("OFFSET(prb_desc_ring.descs)", l->dr_descs);
    P("OFFSET(prb_desc_ring.infos)", l->dr_infos);
    P("OFFSET(prb_desc_ring.head_id)", l->dr_head_id);
    P("OFFSET(prb_desc_ring.tail_id)", l->dr_tail_id);
    P("SIZE(prb_desc)", l->desc_size);
    P("OFFSET(prb_desc.state_var)", l->desc_state_var);
    P("OFFSET(prb_desc.text_blk_lpos)", l->desc_text_blk_lpos);
    P("SIZE(prb_data_blk_lpos)", l->lpos_size);
    P("OFFSET(prb_data_blk_lpos.begin)", l->lpos_begin);
    P("OFFSET(prb_data_blk_lpos.next)", l->lpos_next);
    P("SIZE(printk_info)", l->info_size);
    P("OFFSET(printk_info.seq)", l->info_seq);
    P("OFFSET(printk_info.ts_nsec)", l->info_ts_nsec);
    P("OFFSET(printk_info.text_len)", l->info_text_len);
    P("OFFSET(printk_info.caller_id)", l->info_caller_id);
    P("OFFSET(printk_info.dev_info)", l->info_dev_info);
    P("SIZE(dev_printk_info)", l->devinfo_size);
    P("OFFSET(dev_printk_info.subsystem)", l->devinfo_subsystem);
    P("LENGTH(printk_info_subsystem)", l->subsystem_len);
    P("OFFSET(dev_printk_info.device)", l->devinfo_device);
    P("LENGTH(printk_info_device)", l->device_len);
    P("SIZE(prb_data_ring)", l->data_size);
    P("OFFSET(prb_data_ring.size_bits)", l->data_size_bits);
    P("OFFSET(prb_data_ring.data)", l->data_data);
    P("OFFSET(prb_data_ring.head_lpos)", l->data_head_lpos);
    P("OFFSET(prb_data_ring.tail_lpos)", l->data_tail_lpos);
    P("SIZE(atomic_long_t)", l->atomic_long_size);
    P("OFFSET(atomic_long_t.counter)", l->atomic_long_counter);
#undef P
    g_string_append(s, "SIZE(latched_seq)=24\n"
                    "OFFSET(latched_seq.val)=8\n"
                    "LENGTH(free_area.free_list)=6\n"
                    "NUMBER(NR_FREE_PAGES)=0\n"
                    "NUMBER(PG_lru)=4\n"
                    "NUMBER(PG_head_mask)=65536\n"
                    "NUMBER(PAGE_BUDDY_MAPCOUNT_VALUE)=-129\n"
                    "SYMBOL(kallsyms_names)=ffffffff8223a2a8\n"
                    "SYMBOL(kallsyms_num_syms)=ffffffff8223a2a0\n");
    g_string_append_printf(s, "NUMBER(phys_base)=%lld\n",
                           (long long)PHYS_BASE);
    g_string_append_printf(s, "SYMBOL(init_top_pgt)=%llx\n",
                           (unsigned long long)ROOT_VA);
    g_string_append_printf(s, "NUMBER(pgtable_l5_enabled)=%d\n",
                           t->o.l5 ? 1 : 0);
    g_string_append(s, "SYMBOL(node_data)=ffffffff82c3d060\n"
                    "LENGTH(node_data)=1024\n"
                    "KERNELOFFSET=0\n"
                    "NUMBER(KERNEL_IMAGE_SIZE)=1073741824\n");
    g_string_append_printf(s, "NUMBER(sme_mask)=%lld\n",
                           (long long)t->o.sme_bit);
    t->vmci = s;
}

/* write an ELF VMCOREINFO note at pa */
static void put_note(Fake *f, uint64_t pa, const char *text, uint32_t len,
                     uint32_t descsz)
{
    uint8_t h[24] = { 11, 0, 0, 0 };

    h[4] = (uint8_t)descsz;
    h[5] = (uint8_t)(descsz >> 8);
    h[6] = (uint8_t)(descsz >> 16);
    h[7] = (uint8_t)(descsz >> 24);
    memcpy(h + 12, "VMCOREINFO", 11);
    g_assert_cmpuint(pa + 24 + len, <=, f->size);
    memcpy(f->mem + pa, h, 24);
    memcpy(f->mem + pa + 24, text, len);
}

/* ---- a small independent ring writer ------------------------------------ */

static uint64_t dva(T *t, uint64_t id)
{
    return t->descs + (id & (t->count - 1)) * t->L.desc_size;
}

static uint64_t iva(T *t, uint64_t id)
{
    return t->infos + (id & (t->count - 1)) * t->L.info_size;
}

static void set_state(T *t, uint64_t id, unsigned st)
{
    w64(t, dva(t, id) + t->L.desc_state_var, SV(id, st));
}

static void set_lpos(T *t, uint64_t id, uint64_t b, uint64_t n)
{
    uint64_t l = dva(t, id) + t->L.desc_text_blk_lpos;

    w64(t, l + t->L.lpos_begin, b);
    w64(t, l + t->L.lpos_next, n);
}

static void sync_hdr(T *t)
{
    uint64_t dr = t->prb_va + t->L.prb_desc_ring;
    uint64_t tr = t->prb_va + t->L.prb_text_data_ring;

    w64(t, dr + t->L.dr_head_id, t->head_id);
    w64(t, dr + t->L.dr_tail_id, t->tail_id);
    w64(t, tr + t->L.data_head_lpos, t->head_lpos);
    w64(t, tr + t->L.data_tail_lpos, t->tail_lpos);
}

static Shadow *shd(T *t, guint i)
{
    return &g_array_index(t->sh, Shadow, i);
}

static void make_reusable(T *t, Shadow *s)
{
    if (!s->reusable) {
        s->reusable = true;
        set_state(t, s->id, 3);
    }
}

/* recycle the oldest data block */
static bool evict_data(T *t)
{
    while (t->data_tail < t->sh->len && !shd(t, t->data_tail)->has_data) {
        t->data_tail++;
    }
    if (t->data_tail >= t->sh->len) {
        return false;
    }
    make_reusable(t, shd(t, t->data_tail));
    t->tail_lpos = shd(t, t->data_tail)->next;
    t->data_tail++;
    return true;
}

/* recycle the oldest descriptor */
static void evict_desc(T *t, uint64_t new_id)
{
    Shadow *s = shd(t, t->desc_tail);

    make_reusable(t, s);
    if (t->data_tail <= t->desc_tail) {
        if (s->has_data) {
            t->tail_lpos = s->next;
        }
        t->data_tail = t->desc_tail + 1;
    }
    t->desc_tail++;
    t->tail_id = t->desc_tail < t->sh->len ? shd(t, t->desc_tail)->id
                                           : new_id;
}

typedef struct Push {
    unsigned state;             /* 2 finalized (default 0 means 2) */
    bool failed;                /* FAILED_LPOS */
    uint64_t ts;
    uint32_t caller;
    uint8_t level, facility, flags;
    const char *subsys, *dev;
} Push;

static uint64_t push(T *t, const char *text, size_t len, const Push *p)
{
    static const Push dflt = { .level = 6 };
    uint64_t id = (t->head_id + 1) & ID_MASK, seq = t->next_seq;
    uint64_t begin, next, i0, info, di;
    Shadow s = { 0 };
    char dev[96] = { 0 };
    uint8_t b;

    if (!p) {
        p = &dflt;
    }
    while (((id - t->tail_id) & ID_MASK) >= t->count) {
        evict_desc(t, id);
    }
    set_state(t, id, 0);        /* reserved */
    if (len == 0) {
        begin = next = 3;
    } else {
        uint64_t size = (len + 8 + 7) & ~7ull;

        if (p->failed || size > t->dsize - 8) {
            begin = next = 1;
        } else {
            bool wraps;

            begin = t->head_lpos;
            next = begin + size;
            /* before 6.19 a block ending exactly at the ring end wraps too */
            wraps = begin / t->dsize !=
                    (t->o.wrap619 ? next - 1 : next) / t->dsize;
            if (wraps) {
                next = (next & ~(t->dsize - 1)) + size;
            }
            while (next - t->tail_lpos > t->dsize) {
                if (!evict_data(t)) {
                    t->tail_lpos = next - t->dsize;
                }
            }
            t->head_lpos = next;
            i0 = begin & (t->dsize - 1);
            w64(t, t->data + i0, id);
            if (wraps) {
                i0 = 0;
                w64(t, t->data, id);
            }
            wva(t, t->data + i0 + 8, text, len);
        }
    }
    set_lpos(t, id, begin, next);
    info = iva(t, id);
    w64(t, info + t->L.info_seq, seq);
    w64(t, info + t->L.info_ts_nsec, p->ts ? p->ts : 1000000ull * (seq + 1));
    b = (uint8_t)len;
    wva(t, info + t->L.info_text_len, &b, 1);
    b = (uint8_t)(len >> 8);
    wva(t, info + t->L.info_text_len + 1, &b, 1);
    wva(t, info + t->L.info_text_len + 2, &p->facility, 1);
    b = (uint8_t)((p->flags & 0x1f) | p->level << 5);
    wva(t, info + t->L.info_text_len + 3, &b, 1);
    w32(t, info + t->L.info_caller_id, p->caller ? p->caller
                                                 : (uint32_t)(100 + seq));
    di = info + t->L.info_dev_info;
    wva(t, di, dev, t->L.devinfo_size);
    if (p->subsys) {
        wva(t, di + t->L.devinfo_subsystem, p->subsys, strlen(p->subsys));
    }
    if (p->dev) {
        wva(t, di + t->L.devinfo_device, p->dev, strlen(p->dev));
    }
    set_state(t, id, p->state ? p->state : 2);
    t->head_id = id;
    s.id = id;
    s.seq = seq;
    s.begin = begin;
    s.next = next;
    s.has_data = !(begin & 1);
    g_array_append_val(t->sh, s);
    t->next_seq++;
    sync_hdr(t);
    return seq;
}

static uint64_t pushs(T *t, const char *text)
{
    return push(t, text, strlen(text), NULL);
}

static void ring_init(T *t)
{
    uint64_t dr = t->prb_va + t->L.prb_desc_ring;
    uint64_t tr = t->prb_va + t->L.prb_text_data_ring;
    uint64_t desc0 = (uint32_t)(0u - (1u << t->o.cb) - 1u);  /* 32-bit, as */
    Shadow s = { 0 };                                        /* the kernel */

    t->count = 1ull << t->o.cb;
    t->dsize = 1ull << t->o.sb;
    w32(t, dr + t->L.dr_count_bits, t->o.cb);
    w64(t, dr + t->L.dr_descs, t->descs);
    w64(t, dr + t->L.dr_infos, t->infos);
    w32(t, tr + t->L.data_size_bits, t->o.sb);
    w64(t, tr + t->L.data_data, t->data);
    w64(t, t->prb_va + t->L.prb_fail, 0);
    /* last descriptor: initial head and tail, reusable, FAILED lpos */
    desc0 &= ID_MASK;
    g_assert_cmpuint(desc0 & (t->count - 1), ==, t->count - 1);
    set_state(t, desc0, 3);
    set_lpos(t, desc0, 1, 1);
    w64(t, iva(t, 0) + t->L.info_seq, 0 - t->count);
    w64(t, iva(t, desc0) + t->L.info_seq, 0);
    t->head_id = t->tail_id = desc0;
    t->head_lpos = t->tail_lpos = 0 - t->dsize;
    s.id = desc0;
    s.reusable = true;
    t->sh = g_array_new(FALSE, TRUE, sizeof(Shadow));
    g_array_append_val(t->sh, s);
    sync_hdr(t);
}

static void t_setup(T *t, const Opts *o)
{
    uint64_t pa;

    memset(t, 0, sizeof(*t));
    t->o = *o;
    if (!t->o.cb) {
        t->o.cb = 4;
    }
    if (!t->o.sb) {
        t->o.sb = 10;
    }
    t->L = o->lay ? *o->lay : L61;
    t->f.size = MEM_SIZE;
    t->f.mem = g_malloc0(MEM_SIZE);
    t->dm = o->l5 ? DM5 : DM4;
    t->pt_next = PT_ARENA;

    /* direct map: 4 KiB pages for [4, 6) MiB, a 2 MiB page for [6, 8) */
    if (o->map1g) {
        pt_map(t, t->dm, 0, 30);
    } else {
        for (pa = D_DESCS_OFF; pa < D_DATA_OFF; pa += 4096) {
            pt_map(t, t->dm + pa, pa, 12);
        }
        pt_map(t, t->dm + D_DATA_OFF, D_DATA_OFF, 21);
    }
    if (o->dynamic) {
        t->prb_va = RB_DYN_VA;
        t->descs = t->dm + D_DESCS_OFF;
        t->infos = t->dm + D_INFOS_OFF;
        t->data = t->dm + D_DATA_OFF;
    } else {
        t->prb_va = RB_STATIC_VA;
        t->descs = S_DESCS;
        t->infos = S_INFOS;
        t->data = S_DATA;
    }
    w64(t, PRB_SYM_VA, t->prb_va);
    ring_init(t);
    gen_vmci(t);
}

static void t_open(T *t)
{
    char err[160];
    int e;

    e = rs_vmci_parse(t->vmci->str, t->vmci->len, &t->vi, err, sizeof(err));
    if (e != RS_OK) {
        g_error("vmci: %s", err);
    }
    g_assert_cmpint(rs_vm_init(&t->vm, &t->vi, fake_read, &t->f), ==, RS_OK);
    e = rs_ring_open(&t->r, &t->vi, &t->vm, err, sizeof(err));
    if (e != RS_OK) {
        g_error("open: %s", err);
    }
}

static void t_free(T *t)
{
    g_free(t->f.mem);
    if (t->sh) {
        g_array_free(t->sh, TRUE);
    }
    if (t->vmci) {
        g_string_free(t->vmci, TRUE);
    }
}

static rs_rec_status rd(T *t, uint64_t seq, rs_record *rec, char *buf,
                        size_t cap)
{
    return rs_ring_read(&t->r, seq, rec, buf, cap);
}

static void check_text(T *t, uint64_t seq, const char *want)
{
    rs_record rec;
    char buf[2048];
    rs_rec_status st = rd(t, seq, &rec, buf, sizeof(buf));

    if (st != RS_REC_OK) {
        g_error("seq %llu: %s (%s)", (unsigned long long)seq,
                rs_rec_status_name(st), rec.reason ? rec.reason : "");
    }
    g_assert_cmpuint(rec.seq, ==, seq);
    g_assert_cmpuint(rec.text_len, ==, strlen(want));
    g_assert_cmpuint(rec.text_copied, ==, strlen(want));
    g_assert_false(rec.truncated);
    g_assert_true(memcmp(buf, want, rec.text_len) == 0);
}

/* ---- VMCOREINFO --------------------------------------------------------- */

static GString *vmci_61(void)
{
    T t;
    GString *s;
    Opts o = { 0 };

    t_setup(&t, &o);
    s = g_string_new(t.vmci->str);
    t_free(&t);
    return s;
}

static int parse_str(const char *s, rs_vmci *vi, char *err, size_t errlen)
{
    return rs_vmci_parse(s, strlen(s), vi, err, errlen);
}

static void test_vmci_parse(void)
{
    GString *s = vmci_61();
    rs_vmci vi;
    char err[160];

    g_assert_cmpint(parse_str(s->str, &vi, err, sizeof(err)), ==, RS_OK);
    g_assert_cmpstr(vi.osrelease, ==, "6.1.0-57-amd64");
    g_assert_cmpuint(vi.pagesize, ==, 4096);
    g_assert_cmpuint(vi.sym_prb, ==, PRB_SYM_VA);
    g_assert_cmpuint(vi.sym_top_pgt, ==, ROOT_VA);
    g_assert_cmpint(vi.phys_base, ==, -0x800000);
    g_assert_false(vi.pgtable_l5);
    g_assert_cmpuint(vi.sme_mask, ==, 0);
    g_assert_cmpuint(vi.kernel_image_size, ==, 1u << 30);
    g_assert_false(vi.text_truncated);
    g_assert_true(memcmp(&vi.lay, &L61, sizeof(L61)) == 0);
    g_string_free(s, TRUE);

    /* the real note's phys_base from a KASLR run, and a negative sme */
    g_assert_cmpint(parse_str("OSRELEASE=x\nNUMBER(phys_base)=-144703488\n",
                              &vi, NULL, 0), ==, RS_ERR_MISSING);
    g_assert_cmpint(vi.phys_base, ==, -144703488);
}

static void test_vmci_missing(void)
{
    GString *s = vmci_61();
    gchar **lines = g_strsplit(s->str, "\n", -1);
    static const char *const req[] = {
        "OSRELEASE", "PAGESIZE", "SYMBOL(prb)", "NUMBER(phys_base)",
        "SIZE(printk_ringbuffer)", "OFFSET(printk_ringbuffer.fail)",
        "OFFSET(prb_desc_ring.tail_id)", "OFFSET(prb_desc.state_var)",
        "OFFSET(prb_data_blk_lpos.next)", "SIZE(printk_info)",
        "OFFSET(printk_info.caller_id)", "LENGTH(printk_info_device)",
        "OFFSET(prb_data_ring.tail_lpos)", "SIZE(atomic_long_t)",
        "OFFSET(atomic_long_t.counter)", "OFFSET(dev_printk_info.device)",
    };
    size_t k;

    for (k = 0; k < G_N_ELEMENTS(req); k++) {
        GString *t = g_string_new(NULL);
        char err[160], want[96];
        rs_vmci vi;
        int i;

        for (i = 0; lines[i]; i++) {
            size_t n = strlen(req[k]);

            if (*lines[i] && !(strncmp(lines[i], req[k], n) == 0 &&
                               lines[i][n] == '=')) {
                g_string_append_printf(t, "%s\n", lines[i]);
            }
        }
        g_assert_cmpint(parse_str(t->str, &vi, err, sizeof(err)), ==,
                        RS_ERR_MISSING);
        snprintf(want, sizeof(want), "missing %s", req[k]);
        g_assert_cmpstr(err, ==, want);
        g_string_free(t, TRUE);
    }
    /* both page-table symbols gone */
    {
        GString *t = g_string_new(NULL);
        char err[160];
        rs_vmci vi;
        int i;

        for (i = 0; lines[i]; i++) {
            if (*lines[i] && !strstr(lines[i], "init_top_pgt") &&
                !strstr(lines[i], "swapper_pg_dir")) {
                g_string_append_printf(t, "%s\n", lines[i]);
            }
        }
        g_assert_cmpint(parse_str(t->str, &vi, err, sizeof(err)), ==,
                        RS_ERR_MISSING);
        g_assert_cmpstr(err, ==, "missing SYMBOL(init_top_pgt)");
        g_string_free(t, TRUE);
    }
    g_strfreev(lines);
    g_string_free(s, TRUE);
}

static void test_vmci_old_kernel(void)
{
    /* a 5.4-style note: log_buf & co, no prb */
    const char *t = "OSRELEASE=5.4.0-100-generic\nPAGESIZE=4096\n"
                    "SYMBOL(log_buf)=ffffffff8286a4c0\n"
                    "SYMBOL(log_buf_len)=ffffffff8286a4b8\n"
                    "SYMBOL(log_first_idx)=ffffffff82d1f5f8\n"
                    "SIZE(printk_log)=16\nOFFSET(printk_log.ts_nsec)=0\n"
                    "NUMBER(phys_base)=0\n";
    rs_vmci vi;
    char err[200];

    g_assert_cmpint(parse_str(t, &vi, err, sizeof(err)), ==,
                    RS_ERR_OLD_KERNEL);
    g_assert_nonnull(strstr(err, "5.10"));
    g_assert_cmpint(parse_str("OSRELEASE=5.4\n", &vi, err, sizeof(err)), ==,
                    RS_ERR_MISSING);
    g_assert_cmpstr(err, ==, "missing SYMBOL(prb)");
}

static void test_vmci_truncated(void)
{
    GString *s = vmci_61();
    /* everything after NUMBER(phys_base) is optional */
    size_t last_req = strchr(strstr(s->str, "NUMBER(phys_base)="), '\n') -
                      s->str;
    size_t n;

    /* every prefix: an error or success, never a crash */
    for (n = 0; n <= s->len; n++) {
        rs_vmci vi;
        char err[160];
        int e = rs_vmci_parse(s->str, n, &vi, err, sizeof(err));

        if (n <= last_req) {
            g_assert_cmpint(e, !=, RS_OK);
        } else {
            g_assert_cmpint(e, ==, RS_OK);
            g_assert_true(vi.text_truncated == (s->str[n - 1] != '\n'));
        }
    }
    g_string_free(s, TRUE);
}

static void test_vmci_hostile(void)
{
    static const struct {
        const char *line;
        int err;
    } cases[] = {
        { "SIZE(printk_info)=99999999999999999999999", RS_ERR_RANGE },
        { "SIZE(printk_info)=18446744073709551616", RS_ERR_RANGE },
        { "SIZE(printk_info)=513", RS_ERR_RANGE },
        { "SIZE(printk_info)=-1", RS_ERR_SYNTAX },
        { "SIZE(printk_info)=", RS_ERR_SYNTAX },
        { "SIZE(printk_info)=8 8", RS_ERR_SYNTAX },
        { "SIZE(printk_info)=88", RS_ERR_DUP },
        { "NUMBER(phys_base)=-9223372036854775809", RS_ERR_RANGE },
        { "NUMBER(phys_base)=9223372036854775808", RS_ERR_RANGE },
        { "NUMBER(phys_base)=0x10", RS_ERR_SYNTAX },
        { "SYMBOL(prb)=1ffffffffffffffff", RS_ERR_RANGE },
        { "SYMBOL(prb)=0xffff", RS_ERR_SYNTAX },
        { "NUMBER(pgtable_l5_enabled)=2", RS_ERR_RANGE },
        { "OSRELEASE=0123456789012345678901234567890123456789"
          "01234567890123456789012345", RS_ERR_RANGE },
        { "no equals sign here", RS_ERR_SYNTAX },
        { "=value", RS_ERR_SYNTAX },
        { "KEY=bin\x01ary", RS_ERR_SYNTAX },
        { "KEY=\xff", RS_ERR_SYNTAX },
        { "OSRELEASE=", RS_ERR_SYNTAX },
        { "PAGESIZE=65536", RS_ERR_RANGE },
        { "SIZE(atomic_long_t)=4", RS_ERR_LAYOUT },
        { "SIZE(prb_desc)=0", RS_ERR_LAYOUT },
        { "SYMBOL(prb)=FFFFFFFF81002000", RS_OK },
    };
    GString *base = vmci_61();
    rs_vmci vi;
    char err[200];
    size_t k;

    for (k = 0; k < G_N_ELEMENTS(cases); k++) {
        GString *t = g_string_new(base->str);
        int e;

        /* drop the original key so the line under test is the only one */
        if (cases[k].err != RS_ERR_DUP) {
            const char *eq = strchr(cases[k].line, '=');
            gchar *key = eq ? g_strndup(cases[k].line, eq - cases[k].line + 1)
                            : NULL;
            gchar *at = key && *key != '=' ? strstr(t->str, key) : NULL;

            if (at && (at == t->str || at[-1] == '\n')) {
                gchar *end = strchr(at, '\n');
                g_string_erase(t, at - t->str, end - at + 1);
            }
            g_free(key);
        }
        g_string_append_printf(t, "%s\n", cases[k].line);
        e = parse_str(t->str, &vi, err, sizeof(err));
        if (e != cases[k].err) {
            g_error("case %zu '%s': got %d (%s)", k, cases[k].line, e, err);
        }
        g_string_free(t, TRUE);
    }
    /* the extreme legal values */
    {
        GString *t = g_string_new(base->str);
        gchar *at = strstr(t->str, "NUMBER(phys_base)=");

        g_string_erase(t, at - t->str, strchr(at, '\n') - at + 1);
        g_string_append(t, "NUMBER(phys_base)=-9223372036854775808\n");
        g_assert_cmpint(parse_str(t->str, &vi, err, sizeof(err)), ==, RS_OK);
        g_assert_cmpint(vi.phys_base, ==, INT64_MIN);
        g_string_free(t, TRUE);
    }
    /* an inconsistent layout */
    {
        GString *t = g_string_new(base->str);
        gchar *at = strstr(t->str, "OFFSET(printk_info.caller_id)=20");

        at[strlen("OFFSET(printk_info.caller_id)=")] = '8';
        at[strlen("OFFSET(printk_info.caller_id)=") + 1] = '6';
        g_assert_cmpint(parse_str(t->str, &vi, err, sizeof(err)), ==,
                        RS_ERR_LAYOUT);
        g_assert_nonnull(strstr(err, "printk_info.caller_id"));
        g_string_free(t, TRUE);
    }
    /* too long: more than one page */
    {
        GString *t = g_string_new(base->str);

        while (t->len <= RS_VMCI_TEXT_MAX) {
            g_string_append(t, "SYMBOL(padding)=ffffffff81000000\n");
        }
        g_assert_cmpint(parse_str(t->str, &vi, err, sizeof(err)), ==,
                        RS_ERR_TOO_BIG);
        g_string_free(t, TRUE);
    }
    /* a very long line */
    {
        GString *t = g_string_new("OSRELEASE=6.1\nX=");

        while (t->len < 1000) {
            g_string_append_c(t, 'a');
        }
        g_string_append_c(t, '\n');
        g_assert_cmpint(parse_str(t->str, &vi, err, sizeof(err)), ==,
                        RS_ERR_SYNTAX);
        g_string_free(t, TRUE);
    }
    /* random garbage never crashes */
    {
        GRand *r = g_rand_new_with_seed(1);
        char buf[600];
        int i;
        size_t j;

        for (i = 0; i < 2000; i++) {
            for (j = 0; j < sizeof(buf); j++) {
                buf[j] = (char)g_rand_int_range(r, 0, 256);
            }
            g_assert_cmpint(rs_vmci_parse(buf, sizeof(buf), &vi, err,
                                          sizeof(err)), !=, RS_OK);
        }
        g_rand_free(r);
    }
    /* NULLs */
    g_assert_cmpint(rs_vmci_parse(NULL, 5, &vi, NULL, 0), ==, RS_ERR_ARG);
    g_assert_cmpint(rs_vmci_parse("x", 1, NULL, NULL, 0), ==, RS_ERR_ARG);
    g_string_free(base, TRUE);
}

/* ---- note discovery ----------------------------------------------------- */

static void test_note_find(void)
{
    GString *s = vmci_61();
    Fake f = { 0 };
    size_t tl = 0, off = 0;
    const char *txt;

    f.size = 3 * 8192;
    f.mem = g_malloc0(f.size);
    /* descsz claiming 2^32-1 and 2^32 (wraps to 0) */
    put_note(&f, 0x100, s->str, (uint32_t)s->len, 0xffffffffu);
    put_note(&f, 0x1100, s->str, (uint32_t)s->len, 0);
    /* a good header whose text is garbage */
    put_note(&f, 0x2100, "\x01\x02garbage", 9, 9);
    /* one whose text runs past the buffer */
    g_assert_null(rs_note_find(f.mem, 0x2200, &tl, &off));
    put_note(&f, 0x3104, s->str, (uint32_t)s->len, (uint32_t)s->len);
    txt = rs_note_find(f.mem, f.size, &tl, &off);
    g_assert_nonnull(txt);
    g_assert_cmpuint(off, ==, 0x3104);
    g_assert_cmpuint(tl, ==, s->len);
    g_assert_true(memcmp(txt, s->str, tl) == 0);
    /* cut the buffer inside the text */
    g_assert_null(rs_note_find(f.mem, 0x3104 + 24 + s->len - 1, &tl, &off));
    g_assert_null(rs_note_find(f.mem, 10, &tl, &off));
    g_assert_null(rs_note_find(NULL, 100, &tl, &off));
    g_free(f.mem);
    g_string_free(s, TRUE);
}

static void test_note_scan(void)
{
    GString *s = vmci_61();
    Fake f = { 0 };
    static uint8_t work[65536];
    static char text[RS_VMCI_TEXT_MAX];
    size_t tl = 0;
    uint64_t gpa = 0;

    f.size = 4u << 20;
    f.mem = g_malloc0(f.size);

    /* page-aligned, as alloc_pages_exact() places vmcoreinfo_note */
    put_note(&f, 0x231000, s->str, (uint32_t)s->len, (uint32_t)s->len);
    /* decoys: descsz 2^32-1, garbage text */
    put_note(&f, 0x10000, s->str, (uint32_t)s->len, 0xffffffffu);
    put_note(&f, 0x20000, "nonsense", 8, 8);
    /* a hole before it */
    f.hole_lo = 0x100000;
    f.hole_hi = 0x180000;
    g_assert_cmpint(rs_note_scan(fake_read, &f, 0, f.size,
                                 RS_SCAN_PAGE_STARTS, work, sizeof(work),
                                 text, sizeof(text), &tl, &gpa), ==, RS_OK);
    g_assert_cmpuint(gpa, ==, 0x231000);
    g_assert_cmpuint(tl, ==, s->len);
    g_assert_true(memcmp(text, s->str, tl) == 0);
    /* bounded: stop before it */
    g_assert_cmpint(rs_note_scan(fake_read, &f, 0, 0x231000,
                                 RS_SCAN_PAGE_STARTS, work, sizeof(work),
                                 text, sizeof(text), &tl, &gpa), ==,
                    RS_ERR_NOT_FOUND);
    /* start past it, running off the end of 2^64 */
    g_assert_cmpint(rs_note_scan(fake_read, &f, UINT64_MAX - 0x20000,
                                 UINT64_MAX,
                                 RS_SCAN_PAGE_STARTS, work, sizeof(work),
                                 text, sizeof(text), &tl, &gpa), ==,
                    RS_ERR_NOT_FOUND);
    g_assert_cmpint(rs_note_scan(fake_read, &f, UINT64_MAX - 5, 100, 0,
                                 work, sizeof(work), text, sizeof(text),
                                 &tl, &gpa), ==, RS_ERR_NOT_FOUND);

    /* unaligned note: only the full scan finds it; the header straddles a
     * chunk end (8 KiB work buffer) and the text crosses the next chunk */
    memset(f.mem + 0x231000, 0, 0x2000);
    put_note(&f, 0x233ff4, s->str, (uint32_t)s->len, (uint32_t)s->len);
    g_assert_cmpint(rs_note_scan(fake_read, &f, 0, f.size,
                                 RS_SCAN_PAGE_STARTS, work, sizeof(work),
                                 text, sizeof(text), &tl, &gpa), ==,
                    RS_ERR_NOT_FOUND);
    g_assert_cmpint(rs_note_scan(fake_read, &f, 0, f.size, 0, work, 8192,
                                 text, sizeof(text), &tl, &gpa), ==, RS_OK);
    g_assert_cmpuint(gpa, ==, 0x233ff4);
    /* and with the chunk containing it partly unreadable */
    f.hole_lo = 0x232000;
    f.hole_hi = 0x233000;
    g_assert_cmpint(rs_note_scan(fake_read, &f, 0, f.size, 0, work,
                                 sizeof(work), text, sizeof(text), &tl, &gpa),
                    ==, RS_OK);
    g_assert_cmpuint(gpa, ==, 0x233ff4);
    /* its text unreadable: not found */
    f.hole_lo = 0x234800;
    f.hole_hi = 0x234900;
    g_assert_cmpint(rs_note_scan(fake_read, &f, 0, f.size, 0, work,
                                 sizeof(work), text, sizeof(text), &tl, &gpa),
                    ==, RS_ERR_NOT_FOUND);
    /* bad arguments */
    g_assert_cmpint(rs_note_scan(fake_read, &f, 0, f.size, 0, work, 100,
                                 text, sizeof(text), &tl, &gpa), ==,
                    RS_ERR_ARG);
    g_assert_cmpint(rs_note_scan(fake_read, &f, 0, f.size, 0, work,
                                 sizeof(work), text, 100, &tl, &gpa), ==,
                    RS_ERR_ARG);
    g_free(f.mem);
    g_string_free(s, TRUE);
}

/* ---- address translation ------------------------------------------------ */

static void test_xlate(void)
{
    static const Opts variants[] = {
        { .l5 = false }, { .l5 = true }, { .map1g = true },
        { .l5 = true, .map1g = true }, { .sme_bit = 1ull << 47 },
    };
    size_t v;

    for (v = 0; v < G_N_ELEMENTS(variants); v++) {
        T t;
        uint64_t pa = 0, left = 0;
        uint8_t buf[3 * 4096];
        size_t i;

        t_setup(&t, &variants[v]);
        t_open(&t);
        g_assert_true(t.vm.l5 == variants[v].l5);
        /* image rule with negative phys_base */
        g_assert_cmpint(rs_vm_translate(&t.vm, IMG_VA + 0x1234, &pa, &left),
                        ==, RS_OK);
        g_assert_cmpuint(pa, ==, IMG_PA + 0x1234);
        g_assert_cmpuint(left, ==, 4096 - 0x234);
        /* 4 KiB, 2 MiB (or 1 GiB) walks */
        g_assert_cmpint(rs_vm_translate(&t.vm, t.dm + 0x4a5678, &pa, NULL),
                        ==, RS_OK);
        g_assert_cmpuint(pa, ==, 0x4a5678);
        g_assert_cmpint(rs_vm_translate(&t.vm, t.dm + 0x7fffff, &pa, NULL),
                        ==, RS_OK);
        g_assert_cmpuint(pa, ==, 0x7fffff);
        /* unmapped: below the 4 KiB run (present only with 1 GiB) */
        g_assert_cmpint(rs_vm_translate(&t.vm, t.dm + 0x3ff000, &pa, NULL),
                        ==, variants[v].map1g ? RS_OK : RS_ERR_XLATE);
        g_assert_cmpint(rs_vm_translate(&t.vm, t.dm + (2ull << 30), &pa,
                                        NULL), ==, RS_ERR_XLATE);
        /* non-canonical */
        g_assert_cmpint(rs_vm_translate(&t.vm, 0x0000800000000000ull, &pa,
                                        NULL), ==, RS_ERR_XLATE);
        g_assert_cmpint(rs_vm_translate(&t.vm, 0xfe00000000000000ull, &pa,
                                        NULL), ==, RS_ERR_XLATE);
        /* page-split reads across 4K -> 2M boundary */
        for (i = 0; i < sizeof(buf); i++) {
            t.f.mem[0x5fe800 + i] = (uint8_t)(i * 7);
        }
        g_assert_cmpint(rs_vm_read(&t.vm, t.dm + 0x5fe800, buf,
                                   sizeof(buf)), ==, RS_OK);
        for (i = 0; i < sizeof(buf); i++) {
            g_assert_cmpuint(buf[i], ==, (uint8_t)(i * 7));
        }
        g_assert_cmpint(rs_vm_read(&t.vm, t.dm, buf, RS_READ_MAX + 1), ==,
                        RS_ERR_TOO_BIG);
        g_assert_cmpint(rs_vm_read(&t.vm, UINT64_MAX - 10, buf, 20), ==,
                        RS_ERR_XLATE);
        t_free(&t);
    }
}

static uint64_t top_entry_pa(T *t, uint64_t va)
{
    return tpa(t, ROOT_VA) + ((va >> (t->o.l5 ? 48 : 39)) & 511) * 8;
}

static void test_xlate_hostile(void)
{
    T t;
    Opts o = { 0 };
    uint64_t pa, e, root = IMG_PA, va;
    uint8_t buf[16];
    int i;

    t_setup(&t, &o);
    t_open(&t);
    /* non-contiguous pages: remap dm+0x401000 to PA 0x450000 */
    {
        uint64_t a = t.dm + 0x400000;
        for (i = 0; i < 4096; i++) {
            t.f.mem[0x400000 + i] = 0xaa;
            t.f.mem[0x450000 + i] = 0xbb;
        }
        pt_map(&t, a + 0x1000, 0x450000, 12);
        g_assert_cmpint(rs_vm_read(&t.vm, a + 0xff8, buf, 16), ==, RS_OK);
        for (i = 0; i < 8; i++) {
            g_assert_cmpuint(buf[i], ==, 0xaa);
            g_assert_cmpuint(buf[8 + i], ==, 0xbb);
        }
    }
    /* self-referencing top-level entry (recursive mapping): terminates */
    va = 0xffff800000000000ull | 300ull << 39 | 300ull << 30 | 300ull << 21 |
         300ull << 12;
    pw64(&t.f, root + 300 * 8, root | 0x63);
    g_assert_cmpint(rs_vm_translate(&t.vm, va, &pa, NULL), ==, RS_OK);
    g_assert_cmpuint(pa, ==, root);
    /* a loop at lower levels: every level points at the root */
    va = 0xffff800000000000ull | 300ull << 39 | 301ull << 30 | 302ull << 21;
    pw64(&t.f, root + 301 * 8, root | 0x63);
    pw64(&t.f, root + 302 * 8, root | 0x63);
    g_assert_cmpint(rs_vm_translate(&t.vm, va, &pa, NULL), ==, RS_ERR_XLATE);
    /* PS set in a PML4 entry: reserved */
    pw64(&t.f, root + 303 * 8, 0x40000000ull | 0xe3);
    va = 0xffff800000000000ull | 303ull << 39;
    g_assert_cmpint(rs_vm_translate(&t.vm, va, &pa, NULL), ==, RS_ERR_XLATE);
    /* entry pointing outside guest memory */
    pw64(&t.f, root + 304 * 8, 0x000ffffffffff000ull | 0x63);
    va = 0xffff800000000000ull | 304ull << 39;
    g_assert_cmpint(rs_vm_translate(&t.vm, va, &pa, NULL), ==, RS_ERR_READ);
    /* an unreadable page table */
    e = pr64(&t.f, top_entry_pa(&t, t.dm));
    t.f.hole_lo = e & 0xfffffffff000ull;
    t.f.hole_hi = t.f.hole_lo + 4096;
    g_assert_cmpint(rs_vm_translate(&t.vm, t.dm + 0x400000, &pa, NULL), ==,
                    RS_ERR_READ);
    t.f.hole_lo = t.f.hole_hi = 0;
    /* CR3 as root, with PCID bits and the PTI user bit */
    rs_vm_set_cr3(&t.vm, root | 0x1000 | 0x5, true);
    g_assert_cmpuint(t.vm.root, ==, root);
    g_assert_cmpint(rs_vm_translate(&t.vm, t.dm + 0x400010, &pa, NULL), ==,
                    RS_OK);
    g_assert_cmpuint(pa, ==, 0x400010);
    /* no root at all: only the image translates */
    t.vm.have_root = false;
    g_assert_cmpint(rs_vm_translate(&t.vm, t.dm + 0x400010, &pa, NULL), ==,
                    RS_ERR_XLATE);
    g_assert_cmpint(rs_vm_translate(&t.vm, IMG_VA, &pa, NULL), ==, RS_OK);
    t_free(&t);
}

/* ---- the ring ----------------------------------------------------------- */

static void test_ring_simple(void)
{
    static const Opts variants[] = {
        { 0 }, { .dynamic = true }, { .dynamic = true, .l5 = true },
        { .dynamic = true, .map1g = true }, { .dynamic = true, .l5 = true,
        .map1g = true }, { .lay = &LODD }, { .dynamic = true, .lay = &LODD,
        .sme_bit = 1ull << 51 },
    };
    size_t v;

    for (v = 0; v < G_N_ELEMENTS(variants); v++) {
        T t;
        rs_record rec;
        char buf[256];
        uint64_t s = 0;
        Push p = { .ts = 3726251999ull, .caller = 0x80000001u, .level = 3,
                   .facility = 1, .flags = 2, .subsys = "pci",
                   .dev = "+pci:0000:00:1f.2" };

        t_setup(&t, &variants[v]);
        t_open(&t);
        g_assert_cmpuint(t.r.count_bits, ==, 4);
        g_assert_cmpuint(t.r.size_bits, ==, 10);

        /* empty ring */
        g_assert_cmpint(rs_ring_first_seq(&t.r, &s), ==, RS_OK);
        g_assert_cmpuint(s, ==, 0);
        g_assert_cmpint(rs_ring_next_seq(&t.r, &s), ==, RS_OK);
        g_assert_cmpuint(s, ==, 0);
        g_assert_cmpint(rd(&t, 0, &rec, buf, sizeof(buf)), ==,
                        RS_REC_NOT_YET);
        g_assert_cmpint(rd(&t, 15, &rec, buf, sizeof(buf)), ==,
                        RS_REC_NOT_YET);

        pushs(&t, "Linux version 6.1.0-57-amd64");
        push(&t, "ahci 0000:00:1f.2: version 3.0", 30, &p);
        pushs(&t, "third");
        g_assert_cmpint(rs_ring_first_seq(&t.r, &s), ==, RS_OK);
        g_assert_cmpuint(s, ==, 0);
        g_assert_cmpint(rs_ring_next_seq(&t.r, &s), ==, RS_OK);
        g_assert_cmpuint(s, ==, 3);
        check_text(&t, 0, "Linux version 6.1.0-57-amd64");
        check_text(&t, 2, "third");
        g_assert_cmpint(rd(&t, 1, &rec, buf, sizeof(buf)), ==, RS_REC_OK);
        g_assert_cmpuint(rec.ts_nsec, ==, 3726251999ull);
        g_assert_cmpuint(rec.caller_id, ==, 0x80000001u);
        g_assert_cmpuint(rec.level, ==, 3);
        g_assert_cmpuint(rec.facility, ==, 1);
        g_assert_cmpuint(rec.flags, ==, 2);
        g_assert_cmpstr(rec.subsystem, ==, "pci");
        g_assert_cmpstr(rec.device, ==, "+pci:0000:00:1f.2");
        g_assert_cmpstr(buf, ==, "ahci 0000:00:1f.2: version 3.0");
        g_assert_cmpint(rd(&t, 3, &rec, buf, sizeof(buf)), ==,
                        RS_REC_NOT_YET);
        /* truncation into a small buffer */
        g_assert_cmpint(rd(&t, 0, &rec, buf, 5), ==, RS_REC_OK);
        g_assert_true(rec.truncated);
        g_assert_cmpuint(rec.text_copied, ==, 5);
        g_assert_true(memcmp(buf, "Linux", 5) == 0);
        /* metadata only */
        g_assert_cmpint(rd(&t, 0, &rec, NULL, 0), ==, RS_REC_OK);
        g_assert_cmpuint(rec.text_len, ==, 28);
        t_free(&t);
    }
}

static void test_ring_wrap(void)
{
    T t;
    Opts o = { .cb = 5, .sb = 7 };      /* 128-byte data ring */
    rs_record rec;
    char buf[256], want[64];
    uint64_t s, i, seq;
    bool wrapped = false;

    t_setup(&t, &o);
    t_open(&t);
    for (i = 0; i < 40; i++) {
        snprintf(want, sizeof(want), "message %llu %.*s",
                 (unsigned long long)i, (int)(i % 23), "abcdefghijklmnopqrstuvw");
        seq = pushs(&t, want);
        check_text(&t, seq, want);
        g_assert_cmpint(rd(&t, seq, &rec, buf, sizeof(buf)), ==, RS_REC_OK);
        if (rec.lpos_begin >> 7 != rec.lpos_next >> 7) {
            wrapped = true;
            /* data sits at index 0 after the id */
            g_assert_cmpuint(rec.lpos_next & 127, ==,
                             (strlen(want) + 8 + 7) & ~7u);
        }
        g_assert_cmpint(rs_ring_next_seq(&t.r, &s), ==, RS_OK);
        g_assert_cmpuint(s, ==, seq + 1);
    }
    g_assert_true(wrapped);
    /* older records lost their data: NODATA (reusable) or GONE */
    g_assert_cmpint(rd(&t, 0, &rec, buf, sizeof(buf)), ==, RS_REC_GONE);
    t_free(&t);
}

/* text of n bytes whose data block is n + 8 bytes (n a multiple of 8) */
static uint64_t push_block(T *t, char c, size_t n)
{
    char txt[256];

    g_assert_cmpuint(n, <, sizeof(txt));
    memset(txt, c, n);
    return push(t, txt, n, NULL);
}

static void check_fill(T *t, uint64_t seq, char c, size_t n)
{
    char want[256];

    memset(want, c, n);
    want[n] = '\0';
    check_text(t, seq, want);
}

/*
 * Up to 6.18 a block that would end exactly at the end of the data ring
 * still wraps: its data goes to index 0 of the next wrap and the bytes up
 * to the end are left unused, which here pushes the two older blocks out.
 */
static void test_ring_wrap_exact_old(void)
{
    T t;
    Opts o = { .cb = 5, .sb = 7 };      /* 128-byte data ring */
    rs_record rec;
    char buf[256];
    uint64_t s0, s1, s2;

    t_setup(&t, &o);
    t_open(&t);
    /* the first wrap is the last before lpos overflows: [-128, 0) */
    s0 = push_block(&t, 'a', 32);       /* [-128, -88) */
    s1 = push_block(&t, 'b', 32);       /* [-88, -48) */
    s2 = push_block(&t, 'c', 40);       /* 48 bytes, would end at 0 */
    g_assert_cmpint(rd(&t, s2, &rec, buf, sizeof(buf)), ==, RS_REC_OK);
    g_assert_cmpuint(rec.lpos_begin, ==, 0 - 48ull);
    g_assert_cmpuint(rec.lpos_next, ==, 48);
    check_fill(&t, s2, 'c', 40);
    g_assert_cmpint(rd(&t, s0, &rec, buf, sizeof(buf)), ==, RS_REC_NODATA);
    g_assert_cmpint(rd(&t, s1, &rec, buf, sizeof(buf)), ==, RS_REC_NODATA);

    /* and in a later wrap, away from the overflow: [64, 128) wraps too */
    push_block(&t, 'd', 8);             /* [48, 64) */
    s0 = push_block(&t, 'e', 56);       /* 64 bytes: [128, 192) */
    g_assert_cmpint(rd(&t, s0, &rec, buf, sizeof(buf)), ==, RS_REC_OK);
    g_assert_cmpuint(rec.lpos_begin, ==, 64);
    g_assert_cmpuint(rec.lpos_next, ==, 128 + 64);
    check_fill(&t, s0, 'e', 56);
    t_free(&t);
}

/*
 * From 6.19 (67e1b0052f6b) such a block stays in place and ends on the
 * boundary: in the first wrap its next lpos is 0, later a multiple of the
 * ring size. A reader that compares the wraps of begin and next takes
 * these for wrapped blocks of size 0.
 */
static void test_ring_wrap_exact_619(void)
{
    T t;
    Opts o = { .cb = 5, .sb = 7, .wrap619 = true };
    rs_record rec;
    char buf[256], want[64];
    uint64_t s0, s1, s2, s3, s, i, seq;
    unsigned exact = 0;

    t_setup(&t, &o);
    t_open(&t);
    s0 = push_block(&t, 'a', 32);
    s1 = push_block(&t, 'b', 32);
    s2 = push_block(&t, 'c', 40);       /* [-48, 0): fills the ring */
    g_assert_cmpint(rd(&t, s2, &rec, buf, sizeof(buf)), ==, RS_REC_OK);
    g_assert_cmpuint(rec.lpos_begin, ==, 0 - 48ull);
    g_assert_cmpuint(rec.lpos_next, ==, 0);
    check_fill(&t, s0, 'a', 32);        /* nothing was pushed out */
    check_fill(&t, s1, 'b', 32);
    check_fill(&t, s2, 'c', 40);
    g_assert_cmpint(rs_ring_next_seq(&t.r, &s), ==, RS_OK);
    g_assert_cmpuint(s, ==, s2 + 1);

    push_block(&t, 'd', 56);            /* [0, 64) */
    s3 = push_block(&t, 'e', 56);       /* [64, 128): ends on the boundary */
    g_assert_cmpint(rd(&t, s3, &rec, buf, sizeof(buf)), ==, RS_REC_OK);
    g_assert_cmpuint(rec.lpos_begin, ==, 64);
    g_assert_cmpuint(rec.lpos_next, ==, 128);
    check_fill(&t, s3, 'e', 56);
    check_fill(&t, s3 - 1, 'd', 56);

    /* a block that does not fit still wraps the same way as before */
    s = push_block(&t, 'f', 48);        /* [128, 184) */
    s = push_block(&t, 'g', 72);        /* 80 bytes: [256, 336) */
    g_assert_cmpint(rd(&t, s, &rec, buf, sizeof(buf)), ==, RS_REC_OK);
    g_assert_cmpuint(rec.lpos_begin, ==, 184);
    g_assert_cmpuint(rec.lpos_next, ==, 256 + 80);
    check_fill(&t, s, 'g', 72);

    /* a long run of mixed sizes: every record reads back */
    for (i = 0; i < 200; i++) {
        snprintf(want, sizeof(want), "m%llu %.*s", (unsigned long long)i,
                 (int)(i * 7 % 41), "abcdefghijklmnopqrstuvwxyz0123456789ABCDE");
        seq = pushs(&t, want);
        check_text(&t, seq, want);
        g_assert_cmpint(rd(&t, seq, &rec, buf, sizeof(buf)), ==, RS_REC_OK);
        if ((rec.lpos_next & 127) == 0) {
            exact++;
        }
        g_assert_cmpint(rs_ring_next_seq(&t.r, &s), ==, RS_OK);
        g_assert_cmpuint(s, ==, seq + 1);
    }
    g_assert_cmpuint(exact, >, 0);
    t_free(&t);
}

/* printk_info.flags: FORCE_CON (6.13+) next to the older bits */
static void test_ring_flags(void)
{
    static const struct {
        uint8_t flags, level;
        bool force;
    } cases[] = {
        { RS_LOG_FORCE_CON | RS_LOG_NEWLINE, 7, true },
        { RS_LOG_FORCE_CON, 0, true },
        { RS_LOG_NEWLINE, 7, false },
        { RS_LOG_CONT, 6, false },
        { RS_LOG_CONT | RS_LOG_NEWLINE | 0x10, 5, false },
    };
    T t;
    Opts o = { 0 };
    rs_record rec;
    char buf[64];
    size_t i;

    t_setup(&t, &o);
    t_open(&t);
    for (i = 0; i < G_N_ELEMENTS(cases); i++) {
        Push p = { .flags = cases[i].flags, .level = cases[i].level };
        uint64_t seq = push(&t, "sysrq: Show Memory", 18, &p);

        g_assert_cmpint(rd(&t, seq, &rec, buf, sizeof(buf)), ==, RS_REC_OK);
        g_assert_cmpuint(rec.flags, ==, cases[i].flags);
        g_assert_cmpuint(rec.level, ==, cases[i].level);
        g_assert_cmpint(rec.force_con, ==, cases[i].force);
    }
    t_free(&t);
}

static void test_console_filter(void)
{
    uint64_t first[RS_LEVELS];

    /* a known console loglevel: 4 prints levels 0-3 */
    g_assert_true(rs_console_filtered(4, NULL, 7, 10));
    g_assert_false(rs_console_filtered(4, NULL, 3, 10));
    g_assert_true(rs_console_filtered_flags(4, NULL, 7, 0, 10));
    g_assert_true(rs_console_filtered_flags(4, NULL, 4, RS_LOG_NEWLINE, 10));
    g_assert_false(rs_console_filtered_flags(4, NULL, 7, RS_LOG_FORCE_CON,
                                             10));
    g_assert_false(rs_console_filtered_flags(4, NULL, 3, 0, 10));

    /* inferred: a level-4 record printed at seq 3 */
    rs_levels_reset(first);
    rs_levels_printed_flags(first, 4, RS_LOG_NEWLINE, 3);
    g_assert_cmpuint(first[4], ==, 3);
    g_assert_false(rs_console_filtered_flags(0, first, 4, 0, 9));
    g_assert_false(rs_console_filtered_flags(0, first, 2, 0, 9));
    g_assert_true(rs_console_filtered_flags(0, first, 6, 0, 9));
    g_assert_true(rs_console_filtered_flags(0, first, 4, 0, 2));
    /* a forced info record on the console at seq 5 is no sign that the
     * console prints level 6: a later unforced one is still filtered */
    rs_levels_printed_flags(first, 6, RS_LOG_FORCE_CON | RS_LOG_NEWLINE, 5);
    g_assert_cmpuint(first[6], ==, UINT64_MAX);
    g_assert_true(rs_console_filtered_flags(0, first, 6, 0, 9));
    g_assert_false(rs_console_filtered_flags(0, first, 6, RS_LOG_FORCE_CON,
                                             9));
    /* counted the old way it would have been */
    rs_levels_printed(first, 6, 5);
    g_assert_false(rs_console_filtered(0, first, 6, 9));
    /* out-of-range levels are ignored */
    rs_levels_printed_flags(first, RS_LEVELS, 0, 1);
    rs_levels_printed_flags(first, -1, 0, 1);
    g_assert_cmpuint(first[0], ==, UINT64_MAX);
}

static void test_ring_dataless(void)
{
    T t;
    Opts o = { 0 };
    rs_record rec;
    char buf[64];
    Push failed = { .failed = true, .level = 4 };
    rs_iter it;
    rs_iter_ev ev;
    uint64_t s;

    t_setup(&t, &o);
    t_open(&t);
    pushs(&t, "a");
    push(&t, "", 0, NULL);                      /* NO_LPOS: empty text */
    push(&t, "lost text", 9, &failed);          /* FAILED_LPOS */
    pushs(&t, "d");
    g_assert_cmpint(rd(&t, 1, &rec, buf, sizeof(buf)), ==, RS_REC_OK);
    g_assert_cmpuint(rec.text_len, ==, 0);
    g_assert_cmpuint(rec.lpos_begin, ==, 3);
    g_assert_cmpstr(buf, ==, "");
    g_assert_cmpint(rd(&t, 2, &rec, buf, sizeof(buf)), ==, RS_REC_NODATA);
    g_assert_cmpuint(rec.level, ==, 4);
    g_assert_cmpuint(rec.text_len, ==, 9);
    g_assert_nonnull(strstr(rec.reason, "FAILED_LPOS"));
    g_assert_cmpint(rs_ring_next_seq(&t.r, &s), ==, RS_OK);
    g_assert_cmpuint(s, ==, 4);

    /* the iterator skips NODATA (and reports it when asked) */
    rs_iter_init(&it, &t.r, 0, s, 100, 0);
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==,
                    RS_IT_RECORD);
    g_assert_cmpuint(rec.seq, ==, 0);
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==,
                    RS_IT_RECORD);
    g_assert_cmpuint(rec.seq, ==, 1);
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==,
                    RS_IT_RECORD);
    g_assert_cmpuint(rec.seq, ==, 3);
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==, RS_IT_END);
    g_assert_cmpuint(it.n_nodata, ==, 1);
    g_assert_cmpuint(it.n_records, ==, 3);
    rs_iter_init(&it, &t.r, 0, UINT64_MAX, 100, RS_ITER_NODATA);
    do {
        ev = rs_iter_next(&it, &rec, buf, sizeof(buf));
    } while (ev == RS_IT_RECORD);
    g_assert_cmpint(ev, ==, RS_IT_NODATA);
    g_assert_cmpuint(rec.seq, ==, 2);
    t_free(&t);
}

static void test_ring_reusable(void)
{
    T t;
    Opts o = { .cb = 4, .sb = 8 };      /* 16 descs, 256 bytes of data */
    rs_record rec;
    char buf[256];
    uint64_t first, s, i;
    rs_iter it;
    rs_iter_ev ev;

    t_setup(&t, &o);
    t_open(&t);
    /* 6 x 56-byte blocks: data recycles while descriptors remain */
    for (i = 0; i < 6; i++) {
        pushs(&t, "0123456789012345678901234567890123456789abcdef");
    }
    g_assert_cmpint(rs_ring_first_seq(&t.r, &first), ==, RS_OK);
    g_assert_cmpuint(first, ==, 0);
    g_assert_cmpint(rd(&t, 0, &rec, buf, sizeof(buf)), ==, RS_REC_NODATA);
    g_assert_nonnull(strstr(rec.reason, "reusable"));
    g_assert_cmpint(rd(&t, 1, &rec, buf, sizeof(buf)), ==, RS_REC_NODATA);
    g_assert_cmpint(rd(&t, 2, &rec, buf, sizeof(buf)), ==, RS_REC_OK);
    g_assert_cmpint(rs_ring_next_seq(&t.r, &s), ==, RS_OK);
    g_assert_cmpuint(s, ==, 6);
    rs_iter_init(&it, &t.r, 0, s, 100, 0);
    while ((ev = rs_iter_next(&it, &rec, buf, sizeof(buf))) == RS_IT_RECORD) {
    }
    g_assert_cmpint(ev, ==, RS_IT_END);
    g_assert_cmpuint(it.n_records, ==, 4);
    g_assert_cmpuint(it.n_nodata, ==, 2);
    t_free(&t);
}

static void test_ring_overwritten(void)
{
    T t;
    Opts o = { .cb = 3, .sb = 12 };     /* 8 descriptors */
    rs_record rec;
    char buf[64], want[32];
    uint64_t first, next, i, expect;
    rs_iter it;
    rs_iter_ev ev;
    bool gap = false;

    t_setup(&t, &o);
    t_open(&t);
    for (i = 0; i < 50; i++) {
        snprintf(want, sizeof(want), "rec %llu", (unsigned long long)i);
        pushs(&t, want);
    }
    g_assert_cmpint(rs_ring_first_seq(&t.r, &first), ==, RS_OK);
    g_assert_cmpuint(first, ==, 42);
    g_assert_cmpint(rs_ring_next_seq(&t.r, &next), ==, RS_OK);
    g_assert_cmpuint(next, ==, 50);
    g_assert_cmpint(rd(&t, 41, &rec, buf, sizeof(buf)), ==, RS_REC_GONE);
    g_assert_cmpint(rd(&t, 0, &rec, buf, sizeof(buf)), ==, RS_REC_GONE);
    g_assert_cmpint(rd(&t, 58, &rec, buf, sizeof(buf)), ==, RS_REC_NOT_YET);
    check_text(&t, 42, "rec 42");
    check_text(&t, 49, "rec 49");

    rs_iter_init(&it, &t.r, 10, next, 1000, 0);
    expect = 42;
    while ((ev = rs_iter_next(&it, &rec, buf, sizeof(buf))) != RS_IT_END) {
        if (ev == RS_IT_GAP) {
            g_assert_false(gap);
            gap = true;
            g_assert_cmpuint(it.gap_first, ==, 10);
            g_assert_cmpuint(it.gap_count, ==, 32);
            continue;
        }
        g_assert_cmpint(ev, ==, RS_IT_RECORD);
        g_assert_cmpuint(rec.seq, ==, expect);
        expect++;
    }
    g_assert_true(gap);
    g_assert_cmpuint(expect, ==, 50);
    g_assert_cmpuint(it.n_lost, ==, 32);
    t_free(&t);
}

static void test_ring_committed(void)
{
    T t;
    Opts o = { 0 };
    rs_record rec;
    char buf[64];
    uint64_t s;
    Push com = { .state = 1, .level = 6 };
    rs_iter it;

    t_setup(&t, &o);
    t_open(&t);
    pushs(&t, "one");
    pushs(&t, "two");
    push(&t, "cont", 4, &com);          /* committed: may still be extended */
    g_assert_cmpint(rd(&t, 2, &rec, buf, sizeof(buf)), ==, RS_REC_NOT_YET);
    g_assert_cmpint(rs_ring_next_seq(&t.r, &s), ==, RS_OK);
    g_assert_cmpuint(s, ==, 2);
    /* a reserved one after it */
    push(&t, "res", 3, NULL);
    set_state(&t, t.head_id, 0);
    g_assert_cmpint(rs_ring_next_seq(&t.r, &s), ==, RS_OK);
    g_assert_cmpuint(s, ==, 2);
    rs_iter_init(&it, &t.r, 0, UINT64_MAX, 100, 0);
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==,
                    RS_IT_RECORD);
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==,
                    RS_IT_RECORD);
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==, RS_IT_END);
    g_assert_cmpuint(it.seq, ==, 2);
    /* the writer finalizes: the iterator resumes */
    set_state(&t, t.head_id - 1, 2);
    set_state(&t, t.head_id, 2);
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==,
                    RS_IT_RECORD);
    g_assert_cmpstr(buf, ==, "cont");
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==,
                    RS_IT_RECORD);
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==, RS_IT_END);
    g_assert_cmpint(rs_ring_next_seq(&t.r, &s), ==, RS_OK);
    g_assert_cmpuint(s, ==, 4);
    t_free(&t);
}

/* concurrent writer: before the Nth read, the writer recycles the slot */
typedef struct Hook {
    T *t;
    unsigned pushes;
    int mode;           /* 0: overwrite by pushes, 1: make reusable only,
                         * 2: rewrite seq only */
    uint64_t seq;
} Hook;

static void hook_fn(Fake *f, void *data)
{
    Hook *h = data;
    unsigned i;

    (void)f;
    if (h->mode == 0) {
        for (i = 0; i < h->pushes; i++) {
            pushs(h->t, "NEW NEW NEW NEW NEW NEW NEW");
        }
    } else if (h->mode == 1) {
        set_state(h->t, shd(h->t, (guint)h->seq + 1)->id, 3);
    } else {
        w64(h->t, iva(h->t, h->seq) + h->t->L.info_seq, h->seq + h->t->count);
    }
}

static void test_ring_changing(void)
{
    static const char *orig = "the original record text";
    int mode;

    for (mode = 0; mode < 3; mode++) {
        unsigned n, total;
        bool saw_changed = false;

        /* count the reads of an undisturbed rs_ring_read */
        {
            T t;
            Opts o = { .dynamic = true, .cb = 3, .sb = 10 };
            rs_record rec;
            char buf[64];

            t_setup(&t, &o);
            t_open(&t);
            pushs(&t, "x");
            pushs(&t, orig);
            t.f.reads = 0;
            g_assert_cmpint(rd(&t, 1, &rec, buf, sizeof(buf)), ==, RS_REC_OK);
            total = t.f.reads;
            t_free(&t);
        }
        g_assert_cmpuint(total, >, 10);
        for (n = 1; n <= total + 1; n++) {
            T t;
            Opts o = { .dynamic = true, .cb = 3, .sb = 10 };
            Hook h;
            rs_record rec;
            char buf[64];
            rs_rec_status st;

            t_setup(&t, &o);
            t_open(&t);
            pushs(&t, "x");
            pushs(&t, orig);
            h.t = &t;
            h.pushes = 8;
            h.mode = mode;
            h.seq = 1;
            t.f.hook = hook_fn;
            t.f.hook_data = &h;
            t.f.reads = 0;
            t.f.fire_at = n;
            st = rd(&t, 1, &rec, buf, sizeof(buf));
            if (n > total) {
                g_assert_cmpint(st, ==, RS_REC_OK);
            }
            if (st == RS_REC_OK) {
                g_assert_cmpuint(rec.text_copied, ==, strlen(orig));
                g_assert_true(memcmp(buf, orig, strlen(orig)) == 0);
            } else if (st == RS_REC_CHANGED) {
                saw_changed = true;
            } else if (st == RS_REC_GONE || st == RS_REC_NODATA) {
                /* the writer finished before the deciding read */
            } else {
                g_error("mode %d read %u: %s (%s)", mode, n,
                        rs_rec_status_name(st), rec.reason);
            }
            t_free(&t);
        }
        g_assert_true(saw_changed);
    }
}

static void test_iter_changing(void)
{
    T t;
    Opts o = { .cb = 3, .sb = 10 };
    Hook h;
    rs_record rec;
    char buf[64];
    rs_iter it;
    rs_iter_ev ev;
    uint64_t i, next;
    unsigned gaps = 0, recs = 0;

    t_setup(&t, &o);
    t_open(&t);
    for (i = 0; i < 6; i++) {
        pushs(&t, "old");
    }
    g_assert_cmpint(rs_ring_next_seq(&t.r, &next), ==, RS_OK);
    /* a flood of 20 records lands while record 2 is being copied */
    h.t = &t;
    h.pushes = 20;
    h.mode = 0;
    h.seq = 0;
    rs_iter_init(&it, &t.r, 0, UINT64_MAX, 1000, 0);
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==,
                    RS_IT_RECORD);
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==,
                    RS_IT_RECORD);
    t.f.hook = hook_fn;
    t.f.hook_data = &h;
    t.f.reads = 0;
    t.f.fire_at = 5;        /* static ring: read 5 is record 2's text */
    while ((ev = rs_iter_next(&it, &rec, buf, sizeof(buf))) != RS_IT_END) {
        if (ev == RS_IT_GAP) {
            gaps++;
            g_assert_cmpuint(it.gap_first, ==, 2);
            g_assert_cmpuint(it.gap_first + it.gap_count, ==, 26 - 8);
        } else {
            g_assert_cmpint(ev, ==, RS_IT_RECORD);
            g_assert_cmpstr(buf, ==, "NEW NEW NEW NEW NEW NEW NEW");
            recs++;
        }
    }
    g_assert_cmpuint(gaps, ==, 1);
    g_assert_cmpuint(recs, ==, 8);
    g_assert_cmpuint(it.n_changed, >=, 1);
    g_assert_cmpuint(it.seq, ==, 26);
    (void)next;
    t_free(&t);
}

static void corrupt_and_expect(T *t, uint64_t seq, rs_rec_status want,
                               const char *reason)
{
    rs_record rec;
    char buf[256];
    rs_rec_status st = rd(t, seq, &rec, buf, sizeof(buf));

    if (st != want || (reason && (!rec.reason ||
                                  !strstr(rec.reason, reason)))) {
        g_error("seq %llu: got %s (%s), want %s (%s)",
                (unsigned long long)seq, rs_rec_status_name(st),
                rec.reason ? rec.reason : "-", rs_rec_status_name(want),
                reason ? reason : "-");
    }
}

static void test_ring_hostile_blocks(void)
{
    T t;
    Opts o = { .dynamic = true };
    uint64_t id, lp, b, n;
    rs_iter it;
    rs_record rec;
    char buf[64];
    int guard = 0;

    t_setup(&t, &o);
    t_open(&t);
    pushs(&t, "zero");
    pushs(&t, "one one one");
    pushs(&t, "two");
    pushs(&t, "three");
    id = shd(&t, 2)->id;        /* seq 1 */
    lp = dva(&t, id) + t.L.desc_text_blk_lpos;
    b = r64(&t, lp);
    n = r64(&t, lp + 8);

    w64(&t, lp, b + 4);
    corrupt_and_expect(&t, 1, RS_REC_BAD, "aligned");
    w64(&t, lp, b);
    w64(&t, lp + 8, b + 4 * t.dsize);               /* far outside */
    corrupt_and_expect(&t, 1, RS_REC_BAD, "illegal lpos");
    w64(&t, lp + 8, b);                             /* size 0 */
    corrupt_and_expect(&t, 1, RS_REC_BAD, "illegal lpos");
    w64(&t, lp, b + t.dsize);                        /* begin > next */
    w64(&t, lp + 8, b + t.dsize - 8);
    corrupt_and_expect(&t, 1, RS_REC_BAD, NULL);
    w64(&t, lp, b);
    w64(&t, lp + 8, b + 8);                         /* only the id */
    corrupt_and_expect(&t, 1, RS_REC_BAD, "text_len > block");
    w64(&t, lp + 8, n);
    w64(&t, lp, 1);                                 /* half data-less */
    corrupt_and_expect(&t, 1, RS_REC_BAD, "data-less");
    w64(&t, lp, 3);
    w64(&t, lp + 8, 3);                             /* NO_LPOS, text_len 11 */
    corrupt_and_expect(&t, 1, RS_REC_BAD, "text_len");
    w64(&t, lp, b);
    w64(&t, lp + 8, n);
    corrupt_and_expect(&t, 1, RS_REC_OK, NULL);
    /* next on the end of begin's wrap: a 6.19 block left in place */
    w64(&t, lp + 8, (b | (t.dsize - 1)) + 1);
    corrupt_and_expect(&t, 1, RS_REC_OK, NULL);
    /* ... but not on the end of the wrap after: size 0 at index 0 */
    w64(&t, lp + 8, (b | (t.dsize - 1)) + 1 + t.dsize);
    corrupt_and_expect(&t, 1, RS_REC_BAD, "illegal lpos");
    /* next == begin + ring size: as long as the whole ring */
    w64(&t, lp + 8, b + t.dsize);
    corrupt_and_expect(&t, 1, RS_REC_BAD, NULL);
    /* b is in the last wrap before lpos overflows, so its wrap ends at
     * next 0; next 0 with begin in wrap 0 is no block at all */
    g_assert_cmpuint((b | (t.dsize - 1)) + 1, ==, 0);
    w64(&t, lp, 16);
    w64(&t, lp + 8, 0);
    corrupt_and_expect(&t, 1, RS_REC_BAD, "illegal lpos");
    w64(&t, lp, b);
    w64(&t, lp + 8, n);
    /* the id readable, the text not */
    t.f.hole_lo = tpa(&t, t.data + (b & (t.dsize - 1)) + 8);
    t.f.hole_hi = t.f.hole_lo + 1;
    corrupt_and_expect(&t, 1, RS_REC_BAD, "text unreadable");
    t.f.hole_lo = t.f.hole_hi = 0;
    /* text_len > block */
    {
        uint8_t big[2] = { 0xff, 0xff };
        wva(&t, iva(&t, id) + t.L.info_text_len, big, 2);
        corrupt_and_expect(&t, 1, RS_REC_BAD, "text_len > block");
        big[0] = 11;
        big[1] = 0;
        wva(&t, iva(&t, id) + t.L.info_text_len, big, 2);
    }
    /* block id mismatch */
    w64(&t, t.data + (b & (t.dsize - 1)), id + 1);
    corrupt_and_expect(&t, 1, RS_REC_BAD, "block id");
    w64(&t, t.data + (b & (t.dsize - 1)), id);
    /* descriptor id that does not index its slot */
    w64(&t, dva(&t, id) + t.L.desc_state_var, SV(id + 1, 2));
    corrupt_and_expect(&t, 1, RS_REC_BAD, "slot");
    set_state(&t, id, 2);
    /* info.seq older / newer than asked */
    w64(&t, iva(&t, id) + t.L.info_seq, 1 + 16);
    corrupt_and_expect(&t, 1, RS_REC_GONE, NULL);
    w64(&t, iva(&t, id) + t.L.info_seq, 1);
    corrupt_and_expect(&t, 1, RS_REC_OK, NULL);
    /* unreadable data page, descs page, infos page */
    t.f.hole_lo = D_DATA_OFF;
    t.f.hole_hi = D_DATA_OFF + 4096;
    corrupt_and_expect(&t, 1, RS_REC_BAD, "unreadable");
    t.f.hole_lo = D_DESCS_OFF;
    t.f.hole_hi = D_DESCS_OFF + 4096;
    corrupt_and_expect(&t, 1, RS_REC_BAD, "unreadable");
    g_assert_cmpint(rs_ring_first_seq(&t.r, &n), ==, RS_ERR_READ);
    g_assert_cmpint(rs_ring_next_seq(&t.r, &n), ==, RS_ERR_READ);
    t.f.hole_lo = D_INFOS_OFF;
    t.f.hole_hi = D_INFOS_OFF + 4096;
    corrupt_and_expect(&t, 1, RS_REC_BAD, "unreadable");
    t.f.hole_lo = t.f.hole_hi = 0;

    /* scribble over every descriptor and info: iteration stays bounded */
    {
        GRand *r = g_rand_new_with_seed(7);
        uint64_t k;
        unsigned round;

        for (round = 0; round < 200; round++) {
            for (k = 0; k < t.count * t.L.desc_size; k += 4) {
                if (g_rand_int_range(r, 0, 4) == 0) {
                    w32(&t, t.descs + k, g_rand_int(r));
                }
            }
            for (k = 0; k < t.count * t.L.info_size; k += 4) {
                if (g_rand_int_range(r, 0, 8) == 0) {
                    w32(&t, t.infos + k, g_rand_int(r));
                }
            }
            if (rs_ring_next_seq(&t.r, &n) != RS_OK) {
                n = UINT64_MAX;
            }
            rs_iter_init(&it, &t.r, g_rand_int_range(r, 0, 40), n, 64, 0);
            guard = 0;
            while (rs_iter_next(&it, &rec, buf, sizeof(buf)) < RS_IT_END) {
                g_assert_cmpint(++guard, <=, 64);
            }
        }
        g_rand_free(r);
    }
    t_free(&t);
}

static T *watched;

/* every second load of the watched state_var (the re-check) sees the
 * descriptor flip between id and id + count, same slot, still finalized */
static void flip_sv(Fake *f)
{
    uint64_t sv = pr64(f, f->watch_pa);

    if (f->watch_hits % 2 == 0) {
        pw64(f, f->watch_pa, SV((sv & ID_MASK) ^ watched->count, 2));
    }
}

static void test_iter_kept_changing(void)
{
    T t;
    Opts o = { 0 };
    rs_iter it;
    rs_record rec;
    char buf[64];
    uint64_t s;

    t_setup(&t, &o);
    t_open(&t);
    pushs(&t, "a");
    pushs(&t, "b");
    pushs(&t, "c");
    watched = &t;
    t.f.watch_pa = tpa(&t, dva(&t, shd(&t, 2)->id) + t.L.desc_state_var);
    t.f.watch = flip_sv;
    rs_iter_init(&it, &t.r, 0, UINT64_MAX, 100, 0);
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==,
                    RS_IT_RECORD);
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==,
                    RS_IT_BAD);
    g_assert_cmpuint(rec.seq, ==, 1);
    g_assert_cmpstr(rec.reason, ==, "record kept changing");
    g_assert_cmpuint(it.n_changed, ==, RS_CHANGED_TRIES);
    t.f.watch = NULL;
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==,
                    RS_IT_RECORD);
    g_assert_cmpstr(buf, ==, "c");

    /* head_id far from tail_id: next_seq falls back to probing from the
     * tail, boundedly */
    w64(&t, t.prb_va + t.L.prb_desc_ring + t.L.dr_head_id,
        t.head_id + 1000);
    g_assert_cmpint(rs_ring_next_seq(&t.r, &s), ==, RS_OK);
    g_assert_cmpuint(s, <=, 3);
    t_free(&t);
}

static void test_ring_hostile_header(void)
{
    static const struct {
        unsigned cb, sb;
        uint64_t descs, data;
    } bad[] = {
        { 63, 10, 0, 0 }, { 64, 10, 0, 0 }, { 0, 10, 0, 0 }, { 27, 10, 0, 0 },
        { 4, 64, 0, 0 }, { 4, 32, 0, 0 }, { 4, 3, 0, 0 }, { 4, 0, 0, 0 },
        { 4, 10, 0xffffffffffffff00ull, 0 }, { 4, 10, 0, UINT64_MAX - 100 },
        { 4, 10, 1, 0 }, { 0xffffffffu, 0xffffffffu, 0, 0 },
    };
    size_t k;

    for (k = 0; k < G_N_ELEMENTS(bad); k++) {
        T t;
        Opts o = { 0 };
        char err[160];
        uint64_t dr, tr;

        t_setup(&t, &o);
        t_open(&t);
        pushs(&t, "x");
        dr = t.prb_va + t.L.prb_desc_ring;
        tr = t.prb_va + t.L.prb_text_data_ring;
        w32(&t, dr + t.L.dr_count_bits, bad[k].cb);
        w32(&t, tr + t.L.data_size_bits, bad[k].sb);
        if (bad[k].descs) {
            w64(&t, dr + t.L.dr_descs, bad[k].descs == 1 ? 0 : bad[k].descs);
        }
        if (bad[k].data) {
            w64(&t, tr + t.L.data_data, bad[k].data);
        }
        g_assert_cmpint(rs_ring_open(&t.r, &t.vi, &t.vm, err, sizeof(err)),
                        ==, RS_ERR_RING);
        t_free(&t);
    }
    /* the bounds themselves are accepted (direct-map arrays: image ones
     * this large would run past 2^64, which is refused) */
    {
        T t;
        Opts o = { .dynamic = true };
        uint64_t dr, tr;

        t_setup(&t, &o);
        t_open(&t);
        dr = t.prb_va + t.L.prb_desc_ring;
        tr = t.prb_va + t.L.prb_text_data_ring;
        w32(&t, dr + t.L.dr_count_bits, RS_COUNT_BITS_MAX);
        w32(&t, tr + t.L.data_size_bits, RS_SIZE_BITS_MAX);
        g_assert_cmpint(rs_ring_open(&t.r, &t.vi, &t.vm, NULL, 0), ==, RS_OK);
        g_assert_cmpuint(t.r.count, ==, 1u << 26);
        t_free(&t);
    }
    /* prb NULL, prb unmapped, prb pointer unreadable */
    {
        T t;
        Opts o = { 0 };
        char err[160];

        t_setup(&t, &o);
        t_open(&t);
        w64(&t, PRB_SYM_VA, 0);
        g_assert_cmpint(rs_ring_open(&t.r, &t.vi, &t.vm, err, sizeof(err)),
                        ==, RS_ERR_RING);
        w64(&t, PRB_SYM_VA, t.dm + 0x10000000);
        g_assert_cmpint(rs_ring_open(&t.r, &t.vi, &t.vm, err, sizeof(err)),
                        ==, RS_ERR_XLATE);
        t.f.hole_lo = tpa(&t, PRB_SYM_VA);
        t.f.hole_hi = t.f.hole_lo + 1;
        g_assert_cmpint(rs_ring_open(&t.r, &t.vi, &t.vm, err, sizeof(err)),
                        ==, RS_ERR_READ);
        g_assert_nonnull(strstr(err, "SYMBOL(prb)"));
        t_free(&t);
    }
    /* tail descriptor never finalized: first_seq gives up */
    {
        T t;
        Opts o = { 0 };
        uint64_t s;
        rs_record rec;
        rs_iter it;

        t_setup(&t, &o);
        t_open(&t);
        pushs(&t, "x");
        set_state(&t, t.tail_id, 0);
        g_assert_cmpint(rs_ring_first_seq(&t.r, &s), ==, RS_ERR_RACE);
        /* seq 0's slot still OK; a GONE read now cannot find the tail */
        w64(&t, iva(&t, 0) + t.L.info_seq, 16);
        rs_iter_init(&it, &t.r, 0, UINT64_MAX, 10, 0);
        g_assert_cmpint(rs_iter_next(&it, &rec, NULL, 0), ==, RS_IT_BAD);
        g_assert_cmpuint(it.seq, ==, 1);
        t_free(&t);
    }
}

static void test_iter_budget(void)
{
    T t;
    Opts o = { .cb = 6, .sb = 12 };
    rs_iter it;
    rs_record rec;
    char buf[32];
    unsigned i, n = 0;
    Push failed = { .failed = true };

    t_setup(&t, &o);
    t_open(&t);
    for (i = 0; i < 40; i++) {
        push(&t, "f", 1, &failed);
    }
    pushs(&t, "last");
    rs_iter_init(&it, &t.r, 0, UINT64_MAX, 10, 0);
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==,
                    RS_IT_LIMIT);
    g_assert_cmpuint(it.seq, ==, 10);
    it.budget = 100;
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==,
                    RS_IT_RECORD);
    g_assert_cmpuint(rec.seq, ==, 40);
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==, RS_IT_END);
    /* end bound */
    rs_iter_init(&it, &t.r, 40, 40, 10, 0);
    g_assert_cmpint(rs_iter_next(&it, &rec, buf, sizeof(buf)), ==, RS_IT_END);
    (void)n;
    t_free(&t);
}

/* ---- formatting --------------------------------------------------------- */

static void fmt_is(const char *text, uint64_t ts, uint32_t caller,
                   unsigned flags, size_t limit, const char *want)
{
    rs_record rec;
    char tb[2048], out[4096];
    size_t n;

    memset(&rec, 0, sizeof(rec));
    g_assert_cmpuint(strlen(text), <, sizeof(tb));
    strcpy(tb, text);
    rec.text = tb;
    rec.text_copied = strlen(text);
    rec.ts_nsec = ts;
    rec.caller_id = caller;
    rec.level = 6;
    rec.facility = 0;
    n = rs_format(&rec, flags, limit, out, sizeof(out));
    g_assert_cmpstr(out, ==, want);
    g_assert_cmpuint(n, ==, strlen(want));
}

static void test_format(void)
{
    const unsigned T_ = RS_FMT_TIME;
    rs_record rec;
    char small[8];
    size_t n;

    fmt_is("a\nb\nc", 3726251000ull, 1, T_, 0,
           "[    3.726251] a\n[    3.726251] b\n[    3.726251] c\n");
    fmt_is("hello", 3726251999ull, 1, T_, 0, "[    3.726251] hello\n");
    fmt_is("", 0, 1, T_, 0, "[    0.000000] \n");
    fmt_is("x\n", 5, 1, T_, 0, "[    0.000000] x\n[    0.000000] \n");
    fmt_is("a\n\nb", 5, 1, T_, 0,
           "[    0.000000] a\n[    0.000000] \n[    0.000000] b\n");
    fmt_is("hello", 123456789012345678ull, 1, T_, 0,
           "[123456789.012345] hello\n");
    fmt_is("m", UINT64_MAX, 1, T_, 0, "[18446744073.709551] m\n");
    fmt_is("hello", 1, 1, 0, 0, "hello\n");
    fmt_is("a\nb", 1, 1, 0, 0, "a\nb\n");
    fmt_is("hi", 2000000000ull, 123, T_ | RS_FMT_CALLER, 0,
           "[    2.000000][  T123] hi\n");
    fmt_is("hi\nho", 2000000000ull, 0x80000001u, T_ | RS_FMT_CALLER, 0,
           "[    2.000000][    C1] hi\n[    2.000000][    C1] ho\n");
    fmt_is("hi", 0, 1234567, RS_FMT_CALLER, 0, "[T1234567] hi\n");
    fmt_is("hi", 0, 5, RS_FMT_SYSLOG, 0, "<6>hi\n");
    fmt_is("hi", 1000, 5, RS_FMT_SYSLOG | T_, 0, "<6>[    0.000001] hi\n");
    /* console buffer rules (record_print_text): prefix 15 bytes */
    fmt_is("aaaa\nbbbb\ncccc", 0, 1, T_, 40, "[    0.000000] aaaa\n");
    fmt_is("aaaa\nbbbb\ncccc", 0, 1, T_, 41,
           "[    0.000000] aaaa\n[    0.000000] bbbb\n");
    fmt_is("aaaa\nbbbb\ncccc", 0, 1, T_, 55,
           "[    0.000000] aaaa\n[    0.000000] bbbb\n");
    fmt_is("aaaa\nbbbb\ncccc", 0, 1, T_, 62,
           "[    0.000000] aaaa\n[    0.000000] bbbb\n[    0.000000] cccc\n");
    fmt_is("aaaa\nbbbb\ncccc", 0, 1, T_, 1024,
           "[    0.000000] aaaa\n[    0.000000] bbbb\n[    0.000000] cccc\n");
    fmt_is("a long line", 0, 1, T_, 20, "");
    fmt_is("a long line", 0, 1, 0, 8, "");
    fmt_is("abc", 0, 1, 0, 5, "abc\n");
    fmt_is("abcdef", 0, 1, 0, 5, "");
    /* text cut to limit first: "ab\ncd" with limit 4 -> "ab\n" */
    fmt_is("ab\ncdefgh", 0, 1, 0, 4, "ab\n");
    /* the cut-off remainder "c" (no newline left) is dropped */
    fmt_is("ab\ncdefgh", 0, 1, 0, 6, "ab\n");
    /* kernel quirk: after the first cut only limit - 2 bytes of text are
     * kept, so "cd" loses its newline and is dropped although it fits */
    fmt_is("ab\ncd\nef", 0, 1, 0, 7, "ab\n");
    fmt_is("ab\ncd\nef", 0, 1, 0, 9, "ab\ncd\n");
    /* snprintf semantics */
    memset(&rec, 0, sizeof(rec));
    rec.text = (char *)"hello world";
    rec.text_copied = 11;
    n = rs_format(&rec, RS_FMT_TIME, 0, small, sizeof(small));
    g_assert_cmpuint(n, ==, 15 + 12);
    g_assert_cmpstr(small, ==, "[    0.");
    g_assert_cmpuint(rs_format(&rec, RS_FMT_TIME, 0, NULL, 0), ==, 27);
    g_assert_cmpuint(rs_format(NULL, 0, 0, small, sizeof(small)), ==, 0);
    rec.text = NULL;
    g_assert_cmpuint(rs_format(&rec, 0, 0, small, sizeof(small)), ==, 1);
    g_assert_cmpstr(small, ==, "\n");
}

static void test_format_ring(void)
{
    T t;
    Opts o = { .dynamic = true, .l5 = true };
    rs_record rec;
    char buf[256], out[512];
    Push p = { .ts = 3726251000ull, .level = 3 };

    t_setup(&t, &o);
    t_open(&t);
    push(&t, "a\nb\nc", 5, &p);
    g_assert_cmpint(rd(&t, 0, &rec, buf, sizeof(buf)), ==, RS_REC_OK);
    rs_format(&rec, RS_FMT_TIME, RS_CONSOLE_LOG_MAX, out, sizeof(out));
    g_assert_cmpstr(out, ==,
                    "[    3.726251] a\n[    3.726251] b\n[    3.726251] c\n");
    t_free(&t);
}

static rs_console_notice notice(const char *line, uint64_t *count)
{
    return rs_parse_console_notice((const uint8_t *)line, strlen(line),
                                   count);
}

/* The start of a notice the guest stopped in, and what is not one. */
static void test_console_notice_cut(void)
{
    static const struct {
        const char *line;
        rs_console_notice want;
    } cases[] = {
        { "** 2044 ", RS_NOTICE_DROPPED },
        { "** 2", RS_NOTICE_DROPPED },
        { "** 12 printk messages dr", RS_NOTICE_DROPPED },
        { "** 12 printk messages dropped **", RS_NOTICE_DROPPED },
        { "** r", RS_NOTICE_REPLAYING },
        { "** replaying previous", RS_NOTICE_REPLAYING },
        { "** replaying previous printk message **", RS_NOTICE_REPLAYING },
        { "** ", RS_NOTICE_NONE },              /* too little to say */
        { "**", RS_NOTICE_NONE },
        { "** 0", RS_NOTICE_NONE },             /* %lu of a count > 0 */
        { "** 12 printk messages dropped **x", RS_NOTICE_NONE },
        { "** 12x", RS_NOTICE_NONE },
        { "** replaying next", RS_NOTICE_NONE },
        { "** 123456789012345678901", RS_NOTICE_NONE },
        { "*** boot ok", RS_NOTICE_NONE },
        { "[    1.000000] ** 12", RS_NOTICE_NONE },
    };
    size_t i;

    for (i = 0; i < G_N_ELEMENTS(cases); i++) {
        rs_console_notice k =
            rs_console_notice_cut((const uint8_t *)cases[i].line,
                                  strlen(cases[i].line));

        if (k != cases[i].want) {
            g_test_message("\"%s\": %s, want %s", cases[i].line,
                           rs_console_notice_name(k),
                           rs_console_notice_name(cases[i].want));
        }
        g_assert_cmpint(k, ==, cases[i].want);
    }
    g_assert_cmpint(rs_console_notice_cut(NULL, 8), ==, RS_NOTICE_NONE);
}

static void test_console_notice(void)
{
    static const struct {
        const char *line;
        rs_console_notice want;
        uint64_t count;
    } cases[] = {
        /* the kernel's own lines, as printk.c / core.c format them */
        { "** 1 printk messages dropped **", RS_NOTICE_DROPPED, 1 },
        { "** 181950 printk messages dropped **", RS_NOTICE_DROPPED, 181950 },
        { "** 18446744073709551615 printk messages dropped **",
          RS_NOTICE_DROPPED, UINT64_MAX },
        { "** replaying previous printk message **", RS_NOTICE_REPLAYING, 0 },
        { "perf: interrupt took too long (2502 > 2500), lowering "
          "kernel.perf_event_max_sample_rate to 79750",
          RS_NOTICE_PERF_EARLY, 79750 },
        { "perf: interrupt took too long (-1 > 0), lowering "
          "kernel.perf_event_max_sample_rate to -5", RS_NOTICE_PERF_EARLY, 0 },
        /* near misses */
        { "", RS_NOTICE_NONE, 0 },
        { "**", RS_NOTICE_NONE, 0 },
        { "** ", RS_NOTICE_NONE, 0 },
        { "** 0 printk messages dropped **", RS_NOTICE_NONE, 0 },
        { "** 012 printk messages dropped **", RS_NOTICE_NONE, 0 },
        { "** -3 printk messages dropped **", RS_NOTICE_NONE, 0 },
        { "** 18446744073709551616 printk messages dropped **",
          RS_NOTICE_NONE, 0 },
        { "** 123456789012345678901 printk messages dropped **",
          RS_NOTICE_NONE, 0 },
        { "**  5 printk messages dropped **", RS_NOTICE_NONE, 0 },
        { "** 5 printk messages dropped", RS_NOTICE_NONE, 0 },
        { "** 5 printk messages dropped **\r", RS_NOTICE_NONE, 0 },
        { "** 5 printk messages dropped ** ", RS_NOTICE_NONE, 0 },
        { " ** 5 printk messages dropped **", RS_NOTICE_NONE, 0 },
        { "[    1.000000] ** 5 printk messages dropped **", RS_NOTICE_NONE, 0 },
        { "** replaying previous printk message", RS_NOTICE_NONE, 0 },
        { "** replaying previous printk message **x", RS_NOTICE_NONE, 0 },
        { "** replaying previous printk messages **", RS_NOTICE_NONE, 0 },
        { "perf: interrupt took too long (2502 > 2500), lowering "
          "kernel.perf_event_max_sample_rate to", RS_NOTICE_NONE, 0 },
        { "perf: interrupt took too long (2502 > 2500), lowering "
          "kernel.perf_event_max_sample_rate to 79750.", RS_NOTICE_NONE, 0 },
        { "perf: interrupt took too long (x > 2500), lowering "
          "kernel.perf_event_max_sample_rate to 79750", RS_NOTICE_NONE, 0 },
        { "[    5.100000] perf: interrupt took too long (2502 > 2500), "
          "lowering kernel.perf_event_max_sample_rate to 79750",
          RS_NOTICE_NONE, 0 },
    };
    size_t i;

    for (i = 0; i < G_N_ELEMENTS(cases); i++) {
        uint64_t c = 12345, d = 777;
        rs_console_notice k = notice(cases[i].line, &c);
        bool dropped;

        if (k != cases[i].want) {
            g_error("\"%s\": got %s, want %s", cases[i].line,
                    rs_console_notice_name(k),
                    rs_console_notice_name(cases[i].want));
        }
        g_assert_cmpuint(c, ==, cases[i].count);
        g_assert_cmpint(notice(cases[i].line, NULL), ==, k);
        /* the older entry point agrees, and leaves count alone on a miss */
        dropped = rs_parse_dropped_notice((const uint8_t *)cases[i].line,
                                          strlen(cases[i].line), &d);
        g_assert_cmpint(dropped, ==, k == RS_NOTICE_DROPPED);
        g_assert_cmpuint(d, ==, dropped ? cases[i].count : 777);
    }
    /* bounded by n, not by a terminator: a notice inside a longer buffer */
    {
        static const char buf[] = "** 7 printk messages dropped **\r\n[  1";
        uint64_t c;

        g_assert_cmpint(rs_parse_console_notice((const uint8_t *)buf, 31, &c),
                        ==, RS_NOTICE_DROPPED);
        g_assert_cmpuint(c, ==, 7);
        g_assert_cmpint(rs_parse_console_notice((const uint8_t *)buf, 30, &c),
                        ==, RS_NOTICE_NONE);
        g_assert_cmpint(rs_parse_console_notice(NULL, 0, &c), ==,
                        RS_NOTICE_NONE);
    }
    g_assert_cmpstr(rs_console_notice_name(RS_NOTICE_REPLAYING), ==,
                    "replaying");
    g_assert_cmpstr(rs_console_notice_name((rs_console_notice)99), ==, "?");
}

static void test_strerror(void)
{
    int e;

    for (e = 0; e <= RS_ERR_RACE + 1; e++) {
        g_assert_nonnull(rs_strerror(e));
    }
    g_assert_cmpstr(rs_rec_status_name(RS_REC_CHANGED), ==, "changed");
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ring/vmci/parse", test_vmci_parse);
    g_test_add_func("/ring/vmci/missing", test_vmci_missing);
    g_test_add_func("/ring/vmci/old-kernel", test_vmci_old_kernel);
    g_test_add_func("/ring/vmci/truncated", test_vmci_truncated);
    g_test_add_func("/ring/vmci/hostile", test_vmci_hostile);
    g_test_add_func("/ring/note/find", test_note_find);
    g_test_add_func("/ring/note/scan", test_note_scan);
    g_test_add_func("/ring/xlate/walk", test_xlate);
    g_test_add_func("/ring/xlate/hostile", test_xlate_hostile);
    g_test_add_func("/ring/read/simple", test_ring_simple);
    g_test_add_func("/ring/read/wrap", test_ring_wrap);
    g_test_add_func("/ring/read/wrap-exact-old", test_ring_wrap_exact_old);
    g_test_add_func("/ring/read/wrap-exact-619", test_ring_wrap_exact_619);
    g_test_add_func("/ring/read/flags", test_ring_flags);
    g_test_add_func("/ring/console/filter", test_console_filter);
    g_test_add_func("/ring/read/dataless", test_ring_dataless);
    g_test_add_func("/ring/read/reusable", test_ring_reusable);
    g_test_add_func("/ring/read/overwritten", test_ring_overwritten);
    g_test_add_func("/ring/read/committed", test_ring_committed);
    g_test_add_func("/ring/read/changing", test_ring_changing);
    g_test_add_func("/ring/iter/changing", test_iter_changing);
    g_test_add_func("/ring/iter/budget", test_iter_budget);
    g_test_add_func("/ring/iter/kept-changing", test_iter_kept_changing);
    g_test_add_func("/ring/hostile/blocks", test_ring_hostile_blocks);
    g_test_add_func("/ring/hostile/header", test_ring_hostile_header);
    g_test_add_func("/ring/format/kernel", test_format);
    g_test_add_func("/ring/format/ring", test_format_ring);
    g_test_add_func("/ring/console/notice", test_console_notice);
    g_test_add_func("/ring/console/notice-cut", test_console_notice_cut);
    g_test_add_func("/ring/strerror", test_strerror);
    return g_test_run();
}
