/*
 * ringside-serial: an ISA 16550A whose transmitter is a witness.
 *
 * The UART itself is QEMU's own SerialState, embedded and driven unchanged,
 * so the guest sees an ordinary 16550A at the usual ports.  What this device
 * adds is on the write path: every byte the guest puts into the transmit
 * holding register is stamped with the virtual clock and the vCPU that
 * wrote it, and each console line is reported, with the stamps of its
 * bytes, as a JSON Lines record on a second chardev ("events"); with
 * tx-events=on every byte is a record of its own too.
 *
 * The event stream must never lose a record silently.  Records the events
 * backend cannot take right now are queued (up to a fixed bound) and flushed
 * from a chardev watch; past the bound they are counted in "events-dropped"
 * and a "lost" record says how many went missing once the stream drains.
 *
 * Copyright (c) 2026 The ringside authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/module.h"
#include "qemu/timer.h"
#include "qemu/units.h"
#include "qemu/log.h"
#include "qemu/error-report.h"
#include "chardev/char-serial.h"
#include "hw/acpi/acpi_aml_interface.h"
#include "hw/irq.h"
#include "hw/core/cpu.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "migration/vmstate.h"
#include "ringside-serial.h"
#include "trace.h"

static void ringside_events_flush(RingsideSerialState *s);

/* A backend that takes nothing is retried from EVENTS_RETRY_MIN_NS ... */
#define EVENTS_RETRY_MIN_NS     (10 * SCALE_MS)
#define EVENTS_RETRY_MAX_NS     (1000 * SCALE_MS)
/* ... and given up on (its queue dropped, counted) after this long. */
#define EVENTS_STALL_MAX_NS     (10 * NANOSECONDS_PER_SECOND)

static size_t ringside_events_queued(RingsideSerialState *s)
{
    return s->queue->len - s->queue_head;
}

static gboolean ringside_events_writable(void *do_not_use, GIOCondition cond,
                                         void *opaque)
{
    RingsideSerialState *s = opaque;

    s->watch_tag = 0;
    ringside_events_flush(s);
    return G_SOURCE_REMOVE;
}

static void ringside_events_retry(void *opaque)
{
    ringside_events_flush(opaque);
}

/*
 * Each event's head, {"v":N,"ev":"NAME", formatted once (class_init):
 * "tx" events are written per byte.
 */
static char *ringside_event_heads[RS_EV_COUNT];
static size_t ringside_event_head_len[RS_EV_COUNT];

static void ringside_event_heads_init(void)
{
    int ev;

    for (ev = 0; ev < RS_EV_COUNT; ev++) {
        ringside_event_heads[ev] = g_strdup_printf("{\"v\":%d,\"ev\":\"%s\"",
                                                   RS_EVENTS_VERSION,
                                                   rs_event_name(ev));
        ringside_event_head_len[ev] = strlen(ringside_event_heads[ev]);
    }
}

/* Whether the queued record at @p (@len bytes left) is event @ev. */
static bool ringside_event_queued_is(const guint8 *p, size_t len, rs_event ev)
{
    size_t n = ringside_event_head_len[ev];

    return len > n && !memcmp(p, ringside_event_heads[ev], n) &&
           (p[n] == ',' || p[n] == '}');
}

/* @ev's head into @buf (at least 64 bytes); its length. */
static int ringside_event_head(char *buf, rs_event ev)
{
    memcpy(buf, ringside_event_heads[ev], ringside_event_head_len[ev]);
    return ringside_event_head_len[ev];
}

/*
 * The backend has taken nothing for EVENTS_STALL_MAX_NS: drop the records
 * queued, moving them from events-written to events-dropped; a "lost"
 * record says how many once the stream takes records again.  The rest of
 * a record the backend took part of stays, so the stream stays JSON Lines.
 */
static void ringside_events_give_up(RingsideSerialState *s)
{
    const guint8 *p = s->queue->data + s->queue_head;
    size_t n = ringside_events_queued(s), keep = 0, i;
    uint64_t records = 0;

    if (s->events_partial) {
        const guint8 *nl = memchr(p, '\n', n);

        keep = nl ? nl - p + 1 : n;
    }
    for (i = keep; i < n; i++) {
        records += p[i] == '\n';
        if (i == keep || p[i - 1] == '\n') {
            s->unreported_lines += ringside_event_queued_is(p + i, n - i,
                                                            RS_EV_LINE);
        }
    }
    s->events_written -= MIN(records, s->events_written);
    s->events_dropped += records;
    s->unreported_drops += records;
    trace_ringside_serial_event_dropped(s->events_dropped);
    g_byte_array_set_size(s->queue, s->queue_head + keep);
    s->events_stall_start = 0;
}

/*
 * Push queued bytes to the backend.  A backend that takes nothing right
 * now (busy pipe or socket) gets a watch.  One whose watch fires and then
 * still takes nothing (a pipe whose reader is gone, a full disk: it polls
 * writable and every write fails), or that cannot be watched, is retried
 * on a timer that backs off from 10 ms to 1 s, and after 10 s its queue
 * is dropped and counted: never a main loop spinning on it.  Written bytes
 * leave the queue by moving its head; the array is compacted only once
 * the head has passed half of it, so draining is linear.
 */
static void ringside_events_flush(RingsideSerialState *s)
{
    int64_t now;
    bool progress = false;

    while (ringside_events_queued(s)) {
        int n;

        s->events_write_tries++;
        n = qemu_chr_fe_write(&s->events, s->queue->data + s->queue_head,
                              MIN(ringside_events_queued(s), INT_MAX));
        if (n <= 0) {
            s->events_write_fails++;
            break;
        }
        progress = true;
        s->queue_head += n;
        s->events_partial = s->queue->data[s->queue_head - 1] != '\n';
    }
    if (!ringside_events_queued(s)) {
        g_byte_array_set_size(s->queue, 0);
        s->queue_head = 0;
    } else if (s->queue_head > s->queue->len / 2) {
        g_byte_array_remove_range(s->queue, 0, s->queue_head);
        s->queue_head = 0;
    }
    if (!ringside_events_queued(s) || progress) {
        s->events_stall_start = 0;
        s->events_backoff_ns = 0;
        if (!ringside_events_queued(s)) {
            return;
        }
    }
    if (s->watch_tag || timer_pending(s->events_retry)) {
        return;
    }
    if (progress || !s->events_backoff_ns) {
        /* busy, or the first refusal: wait for the backend to say so */
        s->events_backoff_ns = progress ? 0 : EVENTS_RETRY_MIN_NS / 2;
        s->watch_tag = qemu_chr_fe_add_watch(&s->events, G_IO_OUT | G_IO_HUP,
                                             ringside_events_writable, s);
        if (s->watch_tag) {
            return;
        }
    }
    /* it said writable, or cannot say, and took nothing: back off */
    now = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);
    if (!s->events_stall_start) {
        s->events_stall_start = now;
    } else if (now - s->events_stall_start >= EVENTS_STALL_MAX_NS) {
        ringside_events_give_up(s);
        return;
    }
    s->events_backoff_ns = MIN(MAX(s->events_backoff_ns * 2,
                                   EVENTS_RETRY_MIN_NS), EVENTS_RETRY_MAX_NS);
    trace_ringside_serial_events_stall(s->events_backoff_ns / SCALE_MS,
                                       ringside_events_queued(s));
    timer_mod(s->events_retry, now + s->events_backoff_ns);
}

