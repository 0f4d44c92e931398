/*
 * ringside-serial's transmitter: a 16550A transmit FIFO and shift register
 * that the device runs itself, in both pacing modes.
 *
 * pace=line: QEMU's UART model hands each THR byte to its chardev at once,
 * so a guest console under emulation runs some 75 times faster than a
 * 115200-baud line.  Here bytes queue in a 16-byte transmit FIFO (one byte
 * with the FIFO off), move to the shift register, and leave it one
 * character time later, as the divisor latch and LCR say (start, data,
 * parity and stop bits: the embedded UART's char_transmit_time).  LSR.THRE
 * and TEMT and the THRE interrupt follow that model, so both the 8250
 * driver's polled console path and its interrupt-driven path see real
 * timing.
 *
 * The line is a function of virtual time alone: each character starts when
 * the previous one ended, and every register access first brings the model
 * up to now.  The timer only serves the guest that does not look (the THRE
 * interrupt, the end of a flush); a timer that runs late, because vCPUs
 * hold the host's cores, never slows the line.  Deterministic under -icount
 * and record/replay.
 *
 * pace=off: the character time is 0, so a byte goes to the chardev the
 * moment it is written, as with QEMU's UART.
 *
 * In both modes a byte the chardev refuses (a full socket or pipe) stays in
 * the shift register, with THRE and TEMT low as under hardware flow
 * control, and is retried after a character time (at the programmed
 * rate), then less and less often (waits doubling up to 10 ms), for up
 * to RS_WIRE_HOLD_NS of virtual time, so a slow reader throttles
 * the guest as CTS would; then it is dropped, counted (tx-refused) and
 * reported ("wire" event with "refused").  A byte written while the
 * transmitter is full is lost as on a 16550A, counted (tx-overruns) and
 * reported ("overrun" event).  So nothing the guest writes is lost
 * silently: sent + refused + overrun + cleared = THR writes.
 *
 * The embedded UART keeps everything else (receive path, modem lines,
 * divisor and LCR); this file interposes on THR, IER, IIR, FCR and LSR.
 *
 * Copyright (c) 2026 The ringside authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/timer.h"
#include "qemu/units.h"
#include "hw/irq.h"
#include "hw/core/cpu.h"
#include "migration/vmstate.h"
#include "ringside-serial.h"
#include "trace.h"

/* How long a byte waits for a busy chardev ... */
#define RS_WIRE_HOLD_NS (1000 * 1000 * 1000)
/*
 * ... retried after a character time, then after as long again as it has
 * waited so far (so the waits double), never more than this apart.
 */
#define RS_WIRE_RETRY_MAX_NS (10 * 1000 * 1000)

static void pace_update_irq(RingsideSerialState *s)
{
    bool thri = s->thri_pending && (s->ier & RS_IER_THRI);

    qemu_set_irq(s->irq, s->uart_irq_level || thri);
}

/* The embedded UART's own interrupt output (receive, line status, modem). */
static void pace_uart_irq(void *opaque, int n, int level)
{
    RingsideSerialState *s = opaque;

    s->uart_irq_level = level;
    pace_update_irq(s);
}

/* One character time at the programmed rate; never 0. */
static int64_t pace_rate_ns(RingsideSerialState *s)
{
    return MAX(s->serial.char_transmit_time, 1);
}

/*
 * When a byte the chardev refused at @now is tried again: one character
 * time after the first refusal, then backing off as the event stream
 * does, by the time it has been held, up to RS_WIRE_RETRY_MAX_NS.  A busy
 * backend costs some 100 timer callbacks a second, not one a character
 * time (11,500 at 115200 baud); the hold's length and accounting stay.
 */
static int64_t pace_retry_ns(RingsideSerialState *s, int64_t now)
{
    int64_t held = now - s->tsr_hold_start;

    return MAX(pace_rate_ns(s), MIN(held, RS_WIRE_RETRY_MAX_NS));
}

/* How long a character is in the shift register: 0 unpaced. */
static int64_t pace_char_ns(RingsideSerialState *s)
{
    return s->pace ? pace_rate_ns(s) : 0;
}

/* THRE has just become true: raise the THRE interrupt, as a 16550 does. */
static void pace_thr_empty(RingsideSerialState *s)
{
    s->thri_pending = true;
    pace_update_irq(s);
}

/* Move the FIFO's head to the shift register; it starts at @start. */
static void pace_load_tsr(RingsideSerialState *s, int64_t start)
{
    s->tsr = s->txq[s->txq_head];
    s->tsr_index = s->txq_index[s->txq_head];
    s->tsr_vt = s->txq_vt[s->txq_head];
    s->tsr_cpu = s->txq_cpu[s->txq_head];
    s->txq_head = (s->txq_head + 1) % RS_TX_FIFO;
    s->txq_len--;
    s->tsr_busy = true;
    s->tsr_retries = 0;
    s->tsr_end = start + pace_char_ns(s);
    if (!s->txq_len) {
        pace_thr_empty(s);
    }
}

