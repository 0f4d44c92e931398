/*
 * qtest for ringside-serial: the UART must still behave as a 16550A towards
 * the guest and its console chardev, and every THR write must show up once,
 * in order and timestamped, in the events stream.
 *
 * Copyright (c) 2026 The ringside authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ringside-qtest.h"
#include <sys/un.h>

/*
 * THR writes go to the console unchanged and are recorded in order with
 * timestamps; a divisor-latch write through the same port is not a byte on
 * the wire and must not be recorded.
 */
static void test_tx_recorded(void)
{
    static const char msg[] = "ringside\r\n";
    Fixture f = { 0 };
    g_autoptr(GPtrArray) ev = NULL;
    g_autofree char *console = NULL;
    int64_t last_vt = -1;
    size_t i;

    fixture_start(&f, EVENTS_FILE);
    qtest_outb(f.qts, COM1 + REG_LCR, LCR_8N1);
    for (i = 0; i < 4; i++) {
        uart_put(f.qts, msg[i]);
        qtest_clock_step(f.qts, 1000);
    }
    /* Divisor 1 (115200 baud): offset 0 is DLL while DLAB is set. */
    qtest_outb(f.qts, COM1 + REG_LCR, LCR_8N1 | LCR_DLAB);
    qtest_outb(f.qts, COM1 + REG_DLL, 0x01);
    qtest_outb(f.qts, COM1 + REG_DLM, 0x00);
    qtest_outb(f.qts, COM1 + REG_LCR, LCR_8N1);
    for (; i < strlen(msg); i++) {
        uart_put(f.qts, msg[i]);
        qtest_clock_step(f.qts, 1000);
    }
    g_assert_cmphex(qtest_inb(f.qts, COM1 + REG_LSR) & (LSR_THRE | LSR_TEMT),
                    ==, LSR_THRE | LSR_TEMT);

    g_assert_cmpuint(rs_counter(f.qts, "tx-bytes"), ==, strlen(msg));
    /* start, a tx per byte, the line (ring=off: unchecked) */
    g_assert_cmpuint(rs_counter(f.qts, "events-written"), ==, strlen(msg) + 2);
    g_assert_cmpuint(rs_counter(f.qts, "events-dropped"), ==, 0);

    console = read_file(f.console);
    g_assert_cmpstr(console, ==, msg);

    ev = read_events(f.events);
    g_assert_cmpuint(ev->len, ==, strlen(msg) + 2);
    g_assert_cmpstr(qdict_get_str(ev->pdata[0], "ev"), ==, "start");
    g_assert_cmpint(qdict_get_int(ev->pdata[0], "iobase"), ==, COM1);
    for (i = 0; i < strlen(msg); i++) {
        QDict *e = ev->pdata[i + 1];
        int64_t vt = qdict_get_int(e, "vt");

        g_assert_cmpstr(qdict_get_str(e, "ev"), ==, "tx");
        g_assert_cmpint(qdict_get_int(e, "i"), ==, i);
        g_assert_cmpint(qdict_get_int(e, "b"), ==, (uint8_t)msg[i]);
        /* qtest writes come from the main loop, not from a vCPU. */
        g_assert_cmpint(qdict_get_int(e, "cpu"), ==, -1);
        g_assert_cmpint(qdict_get_int(e, "ht"), >, 0);
        g_assert_cmpint(vt, >, last_vt);
        if (last_vt >= 0) {
            g_assert_cmpint(vt - last_vt, ==, 1000);
        }
        g_assert_false(qdict_haskey(e, "loop"));
        last_vt = vt;
    }
    g_assert_cmpstr(qdict_get_str(ev->pdata[i + 1], "ev"), ==, "line");
    fixture_stop(&f);
}

/*
 * The default stream (tx-events=off): one "line" event per console line
 * with its bytes' indexes, times and writer; a byte that never reaches the
 * console (loopback) gets a "loop" event, so indexes map to the console.
 */
static void test_line_events_default(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *dir = g_dir_make_tmp("ringside-qtest-XXXXXX", &err);
    g_autofree char *con = g_build_filename(dir, "console", NULL);
    g_autofree char *events = g_build_filename(dir, "events", NULL);
    g_autoptr(GPtrArray) ev = NULL;
    g_autofree char *console = NULL;
    const char *text = "ab\r\ncd\n";
    QTestState *qts;
    QDict *l;
    size_t i;

    qts = qtest_initf("-nodefaults -machine pc -chardev file,id=con,path=%s "
                      "-chardev file,id=ev,path=%s -device ringside-serial,"
                      "id=rs,chardev=con,events=ev,ring=off", con, events);
    qtest_outb(qts, COM1 + REG_LCR, LCR_8N1);
    for (i = 0; text[i]; i++) {
        if (i == 5) {           /* 'd' after a loopback byte */
            qtest_outb(qts, COM1 + REG_MCR, MCR_LOOP);
            uart_put(qts, 'L');
            qtest_outb(qts, COM1 + REG_MCR, 0);
        }
        uart_put(qts, text[i]);
        qtest_clock_step(qts, 1000);
    }
    qtest_quit(qts);
    console = read_file(con);
    g_assert_cmpstr(console, ==, text);
    ev = read_events(events);
    g_assert_cmpuint(ev->len, ==, 4);   /* start, line, loop, line */
    l = ev->pdata[1];
    g_assert_cmpstr(qdict_get_str(l, "ev"), ==, "line");
    g_assert_cmpstr(qdict_get_str(l, "verdict"), ==, "unchecked");
    g_assert_cmpint(qdict_get_int(l, "first"), ==, 0);
    g_assert_cmpint(qdict_get_int(l, "last"), ==, 3);
    g_assert_cmpint(qdict_get_int(l, "len"), ==, 2);
    g_assert_cmpint(qdict_get_int(l, "dt"), ==, 3000);
    g_assert_cmpint(qdict_get_int(l, "cpu"), ==, -1);
    g_assert_false(qdict_haskey(l, "cpus"));
    g_assert_false(qdict_haskey(l, "q"));
    g_assert_cmpstr(qdict_get_str(ev->pdata[2], "ev"), ==, "loop");
    g_assert_cmpint(qdict_get_int(ev->pdata[2], "i"), ==, 5);
    l = ev->pdata[3];
    g_assert_cmpint(qdict_get_int(l, "first"), ==, 4);
    g_assert_cmpint(qdict_get_int(l, "last"), ==, 7);
    g_assert_cmpint(qdict_get_int(l, "len"), ==, 2);
    g_assert_cmpint(qdict_get_int(l, "dt"), ==, 2000);
    unlink(con);
    unlink(events);
    rmdir(dir);
}