static void ringside_events_emit(RingsideSerialState *s, rs_event ev,
                                 const char *line, size_t len)
{
    bool is_line = ev == RS_EV_LINE;

    s->lines_emitted += is_line;
    if (ringside_events_queued(s) + len > RINGSIDE_EVENTS_QUEUE_MAX) {
        s->events_dropped++;
        s->unreported_drops++;
        s->unreported_lines += is_line;
        trace_ringside_serial_event_dropped(s->events_dropped);
        return;
    }
    g_byte_array_append(s->queue, (const guint8 *)line, len);
    s->events_written++;
    if (!timer_pending(s->events_retry)) {
        ringside_events_flush(s);   /* backing off: the timer will */
    }
}

void ringside_event(RingsideSerialState *s, rs_event ev, const char *fields,
                    ...)
{
    char line[512];
    va_list ap;
    int head, len;

    if (!qemu_chr_fe_backend_connected(&s->events)) {
        return;
    }
    if (s->unreported_drops &&
        ringside_events_queued(s) + sizeof(line) <= RINGSIDE_EVENTS_QUEUE_MAX) {
        uint64_t lost = s->unreported_drops;
        uint64_t lost_lines = s->unreported_lines;

        s->unreported_drops = 0;
        s->unreported_lines = 0;
        len = ringside_event_head(line, RS_EV_LOST);
        len += snprintf(line + len, sizeof(line) - len, ",\"events\":%" PRIu64
                        ",\"lines\":%" PRIu64 "}\n", lost, lost_lines);
        ringside_events_emit(s, RS_EV_LOST, line, len);
    }

    head = ringside_event_head(line, ev);
    va_start(ap, fields);
    len = vsnprintf(line + head, sizeof(line) - head, fields, ap);
    va_end(ap);
    if (len < 0) {
        return;
    }
    len += head;
    if (len + 2 >= sizeof(line)) {
        /* Counters the guest drives can make a summary this long. */
        g_autofree char *body = NULL;
        g_autofree char *big = NULL;

        va_start(ap, fields);
        body = g_strdup_vprintf(fields, ap);
        va_end(ap);
        line[head] = '\0';
        big = g_strconcat(line, body, "}\n", NULL);
        ringside_events_emit(s, ev, big, strlen(big));
        return;
    }
    line[len++] = '}';
    if (ev == RS_EV_START && !s->start_record) {
        s->start_record = g_strndup(line, len);
    }
    line[len++] = '\n';
    ringside_events_emit(s, ev, line, len);
}

/*
 * Console lines as they reach the wire.  A "line" event (the checker's
 * verdict, or "unchecked" with ring=off) says what consumers would
 * otherwise take from a record per byte: when its first and last bytes
 * were written and sent, and by which vCPU.
 */
static int ringside_line_stamp_fields(const RsLineStamp *l, char *buf,
                                      size_t size, uint64_t last, int64_t vt);

static void ringside_line_emit_unchecked(RingsideSerialState *s,
                                         const RsLineStamp *l)
{
    char fields[128];
    uint32_t len = l->n - 1 - l->cr;

    ringside_line_stamp_fields(l, fields, sizeof(fields), l->last, l->wt1);
    ringside_event(s, RS_EV_LINE, ",\"verdict\":\"unchecked\",\"first\":%"
                   PRIu64 ",\"last\":%" PRIu64 ",\"vt\":%" PRId64
                   "%s,\"len\":%u", l->first, l->last, l->wt1, fields, len);
}

void ringside_line_byte(RingsideSerialState *s, uint8_t byte, uint64_t index,
                        int64_t vt, int64_t wt, int cpu)
{
    RsLineStamp *l = &s->line_cur;

    if (!s->line_open) {
        *l = (RsLineStamp) {
            .first = index, .vt0 = vt, .wt0 = wt, .cpu = cpu,
        };
        s->line_open = true;
    } else if (cpu != l->cpu) {
        l->cpus = true;
    }
    l->last = index;
    l->vt1 = vt;
    l->wt1 = wt;
    l->n++;
    if (byte != '\n') {
        l->cr = byte == '\r';
        return;
    }
    s->line_open = false;
    if (!s->ring_auto) {
        ringside_line_emit_unchecked(s, l);
        return;                 /* nothing judges it later */
    }
    /*
     * With a ring and nothing kept for it, a line is judged when it ends,
     * or (cut) with the next: only the last few stamps can still be asked
     * for.
     */
    if (s->line_stamps->len >= RS_LINE_STAMPS_MAX ||
        (s->line_stamps->len >= 16 && !s->match.backlog_len)) {
        g_array_remove_range(s->line_stamps, 0, s->line_stamps->len -
                             (s->match.backlog_len ? RS_LINE_STAMPS_MAX / 2 :
                              4));
    }
    g_array_append_val(s->line_stamps, *l);
}

const RsLineStamp *ringside_line_stamp(RingsideSerialState *s,
                                       uint64_t first)
{
    GArray *a = s->line_stamps;
    guint lo = 0, hi = a->len;
    const RsLineStamp *l;

    if (s->line_open && s->line_cur.first <= first) {
        return &s->line_cur;
    }
    /* the last stamp that begins at or before @first */
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;

        if (g_array_index(a, RsLineStamp, mid).first <= first) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (!lo) {
        return NULL;
    }
    l = &g_array_index(a, RsLineStamp, lo - 1);
    return first <= l->last ? l : NULL;
}