/*
 * The shift register's byte is due at @now: hand it to the chardev.
 * Returns false if the chardev refused it and a retry is due later; the
 * byte then went at *wt (now, or its due time if it went at the first try).
 */
static bool pace_send(RingsideSerialState *s, int64_t now, int64_t *wt)
{
    bool refused = false;
    int rc = 1;

    if (qemu_chr_fe_backend_connected(&s->serial.chr)) {
        rc = qemu_chr_fe_write(&s->serial.chr, &s->tsr, 1);
    }
    if (rc != 1) {
        /* Only a busy chardev is worth waiting for, not a broken one. */
        bool busy = rc == 0 || errno == EAGAIN || errno == EINTR;

        if (!s->tsr_retries) {
            s->tsr_hold_start = now;
        }
        if (busy && now - s->tsr_hold_start < RS_WIRE_HOLD_NS) {
            s->tsr_retries = 1;
            /* From now: the chardev's reader needs host time, not a loop. */
            s->tsr_end = now + pace_retry_ns(s, now);
            trace_ringside_serial_retry(s->tsr_index, s->tsr_end - now);
            return false;
        }
        refused = true;
        s->tx_refused++;
        trace_ringside_serial_refused(s->tsr_index);
    }
    /* A byte that waited for its chardev left when it was taken. */
    *wt = s->tsr_retries ? now : s->tsr_end;
    trace_ringside_serial_wire(s->tsr_index, *wt);
    /* Unpaced, a byte on time is on the wire when written ("tx" says it). */
    if (s->tx_events || refused) {
        if (s->pace || refused || s->tsr_retries) {
            ringside_event(s, RS_EV_WIRE, ",\"i\":%"
                           PRIu64 ",\"wt\":%" PRId64 "%s", s->tsr_index,
                           *wt, refused ? ",\"refused\":1" : "");
        }
    }
    /* What is judged is what reached the console: not overruns or refusals */
    if (!refused) {
        s->tx_sent++;
        ringside_line_byte(s, s->tsr, s->tsr_index, s->tsr_vt, *wt,
                           s->tsr_cpu);
        if (s->ring_auto) {
            ringside_verify_byte(s, s->tsr, s->tsr_index, *wt);
        }
    }
    s->tsr_busy = false;
    return true;
}

/* Keep the timer on the shift register's next event, if any. */
static void pace_arm(RingsideSerialState *s)
{
    int64_t at = (int64_t)timer_expire_time_ns(s->tx_timer);

    if (!s->tsr_busy) {
        if (at != -1) {
            timer_del(s->tx_timer);
        }
    } else if (at != s->tsr_end) {
        timer_mod(s->tx_timer, s->tsr_end);
    }
}

/*
 * Bring the transmitter up to virtual time @now: send every character
 * whose time has come, each starting when the one before it ended.  Each
 * pass empties the shift register or stops, so at most FIFO + 1 passes.
 */
static void pace_advance(RingsideSerialState *s, int64_t now)
{
    unsigned n;

    for (n = 0; n <= RS_TX_FIFO && s->tsr_busy && s->tsr_end <= now; n++) {
        int64_t wt;

        if (!pace_send(s, now, &wt)) {
            break;
        }
        if (s->txq_len) {
            pace_load_tsr(s, wt);
        }
    }
    pace_arm(s);
}

