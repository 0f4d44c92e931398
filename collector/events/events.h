/*
 * Reader for the JSON Lines event stream that ringside-serial writes to its
 * "events" chardev (schema version 3, documented in docs/events.md; version 2
 * streams are read too).
 */
#ifndef RINGSIDE_EVENTS_H
#define RINGSIDE_EVENTS_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <stdint.h>

/* The schema's version and names, the device's own (RS_EVENTS_VERSION);
 * the oldest read, RS_EVENTS_VERSION_MIN (2), has no per-line times, vCPUs
 * or "loop". */
#include "rslib-events.h"

/* One byte the guest wrote to the transmit holding register. */
typedef struct {
    uint64_t index;     /* position in the device's byte count */
    int64_t vt_ns;      /* guest virtual clock when written */
    int64_t ht_ns;      /* host clock when written */
    int cpu;            /* vCPU index, -1 if not written by a vCPU */
    uint8_t byte;
    gboolean loopback;  /* written in loopback mode: never on the wire */
    gboolean overrun;   /* lost: the paced transmitter was full */
    gboolean cleared;   /* discarded by the guest's transmit FIFO reset */
    gboolean refused;   /* dropped: the console chardev would not take it */
    int64_t wt_ns;      /* virtual time it left the wire; -1 if it did not
                         * (yet).  Unpaced devices send at once: wt = vt. */
} RsTxByte;

/* A console line the device judged ("line" event). */
typedef struct {
    char verdict[16];   /* ok, corrupt, torn, duplicate, reordered,
                         * unmatched, dropped-notice, unchecked,
                         * overwritten, user */
    guint64 first, last;    /* byte indexes */
    gint64 vt_ns;       /* of the last byte */
    guint32 len;
    gboolean has_seq, has_ts, has_lat, fresh;
    guint64 seq, seq2, ts_ns, count;
    gint64 lat_ns;      /* the device's live estimate */
    gint64 first_vt_ns; /* virtual time of the first byte, -1 unknown
                         * (version 3: on the wire, as vt_ns) */
    /* version 3, has_stamp: the line's first byte's vCPU, whether others
     * wrote some of it, and how long its first and last bytes waited
     * between their THR write and the wire (vt_ns - q_ns: written) */
    gboolean has_stamp, mixed_cpus;
    gint cpu;
    gint64 q0_ns, q_ns;
    gint at, want, got; /* corrupt */
    gboolean by_user;   /* torn by user space's bytes: */
    guint32 user_at, user_len;  /* these, from first */
    char why[12];       /* user, unmatched: the ring vouched or why not */
} RsLineVerdict;

/* A ring record that never reached the console ("record" event). */
typedef struct {
    char verdict[16];   /* missing, dropped */
    guint64 seq, count;
    gint level;
} RsRecordVerdict;

/* A console record bracketed by the kernel, judged ("bracket" event). */
typedef struct {
    char verdict[16];   /* ok, torn, cut, corrupt, dropped-notice,
                         * overwritten, bogus, unchecked */
    guint64 seq;
    gint cpu;           /* the vCPU that wrote it, -1 not a vCPU */
    gboolean has_bytes, open, nested, taken;
    guint64 first, last;
    gint by_cpu;        /* taken: the vCPU that took over */
    guint64 by_seq;
    gint at, want, got; /* corrupt */
    guint64 run;        /* ok brackets it stands for: version 3 merges
                         * consecutive ones ("count"); first..last holds
                         * all their bytes */
} RsBracket;

typedef struct {
    GArray *tx;             /* RsTxByte, in stream order */
    GArray *lines;          /* RsLineVerdict */
    GArray *records;        /* RsRecordVerdict */
    char ring_state[16];    /* the last "ring" event's state, "" if none */
    char ring_via[16];
    char osrelease[65];
    gboolean saw_summary;   /* the device wrote a "summary" */
    int prefix;             /* its "prefix": RS_FMT_* bits, -1 unknown */
    char summary_reason[32];
    /* its counts: verdict name ("ok", ..., "filtered") -> gint64 * */
    GHashTable *summary_counts;
    guint64 lost_events;    /* records the device said it had to drop */
    guint64 index_gaps;     /* tx indexes missing from the stream */
    guint64 resume_index;   /* a restored device's first byte index */
    gboolean saw_start;
    gboolean paced;         /* the device ran pace=line */
    /* bytes lost in a stream without "tx" records (tx-events=off) */
    guint64 notx_overrun, notx_refused, notx_cleared, notx_loop;
    /* indexes of bytes that never reached the console (looped back,
     * overrun, cleared, refused), sorted once the stream is finished */
    GArray *offwire;        /* guint64 */
    /* indexes of bytes the guest's own transmit FIFO reset discarded
     * ("cleared"), sorted once the stream is finished */
    GArray *cleared;        /* guint64 */
    int version;            /* the schema version of its "start" */
    /* rs_event_stream_load: boots before this one in a file that QEMU
     * appends to (append=on, as under libvirt); only the last is kept */
    guint earlier_boots;

    /* Level 1: a kernel with the ringside handshake. */
    gboolean saw_handshake; /* it announced its ring */
    guint64 handshake_note; /* the note's guest physical address */
    GArray *brackets;       /* RsBracket */
    GArray *l1_records;     /* RsRecordVerdict: missing, cut, damaged,
                             * dropped, duplicate */
    gboolean saw_l1_summary;
    /* "l1-summary" counts: "bracket-<verdict>", "record-<verdict>",
     * "takeovers", "unattributed" -> gint64 * */
    GHashTable *l1_summary;
} RsEventStream;

/*
 * Forget the bytes before index @before (never the last one, which the
 * next "tx" continues), to bound a long follow's memory.  Line verdicts
 * keep what the reports need of them.
 */
void rs_event_stream_trim_tx(RsEventStream *s, guint64 before);

/* The byte with stream index @index, or NULL. */
RsTxByte *rs_event_stream_byte(RsEventStream *s, guint64 index);

/*
 * Where the device of libvirt domain @name writes its events, for
 * ringside attach: QEMU runs as libvirt-qemu, which owns this directory
 * in Debian.
 */
char *rs_events_libvirt_path(const char *name);

RsEventStream *rs_event_stream_load(const char *path, GError **error);

/*
 * The same, a line at a time, for a stream that is still being written:
 * feed each complete line (without its newline), then finish once the
 * stream has ended.  The first line must be the device's "start".
 */
RsEventStream *rs_event_stream_new(void);
gboolean rs_event_stream_feed(RsEventStream *s, JsonParser *parser,
                              const char *line, gsize len, GError **error);
void rs_event_stream_finish(RsEventStream *s);

/*
 * Where the bytes @first..@last are in what the console chardev got (it
 * began at the stream's first index): *off and *len.  Bytes that never
 * reached the console are not counted.  For a finished stream.
 */
void rs_event_stream_console_span(const RsEventStream *s, guint64 first,
                                  guint64 last, guint64 *off, guint64 *len);

/*
 * How many bytes of @first..@last the guest's own transmit FIFO reset
 * discarded.  For a finished stream.
 */
guint64 rs_event_stream_cleared_in(const RsEventStream *s, guint64 first,
                                   guint64 last);

/*
 * The event type of the record at @line (@len bytes, no NUL needed), read
 * from its head as the device writes it ({"v":N,"ev":"NAME"); -1 if it has
 * none this reader knows.
 */
int rs_event_line_type(const char *line, gsize len);

/* Whether @line is the device's "start", which begins each QEMU run. */
gboolean rs_event_line_is_start(const char *line);
void rs_event_stream_free(RsEventStream *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsEventStream, rs_event_stream_free)

#endif
