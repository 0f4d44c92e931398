/*
 * rslib-l1.h: judge console records bracketed by a cooperating kernel
 * (level 1) against the printk ring that holds them.
 *
 * A kernel with the ringside handshake (guest-kernel/VERSION/patches) writes
 * begin(seq) before each record it prints on the console and end(seq)
 * after it, each marker one 32-bit I/O write.  The device tells us which
 * vCPU wrote each marker and each byte, so every console byte is
 * attributed to an exact record and CPU.  Per vCPU, brackets nest (an NMI
 * printing inside a record being printed); a begin on one vCPU while
 * another has a bracket open is a takeover (the other CPU was stopped or
 * timed out mid-record).
 *
 * Each bracket is judged when it ends (or, still open, when the guest
 * stops): its bytes against the record's console text, as the kernel's
 * record_print_text() makes it.  Because the console prints records in seq
 * order, the records between two brackets are exactly those it skipped:
 * each is judged filtered (below the console loglevel), dropped (the
 * kernel said so), cut or damaged (only part of it, or a damaged copy,
 * reached the wire) or missing.
 *
 * Plain C99 like the decoder: no QEMU, no GLib, no allocation, fields that
 * a device can migrate, a bounded number of ring reads per bracket.
 */
#ifndef RSLIB_L1_H
#define RSLIB_L1_H

#include "rslib-ring.h"
#include "rslib-events.h"

/*
 * Writers with their own brackets: accesses not made by a vCPU (cpu -1,
 * e.g. qtest) and vCPUs 0..15; bytes of others are unattributed.
 */
#define RS_L1_SLOTS     17
#define RS_L1_NOBODY    (-2)    /* by_cpu: not taken over */
/* Nesting per vCPU: task, softirq, hardirq, NMI. */
#define RS_L1_DEPTH     4
/* Console bytes kept per bracket (the kernel prints < its console limit,
 * at most RS_CONSOLE_TEXT_MAX: rs_ring_console_max()). */
#define RS_L1_TEXT      RS_CONSOLE_TEXT_MAX
/* Records cut or damaged on the wire, remembered until judged. */
#define RS_L1_PARTIAL   8
/* Records below the next expected one whose verdict is remembered. */
#define RS_L1_WINDOW    256
/* Ring reads per skipped stretch; the rest is judged without reading. */
#define RS_L1_SKIP_READS 4096


typedef struct rs_l1_frame {
    uint64_t seq;
    uint64_t first, last;       /* byte indexes; valid when nbytes */
    uint64_t nbytes;            /* bytes attributed (CRs and lost ones too) */
    int64_t vt;                 /* virtual ns of begin, then of end */
    uint64_t by_seq;            /* taken: the record that took over */
    int32_t by_cpu;             /* taken: its vCPU; RS_L1_NOBODY */
    uint32_t len;               /* bytes kept in text */
    uint8_t cr;                 /* a '\r' held back */
    uint8_t overlong;           /* more than RS_L1_TEXT bytes */
    uint8_t nested;             /* a bracket began inside it on its vCPU */
    uint8_t lost;               /* bytes of it did not reach the wire */
    uint8_t text[RS_L1_TEXT];
} rs_l1_frame;

typedef struct rs_l1_bracket_info {
    rs_l1_bracket_verdict verdict;
    uint64_t seq;
    int cpu;
    uint64_t first, last;       /* has_bytes */
    bool has_bytes;
    int64_t vt;                 /* of end; of begin if it never ended */
    uint32_t len;               /* bytes judged, CR before LF not counted */
    bool open;                  /* never ended: judged at the stop */
    bool nested;                /* interrupted on its own vCPU */
    bool taken;                 /* another vCPU began while it was open */
    uint64_t by_seq;
    int by_cpu;
    int32_t at, want, got;      /* CORRUPT (-1: no byte) */
    uint64_t count;             /* NOTICE: N */
    rs_l1_why why;              /* UNCHECKED: why */
} rs_l1_bracket_info;

typedef struct rs_l1_record_info {
    rs_l1_record_verdict verdict;
    uint64_t seq, count;        /* count consecutive records from seq */
    int level;                  /* -1: unread or mixed */
} rs_l1_record_info;

typedef void (*rs_l1_bracket_fn)(void *opaque, const rs_l1_bracket_info *bi);
typedef void (*rs_l1_record_fn)(void *opaque, const rs_l1_record_info *ri);

