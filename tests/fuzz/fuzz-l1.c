/*
 * fuzz-l1.c: libFuzzer target for level 1 (hw/char/rslib-l1.[ch]) over
 * the fake guest of fuzz-guest.h.
 *
 * Level 1 gets begin(seq)/end markers and console bytes, each from a vCPU,
 * and judges every bracket and every record skipped between brackets
 * against the ring it reads through the guest-memory callback.  An input
 * is a configuration byte and then a program of operations: markers and
 * bytes from any writer (vCPU numbers out of range too), a record printed
 * in its bracket (whole, cut with the bracket left open, with a byte
 * changed, or with another writer's bracket nested inside or taking over),
 * the dropped notice in a bracket, records appended to the ring while it
 * is read, patches to guest memory (now, or at the Nth read), attaching
 * the ring or none, reset and finish, with or without the device's read
 * budget.  Every call must stay within the read bounds of fuzz-guest.h and leave the state within its arrays; every
 * verdict reported must be well formed.
 *
 * Input: [cfg u8] then ops [op u8][arguments].  cfg bits 0-1: console
 * prefix (time; time+caller; syslog+time; none), bit 2: the dynamic ring,
 * bits 3-6: loglevel (0: inferred), bit 7: attach the ring at the start.
 * A writer byte w is vCPU (w % 20) - 1 (-1 .. 18; 16 and up have no
 * slot); its bit 7 marks bytes lost on the wire.
 */
#include "fuzz-guest.h"
#include "rslib-l1.h"

static fg_base base;
static fg_guest g;
static rs_l1 l1;
static rs_ring ring;
static rs_vmci vmci;

static const unsigned fmts[4] = {
    RS_FMT_TIME, RS_FMT_TIME | RS_FMT_CALLER, RS_FMT_SYSLOG | RS_FMT_TIME, 0
};

typedef struct run {
    fg_in in;
    fg_ring wr;
    unsigned fmt;
    uint64_t index;
    int64_t vt;
    bool have_ring;
} run;

FG_HARNESS
static void on_bracket(void *opaque, const rs_l1_bracket_info *bi)
{
    (void)opaque;
#ifdef FUZZ_VERBOSE             /* to see what seeds reach */
    fprintf(stderr, "bracket %s seq %llu cpu %d\n",
            rs_l1_bracket_name(bi->verdict), (unsigned long long)bi->seq,
            bi->cpu);
#endif
    fg_check((unsigned)bi->verdict < RS_B_COUNT);
    fg_check(bi->cpu >= -1 && bi->cpu < RS_L1_SLOTS - 1);
    fg_check(bi->len <= RS_L1_TEXT + 1);
    fg_check(bi->at >= -1 && bi->want >= -1 && bi->want <= 255 &&
             bi->got >= -1 && bi->got <= 255);
    fg_check(!bi->has_bytes || bi->first <= bi->last);
    fg_check(!bi->taken || bi->by_cpu != RS_L1_NOBODY);
}

FG_HARNESS
static void on_record(void *opaque, const rs_l1_record_info *ri)
{
    (void)opaque;
#ifdef FUZZ_VERBOSE
    fprintf(stderr, "record %s seq %llu count %llu\n",
            rs_l1_record_name(ri->verdict), (unsigned long long)ri->seq,
            (unsigned long long)ri->count);
#endif
    fg_check((unsigned)ri->verdict < RS_R_COUNT);
    fg_check(ri->verdict != RS_R_DELIVERED && ri->count >= 1);
    fg_check(ri->level >= -1 && ri->level < RS_LEVELS);
}

typedef struct call {
    uint64_t reads, refused;
} call;

/* A call into level 1 begins: a register access's or a tick's budget. */
FG_HARNESS
static call before_call(bool tick)
{
    call c = { g.reads, g.refused };

    fg_call_begin(&g, tick ? FUZZ_TICK_READS : FUZZ_ACCESS_READS);
    return c;
}