/* Loopback-mode bytes never reach the wire; they are recorded as such. */
static void test_loopback_marked(void)
{
    Fixture f = { 0 };
    g_autoptr(GPtrArray) ev = NULL;
    g_autofree char *console = NULL;

    fixture_start(&f, EVENTS_FILE);
    qtest_outb(f.qts, COM1 + REG_MCR, MCR_LOOP);
    uart_put(f.qts, 'L');
    qtest_outb(f.qts, COM1 + REG_MCR, 0);
    uart_put(f.qts, 'W');

    console = read_file(f.console);
    g_assert_cmpstr(console, ==, "W");
    ev = read_events(f.events);
    g_assert_cmpuint(ev->len, ==, 3);
    g_assert_cmpint(qdict_get_int(ev->pdata[1], "b"), ==, 'L');
    g_assert_cmpint(qdict_get_int(ev->pdata[1], "loop"), ==, 1);
    g_assert_cmpint(qdict_get_int(ev->pdata[2], "b"), ==, 'W');
    g_assert_false(qdict_haskey(ev->pdata[2], "loop"));
    fixture_stop(&f);
}

/* Without an events chardev the device is a plain 16550A that counts. */
static void test_no_events_chardev(void)
{
    Fixture f = { 0 };
    g_autofree char *console = NULL;

    fixture_start(&f, EVENTS_NONE);
    uart_put(f.qts, 'o');
    uart_put(f.qts, 'k');
    console = read_file(f.console);
    g_assert_cmpstr(console, ==, "ok");
    g_assert_cmpuint(rs_counter(f.qts, "tx-bytes"), ==, 2);
    g_assert_cmpuint(rs_counter(f.qts, "events-written"), ==, 0);
    fixture_stop(&f);
}

/*
 * An events socket nobody reads: the console keeps working, records queue
 * up to the bound, and every record beyond it is counted as dropped.
 */
static void test_events_backpressure(void)
{
    /* More records than the 4 MiB queue holds at ~70 bytes each. */
    const unsigned n = 80000;
    Fixture f = { 0 };
    g_autofree char *console = NULL;
    uint64_t written, dropped;
    unsigned i;

    fixture_start(&f, EVENTS_UNCONNECTED_SOCKET);
    for (i = 0; i < n; i++) {
        uart_put(f.qts, 'a' + i % 26);
    }
    written = rs_counter(f.qts, "events-written");
    dropped = rs_counter(f.qts, "events-dropped");
    g_assert_cmpuint(rs_counter(f.qts, "tx-bytes"), ==, n);
    g_assert_cmpuint(dropped, >, 0);
    g_assert_cmpuint(written + dropped, ==, n + 1);   /* no line ended */
    console = read_file(f.console);
    g_assert_cmpuint(strlen(console), ==, n);
    fixture_stop(&f);
}

/* ---- pace=line ---------------------------------------------------------- */

static void uart_setup(QTestState *qts, uint16_t divisor, uint8_t lcr,
                       bool fifo)
{
    qtest_outb(qts, COM1 + REG_LCR, lcr | LCR_DLAB);
    qtest_outb(qts, COM1 + REG_DLL, divisor & 0xff);
    qtest_outb(qts, COM1 + REG_DLM, divisor >> 8);
    qtest_outb(qts, COM1 + REG_LCR, lcr);
    qtest_outb(qts, COM1 + REG_FCR, fifo ? FCR_ENABLE_RESET : 0);
}

static uint8_t lsr(QTestState *qts)
{
    return qtest_inb(qts, COM1 + REG_LSR);
}

/* Let virtual time run to the next timer until LSR has @bits. */
static void wait_lsr(QTestState *qts, uint8_t bits)
{
    int i;

    for (i = 0; !(lsr(qts) & bits); i++) {
        g_assert_cmpint(i, <, 100);
        qtest_clock_step_next(qts);
    }
}

typedef struct {
    uint16_t divisor;
    uint8_t lcr;
    unsigned bits;          /* per character, start and stop included */
} LineRate;

/*
 * Push 1,000 bytes as the 8250 console does, polling LSR.THRE before each;
 * the virtual time it takes must be 1,000 character times within 2%.
 */
