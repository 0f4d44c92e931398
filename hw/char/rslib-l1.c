/*
 * rslib-l1.c: judge console records bracketed by a cooperating kernel
 * (level 1).  See rslib-l1.h.
 *
 * Everything the guest hands us is hostile: seqs are reconstructed within
 * 2^31 of where the console is, skipped stretches are read at most
 * RS_L1_SKIP_READS records deep, bracket bytes beyond RS_L1_TEXT are only
 * counted, and vCPU numbers and nesting depths are bounded.
 *
 * Copyright (c) 2026 The ringside authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifdef RINGSIDE_IN_QEMU
#include "qemu/osdep.h"
#endif
#include <stddef.h>
#include <string.h>
#include "rslib-l1.h"

void rs_l1_init(rs_l1 *l, int loglevel, rs_l1_bracket_fn on_bracket,
                rs_l1_record_fn on_record, void *opaque)
{
    memset(l, 0, sizeof(*l));
    l->loglevel = loglevel;
    l->on_bracket = on_bracket;
    l->on_record = on_record;
    l->opaque = opaque;
    rs_levels_reset(l->level_seq);
}

void rs_l1_attach(rs_l1 *l, const rs_ring *ring)
{
    l->ring = ring;
    l->distrusted = false;
}

void rs_l1_distrust(rs_l1 *l)
{
    l->ring = NULL;
    l->distrusted = true;
}

void rs_l1_restart(rs_l1 *l)
{
    memset(l->partial_seq, 0, sizeof(l->partial_seq));
    memset(l->window, 0, sizeof(l->window));
    l->started = false;
    l->next = 0;
    rs_levels_reset(l->level_seq);
    l->dropped_credit = 0;
    l->replay = false;
}

void rs_l1_reset(rs_l1 *l)
{
    memset(l->depth, 0, sizeof(l->depth));
    rs_l1_restart(l);
}

bool rs_l1_busy(const rs_l1 *l)
{
    int c;

    for (c = 0; c < RS_L1_SLOTS; c++) {
        if (l->depth[c]) {
            return true;
        }
    }
    return false;
}

/* Writers: slot 0 for accesses not made by a vCPU, cpu + 1 for vCPUs. */
static int slot_of(int cpu)
{
    return cpu >= -1 && cpu < RS_L1_SLOTS - 1 ? cpu + 1 : -1;
}

static rs_l1_frame *frame(rs_l1 *l, int slot, int d)
{
    return &l->frames[slot * RS_L1_DEPTH + d];
}

/* The seq nearest ref whose low 32 bits are lo. */
static uint64_t seq_near(uint64_t ref, uint32_t lo)
{
    return ref + (uint64_t)(int64_t)(int32_t)(lo - (uint32_t)ref);
}

static uint64_t seq_ref(rs_l1 *l)
{
    uint64_t next = 0;

    if (l->started) {
        return l->next;
    }
    if (l->ring && rs_ring_next_seq(l->ring, &next) == RS_OK) {
        return next;
    }
    return 0;
}

/* ---- records: verdicts, merged into runs ---- */

typedef struct run {
    rs_l1_record_info ri;
    bool open;
} run;

static void run_flush(rs_l1 *l, run *r)
{
    if (r->open && l->on_record) {
        l->on_record(l->opaque, &r->ri);
    }
    r->open = false;
}

static void run_add(rs_l1 *l, run *r, rs_l1_record_verdict v, uint64_t seq,
                    uint64_t count, int level)
{
    if (!count) {
        return;
    }
    l->records[v] += count;
    if (v == RS_R_DELIVERED) {
        return;                 /* counted only */
    }
    if (r->open && r->ri.verdict == v && r->ri.seq + r->ri.count == seq) {
        r->ri.count += count;
        if (r->ri.level != level) {
            r->ri.level = -1;
        }
        return;
    }
    run_flush(l, r);
    r->ri.verdict = v;
    r->ri.seq = seq;
    r->ri.count = count;
    r->ri.level = level;
    r->open = true;
}

static void window_set(rs_l1 *l, uint64_t seq, rs_l1_record_verdict v)
{
    l->window[seq % RS_L1_WINDOW] = (uint8_t)(v + 1);
}

