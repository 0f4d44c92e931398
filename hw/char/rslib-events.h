/*
 * rslib-events.h: the contract between ringside-serial and what reads its
 * events (the collector, the tests): the JSON Lines schema version, the
 * event types, and every verdict, each an enum with its name on the wire.
 *
 * The device writes {"v":RS_EVENTS_VERSION,"ev":rs_event_name(ev),...}
 * and verdicts by these names; the collector reads them back through the
 * same tables.  A name changes here or nowhere.
 *
 * Plain C99, no QEMU, no GLib.
 */
#ifndef RSLIB_EVENTS_H
#define RSLIB_EVENTS_H

/*
 * Version of the schema.  3: a console line's event says when its bytes
 * were written and sent and by which vCPU; the per-byte "tx" and "wire"
 * records are opt-in (tx-events).  Readers take RS_EVENTS_VERSION_MIN on.
 */
#define RS_EVENTS_VERSION       3
#define RS_EVENTS_VERSION_MIN   2

typedef enum rs_event {
    RS_EV_START,        /* the device's settings, first in a stream */
    RS_EV_CONNECTED,    /* a reader connected to a socket mid-run */
    RS_EV_RESUME,       /* a snapshot resumed: byte indexes go on from tx */
    RS_EV_TX,           /* a byte written to THR (tx-events) */
    RS_EV_WIRE,         /* a byte's last bit left (tx-events, paced) */
    RS_EV_LOOP,         /* a byte written in loopback mode: not on the wire */
    RS_EV_OVERRUN,      /* a byte the pacing model dropped */
    RS_EV_CLEARED,      /* a byte the guest's FIFO reset discarded */
    RS_EV_LINE,         /* a console line and its verdict */
    RS_EV_RECORD,       /* ring records that never reached the console */
    RS_EV_RING,         /* the ring attached, lost or distrusted */
    RS_EV_SUMMARY,      /* the device's counters, at a stop or a reset */
    RS_EV_HANDSHAKE,    /* a cooperating kernel announced its ring */
    RS_EV_BRACKET,      /* level 1: a bracketed record and its verdict */
    RS_EV_L1_RECORD,    /* level 1: records judged between brackets */
    RS_EV_L1_SUMMARY,   /* level 1's counters */
    RS_EV_LOST,         /* events the backend could not take, counted */
    RS_EV_COUNT
} rs_event;

/* A console line's verdict, or a ring record's (RS_V_MISSING on). */
typedef enum rs_verdict {
    /* a console line */
    RS_V_OK,            /* exactly what a record prints */
    RS_V_CORRUPT,       /* a record's line with bytes changed/cut/added */
    RS_V_TORN,          /* bytes of two records interleaved */
    RS_V_DUPLICATE,     /* a record printed again */
    RS_V_REORDERED,     /* a record printed after a later one */
    RS_V_UNMATCHED,     /* no record explains it */
    RS_V_NOTICE,        /* the kernel's "** N printk messages dropped **" */
    RS_V_UNCHECKED,     /* no trusted ring to check it against */
    RS_V_OVERWRITTEN,   /* its record was overwritten before it was done */
    RS_V_USER,          /* not kernel output: user space wrote it */
    /*
     * A copy of a record an nbcon console's takeover made redundant: the
     * line it cut, or a whole copy before "** replaying previous printk
     * message **", whose record is printed again whole next.  Or the
     * second copy of a message of the handover from a boot console to
     * the console replacing it, which both print on a shared UART.
     */
    RS_V_REPLAYED,
    RS_V_KNOTICE,       /* another line the console code writes: a replay
                         * notice; perf's early_printk() */
    /* a ring record that never reached the console */
    RS_V_MISSING,
    RS_V_FILTERED,      /* below the console loglevel */
    RS_V_DROPPED,       /* counted in a NOTICE */
    RS_V_COUNT
} rs_verdict;

#define RS_V_LINE_COUNT         RS_V_MISSING
#define RS_V_RECORD_COUNT       (RS_V_COUNT - RS_V_MISSING)