static void test_pace_rate(const void *opaque)
{
    const LineRate *r = opaque;
    const unsigned n = 1000;
    Fixture f = { 0 };
    g_autofree char *console = NULL;
    g_autoptr(GPtrArray) ev = NULL;
    double expected, elapsed;
    int64_t t0;
    unsigned i, wires = 0;

    fixture_start_opts(&f, EVENTS_FILE, ",pace=line,ring=off");
    uart_setup(f.qts, r->divisor, r->lcr, true);
    t0 = rs_clock_now(f.qts);
    for (i = 0; i < n; i++) {
        wait_lsr(f.qts, LSR_THRE);
        uart_put(f.qts, 'A' + i % 26);
    }
    wait_lsr(f.qts, LSR_TEMT);
    elapsed = rs_clock_now(f.qts) - t0;
    expected = n * r->bits * 1e9 / (115200.0 / r->divisor);
    g_test_message("%u bytes at divisor %u, %u bits: %.3f ms (expected %.3f)",
                   n, r->divisor, r->bits, elapsed / 1e6, expected / 1e6);
    g_assert_cmpfloat(elapsed, >=, expected * 0.98);
    g_assert_cmpfloat(elapsed, <=, expected * 1.02);

    console = read_file(f.console);
    g_assert_cmpuint(strlen(console), ==, n);
    ev = read_events(f.events);
    for (i = 0; i < ev->len; i++) {
        QDict *e = ev->pdata[i];

        if (!strcmp(qdict_get_str(e, "ev"), "wire")) {
            g_assert_cmpint(qdict_get_int(e, "i"), ==, wires);
            wires++;
        }
    }
    g_assert_cmpuint(wires, ==, n);
    g_assert_cmpuint(rs_counter(f.qts, "tx-overruns"), ==, 0);
    fixture_stop(&f);
}

/*
 * THRE means the FIFO is empty: the first byte goes straight to the shift
 * register, the next 16 fill the FIFO, one more is lost (counted), and
 * TEMT comes only when the last byte has left the wire.
 */
static void test_pace_fifo_depth(void)
{
    Fixture f = { 0 };
    g_autofree char *console = NULL;
    unsigned i;

    fixture_start_opts(&f, EVENTS_FILE, ",pace=line,ring=off");
    uart_setup(f.qts, 1, LCR_8N1, true);
    uart_put(f.qts, '0');
    g_assert_cmphex(lsr(f.qts) & (LSR_THRE | LSR_TEMT), ==, LSR_THRE);
    for (i = 1; i <= 16; i++) {
        uart_put(f.qts, 'a' + i);
        g_assert_cmphex(lsr(f.qts) & (LSR_THRE | LSR_TEMT), ==, 0);
    }
    g_assert_cmpuint(rs_counter(f.qts, "tx-overruns"), ==, 0);
    uart_put(f.qts, 'X');
    g_assert_cmpuint(rs_counter(f.qts, "tx-overruns"), ==, 1);
    /* Nothing reaches the wire before its time. */
    console = read_file(f.console);
    g_assert_cmpstr(console, ==, "");
    g_free(g_steal_pointer(&console));
    wait_lsr(f.qts, LSR_TEMT);
    console = read_file(f.console);
    g_assert_cmpstr(console, ==, "0bcdefghijklmnopq");
    fixture_stop(&f);
}

/* A transmit FIFO reset discards what waits, and says so byte by byte. */
static void test_pace_fifo_clear(void)
{
    Fixture f = { 0 };
    g_autofree char *console = NULL;
    g_autoptr(GPtrArray) ev = NULL;
    unsigned i, cleared = 0;

    fixture_start_opts(&f, EVENTS_FILE, ",pace=line,ring=off");
    uart_setup(f.qts, 1, LCR_8N1, true);
    for (i = 0; i < 6; i++) {
        uart_put(f.qts, 'a' + i);
    }
    qtest_outb(f.qts, COM1 + REG_FCR, FCR_ENABLE_RESET);
    g_assert_cmpuint(rs_counter(f.qts, "tx-cleared"), ==, 5);
    g_assert_cmphex(lsr(f.qts) & LSR_THRE, ==, LSR_THRE);
    wait_lsr(f.qts, LSR_TEMT);
    console = read_file(f.console);
    g_assert_cmpstr(console, ==, "a");
    ev = read_events(f.events);
    for (i = 0; i < ev->len; i++) {
        if (!strcmp(qdict_get_str(ev->pdata[i], "ev"), "cleared")) {
            g_assert_cmpint(qdict_get_int(ev->pdata[i], "i"), ==, 1 + cleared);
            g_assert_cmpint(qdict_get_int(ev->pdata[i], "b"), ==,
                            'b' + cleared);
            cleared++;
        }
    }
    g_assert_cmpuint(cleared, ==, 5);
    fixture_stop(&f);
}

/* Without the FIFO the transmitter holds one byte plus the shift register. */
static void test_pace_no_fifo(void)
{
    Fixture f = { 0 };

    fixture_start_opts(&f, EVENTS_FILE, ",pace=line,ring=off");
    uart_setup(f.qts, 1, LCR_8N1, false);
    uart_put(f.qts, 'a');
    uart_put(f.qts, 'b');
    g_assert_cmphex(lsr(f.qts) & LSR_THRE, ==, 0);
    uart_put(f.qts, 'c');
    g_assert_cmpuint(rs_counter(f.qts, "tx-overruns"), ==, 1);
    fixture_stop(&f);
}