/*
 * "dt": ns from the first byte's wire time to @vt (the last byte's);
 * "cpu" (and "cpus" if several wrote); "q0", "q": ns the first and last
 * byte waited between their THR write and the wire, when they did.  A
 * line whose bytes began before a loadvm has none of them.
 */
static int ringside_line_stamp_fields(const RsLineStamp *l, char *buf,
                                      size_t size, uint64_t last, int64_t vt)
{
    int n;

    n = snprintf(buf, size, ",\"dt\":%" PRId64 ",\"cpu\":%d%s",
                 MAX(vt - l->wt0, 0), l->cpu, l->cpus ? ",\"cpus\":1" : "");
    if (l->wt0 != l->vt0) {
        n += snprintf(buf + n, size - n, ",\"q0\":%" PRId64, l->wt0 - l->vt0);
    }
    if (l->wt1 != l->vt1 && last == l->last) {
        n += snprintf(buf + n, size - n, ",\"q\":%" PRId64, l->wt1 - l->vt1);
    }
    return n;
}

int ringside_line_fields(RingsideSerialState *s, char *buf, size_t size,
                         uint64_t first, uint64_t last, int64_t vt)
{
    const RsLineStamp *l = ringside_line_stamp(s, first);

    buf[0] = '\0';
    return l ? ringside_line_stamp_fields(l, buf, size, last, vt) : 0;
}

/* Returns the byte's index in the stream ("i"). */
static uint64_t ringside_record_tx(RingsideSerialState *s, uint8_t byte)
{
    bool events = s->tx_events && qemu_chr_fe_backend_connected(&s->events);
    bool loop = s->serial.mcr & RS_MCR_LOOP;
    int cpu = current_cpu ? current_cpu->cpu_index : -1;
    uint64_t i = s->tx_bytes++;
    int64_t vt = 0;

    /* Per byte: read the clocks only for what will use them. */
    if (events || trace_event_get_state_backends(TRACE_RINGSIDE_SERIAL_TX)) {
        vt = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    }
    trace_ringside_serial_tx(i, vt, cpu, byte);
    if (events) {
        ringside_event(s, RS_EV_TX,
                       ",\"i\":%" PRIu64
                       ",\"vt\":%" PRId64 ",\"ht\":%" PRId64
                       ",\"cpu\":%d,\"b\":%u%s", i, vt,
                       qemu_clock_get_ns(QEMU_CLOCK_HOST), cpu, byte,
                       loop ? ",\"loop\":1" : "");
    } else if (loop) {
        /* it gets an index and never reaches the console: say which */
        ringside_event(s, RS_EV_LOOP, ",\"i\":%" PRIu64, i);
    }
    /* It is judged once it leaves the wire (ringside-serial-pace.c). */
    return i;
}

static uint64_t ringside_serial_read(void *opaque, hwaddr addr, unsigned size)
{
    RingsideSerialState *s = opaque;
    uint64_t val;

    if (unlikely(s->load_incomplete)) {
        ringside_load_forget(s);    /* a stopped guest's state is read too */
    }
    if (addr == RS_REG_SCR && s->ext_base && ringside_ext_scr_read(s, &val)) {
        return val;
    }
    /*
     * A read of LSR or IIR may send (and judge) what the transmitter held;
     * with it empty (unpaced, nearly always) a read does no work to meter.
     */
    if (!s->tsr_busy) {
        return ringside_pace_read(s, addr);
    }
    ringside_cost_begin(s, RS_COST_ACCESS);
    val = ringside_pace_read(s, addr);
    ringside_cost_end(s);
    return val;
}

static void ringside_serial_do_write(RingsideSerialState *s, hwaddr addr,
                                     uint64_t val, unsigned size);

/* One guest access: one read budget, metered (ringside-serial-attach.c). */
static void ringside_serial_write(void *opaque, hwaddr addr, uint64_t val,
                                  unsigned size)
{
    RingsideSerialState *s = opaque;

    if (unlikely(s->load_incomplete)) {
        ringside_load_forget(s);
    }
    ringside_cost_begin(s, RS_COST_ACCESS);
    ringside_serial_do_write(s, addr, val, size);
    ringside_cost_end(s);
}

static void ringside_serial_do_write(RingsideSerialState *s, hwaddr addr,
                                     uint64_t val, unsigned size)
{
    /* Offset 0 is the divisor latch while DLAB is set, THR otherwise. */
    if (addr == RS_REG_THR && !(s->serial.lcr & RS_LCR_DLAB)) {
        uint64_t i = ringside_record_tx(s, val);
        bool loop = s->serial.mcr & RS_MCR_LOOP;
        bool sent = true;

        if (!loop) {
            sent = ringside_pace_thr_write(s, val, i);
        } else {
            serial_io_ops.write(&s->serial, addr, val, size);
        }
        if (s->ext_base && !loop) {
            ringside_ext_byte(s, val, i, !sent);
        }
        return;
    }
    if (addr == RS_REG_SCR && s->ext_base) {
        ringside_ext_scr_write(s, val);
    }
    ringside_pace_write(s, addr, val);
}

/* Same access rules as QEMU's 16550: byte-wide, eight registers. */
static const MemoryRegionOps ringside_serial_io_ops = {
    .read = ringside_serial_read,
    .write = ringside_serial_write,
    .valid = {
        .unaligned = 1,
    },
    .impl = {
        .min_access_size = 1,
        .max_access_size = 1,
    },
    .endianness = DEVICE_LITTLE_ENDIAN,
};

/*
 * A two-valued string property: unset or @dflt gives false, @other true,
 * anything else an error naming both.
 */
static bool ringside_parse_mode(const char *prop, const char *val,
                                const char *dflt, const char *other,
                                bool *is_other, Error **errp)
{
    if (!val || !strcmp(val, dflt)) {
        *is_other = false;
    } else if (!strcmp(val, other)) {
        *is_other = true;
    } else {
        error_setg(errp, "%s=%s: expected %s or %s", prop, val, dflt, other);
        return false;
    }
    return true;
}

