/*
 * The console transcript: the wire bytes of an event stream assembled into
 * lines, each with the times and vCPUs that wrote it.
 */
#ifndef RINGSIDE_TRANSCRIPT_H
#define RINGSIDE_TRANSCRIPT_H

#include "events/events.h"

typedef struct {
    char *text;             /* without the line end, NUL-terminated */
    gsize len;
    int64_t vt_first_ns;    /* virtual time the first and last byte left */
    int64_t vt_last_ns;     /* the wire (= when written, unless paced) */
    int cpu;                /* vCPU of the first byte */
    gboolean mixed_cpus;    /* bytes came from more than one vCPU */
    gboolean terminated;    /* ended with '\n' (not cut off) */
    gboolean has_ts;        /* starts with a printk "[%5lu.%06lu]" stamp */
    int64_t ts_ns;          /* that stamp, in ns (microsecond precision) */
} RsLine;

typedef struct {
    GPtrArray *lines;       /* RsLine */
    guint64 wire_bytes;     /* bytes that reached the wire */
    guint64 loopback_bytes; /* bytes written in loopback mode */
    guint64 overrun_bytes;  /* lost to a full paced transmitter */
    guint64 cleared_bytes;  /* discarded by a transmit FIFO reset */
    guint64 refused_bytes;  /* the console chardev would not take them */
    guint64 unsent_bytes;   /* written, still queued when the guest ended */
} RsTranscript;

RsTranscript *rs_transcript_build(const RsEventStream *s);
/*
 * The same for a stream of line events alone (the device's default,
 * tx-events=off): the text is what the console chardev got, @text, and
 * each line's times and vCPU come from the "line" event holding its first
 * byte.  A stream with "tx" records is built from them as above.
 */
RsTranscript *rs_transcript_build_console(const RsEventStream *s,
                                          const char *text, gsize len);
/* The same from what the console chardev got, with no times or vCPUs. */
RsTranscript *rs_transcript_from_console(const char *text, gsize len);
void rs_transcript_free(RsTranscript *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsTranscript, rs_transcript_free)

/*
 * Parse a console line's printk time stamp "[%5lu.%06lu]" (the width is a
 * minimum: large uptimes print more digits).  Returns FALSE if absent.
 */
gboolean rs_parse_printk_ts(const char *text, gsize len, int64_t *ts_ns);

/*
 * Wire latency of the last time-stamped line: (virtual time of its last
 * byte - its printk stamp), minus the smallest such difference of any
 * line.  The guest clock and QEMU's virtual clock have different origins,
 * so this is latency relative to the quickest line, not absolute.  Returns
 * FALSE when no line carries a stamp.
 */
gboolean rs_transcript_last_latency(const RsTranscript *t, int64_t *ns);

#endif
