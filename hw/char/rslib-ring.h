/*
 * rslib-ring.h: the one decoder of the Linux (>= 5.10, checked against
 * 6.1) lockless printk ringbuffer, read from guest memory through a bounded
 * read callback: ring discovery from VMCOREINFO, per-record lockless reads,
 * an iterator with gap reporting, and console-style formatting.
 *
 * Part of rslib, the library in hw/char/rslib-* (this decoder, rslib-vmci,
 * rslib-match, rslib-l1) that the ringside-serial device, the host
 * collector and the fuzz and unit tests all link.  Its contract:
 *  - Plain C99 and the C library only: no QEMU and no GLib header
 *    (tests/unit/test_rslib_standalone.py holds each file to that; inside
 *    QEMU each .c includes qemu/osdep.h first, as QEMU requires, and
 *    nothing else of it).  No allocation and no global state: every
 *    buffer and all state are the caller's.
 *  - Guest memory is reached only through the caller's rs_read_fn, at most
 *    RS_READ_MAX bytes a call, and each read is charged to the caller's
 *    rs_budget if it has one.  A spent budget is reported (RS_ERR_BUDGET,
 *    rs_ring_budget_out()) so that the work is put off, not held against
 *    the guest.
 *  - Every guest value is hostile: sizes, offsets, indexes and pointers are
 *    checked before use, loops over guest data have fixed bounds
 *    (RS_NEXT_SCAN_MAX, the iterator's budget), and a bad value gives an
 *    error status or a verdict, never a crash or an unbounded wait.
 *
 * Ring facts (kernel/printk/printk_ringbuffer.[ch], 6.1):
 *  - state_var = state << 62 | id; state 0 reserved, 1 committed,
 *    2 finalized, 3 reusable; id mask ~(3 << 62).
 *  - descriptor/info index = id or seq & (2^count_bits - 1).
 *  - data block = 8-byte id + text, 8-aligned; DATA_INDEX(lpos) = lpos &
 *    (2^size_bits - 1), DATA_WRAPS(lpos) = lpos >> size_bits; a block whose
 *    begin and next are in different wraps has its data at index 0. From
 *    6.19 a block may end exactly at the ring end without wrapping (begin
 *    and next - 1 in the same wrap); both rules are read.
 *    lpos (1,1) FAILED_LPOS = data lost, (3,3) NO_LPOS = empty text.
 *  - printk_info: facility is the byte at text_len + 2, the byte at
 *    text_len + 3 holds flags (bits 0-4) and level (bits 5-7); neither is
 *    in VMCOREINFO, the other fields come from its OFFSET() lines.
 */
#ifndef RSLIB_RING_H
#define RSLIB_RING_H

#include "rslib-vmci.h"

/* Ring header bounds. The kernel caps log_buf_len at 2 GiB (LOG_BUF_LEN_MAX
 * = 1 << 31) with 32 bytes per descriptor on average (PRB_AVGBITS 5), so
 * size_bits <= 31 and count_bits <= 26. */
#define RS_SIZE_BITS_MIN        4
#define RS_SIZE_BITS_MAX        31
#define RS_COUNT_BITS_MIN       1
#define RS_COUNT_BITS_MAX       26

/* Retry bounds for values that move while the ring is written. */
#define RS_TAIL_TRIES           8   /* prb_first_seq()'s loop */
#define RS_NEXT_SCAN_MAX        256 /* records probed to locate the head */
#define RS_CHANGED_TRIES        3   /* iterator: re-reads of a CHANGED seq */