static int partial_of(rs_l1 *l, uint64_t seq)
{
    unsigned slot = seq % RS_L1_PARTIAL;

    return l->partial_seq[slot] == seq + 1 ? l->partial_kind[slot] : -1;
}

/*
 * The record's text is no longer in the ring: its slot was reused (GONE) or
 * its data block given up (NODATA), as a storm does to records all the
 * time.
 */
static bool text_gone(rs_rec_status st)
{
    return st == RS_REC_GONE || st == RS_REC_NODATA;
}

/* Judge one record the console went past without printing it whole. */
static void judge_skipped_one(rs_l1 *l, run *r, uint64_t seq, uint64_t first)
{
    rs_record rec;
    rs_l1_record_verdict v;
    int level = -1;
    int kind = partial_of(l, seq);
    rs_rec_status st = RS_REC_GONE;
    bool unread = false;

    if ((kind < 0 || (kind == RS_R_CUT && l->dropped_credit)) &&
        seq >= first) {
        st = rs_ring_read_settled(l->ring, seq, &rec, NULL, 0);
        unread = rs_ring_budget_out(l->ring);
        if (unread && !l->dropped_credit) {
            l->under_budget++;  /* not read: not judged, nobody blamed */
            return;
        }
    }
    if (kind == RS_R_CUT && l->dropped_credit && !unread &&
        (seq < first || text_gone(st))) {
        /*
         * Cut by a takeover, then overwritten before the new owner could
         * print it again: the new owner's dropped count includes it.
         */
        v = RS_R_DROPPED;
    } else if (kind >= 0) {
        v = kind;
    } else if (unread) {
        v = RS_R_DROPPED;       /* unread, but the kernel's word covers it */
    } else if (seq < first || text_gone(st) || st == RS_REC_CHANGED) {
        /*
         * Overwritten before this judgement (or being overwritten while
         * read).  Unless the kernel owned up to dropping it, its console
         * went past it while it was there (a console that falls behind
         * the ring says so on the next record it prints): it was below
         * the console loglevel then.
         */
        v = l->dropped_credit ? RS_R_DROPPED : RS_R_FILTERED;
    } else if (st != RS_REC_OK) {
        /*
         * Not finalized (or unreadable), so its level is unknown.  A
         * panicking CPU goes past records other CPUs have not finished
         * and counts them in its dropped notice; without that word the
         * console skipped it.
         */
        v = l->dropped_credit ? RS_R_DROPPED : RS_R_MISSING;
    } else {
        level = rec.level;
        v = rs_console_filtered_flags(l->loglevel, l->level_seq, level,
                                      rec.flags, seq) ?
            RS_R_FILTERED : RS_R_MISSING;
    }
    if (v == RS_R_DROPPED) {
        l->dropped_credit--;
    }
    window_set(l, seq, v);
    run_add(l, r, v, seq, 1, level);
}

/*
 * Judge [seq, to) in one go, unread: the kernel's word first, then
 * @otherwise.
 */
static void judge_bulk(rs_l1 *l, run *r, uint64_t seq, uint64_t to,
                       rs_l1_record_verdict otherwise)
{
    uint64_t rest = to - seq, d, s;

    d = rest < l->dropped_credit ? rest : l->dropped_credit;
    l->dropped_credit -= d;
    run_add(l, r, RS_R_DROPPED, seq, d, -1);
    run_add(l, r, otherwise, seq + d, rest - d, -1);
    for (s = to - (rest < RS_L1_WINDOW ? rest : RS_L1_WINDOW); s < to; s++) {
        window_set(l, s, s < seq + d ? RS_R_DROPPED : otherwise);
    }
}