/* The THRE interrupt fires when the FIFO drains, and IIR reports it. */
static void test_pace_thre_irq(void)
{
    Fixture f = { 0 };
    unsigned i;

    fixture_start_opts(&f, EVENTS_FILE, ",pace=line,ring=off");
    qtest_irq_intercept_in(f.qts, "ioapic");
    uart_setup(f.qts, 1, LCR_8N1, true);
    for (i = 0; i < 5; i++) {
        uart_put(f.qts, 'a' + i);
    }
    qtest_outb(f.qts, COM1 + REG_IER, IER_THRI);
    g_assert_false(qtest_get_irq(f.qts, 4));
    g_assert_cmphex(qtest_inb(f.qts, COM1 + REG_IIR) & IIR_ID, !=, IIR_THRI);
    /* Four bytes wait in the FIFO: the interrupt needs four char times. */
    for (i = 0; i < 4; i++) {
        g_assert_false(qtest_get_irq(f.qts, 4));
        qtest_clock_step_next(f.qts);
    }
    g_assert_true(qtest_get_irq(f.qts, 4));
    g_assert_cmphex(lsr(f.qts) & (LSR_THRE | LSR_TEMT), ==, LSR_THRE);
    g_assert_cmphex(qtest_inb(f.qts, COM1 + REG_IIR) & IIR_ID, ==, IIR_THRI);
    /* Reading IIR acknowledged it. */
    g_assert_false(qtest_get_irq(f.qts, 4));
    g_assert_cmphex(qtest_inb(f.qts, COM1 + REG_IER), ==, IER_THRI);
    fixture_stop(&f);
}

/* A divisor of 0 is defined (QEMU's 3500 baud), not a hang or a storm. */
static void test_pace_divisor0(void)
{
    Fixture f = { 0 };
    g_autofree char *console = NULL;
    int64_t t0, dt;

    fixture_start_opts(&f, EVENTS_FILE, ",pace=line,ring=off");
    uart_setup(f.qts, 0, LCR_8N1, true);
    t0 = rs_clock_now(f.qts);
    uart_put(f.qts, 'z');
    wait_lsr(f.qts, LSR_TEMT);
    dt = rs_clock_now(f.qts) - t0;
    g_assert_cmpint(dt, >, 2000000);
    g_assert_cmpint(dt, <, 4000000);
    console = read_file(f.console);
    g_assert_cmpstr(console, ==, "z");
    fixture_stop(&f);
}

/* ---- the transmitter runs on virtual time, not on its timer ------------ */

/* One 8N1 character at divisor 1: 86.8 us. */
#define CHAR_NS_115200  86806

/* The wire times of the "wire" events, by byte index; -1 refused. */
static GArray *wire_times(const char *path, unsigned n)
{
    g_autoptr(GPtrArray) ev = read_events(path);
    GArray *wt = g_array_new(FALSE, FALSE, sizeof(int64_t));
    int64_t none = -2;
    unsigned i;

    for (i = 0; i < n; i++) {
        g_array_append_val(wt, none);
    }
    for (i = 0; i < ev->len; i++) {
        QDict *e = ev->pdata[i];
        int64_t idx;

        if (strcmp(qdict_get_str(e, "ev"), "wire")) {
            continue;
        }
        idx = qdict_get_int(e, "i");
        g_assert_cmpint(idx, <, n);
        g_array_index(wt, int64_t, idx) = qdict_haskey(e, "refused") ? -1 :
                                          qdict_get_int(e, "wt");
    }
    return wt;
}

/*
 * A stopped VM runs no virtual-clock timers: the transmitter's timer is as
 * late as a timer can be.  Time still passes for qtest, and an LSR read
 * must find the line where the programmed rate puts it: every byte out,
 * each starting when the one before it ended.
 */
static void test_pace_late_timer(void)
{
    Fixture f = { 0 };
    g_autofree char *console = NULL;
    g_autoptr(GArray) wt = NULL;
    int64_t t0, char_ns;
    unsigned i;

    fixture_start_opts(&f, EVENTS_FILE, ",pace=line,ring=off");
    uart_setup(f.qts, 1, LCR_8N1, true);
    qtest_qmp_assert_success(f.qts, "{ 'execute': 'stop' }");
    t0 = rs_clock_now(f.qts);
    for (i = 0; i < 17; i++) {
        uart_put(f.qts, 'a' + i);
    }
    g_assert_cmphex(lsr(f.qts) & LSR_THRE, ==, 0);
    qtest_clock_step(f.qts, 16.5 * CHAR_NS_115200);
    g_assert_cmphex(lsr(f.qts) & (LSR_THRE | LSR_TEMT), ==, LSR_THRE);
    qtest_clock_step(f.qts, CHAR_NS_115200);
    g_assert_cmphex(lsr(f.qts) & (LSR_THRE | LSR_TEMT), ==,
                    LSR_THRE | LSR_TEMT);
    console = read_file(f.console);
    g_assert_cmpstr(console, ==, "abcdefghijklmnopq");
    wt = wire_times(f.events, 17);
    /* QEMU's UART rates it in float: within 10 ns of 86,806. */
    char_ns = g_array_index(wt, int64_t, 0) - t0;
    g_assert_cmpint(labs(char_ns - CHAR_NS_115200), <, 10);
    for (i = 0; i < 17; i++) {
        g_assert_cmpint(g_array_index(wt, int64_t, i), ==,
                        t0 + (i + 1) * char_ns);
    }
    g_assert_cmpuint(rs_counter(f.qts, "tx-overruns"), ==, 0);
    fixture_stop(&f);
}

/*
 * The 8250 console's way (wait up to 10 ms for THRE, then fill the FIFO)
 * never overruns, even with no timer running at all; writing to a full
 * transmitter always does, as on a 16550A.
 */