/*
 * The embedded 16550's state.  QEMU's vmstate_serial trusts what it loads
 * (the receive FIFO's head indexes the heap; a pending retry of its own
 * transmitter makes its post_load send bytes, or assert), and it acts on
 * the state in its post_load, before anything of ringside's runs.  So
 * the device describes the UART itself, in the very same wire format
 * (section "serial", version 3, same fields and subsections, each sent
 * when QEMU's would be), and checks every field before it sets up what
 * QEMU's post_load would: streams of either stay loadable by both.
 *
 * Beyond range checks, it refuses what this device cannot have saved:
 * the UART's own transmitter never runs here (ringside's does, and the
 * UART only loops bytes back in loopback mode, at once), so its shift
 * register, transmit FIFO and retry are always empty and LSR says so,
 * and THRE's interrupt is the device's, never enabled in the UART.
 */
#define RS_UART_IER_ALL         0x0f
#define RS_UART_IIR_ALL_ID      0x3f    /* ID, and two bits never set */
#define RS_UART_IIR_FIFO        0xc0
#define RS_UART_IIR_RLSI        0x06
#define RS_UART_IIR_RDI         0x04
#define RS_UART_IIR_CTI         0x0c
#define RS_UART_LCR_WORD        0x03    /* data bits less 5 */
#define RS_UART_LCR_STOP2       0x04
#define RS_UART_LCR_PARITY      0x08
#define RS_UART_LCR_EVEN        0x10
#define RS_UART_LCR_BREAK       0x40
#define RS_UART_MCR_ALL         0x1f
#define RS_UART_MCR_OUT2        0x08
#define RS_UART_LSR_FIFO_ERR    0x80    /* QEMU's model never sets it */
#define RS_UART_MSR_DCD         0x80
#define RS_UART_MSR_DSR         0x20
#define RS_UART_MSR_CTS         0x10
#define RS_UART_FCR_STICKY      0xc9    /* enable, DMA mode, trigger level */
#define RS_UART_DIVISOR_RESET   12      /* 9600 baud from 1.8432 MHz */

/* FCR as QEMU's model keeps it: the FIFO bits of IIR and the trigger. */
static void ringside_uart_set_fcr(SerialState *u, uint8_t fcr)
{
    static const uint8_t trigger[4] = { 1, 4, 8, 14 };

    u->fcr = fcr;
    u->recv_fifo_itl = trigger[fcr >> 6];
    u->iir &= ~RS_UART_IIR_FIFO;
    if (fcr & RS_FCR_FE) {
        u->iir |= RS_UART_IIR_FIFO;
    }
}

/*
 * The UART as a reset leaves it, and its FIFOs off: after a refused load
 * nothing it holds may come from the stream.
 */
/*
 * The line's speed and framing, from LCR and the divisor: the character
 * time the UART model paces its transmitter by, and the backend's line
 * (a host serial port follows it).  The model redoes this on each LCR or
 * divisor write; a reset or a load must do it too.  The arithmetic is the
 * model's own, so that both agree on the character time.
 */
static void ringside_uart_line_params(SerialState *u)
{
    QEMUSerialSetParams line = {
        .data_bits = 5 + (u->lcr & RS_UART_LCR_WORD),
        .stop_bits = u->lcr & RS_UART_LCR_STOP2 ? 2 : 1,
        .parity = !(u->lcr & RS_UART_LCR_PARITY) ? 'N' :
                  u->lcr & RS_UART_LCR_EVEN ? 'E' : 'O',
    };
    int frame_bits = 1 + line.data_bits + line.stop_bits +
                     (line.parity != 'N');
    /* A zero divisor runs the model at about 3500 baud. */
    float baud = u->divider ? (float)u->baudbase / u->divider : 3500;

    line.speed = baud;
    u->char_transmit_time = (NANOSECONDS_PER_SECOND / baud) * frame_bits;
    qemu_chr_fe_ioctl(&u->chr, CHR_IOCTL_SERIAL_SET_PARAMS, &line);
}

static void ringside_uart_reset(RingsideSerialState *s)
{
    SerialState *u = &s->serial;

    trace_ringside_serial_uart_reset();
    if (u->watch_tag) {
        g_source_remove(u->watch_tag);
        u->watch_tag = 0;
    }
    timer_del(u->fifo_timeout_timer);
    timer_del(u->modem_status_poll);
    fifo8_reset(&u->recv_fifo);
    fifo8_reset(&u->xmit_fifo);
    u->divider = RS_UART_DIVISOR_RESET;
    u->rbr = u->thr = u->tsr = 0;
    u->ier = u->lcr = u->scr = 0;
    u->iir = RS_IIR_NO_INT;
    u->lsr = RS_LSR_TEMT | RS_LSR_THRE;
    u->msr = RS_UART_MSR_DCD | RS_UART_MSR_DSR | RS_UART_MSR_CTS;
    u->mcr = RS_UART_MCR_OUT2;
    u->tsr_retry = 0;
    u->thr_ipending = 0;
    u->timeout_ipending = 0;
    u->last_break_enable = 0;
    u->poll_msl = 0;            /* the next MSR read asks the backend */
    ringside_uart_set_fcr(u, 0);
    ringside_uart_line_params(u);
    u->last_xmit_ts = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    qemu_irq_lower(u->irq);
}

static const char *ringside_uart_fifo_bad(const Fifo8 *f, bool xmit)
{
    if (f->head >= f->capacity) {
        return xmit ? "serial.xmit_fifo.head: past the FIFO" :
                      "serial.recv_fifo.head: past the FIFO";
    }
    if (f->num > f->capacity) {
        return xmit ? "serial.xmit_fifo.num: more than the FIFO holds" :
                      "serial.recv_fifo.num: more than the FIFO holds";
    }
    if (xmit && f->num) {
        return "serial.xmit_fifo.num: bytes in the UART's transmit FIFO, "
               "which this device never leaves holding any";
    }
    return NULL;
}

/*
 * Why the UART's state as loaded so far is refused, or NULL.  Every
 * field is checked: those the model indexes with (the FIFOs' head and
 * num), compares to an enum (thr_ipending, timeout_ipending, poll_msl),
 * derives its transmitter from (tsr_retry, LSR, the transmit FIFO) and
 * the registers with bits no write can set.  The divisor may be any: a
 * guest can program each of them, the model rates 0 as 3500 baud, and
 * what is divided by (the character time) is computed again, not loaded.
 */