/*
 * Why a line with the kernel's prefix that no record prints is user
 * space's or unmatched: whether the ring can vouch that no record prints
 * it.  It can when it still holds every record stamped around the line's
 * stamp and none has that stamp (user space stamps its console lines like
 * the kernel: journald's forwarding, for one).
 */
typedef enum rs_why {
    RS_WHY_NONE,
    RS_WHY_VOUCHED,     /* USER: no record around its stamp prints it */
    RS_WHY_AMBIGUOUS,   /* USER: a record has its stamp, prints otherwise */
    RS_WHY_GAP,         /* UNMATCHED: a record around its stamp unreadable */
    RS_WHY_BUSY,        /* UNMATCHED: more records around it than we read */
    RS_WHY_GONE,        /* UNMATCHED: records before its stamp overwritten */
    RS_WHY_NO_STAMP,    /* UNMATCHED: no time stamp to look it up by */
    RS_WHY_OVERLONG,    /* UNMATCHED: longer than a line we keep */
    RS_WHY_BOOTCONSOLE, /* REPLAYED: the boot console's copy at handover */
    RS_WHY_COUNT
} rs_why;

/* Level 1: a bracketed record's verdict. */
typedef enum rs_l1_bracket_verdict {
    RS_B_OK,            /* the record's console text, whole, contiguous */
    RS_B_TORN,          /* whole, but other bytes reached the wire inside */
    RS_B_CUT,           /* a prefix of it: the writer stopped or was
                         * taken over */
    RS_B_CORRUPT,       /* bytes differ from the record's text */
    RS_B_NOTICE,        /* the kernel's "** N printk messages dropped **" */
    RS_B_OVERWRITTEN,   /* the record left the ring before it could be
                         * compared: counted as delivered, unverified */
    RS_B_BOGUS,         /* the seq names no record in the ring */
    RS_B_UNCHECKED,     /* no trusted ring to check against (why) */
    RS_B_COUNT
} rs_l1_bracket_verdict;

/* Why a bracket is RS_B_UNCHECKED. */
typedef enum rs_l1_why {
    RS_L1_WHY_NONE,     /* it is not */
    RS_L1_WHY_NO_RING,  /* no ring found (yet, or since it was lost) */
    RS_L1_WHY_UNTRUSTED,    /* the ring is distrusted (rs_l1_distrust()) */
    RS_L1_WHY_BUDGET,   /* the reader's budget ran out */
    RS_L1_WHY_COUNT
} rs_l1_why;

/* Level 1: a record's verdict, bracketed or between brackets. */
typedef enum rs_l1_record_verdict {
    RS_R_DELIVERED,     /* reached the wire whole (ok, torn, overwritten) */
    RS_R_MISSING,       /* at a printed level, never on the wire */
    RS_R_CUT,           /* only a prefix reached the wire */
    RS_R_DAMAGED,       /* only a damaged copy reached the wire */
    RS_R_DROPPED,       /* accounted for by a dropped notice */
    RS_R_FILTERED,      /* below the console loglevel */
    RS_R_DUPLICATE,     /* printed whole again */
    RS_R_COUNT
} rs_l1_record_verdict;

/* The names on the wire, indexed by the enums above. */
extern const char *const rs_event_names[RS_EV_COUNT];
extern const char *const rs_verdict_names[RS_V_COUNT];
extern const char *const rs_why_names[RS_WHY_COUNT];
extern const char *const rs_l1_bracket_names[RS_B_COUNT];
extern const char *const rs_l1_why_names[RS_L1_WHY_COUNT];
extern const char *const rs_l1_record_names[RS_R_COUNT];

/* Each value's name; "?" for one out of range. */
const char *rs_event_name(rs_event ev);
const char *rs_verdict_name(rs_verdict v);
const char *rs_why_name(rs_why w);
const char *rs_l1_bracket_name(rs_l1_bracket_verdict v);
const char *rs_l1_record_name(rs_l1_record_verdict v);
/* "none", "untrusted", "budget"; "" for RS_L1_WHY_NONE */
const char *rs_l1_why_name(rs_l1_why why);

/* The index of @name in names[0..n), or -1. */
int rs_name_index(const char *const *names, int n, const char *name);

#endif