/* Reads the call made, and the state it must leave. */
FG_HARNESS
static void after_call(call c)
{
    int i;

    fg_call_end(&g, c.reads, c.refused, 1);
    for (i = 0; i < RS_L1_SLOTS; i++) {
        fg_check(l1.depth[i] <= RS_L1_DEPTH);
    }
    for (i = 0; i < RS_L1_SLOTS * RS_L1_DEPTH; i++) {
        fg_check(l1.frames[i].len <= RS_L1_TEXT);
    }
    for (i = 0; i < RS_L1_PARTIAL; i++) {
        fg_check(!l1.partial_seq[i] || l1.partial_kind[i] == RS_R_CUT ||
                 l1.partial_kind[i] == RS_R_DAMAGED);
    }
    for (i = 0; i < RS_L1_WINDOW; i++) {
        fg_check(l1.window[i] <= RS_R_COUNT);
    }
}

static int cpu_of(unsigned w)
{
    return (int)((w & 127) % 20) - 1;
}

static void begin(run *r, int cpu, uint32_t seq_lo)
{
    call c = before_call(false);

    r->vt += 1000;
    (void)rs_l1_begin(&l1, cpu, seq_lo, r->vt);
    after_call(c);
}

static void end(run *r, int cpu)
{
    call c = before_call(false);

    r->vt += 1000;
    rs_l1_end(&l1, cpu, r->vt);
    after_call(c);
}

static void bytes(run *r, int cpu, const uint8_t *b, size_t n, bool lost)
{
    size_t i;

    for (i = 0; i < n; i++) {
        call c = before_call(false);

        (void)rs_l1_byte(&l1, cpu, b[i], r->index++, lost);
        after_call(c);
    }
}

/* Record k's console text (the reads to print it are the guest's). */
static size_t console(run *r, unsigned k, uint8_t *out, size_t cap)
{
    if (!r->have_ring) {
        r->have_ring = fg_open(&g, base.text, base.text_len, &vmci, &ring);
    }
    return r->have_ring ?
           fg_console_text(&ring, k & 63, r->fmt, out, cap) : 0;
}

