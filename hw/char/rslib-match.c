/*
 * rslib-match.c: judge console lines against the printk ring.
 *
 * How a 6.1 console prints (kernel/printk/printk.c): console_emit_next_record()
 * reads finalized records in seq order from con->seq, skips those with
 * level >= console_loglevel, formats the rest with record_print_text() (the
 * same prefix on every line of a multi-line record) into a CONSOLE_LOG_MAX
 * buffer, and writes it; records overwritten before the console got to them
 * are announced by one "** N printk messages dropped **\n" write.  The 8250
 * console turns each '\n' into "\r\n".
 *
 * A line is looked for first where the console should be (the cursor), then
 * by its printed timestamp (a binary search of the ring), else in a window
 * around the cursor.  Lines that match nothing exactly are tested for being
 * two records interleaved ("torn") and for being a damaged copy of the
 * record they claim to be ("corrupt").
 *
 * Everything read from the ring is guest-controlled: lengths are clamped to
 * our buffers, every loop has a fixed bound, and a record that breaks the
 * ring's invariants makes the whole ring untrusted.
 */
#ifdef RINGSIDE_IN_QEMU
#include "qemu/osdep.h"
#endif
#include <string.h>

#include "rslib-match.h"

#define NO_SEQ          UINT64_MAX
#define FAST_STEPS      64      /* records stepped over from the cursor */
#define NEAR            64      /* window searched without timestamps */
#define TS_PROBES       64      /* binary search steps */
#define TS_SCAN         256     /* records compared around the ts found */
#define TS_CANDS        8
#define TORN_MAX        512     /* longest line tested for tearing */
#define EMBED_MAX       4       /* timestamps looked up inside one line */
#define NEAR_COPIES     4       /* records an unprefixed line is held to */
#define BL_HDR          36      /* backlog entry header */
#define VOUCH_READS     256     /* records read to vouch for a stamp */
#define VOUCH_SKEW_US   50000   /* CPUs' clocks may differ this much */

/* window[] slots: class in the low nibble, level + 1 in the high one */
enum { W_NONE, W_SEEN, W_MISSING, W_FILTERED, W_DROPPED };

/* A line to judge. */
typedef struct line {
    const uint8_t *b;
    uint32_t n;
    uint64_t first, last;
    int64_t vt_first, vt;
    bool partial;               /* cut off by the guest stopping */
    bool split;                 /* the end of a wire line user space began */
    /* its prefix */
    unsigned flags;
    bool has_ts;
    uint64_t ts_us;
    uint32_t body;
} line;

/* A record as the console would print it. */
typedef struct cand {
    uint64_t seq;
    uint64_t id;                /* descriptor id */
    uint64_t ts_nsec;
    int level;
    unsigned rflags;            /* the record's printk_info flags */
    char out[RS_CONSOLE_TEXT_MAX];
    uint32_t len;               /* all lines, with their '\n' */
    uint32_t l1;                /* first line, without '\n' */
} cand;

static void emit(rs_match *m, const rs_verdict_info *vi)
{
    rs_verdict v = vi->verdict;

    m->counts[v] += v >= RS_V_MISSING && vi->count ? vi->count : 1;
    if (m->report) {
        m->report(m->opaque, vi);
    }
}

/*
 * An nbcon console that takes over from a context that had begun a record
 * ends the line there ("\n"), writes "** replaying previous printk message
 * **" and prints the record again whole (6.12: nbcon.c:1010-1018).  The
 * line before the notice, cut or whole, is then the kernel's redundant
 * copy, not damage or a duplicate.  A line cut short of a record (CORRUPT,
 * the line ended first) is held back until the next line says which.  So
 * is one cut between the "\r" and the "\n" the driver sends for a record's
 * "\n": its last byte is that CR, where the record has the LF.
 */
enum { REPLAY_NONE, REPLAY_AFTER_CUT, REPLAY_AFTER_WHOLE };

static bool cut_short(const rs_verdict_info *vi)
{
    return vi->got < 0 || rs_cut_at_crlf(vi->at, vi->len, vi->got, vi->want);
}

static void report(rs_match *m, rs_verdict v, rs_verdict_info *vi)
{
    vi->verdict = v;
    /*
     * An unmatched line is held too: in a storm the record a takeover cut
     * may be overwritten before its cut copy can be compared with it.
     */
    if (((v == RS_V_CORRUPT && vi->has_seq && cut_short(vi)) ||
         v == RS_V_UNMATCHED || (v == RS_V_USER && vi->cut)) && !m->held) {
        m->held = true;
        m->held_vi = *vi;
        return;
    }
    emit(m, vi);
}

/*
 * Judge the held line by the notice that came next (k): replayed if the
 * console replays the record it cut.  A start of the console's prefix or
 * notice is the kernel's too if any notice follows it: a takeover's new
 * owner ended it, then replayed the record or counted it dropped.
 */
static void release_held(rs_match *m, rs_console_notice k)
{
    bool replayed = k == RS_NOTICE_REPLAYING;

    if (!m->held) {
        return;
    }
    m->held = false;
    if (m->held_vi.verdict == RS_V_USER) {
        replayed = k == RS_NOTICE_REPLAYING || k == RS_NOTICE_DROPPED;
        if (replayed && m->held_vi.cut == RS_CUT_NOTICE) {
            m->held_vi.verdict = RS_V_KNOTICE;
            replayed = false;
        }
        m->held_vi.has_seq = false;
    }
    m->held_vi.cut = RS_CUT_NONE;
    if (replayed) {
        m->held_vi.verdict = RS_V_REPLAYED;
        m->held_vi.why = RS_WHY_NONE;
        m->replay = m->held_vi.has_seq ? REPLAY_AFTER_CUT : REPLAY_NONE;
        m->replay_seq = m->held_vi.seq;
    }
    emit(m, &m->held_vi);
}

void rs_match_flush(rs_match *m)
{
    release_held(m, RS_NOTICE_NONE);
}

static void line_info(const line *l, rs_verdict_info *vi)
{
    memset(vi, 0, sizeof(*vi));
    vi->first = l->first;
    vi->last = l->last;
    vi->vt = l->vt;
    vi->len = l->n;
    vi->at = vi->want = vi->got = -1;
    vi->level = -1;
}

static void distrust(rs_match *m, const char *reason)
{
    m->ring = NULL;
    if (m->untrusted) {
        m->untrusted(m->opaque, reason ? reason : "invariant broken");
    }
}

/* A read that retries records changing under it; BAD distrusts the ring. */
static rs_rec_status rd(rs_match *m, uint64_t seq, rs_record *rec,
                        char *text, size_t cap)
{
    rs_rec_status st;

    if (!m->ring) {
        memset(rec, 0, sizeof(*rec));
        return RS_REC_BAD;
    }
    st = rs_ring_read_settled(m->ring, seq, rec, text, cap);
    if (st == RS_REC_BAD && !rs_ring_budget_out(m->ring)) {
        distrust(m, rec->reason);
    }
    return st;
}

/*
 * Reads one line's judgement may take at most, with the budget fixes: the
 * per-access budget the device gives a line written live.  The backlog
 * replay starts a line only with this much left, so that a line is not
 * left half judged for want of the reads a fresh access would have had.
 */
#define LINE_READS 1024

static bool budget_below(const rs_match *m, uint64_t reads)
{
    const rs_budget *b = m->ring ? m->ring->vm.budget : NULL;
    uint64_t given;

    if (!b) {
        return false;
    }
    /* a small budget still gets lines judged: an eighth of it, at most */
    given = b->reads + b->spent_reads;
    if (reads > given / 8) {
        reads = given / 8;
    }
    return b->out || b->reads < reads;
}

/* Did the reader's budget run out?  Then failed reads blame nobody. */
static bool short_of_budget(const rs_match *m)
{
    return m->ring && rs_ring_budget_out(m->ring);
}

/*
 * A search goes on while the ring is trusted and the budget lasts: once it
 * is spent every read fails, and a search that went on would only spend
 * host time failing them (a guest's short lines would buy that per line).
 */
static bool can_read(const rs_match *m)
{
    return m->ring && !short_of_budget(m);
}

