/* Following one ringside domain under libvirt: console stream and events. */
#define _GNU_SOURCE             /* memmem */
#include "libvirt/follow.h"
#include "errors.h"
#include "events/events.h"
#include "events/evledger.h"
#include "events/evrotate.h"
#include "events/evsocket.h"
#include "events/journal.h"
#include "events/transcript.h"
#include "jsontext.h"
#include "libvirt/virt.h"
#include "report/l1verdicts.h"
#include "witness/ringscrape.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <libvirt/virterror.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Later lines looked for, to tell a lost line from a slow stream. */
#define LOOKAHEAD           8
#define EVENTS_POLL_MS      100
#define SOCKET_RETRY_MS     500
#define CONSOLE_RETRY_MS    1000
#define QMP_POLL_MS         1000
/* Forget shown bytes once this many are held, keeping a margin. */
#define TX_KEEP             65536
#define TX_MARGIN           4096
#define CONSOLE_KEEP        (1024 * 1024)
/* Event bytes read per poll at most, while the domain runs. */
#define EVENTS_BUDGET       (4 * 1024 * 1024)
/* A judged line not on a console stream that stalled this long is missed. */
#define CONSOLE_STALL_NS    (30 * G_GINT64_CONSTANT(1000000000))
/* Reading an event file back from its end for the last "start". */
#define SCAN_CHUNK          (1024 * 1024)
#define SCAN_OVERLAP        64
/* Bound on one line held from the console alone (console-only mode). */
#define LINE_MAX_BYTES      65536

enum { CON_OK, CON_MISSED, CON_NOT_ATTACHED, CON_UNKNOWN, CON_N };
static const char *const console_names[CON_N] = {
    "ok", "missed", "not-attached", "unknown",
};

struct RsFollower {
    char *name;
    FILE *out;
    gboolean json;
    RsBootEnded ended;
    gpointer opaque;

    virDomainPtr dom;
    unsigned int dom_id;        /* libvirt's id of the running domain */
    gboolean running;
    virStreamPtr st;
    guint reopen_id;
    gboolean console_busy_said;
    gboolean console_lost;      /* it ended while the domain ran */
    gboolean resume;            /* resume a paused domain once it is open */
    guint console_fails;        /* reopen attempts since */
    gint64 console_since_ns;    /* host time it opened; 0: closed */
    GByteArray *console;        /* this boot's bytes from the stream */
    gsize cursor;               /* judged lines found up to here */
    gint64 line_wait_ns;        /* waiting for the console's next line */
    /* console offset - wire byte index, once known (have_base) */
    gint64 wire_base;
    gboolean have_base;
    /*
     * The device's byte count just before and just after the console
     * stream opened: a line that ended before the first was sent before
     * the stream, one that ended before the second may have been.
     */
    guint64 console_from, console_from_hi;
    gboolean have_console_from;
    gsize line_start;           /* console-only: the open line begins */

    char *events_path;          /* NULL: console-only */
    /* A socket chardev's stream instead of a file (events_path names it) */
    RsEvSocket *evsock;
    RsRotator *rot;             /* where its records are kept, or NULL */
    RsLedger ledger;            /* its line accounting */
    guint64 boot_gaps;          /* lines this boot the stream did not bring */
    gboolean sock_said_down;
    FILE *journal;              /* export-format entries, or NULL */
    int fd;
    gboolean skipped_history;
    goffset history_size;       /* the file's size when we began */
    GString *evbuf;             /* read, not yet a whole line */
    JsonParser *parser;
    RsEventStream *ev;          /* the open boot's, NULL between boots */
    guint next_line;            /* ev->lines not yet written */
    guint next_record;          /* ev->records not yet written */
    guint poll_id;

    RsRingScrape *scrape;       /* the guest's ring from its shared RAM */
    char *ram_file;
    gboolean scrape_said;

    int boot;                   /* boots begun */
    gboolean boot_open;
    guint64 console_counts[CON_N];
    guint64 console_lines;      /* console-only: lines printed */
    GHashTable *qmp_counts;     /* console-only: verdict -> gint64 * */
    guint qmp_id;
};

void rs_follower_set_resume(RsFollower *f, gboolean resume)
{
    f->resume = resume;
}

static gint64 now_ns(void)
{
    return g_get_real_time() * 1000;
}

/* {"domain":NAME,"boot":N,"ev":EV  -- the caller closes the object. */
static GString *json_head(RsFollower *f, const char *ev)
{
    GString *o = g_string_new("{\"domain\":\"");

    rs_json_escape(o, f->name, strlen(f->name));
    g_string_append_printf(o, "\",\"boot\":%d,\"ev\":\"%s\"", f->boot, ev);
    return o;
}

/* Lines are flushed once per poll (emit_judged), not one by one. */
static void put(RsFollower *f, GString *o)
{
    g_string_append_c(o, '\n');
    fwrite(o->str, 1, o->len, f->out);
    g_string_free(o, TRUE);
}

void rs_follower_say(RsFollower *f, const char *ev, const char *fmt, ...)
{
    g_autofree char *msg = NULL;
    va_list ap;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (f->json) {
        GString *o = json_head(f, ev);

        g_string_append(o, ",\"msg\":\"");
        rs_json_escape(o, msg, strlen(msg));
        g_string_append(o, "\"}");
        put(f, o);
    } else {
        fprintf(f->out, "-- %s: %s\n", f->name, msg);
    }
    fflush(f->out);
}

/* The wire bytes of a judged line, as the console should show them. */
static GByteArray *line_bytes(RsEventStream *s, const RsLineVerdict *lv)
{
    GByteArray *raw = g_byte_array_new();
    guint64 i;

    if (lv->last < lv->first || lv->last - lv->first >= LINE_MAX_BYTES) {
        return raw;
    }
    for (i = lv->first; i <= lv->last; i++) {
        RsTxByte *b = rs_event_stream_byte(s, i);

        if (!b) {
            g_byte_array_unref(raw);
            return NULL;        /* tx-events=off */
        }
        if (!b->loopback && !b->overrun && !b->cleared) {
            g_byte_array_append(raw, &b->byte, 1);
        }
    }
    return raw;
}