/* The console went from seq from to seq to without printing these. */
static void judge_skipped(rs_l1 *l, uint64_t from, uint64_t to)
{
    uint64_t first = 0, seq, gone_to, n;
    run r = { .open = false };

    if (to <= from || !l->ring) {
        return;
    }
    if (rs_ring_first_seq(l->ring, &first) != RS_OK) {
        first = 0;
    }
    /* Gone from the ring: judged without reading (judge_skipped_one). */
    gone_to = first > from ? (first < to ? first : to) : from;
    for (seq = from; seq < gone_to && seq - from < RS_L1_SKIP_READS; seq++) {
        judge_skipped_one(l, &r, seq, first);
    }
    if (seq < gone_to) {
        judge_bulk(l, &r, seq, gone_to, RS_R_FILTERED);
        seq = gone_to;
    }
    /* Still there: read for their level, up to the budget. */
    for (n = 0; seq < to && n < RS_L1_SKIP_READS; seq++, n++) {
        if (rs_ring_budget_out(l->ring)) {
            /*
             * The reader's budget is spent: the kernel's word accounts for
             * what it can (a credit left standing would call records
             * dropped later that were not), the rest are not judged.
             */
            uint64_t d = to - seq < l->dropped_credit ?
                         to - seq : l->dropped_credit;

            judge_bulk(l, &r, seq, seq + d, RS_R_DROPPED);
            l->under_budget += to - seq - d;
            seq = to;
            break;
        }
        judge_skipped_one(l, &r, seq, first);
    }
    /* Beyond the read budget: the kernel's word, then missing, unread. */
    if (seq < to) {
        judge_bulk(l, &r, seq, to, RS_R_MISSING);
    }
    run_flush(l, &r);
}

static void start_at(rs_l1 *l, uint64_t seq)
{
    if (!l->started) {
        l->started = true;
        l->next = seq;
    }
}

/* Record seq, with printk_info flags rflags, reached the wire whole. */
static void deliver(rs_l1 *l, uint64_t seq, int level, unsigned rflags)
{
    run r = { .open = false };
    bool replay = l->replay;
    uint8_t w;

    l->replay = false;
    start_at(l, seq);
    if (seq >= l->next) {
        judge_skipped(l, l->next, seq);
        l->next = seq + 1;
    } else if (l->next - seq <= RS_L1_WINDOW &&
               (w = l->window[seq % RS_L1_WINDOW]) &&
               w != RS_R_DELIVERED + 1) {
        /* judged not printed before it came: it was late, not lost */
        if (l->records[w - 1]) {
            l->records[w - 1]--;
        }
    } else if (replay) {
        return;                 /* the copy the kernel said it prints again */
    } else {
        run_add(l, &r, RS_R_DUPLICATE, seq, 1, level);
        run_flush(l, &r);
        return;
    }
    window_set(l, seq, RS_R_DELIVERED);
    run_add(l, &r, RS_R_DELIVERED, seq, 1, level);
    rs_levels_printed_flags(l->level_seq, level, rflags, seq);
}

/* Only part of record seq, or a damaged copy, reached the wire. */
static void deliver_partial(rs_l1 *l, uint64_t seq, rs_l1_record_verdict kind)
{
    unsigned slot = seq % RS_L1_PARTIAL;

    start_at(l, seq);
    if (seq >= l->next) {
        l->partial_seq[slot] = seq + 1;
        l->partial_kind[slot] = kind;
    }
}

/* ---- brackets ---- */

static bool text_is(const rs_l1_frame *f, const char *s)
{
    size_t n = strlen(s);

    return f->len == n && !memcmp(f->text, s, n);
}

/*
 * Compare f's bytes with the record's console text in every prefix format,
 * the one that matched last first.  Sets the verdict and, if corrupt, where.
 */
