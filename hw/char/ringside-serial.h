/*
 * ringside-serial: the device's state and what its parts call of each
 * other: ringside-serial.c (the UART front, the events chardev, realize,
 * reset, migration), -pace.c (the line-rate transmitter), -attach.c
 * (finding the guest's ring), -verify.c (level 0), -ext.c (level 1 and
 * the handshake) and -loadtest.c (x-load-state, under qtest only).
 *
 * Copyright (c) 2026 The ringside authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_CHAR_RINGSIDE_SERIAL_H
#define HW_CHAR_RINGSIDE_SERIAL_H

#include "chardev/char-fe.h"
#include "hw/char/serial.h"
#include "hw/isa/isa.h"
#include "qom/object.h"
#include "hw/char/ringside-compat.h"
#include "rslib-match.h"
#include "rslib-l1.h"

#define TYPE_RINGSIDE_SERIAL "ringside-serial"
OBJECT_DECLARE_SIMPLE_TYPE(RingsideSerialState, RINGSIDE_SERIAL)

/*
 * Bound on records queued while the events backend is not writable.  At
 * about 80 bytes a record this holds some 50,000 bytes of console output.
 */
#define RINGSIDE_EVENTS_QUEUE_MAX (4 * MiB)

/* The 16550 registers and bits this device looks at. */
#define RS_REG_THR      0
#define RS_REG_IER      1
#define RS_REG_IIR      2       /* read */
#define RS_REG_FCR      2       /* write */
#define RS_REG_LCR      3
#define RS_REG_LSR      5
#define RS_REG_SCR      7
#define RS_IER_THRI     0x02
#define RS_IIR_ID       0x0f
#define RS_IIR_NO_INT   0x01
#define RS_IIR_MSI      0x00
#define RS_IIR_THRI     0x02
#define RS_FCR_FE       0x01
#define RS_FCR_XFR      0x04
#define RS_LCR_DLAB     0x80
#define RS_LSR_THRE     0x20
#define RS_LSR_TEMT     0x40
#define RS_MCR_LOOP     0x10

enum {
    RS_RING_NONE,       /* no ring found yet ("no ring yet") */
    RS_RING_ATTACHED,
    RS_RING_UNTRUSTED,  /* the note or the ring it names breaks the rules */
};
extern const char *const ringside_ring_state_names[];

/* Kinds of work metered (ringside_cost_begin()). */
enum {
    RS_COST_ACCESS,     /* one register access of the guest's */
    RS_COST_TICK,       /* one timer callback (or loadvm, reset) */
    RS_COST_KINDS
};
/*
 * pace=line: reads a second of line time may make, all actions together.
 * Set by bench/hostile_cost.py's "pace-line" case, the worst a guest can
 * make a read cost (a ring behind four-level page walks): the device's
 * main-loop time stays within 10% of the line's time (docs/device.md).
 */
#define RS_LINE_READ_RATE 500000

/* Bytes a read budget allows per read, on average. */
#define RS_BUDGET_BYTES_PER_READ    128
/* Guest error causes tracked one by one; the rest share a slot. */
#define RS_GLOG_CAUSES  32

/* A 16550A's transmit FIFO. */
#define RS_TX_FIFO      16

/*
 * A console line as it reached the wire: what its "line" event says of
 * its bytes.  Kept for the lines the checker may still report (it holds
 * lines back until the ring is found: at most RS_MATCH_BACKLOG bytes of
 * them, some 7,300 lines, and one cut line).
 */
typedef struct RsLineStamp {
    uint64_t first, last;       /* byte indexes */
    int64_t vt0, vt1;           /* virtual ns of the THR writes */
    int64_t wt0, wt1;           /* virtual ns they left the wire */
    int cpu;                    /* the first byte's writer, -1 not a vCPU */
    bool cpus;                  /* several vCPUs wrote it */
    bool cr;                    /* its last byte before '\n' is '\r' */
    uint32_t n;                 /* bytes on the wire */
} RsLineStamp;
#define RS_LINE_STAMPS_MAX      16384

struct RingsideSerialState {
    ISADevice parent_obj;

    SerialState serial;
    MemoryRegion io;