/*
 * Where console line @p (@n bytes) stands to judged line @lv by their
 * printk time stamps: 0 it can be @lv (the same stamp, or none to
 * compare), -1 it is an older line (a stream that opens brings what the
 * console held back first), 1 a newer one.  Lines of one length are
 * common (a heartbeat's), so the length alone does not tell them apart.
 */
static int console_stamp_cmp(const RsLineVerdict *lv, const guint8 *p,
                             gsize n)
{
    int64_t ts;
    guint64 have, want = lv->ts_ns / 1000;

    if (!lv->has_ts || !rs_parse_printk_ts((const char *)p, n, &ts) ||
        ts < 0) {
        return 0;
    }
    have = (guint64)ts / 1000;
    return have < want ? -1 : have > want;
}

/*
 * For a stream without per-byte records: the judged line's text is the
 * next console line of its length (@len, without CR LF) and time stamp,
 * among the next LOOKAHEAD lines.  1: found (its text in *@raw), 0: the
 * console has not brought that many lines yet, -1: not there (missed).
 */
static int console_line_by_len(RsFollower *f, const RsLineVerdict *lv,
                               GByteArray **raw)
{
    const guint8 *data = f->console->data;
    guint32 len = lv->len;
    gsize pos = f->cursor;
    guint k;

    /* Once a line is found, the next are where their byte indexes say. */
    if (f->have_base && lv->last >= lv->first &&
        (gint64)lv->first + f->wire_base >= (gint64)f->cursor) {
        gsize at = lv->first + f->wire_base;
        gsize end = at + (lv->last - lv->first);

        if (end >= f->console->len) {
            return 0;
        }
        if (data[end] == '\n' && len <= end - at &&
            !console_stamp_cmp(lv, data + at, len)) {
            *raw = g_byte_array_new();
            g_byte_array_append(*raw, data + at, len);
            f->cursor = end + 1;
            return 1;
        }
        f->have_base = FALSE;   /* the console lost bytes: find it again */
    }

    for (k = 0; k < LOOKAHEAD;) {
        const guint8 *nl = memchr(data + pos, '\n', f->console->len - pos);
        gsize end, n;
        int cmp;

        if (!nl) {
            return 0;
        }
        end = nl - data;
        n = end - pos;
        if (n && data[end - 1] == '\r') {
            n--;
        }
        cmp = console_stamp_cmp(lv, data + pos, n);
        /* older lines are not among the next ones: they do not count */
        k += cmp >= 0;
        if (n == len && !cmp) {
            *raw = g_byte_array_new();
            g_byte_array_append(*raw, data + pos, n);
            f->cursor = end + 1;
            if (end - pos == lv->last - lv->first) {
                f->wire_base = (gint64)pos - (gint64)lv->first;
                f->have_base = TRUE;
            }
            return 1;
        }
        pos = end + 1;
    }
    return -1;
}

/* A line the console did not bring: its record's text, from the ring. */
static GByteArray *line_ring_text(RsFollower *f, const RsLineVerdict *lv)
{
    const RsScrapedRecord *r = f->scrape && lv->has_seq ?
                               rs_ring_scrape_get(f->scrape, lv->seq) : NULL;
    GByteArray *raw;

    if (!r) {
        return NULL;
    }
    raw = g_byte_array_new();
    g_byte_array_append(raw, (const guint8 *)r->text, strcspn(r->text, "\n"));
    return raw;
}

static gboolean console_find(RsFollower *f, const GByteArray *raw)
{
    const guint8 *hay = f->console->data + f->cursor;
    gsize n = f->console->len - f->cursor;
    const guint8 *at;

    if (!raw->len) {
        return TRUE;
    }
    at = memmem(hay, n, raw->data, raw->len);
    if (!at) {
        return FALSE;
    }
    f->cursor = at - f->console->data + raw->len;
    return TRUE;
}

/*
 * Whether the console stream already brought a line judged after the
 * next one: then the next one is not coming.
 */
static gboolean console_passed(RsFollower *f)
{
    const guint8 *hay = f->console->data + f->cursor;
    gsize n = f->console->len - f->cursor;
    guint i, end = MIN(f->ev->lines->len, f->next_line + 1 + LOOKAHEAD);

    for (i = f->next_line + 1; i < end; i++) {
        g_autoptr(GByteArray) raw = line_bytes(f->ev, &g_array_index(
                                        f->ev->lines, RsLineVerdict, i));

        /* Long enough not to be found by chance ("\r\n" would be). */
        if (raw && raw->len >= 16 && memmem(hay, n, raw->data, raw->len)) {
            return TRUE;
        }
    }
    return FALSE;
}

static gsize text_len(const guint8 *p, gsize len)
{
    while (len && (p[len - 1] == '\n' || p[len - 1] == '\r')) {
        len--;
    }
    return len;
}

static void write_line(RsFollower *f, const char *verdict, gboolean has_seq,
                       guint64 seq, gint64 vt_ns, int cpu,
                       const guint8 *text, gsize len, int con)
{
    len = text_len(text, len);
    f->console_counts[con]++;
    if (f->journal) {
        const RsScrapedRecord *r = f->scrape && has_seq ?
                                   rs_ring_scrape_get(f->scrape, seq) : NULL;
        RsJournalEntry e = {
            .domain = f->name, .boot = f->boot, .ev = "line",
            .verdict = verdict, .vt_ns = vt_ns, .cpu = cpu,
            .has_seq = has_seq, .seq = seq, .level = r ? r->level : -1,
            .console = console_names[con], .text = (const char *)text,
            .len = len,
        };

        rs_journal_write(f->journal, &e);
    }
    if (f->json) {
        GString *o = json_head(f, "line");

        if (vt_ns >= 0) {
            g_string_append_printf(o, ",\"vt\":%" G_GINT64_FORMAT
                                   ",\"cpu\":%d", vt_ns, cpu);
        }
        if (verdict) {
            g_string_append(o, ",\"verdict\":\"");
            rs_json_escape(o, verdict, strlen(verdict));
            g_string_append_c(o, '"');
        }
        if (has_seq) {
            g_string_append_printf(o, ",\"seq\":%" G_GUINT64_FORMAT, seq);
        }
        g_string_append_printf(o, ",\"console\":\"%s\",\"text\":\"",
                               console_names[con]);
        rs_json_escape(o, (const char *)text, len);
        g_string_append(o, "\"}");
        put(f, o);
        return;
    }
    if (vt_ns >= 0) {
        fprintf(f->out, "%6" G_GINT64_FORMAT ".%06" G_GINT64_FORMAT
                " cpu%-2d ", vt_ns / 1000000000, vt_ns / 1000 % 1000000, cpu);
    }
    fprintf(f->out, "%-10s | %.*s%s%s\n", verdict ? verdict : "-", (int)len,
            text, con == CON_OK || con == CON_UNKNOWN ? "" : "  <console: ",
            con == CON_OK || con == CON_UNKNOWN ? "" :
            con == CON_MISSED ? "missed>" : "not attached>");
}

