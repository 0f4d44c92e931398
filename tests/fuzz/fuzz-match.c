/*
 * fuzz-match.c: libFuzzer target for the level-0 matcher
 * (hw/char/rslib-match.[ch]) over the fake guest of fuzz-guest.h.
 *
 * The matcher judges console bytes against the ring it reads through the
 * guest-memory callback.  An input is a configuration byte and then a
 * program of operations: raw console bytes, a ring record printed as the
 * console prints it (whole, cut, with a byte changed, or torn by another
 * record), the kernel's dropped notice, records appended to the ring while
 * it is read, patches to guest memory (now, or at the Nth read to play a
 * concurrent writer), and attach (with the backlog replay), detach, resume
 * and finish, with or without the device's read budget.  Every call into
 * the matcher must stay within the read bounds of fuzz-guest.h and leave
 * its buffers' lengths in range; every verdict reported must be well
 * formed.
 * Out-of-bounds accesses and UB are found by ASan/UBSan.
 *
 * Input: [cfg u8] then ops [op u8][arguments].  cfg bits 0-1: console
 * prefix (time; time+caller; syslog+time; none), bit 2: the dynamic ring,
 * bits 3-6: loglevel (0: inferred), bit 7: attach before the first byte.
 */
#include "fuzz-guest.h"
#include "rslib-match.h"

static fg_base base;
static fg_guest g;
static rs_match m;
static rs_ring ring;
static rs_vmci vmci;

static const unsigned fmts[4] = {
    RS_FMT_TIME, RS_FMT_TIME | RS_FMT_CALLER, RS_FMT_SYSLOG | RS_FMT_TIME, 0
};

typedef struct run {
    fg_in in;
    fg_ring wr;                 /* the ring appended to */
    unsigned fmt;
    uint64_t index;             /* console byte index */
    int64_t vt;
    bool have_ring;             /* ring opened */
    bool attached;
    uint64_t seq_base;          /* the ring's first seq, at the start */
} run;

FG_HARNESS
static void on_report(void *opaque, const rs_verdict_info *vi)
{
    (void)opaque;
#ifdef FUZZ_VERBOSE             /* to see what seeds reach */
    fprintf(stderr, "%s seq %llu len %u\n", rs_verdict_name(vi->verdict),
            (unsigned long long)vi->seq, vi->len);
#endif
    fg_check((unsigned)vi->verdict < RS_V_COUNT);
    fg_check(vi->verdict < RS_V_MISSING || vi->count >= 1);
    fg_check(vi->len <= RS_MATCH_LINE_MAX || vi->verdict == RS_V_UNMATCHED ||
             vi->verdict == RS_V_UNCHECKED || vi->verdict == RS_V_USER);
    fg_check(vi->at >= -1 && vi->want >= -1 && vi->want <= 255 &&
             vi->got >= -1 && vi->got <= 255);
    /* a line found torn, then judged unchecked when the ring was distrusted
     * while judging it, keeps its second record */
    fg_check(!vi->has_seq2 || vi->verdict == RS_V_TORN ||
             vi->verdict == RS_V_UNCHECKED);
    /* only user space's stamped lines are vouched for, or ambiguous */
    fg_check((unsigned)vi->why < RS_WHY_COUNT);
    fg_check(vi->why == RS_WHY_NONE ||
             (vi->verdict == RS_V_USER) ==
             (vi->why == RS_WHY_VOUCHED || vi->why == RS_WHY_AMBIGUOUS));
    fg_check(vi->why == RS_WHY_NONE || vi->verdict == RS_V_USER ||
             vi->verdict == RS_V_UNMATCHED);
}

FG_HARNESS
static void on_untrusted(void *opaque, const char *reason)
{
    (void)opaque;
#ifdef FUZZ_VERBOSE
    fprintf(stderr, "untrusted: %s\n", reason);
#endif
    fg_check(reason != NULL);
}

typedef struct call {
    uint64_t reads, refused;
} call;

/* A call into the matcher begins: a register access's or a tick's budget. */
FG_HARNESS
static call before_call(bool tick)
{
    call c = { g.reads, g.refused };

    fg_call_begin(&g, tick ? FUZZ_TICK_READS : FUZZ_ACCESS_READS);
    return c;
}

/* Reads the call made (lines: it replayed), and the state it must leave. */
FG_HARNESS
static void after_call(call c, uint64_t lines)
{
    fg_call_end(&g, c.reads, c.refused, lines);
    fg_check(m.len <= RS_MATCH_LINE_MAX);
    fg_check(m.backlog_len <= RS_MATCH_BACKLOG);
    fg_check(m.resid_len <= RS_MATCH_LINE_MAX);
    fg_check(m.rec_len <= sizeof(m.rec) && m.rec_off <= m.rec_len);
}