static void compare(rs_l1 *l, const rs_l1_frame *f, bool cr_end,
                    const rs_record *rec, rs_l1_bracket_info *bi)
{
    char want[RS_CONSOLE_TEXT_MAX + 1];
    uint32_t best = 0;
    size_t best_len = 0;
    int best_want = -1;
    unsigned i;

    for (i = 0; i < 8; i++) {
        unsigned flags = i ? (l->fmt_flags + i) % 8 : l->fmt_flags;
        size_t n = rs_format(rec, flags, rs_ring_console_max(l->ring),
                             want, sizeof(want));
        uint32_t cp;

        n = n < sizeof(want) - 1 ? n : sizeof(want) - 1;
        cp = rs_common_prefix(f->text, f->len, want, n);
        if (cp == f->len && cp == n && !f->overlong) {
            l->fmt_flags = flags;
            bi->verdict = RS_B_OK;
            return;
        }
        if (cp > best || i == 0) {
            best = cp;
            best_len = n;
            best_want = cp < n ? (uint8_t)want[cp] : -1;
        }
    }
    if (best == f->len && best < best_len && !f->overlong) {
        bi->verdict = RS_B_CUT;
        return;
    }
    if (cr_end && !f->overlong && best < f->len &&
        rs_cut_at_crlf(best, f->len, f->text[best], best_want)) {
        bi->verdict = RS_B_CUT;
        return;
    }
    bi->verdict = RS_B_CORRUPT;
    bi->at = best;
    bi->want = best_want;
    bi->got = best < f->len ? f->text[best] : -1;
}

static void judge_frame(rs_l1 *l, int cpu, rs_l1_frame *f, bool open)
{
    rs_l1_bracket_info bi = {
        .seq = f->seq, .cpu = cpu, .first = f->first, .last = f->last,
        .has_bytes = f->nbytes != 0, .vt = f->vt, .open = open,
        .nested = f->nested, .taken = f->by_cpu != RS_L1_NOBODY,
        .by_seq = f->by_seq, .by_cpu = f->by_cpu,
        .at = -1, .want = -1, .got = -1,
    };
    char text[RS_CONSOLE_TEXT_MAX];
    rs_record rec;
    uint64_t count;
    unsigned rflags = 0;
    int level = -1;
    rs_console_notice notice = RS_NOTICE_NONE;
    bool cr_end = f->cr && f->len < RS_L1_TEXT;

    if (cr_end) {
        f->text[f->len++] = '\r';   /* a CR no LF followed */
        f->cr = 0;
    }
    bi.len = f->len;
    if (f->len == 0 && !f->overlong && !open && !bi.taken) {
        return;                 /* wrote nothing, and was not stopped */
    } else if (text_is(f, "\n")) {
        return;                 /* the line break before a takeover's text */
    } else if (l->distrusted) {
        /*
         * Level 0 distrusts the ring: nothing is judged against it, nor
         * from the bytes alone (a cut, a notice's count), since the
         * position they would move is forgotten when a ring comes back.
         */
        bi.verdict = RS_B_UNCHECKED;
        bi.why = RS_L1_WHY_UNTRUSTED;
        l->untrusted++;
    } else if (f->len == 0 && !f->overlong) {
        bi.verdict = RS_B_CUT;
    } else if (f->len > 1 && f->text[f->len - 1] == '\n' && !f->overlong &&
               (notice = rs_parse_console_notice(f->text, f->len - 1,
                                                 &count)) != RS_NOTICE_NONE) {
        /* a takeover's replay notice: the record follows again, whole */
        bi.verdict = RS_B_NOTICE;
        bi.count = count;
        if (notice == RS_NOTICE_DROPPED) {
            l->dropped_credit += count;
        }
        l->replay |= notice == RS_NOTICE_REPLAYING;
    } else if (!f->overlong && f->text[f->len - 1] != '\n' &&
               rs_console_notice_cut(f->text, f->len -
                                     (f->text[f->len - 1] == '\r')) !=
               RS_NOTICE_NONE) {
        /*
         * The start of a notice whose writer was stopped: no record's
         * text, and the new owner writes the notice again whole (its
         * count is credited then).
         */
        bi.verdict = RS_B_NOTICE;
    } else if (!l->ring) {
        bi.verdict = RS_B_UNCHECKED;
        bi.why = RS_L1_WHY_NO_RING;
    } else {
        rs_rec_status st = rs_ring_read_settled(l->ring, f->seq, &rec, text,
                                                sizeof(text));
        uint64_t head = 0;

        if (st == RS_REC_OK) {
            level = rec.level;
            rflags = rec.flags;
            compare(l, f, cr_end, &rec, &bi);
        } else if (rs_ring_budget_out(l->ring)) {
            bi.verdict = RS_B_UNCHECKED;    /* not read: not judged */
            bi.why = RS_L1_WHY_BUDGET;
            l->under_budget++;
        } else if (text_gone(st) ||
                   (st == RS_REC_NOT_YET &&
                    rs_ring_next_seq(l->ring, &head) == RS_OK &&
                    f->seq < head)) {
            /* a newer record is being stored in its slot */
            bi.verdict = RS_B_OVERWRITTEN;
        } else {
            bi.verdict = RS_B_BOGUS;
        }
    }

    if (bi.verdict == RS_B_OK && bi.has_bytes &&
        f->last - f->first + 1 != f->nbytes) {
        bi.verdict = RS_B_TORN;
    }
    l->brackets[bi.verdict]++;
    if (l->on_bracket) {
        l->on_bracket(l->opaque, &bi);
    }

    switch (bi.verdict) {
    case RS_B_OK:
    case RS_B_TORN:
        deliver(l, f->seq, level, rflags);
        break;
    case RS_B_OVERWRITTEN:
        /*
         * Gone before it could be compared: whole, as far as anyone can
         * tell, unless it was taken over; then the new owner's account
         * (a replay, or a dropped count) stands for it.
         */
        if (!bi.taken) {
            deliver(l, f->seq, -1, 0);
        }
        break;
    case RS_B_CUT:
        deliver_partial(l, f->seq, RS_R_CUT);
        break;
    case RS_B_CORRUPT:
        deliver_partial(l, f->seq, RS_R_DAMAGED);
        break;
    case RS_B_UNCHECKED:
        /*
         * Printed while there was no (trusted) ring: what it skipped goes
         * unjudged.
         */
        if (l->started && f->seq >= l->next) {
            l->next = f->seq + 1;
        }
        break;
    default:
        break;
    }
}