static rs_rec_status get_cand(rs_match *m, uint64_t seq, unsigned flags,
                              cand *c)
{
    char text[RS_CONSOLE_TEXT_MAX];
    rs_record rec;
    rs_rec_status st = rd(m, seq, &rec, text, sizeof(text));
    const char *nl;

    c->seq = seq;
    c->level = st == RS_REC_OK || st == RS_REC_NODATA ? rec.level : -1;
    c->rflags = st == RS_REC_OK || st == RS_REC_NODATA ? rec.flags : 0;
    if (st != RS_REC_OK) {
        return st;
    }
    c->ts_nsec = rec.ts_nsec;
    c->id = rec.id;
    /* as the guest's kernel formats it: 1 KiB to 6.2, 2 KiB from 6.3 */
    c->len = rs_format(&rec, flags, rs_ring_console_max(m->ring), c->out,
                       sizeof(c->out));
    nl = memchr(c->out, '\n', c->len);
    c->l1 = nl ? (uint32_t)(nl - c->out) : c->len;
    return st;
}

static bool line_is(const line *l, const char *s, uint32_t n)
{
    return l->n == n && !memcmp(l->b, s, n);
}

/* Does the console print nothing of this record, by its level and flags? */
static bool filtered(const rs_match *m, int level, unsigned rflags,
                     uint64_t seq)
{
    return rs_console_filtered_flags(m->loglevel, m->level_seq, level, rflags,
                                     seq);
}

/* ---- the line's prefix ---- */

static bool is_digit(uint8_t c)
{
    return c >= '0' && c <= '9';
}

/* "[%5lu.%06lu]" at p; returns its length or 0. */
static uint32_t parse_ts(const uint8_t *p, uint32_t n, uint64_t *us)
{
    uint64_t sec = 0, usec = 0;
    uint32_t i = 1, d;

    if (n < 10 || p[0] != '[') {
        return 0;
    }
    while (i < n && p[i] == ' ') {
        i++;
    }
    for (d = 0; i < n && is_digit(p[i]) && d < 12; i++, d++) {
        sec = sec * 10 + (p[i] - '0');
    }
    if (!d || i >= n || p[i++] != '.') {
        return 0;
    }
    for (d = 0; d < 6; d++, i++) {
        if (i >= n || !is_digit(p[i])) {
            return 0;
        }
        usec = usec * 10 + (p[i] - '0');
    }
    if (i >= n || p[i] != ']') {
        return 0;
    }
    *us = sec * 1000000u + usec;
    return i + 1;
}

/* "[%6s]" of "T<pid>" or "C<cpu>" at p; returns its length or 0. */
static uint32_t parse_caller(const uint8_t *p, uint32_t n)
{
    uint32_t i = 1, d = 0;

    if (n < 8 || p[0] != '[') {
        return 0;
    }
    while (i < n && p[i] == ' ') {
        i++;
    }
    if (i >= n || (p[i] != 'T' && p[i] != 'C')) {
        return 0;
    }
    for (i++; i < n && is_digit(p[i]) && d < 11; i++) {
        d++;
    }
    return d && i < n && p[i] == ']' && i >= 7 ? i + 1 : 0;
}

static void parse_prefix(line *l)
{
    const uint8_t *p = l->b;
    uint32_t n = l->n, i = 0, k;

    l->flags = 0;
    l->has_ts = false;
    if (n > 2 && p[0] == '<' && is_digit(p[1])) {
        for (k = 1; k < n && k < 6 && is_digit(p[k]); k++) {
        }
        if (k < n && p[k] == '>') {
            l->flags |= RS_FMT_SYSLOG;
            i = k + 1;
        }
    }
    k = parse_ts(p + i, n - i, &l->ts_us);
    if (k) {
        l->flags |= RS_FMT_TIME;
        l->has_ts = true;
        i += k;
    }
    k = parse_caller(p + i, n - i);
    if (k) {
        l->flags |= RS_FMT_CALLER;
        i += k;
    }
    if ((l->flags & (RS_FMT_TIME | RS_FMT_CALLER)) && i < n && p[i] == ' ') {
        i++;
    }
    l->body = i;
}

/* ---- where the console is: the cursor and the window behind it ---- */

static void judge_slot(rs_match *m, uint64_t seq, uint8_t slot)
{
    rs_verdict_info vi;
    unsigned cls = slot & 15;

    if (cls < W_MISSING) {
        return;
    }
    memset(&vi, 0, sizeof(vi));
    vi.seq = seq;
    vi.has_seq = true;
    vi.count = 1;
    vi.level = (slot >> 4) - 1;
    vi.at = vi.want = vi.got = -1;
    report(m, cls == W_MISSING ? RS_V_MISSING :
              cls == W_FILTERED ? RS_V_FILTERED : RS_V_DROPPED, &vi);
}

/* Judge the record in seq's slot: it leaves the window. */
static void expire(rs_match *m, uint64_t seq)
{
    uint8_t *slot = &m->window[seq % RS_MATCH_WINDOW];

    judge_slot(m, seq, *slot);
    *slot = W_NONE;
}

/* seq is about to take the slot of seq - WINDOW. */
static void expire_for(rs_match *m, uint64_t seq)
{
    if (seq >= RS_MATCH_WINDOW) {
        expire(m, seq - RS_MATCH_WINDOW);
    } else {
        m->window[seq] = W_NONE;
    }
}

static void expire_all(rs_match *m)
{
    uint64_t s;
    uint32_t i;

    for (i = 0; i < RS_MATCH_WINDOW; i++) {
        s = m->cursor - RS_MATCH_WINDOW + i;
        if (m->cursor >= RS_MATCH_WINDOW - i) {
            expire(m, s);
        }
    }
}

/* Classify a record the console went past without printing. */
static uint8_t skipped_class(rs_match *m, uint64_t seq, bool read)
{
    rs_record rec;
    rs_rec_status st = RS_REC_GONE;
    int level = -1;

    bool unread = false;

    if (read) {
        st = rd(m, seq, &rec, NULL, 0);
        unread = short_of_budget(m);
        if (!unread && (st == RS_REC_OK || st == RS_REC_NODATA)) {
            level = rec.level;
            if (filtered(m, level, rec.flags, seq)) {
                return W_FILTERED | (level + 1) << 4;
            }
        }
    }
    /*
     * Unread or not, the lines judged "overwritten" and the kernel's
     * dropped notices account for the records the console went past:
     * credits left standing would have the next lines looked for that
     * many records too far on.
     */
    if (m->gone_credit) {
        m->gone_credit--;       /* printed: its line was "overwritten" */
        return W_NONE;
    }
    if (m->dropped_credit) {
        m->dropped_credit--;
        return W_DROPPED | (level + 1) << 4;
    }
    if (unread) {
        m->under_budget++;      /* not read: not judged, nobody blamed */
        return W_NONE;
    }
    return W_MISSING | (level + 1) << 4;
}

/* Judge count records from seq at once, unread: dropped as the kernel
 * said, the rest missing. */
/*
 * Judge count records from seq unread.  @gone: they left the ring before
 * the console printed anything after them.  Whatever the kernel did not
 * own up to dropping in a notice then, its console went past while they
 * were still there: a kernel console that falls behind the ring says so
 * on the next line it prints.  So they were below the console loglevel
 * (or printed, but then they were on the wire).
 */
enum bulk_rest { REST_FILTERED, REST_MISSING, REST_UNREAD };

static void judge_bulk(rs_match *m, uint64_t seq, uint64_t count,
                       enum bulk_rest rest)
{
    rs_verdict_info vi;
    uint64_t dropped, printed;

    /* records behind "overwritten" lines were printed: judged already */
    printed = count < m->gone_credit ? count : m->gone_credit;
    m->gone_credit -= printed;
    seq += printed;
    count -= printed;
    dropped = count < m->dropped_credit ? count : m->dropped_credit;

    memset(&vi, 0, sizeof(vi));
    vi.has_seq = true;
    vi.level = -1;
    vi.at = vi.want = vi.got = -1;
    m->dropped_credit -= dropped;
    if (dropped) {
        vi.seq = seq;
        vi.count = dropped;
        report(m, RS_V_DROPPED, &vi);
    }
    if (count > dropped && rest == REST_UNREAD) {
        m->under_budget += count - dropped;
    } else if (count > dropped) {
        vi.seq = seq + dropped;
        vi.count = count - dropped;
        report(m, rest == REST_FILTERED ? RS_V_FILTERED : RS_V_MISSING, &vi);
    }
}

/*
 * Move the cursor to seq, judging what it passes.  Records already
 * overwritten are judged in one go; the rest are read (for their level)
 * up to RS_MATCH_SKIP_READS, beyond which they too are judged unread.
 */