static const char *ringside_uart_state_bad(const SerialState *u)
{
    uint8_t id = u->iir & RS_UART_IIR_ALL_ID;
    const char *why;

    if (u->ier & ~RS_UART_IER_ALL) {
        return "serial.ier: bits a 16550 lacks";
    }
    if (u->ier & RS_IER_THRI) {
        return "serial.ier: THRE interrupt enabled in the UART (this "
               "device raises it itself)";
    }
    if (id != RS_IIR_NO_INT && id != RS_IIR_MSI && id != RS_UART_IIR_RLSI &&
        id != RS_UART_IIR_RDI && id != RS_UART_IIR_CTI) {
        return "serial.iir: not an interrupt the UART raises here";
    }
    if (u->mcr & ~RS_UART_MCR_ALL) {
        return "serial.mcr: bits a 16550 lacks";
    }
    if (u->tsr_retry) {
        return "serial.tsr_retry: a byte the UART's own transmitter "
               "retries (it never sends here)";
    }
    if (u->lsr & RS_UART_LSR_FIFO_ERR) {
        return "serial.lsr: a receive FIFO error QEMU's 16550 never flags";
    }
    if ((u->lsr & (RS_LSR_THRE | RS_LSR_TEMT)) !=
        (RS_LSR_THRE | RS_LSR_TEMT)) {
        return "serial.lsr: THR or the shift register busy (the UART's "
               "transmitter never runs here)";
    }
    if (u->fcr_vmstate & ~RS_UART_FCR_STICKY) {
        return "serial.fcr_vmstate: bits FCR does not keep";
    }
    if (u->thr_ipending < -1 || u->thr_ipending > 1) {
        return "serial.thr_ipending: neither 0 nor 1";
    }
    why = ringside_uart_fifo_bad(&u->recv_fifo, false);
    if (!why) {
        why = ringside_uart_fifo_bad(&u->xmit_fifo, true);
    }
    if (why) {
        return why;
    }
    if (u->timeout_ipending < 0 || u->timeout_ipending > 1) {
        return "serial.timeout_ipending: neither 0 nor 1";
    }
    if (u->poll_msl < -1 || u->poll_msl > 1) {
        return "serial.poll_msl: not -1, 0 or 1";
    }
    return NULL;
}

static RingsideSerialState *ringside_of_uart(SerialState *u)
{
    return container_of(u, RingsideSerialState, serial);
}

static int ringside_uart_pre_save(void *opaque)
{
    SerialState *u = opaque;

    u->fcr_vmstate = u->fcr;
    return 0;
}

/* What the subsections leave unset when they are not sent. */
static int ringside_uart_pre_load(void *opaque)
{
    SerialState *u = opaque;

    u->thr_ipending = -1;       /* from IIR */
    u->poll_msl = -1;
    return 0;
}

/*
 * Each subsection is checked as soon as it is in, with all loaded before
 * it: nothing loaded waits for the end of the section to be judged.
 */
static int ringside_uart_sub_post_load(void *opaque, int version_id)
{
    SerialState *u = opaque;
    const char *why = ringside_uart_state_bad(u);

    return why ? ringside_load_refuse(ringside_of_uart(u), why) : 0;
}

static int ringside_uart_post_load(void *opaque, int version_id)
{
    SerialState *u = opaque;
    const char *why;

    if (version_id < 3) {
        u->fcr_vmstate = 0;     /* version 2 had no FCR */
    }
    why = ringside_uart_state_bad(u);
    if (why) {
        return ringside_load_refuse(ringside_of_uart(u), why);
    }
    /* Now what QEMU's post_load sets up, from checked values only. */
    if (u->thr_ipending == -1) {
        u->thr_ipending = (u->iir & RS_IIR_ID) == RS_IIR_THRI;
    }
    u->last_break_enable = !!(u->lcr & RS_UART_LCR_BREAK);
    ringside_uart_set_fcr(u, u->fcr_vmstate);
    ringside_uart_line_params(u);
    trace_ringside_serial_uart_loaded(u->divider, u->lcr, u->fcr,
                                      u->recv_fifo.num);
    return 0;
}

static bool ringside_uart_thr_ipending_needed(void *opaque)
{
    SerialState *u = opaque;

    /* with THRI off the model samples LSR again when it goes on */
    return (u->ier & RS_IER_THRI) &&
           u->thr_ipending != ((u->iir & RS_IIR_ID) == RS_IIR_THRI);
}

static bool ringside_uart_tsr_needed(void *opaque)
{
    return ((SerialState *)opaque)->tsr_retry != 0;
}

static bool ringside_uart_recv_fifo_needed(void *opaque)
{
    return ((SerialState *)opaque)->recv_fifo.num != 0;
}

static bool ringside_uart_xmit_fifo_needed(void *opaque)
{
    return ((SerialState *)opaque)->xmit_fifo.num != 0;
}

static bool ringside_uart_fifo_timeout_needed(void *opaque)
{
    return timer_pending(((SerialState *)opaque)->fifo_timeout_timer);
}

static bool ringside_uart_timeout_ipending_needed(void *opaque)
{
    return ((SerialState *)opaque)->timeout_ipending != 0;
}

static bool ringside_uart_poll_needed(void *opaque)
{
    return ((SerialState *)opaque)->poll_msl >= 0;
}

