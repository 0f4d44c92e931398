/*
 * ringside-serial, pace=line: a 16550A transmitter that runs at the line
 * rate the guest programmed.
 *
 * QEMU's UART model hands each THR byte to its chardev at once, so a guest
 * console under emulation runs some 75 times faster than a 115200-baud
 * line.  Here bytes queue in a 16-byte transmit FIFO (one byte with the
 * FIFO off), move to the shift register, and leave it one character time
 * later, as the divisor latch and LCR say (start, data, parity and stop
 * bits: the embedded UART's char_transmit_time).  LSR.THRE and TEMT and
 * the THRE interrupt follow that model, so both the 8250 driver's polled
 * console path and its interrupt-driven path see real timing.  The model
 * runs on QEMU's virtual clock with a timer, never blocking the vCPU, so
 * it is deterministic under -icount and record/replay.
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
#include "migration/vmstate.h"
#include "ringside-serial.h"
#include "trace.h"

/* Retries of a byte its chardev would not take, one character time apart. */
#define RS_WIRE_RETRIES 4

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

static uint64_t pace_char_ns(RingsideSerialState *s)
{
    /* The UART computes it from the divisor and LCR; never let it be 0. */
    return MAX(s->serial.char_transmit_time, 1);
}

/* THRE has just become true: raise the THRE interrupt, as a 16550 does. */
static void pace_thr_empty(RingsideSerialState *s)
{
    s->thri_pending = true;
    pace_update_irq(s);
}

static void pace_start_next(RingsideSerialState *s)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    s->tsr = s->txq[s->txq_head];
    s->tsr_index = s->txq_index[s->txq_head];
    s->txq_head = (s->txq_head + 1) % RS_TX_FIFO;
    s->txq_len--;
    s->tsr_busy = true;
    s->tsr_retries = 0;
    timer_mod(s->tx_timer, now + pace_char_ns(s));
    if (!s->txq_len) {
        pace_thr_empty(s);
    }
}

/* The byte in the shift register has been clocked out onto the line. */
static void pace_tx_done(void *opaque)
{
    RingsideSerialState *s = opaque;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    bool refused = false;

    if (qemu_chr_fe_backend_connected(&s->serial.chr) &&
        qemu_chr_fe_write(&s->serial.chr, &s->tsr, 1) != 1) {
        /* A busy backend holds the line, as flow control would. */
        if (s->tsr_retries++ < RS_WIRE_RETRIES) {
            timer_mod(s->tx_timer, now + pace_char_ns(s));
            return;
        }
        refused = true;
        s->tx_refused++;
    }
    trace_ringside_serial_wire(s->tsr_index, now);
    if (s->tx_events) {
        ringside_events_printf(s, "{\"v\":%d,\"ev\":\"wire\",\"i\":%"
                               PRIu64 ",\"wt\":%" PRId64 "%s}\n",
                               RINGSIDE_EVENTS_VERSION, s->tsr_index, now,
                               refused ? ",\"refused\":1" : "");
    }
    /* What is judged is what reached the console: not overruns or refusals */
    if (s->ring_auto && !refused) {
        ringside_verify_byte(s, s->tsr, s->tsr_index, now);
    }
    s->tsr_busy = false;
    if (s->txq_len) {
        pace_start_next(s);
    }
}

/* Returns false when the byte was lost to an overrun. */
bool ringside_pace_thr_write(RingsideSerialState *s, uint8_t byte,
                             uint64_t index)
{
    unsigned cap = (s->serial.fcr & RS_FCR_FE) ? RS_TX_FIFO : 1;

    if (s->txq_len >= cap) {
        /* A full 16550 transmitter loses what is written to it. */
        s->tx_overruns++;
        if (!s->overrun_logged) {
            s->overrun_logged = true;
            qemu_log_mask(LOG_GUEST_ERROR, "ringside-serial: THR written "
                          "while the transmitter was full; byte lost\n");
        }
        ringside_events_printf(s, "{\"v\":%d,\"ev\":\"overrun\",\"i\":%"
                               PRIu64 "}\n", RINGSIDE_EVENTS_VERSION, index);
        return false;
    }
    s->txq[(s->txq_head + s->txq_len) % RS_TX_FIFO] = byte;
    s->txq_index[(s->txq_head + s->txq_len) % RS_TX_FIFO] = index;
    s->txq_len++;
    s->thri_pending = false;
    if (!s->tsr_busy) {
        pace_start_next(s);
    }
    pace_update_irq(s);
    return true;
}

uint64_t ringside_pace_read(RingsideSerialState *s, hwaddr addr)
{
    bool dlab = s->serial.lcr & RS_LCR_DLAB;
    uint64_t v = serial_io_ops.read(&s->serial, addr, 1);

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
         * already on the wire goes on).  Say which bytes, so none vanish.
         */
        bool had = s->txq_len;

        while (s->txq_len) {
            ringside_events_printf(s, "{\"v\":%d,\"ev\":\"cleared\",\"i\":%"
                                   PRIu64 "}\n", RINGSIDE_EVENTS_VERSION,
                                   s->txq_index[s->txq_head]);
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
                      "line runs at %" PRIu64 " ns a character, as QEMU's "
                      "UART rates it\n", pace_char_ns(s));
    }
}

void ringside_pace_reset(RingsideSerialState *s)
{
    timer_del(s->tx_timer);
    s->txq_head = s->txq_len = 0;
    s->tsr_busy = false;
    s->ier = 0;
    s->thri_pending = false;
    pace_update_irq(s);
}

void ringside_pace_realize(RingsideSerialState *s)
{
    s->serial.irq = qemu_allocate_irq(pace_uart_irq, s, 0);
    s->tx_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, pace_tx_done, s);
}

void ringside_pace_unrealize(RingsideSerialState *s)
{
    timer_free(s->tx_timer);
    s->tx_timer = NULL;
    qemu_free_irq(s->serial.irq);
}

static bool pace_needed(void *opaque)
{
    RingsideSerialState *s = opaque;

    return s->pace;
}

static int pace_post_load(void *opaque, int version_id)
{
    RingsideSerialState *s = opaque;

    if (s->txq_head >= RS_TX_FIFO || s->txq_len > RS_TX_FIFO) {
        return -EINVAL;
    }
    return 0;
}

const VMStateDescription vmstate_ringside_pace = {
    .name = "ringside-serial/pace",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pace_needed,
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
        VMSTATE_END_OF_LIST()
    }
};