static void step(run *r)
{
    static uint8_t a[2 * RS_CONSOLE_TEXT_MAX + 8],
        b[2 * RS_CONSOLE_TEXT_MAX + 8];
    const uint8_t *p;
    unsigned op, w, w2, k, k2, v;
    size_t n, n2, at;
    call c;

    if (!fg_take8(&r->in, &op)) {
        return;
    }
    switch (op % 16) {
    case 0:                     /* begin: a seq near the ring's, or any */
        if (fg_take8(&r->in, &w) && fg_take8(&r->in, &k)) {
            uint32_t lo = k & 63;

            if (k & 128 && fg_take(&r->in, 4, &p)) {
                lo = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
                     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
            }
            begin(r, cpu_of(w), lo);
        }
        break;
    case 1:
        if (fg_take8(&r->in, &w)) {
            end(r, cpu_of(w));
        }
        break;
    case 2:                     /* bytes */
        if (fg_take8(&r->in, &w) && fg_take8(&r->in, &v)) {
            n = fg_take_upto(&r->in, v, &p);
            bytes(r, cpu_of(w), p, n, w & 128);
        }
        break;
    case 3:                     /* a record in its bracket */
        if (fg_take8(&r->in, &w) && fg_take8(&r->in, &k)) {
            n = console(r, k, a, sizeof(a));
            begin(r, cpu_of(w), k & 63);
            bytes(r, cpu_of(w), a, n, w & 128);
            end(r, cpu_of(w));
        }
        break;
    case 4:                     /* cut: the bracket stays open */
        if (fg_take8(&r->in, &w) && fg_take8(&r->in, &k) &&
            fg_take8(&r->in, &v)) {
            n = console(r, k, a, sizeof(a));
            begin(r, cpu_of(w), k & 63);
            bytes(r, cpu_of(w), a, n ? v % n : 0, w & 128);
        }
        break;
    case 5:                     /* a byte changed */
        if (fg_take8(&r->in, &w) && fg_take8(&r->in, &k) &&
            fg_take8(&r->in, &v) && fg_take(&r->in, 1, &p)) {
            n = console(r, k, a, sizeof(a));
            if (n) {
                a[v % n] = p[0];
            }
            begin(r, cpu_of(w), k & 63);
            bytes(r, cpu_of(w), a, n, false);
            end(r, cpu_of(w));
        }
        break;
    case 6:                     /* another bracket inside: nested or
                                 * taken over (another writer) */
        if (fg_take8(&r->in, &w) && fg_take8(&r->in, &k) &&
            fg_take8(&r->in, &w2) && fg_take8(&r->in, &k2) &&
            fg_take8(&r->in, &v)) {
            n = console(r, k, a, sizeof(a));
            n2 = console(r, k2, b, sizeof(b));
            at = n ? v % n : 0;
            begin(r, cpu_of(w), k & 63);
            bytes(r, cpu_of(w), a, at, false);
            begin(r, cpu_of(w2), k2 & 63);
            bytes(r, cpu_of(w2), b, n2, false);
            end(r, cpu_of(w2));
            bytes(r, cpu_of(w), a + at, n - at, false);
            if (!(v & 1)) {
                end(r, cpu_of(w));
            }
        }
        break;
    case 7:                     /* the dropped notice, in a bracket */
        if (fg_take8(&r->in, &w) && fg_take8(&r->in, &k) &&
            fg_take8(&r->in, &v)) {
            n = (size_t)snprintf((char *)a, sizeof(a),
                                 k & 64 ? "** replaying previous printk "
                                          "message **\r\n"
                                        : "** %u printk messages dropped "
                                          "**\r\n", v);
            begin(r, cpu_of(w), k & 63);
            bytes(r, cpu_of(w), a, n, false);
            end(r, cpu_of(w));
        }
        break;
    case 8:
        fg_op_push(&r->in, g.mem, &r->wr);
        break;
    case 9:
    case 10:
        fg_op_patch(&r->in, &g, op % 16 == 10);
        break;
    case 11:                    /* the ring found, or lost */
        if (fg_take8(&r->in, &v)) {
            if (!r->have_ring) {
                r->have_ring = fg_open(&g, base.text, base.text_len, &vmci,
                                       &ring);
            }
            rs_l1_attach(&l1, v & 1 && r->have_ring ? &ring : NULL);
        }
        break;
    case 12:                    /* a new boot */
        c = before_call(true);
        rs_l1_reset(&l1);
        after_call(c);
        break;
    case 13:                    /* the guest stops */
        c = before_call(true);
        rs_l1_finish(&l1);
        after_call(c);
        fg_check(!rs_l1_busy(&l1));
        break;
    case 14:                    /* time passes */
        if (fg_take8(&r->in, &v)) {
            r->vt += (int64_t)v << 24;
        }
        break;
    case 15:                    /* the device's read budget on or off */
        g.budgeted = !g.budgeted;
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run r;
    unsigned cfg, steps = 0;

    if (size < 1) {
        return 0;
    }
    memset(&r, 0, sizeof(r));
    cfg = data[0];
    r.in.p = data + 1;
    r.in.n = size - 1;
    fg_start(&base, &g, cfg & 4);
    r.fmt = fmts[cfg & 3];
    r.wr = base.rings[(cfg >> 2) & 1];
    r.wr.move_tail = true;
    r.vt = 1000000000;
    rs_l1_init(&l1, (int)((cfg >> 3) & 15) % 9, on_bracket, on_record, NULL);
    if (cfg & 128) {
        r.have_ring = fg_open(&g, base.text, base.text_len, &vmci, &ring);
        rs_l1_attach(&l1, r.have_ring ? &ring : NULL);
    }
    while (r.in.n && steps++ < 4096) {
        step(&r);
    }
    return 0;
}