/*
 * How long a record can be on the console.  The kernel reads a record's
 * text into a buffer of this many bytes and formats it there for the
 * console (record_print_text(): the prefix on every line, a final '\n',
 * room for the NUL), dropping the lines that do not fit: see rs_format().
 *  - Up to 6.2, CONSOLE_LOG_MAX: 1024 bytes (6.1: kernel/printk/printk.c
 *    :392, the text[] of console_unlock() and console_emit_next_record()
 *    :2704-2756).  printk() stores at most LOG_LINE_MAX = 1024 - PREFIX_MAX
 *    bytes of text (:398, :2190), so only a record of several lines loses
 *    some.
 *  - From 6.3 ("printk: adjust string limit macros"), PRINTK_MESSAGE_MAX:
 *    2048 bytes (6.12: kernel/printk/internal.h:49), the outbuf of struct
 *    printk_buffers (:311) that printk_get_next_message() formats into
 *    (printk.c:2928-2971) for legacy consoles and, through
 *    nbcon_emit_next_record() (nbcon.c:996, :1042), for nbcon consoles'
 *    write_atomic() and write_thread() alike.  printk() stores at most
 *    PRINTKRB_RECORD_MAX = 1024 bytes of text (internal.h:52, printk.c
 *    :2236, /dev/kmsg :743), so a one-line record prints up to 1024 bytes
 *    plus its prefix, over 1 KiB.  A console notice (dropped records, a
 *    replay) is prepended in the same buffer, cutting the record short,
 *    mid-line and without its '\n', when both do not fit
 *    (console_prepend_message(), printk.c:2874-2877).
 * rs_ring_console_max() gives the limit of an opened ring's kernel.
 */
#define RS_CONSOLE_LOG_MAX      1024 /* up to 6.2: CONSOLE_LOG_MAX */
#define RS_PRINTK_MESSAGE_MAX   2048 /* from 6.3: PRINTK_MESSAGE_MAX */
/* The largest of them: a buffer that holds any kernel's console record. */
#define RS_CONSOLE_TEXT_MAX     RS_PRINTK_MESSAGE_MAX

/*
 * The console record limit of the kernel whose VMCOREINFO OSRELEASE is
 * osrelease: RS_PRINTK_MESSAGE_MAX from 6.3 on, RS_CONSOLE_LOG_MAX before,
 * and RS_CONSOLE_LOG_MAX when osrelease does not start with a version
 * (rs_osrelease_version()).
 */
uint32_t rs_console_log_max(const char *osrelease);

/* An opened ring: the layout and the header values that do not change. */
typedef struct rs_ring {
    rs_vm vm;
    rs_layout lay;
    uint64_t prb;               /* VA of struct printk_ringbuffer */
    uint32_t count_bits, size_bits;
    uint64_t count;             /* 2^count_bits descriptors */
    uint64_t data_size;         /* 2^size_bits bytes of text data */
    uint64_t descs, infos, data;/* VAs of the arrays */
    /*
     * The kernel's console record limit, rs_console_log_max() of the
     * OSRELEASE the ring was opened with; read it with
     * rs_ring_console_max().
     */
    uint32_t console_max;
} rs_ring;

/*
 * The console record limit to format r's records with (rs_format()'s
 * limit): RS_CONSOLE_LOG_MAX or RS_PRINTK_MESSAGE_MAX, never more than
 * RS_CONSOLE_TEXT_MAX.  RS_CONSOLE_LOG_MAX without a ring, or for one not
 * set up by rs_ring_open() / rs_ring_open_at().
 */
static inline uint32_t rs_ring_console_max(const rs_ring *r)
{
    if (r && r->console_max == RS_PRINTK_MESSAGE_MAX) {
        return RS_PRINTK_MESSAGE_MAX;
    }
    return RS_CONSOLE_LOG_MAX;
}

/*
 * Open the ring the kernel uses: read the pointer at SYMBOL(prb) with vm,
 * then as rs_ring_open_at(). vm is copied (set a CR3 on it first if
 * wanted). The arrays are not read here. A guest may switch prb from the
 * static to the dynamic ring early in boot (setup_log_buf): re-open if
 * the pointer changes.
 */
int rs_ring_open(rs_ring *r, const rs_vmci *vi, const rs_vm *vm,
                 char *err, size_t errlen);

/*
 * Open the printk_ringbuffer struct at VA prb_va (e.g. announced by a
 * cooperating guest). Checks count_bits/size_bits bounds and that the
 * arrays do not wrap the address space. RS_OK, RS_ERR_READ/XLATE or
 * RS_ERR_RING; err names the problem.  Sets the console record limit
 * from vi->osrelease (rs_console_log_max()).
 */
int rs_ring_open_at(rs_ring *r, const rs_vmci *vi, const rs_vm *vm,
                    uint64_t prb_va, char *err, size_t errlen);

/*
 * Has the read budget of r's reader run out (rs_vm.budget)?  Then a read
 * that failed says nothing about the ring: a BAD record or an error is to
 * be retried later, not held against the guest.
 */
