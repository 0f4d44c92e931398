/*
 * fuzz-state.c: libFuzzer target for the migration validators of the
 * matcher and of level 1 (rs_match_state_ok(), rs_l1_state_ok()), which
 * the device's post_load calls on a state read from a migration stream.
 *
 * A state the validator accepts must be safe to go on from, whatever its
 * values.  Each input first drives the matcher or level 1 over the fake
 * guest of fuzz-guest.h to a state it really reaches (records printed
 * whole, cut, corrupt or torn; brackets on several vCPUs, nested, left
 * open), and checks that the validator accepts it: a state the device
 * saved must load.  Then it changes migrated fields as a crafted stream
 * would (a table of every field the device's vmstate carries, set to any
 * value of its type; bytes of the migrated arrays), runs the validator,
 * and if it accepts, does what the device does after loading (the ring
 * pointer reset, checking resumed) and goes on: more console bytes and
 * markers, the backlog replayed, the guest stopping.  ASan/UBSan and the
 * read bounds of fuzz-guest.h find what an accepted state makes go wrong.
 *
 * Input: [cfg u8][n u8: steps to drive][steps: (kind u8, k u8, x u8)]
 *        [changes: (0: field u8, index u8, value u64) | (1: offset u24,
 *        len u8, bytes) | 2: done] then the rest as later steps.
 * cfg bit 0: level 1 (else the matcher), bit 1: a ring after loading,
 * bit 2: the read budget on after loading, bit 3: attach (replay) rather
 * than resume.
 */
#include <stddef.h>

#include "fuzz-guest.h"
#include "rslib-l1.h"
#include "rslib-match.h"

static fg_base base;
static fg_guest g;
static rs_match m;
static rs_l1 l1;
static rs_ring ring;
static rs_vmci vmci;
static bool have_ring;
static uint64_t index_;
static int64_t vt;

/* A migrated field: where, how big, how big one element is. */
typedef struct field {
    size_t off, size, elem;
} field;

#define FM(f)  { offsetof(rs_match, f), sizeof(((rs_match *)0)->f), \
                 sizeof(((rs_match *)0)->f) }
#define FMA(f) { offsetof(rs_match, f), sizeof(((rs_match *)0)->f), \
                 sizeof(((rs_match *)0)->f[0]) }
#define FL(f)  { offsetof(rs_l1, f), sizeof(((rs_l1 *)0)->f), \
                 sizeof(((rs_l1 *)0)->f) }
#define FLA(f) { offsetof(rs_l1, f), sizeof(((rs_l1 *)0)->f), \
                 sizeof(((rs_l1 *)0)->f[0]) }
#define FF(f)  { offsetof(rs_l1_frame, f), sizeof(((rs_l1_frame *)0)->f), \
                 sizeof(((rs_l1_frame *)0)->f) }

/* vmstate_ringside_verify's match fields (ringside-serial-verify.c) */
static const field match_fields[] = {
    FMA(line), FM(len), FM(overlong), FM(cr), FM(first), FM(started),
    FM(cursor), FMA(level_seq), FM(have_fmt), FM(fmt_flags),
    FM(dropped_credit), FM(gone_credit), FMA(window), FM(unmatched_run),
    FM(in_rec), FM(rec_seq), FM(rec_ts), FMA(rec), FM(rec_len), FM(rec_off),
    FMA(resid), FM(resid_len), FM(resid_seq), FMA(backlog), FM(backlog_len),
    FMA(counts), FMA(hist), FM(vt_first), FM(have_offset), FM(clock_offset),
    FM(lat_min), FM(lat_max), FM(lat_n), FM(lat_negative), FM(replay),
    FM(replay_seq),
};

/* vmstate_ringside_ext's l1 fields (ringside-serial-ext.c) */
static const field l1_fields[] = {
    FLA(depth), FL(started), FL(next), FLA(level_seq), FL(fmt_flags),
    FL(dropped_credit), FLA(partial_seq), FLA(partial_kind), FLA(window),
    FLA(brackets), FLA(records), FL(takeovers), FL(unattributed),
    FL(user_lines), FL(user_open),
};

/* vmstate_rs_l1_frame, for each of l1.frames[] */
static const field frame_fields[] = {
    FF(seq), FF(first), FF(last), FF(nbytes), FF(vt), FF(by_seq),
    FF(by_cpu), FF(len), FF(cr), FF(overlong), FF(nested), FF(lost),
    FF(text),
};

/* Migrated byte arrays a raw patch may hit (no bools: a stream's are 0/1) */
static const field match_bytes[] = {
    FMA(line), FMA(window), FMA(rec), FMA(resid), FMA(backlog),
};

FG_HARNESS
static void on_report(void *opaque, const rs_verdict_info *vi)
{
    (void)opaque;
    fg_check((unsigned)vi->verdict < RS_V_COUNT);
    fg_check(vi->at >= -1 && vi->want >= -1 && vi->want <= 255 &&
             vi->got >= -1 && vi->got <= 255);
}

FG_HARNESS
static void on_untrusted(void *opaque, const char *reason)
{
    (void)opaque;
    fg_check(reason != NULL);
}