static void test_pace_driver_wait(void)
{
    const unsigned n = 800;
    Fixture f = { 0 };
    g_autofree char *console = NULL;
    g_autofree char *want = g_malloc0(n + 1);
    unsigned i = 0, j;

    fixture_start_opts(&f, EVENTS_FILE, ",pace=line,ring=off");
    uart_setup(f.qts, 1, LCR_8N1, true);
    qtest_qmp_assert_success(f.qts, "{ 'execute': 'stop' }");
    while (i < n) {
        /* wait_for_xmitr(): up to 10,000 polls 1 us apart */
        for (j = 0; j < 10000 && !(lsr(f.qts) & LSR_THRE); j++) {
            qtest_clock_step(f.qts, 1000);
        }
        g_assert_cmpuint(j, <, 10000);
        for (j = 0; j < 16 && i < n; j++, i++) {
            want[i] = 'A' + i % 26;
            uart_put(f.qts, want[i]);
        }
    }
    for (j = 0; j < 10000 && !(lsr(f.qts) & LSR_TEMT); j++) {
        qtest_clock_step(f.qts, 1000);
    }
    g_assert_cmpuint(rs_counter(f.qts, "tx-overruns"), ==, 0);
    console = read_file(f.console);
    g_assert_cmpstr(console, ==, want);
    /* 16 in the FIFO and one in the shift register: the 18th is lost. */
    for (i = 0; i < 18; i++) {
        uart_put(f.qts, 'x');
    }
    g_assert_cmpuint(rs_counter(f.qts, "tx-overruns"), ==, 1);
    fixture_stop(&f);
}

/* Until the migration on @qts is over; returns its final status. */
static char *migration_wait(QTestState *qts)
{
    unsigned i;

    for (i = 0; i < 500; i++) {
        QDict *r = qtest_qmp(qts, "{ 'execute': 'query-migrate' }");
        QDict *ret = qdict_get_qdict(r, "return");
        char *st = ret && qdict_haskey(ret, "status") ?
                   g_strdup(qdict_get_str(ret, "status")) : NULL;

        qobject_unref(r);
        if (st && (!strcmp(st, "completed") || !strcmp(st, "failed"))) {
            return st;
        }
        g_free(st);
        g_usleep(10000);
    }
    g_assert_not_reached();
}

/*
 * A transmitter saved mid-flight (the FIFO half sent) goes on where it
 * was on the destination: the same bytes, each at the time the line puts
 * it, and nothing sent twice.
 */
static void test_pace_migrate(void)
{
    Fixture f = { 0 };
    g_autofree char *state = NULL, *dir2 = NULL, *con2 = NULL, *ev2 = NULL;
    g_autofree char *console = NULL, *console2 = NULL, *st = NULL;
    g_autofree char *out_uri = NULL, *in_uri = NULL;
    g_autoptr(GArray) wt = NULL, wt2 = NULL;
    g_autoptr(GError) err = NULL;
    QTestState *dst;
    int64_t t0, t_src, char_ns;
    unsigned i;

    fixture_start_opts(&f, EVENTS_FILE, ",pace=line,ring=off");
    uart_setup(f.qts, 1, LCR_8N1, true);
    qtest_qmp_assert_success(f.qts, "{ 'execute': 'stop' }");
    t0 = rs_clock_now(f.qts);
    for (i = 0; i < 17; i++) {
        uart_put(f.qts, 'a' + i);
    }
    qtest_clock_step(f.qts, 5.5 * CHAR_NS_115200);
    g_assert_cmphex(lsr(f.qts) & LSR_THRE, ==, 0);
    t_src = rs_clock_now(f.qts);
    state = g_build_filename(f.dir, "state", NULL);
    out_uri = g_strdup_printf("exec:cat > %s", state);
    in_uri = g_strdup_printf("exec:cat %s", state);
    qtest_qmp_assert_success(f.qts, "{ 'execute': 'migrate', 'arguments': "
                             "{ 'uri': %s } }", out_uri);
    st = migration_wait(f.qts);
    g_assert_cmpstr(st, ==, "completed");
    g_free(g_steal_pointer(&st));
    console = read_file(f.console);
    g_assert_cmpstr(console, ==, "abcde");
    wt = wire_times(f.events, 17);
    char_ns = g_array_index(wt, int64_t, 0) - t0;

    dir2 = g_dir_make_tmp("ringside-qtest-XXXXXX", &err);
    g_assert_no_error(err);
    con2 = g_build_filename(dir2, "console", NULL);
    ev2 = g_build_filename(dir2, "events", NULL);
    dst = qtest_initf("-nodefaults -machine pc -chardev file,id=con,path=%s "
                      "-chardev file,id=ev,path=%s -device ringside-serial,"
                      "id=rs,chardev=con,events=ev,pace=line,ring=off,"
                      "tx-events=on -incoming defer", con2, ev2);
    /* qtest's virtual clock is not migrated: bring it to the source's. */
    qtest_clock_step(dst, t_src);
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", in_uri);
    st = migration_wait(dst);
    g_assert_cmpstr(st, ==, "completed");
    qtest_clock_step(dst, 12 * CHAR_NS_115200);
    g_assert_cmphex(lsr(dst) & (LSR_THRE | LSR_TEMT), ==,
                    LSR_THRE | LSR_TEMT);
    g_assert_cmpuint(rs_counter(dst, "tx-bytes"), ==, 17);
    g_assert_cmpuint(rs_counter(dst, "tx-overruns"), ==, 0);
    qtest_quit(dst);
    console2 = read_file(con2);
    g_assert_cmpstr(console2, ==, "fghijklmnopq");
    wt2 = wire_times(ev2, 17);
    for (i = 0; i < 17; i++) {
        g_assert_cmpint(g_array_index(wt2, int64_t, i), ==,
                        i < 5 ? -2 : t0 + (int64_t)(i + 1) * char_ns);
    }
    unlink(state);
    fixture_stop(&f);
    unlink(con2);
    unlink(ev2);
    rmdir(dir2);
}