static inline bool rs_ring_budget_out(const rs_ring *r)
{
    return r && rs_budget_out(r->vm.budget);
}

/* Moving header values, read on demand. */
typedef struct rs_ring_pos {
    uint64_t head_id, tail_id;  /* descriptor ids */
    uint64_t head_lpos, tail_lpos;
    uint64_t fail;              /* reservations that got no descriptor */
} rs_ring_pos;

int rs_ring_pos_read(const rs_ring *r, rs_ring_pos *pos);

/*
 * Oldest seq still in the ring, as prb_first_seq(): the seq of the tail
 * descriptor (which must be finalized or reusable), retried at most
 * RS_TAIL_TRIES times while the tail moves. RS_OK, RS_ERR_READ/XLATE,
 * RS_ERR_RACE.
 */
int rs_ring_first_seq(const rs_ring *r, uint64_t *seq);

/*
 * The seq after the newest readable record: the head descriptor's seq
 * (from tail seq + head_id - tail_id) plus one, walking back over
 * not-yet-finalized records at the head and forward over records
 * finalized meanwhile, at most RS_NEXT_SCAN_MAX probes. An unfinalized
 * record further back than the head is found by the iterator (it stops
 * with NOT_YET) rather than here.
 */
int rs_ring_next_seq(const rs_ring *r, uint64_t *seq);

typedef enum rs_rec_status {
    RS_REC_OK,          /* finalized record copied */
    RS_REC_NODATA,      /* exists, no text: reusable or FAILED_LPOS */
    RS_REC_NOT_YET,     /* reserved/committed, or beyond the head */
    RS_REC_GONE,        /* overwritten: seq is older than the ring */
    RS_REC_CHANGED,     /* state or seq changed while copying: retry */
    RS_REC_BAD,         /* invariant broken / unreadable; see reason */
} rs_rec_status;

const char *rs_rec_status_name(rs_rec_status st);

/*
 * printk_info.flags bits (enum printk_info_flags). 6.1 and 6.12 define only
 * NEWLINE and CONT; FORCE_CON came with 6.13 (ed76c07c6885) for records
 * the console prints whatever its loglevel (sysrq output, for one).
 */
#define RS_LOG_FORCE_CON    1u  /* 6.13+: printed regardless of loglevel */
#define RS_LOG_NEWLINE      2u  /* the text ended with a newline */
#define RS_LOG_CONT         8u  /* a fragment of a continuation line */

#define RS_SUBSYS_MAX   48
#define RS_DEVICE_MAX   64

typedef struct rs_record {
    uint64_t seq;
    uint64_t ts_nsec;
    uint64_t id;                /* descriptor id */
    uint32_t caller_id;         /* bit 31: CPU number, else task pid */
    uint8_t level, facility, flags;    /* flags: RS_LOG_* */
    bool force_con;             /* flags & RS_LOG_FORCE_CON */
    uint16_t text_len;          /* length stored in the ring */
    size_t text_copied;         /* bytes copied into text */
    bool truncated;             /* text_len > caller's capacity */
    char *text;                 /* caller's buffer (not NUL-terminated
                                 * when text_copied == capacity) */
    char subsystem[RS_SUBSYS_MAX + 1];  /* dev_info, NUL-terminated */
    char device[RS_DEVICE_MAX + 1];
    uint64_t lpos_begin, lpos_next;
    const char *reason;         /* static string for non-OK results */
} rs_record;

/*
 * Read record seq as a lockless reader: load state_var, check it is
 * finalized with the id and info.seq expected, copy lpos, info and text,
 * then load state_var and info.seq again (CHANGED if either moved).
 * Validates every data-block rule (alignment, size >= 8, text_len <= block,
 * block inside the ring, block id == descriptor id). text may be NULL with
 * cap 0 (metadata only). Metadata in rec is valid for OK and NODATA.
 */
rs_rec_status rs_ring_read(const rs_ring *r, uint64_t seq, rs_record *rec,
                           char *text, size_t cap);

/* rs_ring_read(), retried at most RS_CHANGED_TRIES times while CHANGED. */
rs_rec_status rs_ring_read_settled(const rs_ring *r, uint64_t seq,
                                   rs_record *rec, char *text, size_t cap);