FG_HARNESS
static void on_bracket(void *opaque, const rs_l1_bracket_info *bi)
{
    (void)opaque;
    fg_check((unsigned)bi->verdict < RS_B_COUNT);
    fg_check(bi->len <= RS_L1_TEXT + 1);
}

FG_HARNESS
static void on_record(void *opaque, const rs_l1_record_info *ri)
{
    (void)opaque;
    fg_check((unsigned)ri->verdict < RS_R_COUNT);
    fg_check(ri->level >= -1 && ri->level < RS_LEVELS);
}

typedef struct call {
    uint64_t reads, refused;
} call;

FG_HARNESS
static call before_call(bool tick)
{
    call c = { g.reads, g.refused };

    fg_call_begin(&g, tick ? FUZZ_TICK_READS : FUZZ_ACCESS_READS);
    return c;
}

FG_HARNESS
static void after_call(call c, uint64_t lines)
{
    fg_call_end(&g, c.reads, c.refused, lines);
}

static uint64_t backlog_lines(void)
{
    uint64_t n = 0;
    size_t i;

    for (i = 0; i < m.backlog_len && i < sizeof(m.backlog); i++) {
        n += m.backlog[i] == '\n';
    }
    return n + m.backlog_len / 36 + 1;
}

static size_t console(unsigned k, unsigned fmt, uint8_t *out, size_t cap)
{
    return have_ring ? fg_console_text(&ring, k & 63, fmt, out, cap) : 0;
}

static void match_bytes_in(const uint8_t *b, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        call c = before_call(false);

        vt += 86805;
        rs_match_byte(&m, b[i], index_++, vt);
        after_call(c, 1);
    }
}

static void l1_call(int kind, int cpu, uint32_t seq, const uint8_t *b,
                    size_t n)
{
    call c = before_call(kind == 3);
    size_t i;

    vt += 1000;
    switch (kind) {
    case 0:
        (void)rs_l1_begin(&l1, cpu, seq, vt);
        break;
    case 1:
        rs_l1_end(&l1, cpu, vt);
        break;
    case 2:
        for (i = 0; i < n; i++) {
            (void)rs_l1_byte(&l1, cpu, b[i], index_++, false);
        }
        break;
    default:
        rs_l1_finish(&l1);
        break;
    }
    after_call(c, 1);
}

/*
 * One step: record k printed (x: how), as the console and level 1 see it.
 * kind 0: whole; 1: cut at x; 2: byte x changed; 3: torn by record x;
 * 4: raw byte x; 5: the guest stops.
 */
static void step(bool is_l1, unsigned kind, unsigned k, unsigned x)
{
    static uint8_t a[2 * RS_CONSOLE_TEXT_MAX + 8],
        b[2 * RS_CONSOLE_TEXT_MAX + 8];
    unsigned fmt = x & 64 ? RS_FMT_TIME | RS_FMT_CALLER : RS_FMT_TIME;
    int cpu = (int)(k >> 6) - 1;    /* -1 .. 2 */
    size_t n = console(k, fmt, a, sizeof(a)), n2, at = n ? x % n : 0;
    uint8_t byte = (uint8_t)x;

    switch (kind % 6) {
    case 0:
    case 1:
    case 2:
        if (kind % 6 == 1) {
            n = at;
        } else if (kind % 6 == 2 && n) {
            a[at] ^= 0x20;
        }
        if (is_l1) {
            l1_call(0, cpu, k & 63, NULL, 0);
            l1_call(2, cpu, 0, a, n);
            if (kind % 6 != 1) {
                l1_call(1, cpu, 0, NULL, 0);
            }
        } else {
            match_bytes_in(a, n);
        }
        break;
    case 3:
        n2 = console(x, fmt, b, sizeof(b));
        if (is_l1) {
            l1_call(0, cpu, k & 63, NULL, 0);
            l1_call(2, cpu, 0, a, at);
            l1_call(0, cpu + 1, x & 63, NULL, 0);
            l1_call(2, cpu + 1, 0, b, n2);
            l1_call(1, cpu + 1, 0, NULL, 0);
            l1_call(2, cpu, 0, a + at, n - at);
            l1_call(1, cpu, 0, NULL, 0);
        } else {
            match_bytes_in(a, at);
            match_bytes_in(b, n2);
            match_bytes_in(a + at, n - at);
        }
        break;
    case 4:
        if (is_l1) {
            l1_call(2, cpu, 0, &byte, 1);
        } else {
            match_bytes_in(&byte, 1);
        }
        break;
    default:
        if (is_l1) {
            l1_call(3, 0, 0, NULL, 0);
        } else {
            uint64_t lines = backlog_lines() + 1;
            call c = before_call(true);

            rs_match_finish(&m, vt += 1000000);
            after_call(c, lines);
        }
        break;
    }
}

static void set_field(uint8_t *st, const field *f, unsigned idx,
                      const uint8_t *v)
{
    size_t at = f->off + (f->elem < f->size ? (idx % (f->size / f->elem)) *
                                              f->elem : 0);
    size_t w = f->elem < 8 ? f->elem : 8;

    memcpy(st + at, v, w);      /* little-endian host: the low bytes */
}