/*
 * A ring record the device says the console never printed, with its text
 * when the scrape of the guest's RAM still holds it: what the console lost.
 */
static void write_record(RsFollower *f, const RsRecordVerdict *rv)
{
    const RsScrapedRecord *r = f->scrape && rv->count == 1 ?
                               rs_ring_scrape_get(f->scrape, rv->seq) : NULL;

    if (f->journal) {
        g_autofree char *msg = r ? g_strdup(r->text) :
            g_strdup_printf("<ring record %" G_GUINT64_FORMAT "%s not on the "
                            "console>", rv->seq, rv->count > 1 ? "..." : "");
        RsJournalEntry e = {
            .domain = f->name, .boot = f->boot, .ev = "record",
            .verdict = rv->verdict, .vt_ns = -1, .cpu = -1, .has_seq = TRUE,
            .seq = rv->seq, .level = rv->level, .text = msg,
            .len = strlen(msg),
        };

        rs_journal_write(f->journal, &e);
    }
    if (f->json) {
        GString *o = json_head(f, "record");

        g_string_append(o, ",\"verdict\":\"");
        rs_json_escape(o, rv->verdict, strlen(rv->verdict));
        g_string_append_printf(o, "\",\"seq\":%" G_GUINT64_FORMAT
                               ",\"count\":%" G_GUINT64_FORMAT
                               ",\"level\":%d", rv->seq, rv->count,
                               rv->level);
        if (r) {
            g_string_append(o, ",\"text\":\"");
            rs_json_escape(o, r->text, strlen(r->text));
            g_string_append_c(o, '"');
        }
        g_string_append_c(o, '}');
        put(f, o);
        return;
    }
    fprintf(f->out, "%-10s | <ring record %" G_GUINT64_FORMAT, rv->verdict,
            rv->seq);
    if (rv->count > 1) {
        fprintf(f->out, "..%" G_GUINT64_FORMAT, rv->seq + rv->count - 1);
    }
    fprintf(f->out, " not on the console>%s%s\n", r ? " " : "",
            r ? r->text : "");
}

/*
 * Bound a long follow: the bytes of lines already shown, beyond a margin
 * for the paced transmitter's late "wire" events, and the console bytes
 * those lines were found in.
 */
static void forget_shown(RsFollower *f)
{
    if (f->ev && f->ev->tx->len > TX_KEEP) {
        GArray *tx = f->ev->tx;
        guint64 keep = f->next_line < f->ev->lines->len ?
            g_array_index(f->ev->lines, RsLineVerdict, f->next_line).first :
            g_array_index(tx, RsTxByte, tx->len - 1).index;

        rs_event_stream_trim_tx(f->ev, keep > TX_MARGIN ?
                                keep - TX_MARGIN : 0);
    }
    if (f->events_path && f->cursor > CONSOLE_KEEP) {
        f->wire_base -= f->cursor;
        g_byte_array_remove_range(f->console, 0, f->cursor);
        f->cursor = 0;
    }
}

/*
 * Write the judged lines in order, each once the console stream has
 * brought it, could not have (it was closed when the line was sent), or
 * has brought later lines instead (or stalled); with @final, no waiting.
 */
static void emit_judged(RsFollower *f, gboolean final)
{
    while (f->ev && f->next_line < f->ev->lines->len) {
        const RsLineVerdict *lv = &g_array_index(f->ev->lines, RsLineVerdict,
                                                 f->next_line);
        g_autoptr(GByteArray) raw = line_bytes(f->ev, lv);
        RsTxByte *last = rs_event_stream_byte(f->ev, lv->last);
        gint64 sent = last ? last->ht_ns : 0;
        int con;

        if (!raw) {
            /* No per-byte records: the text is the console's line. */
            int found = f->have_console_from && lv->last < f->console_from ?
                        -1 : console_line_by_len(f, lv, &raw);
            gboolean before = f->have_console_from &&
                              lv->last < f->console_from_hi;

            if (found > 0) {
                con = CON_OK;
            } else if ((found < 0 && before) || !f->console_since_ns) {
                /* sent before this console stream was opened */
                con = CON_NOT_ATTACHED;
            } else if (!final && found == 0) {
                if (!f->line_wait_ns) {
                    f->line_wait_ns = now_ns();
                }
                if (now_ns() - f->line_wait_ns < CONSOLE_STALL_NS) {
                    return;
                }
                /* sent as the stream opened, maybe before: not shown */
                con = before ? CON_NOT_ATTACHED : CON_MISSED;
            } else {
                con = before ? CON_NOT_ATTACHED : CON_MISSED;
            }
            f->line_wait_ns = 0;
            if (!raw) {
                raw = line_ring_text(f, lv);
            }
        } else if (console_find(f, raw)) {
            con = CON_OK;
        } else if (!f->console_since_ns || sent < f->console_since_ns) {
            con = CON_NOT_ATTACHED;
        } else if (!final && !console_passed(f) &&
                   now_ns() - sent < CONSOLE_STALL_NS) {
            return;             /* the stream has not brought it yet */
        } else {
            con = CON_MISSED;
        }
        write_line(f, lv->verdict, lv->has_seq, lv->seq,
                   last ? last->vt_ns : lv->vt_ns,
                   last ? last->cpu : lv->has_stamp ? lv->cpu : -1,
                   raw ? raw->data : (const guint8 *)"",
                   raw ? raw->len : 0, con);
        f->next_line++;
    }
    while (f->ev && f->next_record < f->ev->records->len) {
        write_record(f, &g_array_index(f->ev->records, RsRecordVerdict,
                                       f->next_record));
        f->next_record++;
    }
    forget_shown(f);
    fflush(f->out);
    if (f->journal) {
        fflush(f->journal);
    }
}