static const VMStateDescription vmstate_ringside_uart_thr_ipending = {
    .name = "serial/thr_ipending",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ringside_uart_thr_ipending_needed,
    .post_load = ringside_uart_sub_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_INT32(thr_ipending, SerialState),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_ringside_uart_tsr = {
    .name = "serial/tsr",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ringside_uart_tsr_needed,
    .post_load = ringside_uart_sub_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_UINT32(tsr_retry, SerialState),
        VMSTATE_UINT8(thr, SerialState),
        VMSTATE_UINT8(tsr, SerialState),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_ringside_uart_recv_fifo = {
    .name = "serial/recv_fifo",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ringside_uart_recv_fifo_needed,
    .post_load = ringside_uart_sub_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_STRUCT(recv_fifo, SerialState, 1, vmstate_fifo8, Fifo8),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_ringside_uart_xmit_fifo = {
    .name = "serial/xmit_fifo",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ringside_uart_xmit_fifo_needed,
    .post_load = ringside_uart_sub_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_STRUCT(xmit_fifo, SerialState, 1, vmstate_fifo8, Fifo8),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_ringside_uart_fifo_timeout = {
    .name = "serial/fifo_timeout_timer",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ringside_uart_fifo_timeout_needed,
    .post_load = ringside_uart_sub_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_TIMER_PTR(fifo_timeout_timer, SerialState),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_ringside_uart_timeout_ipending = {
    .name = "serial/timeout_ipending",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ringside_uart_timeout_ipending_needed,
    .post_load = ringside_uart_sub_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_INT32(timeout_ipending, SerialState),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_ringside_uart_poll = {
    .name = "serial/poll",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ringside_uart_poll_needed,
    .post_load = ringside_uart_sub_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_INT32(poll_msl, SerialState),
        VMSTATE_TIMER_PTR(modem_status_poll, SerialState),
        VMSTATE_END_OF_LIST()
    }
};

/* vmstate_serial's wire format, checked (hw/char/serial.c in QEMU 7.2). */
static const VMStateDescription vmstate_ringside_uart = {
    .name = "serial",
    .version_id = 3,
    .minimum_version_id = 2,
    .pre_save = ringside_uart_pre_save,
    .pre_load = ringside_uart_pre_load,
    .post_load = ringside_uart_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_UINT16_V(divider, SerialState, 2),
        VMSTATE_UINT8(rbr, SerialState),
        VMSTATE_UINT8(ier, SerialState),
        VMSTATE_UINT8(iir, SerialState),
        VMSTATE_UINT8(lcr, SerialState),
        VMSTATE_UINT8(mcr, SerialState),
        VMSTATE_UINT8(lsr, SerialState),
        VMSTATE_UINT8(msr, SerialState),
        VMSTATE_UINT8(scr, SerialState),
        VMSTATE_UINT8_V(fcr_vmstate, SerialState, 3),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * []) {
        &vmstate_ringside_uart_thr_ipending,
        &vmstate_ringside_uart_tsr,
        &vmstate_ringside_uart_recv_fifo,
        &vmstate_ringside_uart_xmit_fifo,
        &vmstate_ringside_uart_fifo_timeout,
        &vmstate_ringside_uart_timeout_ipending,
        &vmstate_ringside_uart_poll,
        NULL
    }
};

/*
 * Loading state: the stream is as hostile as the guest.  Each subsection's
 * post_load checks every field it loaded (the plain-C parts with their
 * library's own validators) and refuses what the device could not have
 * saved.  A refused load leaves the device as a reset does, so that after
 * a failed loadvm the user can "cont": nothing then indexes with a loaded
 * value.  A load that stops half-way (a cut stream, another subsection
 * refused) never reaches the post_load of what it loaded: load_incomplete
 * says so, and the next use (run, reset, save, a register access) forgets
 * it first.  The embedded UART is reset too: what it loaded may be what
 * was refused, or the stream broke off inside it.
 */
void ringside_load_forget(RingsideSerialState *s)
{
    s->load_incomplete = false;
    ringside_uart_reset(s);
    ringside_pace_reset(s);
    if (s->ring_auto) {
        ringside_verify_forget(s);
        ringside_ext_forget(s);
        ringside_attach_restart(s, "bad state loaded");
    }
}

int ringside_load_refuse(RingsideSerialState *s, const char *why)
{
    error_report("ringside-serial: migrated state refused, %s", why);
    ringside_load_forget(s);
    return -EINVAL;
}

static void ringside_load_vm_state(void *opaque, bool running,
                                   RunState state)
{
    RingsideSerialState *s = opaque;

    if (running && s->load_incomplete) {
        ringside_load_forget(s);
    }
}

/*
 * A client connected to the events chardev (a socket's, again after a
 * drop): tell it where the stream stands, so that it can begin a run it
 * did not see start and count the lines it missed.  Queued records go
 * first.
 */
static void ringside_events_event(void *opaque, QEMUChrEvent event)
{
    RingsideSerialState *s = opaque;

    if (event != CHR_EVENT_OPENED || !s->start_record) {
        return;
    }
    ringside_event(s, RS_EV_CONNECTED, ",\"lines\":%" PRIu64 ",\"start\":%s",
                   s->lines_emitted, s->start_record);
    timer_del(s->events_retry);
    s->events_backoff_ns = 0;
    s->events_stall_start = 0;
    ringside_events_flush(s);
}

static void ringside_serial_realize(DeviceState *dev, Error **errp)
{
    RingsideSerialState *s = RINGSIDE_SERIAL(dev);
    ISADevice *isadev = ISA_DEVICE(dev);
    bool ring_off;

    if (s->isairq >= ISA_NUM_IRQS) {
        error_setg(errp, "irq %u is not an ISA interrupt (0..%d)",
                   s->isairq, ISA_NUM_IRQS - 1);
        return;
    }
    if (!ringside_parse_mode("pace", s->pace_mode, "off", "line", &s->pace,
                             errp) ||
        !ringside_parse_mode("ring", s->ring_mode, "auto", "off",
                             &ring_off, errp)) {
        return;
    }
    s->ring_auto = !ring_off;
    if (!s->access_reads || !s->tick_reads || !s->line_read_rate) {
        error_setg(errp, "read-budget, tick-read-budget and line-read-rate "
                   "must be above 0");
        return;
    }
    s->rate_credit = (uint64_t)s->tick_reads * NANOSECONDS_PER_SECOND;
    s->rate_vt = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    if (!s->ring_auto) {
        s->ext_base = 0;        /* level 1 judges against the ring */
    }
    if (s->loglevel > 15) {
        error_setg(errp, "loglevel %u: expected 0 (infer) to 15", s->loglevel);
        return;
    }
    if (s->iobase > 0xfff8) {
        error_setg(errp, "iobase 0x%x leaves no room for 8 registers",
                   s->iobase);
        return;
    }

    if (s->ring_auto && !ringside_ext_realize(s, errp)) {
        return;
    }

    s->events_retry = timer_new_ns(QEMU_CLOCK_REALTIME, ringside_events_retry,
                                   s);
    s->irq = isa_get_irq(isadev, s->isairq);
    ringside_pace_realize(s);
    if (!qdev_realize(DEVICE(&s->serial), NULL, errp)) {
        return;
    }
    qdev_set_legacy_instance_id(dev, s->iobase, 3);

    memory_region_init_io(&s->io, OBJECT(dev), &ringside_serial_io_ops, s,
                          "ringside-serial", 8);
    isa_register_ioport(isadev, &s->io, s->iobase);

    qemu_chr_fe_set_handlers(&s->events, NULL, NULL, ringside_events_event,
                             NULL, s, NULL, true);
    ringside_event(s, RS_EV_START, ",\"dev\":\"%s\",\"iobase\":%u,"
                   "\"irq\":%u,\"pace\":\"%s\"", TYPE_RINGSIDE_SERIAL,
                   s->iobase, s->isairq, s->pace ? "line" : "off");
    if (s->ring_auto) {
        ringside_verify_realize(s);
        ringside_attach_realize(s);
    }
    s->load_vmse = qemu_add_vm_change_state_handler(ringside_load_vm_state,
                                                    s);
}

static void ringside_serial_reset(DeviceState *dev)
{
    RingsideSerialState *s = RINGSIDE_SERIAL(dev);

    if (s->load_incomplete) {
        ringside_load_forget(s);    /* nothing to judge in what it left */
    }
    /* a reset the guest asks for judges the boot: metered as a tick */
    ringside_cost_begin(s, RS_COST_TICK);
    ringside_pace_reset(s);
    if (s->ring_auto) {
        ringside_verify_reset(s);
        ringside_ext_reset(s);
        ringside_attach_reset(s);
    }
    s->line_open = false;       /* judged (ring=auto) or cut by the reset */
    g_array_set_size(s->line_stamps, 0);
    ringside_cost_end(s);
}

static void ringside_serial_unrealize(DeviceState *dev)
{
    RingsideSerialState *s = RINGSIDE_SERIAL(dev);

    if (s->watch_tag) {
        g_source_remove(s->watch_tag);
        s->watch_tag = 0;
    }
    timer_free(s->events_retry);
    s->events_retry = NULL;
    qemu_del_vm_change_state_handler(s->load_vmse);
    s->load_vmse = NULL;
    qemu_chr_fe_deinit(&s->events, false);
    qdev_unrealize(DEVICE(&s->serial));
    ringside_pace_unrealize(s);
    if (s->ring_auto) {
        ringside_attach_unrealize(s);
        ringside_verify_unrealize(s);
    }
}

/* Describe the port in ACPI as a PNP0501 UART, as a COM port would be. */
static void ringside_serial_build_aml(AcpiDevAmlIf *adev, Aml *scope)
{
    RingsideSerialState *s = RINGSIDE_SERIAL(adev);
    Aml *crs = aml_resource_template();
    Aml *dev = aml_device("RSC%u", s->index % 10);

    aml_append(crs, aml_io(AML_DECODE16, s->iobase, s->iobase, 0x00, 0x08));
    aml_append(crs, aml_irq_no_flags(s->isairq));
    aml_append(dev, aml_name_decl("_HID", aml_eisaid("PNP0501")));
    aml_append(dev, aml_name_decl("_UID", aml_int(s->index + 1)));
    aml_append(dev, aml_name_decl("_STA", aml_int(0xf)));
    aml_append(dev, aml_name_decl("_CRS", crs));
    aml_append(scope, dev);
}

/*
 * A restored device writes to a new event stream: say where its byte
 * count resumes, so a reader knows the bytes before were not lost.
 */
static int ringside_serial_pre_load(void *opaque)
{
    RingsideSerialState *s = opaque;

    s->pace_loaded = false;
    s->load_incomplete = true;
    return 0;
}

static int ringside_serial_post_load(void *opaque, int version_id)
{
    RingsideSerialState *s = opaque;

    /* Saved before pace=off ran through the device's transmitter too. */
    if (!s->pace_loaded) {
        return ringside_load_refuse(s, "it has no transmitter state (an "
                                    "older ringside-serial with pace=off)");
    }
    s->load_incomplete = false;
    /* lines begun before the save have no stamps */
    s->line_open = false;
    g_array_set_size(s->line_stamps, 0);
    ringside_event(s, RS_EV_RESUME, ",\"tx\":%" PRIu64, s->tx_bytes);
    return 0;
}

/* Saving what a failed load left would pass it on. */
static int ringside_serial_pre_save(void *opaque)
{
    RingsideSerialState *s = opaque;

    if (s->load_incomplete) {
        ringside_load_forget(s);
    }
    return 0;
}

static const VMStateDescription vmstate_ringside_serial = {
    .name = TYPE_RINGSIDE_SERIAL,
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = ringside_serial_pre_save,
    .pre_load = ringside_serial_pre_load,
    .post_load = ringside_serial_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_STRUCT(serial, RingsideSerialState, 0, vmstate_ringside_uart,
                       SerialState),
        VMSTATE_UINT64(tx_bytes, RingsideSerialState),
        VMSTATE_UINT64(events_written, RingsideSerialState),
        VMSTATE_UINT64(events_dropped, RingsideSerialState),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * []) {
        &vmstate_ringside_pace,
        &vmstate_ringside_verify,
        &vmstate_ringside_ext,
        NULL
    }
};

static RS_PROPERTY_CONST Property ringside_serial_properties[] = {
    DEFINE_PROP_UINT32("index", RingsideSerialState, index, 0),
    DEFINE_PROP_UINT32("iobase", RingsideSerialState, iobase, 0x3f8),
    DEFINE_PROP_UINT32("irq", RingsideSerialState, isairq, 4),
    DEFINE_PROP_CHR("events", RingsideSerialState, events),
    /* off: instant transmitter; line: paced at the programmed rate */
    DEFINE_PROP_STRING("pace", RingsideSerialState, pace_mode),
    /* on: a tx (and wire) event per byte besides the line events */
    DEFINE_PROP_BOOL("tx-events", RingsideSerialState, tx_events, false),
    DEFINE_PROP_STRING("ring", RingsideSerialState, ring_mode),
    /* the guest's console_loglevel, if known; 0 infers it */
    DEFINE_PROP_UINT32("loglevel", RingsideSerialState, loglevel, 0),
    /* I/O base of the level 1 extension window; 0: none */
    DEFINE_PROP_UINT32("ext", RingsideSerialState, ext_base, 0x4f0),
    /* text the guest reads through the extension window (a test scenario) */
    DEFINE_PROP_STRING("mailbox", RingsideSerialState, mailbox),
    /* guest-memory reads one register access / one timer tick may make */
    DEFINE_PROP_UINT32("read-budget", RingsideSerialState, access_reads,
                       1024),
    DEFINE_PROP_UINT32("tick-read-budget", RingsideSerialState, tick_reads,
                       8192),
    /* pace=line: guest-memory reads a second of line time may make */
    DEFINE_PROP_UINT32("line-read-rate", RingsideSerialState, line_read_rate,
                       RS_LINE_READ_RATE),
    RS_PROPERTIES_END
};

/* Read-only QOM counters (docs/device.md: "Using it"). */
static const struct {
    const char *name;
    size_t off;
} ringside_counters[] = {
    { "tx-bytes", offsetof(RingsideSerialState, tx_bytes) },
    { "events-written", offsetof(RingsideSerialState, events_written) },
    { "mailbox-waits", offsetof(RingsideSerialState, mailbox_waits) },
    { "events-dropped", offsetof(RingsideSerialState, events_dropped) },
    { "tx-overruns", offsetof(RingsideSerialState, tx_overruns) },
    { "tx-refused", offsetof(RingsideSerialState, tx_refused) },
    { "tx-cleared", offsetof(RingsideSerialState, tx_cleared) },
    { "tx-sent", offsetof(RingsideSerialState, tx_sent) },
    { "events-write-tries", offsetof(RingsideSerialState,
                                     events_write_tries) },
    { "events-write-fails", offsetof(RingsideSerialState,
                                     events_write_fails) },
};

static char *ringside_get_ring_state(Object *obj, Error **errp)
{
    RingsideSerialState *s = RINGSIDE_SERIAL(obj);

    if (!s->ring_auto) {
        return g_strdup("off");
    }
    /* stopped after a failed load, before anything forgot what it left */
    if (s->ring_state < RS_RING_NONE || s->ring_state > RS_RING_UNTRUSTED) {
        return g_strdup("none");
    }
    return g_strdup(ringside_ring_state_names[s->ring_state]);
}

static void ringside_serial_instance_init(Object *obj)
{
    RingsideSerialState *s = RINGSIDE_SERIAL(obj);
    size_t i;

    object_initialize_child(obj, "serial", &s->serial, TYPE_SERIAL);
    /* chardev, baudbase and wakeup are the embedded UART's own. */
    qdev_alias_all_properties(DEVICE(&s->serial), obj);

    s->queue = g_byte_array_new();
    s->line_stamps = g_array_new(FALSE, FALSE, sizeof(RsLineStamp));
    object_property_add_str(obj, "ring-state", ringside_get_ring_state, NULL);
    for (i = 0; i < ARRAY_SIZE(ringside_counters); i++) {
        object_property_add_uint64_ptr(obj, ringside_counters[i].name,
                                       (uint64_t *)((char *)s +
                                                    ringside_counters[i].off),
                                       OBJ_PROP_FLAG_READ);
    }
    ringside_verify_add_props(obj);
    ringside_ext_add_props(obj);
    ringside_cost_add_props(obj);
    ringside_loadtest_add_props(obj);
}

static void ringside_serial_instance_finalize(Object *obj)
{
    RingsideSerialState *s = RINGSIDE_SERIAL(obj);

    g_byte_array_free(s->queue, true);
    g_free(s->start_record);
    g_array_free(s->line_stamps, true);
}

static void ringside_serial_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    AcpiDevAmlIfClass *adevc = ACPI_DEV_AML_IF_CLASS(klass);

    ringside_event_heads_init();
    dc->desc = "16550A UART that timestamps every transmitted byte and "
               "checks the console against the guest's printk ring";
    dc->realize = ringside_serial_realize;
    dc->unrealize = ringside_serial_unrealize;
    rs_set_reset(dc, ringside_serial_reset);
    dc->vmsd = &vmstate_ringside_serial;
    adevc->build_dev_aml = ringside_serial_build_aml;
    device_class_set_props(dc, ringside_serial_properties);
    object_class_property_set_description(klass, "pace",
        "off (default): send each byte the moment it is written, as QEMU's "
        "16550 does; line: send at the baud rate and frame the guest "
        "programmed.  In both, a byte the chardev refuses is held (THRE "
        "low, as under flow control) and retried, after a character time "
        "and then less often (up to 10 ms apart), for up to 1 s, then "
        "dropped and counted in tx-refused with a \"wire\" "
        "event marked \"refused\"; a byte written to a full transmitter "
        "is counted in tx-overruns (\"overrun\" event).  Nothing is lost "
        "silently");
    object_class_property_set_description(klass, "ring",
        "auto (default): find the guest's printk ring from its VMCOREINFO "
        "note; off: do not look");
    object_class_property_set_description(klass, "loglevel",
        "the guest's console loglevel: records at or above it are not "
        "expected on the console; 0 (default): infer it from what is "
        "printed");
    object_class_property_set_description(klass, "ext",
        "I/O base of the extension window through which a kernel with the "
        "ringside handshake announces its ring and marks each console "
        "record (default 0x4f0); 0: none, the device is a plain 16550A to "
        "the guest");
    object_class_property_set_description(klass, "events",
        "chardev for the JSON Lines event stream");
    object_class_property_set_description(klass, "tx-events",
        "off (default): an event per console line, with the times and "
        "vCPU of its bytes; on: also a \"tx\" event per byte written (and "
        "\"wire\" when it left a paced line), some 30 times the volume");
    object_class_property_set_description(klass, "read-budget",
        "guest-memory reads one register access may make to check the "
        "console against the ring (default 1024, with 128 bytes a read); "
        "what does not fit is judged \"under budget\" or put off to a "
        "timer tick, never blamed on the guest");
    object_class_property_set_description(klass, "tick-read-budget",
        "guest-memory reads one of the device's timer ticks may make "
        "(note scan, backlog replay; default 8192)");
    object_class_property_set_description(klass, "line-read-rate",
        "pace=line: guest-memory reads all of the device's work may make "
        "in a second of line time, earned as the line runs (default "
        stringify(RS_LINE_READ_RATE) "); what does not fit is judged "
        "\"under budget\"");
    set_bit(DEVICE_CATEGORY_INPUT, dc->categories);
}

static const TypeInfo ringside_serial_info = {
    .name = TYPE_RINGSIDE_SERIAL,
    .parent = TYPE_ISA_DEVICE,
    .instance_size = sizeof(RingsideSerialState),
    .instance_init = ringside_serial_instance_init,
    .instance_finalize = ringside_serial_instance_finalize,
    .class_init = ringside_serial_class_init,
    .interfaces = (InterfaceInfo[]) {
        { TYPE_ACPI_DEV_AML_IF },
        { },
    },
};

static void ringside_serial_register_types(void)
{
    type_register_static(&ringside_serial_info);
}

type_init(ringside_serial_register_types)