    uint32_t index;
    uint32_t iobase;
    uint32_t isairq;
    char *pace_mode;
    bool tx_events;             /* tx-events=: a "tx" event per byte */
    /* the line reaching the wire, and the last lines that did */
    RsLineStamp line_cur;
    bool line_open;             /* line_cur has its first byte */
    GArray *line_stamps;        /* RsLineStamp, by first */
    CharBackend events;

    /*
     * Records not yet accepted by the events backend: queue->data from
     * queue_head on (written bytes are dropped from the front in bulk).
     */
    GByteArray *queue;
    size_t queue_head;
    guint watch_tag;
    /*
     * A backend that says it is writable and then takes nothing (a full
     * disk, a pipe nobody reads) is retried on a timer that backs off;
     * stalled that long, the queue is dropped and counted.
     */
    QEMUTimer *events_retry;
    int64_t events_backoff_ns;
    int64_t events_stall_start;     /* realtime ns; 0: not stalled */
    bool events_partial;        /* the backend has part of a record */
    /* Records dropped since the last "lost" record was written. */
    uint64_t unreported_drops;
    /*
     * For a reader that joins the stream late (a socket chardev's client,
     * reconnected): the run's "start" record, the "line" records made so
     * far (written or dropped), and those dropped since the last "lost".
     */
    char *start_record;
    uint64_t lines_emitted;
    uint64_t unreported_lines;

    /* Counters, exported read-only as QOM properties. */
    uint64_t tx_bytes;
    uint64_t events_written;
    uint64_t events_dropped;
    uint64_t tx_overruns;
    uint64_t tx_refused;
    uint64_t tx_cleared;
    uint64_t tx_sent;           /* the console chardev took; not migrated */
    uint64_t events_write_tries;    /* backend writes attempted */
    uint64_t events_write_fails;    /* of them, those that took nothing */

    /*
     * What one guest action (a register access) or one timer tick may
     * cost: a guest-memory read budget, charged by the reader
     * (ringside-serial-attach.c), and the host time it took, the worst kept per
     * kind (QOM "cost-*").  Work the budget does not cover is put off to
     * a later tick or judged "under budget", never blamed on the guest.
     */
    uint32_t access_reads;          /* read-budget=: reads per access */
    uint32_t tick_reads;            /* tick-read-budget=: per timer tick */
    rs_budget budget;
    int cost_depth;
    int cost_kind;
    int64_t cost_start, cost_start_cpu;    /* -1: not metered (yet) */
    int64_t cost_wall_ns;           /* wall time before cost_start_cpu */
    uint32_t cost_sample;           /* actions begun, for the sampling */
    uint64_t cost_max_ns[RS_COST_KINDS];        /* wall */
    uint64_t cost_max_cpu_ns[RS_COST_KINDS];    /* this thread's CPU */
    uint64_t cost_max_reads[RS_COST_KINDS];
    uint64_t budget_out[RS_COST_KINDS];     /* actions that spent it all */
    uint64_t cost_sum_cpu_ns[RS_COST_KINDS];    /* all metered, summed */
    uint64_t cost_sum_reads[RS_COST_KINDS];
    /*
     * pace=line: the reads all actions together may make, earned with the
     * line's virtual time (line-read-rate= a second, at most a tick's
     * budget saved up), so the device's share of the main loop is bounded
     * per second of line, not only per action.  Not migrated: a loaded
     * device starts with a full bucket.
     */
    uint32_t line_read_rate;        /* line-read-rate=: reads a second */
    uint64_t rate_credit;           /* earned, unspent: reads x 10^9 */
    int64_t rate_vt;                /* virtual ns it was last topped up */
    bool rate_cut;                  /* this action's budget was cut */
    uint64_t rate_limited;          /* actions it cut that ran out */

    /* guest errors logged with -d guest_errors, rate-limited per cause */
    struct {
        const char *cause;
        int64_t last;               /* realtime ns of the last line */
        uint64_t held;              /* not logged since */
    } glog[RS_GLOG_CAUSES];
    uint64_t guest_errors, guest_errors_logged;