/* Iterator events */
typedef enum rs_iter_ev {
    RS_IT_RECORD,       /* rec holds the record (rec->seq) */
    RS_IT_NODATA,       /* only with RS_ITER_NODATA: data-less record */
    RS_IT_GAP,          /* [gap_first, gap_first + gap_count) were lost */
    RS_IT_BAD,          /* rec->seq is broken (rec->reason); skipped */
    RS_IT_END,          /* reached end or a NOT_YET record; it->seq is
                         * where to resume */
    RS_IT_LIMIT,        /* iteration budget used up */
} rs_iter_ev;

#define RS_ITER_NODATA  1u  /* report data-less records instead of skipping */

typedef struct rs_iter {
    const rs_ring *ring;
    uint64_t seq;               /* next seq to read */
    uint64_t end;               /* exclusive; UINT64_MAX: until NOT_YET */
    uint64_t budget;            /* remaining ring reads */
    unsigned flags;
    uint64_t gap_first, gap_count;  /* for RS_IT_GAP */
    uint64_t n_records, n_nodata, n_lost, n_bad, n_changed;  /* totals */
} rs_iter;

/*
 * Iterate [from, end). budget caps the total number of record reads
 * (each rs_iter_next consumes at least one unless END/LIMIT); e.g. a few
 * times the number of records expected.
 */
void rs_iter_init(rs_iter *it, const rs_ring *r, uint64_t from, uint64_t end,
                  uint64_t budget, unsigned flags);

rs_iter_ev rs_iter_next(rs_iter *it, rs_record *rec, char *text, size_t cap);

/* rs_format() flags */
#define RS_FMT_TIME     1u  /* "[%5lu.%06lu]" (printk.time=1) */
#define RS_FMT_CALLER   2u  /* "[%6s]" of T<pid>/C<cpu> (PRINTK_CALLER) */
#define RS_FMT_SYSLOG   4u  /* "<%u>" of facility << 3 | level */

/*
 * Format rec's copied text as the kernel console does (record_print_text):
 * the prefix (syslog, time, caller, then one space if time or caller) on
 * every line of a multi-line record, and a final '\n'. limit > 0 applies
 * the kernel's console buffer rules for a buffer of limit bytes (use
 * rs_ring_console_max() of the record's ring: the kernel's own limit):
 * text beyond limit is ignored, lines that do not fit are dropped, output
 * <= limit - 1. limit == 0: no such limit.  A buffer of
 * RS_CONSOLE_TEXT_MAX bytes holds the output of any kernel's limit.
 * Like snprintf: writes at most cap - 1 bytes plus a NUL to out (out may be
 * NULL with cap 0) and returns the full formatted length.
 */
size_t rs_format(const rs_record *rec, unsigned flags, size_t limit,
                 char *out, size_t cap);

/* Length of the common prefix of a[0..an) and b[0..bn). */
static inline uint32_t rs_common_prefix(const uint8_t *a, uint32_t an,
                                        const char *b, uint32_t bn)
{
    uint32_t i = 0;

    while (i < an && i < bn && a[i] == (uint8_t)b[i]) {
        i++;
    }
    return i;
}

/*
 * Console bytes of len that first differ from a record's at offset at,
 * with got where the record has want: were they stopped between the "\r"
 * and the "\n" the driver sends for the record's "\n"?  Then they are a
 * prefix of what the console sends, cut, not damaged.
 */
static inline bool rs_cut_at_crlf(int64_t at, uint64_t len, int got, int want)
{
    return got == '\r' && want == '\n' && at >= 0 && (uint64_t)at + 1 == len;
}

/*
 * The console loglevel inferred from what the console printed: for each
 * level, the lowest seq it printed at that level (UINT64_MAX: none).
 */
#define RS_LEVELS 8

static inline void rs_levels_reset(uint64_t *first_seq)
{
    int i;

    for (i = 0; i < RS_LEVELS; i++) {
        first_seq[i] = UINT64_MAX;
    }
}

static inline void rs_levels_printed(uint64_t *first_seq, int level,
                                     uint64_t seq)
{
    if (level >= 0 && level < RS_LEVELS && seq < first_seq[level]) {
        first_seq[level] = seq;
    }
}

