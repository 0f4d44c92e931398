/*
 * rslib-match.h: judge console output against the printk ring that
 * produced it (level 0: an unmodified kernel, matched by content).
 *
 * Bytes written to the UART are assembled into lines; each line is matched
 * to the ring record it prints (same prefix and text as record_print_text()
 * makes of it) and given a verdict.  User space writes to the same UART
 * (getty, init, anything on /dev/console): a line without the kernel's
 * prefix that no record explains is its ("user"), and so is the start of a
 * line that a kernel line follows without a newline (a prompt).  Records the console skipped are judged
 * once the console is RS_MATCH_WINDOW records past them, or when the guest
 * stops: below the console loglevel, dropped by the kernel (it says so on
 * the console), or missing.
 *
 * Plain C99 like the decoder it uses: no QEMU, no GLib, no allocation.  All
 * state is in struct rs_match, whose fields are plain values so that a
 * device can migrate them.  Every ring access goes through the decoder's
 * bounded reads and the number of reads per line is bounded.
 */
#ifndef RSLIB_MATCH_H
#define RSLIB_MATCH_H

#include "rslib-ring.h"
#include "rslib-events.h"

/* Longest console line kept whole; longer lines are judged "unmatched". */
#define RS_MATCH_LINE_MAX       1280
/* Records a skipped record may still turn up late ("reordered"). */
#define RS_MATCH_WINDOW         128
/* Lines received before the ring is found, replayed once it is. */
#define RS_MATCH_BACKLOG        (256 * 1024)
/* Records read per skipped stretch; the rest are judged unread. */
#define RS_MATCH_SKIP_READS     4096
/* Latency histogram: 16 linear steps per power of two. */
#define RS_MATCH_HIST           1024

typedef struct rs_verdict_info {
    rs_verdict verdict;
    uint64_t seq;               /* the record, if any (has_seq) */
    uint64_t seq2;              /* TORN: the other record */
    bool has_seq, has_seq2;
    uint64_t first, last;       /* lines: byte indexes in the stream */
    int64_t vt;                 /* lines: virtual ns of the last byte */
    uint64_t ts_nsec;           /* OK, last line: the record's timestamp */
    int64_t latency;            /* OK: vt - ts_nsec - clock offset */
    bool has_ts, has_latency;
    bool fresh;                 /* measured the clock offset */
    uint32_t len;               /* lines: length without "\r\n" */
    int32_t at, want, got;      /* CORRUPT: offset, bytes (-1: none) */
    uint64_t count;             /* NOTICE: N; MISSING: records (>= 1) */
    int level;                  /* records: level (-1: unread) */
    bool by_user;               /* TORN: user space's bytes tore it */
    bool under_budget;          /* UNCHECKED: the reads ran out of budget */
    uint32_t user_at, user_len; /* by_user: those bytes, from the line's
                                 * first */
    rs_why why;                 /* USER, UNMATCHED: see rs_why */
    uint8_t cut;                /* USER held: RS_CUT_* (rslib-match.c) */
} rs_verdict_info;

/* A user line that may be the start of the console's own line, cut. */
enum { RS_CUT_NONE, RS_CUT_PREFIX, RS_CUT_NOTICE };

typedef void (*rs_report_fn)(void *opaque, const rs_verdict_info *vi);
/* The ring broke an invariant: stop trusting it (reason is static). */
typedef void (*rs_untrusted_fn)(void *opaque, const char *reason);