static void boot_begin(RsFollower *f)
{
    f->boot++;
    f->boot_gaps = 0;
    f->boot_open = TRUE;
    f->next_line = 0;
    f->next_record = 0;
    memset(f->console_counts, 0, sizeof(f->console_counts));
    f->console_lines = 0;
    if (f->qmp_counts) {
        g_hash_table_remove_all(f->qmp_counts);
    }
    rs_follower_say(f, "boot", "boot %d began", f->boot);
}

static char *report_json(const RsEventStream *s, const RsVerdictReport *r,
                         const RsL1Report *l1)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);

    if (!m) {
        return g_strdup("null");
    }
    rs_verdict_report_print_json(m, s, r, l1);
    fclose(m);
    g_strchomp(buf);
    return buf;
}

/* ,"ring":{...} of the boot-end record: what the scrape read. */
static void ring_json(RsFollower *f, GString *o)
{
    if (!f->scrape) {
        g_string_append(o, ",\"ring\":null");
        return;
    }
    g_string_append(o, ",\"ring\":{\"file\":\"");
    rs_json_escape(o, f->ram_file, strlen(f->ram_file));
    g_string_append_printf(o, "\",\"found\":%s,\"records\":%"
                           G_GUINT64_FORMAT ",\"lost\":%" G_GUINT64_FORMAT
                           "}", rs_ring_scrape_found(f->scrape) ?
                           "true" : "false",
                           rs_ring_scrape_total(f->scrape),
                           rs_ring_scrape_lost(f->scrape));
}

static void ring_text(RsFollower *f)
{
    if (f->scrape) {
        fprintf(f->out, "ring scraped from %s: %" G_GUINT64_FORMAT
                " records read, %" G_GUINT64_FORMAT " overwritten before a "
                "read\n", f->ram_file, rs_ring_scrape_total(f->scrape),
                rs_ring_scrape_lost(f->scrape));
    }
}

static void end_judged_boot(RsFollower *f, const char *why, gboolean *clean)
{
    const char *device = f->ev->saw_summary ? f->ev->summary_reason : "";
    RsVerdictReport r;
    RsL1Report l1;

    rs_event_stream_finish(f->ev);
    rs_verdict_report_build(f->ev, &r);
    rs_l1_report_build(f->ev, &l1);
    /* A line the libvirt console lost is lost to whoever reads it there. */
    *clean = !r.problems && !l1.problems && !f->console_counts[CON_MISSED];
    if (f->json) {
        GString *o = json_head(f, "boot-end");
        g_autofree char *rep = report_json(f->ev, &r, &l1);

        g_string_append_printf(o, ",\"reason\":\"%s\",\"device\":\"", why);
        rs_json_escape(o, device, strlen(device));
        g_string_append_printf(o, "\",\"clean\":%s,"
                               "\"console\":{\"ok\":%" G_GUINT64_FORMAT
                               ",\"missed\":%" G_GUINT64_FORMAT
                               ",\"not-attached\":%" G_GUINT64_FORMAT
                               "},\"report\":%s",
                               *clean ? "true" : "false",
                               f->console_counts[CON_OK],
                               f->console_counts[CON_MISSED],
                               f->console_counts[CON_NOT_ATTACHED], rep);
        if (f->evsock) {
            g_string_append_printf(o, ",\"stream\":{\"lines\":%"
                                   G_GUINT64_FORMAT ",\"lost\":%"
                                   G_GUINT64_FORMAT ",\"gaps\":%"
                                   G_GUINT64_FORMAT ",\"rotations\":%u}",
                                   f->ledger.seen, f->ledger.lost,
                                   f->boot_gaps, f->rot ?
                                   rs_rotator_rotations(f->rot) : 0);
        }
        ring_json(f, o);
        g_string_append_c(o, '}');
        put(f, o);
        return;
    }
    rs_follower_say(f, "boot-end", "boot %d ended (%s%s%s)", f->boot, why,
                    *device ? "; the device saw " : "", device);
    rs_verdict_report_print(f->out, f->ev, &r);
    rs_l1_report_print(f->out, f->ev, &l1);
    if (f->evsock) {
        fprintf(f->out, "event stream: %" G_GUINT64_FORMAT " lines in it, %"
                G_GUINT64_FORMAT " reported lost by the device, %"
                G_GUINT64_FORMAT " not received\n", f->ledger.seen,
                f->ledger.lost, f->boot_gaps);
    }
    ring_text(f);
    fprintf(f->out, "libvirt console: %" G_GUINT64_FORMAT " lines seen, %"
            G_GUINT64_FORMAT " missed, %" G_GUINT64_FORMAT
            " sent while it was not open\n",
            f->console_counts[CON_OK], f->console_counts[CON_MISSED],
            f->console_counts[CON_NOT_ATTACHED]);
    fprintf(f->out, "verdict: %s\n", *clean ? "clean" : "problems");
    fflush(f->out);
}

/*
 * The console loglevel the guest booted with, read from the "Command
 * line:" record: quiet, debug, loglevel=, ignore_loglevel; else the
 * kernel's default, 7.
 */
static int booted_loglevel(RsRingScrape *s)
{
    GPtrArray *recs = rs_ring_scrape_records(s);
    guint i;

    for (i = 0; i < MIN(recs->len, 64); i++) {
        const RsScrapedRecord *r = recs->pdata[i];
        g_auto(GStrv) args = NULL;
        int level = 7;
        guint k;

        if (!g_str_has_prefix(r->text, "Command line: ")) {
            continue;
        }
        args = g_strsplit(r->text + 14, " ", -1);
        for (k = 0; args[k]; k++) {
            if (g_str_equal(args[k], "quiet")) {
                level = 4;
            } else if (g_str_equal(args[k], "debug")) {
                level = 10;
            } else if (g_str_has_prefix(args[k], "loglevel=")) {
                level = CLAMP(atoi(args[k] + 9), 1, 15);
            } else if (g_str_equal(args[k], "ignore_loglevel")) {
                return 16;
            }
        }
        return level;
    }
    return 7;
}