/*
 * rs_levels_printed() for a record with printk_info flags: a record the
 * kernel forced to the console (RS_LOG_FORCE_CON) says nothing about the
 * console loglevel, so it is not counted.
 */
static inline void rs_levels_printed_flags(uint64_t *first_seq, int level,
                                           unsigned flags, uint64_t seq)
{
    if (!(flags & RS_LOG_FORCE_CON)) {
        rs_levels_printed(first_seq, level, seq);
    }
}

/*
 * Did the console print nothing of record seq at level?  loglevel > 0 is
 * the guest's console_loglevel; 0 infers it: seq was printable if the
 * console printed a record at that level or a more verbose one before it.
 * Judging by what came before, not by all printed so far, matters: panic()
 * makes the console verbose, and debug records it then prints do not make
 * those it rightly skipped earlier missing. Blind to RS_LOG_FORCE_CON: use
 * the _flags variants below where the record's flags are known.
 */
static inline bool rs_console_filtered(int loglevel, const uint64_t *first_seq,
                                       int level, uint64_t seq)
{
    int l;

    if (loglevel > 0) {
        return level >= loglevel;
    }
    for (l = level < 0 ? 0 : level; l < RS_LEVELS; l++) {
        if (first_seq[l] < seq) {
            return false;
        }
    }
    return true;
}

/*
 * rs_console_filtered() for a record with printk_info flags (rs_record
 * .flags): a RS_LOG_FORCE_CON record is never filtered, whatever the level.
 */
static inline bool rs_console_filtered_flags(int loglevel,
                                             const uint64_t *first_seq,
                                             int level, unsigned flags,
                                             uint64_t seq)
{
    if (flags & RS_LOG_FORCE_CON) {
        return false;
    }
    return rs_console_filtered(loglevel, first_seq, level, seq);
}

/*
 * Lines the kernel writes to a console that are not ring records. None has
 * a console prefix ("[ts] "), with any printk.time or console_msg_format.
 */
typedef enum rs_console_notice {
    RS_NOTICE_NONE = 0,     /* none of those below */
    /*
     * "** %lu printk messages dropped **": records the console skipped
     * because they were overwritten first (6.1: printk.c:1971; 6.12:
     * printk.c:2895, written with the next record, or alone by an nbcon
     * console when that record is below the loglevel). *count = N.
     */
    RS_NOTICE_DROPPED,
    /*
     * "** replaying previous printk message **": an nbcon console took
     * over from a context that had started the same record and prints it
     * again whole, after this line (6.12: printk.c:2906, nbcon.c:1018; on
     * RT kernels and on nbcon drivers from 7.3 [expected]). *count = 0.
     */
    RS_NOTICE_REPLAYING,
    /*
     * "perf: interrupt took too long (A > B), lowering
     * kernel.perf_event_max_sample_rate to N": written by early_printk()
     * straight to the early console, no prefix, when booted with
     * earlyprintk= (kernel/events/core.c; the same text is also a record).
     * *count = N (0 if negative).
     */
    RS_NOTICE_PERF_EARLY,
} rs_console_notice;

/*
 * Classify the console line p[0..n), given without its line ending (the
 * "\r\n" the 8250 writes). count may be NULL; *count is set for every
 * result (0 unless stated above). The match is exact, as the kernel
 * formats the line: digits without leading zeros, no padding.
 */
rs_console_notice rs_parse_console_notice(const uint8_t *p, size_t n,
                                          uint64_t *count);

/*
 * Could p[0..n) be the start of a "** ... **" notice above, cut short (the
 * guest stopped while the console wrote it)?  At least "** " and one more
 * byte, which agree with the notice's text so far; a whole notice is its
 * own start too.  Which one, or RS_NOTICE_NONE.
 */
rs_console_notice rs_console_notice_cut(const uint8_t *p, size_t n);

/* "none", "dropped", "replaying", "perf-early"; "?" for other values. */
const char *rs_console_notice_name(rs_console_notice k);

/*
 * Is p[0..n) the console's "** N printk messages dropped **" line (without
 * its newline)?  Sets *count to N. Same as rs_parse_console_notice() ==
 * RS_NOTICE_DROPPED.
 */
bool rs_parse_dropped_notice(const uint8_t *p, size_t n, uint64_t *count);

#endif /* RSLIB_RING_H */