/* A byte outside any bracket, which reached the wire. */
static void user_byte(rs_l1 *l, uint8_t byte)
{
    l->user_open = byte != '\n';
    l->user_lines += byte == '\n';
}

/* A kernel record begins, or the guest stopped: a prompt's line ends. */
static void user_break(rs_l1 *l)
{
    l->user_lines += l->user_open;
    l->user_open = false;
}

bool rs_l1_begin(rs_l1 *l, int cpu, uint32_t seq_lo, int64_t vt)
{
    int slot = slot_of(cpu);
    rs_l1_frame *f;
    uint64_t seq;
    int c;

    if (slot < 0 || l->depth[slot] >= RS_L1_DEPTH) {
        return false;
    }
    seq = seq_near(seq_ref(l), seq_lo);
    user_break(l);
    if (l->depth[slot]) {
        frame(l, slot, l->depth[slot] - 1)->nested = 1;
    }
    /* Another writer in the middle of a record: this one took over. */
    for (c = 0; c < RS_L1_SLOTS; c++) {
        rs_l1_frame *o;

        if (c == slot || !l->depth[c]) {
            continue;
        }
        o = frame(l, c, l->depth[c] - 1);
        if (o->by_cpu == RS_L1_NOBODY) {
            o->by_cpu = cpu;
            o->by_seq = seq;
            l->takeovers++;
        }
    }
    f = frame(l, slot, l->depth[slot]++);
    memset(f, 0, offsetof(rs_l1_frame, text));
    f->seq = seq;
    f->vt = vt;
    f->by_cpu = RS_L1_NOBODY;
    return true;
}

void rs_l1_end(rs_l1 *l, int cpu, int64_t vt)
{
    int slot = slot_of(cpu);
    rs_l1_frame *f;

    if (slot < 0 || !l->depth[slot]) {
        return;
    }
    f = frame(l, slot, --l->depth[slot]);
    f->vt = vt;
    judge_frame(l, cpu, f, false);
}