/* bools a stream holds as 0 or 1 (VMSTATE_BOOL) */
static void fix_bools(bool is_l1)
{
    if (is_l1) {
        l1.started = *(volatile uint8_t *)&l1.started & 1;
        l1.user_open = *(volatile uint8_t *)&l1.user_open & 1;
    } else {
        m.overlong = *(volatile uint8_t *)&m.overlong & 1;
        m.cr = *(volatile uint8_t *)&m.cr & 1;
        m.started = *(volatile uint8_t *)&m.started & 1;
        m.have_fmt = *(volatile uint8_t *)&m.have_fmt & 1;
        m.in_rec = *(volatile uint8_t *)&m.in_rec & 1;
        m.have_offset = *(volatile uint8_t *)&m.have_offset & 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fg_in in;
    const uint8_t *p;
    const char *why = NULL;
    unsigned cfg, n, i, op;
    bool is_l1, ok;

    in.p = data;
    in.n = size;
    if (!fg_take8(&in, &cfg) || !fg_take8(&in, &n)) {
        return 0;
    }
    is_l1 = cfg & 1;
    fg_start(&base, &g, true);
    have_ring = fg_open(&g, base.text, base.text_len, &vmci, &ring);
    index_ = 0;
    vt = 1000000000;

    /* a state the device reaches ... */
    if (is_l1) {
        rs_l1_init(&l1, 0, on_bracket, on_record, NULL);
        rs_l1_attach(&l1, have_ring ? &ring : NULL);
    } else {
        rs_match_init(&m, 0, on_report, on_untrusted, NULL);
        if (n & 128 && have_ring) {
            rs_match_attach(&m, &ring);
        }
    }
    for (i = 0; i < (n & 63) && fg_take(&in, 3, &p); i++) {
        step(is_l1, p[0], p[1], p[2]);
    }
    if (!is_l1) {
        rs_match_flush(&m);     /* what the device's pre_save does */
    }
    /* ... and saves must load */
    ok = is_l1 ? rs_l1_state_ok(&l1, &why) : rs_match_state_ok(&m, &why);
    fg_check(ok);

    /* a crafted stream */
    while (fg_take8(&in, &op) && op % 3 != 2) {
        uint8_t *st = is_l1 ? (uint8_t *)&l1 : (uint8_t *)&m;

        if (op % 3 == 0 && fg_take(&in, 10, &p)) {
            const field *f;

            if (is_l1 && p[0] & 128) {
                /* a field of one of the frames */
                f = &frame_fields[p[0] % (sizeof(frame_fields) /
                                          sizeof(frame_fields[0]))];
                set_field((uint8_t *)&l1.frames[p[1] % (RS_L1_SLOTS *
                                                        RS_L1_DEPTH)],
                          f, p[1], p + 2);
            } else if (is_l1) {
                f = &l1_fields[p[0] % (sizeof(l1_fields) /
                                       sizeof(l1_fields[0]))];
                set_field(st, f, p[1], p + 2);
            } else {
                f = &match_fields[p[0] % (sizeof(match_fields) /
                                          sizeof(match_fields[0]))];
                set_field(st, f, p[1], p + 2);
            }
        } else if (op % 3 == 1 && fg_take(&in, 4, &p)) {
            const uint8_t *d;
            size_t len, at;
            uint32_t off = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
                           (uint32_t)p[2] << 16;

            len = fg_take_upto(&in, p[3], &d);
            if (is_l1) {
                rs_l1_frame *fr = &l1.frames[off % (RS_L1_SLOTS *
                                                    RS_L1_DEPTH)];

                at = (off >> 7) % RS_L1_TEXT;
                for (i = 0; i < len && at + i < RS_L1_TEXT; i++) {
                    fr->text[at + i] = d[i];
                }
            } else {
                const field *f = &match_bytes[off % 5];

                at = (off >> 3) % f->size;
                for (i = 0; i < len && at + i < f->size; i++) {
                    st[f->off + at + i] = d[i];
                }
            }
        }
    }
    fix_bools(is_l1);
    why = NULL;
    ok = is_l1 ? rs_l1_state_ok(&l1, &why) : rs_match_state_ok(&m, &why);
    if (!ok) {
        fg_check(why != NULL);
        return 0;
    }

    /* loaded: what the device does after post_load, then go on */
    g.budgeted = cfg & 4;
    if (is_l1) {
        rs_l1_attach(&l1, cfg & 2 && have_ring ? &ring : NULL);
    } else {
        m.ring = NULL;
        m.held = false;
        if (cfg & 2 && have_ring) {
            uint64_t lines = backlog_lines();
            call c = before_call(true);

            if (cfg & 8) {
                rs_match_attach(&m, &ring);
            } else {
                rs_match_resume(&m, &ring);
            }
            after_call(c, lines);
        }
    }
    while (fg_take(&in, 3, &p)) {
        step(is_l1, p[0], p[1], p[2]);
    }
    step(is_l1, 5, 0, 0);
    return 0;
}