/*
 * Without the device's events: each record the ring holds at a level the
 * console prints, looked for on the console stream (its first line).
 * Returns how many were not there; lists some.
 */
static guint64 ring_vs_console(RsFollower *f, GString *o)
{
    GPtrArray *recs = rs_ring_scrape_records(f->scrape);
    int loglevel = booted_loglevel(f->scrape);
    guint64 absent = 0, checked = 0;
    gsize cursor = 0;
    guint i, listed = 0;

    if (o) {
        g_string_append(o, ",\"not_on_console\":[");
    }
    for (i = 0; i < recs->len; i++) {
        const RsScrapedRecord *r = recs->pdata[i];
        gsize len = strcspn(r->text, "\n");
        const guint8 *at;

        if (r->level >= loglevel || !len) {
            continue;
        }
        checked++;
        /* Mostly in order: look on from the last one, then everywhere. */
        at = memmem(f->console->data + cursor, f->console->len - cursor,
                    r->text, len);
        if (!at) {
            at = memmem(f->console->data, f->console->len, r->text, len);
        }
        if (at) {
            cursor = at - f->console->data + len;
            continue;
        }
        absent++;
        if (listed++ >= RS_DETAIL_MAX) {
            continue;
        }
        if (o) {
            g_string_append_printf(o, "%s{\"seq\":%" G_GUINT64_FORMAT
                                   ",\"level\":%d,\"text\":\"",
                                   listed > 1 ? "," : "", r->seq, r->level);
            rs_json_escape(o, r->text, len);
            g_string_append(o, "\"}");
        } else {
            fprintf(f->out, "  not on the console: <%" G_GUINT64_FORMAT
                    "> %.*s\n", r->seq, (int)len, r->text);
        }
    }
    if (o) {
        g_string_append_printf(o, "],\"ring_checked\":%" G_GUINT64_FORMAT
                               ",\"ring_absent\":%" G_GUINT64_FORMAT
                               ",\"loglevel\":%d", checked, absent,
                               loglevel);
    } else {
        fprintf(f->out, "ring records at a console level (below %d): %"
                G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " not seen on the "
                "console stream\n", loglevel, checked, absent);
    }
    return absent;
}

static void end_console_boot(RsFollower *f, const char *why,
                             gboolean *clean)
{
    guint64 problems = 0;
    GString *o = f->json ? json_head(f, "boot-end") : NULL;
    guint i;

    if (o) {
        g_string_append_printf(o, ",\"reason\":\"%s\",\"lines\":%"
                               G_GUINT64_FORMAT ",\"counters\":{", why,
                               f->console_lines);
    } else {
        rs_follower_say(f, "boot-end", "boot %d ended (%s); %"
                        G_GUINT64_FORMAT " console lines; the device's "
                        "counters when last read over QMP:", f->boot, why,
                        f->console_lines);
    }
    for (i = 0; i < RS_V_COUNT; i++) {
        const char *name = rs_verdict_name(i);
        const gint64 *v = g_hash_table_lookup(f->qmp_counts, name);
        gint64 n = v ? *v : 0;

        if (!v) {
            continue;
        }
        if (rs_verdict_is_problem(name)) {
            problems += n;
        }
        if (o) {
            g_string_append_printf(o, "%s\"%s\":%" G_GINT64_FORMAT,
                                   o->str[o->len - 1] == '{' ? "" : ",",
                                   name, n);
        } else {
            fprintf(f->out, "  %-22s %" G_GINT64_FORMAT "\n", name, n);
        }
    }
    if (o) {
        g_string_append_c(o, '}');
        ring_json(f, o);
    } else {
        ring_text(f);
    }
    if (f->scrape && rs_ring_scrape_found(f->scrape)) {
        problems += ring_vs_console(f, o);
    }
    *clean = !problems;
    if (o) {
        g_string_append_printf(o, ",\"clean\":%s}",
                               *clean ? "true" : "false");
        put(f, o);
    } else {
        fprintf(f->out, "verdict: %s\n", *clean ? "clean" : "problems");
        fflush(f->out);
    }
}

static void boot_end(RsFollower *f, const char *why)
{
    gboolean clean = TRUE;

    if (!f->boot_open) {
        return;
    }
    if (f->scrape) {
        rs_ring_scrape_poll(f->scrape);
    }
    if (f->events_path) {
        if (f->ev) {
            emit_judged(f, TRUE);
            end_judged_boot(f, why, &clean);
            g_clear_pointer(&f->ev, rs_event_stream_free);
        }
    } else {
        if (f->console->len > f->line_start) {
            write_line(f, NULL, FALSE, 0, -1, -1,
                       f->console->data + f->line_start,
                       f->console->len - f->line_start, CON_OK);
            f->console_lines++;
        }
        end_console_boot(f, why, &clean);
    }
    f->boot_open = FALSE;
    fflush(f->out);
    if (f->ended) {
        f->ended(f, clean, f->opaque);
    }
}

/* --- the event file --------------------------------------------------- */

static void events_line(RsFollower *f, const char *line, gsize len)
{
    g_autoptr(GError) error = NULL;

    if (rs_event_line_is_start(line)) {
        if (f->ev) {
            boot_end(f, "restarted");
        }
        if (!f->boot_open) {
            boot_begin(f);
        }
        f->ev = rs_event_stream_new();
    }
    if (!f->ev) {
        return;                 /* the tail of a boot we did not see begin */
    }
    if (!rs_event_stream_feed(f->ev, f->parser, line, len, &error)) {
        rs_follower_say(f, "error", "%s: %s; judging from the console alone "
                        "from here", f->events_path, error->message);
        g_clear_pointer(&f->events_path, g_free);
        g_clear_pointer(&f->ev, rs_event_stream_free);
        f->line_start = f->console->len;
    }
}