static void advance(rs_match *m, uint64_t seq)
{
    uint32_t reads = 0;
    uint64_t first = 0;

    if (!m->started) {
        m->started = true;
        m->cursor = seq;
        memset(m->window, 0, sizeof(m->window));
        return;
    }
    if (m->ring && seq > m->cursor &&
        rs_ring_first_seq(m->ring, &first) == RS_OK && first > m->cursor) {
        uint64_t upto = first < seq ? first : seq;

        expire_all(m);
        memset(m->window, 0, sizeof(m->window));
        judge_bulk(m, m->cursor, upto - m->cursor, REST_FILTERED);
        m->cursor = upto;
    }
    while (m->cursor < seq) {
        if (!m->ring) {
            m->cursor = seq;
            return;
        }
        if (short_of_budget(m) || reads == RS_MATCH_SKIP_READS) {
            /*
             * Not read: the credits account for what they can, the rest
             * is not judged (counted, unblamed) when the budget ran out,
             * missing when the console went too far to read it all.
             */
            expire_all(m);
            memset(m->window, 0, sizeof(m->window));
            judge_bulk(m, m->cursor, seq - m->cursor,
                       short_of_budget(m) ? REST_UNREAD : REST_MISSING);
            m->cursor = seq;
            return;
        }
        expire_for(m, m->cursor);
        m->window[m->cursor % RS_MATCH_WINDOW] =
            skipped_class(m, m->cursor, true);
        reads++;
        m->cursor++;
    }
}

/* The console printed seq: OK if it is new, else DUPLICATE/REORDERED. */
static rs_verdict printed(rs_match *m, uint64_t seq, int level,
                          unsigned rflags)
{
    uint8_t *slot;

    rs_levels_printed_flags(m->level_seq, level, rflags, seq);
    m->unmatched_run = 0;
    if (!m->started || seq >= m->cursor) {
        advance(m, seq);
        m->dropped_credit = 0;      /* see below */
        expire_for(m, seq);
        m->window[seq % RS_MATCH_WINDOW] = W_SEEN;
        m->cursor = seq + 1;
        return RS_V_OK;
    }
    /*
     * A dropped notice counts the records just before the one printed
     * after it: those are judged now.  Credit left over was counted twice:
     * a takeover's new owner announces again the drops the old owner did
     * (6.12 nbcon.c: it recounts from the console's seq, which the old
     * owner advances only after its write), before the record it replays.
     * Kept, it would call records the console later skipped without a
     * word dropped, not missing.
     */
    m->dropped_credit = 0;
    if (seq + RS_MATCH_WINDOW < m->cursor) {
        return RS_V_DUPLICATE;
    }
    slot = &m->window[seq % RS_MATCH_WINDOW];
    if ((*slot & 15) >= W_MISSING) {
        *slot = W_SEEN;
        return RS_V_REORDERED;
    }
    return RS_V_DUPLICATE;
}

/* ---- latency ---- */

static unsigned hist_bucket(uint64_t v)
{
    unsigned e = 0;

    if (v < 16) {
        return (unsigned)v;
    }
    while (v >> (e + 1)) {
        e++;
    }
    return (e - 3) * 16 + (unsigned)((v >> (e - 4)) & 15);
}

/* The smallest value of a bucket. */
static uint64_t hist_value(unsigned b)
{
    unsigned e = b / 16 + 3;

    if (b < 16) {
        return b;
    }
    return (uint64_t)(16 + b % 16) << (e - 4);
}

/*
 * The guest stamps records with its own clock (local_clock()), which reads
 * zero some time after QEMU's virtual clock does (firmware, decompression,
 * TSC setup) and may drift or step against it (TSC calibration; under TCG
 * the guest clock can lose time).  The offset between the two is measured
 * on "fresh" lines: the record was still the newest in the ring when its
 * line was done, so the console printed it as it was stored and its first
 * byte went out within a character time of ts_nsec.  Other lines use the
 * last fresh measurement; until there is one, latency is unknown.
 */
static void note_offset(rs_match *m, const line *l, const cand *c,
                        rs_verdict_info *vi)
{
    rs_ring_pos pos;

    /*
     * One read of the ring header: is it still the newest descriptor?  A
     * line split off user space's bytes has no first-byte time of its own.
     */
    if (m->replaying || l->split || !m->ring ||
        rs_ring_pos_read(m->ring, &pos) != RS_OK ||
        pos.head_id != c->id) {
        return;
    }
    m->clock_offset = l->vt_first - (int64_t)c->ts_nsec;
    m->have_offset = true;
    vi->fresh = true;
}

static void note_latency(rs_match *m, rs_verdict_info *vi, uint64_t ts_nsec)
{
    int64_t lat = vi->vt - (int64_t)ts_nsec - m->clock_offset;

    vi->ts_nsec = ts_nsec;
    vi->has_ts = true;
    if (!m->have_offset) {
        return;
    }
    vi->latency = lat;
    vi->has_latency = true;
    if (lat < 0) {              /* only if the offset went wrong */
        m->lat_negative++;
        return;
    }
    if (!m->lat_n || lat < m->lat_min) {
        m->lat_min = lat;
    }
    if (!m->lat_n || lat > m->lat_max) {
        m->lat_max = lat;
    }
    m->lat_n++;
    m->hist[hist_bucket((uint64_t)lat)]++;
}

static int64_t hist_rank(const rs_match *m, uint64_t rank)
{
    uint64_t seen = 0;
    unsigned b;

    for (b = 0; b < RS_MATCH_HIST; b++) {
        seen += m->hist[b];
        if (seen > rank) {
            return (int64_t)hist_value(b);
        }
    }
    return m->lat_max;
}

void rs_match_latency(const rs_match *m, rs_latency *out)
{
    memset(out, 0, sizeof(*out));
    out->negative = m->lat_negative;
    out->clock_offset = m->have_offset ? m->clock_offset : -1;
    out->n = m->lat_n;
    if (!m->lat_n) {
        return;
    }
    out->min = m->lat_min;
    out->max = m->lat_max;
    out->p50 = hist_rank(m, m->lat_n / 2);
    out->p99 = hist_rank(m, m->lat_n - 1 - m->lat_n / 100);
    if (out->p50 < out->min) {
        out->p50 = out->min;
    }
    if (out->p99 < out->p50) {
        out->p99 = out->p50;
    }
}

/* ---- finding the record a line prints ---- */

static bool ts_of(rs_match *m, uint64_t seq, uint64_t *us)
{
    rs_record rec;
    rs_rec_status st = rd(m, seq, &rec, NULL, 0);

    if (st != RS_REC_OK && st != RS_REC_NODATA) {
        return false;
    }
    *us = rec.ts_nsec / 1000;
    return true;
}

/*
 * A binary search for the first record at or after ts_us: timestamps are
 * nearly monotonic in seq (CPUs' clocks may differ a little).
 */