/* A byte leaving the wire is judged: one tick's read budget, metered. */
static void pace_timer(void *opaque)
{
    RingsideSerialState *s = opaque;

    ringside_cost_begin(s, RS_COST_TICK);
    pace_advance(s, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    ringside_cost_end(s);
}

/* Returns false when the byte was lost to an overrun. */
bool ringside_pace_thr_write(RingsideSerialState *s, uint8_t byte,
                             uint64_t index)
{
    unsigned cap = (s->serial.fcr & RS_FCR_FE) ? RS_TX_FIFO : 1;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    pace_advance(s, now);
    if (s->txq_len >= cap) {
        /* A full 16550 transmitter loses what is written to it. */
        s->tx_overruns++;
        trace_ringside_serial_overrun(index);
        if (!s->overrun_logged) {
            s->overrun_logged = true;
            qemu_log_mask(LOG_GUEST_ERROR, "ringside-serial: THR written "
                          "while the transmitter was full; byte lost\n");
        }
        ringside_event(s, RS_EV_OVERRUN, ",\"i\":%" PRIu64, index);
        return false;
    }
    s->txq[(s->txq_head + s->txq_len) % RS_TX_FIFO] = byte;
    s->txq_index[(s->txq_head + s->txq_len) % RS_TX_FIFO] = index;
    s->txq_vt[(s->txq_head + s->txq_len) % RS_TX_FIFO] = now;
    s->txq_cpu[(s->txq_head + s->txq_len) % RS_TX_FIFO] =
        current_cpu ? current_cpu->cpu_index : -1;
    s->txq_len++;
    s->thri_pending = false;
    if (!s->tsr_busy) {
        pace_load_tsr(s, now);
        /* Unpaced, it goes now. */
        pace_advance(s, now);
    }
    pace_update_irq(s);
    return true;
}

uint64_t ringside_pace_read(RingsideSerialState *s, hwaddr addr)
{
    bool dlab = s->serial.lcr & RS_LCR_DLAB;
    uint64_t v;

    /* an empty transmitter has nothing to bring up to now */
    if ((addr == RS_REG_LSR || addr == RS_REG_IIR) && s->tsr_busy) {
        pace_advance(s, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    }
    v = serial_io_ops.read(&s->serial, addr, 1);
    switch (addr) {
    case RS_REG_IER:
        return dlab ? v : s->ier;
    case RS_REG_IIR:
        /* THRE ranks above modem status and below everything else. */
        if (((v & RS_IIR_ID) == RS_IIR_NO_INT ||
             (v & RS_IIR_ID) == RS_IIR_MSI) &&
            s->thri_pending && (s->ier & RS_IER_THRI)) {
            v = (v & ~RS_IIR_ID) | RS_IIR_THRI;
            /* Reading IIR with the THRE interrupt up acknowledges it. */
            s->thri_pending = false;
            pace_update_irq(s);
        }
        return v;
    case RS_REG_LSR:
        v &= ~(RS_LSR_THRE | RS_LSR_TEMT);
        if (!s->txq_len) {
            v |= RS_LSR_THRE;
            if (!s->tsr_busy) {
                v |= RS_LSR_TEMT;
            }
        }
        return v;
    }
    return v;
}

void ringside_pace_write(RingsideSerialState *s, hwaddr addr, uint8_t val)
{
    bool dlab = s->serial.lcr & RS_LCR_DLAB;

    if ((addr == RS_REG_IER && !dlab) || addr == RS_REG_FCR) {
        pace_advance(s, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    }
    if (addr == RS_REG_IER && !dlab) {
        bool thri_on = (val & RS_IER_THRI) && !(s->ier & RS_IER_THRI);

        s->ier = val & 0x0f;
        /* The UART would raise THRE interrupts of its own: hide THRI. */
        serial_io_ops.write(&s->serial, addr, val & ~RS_IER_THRI, 1);
        if (thri_on && !s->txq_len) {
            pace_thr_empty(s);
        }
        pace_update_irq(s);
        return;
    }
    if (addr == RS_REG_FCR &&
        ((val & RS_FCR_XFR) || ((val ^ s->serial.fcr) & RS_FCR_FE))) {
        /*
         * Transmit FIFO reset: the guest discards what it queued (the byte
         * already on the wire goes on).  Say which bytes, and what they
         * held, so none vanish and a reader can tell what was written.
         */
        bool had = s->txq_len;

        while (s->txq_len) {
            ringside_event(s, RS_EV_CLEARED, ",\"i\":%"
                           PRIu64 ",\"b\":%u",
                           s->txq_index[s->txq_head],
                           s->txq[s->txq_head]);
            s->txq_head = (s->txq_head + 1) % RS_TX_FIFO;
            s->txq_len--;
            s->tx_cleared++;
        }
        if (had) {
            pace_thr_empty(s);
        }
    }
    serial_io_ops.write(&s->serial, addr, val, 1);
    if (dlab && (addr == 0 || addr == 1) && s->serial.divider == 0 &&
        !s->divisor0_logged) {
        s->divisor0_logged = true;
        qemu_log_mask(LOG_GUEST_ERROR, "ringside-serial: divisor 0; the "
                      "line runs at %" PRId64 " ns a character, as QEMU's "
                      "UART rates it\n", pace_rate_ns(s));
    }
}

void ringside_pace_reset(RingsideSerialState *s)
{
    timer_del(s->tx_timer);
    s->txq_head = s->txq_len = 0;
    s->tsr_busy = false;
    s->tsr_end = 0;
    s->ier = 0;
    s->thri_pending = false;
    pace_update_irq(s);
}

void ringside_pace_realize(RingsideSerialState *s)
{
    s->serial.irq = qemu_allocate_irq(pace_uart_irq, s, 0);
    s->tx_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, pace_timer, s);
}

void ringside_pace_unrealize(RingsideSerialState *s)
{
    timer_free(s->tx_timer);
    s->tx_timer = NULL;
    qemu_free_irq(s->serial.irq);
}

static int pace_pre_load(void *opaque)
{
    RingsideSerialState *s = opaque;

    /* QEMU loads a subsection whatever .needed says: never into no timer */
    if (!s->tx_timer) {
        error_report("ringside-serial: migrated state refused, it has a "
                     "transmitter and this device has none");
        return -EINVAL;
    }
    /* Version 1 streams have no tsr_end: post_load takes the timer's. */
    s->tsr_end = -1;
    return 0;
}

static int pace_post_load(void *opaque, int version_id)
{
    RingsideSerialState *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    /* A character, or a retry's wait: a byte is due no later than this. */
    int64_t horizon = now + pace_rate_ns(s);
    int i;

    if (version_id < 2) {
        /* Version 1 counted up to 4 retries; now it is a hold, from now. */
        if (s->tsr_retries > 4) {
            return ringside_load_refuse(s, "pace.tsr_retries: above 4");
        }
        s->tsr_retries = !!s->tsr_retries;
        s->tsr_hold_start = now;
    }
    if (s->txq_head >= RS_TX_FIFO) {
        return ringside_load_refuse(s, "pace.txq_head: past the FIFO");
    }
    if (s->txq_len > RS_TX_FIFO ||
        (!(s->serial.fcr & RS_FCR_FE) && s->txq_len > 1)) {
        return ringside_load_refuse(s, "pace.txq_len: more than the FIFO "
                                    "holds");
    }
    if (s->tsr_retries > 1) {
        return ringside_load_refuse(s, "pace.tsr_retries: neither 0 nor 1");
    }
    if (s->ier & ~0x0f) {
        return ringside_load_refuse(s, "pace.ier: bits a 16550 lacks");
    }
    if (s->txq_len && !s->tsr_busy) {
        return ringside_load_refuse(s, "pace.tsr_busy: clear with a byte "
                                    "queued");
    }
    if (s->tsr_busy) {
        if (s->tsr_end == -1) {
            s->tsr_end = (int64_t)timer_expire_time_ns(s->tx_timer);
            if (s->tsr_end == -1) {
                s->tsr_end = now;
            }
        }
        if (s->tsr_retries) {
            horizon = now + MAX(pace_rate_ns(s), RS_WIRE_RETRY_MAX_NS);
        }
        if (s->tsr_end < 0 || s->tsr_end > horizon) {
            return ringside_load_refuse(s, "pace.tsr_end: not within a "
                                        "character of now");
        }
        if (s->tsr_retries &&
            (s->tsr_hold_start < 0 || s->tsr_hold_start > now)) {
            return ringside_load_refuse(s, "pace.tsr_hold_start: not in "
                                        "the past");
        }
    }
    /* When the bytes still queued were written is not migrated: now. */
    for (i = 0; i < RS_TX_FIFO; i++) {
        s->txq_vt[i] = now;
        s->txq_cpu[i] = -1;
    }
    s->tsr_vt = MIN(now, s->tsr_end);
    s->tsr_cpu = -1;
    s->pace_loaded = true;
    pace_arm(s);
    return 0;
}

static bool pace_needed(void *opaque)
{
    return true;
}

/* Both modes run the transmitter: always migrated. */
const VMStateDescription vmstate_ringside_pace = {
    .name = "ringside-serial/pace",
    .version_id = 2,
    .minimum_version_id = 1,
    .needed = pace_needed,
    .pre_load = pace_pre_load,
    .post_load = pace_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_BOOL(uart_irq_level, RingsideSerialState),
        VMSTATE_UINT8(ier, RingsideSerialState),
        VMSTATE_BOOL(thri_pending, RingsideSerialState),
        VMSTATE_UINT8_ARRAY(txq, RingsideSerialState, RS_TX_FIFO),
        VMSTATE_UINT64_ARRAY(txq_index, RingsideSerialState, RS_TX_FIFO),
        VMSTATE_UINT8(txq_head, RingsideSerialState),
        VMSTATE_UINT8(txq_len, RingsideSerialState),
        VMSTATE_BOOL(tsr_busy, RingsideSerialState),
        VMSTATE_UINT8(tsr, RingsideSerialState),
        VMSTATE_UINT64(tsr_index, RingsideSerialState),
        VMSTATE_UINT8(tsr_retries, RingsideSerialState),
        VMSTATE_TIMER_PTR(tx_timer, RingsideSerialState),
        VMSTATE_UINT64(tx_overruns, RingsideSerialState),
        VMSTATE_UINT64(tx_refused, RingsideSerialState),
        VMSTATE_UINT64(tx_cleared, RingsideSerialState),
        VMSTATE_INT64_V(tsr_end, RingsideSerialState, 2),
        VMSTATE_INT64_V(tsr_hold_start, RingsideSerialState, 2),
        VMSTATE_END_OF_LIST()
    }
};