    /*
     * This device, not the embedded UART, runs the transmitter (at the
     * line rate with pace=line, instantly with pace=off).  The UART never
     * sees THR writes or IER.THRI; its interrupt output goes to
     * pace_uart_irq() and is combined here with the THRE interrupt.
     */
    bool pace;                  /* pace=line */
    qemu_irq irq;               /* the ISA interrupt line */
    bool uart_irq_level;
    uint8_t ier;                /* what the guest wrote to IER */
    bool thri_pending;
    uint8_t txq[RS_TX_FIFO];    /* bytes waiting for the shift register */
    uint64_t txq_index[RS_TX_FIFO];   /* their byte indexes (events "i") */
    int64_t txq_vt[RS_TX_FIFO];       /* when written, not migrated */
    int txq_cpu[RS_TX_FIFO];          /* by which vCPU, not migrated */
    uint8_t txq_head, txq_len;
    bool tsr_busy;              /* a byte is on the wire */
    uint8_t tsr;
    uint64_t tsr_index;
    int64_t tsr_vt;
    int tsr_cpu;
    uint8_t tsr_retries;        /* 1: the byte waits for its chardev */
    int64_t tsr_end;            /* virtual ns: the byte is out (or retried) */
    int64_t tsr_hold_start;     /* virtual ns: the chardev first refused it */
    QEMUTimer *tx_timer;
    bool pace_loaded;           /* the incoming stream had the pace state */
    /*
     * A load began and has not ended well: what it left is not trusted
     * (ringside_load_forget() on the next use).
     */
    bool load_incomplete;
    VMChangeStateEntry *load_vmse;
    bool divisor0_logged, overrun_logged;

    /* Level 0: the guest's printk ring (ringside-serial-attach.c). */
    bool ring_auto;
    char *ring_mode;
    int ring_state;
    QEMUTimer *ring_timer;
    uint64_t scan_gpa;          /* where the note scan goes on next tick */
    uint64_t scan_deferred;     /* ticks that ran out of budget scanning */
    rs_vmci vmci;
    rs_ring ring;
    uint64_t note_gpa;
    uint32_t note_len;          /* the note text we attached with */
    char note_text[RS_VMCI_TEXT_MAX];

    /* Level 0: console lines judged by the ring (ringside-serial-verify.c) */
    uint32_t loglevel;          /* console_loglevel; 0: infer it */
    bool verify_dirty;          /* lines or records judged since summary */
    VMChangeStateEntry *vmse;
    rs_verdict_info pending_record;     /* a run of records, not migrated */
    rs_match match;

    /* Level 1: the extension window (ringside-serial-ext.c), ext=. */
    uint32_t ext_base;          /* its I/O base; 0: none */
    MemoryRegion ext_io;
    uint8_t ext_knock;          /* bytes of the key written to SCR */
    uint8_t ext_answer;         /* next SCR read answers byte n - 1 */
    bool ext_announced;         /* the guest announced its ring */
    bool ext_marked;            /* a record marker came since reset */
    bool ext_cpu_logged;
    uint64_t ext_note;          /* the announced note's address */
    uint64_t ext_arg[RS_L1_SLOTS];      /* argument latch per writer */
    char *mailbox;              /* mailbox=: text for the guest, not migrated */
    size_t mailbox_pos;         /* next byte the guest reads, not migrated */
    uint64_t mailbox_waits;     /* reads that found the mailbox empty */
    rs_l1 l1;
    /*
     * Without tx-events, consecutive ok brackets of one vCPU, each after
     * the other on the wire, make one "bracket" event with "count": held
     * here until the run breaks or the guest stops.  Not migrated.
     */
    rs_l1_bracket_info ok_run;
    uint64_t ok_run_count;
};

/* ringside-serial.c */
/*
 * Write event @ev: {"v":RS_EVENTS_VERSION,"ev":"NAME" then @fields (each
 * ",\"member\":value", printf-style), then "}\n".
 */
void ringside_event(RingsideSerialState *s, rs_event ev, const char *fields,
                    ...) G_GNUC_PRINTF(3, 4);