/* Read what is waiting on @fd (non-blocking), up to @max bytes. */
static size_t drain(int fd, GString *got, size_t max)
{
    char buf[256];
    size_t total = 0;

    while (total < max) {
        ssize_t r = read(fd, buf, MIN(sizeof(buf), max - total));

        if (r <= 0) {
            break;
        }
        g_string_append_len(got, buf, r);
        total += r;
    }
    return total;
}

/*
 * A console chardev whose reader is slow (a unix socket read a little at
 * a time) refuses bytes.  In both pacing modes every THR write is
 * accounted for: received + refused + overrun = written, with an event
 * for each loss, and what arrives is what was written minus those.
 */
static void test_refused_accounted(const void *opaque)
{
    const char *pace = opaque;
    const unsigned n = 3000, burst = 40;
    g_autoptr(GError) err = NULL;
    g_autofree char *dir = g_dir_make_tmp("ringside-qtest-XXXXXX", &err);
    g_autofree char *sock = g_build_filename(dir, "console.sock", NULL);
    g_autofree char *events = g_build_filename(dir, "events", NULL);
    g_autoptr(GString) got = g_string_new(NULL);
    g_autoptr(GString) want = g_string_new(NULL);
    g_autoptr(GArray) wt = NULL;
    g_autoptr(GPtrArray) ev = NULL;
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    uint64_t refused, overruns, refused_ev = 0, overrun_ev = 0;
    bool *lost = g_new0(bool, n + burst);
    QTestState *qts;
    unsigned i, w = 0, k;
    int fd;

    g_assert_no_error(err);
    qts = qtest_initf("-nodefaults -machine pc "
                      "-chardev socket,id=con,path=%s,server=on,wait=off "
                      "-chardev file,id=ev,path=%s "
                      "-device ringside-serial,id=rs,chardev=con,events=ev,"
                      "ring=off,tx-events=on,pace=%s", sock, events, pace);
    fd = socket(AF_UNIX, SOCK_STREAM, 0);
    g_assert_cmpint(fd, >=, 0);
    g_strlcpy(sa.sun_path, sock, sizeof(sa.sun_path));
    g_assert_cmpint(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
    /* Until QEMU has accepted: its filename loses "disconnected:". */
    for (k = 0;; k++) {
        QDict *r = qtest_qmp(qts, "{ 'execute': 'query-chardev' }");
        QList *l = qdict_get_qlist(r, "return");
        const QListEntry *e;
        bool up = false;

        QLIST_FOREACH_ENTRY(l, e) {
            QDict *c = qobject_to(QDict, qlist_entry_obj(e));

            if (!strcmp(qdict_get_str(c, "label"), "con")) {
                up = !g_str_has_prefix(qdict_get_str(c, "filename"),
                                       "disconnected");
            }
        }
        qobject_unref(r);
        if (up) {
            break;
        }
        g_assert_cmpuint(k, <, 500);
        g_usleep(10000);
    }
    g_assert_cmpint(fcntl(fd, F_SETFL, O_NONBLOCK), ==, 0);

    uart_setup(qts, 1, LCR_8N1, true);
    for (i = 0; i < n; i++) {
        /* As the 8250 console: wait up to 10 ms for THRE, then write. */
        for (k = 0; k < 100 && !(lsr(qts) & LSR_THRE); k++) {
            qtest_clock_step(qts, 100000);
        }
        g_string_append_c(want, 'a' + w % 26);
        uart_put(qts, 'a' + w++ % 26);
        if (i % 500 == 499) {
            drain(fd, got, 100);
        }
        if (i == n / 2 + 250) {
            /* A driver that does not wait at all. */
            for (k = 0; k < burst; k++) {
                g_string_append_c(want, 'a' + w % 26);
                uart_put(qts, 'a' + w++ % 26);
            }
        }
    }
    /* Let the reader catch up and the retries run out. */
    for (k = 0; k < 1000 && !(lsr(qts) & LSR_TEMT); k++) {
        drain(fd, got, SIZE_MAX);
        qtest_clock_step(qts, 100000);
    }
    g_assert_cmphex(lsr(qts) & LSR_TEMT, ==, LSR_TEMT);
    drain(fd, got, SIZE_MAX);

    refused = rs_counter(qts, "tx-refused");
    overruns = rs_counter(qts, "tx-overruns");
    g_assert_cmpuint(rs_counter(qts, "tx-bytes"), ==, w);
    g_test_message("pace=%s: %u written, %zu received, %" PRIu64 " refused, %"
                   PRIu64 " overrun", pace, w, got->len, refused, overruns);
    g_assert_cmpuint(got->len + refused + overruns, ==, w);
    g_assert_cmpuint(refused, >, 0);
    g_assert_cmpuint(overruns, >, 0);

    qtest_quit(qts);
    ev = read_events(events);
    for (i = 0; i < ev->len; i++) {
        QDict *e = ev->pdata[i];
        const char *kind = qdict_get_str(e, "ev");

        if (!strcmp(kind, "overrun")) {
            lost[qdict_get_int(e, "i")] = true;
            overrun_ev++;
        } else if (!strcmp(kind, "wire") && qdict_haskey(e, "refused")) {
            lost[qdict_get_int(e, "i")] = true;
            refused_ev++;
        }
    }
    g_assert_cmpuint(refused_ev, ==, refused);
    g_assert_cmpuint(overrun_ev, ==, overruns);
    /* What arrived is what was written, in order, minus what was lost. */
    for (i = 0, k = 0; i < w; i++) {
        if (!lost[i]) {
            g_assert_cmpuint(k, <, got->len);
            g_assert_cmpint(got->str[k], ==, want->str[i]);
            k++;
        }
    }
    g_assert_cmpuint(k, ==, got->len);
    close(fd);
    g_free(lost);
    unlink(sock);
    unlink(events);
    rmdir(dir);
}

/*
 * Issue 32, finding 2: at pace=line a guest whose ring is behind page walks
 * keeps the FIFO full of "x\r\n", lines no record prints.  Judging each
 * once took a timer tick's whole budget (8,192 reads), some 85% of the
 * line's time in the main loop.  All the device's reads together now stay
 * within line-read-rate a second of line time (plus one tick's budget
 * saved up); what that leaves unjudged is unchecked for want of budget,
 * never blamed; and a record's line printed after it is judged again.
 */
static void test_pace_read_rate(void)
{
    const int64_t sec = 1000 * 1000 * 1000, char_ns = 10 * sec / 115200;
    const uint64_t rate = 500000, saved = 8192;
    Fixture f = { 0 };
    g_autoptr(GPtrArray) lines = NULL;
    g_autofree char *st = NULL;
    g_autofree char *ok_line = NULL;
    uint64_t reads0, reads, seq;
    int64_t t0, vt;
    unsigned i, unchecked = 0;
    Ring r;

    fixture_start_opts(&f, EVENTS_FILE, ",pace=line");
    uart_setup(f.qts, 1, LCR_8N1, true);
    map_direct(f.qts);
    ring_init(&r, f.qts, 8, 14);
    put_prb_at(f.qts, 8, 14, DIRECT_MAP);
    for (i = 0; i < 200; i++) {
        g_autofree char *t = g_strdup_printf("record %u of a hostile guest", i);

        ring_push(&r, t);
    }
    qtest_clock_step(f.qts, 300 * 1000 * 1000);
    st = ring_state(f.qts);
    g_assert_cmpstr(st, ==, "attached");

    reads0 = rs_counter(f.qts, "cost-sum-tick-reads") +
             rs_counter(f.qts, "cost-sum-access-reads");
    t0 = rs_clock_now(f.qts);
    for (i = 0; i < 360; i++) {     /* half a second of line */
        uart_puts(f.qts, "x\r\nx\r\nx\r\nx\r\nx\r\n");
        qtest_clock_step(f.qts, 15 * char_ns + 1);
    }
    vt = rs_clock_now(f.qts) - t0;
    reads = rs_counter(f.qts, "cost-sum-tick-reads") +
            rs_counter(f.qts, "cost-sum-access-reads") - reads0;
    g_assert_cmpuint(reads, <=, rate * vt / sec + saved);
    g_assert_cmpuint(rs_counter(f.qts, "rate-limited"), >, 0);
    g_assert_cmpuint(rs_counter(f.qts, "tx-overruns"), ==, 0);

    /* The line runs free for a while: a record's line is judged in full. */
    qtest_clock_step(f.qts, 100 * 1000 * 1000);
    seq = ring_push(&r, "after the flood");
    ok_line = console_line((seq + 1) * 1000000, "after the flood");
    for (i = 0; ok_line[i]; i++) {
        wait_lsr(f.qts, LSR_THRE);
        uart_put(f.qts, ok_line[i]);
    }
    wait_lsr(f.qts, LSR_THRE);
    uart_put(f.qts, '\r');
    wait_lsr(f.qts, LSR_THRE);
    uart_put(f.qts, '\n');
    wait_lsr(f.qts, LSR_TEMT);

    lines = events_of(f.events, "line");
    for (i = 0; i + 1 < lines->len; i++) {
        QDict *e = lines->pdata[i];
        const char *v = qdict_get_str(e, "verdict");

        if (!strcmp(v, "unchecked")) {
            g_assert_cmpint(qdict_get_try_int(e, "budget", 0), ==, 1);
            unchecked++;
        } else {
            g_assert_cmpstr(v, ==, "user");
        }
    }
    g_assert_cmpuint(unchecked, >, 0);
    g_assert_cmpuint(rs_counter(f.qts, "under-budget"), ==, unchecked);
    g_assert_cmpstr(qdict_get_str(lines->pdata[lines->len - 1], "verdict"),
                    ==, "ok");
    fixture_stop(&f);
}

/* ---- ring=auto: finding the guest's printk ring ------------------------- */

/* The synthetic guest of ringside-qtest.h; its arrays are not needed. */

/* No note: "no ring yet", bytes still recorded; a good note: attached. */
static void test_ring_attach_scan(void)
{
    Fixture f = { 0 };
    g_autoptr(GPtrArray) rings = NULL;
    g_autofree char *text = vmcoreinfo_61(START_KERNEL_MAP + PRB_PTR_PA);
    g_autofree char *st0 = NULL, *st1 = NULL;
    QDict *e;

    fixture_start_opts(&f, EVENTS_FILE, "");
    qtest_clock_step(f.qts, 300 * 1000 * 1000);
    st0 = ring_state(f.qts);
    g_assert_cmpstr(st0, ==, "none");
    uart_put(f.qts, 'x');

    put_prb(f.qts, 4, 10);
    put_note(f.qts, NOTE_PA, text);
    qtest_clock_step(f.qts, 300 * 1000 * 1000);
    st1 = ring_state(f.qts);
    g_assert_cmpstr(st1, ==, "attached");

    rings = ring_events(&f);
    g_assert_cmpuint(rings->len, ==, 2);
    g_assert_cmpstr(qdict_get_str(rings->pdata[0], "state"), ==, "none");
    e = rings->pdata[1];
    g_assert_cmpstr(qdict_get_str(e, "state"), ==, "attached");
    g_assert_cmpstr(qdict_get_str(e, "via"), ==, "scan");
    g_assert_cmpint(qdict_get_int(e, "note"), ==, NOTE_PA);
    g_assert_cmpstr(qdict_get_str(e, "osrelease"), ==, "6.1.0-qtest");
    g_assert_cmpint(qdict_get_int(e, "descs"), ==, 16);
    g_assert_cmpint(qdict_get_int(e, "data_bytes"), ==, 1024);
    g_assert_cmpuint(rs_counter(f.qts, "tx-bytes"), ==, 1);

    /* A reset forgets the ring and finds it again. */
    qtest_qmp_assert_success(f.qts, "{ 'execute': 'system_reset' }");
    put_prb(f.qts, 4, 10);
    put_note(f.qts, NOTE_PA, text);
    qtest_clock_step(f.qts, 300 * 1000 * 1000);
    g_ptr_array_unref(g_steal_pointer(&rings));
    rings = ring_events(&f);
    g_assert_cmpuint(rings->len, ==, 4);
    g_assert_cmpstr(qdict_get_str(rings->pdata[2], "state"), ==, "none");
    g_assert_cmpstr(qdict_get_str(rings->pdata[3], "state"), ==, "attached");
    fixture_stop(&f);
}

/*
 * Hostile notes: a ring header with absurd sizes, a prb pointer into MMIO
 * and one outside RAM.  Each is "untrusted", logged, and QEMU carries on.
 */
static void test_ring_hostile(const void *opaque)
{
    const int which = GPOINTER_TO_INT(opaque);
    Fixture f = { 0 };
    g_autoptr(GPtrArray) rings = NULL;
    g_autofree char *text = NULL;
    g_autofree char *st = NULL;
    uint64_t prb_sym = START_KERNEL_MAP + PRB_PTR_PA;

    switch (which) {
    case 1:     /* prb points at the local APIC's MMIO page */
        prb_sym = START_KERNEL_MAP + 0xfee00000ull;
        break;
    case 2:     /* prb far outside RAM */
        prb_sym = START_KERNEL_MAP + 0x3f000000ull;
        break;
    }
    fixture_start_opts(&f, EVENTS_FILE, "");
    text = vmcoreinfo_61(prb_sym);
    put_prb(f.qts, which == 0 ? 63 : 4, which == 0 ? 64 : 10);
    put_note(f.qts, NOTE_PA, text);
    qtest_clock_step(f.qts, 300 * 1000 * 1000);
    st = ring_state(f.qts);
    g_assert_cmpstr(st, ==, "untrusted");
    rings = ring_events(&f);
    g_assert_cmpstr(qdict_get_str(rings->pdata[rings->len - 1], "state"), ==,
                    "untrusted");
    /* The UART still works. */
    uart_put(f.qts, 'k');
    g_assert_cmpuint(rs_counter(f.qts, "tx-bytes"), ==, 1);
    fixture_stop(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/ringside-serial/tx-recorded", test_tx_recorded);
    qtest_add_func("/ringside-serial/loopback-marked", test_loopback_marked);
    qtest_add_func("/ringside-serial/line-events-default",
                   test_line_events_default);
    qtest_add_func("/ringside-serial/no-events-chardev",
                   test_no_events_chardev);
    qtest_add_func("/ringside-serial/events-backpressure",
                   test_events_backpressure);
    {
        static const LineRate rates[] = {
            { 1, LCR_8N1, 10 },     /* 115200 8N1 */
            { 12, LCR_8N1, 10 },    /* 9600 8N1 */
            { 1, LCR_7E2, 11 },     /* 115200 7E2 */
        };
        static const char *const names[] = { "115200-8n1", "9600-8n1",
                                             "115200-7e2" };
        int i;

        for (i = 0; i < ARRAY_SIZE(rates); i++) {
            g_autofree char *path = g_strdup_printf(
                "/ringside-serial/pace/rate-%s", names[i]);

            qtest_add_data_func(path, &rates[i], test_pace_rate);
        }
    }
    qtest_add_func("/ringside-serial/ring/attach-scan", test_ring_attach_scan);
    qtest_add_data_func("/ringside-serial/ring/hostile-sizes",
                        GINT_TO_POINTER(0), test_ring_hostile);
    qtest_add_data_func("/ringside-serial/ring/hostile-mmio",
                        GINT_TO_POINTER(1), test_ring_hostile);
    qtest_add_data_func("/ringside-serial/ring/hostile-outside-ram",
                        GINT_TO_POINTER(2), test_ring_hostile);
    qtest_add_func("/ringside-serial/pace/fifo-depth", test_pace_fifo_depth);
    qtest_add_func("/ringside-serial/pace/fifo-clear", test_pace_fifo_clear);
    qtest_add_func("/ringside-serial/pace/no-fifo", test_pace_no_fifo);
    qtest_add_func("/ringside-serial/pace/thre-irq", test_pace_thre_irq);
    qtest_add_func("/ringside-serial/pace/divisor0", test_pace_divisor0);
    qtest_add_func("/ringside-serial/pace/late-timer", test_pace_late_timer);
    qtest_add_func("/ringside-serial/pace/driver-wait", test_pace_driver_wait);
    qtest_add_func("/ringside-serial/pace/migrate", test_pace_migrate);
    qtest_add_func("/ringside-serial/pace/read-rate", test_pace_read_rate);
    qtest_add_data_func("/ringside-serial/refused/pace-off", "off",
                        test_refused_accounted);
    qtest_add_data_func("/ringside-serial/refused/pace-line", "line",
                        test_refused_accounted);
    return g_test_run();
}