/*
 * Where to start reading a file that already holds earlier boots: at the
 * last boot's "start" if the domain runs now (its lines so far are
 * shown), else where the file ended when we began.  The file can be large
 * (QEMU appends every run): read back from its end, a chunk at a time.
 */
static goffset history_skip(RsFollower *f, int fd)
{
    g_autofree char *buf = NULL;
    struct stat st;
    goffset end;

    if (fstat(fd, &st) < 0) {
        return 0;
    }
    if (!f->running) {
        return MIN(st.st_size, f->history_size);
    }
    buf = g_malloc(SCAN_CHUNK + 1);
    for (end = st.st_size; end > 0;) {
        goffset begin = MAX(0, end - SCAN_CHUNK);
        ssize_t n = pread(fd, buf, end - begin, begin);
        ssize_t i;

        if (n != end - begin) {
            return 0;
        }
        buf[n] = '\0';
        for (i = n - 1; i >= 0; i--) {
            if ((i ? buf[i - 1] == '\n' : begin == 0) &&
                rs_event_line_is_start(buf + i)) {
                return begin + i;
            }
        }
        if (begin == 0) {
            break;
        }
        /* Overlap the next chunk: a line may start just before begin. */
        end = begin + SCAN_OVERLAP;
    }
    return 0;
}

/*
 * Read what the device appended; at most @budget bytes (0: all), so that
 * a long backlog does not keep the console stream waiting.
 */
static void read_events(RsFollower *f, gsize budget)
{
    char buf[65536];
    gsize done = 0;
    ssize_t n;

    if (!f->events_path) {
        return;
    }
    if (f->evsock) {
        rs_ev_socket_poll(f->evsock, budget);
        return;
    }
    if (f->fd < 0) {
        goffset skip;

        f->fd = open(f->events_path, O_RDONLY | O_CLOEXEC);
        if (f->fd < 0) {
            if (errno != ENOENT) {
                rs_follower_say(f, "error", "cannot read %s: %s; judging "
                                "from the console alone", f->events_path,
                                g_strerror(errno));
                g_clear_pointer(&f->events_path, g_free);
            }
            return;             /* not created yet: no boot so far */
        }
        skip = f->skipped_history ? 0 : history_skip(f, f->fd);
        if (lseek(f->fd, skip, SEEK_SET) < 0) {
            lseek(f->fd, 0, SEEK_END);
        }
        f->skipped_history = TRUE;
    }
    while (f->events_path && (!budget || done < budget) &&
           (n = read(f->fd, buf, sizeof(buf))) > 0) {
        done += n;
        char *nl;
        gsize used = 0;

        g_string_append_len(f->evbuf, buf, n);
        while ((nl = memchr(f->evbuf->str + used, '\n',
                            f->evbuf->len - used))) {
            *nl = '\0';
            events_line(f, f->evbuf->str + used,
                        nl - (f->evbuf->str + used));
            used = nl - f->evbuf->str + 1;
            if (!f->events_path) {
                break;
            }
        }
        g_string_erase(f->evbuf, 0, used);
    }
}

/* --- the events socket ------------------------------------------------ */

/*
 * One record from the socket: kept (rotated), accounted for (a gap is
 * said and counted), then judged as one from a file would be.  A record
 * that joins a run (the device's "connected" after a reconnect, or at
 * the first connection to a running guest) begins the boot with the
 * "start" it carries when this follower has not seen that run begin.
 */
static void on_sock_record(const char *rec, gsize len, gpointer opaque)
{
    RsFollower *f = opaque;
    g_autoptr(GError) error = NULL;
    gboolean new_run;
    guint64 gap;
    RsLedgerKind kind;

    if (!f->events_path) {
        return;                 /* gave up on the stream */
    }
    if (f->rot && !rs_rotator_write(f->rot, rec, len, &f->ledger, &error)) {
        rs_follower_say(f, "error", "%s; not keeping the events from here",
                        error->message);
        g_clear_pointer(&f->rot, rs_rotator_free);
    }
    kind = rs_ledger_feed(&f->ledger, rec, len, &gap, &new_run);
    if (kind == RS_LEDGER_JOIN && (new_run || !f->ev)) {
        if (f->ev) {
            boot_end(f, "restarted");
        }
        events_line(f, f->ledger.start, strlen(f->ledger.start));
    }
    if (gap) {
        const char *why = new_run ? "sent before this follower joined it" :
                          "sent while no follower read it";

        f->boot_gaps += gap;
        if (f->json) {
            /* "lines" for machines, besides the notice's "msg" */
            GString *o = json_head(f, "gap");

            g_string_append_printf(o, ",\"lines\":%" G_GUINT64_FORMAT
                                   ",\"msg\":\"%" G_GUINT64_FORMAT " console "
                                   "lines of this run are not in the event "
                                   "stream (%s)\"}", gap, gap, why);
            put(f, o);
            fflush(f->out);
        } else {
            rs_follower_say(f, "gap", "%" G_GUINT64_FORMAT " console lines "
                            "of this run are not in the event stream (%s)",
                            gap, why);
        }
    }
    events_line(f, rec, len);
}

static void on_sock_state(gboolean up, const char *why, gpointer opaque)
{
    RsFollower *f = opaque;

    if (up) {
        f->sock_said_down = FALSE;
        rs_follower_say(f, "events", "reading the events from %s",
                        f->events_path);
    } else if (!f->sock_said_down) {
        f->sock_said_down = TRUE;
        rs_follower_say(f, "events", "events socket %s: %s; retrying",
                        f->events_path, why);
    }
}

gboolean rs_follower_set_socket(RsFollower *f, const char *address,
                                const char *keep, goffset max_size,
                                guint count, GError **error)
{
    if (keep) {
        f->rot = rs_rotator_open(keep, max_size, count, &f->ledger, error);
        if (!f->rot) {
            return FALSE;
        }
    }
    g_free(f->events_path);
    f->events_path = g_strdup(address);
    f->skipped_history = TRUE;
    f->evsock = rs_ev_socket_new(address, SOCKET_RETRY_MS, on_sock_record,
                                 on_sock_state, f);
    return TRUE;
}