typedef struct rs_l1 {
    /* set by rs_l1_init() / rs_l1_attach(); not migrated */
    const rs_ring *ring;
    rs_l1_bracket_fn on_bracket;
    rs_l1_record_fn on_record;
    void *opaque;
    int loglevel;               /* console_loglevel, 0: infer */
    /*
     * No ring because the one there is distrusted (rs_l1_distrust()):
     * every bracket is judged UNCHECKED until a ring is attached again.
     */
    bool distrusted;

    rs_l1_frame frames[RS_L1_SLOTS * RS_L1_DEPTH];  /* [slot][depth] */
    uint8_t depth[RS_L1_SLOTS];

    bool started;               /* a bracket was judged against the ring */
    uint64_t next;              /* the next seq the console should print */
    uint64_t level_seq[RS_LEVELS];      /* rs_levels_printed() */
    uint8_t fmt_flags;          /* RS_FMT_* that matched last */
    uint64_t dropped_credit;    /* records the kernel said it dropped */
    uint64_t partial_seq[RS_L1_PARTIAL];
    uint8_t partial_kind[RS_L1_PARTIAL];    /* RS_R_CUT or RS_R_DAMAGED */
    uint8_t window[RS_L1_WINDOW];   /* by seq % WINDOW: verdict + 1 */

    uint64_t brackets[RS_B_COUNT];
    uint64_t records[RS_R_COUNT];
    uint64_t takeovers;
    uint64_t unattributed;      /* console bytes outside any bracket */
    /*
     * Those are user space's: its lines, counted as level 0 counts them
     * (a line ends at '\n', or where a bracket begins after a prompt).
     */
    uint64_t user_lines;
    /*
     * Brackets judged UNCHECKED and skipped records not judged because
     * the reader's budget ran out (rs_vm.budget).  Not migrated.
     */
    uint64_t under_budget;
    /*
     * Brackets judged UNCHECKED because the ring was distrusted (of
     * brackets[RS_B_UNCHECKED]).
     */
    uint64_t untrusted;
    bool user_open;             /* a user space line is under way */
    /*
     * The kernel wrote "** replaying previous printk message **": the next
     * record comes again, and is no duplicate.  Not migrated.
     */
    bool replay;
} rs_l1;

void rs_l1_init(rs_l1 *l, int loglevel, rs_l1_bracket_fn on_bracket,
                rs_l1_record_fn on_record, void *opaque);
/* Judge against ring from now on (kept by pointer); NULL: no ring. */
void rs_l1_attach(rs_l1 *l, const rs_ring *ring);
/*
 * The ring is there but breaks its rules (the device's level 0 distrusts
 * it): judge nothing against it.  Every bracket is UNCHECKED, "untrusted",
 * and no record is judged, until rs_l1_attach() gives a ring again.
 */
void rs_l1_distrust(rs_l1 *l);
/*
 * A ring attached anew (a new note, or the same ring found again after it
 * was lost or distrusted): forget the console's position and what was
 * judged below it, so that nothing from before is judged against it.
 * Open brackets and the counters are kept.
 */
void rs_l1_restart(rs_l1 *l);
/* A new boot: forget brackets and position, keep the counters. */
void rs_l1_reset(rs_l1 *l);

/*
 * Markers from vCPU cpu (-1: not a vCPU) at virtual time vt.  begin carries
 * the low 32 bits of the record's seq, and returns false when cpu is out of
 * range or its nesting is full (the bracket is not kept).  end closes the
 * innermost bracket of cpu, whatever seq the guest sent with it.
 */
bool rs_l1_begin(rs_l1 *l, int cpu, uint32_t seq_lo, int64_t vt);
void rs_l1_end(rs_l1 *l, int cpu, int64_t vt);

/*
 * A console byte from vCPU cpu (-1: not a vCPU).  lost: it did not reach
 * the wire (a paced transmitter overrun).  Returns whether a bracket took
 * it.
 */
bool rs_l1_byte(rs_l1 *l, int cpu, uint8_t byte, uint64_t index, bool lost);

/* The guest stopped: judge open brackets and the records not printed. */
void rs_l1_finish(rs_l1 *l);

/* Is any bracket open? */
bool rs_l1_busy(const rs_l1 *l);

/*
 * Is the migrated part of l a state rs_l1 could have reached: indexes,
 * lengths and enums in range?  If not, *why (if why) names the field.
 * For a device's post_load: a stream is as hostile as the guest.
 */
bool rs_l1_state_ok(const rs_l1 *l, const char **why);

#endif /* RSLIB_L1_H */