static uint64_t ts_lower_bound(rs_match *m, uint64_t ts_us, uint64_t first,
                               uint64_t next)
{
    uint64_t lo = first, hi = next, us = 0;
    int probes, k;

    for (probes = 0; lo < hi && probes < TS_PROBES && can_read(m); probes++) {
        uint64_t mid = lo + (hi - lo) / 2;

        for (k = 0; k < 4 && mid + k < hi; k++) {
            if (ts_of(m, mid + k, &us)) {
                break;
            }
        }
        if (k == 4 || mid + k >= hi) {
            hi = mid;           /* unreadable stretch: look below it */
            continue;
        }
        if (us < ts_us) {
            lo = mid + k + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Seqs of records stamped ts_us: a bounded scan around the lower bound. */
static int find_by_ts(rs_match *m, uint64_t ts_us, uint64_t *out, int max)
{
    uint64_t lo, first, next, s, us = 0;
    int n = 0, k;

    if (!m->ring || rs_ring_first_seq(m->ring, &first) != RS_OK ||
        rs_ring_next_seq(m->ring, &next) != RS_OK || first >= next) {
        return 0;
    }
    lo = ts_lower_bound(m, ts_us, first, next);
    s = lo > first + 8 ? lo - 8 : first;
    for (k = 0; k < TS_SCAN && s < next && n < max && can_read(m); k++, s++) {
        if (!ts_of(m, s, &us)) {
            continue;
        }
        if (us == ts_us) {
            out[n++] = s;
        } else if (us > ts_us && s > lo + 8) {
            break;
        }
    }
    return n;
}

/*
 * Is the record a line prints gone: the oldest record left is stamped
 * after the line, or the console's next record (past those it said it
 * dropped or printed from under us) is older than the oldest left?
 */
static bool tail_newer(rs_match *m, uint64_t ts_us)
{
    uint64_t first, us;

    if (rs_ring_first_seq(m->ring, &first) != RS_OK) {
        return false;
    }
    if (m->started &&
        m->cursor + m->dropped_credit + m->gone_credit < first) {
        return true;
    }
    return ts_of(m, first, &us) && us > ts_us;
}

/*
 * One record of vouch()'s walk, backwards or on: VOUCH_PAST when it is
 * stamped beyond the margin (the walk ends), VOUCH_ON to go on, else
 * why the ring cannot vouch.
 */
enum { VOUCH_ON = RS_WHY_COUNT, VOUCH_PAST };

static int vouch_step(rs_match *m, uint64_t seq, uint64_t ts_us, bool back,
                      uint32_t *reads)
{
    rs_record rec;
    rs_rec_status st;
    uint64_t us;

    if (++*reads > VOUCH_READS) {
        return RS_WHY_BUSY;
    }
    st = rd(m, seq, &rec, NULL, 0);
    if (st == RS_REC_NOT_YET) {
        return VOUCH_ON;
    }
    if (st != RS_REC_OK && st != RS_REC_NODATA) {
        return RS_WHY_GAP;
    }
    us = rec.ts_nsec / 1000;
    if (us == ts_us) {
        return RS_WHY_AMBIGUOUS;
    }
    if (back ? us + VOUCH_SKEW_US < ts_us : us > ts_us + VOUCH_SKEW_US) {
        return VOUCH_PAST;
    }
    return VOUCH_ON;
}

/*
 * Can the ring vouch that no record prints a line stamped ts_us?  A console
 * prints only records the ring holds (finalized, so readable until they are
 * overwritten), each line stamped with its record's time.  The ring vouches
 * when every record stamped within VOUCH_SKEW_US of ts_us is still there
 * with its stamp readable and none has ts_us.  Reserved, unfinished records
 * cannot have been printed yet.
 */
static rs_why vouch(rs_match *m, uint64_t ts_us)
{
    uint64_t first, next, lo, s;
    uint32_t reads = 0;
    int step = VOUCH_ON;

    if (!m->ring || rs_ring_first_seq(m->ring, &first) != RS_OK ||
        rs_ring_next_seq(m->ring, &next) != RS_OK || first > next) {
        return RS_WHY_GAP;
    }
    lo = ts_lower_bound(m, ts_us, first, next);
    for (s = lo; s > first && m->ring && step == VOUCH_ON; s--) {
        step = vouch_step(m, s - 1, ts_us, true, &reads);
    }
    if (step != VOUCH_ON && step != VOUCH_PAST) {
        return step;
    }
    /* records before the oldest left may have carried the stamp */
    if (step == VOUCH_ON && first > 0) {
        return RS_WHY_GONE;
    }
    step = VOUCH_ON;
    for (s = lo; s < next && m->ring && step == VOUCH_ON; s++) {
        step = vouch_step(m, s, ts_us, false, &reads);
    }
    if (step != VOUCH_ON && step != VOUCH_PAST) {
        return step;
    }
    return m->ring ? RS_WHY_VOUCHED : RS_WHY_GAP;
}

/* A prefixed line no record prints: user space's if the ring vouches. */
static rs_verdict unexplained(rs_match *m, const line *l, rs_why *why)
{
    *why = l->has_ts ? vouch(m, l->ts_us) : RS_WHY_NO_STAMP;
    return *why == RS_WHY_VOUCHED || *why == RS_WHY_AMBIGUOUS ? RS_V_USER
                                                              : RS_V_UNMATCHED;
}

/* Is seq's first line exactly l?  Fills c. */
static bool cand_is(rs_match *m, uint64_t seq, const line *l, cand *c)
{
    return get_cand(m, seq, l->flags, c) == RS_REC_OK && c->len &&
           line_is(l, c->out, c->l1);
}

/* Whether the n bytes at s hold pat. */
static bool holds(const char *s, uint32_t n, const char *pat)
{
    size_t k = strlen(pat);
    uint32_t i;

    for (i = 0; k <= n && i <= n - k; i++) {
        if (!memcmp(s + i, pat, k)) {
            return true;
        }
    }
    return false;
}

/*
 * Is this line a message of a console handover: "printk: console [ttyS0]
 * enabled" when a console registers, "printk: bootconsole [earlyser0]
 * disabled" when the boot console it replaces goes ("legacy " before
 * "console" and "bootconsole" from 6.12)?  register_console() logs them
 * while both consoles print, so with earlyprintk=serial and console=ttyS0
 * on one UART each reaches the wire twice, the second copy right after
 * the first.
 */
static bool handover_message(const char *s, uint32_t n)
{
    return holds(s, n, "printk: ") &&
           ((holds(s, n, "console [") && n >= 9 &&
             !memcmp(s + n - 9, "] enabled", 9)) ||
            (holds(s, n, "bootconsole [") && n >= 10 &&
             !memcmp(s + n - 10, "] disabled", 10)));
}

/* Start printing c's record: a multi-line record's rest is expected next. */
static rs_verdict take(rs_match *m, const line *l, const cand *c,
                       rs_verdict_info *vi)
{
    rs_verdict v = printed(m, c->seq, c->level, c->rflags);

    if (v == RS_V_DUPLICATE && m->replay && c->seq == m->replay_seq) {
        /* printed again after the notice: whole for the first time? */
        v = m->replay == REPLAY_AFTER_CUT ? RS_V_OK : RS_V_REPLAYED;
    } else if (v == RS_V_DUPLICATE && c->seq + 1 == m->cursor &&
               c->l1 + 1 == c->len && handover_message(c->out, c->l1)) {
        v = RS_V_REPLAYED;
        vi->why = RS_WHY_BOOTCONSOLE;
    }
    m->fmt_flags = l->flags;
    m->have_fmt = true;
    if (v == RS_V_OK) {
        note_offset(m, l, c, vi);
    }
    vi->seq = c->seq;
    vi->has_seq = true;
    if (c->l1 + 1 < c->len) {
        m->in_rec = true;
        m->rec_seq = c->seq;
        m->rec_ts = c->ts_nsec;
        memcpy(m->rec, c->out, c->len);
        m->rec_len = c->len;
        m->rec_off = c->l1 + 1;
    } else if (v == RS_V_OK) {
        note_latency(m, vi, c->ts_nsec);
    }
    return v;
}

/*
 * The record the console should print next: the first from the cursor it
 * does not filter.  Returns false if there is none (yet).
 */
static bool expected(rs_match *m, const line *l, cand *c, bool *hit)
{
    uint64_t s;
    int i;

    *hit = false;
    if (!m->started) {
        return false;
    }
    for (i = 0, s = m->cursor; i < FAST_STEPS && can_read(m); i++, s++) {
        rs_rec_status st = get_cand(m, s, l->flags, c);

        if (st == RS_REC_OK && c->len && line_is(l, c->out, c->l1)) {
            *hit = true;
            return true;
        }
        if (st == RS_REC_NOT_YET || st == RS_REC_BAD) {
            return false;
        }
        if (st == RS_REC_OK && c->len && !filtered(m, c->level, c->rflags, s)) {
            return true;
        }
    }
    return false;
}

/*
 * Is l an interleaving of a prefix of x and a prefix of y, each giving at
 * least two bytes and one of them whole?  *xu gets the bytes of x used.
 */
static bool interleaved(const line *l, const uint8_t *x, uint32_t xn,
                        const uint8_t *y, uint32_t yn, uint32_t *xu)
{
    uint8_t a[TORN_MAX + 1], b[TORN_MAX + 1];
    uint8_t *cur = a, *nxt = b, *t;
    uint32_t n = l->n, k, i, hi;

    if (n > TORN_MAX || xn > TORN_MAX || yn > TORN_MAX || n > xn + yn ||
        n < 4) {
        return false;
    }
    memset(cur, 0, xn + 1);
    cur[0] = 1;
    for (k = 0; k < n; k++) {
        bool any = false;

        hi = k < xn ? k : xn;
        memset(nxt, 0, xn + 1);
        for (i = 0; i <= hi; i++) {
            uint32_t j = k - i;

            if (!cur[i]) {
                continue;
            }
            if (i < xn && x[i] == l->b[k]) {
                nxt[i + 1] = 1;
                any = true;
            }
            if (j < yn && y[j] == l->b[k]) {
                nxt[i] = 1;
                any = true;
            }
        }
        if (!any) {
            return false;
        }
        t = cur;
        cur = nxt;
        nxt = t;
    }
    hi = n < xn ? n : xn;
    for (i = 2; i <= hi; i++) {
        uint32_t j = n - i;

        if (cur[i] && j >= 2 && (i == xn || j == yn)) {
            *xu = i;
            return true;
        }
    }
    return false;
}

/* How much of two strings' ends agree, beyond skip bytes at the start. */
static uint32_t common_suffix(const uint8_t *a, uint32_t an, const char *b,
                              uint32_t bn, uint32_t skip)
{
    uint32_t i = 0;

    while (i + skip < an && i + skip < bn &&
           a[an - 1 - i] == (uint8_t)b[bn - 1 - i]) {
        i++;
    }
    return i;
}

/*
 * Is l a damaged copy of c's first line?  Its start and end must agree
 * with c over half the text after the prefix when l's timestamp names c
 * (the prefix agrees by being named: user space's line stamped as a short
 * record is not that record's), or one be cut short of the other; over
 * three quarters of the line otherwise.  A line cut short by the guest
 * stopping need only be a prefix.
 */
static bool damaged(const line *l, const cand *c, bool named,
                    rs_verdict_info *vi)
{
    uint32_t p = rs_common_prefix(l->b, l->n, c->out, c->l1);
    uint32_t s = common_suffix(l->b, l->n, c->out, c->l1, p);
    uint32_t pre = named && l->body < p ? l->body : (named ? p : 0);

    if (p == l->n && p == c->l1) {
        return false;
    }
    if (named && (p == l->n || p == c->l1)) {
        ;                       /* one is cut short: the tail went missing */
    } else if (!(l->partial && p == l->n && p) &&
               (uint64_t)(p - pre + s) * (named ? 2 : 4) <
               (uint64_t)(c->l1 - pre) * (named ? 1 : 3)) {
        return false;
    }
    vi->at = (int32_t)p;
    vi->want = p < c->l1 ? (uint8_t)c->out[p] : (p == c->l1 ? '\n' : -1);
    vi->got = p < l->n ? l->b[p] : -1;
    vi->seq = c->seq;
    vi->has_seq = true;
    return true;
}

/*
 * Torn: is l what was cut (the rest of an earlier torn line, else the
 * expected record, else the record l's own timestamp names) interleaved
 * with what cut it (a record whose timestamp is printed inside l, the cut
 * record itself printed again from its start, or the record after it)?
 */
static bool torn(rs_match *m, const line *l, unsigned flags, const cand *x,
                 bool have_x, rs_verdict_info *vi)
{
    cand ys[EMBED_MAX + 2];
    uint64_t seqs[1];
    const uint8_t *xb = m->resid_len ? m->resid : (const uint8_t *)x->out;
    uint32_t xn = m->resid_len ? m->resid_len : x->l1;
    uint64_t xseq = m->resid_len ? m->resid_seq : x->seq;
    int ny = 0, i, looked = 0;
    uint32_t p, xu, yu;

    if (!m->resid_len && !have_x) {
        return false;
    }
    /* every timestamp looked up counts, found or not: EMBED_MAX searches */
    for (p = 1; p < l->n && looked < EMBED_MAX && can_read(m); p++) {
        uint64_t us;

        if (l->b[p] != '[' || !parse_ts(l->b + p, l->n - p, &us)) {
            continue;
        }
        looked++;
        if (find_by_ts(m, us, seqs, 1) == 1 &&
            get_cand(m, seqs[0], flags, &ys[ny]) == RS_REC_OK) {
            ny++;
        }
    }
    if (have_x) {
        ys[ny++] = *x;
    }
    if (get_cand(m, xseq + 1, flags, &ys[ny]) == RS_REC_OK) {
        ny++;
    }
    for (i = 0; i < ny && m->ring; i++) {
        const cand *y = &ys[i];

        if (!interleaved(l, xb, xn, (const uint8_t *)y->out, y->l1, &xu)) {
            continue;
        }
        yu = l->n - xu;
        vi->seq = xseq;
        vi->has_seq = true;
        vi->seq2 = y->seq;
        vi->has_seq2 = true;
        if (!m->resid_len) {
            printed(m, x->seq, x->level, x->rflags);
        }
        printed(m, y->seq, y->level, y->rflags);
        /* keep what is left of the side that did not finish */
        if (xu < xn) {
            memmove(m->resid, xb + xu, xn - xu);
            m->resid_len = xn - xu;
            m->resid_seq = xseq;
        } else {
            memcpy(m->resid, y->out + yu, y->l1 - yu);
            m->resid_len = y->l1 - yu;
            m->resid_seq = y->seq;
        }
        return true;
    }
    return false;
}

/* ---- user space on the same wire ---- */

static void judge(rs_match *m, line *l);

/* Does the console print a prefix that l lacks? */
static bool lacks_prefix(const rs_match *m, const line *l)
{
    return m->have_fmt && m->fmt_flags && !l->flags;
}

/*
 * Is l only the start of a line the console writes, its prefix cut before
 * the time stamp ended, or of a notice?  A takeover in a storm ends such
 * a line; the next line says so (release_held()).
 */
static uint8_t console_start(const rs_match *m, const line *l)
{
    uint32_t i;

    if (rs_console_notice_cut(l->b, l->n) != RS_NOTICE_NONE) {
        return RS_CUT_NOTICE;
    }
    if (!m->have_fmt || !(m->fmt_flags & RS_FMT_TIME) || !l->n ||
        l->n >= 16 || l->b[0] != '[') {
        return RS_CUT_NONE;
    }
    for (i = 1; i < l->n; i++) {
        if (l->b[i] != ' ' && l->b[i] != '.' && !is_digit(l->b[i])) {
            return RS_CUT_NONE;
        }
    }
    return RS_CUT_PREFIX;
}

/*
 * A line without the prefix is still the kernel's if it is a damaged copy
 * of one of the next records the console prints and starts as that does
 * (a byte of the prefix lost, say).
 */
static bool near_copy(rs_match *m, const line *l, rs_verdict_info *vi)
{
    cand c;
    uint64_t s;
    int i, tried = 0;

    if (!m->started || !l->n) {
        return false;
    }
    for (i = 0, s = m->cursor;
         i < FAST_STEPS && tried < NEAR_COPIES && can_read(m); i++, s++) {
        rs_rec_status st = get_cand(m, s, m->fmt_flags, &c);

        if (st == RS_REC_NOT_YET || st == RS_REC_BAD) {
            break;
        }
        if (st != RS_REC_OK || !c.len || filtered(m, c.level, c.rflags, s)) {
            continue;
        }
        tried++;
        if (l->b[0] == (uint8_t)c.out[0] && damaged(l, &c, false, vi)) {
            printed(m, c.seq, c.level, c.rflags);
            return true;
        }
    }
    return false;
}

/*
 * Where a kernel line begins inside l, after bytes of user space's that
 * had no newline (a login prompt): a prefix like the console's that names
 * a record in the ring.  0: nowhere.
 */
static uint32_t kernel_start(rs_match *m, const line *l)
{
    uint32_t q;
    int tries = 0;

    for (q = 1; q + 2 < l->n && tries < EMBED_MAX && can_read(m); q++) {
        line t;
        uint64_t seq;

        if (l->b[q] != '[' && l->b[q] != '<') {
            continue;
        }
        memset(&t, 0, sizeof(t));
        t.b = l->b + q;
        t.n = l->n - q;
        parse_prefix(&t);
        if (t.flags != m->fmt_flags) {
            continue;
        }
        tries++;
        if (!t.has_ts || find_by_ts(m, t.ts_us, &seq, 1) == 1) {
            return q;
        }
    }
    return 0;
}

/*
 * l's first q bytes are user space's (or, stamped like the kernel's, no
 * record's the ring can vouch for); the rest is a line of its own.
 */
static void split_user(rs_match *m, const line *l, uint32_t q)
{
    rs_verdict_info vi;
    rs_verdict v = RS_V_USER;
    line head = *l, tail = *l;

    head.n = q;
    head.last = l->first + q - 1;
    head.vt = l->vt_first;      /* the only time known of those bytes */
    line_info(&head, &vi);
    if (l->flags) {
        v = unexplained(m, l, &vi.why);
        if (v == RS_V_UNMATCHED && short_of_budget(m)) {
            v = RS_V_UNCHECKED;
            vi.under_budget = true;
            m->under_budget++;
        }
    }
    report(m, v, &vi);

    tail.b = l->b + q;
    tail.n = l->n - q;
    tail.first = l->first + q;
    tail.split = true;
    judge(m, &tail);
}

/*
 * Is l x's line with bytes of user space's inside it?  l keeps x's prefix
 * and some of its text, then come bytes no record explains (kernel records
 * interleaved are torn() already), then either the whole rest of x or the
 * end of the line: x's rest is then expected on a line of its own.
 */
static bool user_torn(rs_match *m, const line *l, const cand *x,
                      rs_verdict_info *vi)
{
    uint32_t p = rs_common_prefix(l->b, l->n, x->out, x->l1), s;

    if (p <= l->body || p >= l->n || p >= x->l1) {
        return false;
    }
    s = common_suffix(l->b, l->n, x->out, x->l1, p);
    if (p + s == x->l1 && l->n > x->l1) {
        vi->user_len = l->n - x->l1;
        m->resid_len = 0;
    } else if (!s && l->n - p >= 2) {
        vi->user_len = l->n - p;
        memcpy(m->resid, x->out + p, x->l1 - p);
        m->resid_len = x->l1 - p;
        m->resid_seq = x->seq;
    } else {
        return false;
    }
    vi->by_user = true;
    vi->user_at = p;
    vi->seq = x->seq;
    vi->has_seq = true;
    printed(m, x->seq, x->level, x->rflags);
    return true;
}

/*
 * A line being judged: what judge_line's steps learn on the way.  A read
 * that finds the ring hostile drops it (m->ring NULL) at any step: the
 * later steps check, and the verdict is then unchecked.  Each
 * step returns STEP_ON (not decided: the next step goes on), STEP_JUDGED
 * (j->v is the verdict: judge_finish reports it) or STEP_DONE (the step
 * reported the line itself, or split it and judged both parts).
 */
typedef struct judging {
    rs_verdict_info vi;
    rs_verdict v;
    uint64_t seqs[TS_CANDS];    /* records stamped as the line is */
    int n;
    cand e;                     /* the record the console is expected at */
    bool have_e, hit;
    bool textless;              /* a record stamped so has lost its text */
    unsigned flags;             /* how candidates are formatted */
} judging;

enum { STEP_ON, STEP_JUDGED, STEP_DONE };

/* The rest of a line torn apart earlier, or a multi-line record's next. */
static int judge_continuation(rs_match *m, line *l, judging *j)
{
    if (m->resid_len && line_is(l, (const char *)m->resid, m->resid_len)) {
        m->resid_len = 0;
        report(m, RS_V_TORN, &j->vi);
        return STEP_DONE;
    }
    if (m->in_rec) {
        const char *p = (const char *)m->rec + m->rec_off;
        const char *nl = memchr(p, '\n', m->rec_len - m->rec_off);
        uint32_t ln = nl ? (uint32_t)(nl - p) : m->rec_len - m->rec_off;

        m->in_rec = false;
        if (line_is(l, p, ln)) {
            j->vi.seq = m->rec_seq;
            j->vi.has_seq = true;
            m->rec_off += ln + 1;
            if (m->rec_off < m->rec_len) {
                m->in_rec = true;
            } else {
                note_latency(m, &j->vi, m->rec_ts);
            }
            report(m, RS_V_OK, &j->vi);
            return STEP_DONE;
        }
    }
    return STEP_ON;
}

/*
 * No prefix where the console prints one: user space's, unless a kernel
 * line follows its bytes, or records interleaved byte by byte (their
 * prefixes too), or a damaged copy of a record.
 */
static int judge_unprefixed(rs_match *m, line *l, judging *j)
{
    uint32_t q;
    line as_kernel;

    if (!lacks_prefix(m, l)) {
        return STEP_ON;
    }
    if (l->n == 0) {
        j->v = RS_V_USER;       /* an empty line: no record prints that */
        return STEP_JUDGED;
    }
    q = l->split ? 0 : kernel_start(m, l);
    if (q) {
        split_user(m, l, q);
        return STEP_DONE;
    }
    as_kernel = *l;
    as_kernel.flags = m->fmt_flags;
    j->have_e = expected(m, &as_kernel, &j->e, &j->hit);
    if (m->ring && torn(m, l, m->fmt_flags, &j->e, j->have_e, &j->vi)) {
        j->v = RS_V_TORN;
        m->unmatched_run = 0;
    } else {
        m->resid_len = 0;
        j->v = m->ring && near_copy(m, l, &j->vi) ? RS_V_CORRUPT : RS_V_USER;
        j->vi.cut = j->v == RS_V_USER ? console_start(m, l) : RS_CUT_NONE;
    }
    return STEP_JUDGED;
}

/* Take record @seq for the line if it prints it. */
static int take_if_line(rs_match *m, line *l, judging *j, uint64_t seq)
{
    cand c;

    if (!cand_is(m, seq, l, &c)) {
        return STEP_ON;
    }
    j->v = take(m, l, &c, &j->vi);
    return STEP_JUDGED;
}

/*
 * By timestamp.  CPUs' clocks disagree (under TCG by milliseconds), so the
 * search can miss: then also where the console should be, past the
 * records it said it dropped or printed from under us.
 */
static int find_by_stamp(rs_match *m, line *l, judging *j)
{
    rs_rec_status st;
    uint64_t pred, s, us;
    cand c;
    int i;

    j->n = find_by_ts(m, l->ts_us, j->seqs, TS_CANDS);
    for (i = 0; i < j->n && can_read(m); i++) {
        st = get_cand(m, j->seqs[i], l->flags, &c);
        if (st == RS_REC_OK && c.len && line_is(l, c.out, c.l1)) {
            j->v = take(m, l, &c, &j->vi);
            return STEP_JUDGED;
        }
        j->textless |= st == RS_REC_NODATA || st == RS_REC_GONE;
    }
    if (!m->started) {
        return STEP_ON;
    }
    pred = m->cursor + m->dropped_credit + m->gone_credit;
    for (s = pred > NEAR / 4 ? pred - NEAR / 4 : 0;
         s < pred + NEAR && can_read(m); s++) {
        if (!ts_of(m, s, &us) || us != l->ts_us) {
            continue;
        }
        st = get_cand(m, s, l->flags, &c);
        if (st == RS_REC_OK && c.len && line_is(l, c.out, c.l1)) {
            j->v = take(m, l, &c, &j->vi);
            return STEP_JUDGED;
        }
        j->textless |= st == RS_REC_NODATA;
    }
    return STEP_ON;
}

/* The record that prints the line: expected, by stamp, or near. */
static int find_record(rs_match *m, line *l, judging *j)
{
    uint64_t s, next = 0;

    /*
     * An empty line is a record's only if it is the one the console is
     * at (an empty text, printed without a prefix): one read, not the
     * thousands every search below would make for it.
     */
    if (l->n == 0) {
        if (m->started && take_if_line(m, l, j, m->cursor) == STEP_JUDGED) {
            return STEP_JUDGED;
        }
        j->v = RS_V_USER;
        return STEP_JUDGED;
    }
    j->have_e = expected(m, l, &j->e, &j->hit);
    if (j->hit) {
        j->v = take(m, l, &j->e, &j->vi);
        return STEP_JUDGED;
    }
    if (l->has_ts) {
        return find_by_stamp(m, l, j);
    }
    if (m->started) {
        for (s = m->cursor > NEAR ? m->cursor - NEAR : 0;
             s < m->cursor + NEAR && can_read(m); s++) {
            if (take_if_line(m, l, j, s) == STEP_JUDGED) {
                return STEP_JUDGED;
            }
        }
    } else if (rs_ring_next_seq(m->ring, &next) == RS_OK) {
        for (s = next > 4 * NEAR ? next - 4 * NEAR : 0;
             s < next && can_read(m); s++) {
            if (take_if_line(m, l, j, s) == STEP_JUDGED) {
                return STEP_JUDGED;
            }
        }
    }
    return STEP_ON;
}

/* Damaged: the record its timestamp names, else the expected one. */
static int judge_damaged(rs_match *m, line *l, judging *j)
{
    cand best, c;
    uint32_t best_score = 0, sc;
    bool have_best = false;
    int i;

    for (i = 0; i < j->n && can_read(m); i++) {
        if (get_cand(m, j->seqs[i], j->flags, &c) != RS_REC_OK) {
            continue;
        }
        sc = rs_common_prefix(l->b, l->n, c.out, c.l1);
        sc += common_suffix(l->b, l->n, c.out, c.l1, sc);
        if (!have_best || sc > best_score) {
            best = c;
            best_score = sc;
            have_best = true;
        }
    }
    if (!have_best && j->have_e) {
        best = j->e;
    }
    if (!have_best && !j->have_e) {
        return STEP_ON;
    }
    if (user_torn(m, l, &best, &j->vi)) {
        j->v = RS_V_TORN;
        return STEP_JUDGED;
    }
    if (damaged(l, &best, have_best, &j->vi)) {
        printed(m, best.seq, best.level, best.rflags);
        j->v = RS_V_CORRUPT;
        return STEP_JUDGED;
    }
    return STEP_ON;
}

/* No record prints the line: overwritten, torn, damaged, or unexplained. */
static int judge_unfound(rs_match *m, line *l, judging *j)
{
    int step;

    /*
     * A damaged line's own prefix may not parse: from here on, format as
     * the console has been printing.
     */
    if (m->have_fmt && m->fmt_flags != l->flags) {
        j->flags = m->fmt_flags;
        if (j->have_e) {
            j->have_e = get_cand(m, j->e.seq, j->flags, &j->e) == RS_REC_OK;
        }
    }
    /*
     * A record stamped as the line is has lost its text, or the line is
     * older than the oldest record left: the console copied the record,
     * then it was overwritten while the line was on the wire.  Nothing to
     * check the line against.
     */
    if (l->has_ts && m->ring && (j->textless || tail_newer(m, l->ts_us))) {
        m->gone_credit++;
        m->unmatched_run = 0;
        j->v = RS_V_OVERWRITTEN;
        return STEP_JUDGED;
    }
    if (!j->have_e && j->n > 0 &&
        get_cand(m, j->seqs[0], j->flags, &j->e) == RS_REC_OK) {
        j->have_e = true;       /* nothing expected: the record l names */
    }
    if (m->ring && torn(m, l, j->flags, &j->e, j->have_e, &j->vi)) {
        j->v = RS_V_TORN;
        m->unmatched_run = 0;
        return STEP_JUDGED;
    }
    m->resid_len = 0;
    /*
     * User space's line that the console cut short to print a record: no
     * record has the line's own stamp, a prefix inside it names one.
     */
    if (l->has_ts && j->n == 0 && !l->split) {
        uint32_t q = kernel_start(m, l);

        if (q) {
            split_user(m, l, q);
            return STEP_DONE;
        }
    }
    step = m->ring ? judge_damaged(m, l, j) : STEP_ON;
    if (step != STEP_ON) {
        return step;
    }
    /*
     * Nothing explains it: the kernel's if it has the kernel's prefix and
     * the ring cannot vouch that no record prints it.
     */
    if (!l->flags) {
        j->v = RS_V_USER;
        return STEP_JUDGED;
    }
    if (!m->ring) {
        return STEP_JUDGED;     /* j->v unmatched: judge_finish unchecks */
    }
    j->v = unexplained(m, l, &j->vi.why);
    m->unmatched_run += j->v == RS_V_UNMATCHED;
    /*
     * Printed as the console prints, stamped just after the oldest record
     * left, with records before it overwritten: in a storm, its record was
     * one of those (stamped by a CPU whose clock ran ahead) and the ring
     * moved on while the line was on the wire.
     */
    if (j->v == RS_V_UNMATCHED && j->vi.why == RS_WHY_GONE &&
        l->flags == m->fmt_flags) {
        m->unmatched_run--;
        m->gone_credit++;
        j->v = RS_V_OVERWRITTEN;
        j->vi.why = RS_WHY_NONE;
    }
    return STEP_JUDGED;
}

/* Report the verdict, unless the budget ran out before it was known. */
static void judge_finish(rs_match *m, const line *l, judging *j,
                         bool was_in_rec)
{
    rs_verdict v = j->v;

    if (short_of_budget(m) && v != RS_V_OK && v != RS_V_UNCHECKED &&
        !(v == RS_V_USER && j->vi.cut)) {
        /*
         * The reads it took ran out of budget: what it was judged is not
         * known, and it is not held against the kernel.  Nor is a line
         * called user space's known to be: its search for the record it
         * may be a damaged copy of was cut short.  (A user line the
         * kernel's console cut was split by what the ring proved.)
         */
        if (v == RS_V_USER) {
            m->in_rec = was_in_rec;     /* between a record's lines */
        }
        if (v == RS_V_UNMATCHED && m->unmatched_run) {
            m->unmatched_run--;
        }
        /*
         * It was most likely a record's line: credit one record as printed
         * rather than blame the kernel later for the one the console
         * went past.  The other verdicts have credited theirs.
         */
        if (l->flags && v == RS_V_UNMATCHED) {
            m->gone_credit++;
        }
        v = RS_V_UNCHECKED;
        j->vi.under_budget = true;
        m->under_budget++;
    }
    if (!m->ring) {
        v = RS_V_UNCHECKED;     /* a read distrusted the ring meanwhile */
    } else if (v == RS_V_USER) {
        m->in_rec = was_in_rec;         /* between a record's lines */
    }
    if (v == RS_V_UNCHECKED) {
        /* a torn judgement the ring or budget cut short names no tearer */
        j->vi.has_seq2 = false;
        j->vi.by_user = false;
        j->vi.why = RS_WHY_NONE;
    }
    report(m, v, &j->vi);
}

static void judge_line(rs_match *m, line *l)
{
    judging j = { .v = RS_V_UNMATCHED };
    bool was_in_rec = m->in_rec;
    int step;

    line_info(l, &j.vi);
    if (!m->ring) {
        report(m, RS_V_UNCHECKED, &j.vi);
        return;
    }
    parse_prefix(l);
    j.flags = l->flags;
    step = judge_continuation(m, l, &j);
    if (step == STEP_ON) {
        step = judge_unprefixed(m, l, &j);
    }
    if (step == STEP_ON) {
        step = find_record(m, l, &j);
    }
    if (step == STEP_ON) {
        step = judge_unfound(m, l, &j);
    }
    if (step == STEP_JUDGED) {
        judge_finish(m, l, &j, was_in_rec);
    }
}

/* A line the console code writes that is no record's: a notice. */
static bool judge_notice(rs_match *m, line *l)
{
    uint64_t count;
    rs_console_notice k = rs_parse_console_notice(l->b, l->n, &count);
    rs_verdict_info vi;

    release_held(m, k);
    if (k == RS_NOTICE_NONE && l->partial &&
        rs_console_notice_cut(l->b, l->n) != RS_NOTICE_NONE) {
        /* the guest stopped while its console wrote this notice */
        line_info(l, &vi);
        vi.count = 0;
        report(m, m->ring ? RS_V_KNOTICE : RS_V_UNCHECKED, &vi);
        return true;
    }
    if (k == RS_NOTICE_NONE) {
        return false;
    }
    line_info(l, &vi);
    vi.count = count;
    if (!m->ring) {
        report(m, RS_V_UNCHECKED, &vi);
        return true;
    }
    m->unmatched_run = 0;
    if (k == RS_NOTICE_DROPPED) {
        m->dropped_credit += count;
        report(m, RS_V_NOTICE, &vi);
        return true;
    }
    if (k == RS_NOTICE_REPLAYING && m->replay != REPLAY_AFTER_CUT &&
        m->started && m->cursor) {
        m->replay = REPLAY_AFTER_WHOLE;
        m->replay_seq = m->cursor - 1;
    }
    report(m, RS_V_KNOTICE, &vi);
    return true;
}

static void judge(rs_match *m, line *l)
{
    if (judge_notice(m, l)) {
        return;                 /* a replay notice counts for what follows */
    }
    judge_line(m, l);
    m->replay = REPLAY_NONE;
}

/* ---- the byte stream ---- */

static void backlog_put(rs_match *m, const line *l)
{
    uint32_t need = BL_HDR + l->n;
    uint8_t *p = m->backlog + m->backlog_len;
    uint32_t n32 = l->n;

    if (need > sizeof(m->backlog) - m->backlog_len) {
        line copy = *l;

        judge(m, &copy);        /* no ring: UNCHECKED */
        return;
    }
    memcpy(p, &n32, 4);
    memcpy(p + 4, &l->first, 8);
    memcpy(p + 12, &l->last, 8);
    memcpy(p + 20, &l->vt, 8);
    memcpy(p + 28, &l->vt_first, 8);
    memcpy(p + BL_HDR, l->b, l->n);
    m->backlog_len += need;
}

/*
 * Judge the lines kept before the ring was found, oldest first, for as
 * long as the reader's budget lasts: what is left stays, in order, for
 * rs_match_replay() on a later tick (lines written meanwhile queue up
 * behind it).  Without a ring they are all judged UNCHECKED at once.
 */
static void backlog_replay(rs_match *m)
{
    uint32_t off = 0, n;

    m->replaying = true;
    while (off + BL_HDR <= m->backlog_len) {
        line l;

        if (short_of_budget(m) || (off && budget_below(m, LINE_READS))) {
            break;
        }
        memset(&l, 0, sizeof(l));
        memcpy(&n, m->backlog + off, 4);
        if (n > m->backlog_len - off - BL_HDR) {
            off = m->backlog_len;
            break;              /* cannot happen unless migrated badly */
        }
        memcpy(&l.first, m->backlog + off + 4, 8);
        memcpy(&l.last, m->backlog + off + 12, 8);
        memcpy(&l.vt, m->backlog + off + 20, 8);
        memcpy(&l.vt_first, m->backlog + off + 28, 8);
        l.b = m->backlog + off + BL_HDR;
        l.n = n;
        judge(m, &l);
        off += BL_HDR + n;
    }
    m->replaying = false;
    if (off >= m->backlog_len) {
        m->backlog_len = 0;
    } else {
        memmove(m->backlog, m->backlog + off, m->backlog_len - off);
        m->backlog_len -= off;
    }
}

void rs_match_replay(rs_match *m)
{
    if (rs_match_replay_pending(m)) {
        backlog_replay(m);
    }
}

static void line_done(rs_match *m, uint64_t last, int64_t vt, bool partial)
{
    line l;

    memset(&l, 0, sizeof(l));
    l.b = m->line;
    l.n = m->len;
    l.first = m->first;
    l.last = last;
    l.vt = vt;
    l.vt_first = m->vt_first;
    l.partial = partial;
    if (m->overlong) {
        rs_verdict_info vi;

        line_info(&l, &vi);
        release_held(m, RS_NOTICE_NONE);
        vi.why = m->ring ? RS_WHY_OVERLONG : RS_WHY_NONE;
        report(m, m->ring ? RS_V_UNMATCHED : RS_V_UNCHECKED, &vi);
    } else if ((!m->ring || m->backlog_len) && !partial) {
        backlog_put(m, &l);     /* behind the lines not replayed yet */
    } else {
        judge(m, &l);
    }
    m->len = 0;
    m->overlong = false;
    m->cr = false;
}

static void line_start(rs_match *m, uint64_t index, int64_t vt)
{
    if (m->len == 0 && !m->overlong && !m->cr) {
        m->first = index;
        m->vt_first = vt;
    }
}

static void line_add(rs_match *m, uint8_t byte)
{
    if (m->len < sizeof(m->line)) {
        m->line[m->len++] = byte;
    } else {
        m->overlong = true;
    }
}

void rs_match_byte(rs_match *m, uint8_t byte, uint64_t index, int64_t vt)
{
    line_start(m, index, vt);
    if (byte == '\n') {
        m->cr = false;
        line_done(m, index, vt, false);
        return;
    }
    /* "\r\n" ends a line; any other '\r' is part of it */
    if (m->cr) {
        m->cr = false;
        line_add(m, '\r');
    }
    if (byte == '\r') {
        m->cr = true;
        return;
    }
    line_add(m, byte);
}

void rs_match_init(rs_match *m, int loglevel, rs_report_fn report,
                   rs_untrusted_fn untrusted, void *opaque)
{
    memset(m, 0, sizeof(*m));
    m->loglevel = loglevel;
    m->report = report;
    m->untrusted = untrusted;
    m->opaque = opaque;
    rs_levels_reset(m->level_seq);
}

void rs_match_attach(rs_match *m, const rs_ring *ring)
{
    m->ring = ring;
    m->started = false;
    m->in_rec = false;
    m->resid_len = 0;
    m->unmatched_run = 0;
    m->dropped_credit = 0;
    m->gone_credit = 0;
    m->have_offset = false;
    memset(m->window, 0, sizeof(m->window));
    backlog_replay(m);
}

void rs_match_resume(rs_match *m, const rs_ring *ring)
{
    m->ring = ring;
}

void rs_match_detach(rs_match *m)
{
    release_held(m, RS_NOTICE_NONE);
    if (m->started) {
        expire_all(m);
    }
    m->ring = NULL;
    m->started = false;
    m->in_rec = false;
    m->resid_len = 0;
}

void rs_match_finish(rs_match *m, int64_t vt)
{
    uint64_t next = 0;

    if (m->len || m->overlong) {
        line_done(m, m->first + m->len, vt, true);
    }
    release_held(m, RS_NOTICE_NONE);
    if (!m->ring) {
        backlog_replay(m);      /* judged UNCHECKED: no ring ever came */
        return;
    }
    backlog_replay(m);          /* what the budget leaves stays */
    if (!m->started) {
        return;
    }
    /* records after the cursor the console never got to */
    if (rs_ring_next_seq(m->ring, &next) == RS_OK && next > m->cursor) {
        advance(m, next);
    }
    expire_all(m);
    memset(m->window, 0, sizeof(m->window));
}

/*
 * Could rs_match have left this state?  Checks every field a migration
 * stream sets that is used as an index, a length or an enum, and each
 * backlog entry, so that a crafted stream cannot make the code above
 * index out of its buffers or replay a line no console could have sent.
 * Counters, seqs and times may hold any value.  why: the field at fault.
 */
bool rs_match_state_ok(const rs_match *m, const char **why)
{
    const unsigned fmts = RS_FMT_TIME | RS_FMT_CALLER | RS_FMT_SYSLOG;
    const char *bad = NULL;
    uint32_t off = 0, i;

    if (m->len > RS_MATCH_LINE_MAX) {
        bad = "match.len: longer than the line buffer";
    } else if (m->overlong && m->len != RS_MATCH_LINE_MAX) {
        bad = "match.overlong: set with room left in the line";
    } else if (m->rec_len > sizeof(m->rec)) {
        bad = "match.rec_len: longer than the record buffer";
    } else if (m->rec_off > m->rec_len) {
        bad = "match.rec_off: past rec_len";
    } else if (m->in_rec && m->rec_off == m->rec_len) {
        bad = "match.in_rec: with nothing of the record left";
    } else if (m->resid_len > RS_MATCH_LINE_MAX) {
        bad = "match.resid_len: longer than the residue buffer";
    } else if (m->fmt_flags & ~fmts) {
        bad = "match.fmt_flags: not a prefix format";
    } else if (m->backlog_len > RS_MATCH_BACKLOG) {
        bad = "match.backlog_len: longer than the backlog";
    } else if (m->replay > REPLAY_AFTER_WHOLE) {
        bad = "match.replay: not a replay state";
    }
    for (i = 0; i < RS_MATCH_WINDOW && !bad; i++) {
        /* a class, and for a judged one level + 1 (-1: unread) */
        unsigned cls = m->window[i] & 15, lv = m->window[i] >> 4;

        if (cls > W_DROPPED || lv > RS_LEVELS ||
            (cls < W_MISSING && lv)) {
            bad = "match.window[]: not a record's class and level";
        }
    }
    /* backlog entries as backlog_put() makes them, back to back */
    while (!bad && off < m->backlog_len) {
        uint32_t n;
        uint64_t first, last;

        if (m->backlog_len - off < BL_HDR) {
            bad = "match.backlog: an entry's header is cut off";
            break;
        }
        memcpy(&n, m->backlog + off, 4);
        memcpy(&first, m->backlog + off + 4, 8);
        memcpy(&last, m->backlog + off + 12, 8);
        if (n > RS_MATCH_LINE_MAX) {
            bad = "match.backlog: an entry longer than a line";
        } else if (n > m->backlog_len - off - BL_HDR) {
            bad = "match.backlog: an entry runs past backlog_len";
        } else if (last < first) {
            bad = "match.backlog: an entry ends before it begins";
        }
        off += BL_HDR + n;
    }
    if (bad && why) {
        *why = bad;
    }
    return !bad;
}