bool rs_l1_byte(rs_l1 *l, int cpu, uint8_t byte, uint64_t index, bool lost)
{
    int slot = slot_of(cpu);
    rs_l1_frame *f;

    if (slot < 0 || !l->depth[slot]) {
        l->unattributed++;
        if (!lost) {
            user_byte(l, byte);
        }
        return false;
    }
    f = frame(l, slot, l->depth[slot] - 1);
    if (!f->nbytes) {
        f->first = index;
    }
    f->last = index;
    f->nbytes++;
    if (lost) {
        f->lost = 1;            /* judged as what reached the wire */
        return true;
    }
    /* The driver sends "\r\n" for "\n": hold a CR until we see which. */
    if (f->cr && byte != '\n') {
        if (f->len < RS_L1_TEXT) {
            f->text[f->len++] = '\r';
        } else {
            f->overlong = 1;
        }
    }
    f->cr = byte == '\r';
    if (f->cr) {
        return true;
    }
    if (f->len < RS_L1_TEXT) {
        f->text[f->len++] = byte;
    } else {
        f->overlong = 1;
    }
    return true;
}

void rs_l1_finish(rs_l1 *l)
{
    uint64_t next = 0;
    int c;

    user_break(l);
    for (c = 0; c < RS_L1_SLOTS; c++) {
        while (l->depth[c]) {
            --l->depth[c];
            judge_frame(l, c - 1, frame(l, c, l->depth[c]), true);
        }
    }
    if (l->started && l->ring && rs_ring_next_seq(l->ring, &next) == RS_OK &&
        next > l->next) {
        judge_skipped(l, l->next, next);
        l->next = next;
    }
}

/*
 * Could a device have saved this state?  Checks every field a migration
 * stream sets that is used as an index, a length or an enum, so that a
 * crafted stream cannot make the code above index out of its arrays.
 * Counters and seqs may hold any value.  why: the field at fault.
 */
bool rs_l1_state_ok(const rs_l1 *l, const char **why)
{
    const char *bad = NULL;
    int i;

    for (i = 0; i < RS_L1_SLOTS * RS_L1_DEPTH && !bad; i++) {
        const rs_l1_frame *f = &l->frames[i];

        if (f->len > RS_L1_TEXT) {
            bad = "l1.frames[].len: longer than the frame's text";
        } else if (f->overlong > 1 || f->cr > 1 || f->nested > 1 ||
                   f->lost > 1) {
            bad = "l1.frames[]: a flag is neither 0 nor 1";
        } else if (f->overlong && f->len != RS_L1_TEXT) {
            bad = "l1.frames[].overlong: set with room left in the text";
        } else if (f->by_cpu != RS_L1_NOBODY &&
                   (f->by_cpu < -1 || f->by_cpu >= RS_L1_SLOTS - 1)) {
            bad = "l1.frames[].by_cpu: not a writer";
        } else if (f->nbytes && f->last < f->first) {
            bad = "l1.frames[].last: before its first byte";
        }
    }
    for (i = 0; i < RS_L1_SLOTS && !bad; i++) {
        if (l->depth[i] > RS_L1_DEPTH) {
            bad = "l1.depth[]: deeper than RS_L1_DEPTH";
        }
    }
    for (i = 0; i < RS_L1_PARTIAL && !bad; i++) {
        uint64_t seq1 = l->partial_seq[i];

        if (l->partial_kind[i] >= RS_R_COUNT) {
            bad = "l1.partial_kind[]: not a record verdict";
        } else if (seq1 && l->partial_kind[i] != RS_R_CUT &&
                   l->partial_kind[i] != RS_R_DAMAGED) {
            bad = "l1.partial_kind[]: neither cut nor damaged";
        } else if (seq1 && (seq1 - 1) % RS_L1_PARTIAL != (uint64_t)i) {
            bad = "l1.partial_seq[]: in another record's slot";
        }
    }
    for (i = 0; i < RS_L1_WINDOW && !bad; i++) {
        if (l->window[i] > RS_R_COUNT) {
            bad = "l1.window[]: not a record verdict";
        }
    }
    if (!bad &&
        (l->fmt_flags & ~(RS_FMT_TIME | RS_FMT_CALLER | RS_FMT_SYSLOG))) {
        bad = "l1.fmt_flags: not a prefix format";
    }
    if (!bad && l->untrusted > l->brackets[RS_B_UNCHECKED]) {
        bad = "l1.untrusted: more than the unchecked brackets";
    }
    if (bad && why) {
        *why = bad;
    }
    return !bad;
}