static void feed(run *r, const uint8_t *b, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        call c = before_call(false);

        r->vt += 86805;         /* a byte at 115200 baud */
        rs_match_byte(&m, b[i], r->index++, r->vt);
        after_call(c, 1);
    }
}

/* Lines in the backlog: each may cost a line's reads in the replay. */
static uint64_t backlog_lines(void)
{
    uint64_t n = 0;
    size_t i;

    for (i = 0; i < m.backlog_len; i++) {
        n += m.backlog[i] == '\n';
    }
    return n + m.backlog_len / 36 + 1;
}

static void attach(run *r)
{
    uint64_t lines;
    call c;

    if (!r->have_ring) {
        r->have_ring = fg_open(&g, base.text, base.text_len, &vmci, &ring);
        if (!r->have_ring) {
            return;
        }
    }
    lines = backlog_lines();
    c = before_call(true);      /* the device attaches on a tick */
    rs_match_attach(&m, &ring);
    after_call(c, lines);
    r->attached = true;
}

static size_t console(run *r, unsigned k, uint8_t *out, size_t cap)
{
    if (!r->have_ring) {
        r->have_ring = fg_open(&g, base.text, base.text_len, &vmci, &ring);
    }
    /* the reads to print are the guest's, not the matcher's */
    return r->have_ring ?
           fg_console_text(&ring, r->seq_base + (k & 63), r->fmt, out, cap) :
           0;
}

static void step(run *r)
{
    static uint8_t a[2 * RS_CONSOLE_TEXT_MAX + 8],
        b[2 * RS_CONSOLE_TEXT_MAX + 8];
    const uint8_t *p;
    unsigned op, k, k2, v;
    size_t n, n2, at;
    uint64_t lines;
    call c;

    if (!fg_take8(&r->in, &op)) {
        return;
    }
    switch (op % 15) {
    case 0:                     /* raw bytes */
        if (fg_take8(&r->in, &v)) {
            n = fg_take_upto(&r->in, v, &p);
            feed(r, p, n);
        }
        break;
    case 1:                     /* a record, whole */
        if (fg_take8(&r->in, &k)) {
            n = console(r, k, a, sizeof(a));
            feed(r, a, n);
        }
        break;
    case 2:                     /* a record cut at a byte */
        if (fg_take8(&r->in, &k) && fg_take8(&r->in, &v)) {
            n = console(r, k, a, sizeof(a));
            feed(r, a, n ? v % n : 0);
        }
        break;
    case 3:                     /* a record with a byte changed */
        if (fg_take8(&r->in, &k) && fg_take8(&r->in, &v) && fg_take(&r->in, 1, &p)) {
            n = console(r, k, a, sizeof(a));
            if (n) {
                a[v % n] = p[0];
            }
            feed(r, a, n);
        }
        break;
    case 4:                     /* torn: another record inside one */
        if (fg_take8(&r->in, &k) && fg_take8(&r->in, &k2) && fg_take8(&r->in, &v)) {
            n = console(r, k, a, sizeof(a));
            n2 = console(r, k2, b, sizeof(b));
            at = n ? v % n : 0;
            feed(r, a, at);
            feed(r, b, n2);
            feed(r, a + at, n - at);
        }
        break;
    case 5:                     /* the kernel's dropped notice */
        if (fg_take8(&r->in, &v)) {
            n = (size_t)snprintf((char *)a, sizeof(a),
                                 "** %u printk messages dropped **\r\n", v);
            feed(r, a, n);
        }
        break;
    case 6:                     /* a record appended to the ring */
        fg_op_push(&r->in, g.mem, &r->wr);
        break;
    case 7:                     /* guest memory patched now */
    case 8:                     /* ... or at a later read */
        fg_op_patch(&r->in, &g, op % 15 == 8);
        break;
    case 9:
        attach(r);
        break;
    case 10:
        c = before_call(false);
        rs_match_detach(&m);
        after_call(c, 1);
        r->attached = false;
        break;
    case 11:                    /* resume where the (migrated) state is */
        if (r->have_ring) {
            c = before_call(true);
            rs_match_resume(&m, &ring);
            after_call(c, 1);
        }
        break;
    case 12:                    /* the guest stops */
        lines = backlog_lines() + 1;
        c = before_call(true);
        r->vt += 1000000;
        rs_match_finish(&m, r->vt);
        after_call(c, lines);
        break;
    case 13:                    /* time passes */
        if (fg_take8(&r->in, &v)) {
            r->vt += (int64_t)v << 24;
        }
        break;
    case 14:                    /* the device's read budget on or off */
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
    r.seq_base = 0;
    r.vt = 1000000000;
    rs_match_init(&m, (int)((cfg >> 3) & 15) % 9, on_report, on_untrusted,
                  NULL);
    if (cfg & 128) {
        attach(&r);
    }
    while (r.in.n && steps++ < 4096) {
        step(&r);
    }
    return 0;
}