typedef struct rs_match {
    /* set by rs_match_init() / rs_match_attach(); not migrated */
    const rs_ring *ring;
    rs_report_fn report;
    rs_untrusted_fn untrusted;
    void *opaque;
    int loglevel;               /* console_loglevel, 0: infer */

    /* the line being assembled */
    uint8_t line[RS_MATCH_LINE_MAX];
    uint32_t len;
    bool overlong;
    bool cr;                    /* a '\r' is held back */
    uint64_t first;             /* byte index of the line's first byte */
    int64_t vt_first;           /* and its virtual time */

    /* where the console is in the ring */
    bool started;               /* a line has been matched */
    uint64_t cursor;            /* the next seq the console should print */
    uint64_t level_seq[RS_LEVELS];      /* rs_levels_printed() */
    bool have_fmt;
    uint8_t fmt_flags;          /* RS_FMT_* of the last line matched */
    uint64_t dropped_credit;    /* records the kernel said it dropped */
    uint64_t gone_credit;       /* records printed, overwritten meanwhile */
    uint8_t window[RS_MATCH_WINDOW];    /* by seq % WINDOW, < cursor */
    uint32_t unmatched_run;

    /* a multi-line record partly printed: its formatted text (up to the
     * ring's rs_ring_console_max()) */
    bool in_rec;
    uint64_t rec_seq;
    uint64_t rec_ts;
    uint8_t rec[RS_CONSOLE_TEXT_MAX];
    uint32_t rec_len, rec_off;

    /* a torn line: what is left of the record cut off */
    uint8_t resid[RS_MATCH_LINE_MAX];
    uint32_t resid_len;
    uint64_t resid_seq;

    /* lines seen before a ring was found: u32 len, u64 first, u64 last,
     * i64 vt, bytes */
    uint8_t backlog[RS_MATCH_BACKLOG];
    uint32_t backlog_len;

    /* a cut line held back until the next line says if it is replayed */
    bool held;                  /* not migrated: released by pre_save */
    rs_verdict_info held_vi;
    /* after a replay notice: REPLAY_* in rslib-match.c, and its seq */
    uint8_t replay;
    uint64_t replay_seq;

    uint64_t counts[RS_V_COUNT];
    uint64_t hist[RS_MATCH_HIST];
    bool replaying;             /* not migrated: never across a callback */
    /*
     * Lines and records not judged because the reader's budget ran out
     * (rs_vm.budget): the lines are UNCHECKED with under_budget set, the
     * records are not judged.  Not migrated.
     */
    uint64_t under_budget;
    bool have_offset;
    int64_t clock_offset;       /* guest clock zero on the virtual clock */
    int64_t lat_min, lat_max;
    uint64_t lat_n;
    uint64_t lat_negative;      /* OK lines printed "before" their ts */
} rs_match;

void rs_match_init(rs_match *m, int loglevel, rs_report_fn report,
                   rs_untrusted_fn untrusted, void *opaque);

/* Start checking against ring (kept by pointer), replaying the backlog. */
void rs_match_attach(rs_match *m, const rs_ring *ring);
/*
 * Lines kept before the ring was found and not judged yet: the replay
 * stops when the reader's budget runs out (rs_vm.budget) and goes on with
 * rs_match_replay(), say on the next timer tick.
 */
static inline bool rs_match_replay_pending(const rs_match *m)
{
    return m->ring && m->backlog_len;
}
void rs_match_replay(rs_match *m);
/* Stop checking: later lines are kept in the backlog again. */
void rs_match_detach(rs_match *m);
/* Check against ring again where the migrated state says we were. */
void rs_match_resume(rs_match *m, const rs_ring *ring);

/* A byte the guest sent; index is its number in the stream. */
void rs_match_byte(rs_match *m, uint8_t byte, uint64_t index, int64_t vt);

/* Does rs_match_byte() use vt for this byte (a line's first or last)? */
static inline bool rs_match_wants_time(const rs_match *m, uint8_t byte)
{
    return byte == '\n' || (m->len == 0 && !m->overlong && !m->cr);
}

/*
 * The guest stopped: judge the partial line, every record still in the
 * window and every record after the cursor (at most RS_MATCH_SKIP_READS
 * read, the rest missing unread).  Matching may go on afterwards.
 */
void rs_match_finish(rs_match *m, int64_t vt);

/* Judge now a line held back (a cut line) as what it looks like alone. */
void rs_match_flush(rs_match *m);

typedef struct rs_latency {
    uint64_t n, negative;
    int64_t min, p50, p99, max;     /* ns; p50/p99 within 1/16 */
    int64_t clock_offset;           /* -1: not known yet */
} rs_latency;

void rs_match_latency(const rs_match *m, rs_latency *out);

/*
 * Is the migrated part of m a state rs_match could have reached: indexes,
 * lengths, enums and every backlog entry in range?  If not, *why (if why)
 * names the field.  For a device's post_load: a stream is as hostile as
 * the guest.
 */
bool rs_match_state_ok(const rs_match *m, const char **why);

#endif /* RSLIB_MATCH_H */