void rs_follower_set_journal(RsFollower *f, FILE *journal)
{
    f->journal = journal;
}

static gboolean on_events_poll(gpointer opaque)
{
    RsFollower *f = opaque;

    read_events(f, EVENTS_BUDGET);
    if (f->rot) {
        g_autoptr(GError) error = NULL;

        if (!rs_rotator_flush(f->rot, &error)) {
            rs_follower_say(f, "error", "%s", error->message);
        }
    }
    /* After the events: a record they call missing is in the ring by now. */
    if (f->scrape) {
        rs_ring_scrape_poll(f->scrape);
    }
    emit_judged(f, FALSE);
    return G_SOURCE_CONTINUE;
}

/* --- the console stream ------------------------------------------------ */

static void console_lines(RsFollower *f)
{
    guint8 *nl;

    /* Without events each console line is printed as it completes. */
    while ((nl = memchr(f->console->data + f->line_start, '\n',
                        f->console->len - f->line_start))) {
        gsize end = nl - f->console->data + 1;

        write_line(f, NULL, FALSE, 0, -1, -1, f->console->data + f->line_start,
                   end - f->line_start, CON_OK);
        f->console_lines++;
        f->line_start = end;
    }
    if (f->console->len - f->line_start >= LINE_MAX_BYTES) {
        write_line(f, NULL, FALSE, 0, -1, -1, f->console->data + f->line_start,
                   f->console->len - f->line_start, CON_OK);
        f->console_lines++;
        f->line_start = f->console->len;
    }
    fflush(f->out);
}

static void console_open(RsFollower *f);

static gboolean on_console_retry(gpointer opaque)
{
    RsFollower *f = opaque;

    f->reopen_id = 0;
    console_open(f);
    return G_SOURCE_REMOVE;
}

static void console_retry_later(RsFollower *f)
{
    if (!f->reopen_id && f->running && f->dom) {
        f->reopen_id = g_timeout_add(CONSOLE_RETRY_MS, on_console_retry, f);
    }
}

static gboolean free_stream(gpointer st)
{
    virStreamFree(st);
    return G_SOURCE_REMOVE;
}

static void console_close(RsFollower *f, gboolean finish)
{
    if (!f->st) {
        return;
    }
    virStreamEventRemoveCallback(f->st);
    /* Either ends libvirt's console session, so it can be opened again. */
    if (finish) {
        virStreamFinish(f->st);
    } else {
        virStreamAbort(f->st);
    }
    /* Not from inside the stream's own callback. */
    g_idle_add(free_stream, f->st);
    f->st = NULL;
    f->console_since_ns = 0;
}

static void on_console(virStreamPtr st, int events, void *opaque)
{
    RsFollower *f = opaque;
    char buf[16384];
    int n;

    for (;;) {
        n = virStreamRecv(st, buf, sizeof(buf));
        if (n > 0) {
            g_byte_array_append(f->console, (guint8 *)buf, n);
            continue;
        }
        break;
    }
    if (!f->events_path) {
        console_lines(f);
    }
    if (n == -2 && !(events & (VIR_STREAM_EVENT_HANGUP |
                               VIR_STREAM_EVENT_ERROR))) {
        return;
    }
    /*
     * End of stream: the domain is stopping (its lifecycle event comes
     * later), or another client took the console.
     */
    console_close(f, n == 0);
    f->console_lost = TRUE;
    console_retry_later(f);
}

static void console_open(RsFollower *f)
{
    g_autofree char *tx = NULL, *tx_hi = NULL;
    virStreamPtr st;

    if (f->st || !f->dom || !f->running) {
        return;
    }
    st = virStreamNew(virDomainGetConnect(f->dom), VIR_STREAM_NONBLOCK);
    if (!st) {
        console_retry_later(f);
        return;
    }
    tx = rs_virt_qom_get(f->dom, RS_VIRT_DEVICE, "tx-bytes", NULL);
    /* No FORCE: an operator's virsh console is not ours to kick. */
    if (virDomainOpenConsole(f->dom, NULL, st, 0) < 0) {
        /* The first failure after an end is usually the domain stopping. */
        if (!f->console_busy_said && (!f->console_lost ||
                                      ++f->console_fails > 1)) {
            rs_follower_say(f, "console", "%s; cannot open the console (%s); "
                            "retrying", f->console_lost ?
                            "console closed while the domain runs" :
                            "console not open", virGetLastErrorMessage());
            f->console_busy_said = TRUE;
        }
        virStreamFree(st);
        console_retry_later(f);
        return;
    }
    if (virStreamEventAddCallback(st, VIR_STREAM_EVENT_READABLE |
                                  VIR_STREAM_EVENT_HANGUP |
                                  VIR_STREAM_EVENT_ERROR,
                                  on_console, f, NULL) < 0) {
        virStreamAbort(st);
        virStreamFree(st);
        console_retry_later(f);
        return;
    }
    f->st = st;
    f->console_since_ns = now_ns();
    f->have_base = FALSE;       /* a new stream: bytes may be missing */
    tx_hi = rs_virt_qom_get(f->dom, RS_VIRT_DEVICE, "tx-bytes", NULL);
    f->have_console_from = tx && tx_hi;
    f->console_from = tx ? g_ascii_strtoull(tx, NULL, 10) : 0;
    f->console_from_hi = tx_hi ? g_ascii_strtoull(tx_hi, NULL, 10) : 0;
    f->console_busy_said = FALSE;
    f->console_lost = FALSE;
    f->console_fails = 0;
    rs_follower_say(f, "console", "console open (libvirt stream)");
    if (f->resume) {
        int state, reason;

        if (virDomainGetState(f->dom, &state, &reason, 0) == 0 &&
            state == VIR_DOMAIN_PAUSED) {
            if (virDomainResume(f->dom) == 0) {
                rs_follower_say(f, "resumed", "resumed the paused domain");
            } else {
                rs_follower_say(f, "error", "cannot resume the domain: %s",
                                virGetLastErrorMessage());
            }
        }
    }
}

/* --- counters over QMP, without events ---------------------------------- */