/* Loading state: refuse it (names the field), leave fresh values behind. */
int ringside_load_refuse(RingsideSerialState *s, const char *why);
void ringside_load_forget(RingsideSerialState *s);
/* A byte reached the wire at @wt: account it to its console line. */
void ringside_line_byte(RingsideSerialState *s, uint8_t byte, uint64_t index,
                        int64_t vt, int64_t wt, int cpu);
/* The line holding byte @first, or NULL if it is not known. */
const RsLineStamp *ringside_line_stamp(RingsideSerialState *s,
                                       uint64_t first);
/* Its "line" event fields after "last" ("vt" ... "cpus"), into @buf. */
int ringside_line_fields(RingsideSerialState *s, char *buf, size_t size,
                         uint64_t first, uint64_t last, int64_t vt);

/* ringside-serial-pace.c: the transmitter, in both pacing modes. */
void ringside_pace_realize(RingsideSerialState *s);
void ringside_pace_unrealize(RingsideSerialState *s);
void ringside_pace_reset(RingsideSerialState *s);
bool ringside_pace_thr_write(RingsideSerialState *s, uint8_t byte,
                             uint64_t index);
uint64_t ringside_pace_read(RingsideSerialState *s, hwaddr addr);
void ringside_pace_write(RingsideSerialState *s, hwaddr addr, uint8_t val);
extern const VMStateDescription vmstate_ringside_pace;

/*
 * ringside-serial-attach.c: the per-action read budget and cost meter, and
 * guest error logging rate-limited per cause.  begin/end nest; the
 * outermost pair sets the budget and times the work.
 */
void ringside_cost_begin(RingsideSerialState *s, int kind);
void ringside_cost_end(RingsideSerialState *s);
void ringside_cost_add_props(Object *obj);
void ringside_guest_error(RingsideSerialState *s, const char *cause,
                          const char *fmt, ...) G_GNUC_PRINTF(3, 4);

/* ringside-serial-loadtest.c: x-load-state, under the qtest accelerator */
void ringside_loadtest_add_props(Object *obj);

/* ringside-serial-attach.c: finding the guest's ring, if s->ring_auto. */
void ringside_attach_realize(RingsideSerialState *s);
void ringside_attach_unrealize(RingsideSerialState *s);
void ringside_attach_reset(RingsideSerialState *s);
bool ringside_attach_note_unchanged(RingsideSerialState *s);
void ringside_attach_restart(RingsideSerialState *s, const char *why);
void ringside_attach_untrusted(RingsideSerialState *s, const char *why);
void ringside_attach_post_load(RingsideSerialState *s);

/* ringside-serial-ext.c: the level 1 window, used when s->ext_base. */
bool ringside_ext_realize(RingsideSerialState *s, Error **errp);
void ringside_ext_reset(RingsideSerialState *s);
void ringside_ext_scr_write(RingsideSerialState *s, uint8_t val);
bool ringside_ext_scr_read(RingsideSerialState *s, uint64_t *val);
void ringside_ext_byte(RingsideSerialState *s, uint8_t byte, uint64_t index,
                       bool lost);
void ringside_ext_ring(RingsideSerialState *s, const rs_ring *ring,
                       bool resumed);
void ringside_ext_untrusted(RingsideSerialState *s);
void ringside_ext_finish(RingsideSerialState *s);
void ringside_ext_add_props(Object *obj);
void ringside_ext_forget(RingsideSerialState *s);
/* Write the run of ok brackets held back, if any. */
void ringside_ext_flush(RingsideSerialState *s);
extern const VMStateDescription vmstate_ringside_ext;
void ringside_attach_announced(RingsideSerialState *s);

/* ringside-serial-verify.c: judging console lines, used when s->ring_auto. */
void ringside_verify_realize(RingsideSerialState *s);
void ringside_verify_unrealize(RingsideSerialState *s);
void ringside_verify_reset(RingsideSerialState *s);
void ringside_verify_byte(RingsideSerialState *s, uint8_t byte,
                          uint64_t index, int64_t vt);
void ringside_verify_attached(RingsideSerialState *s, bool resumed);
void ringside_verify_add_props(Object *obj);
void ringside_verify_forget(RingsideSerialState *s);
extern const VMStateDescription vmstate_ringside_verify;

#endif