static gboolean on_qmp_poll(gpointer opaque)
{
    RsFollower *f = opaque;
    guint i;

    if (!f->dom || !f->running || f->events_path) {
        return G_SOURCE_CONTINUE;
    }
    for (i = 0; i < RS_V_COUNT; i++) {
        const char *v = rs_verdict_name(i);
        g_autofree char *prop = g_strdup_printf("verdict-%s", v);
        g_autofree char *val = rs_virt_qom_get(f->dom, RS_VIRT_DEVICE, prop,
                                             NULL);
        gint64 n;

        if (val && (n = g_ascii_strtoll(val, NULL, 10)) >= 0) {
            g_hash_table_insert(f->qmp_counts, g_strdup(v),
                                g_memdup2(&n, sizeof(n)));
        }
    }
    return G_SOURCE_CONTINUE;
}

/* --- the ring scrape ------------------------------------------------------ */

static void scrape_close(RsFollower *f)
{
    g_clear_pointer(&f->scrape, rs_ring_scrape_free);
    g_clear_pointer(&f->ram_file, g_free);
}

/*
 * The running domain's RAM file, if it shares one.  Mapped for the whole
 * boot: libvirt unlinks it when QEMU exits, and the mapping still holds
 * the ring's last state for the boot's end.
 */
static void scrape_open(RsFollower *f)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *path = rs_virt_ram_file(f->dom, &error);

    scrape_close(f);
    if (path) {
        f->scrape = rs_ring_scrape_open(path, &error);
    }
    if (!f->scrape) {
        if (!f->scrape_said) {
            rs_follower_say(f, "ring", "not scraping the guest's ring: %s",
                            error->message);
            f->scrape_said = TRUE;
        }
        return;
    }
    f->ram_file = g_steal_pointer(&path);
    rs_follower_say(f, "ring", "scraping the guest's ring from %s",
                    f->ram_file);
}

/* --- the follower --------------------------------------------------------- */

RsFollower *rs_follower_new(const char *name, const char *events, FILE *out,
                            gboolean json, RsBootEnded ended, gpointer opaque)
{
    RsFollower *f = g_new0(RsFollower, 1);

    f->name = g_strdup(name);
    f->out = out;
    f->json = json;
    f->ended = ended;
    f->opaque = opaque;
    f->console = g_byte_array_new();
    f->events_path = g_strdup(events);
    f->fd = -1;
    if (events) {
        GStatBuf st;

        f->history_size = g_stat(events, &st) == 0 ? st.st_size : 0;
    }
    f->evbuf = g_string_new(NULL);
    f->parser = json_parser_new_immutable();
    f->qmp_counts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                          g_free);
    f->poll_id = g_timeout_add(EVENTS_POLL_MS, on_events_poll, f);
    f->qmp_id = g_timeout_add(QMP_POLL_MS, on_qmp_poll, f);
    return f;
}

void rs_follower_free(RsFollower *f)
{
    if (!f) {
        return;
    }
    read_events(f, 0);
    boot_end(f, "detached");
    console_close(f, FALSE);
    g_clear_handle_id(&f->reopen_id, g_source_remove);
    g_clear_handle_id(&f->poll_id, g_source_remove);
    g_clear_handle_id(&f->qmp_id, g_source_remove);
    g_clear_pointer(&f->evsock, rs_ev_socket_free);
    g_clear_pointer(&f->rot, rs_rotator_free);
    rs_ledger_clear(&f->ledger);
    if (f->dom) {
        virDomainFree(f->dom);
    }
    if (f->fd >= 0) {
        close(f->fd);
    }
    g_clear_pointer(&f->ev, rs_event_stream_free);
    scrape_close(f);
    g_byte_array_unref(f->console);
    g_string_free(f->evbuf, TRUE);
    g_object_unref(f->parser);
    g_hash_table_unref(f->qmp_counts);
    g_free(f->events_path);
    g_free(f->name);
    g_free(f);
}

void rs_follower_running(RsFollower *f, virDomainPtr dom, gboolean new_boot)
{
    unsigned int id = virDomainGetID(dom);

    /* A new id: it stopped and started again while we were away. */
    if (f->dom_id && id != f->dom_id) {
        new_boot = TRUE;
    }
    f->dom_id = id;
    if (f->dom != dom) {
        if (f->dom) {
            virDomainFree(f->dom);
        }
        virDomainRef(dom);
        f->dom = dom;
    }
    f->running = TRUE;
    /*
     * With events, boots begin at the device's "start" in the file, and
     * what it holds of the boot before is judged first, against the
     * console bytes of that boot.
     */
    read_events(f, 0);
    if (new_boot) {
        if (!f->events_path) {
            boot_end(f, "stopped");
        }
        g_byte_array_set_size(f->console, 0);
        f->have_base = FALSE;
        f->cursor = 0;
        f->line_start = 0;
    }
    if (!f->events_path && !f->boot_open) {
        boot_begin(f);
    }
    if (new_boot || !f->scrape) {
        scrape_open(f);
    }
    console_open(f);
}

void rs_follower_stopped(RsFollower *f, const char *why)
{
    if (!f->running && !f->boot_open) {
        rs_follower_say(f, "waiting", "domain not running; waiting for it "
                        "to start");
        return;
    }
    f->running = FALSE;
    /* What the stream still holds is the boot's last lines. */
    if (f->st) {
        char buf[16384];
        int n;

        while ((n = virStreamRecv(f->st, buf, sizeof(buf))) > 0) {
            g_byte_array_append(f->console, (guint8 *)buf, n);
        }
    }
    console_close(f, FALSE);
    f->console_lost = FALSE;
    f->console_fails = 0;
    g_clear_handle_id(&f->reopen_id, g_source_remove);
    rs_follower_say(f, "stopped", "domain stopped (%s)", why);
    read_events(f, 0);
    boot_end(f, why);
    scrape_close(f);
}

void rs_follower_disconnected(RsFollower *f)
{
    console_close(f, FALSE);
    g_clear_handle_id(&f->reopen_id, g_source_remove);
    if (f->dom) {
        virDomainFree(f->dom);
        f->dom = NULL;
    }
}
