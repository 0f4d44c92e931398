/*
 * qtest for ringside-serial: the UART must still behave as a 16550A towards
 * the guest and its console chardev, and every THR write must show up once,
 * in order and timestamped, in the events stream.
 *
 * Copyright (c) 2026 The ringside authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "libqtest.h"
#include "qapi/error.h"
#include "qapi/qmp/qdict.h"
#include "qapi/qmp/qjson.h"
#include "qapi/qmp/qnum.h"
#include "qapi/qmp/qobject.h"
#include "qemu/bswap.h"

#define COM1        0x3f8
#define REG_THR     0
#define REG_DLL     0
#define REG_DLM     1
#define REG_LCR     3
#define REG_MCR     4
#define REG_LSR     5
#define REG_IER     1
#define REG_IIR     2
#define REG_FCR     2
#define IER_THRI    0x02
#define IIR_ID      0x0f
#define IIR_THRI    0x02
#define FCR_ENABLE_RESET 0x07
#define LCR_8N1     0x03
#define LCR_7E2     0x1e        /* 7 data bits, even parity, 2 stop bits */
#define LCR_DLAB    0x80
#define MCR_LOOP    0x10
#define LSR_THRE    0x20
#define LSR_TEMT    0x40

typedef enum EventsBackend {
    EVENTS_NONE,
    EVENTS_FILE,
    EVENTS_UNCONNECTED_SOCKET,
} EventsBackend;

typedef struct Fixture {
    char *dir;
    char *console;
    char *events;
    QTestState *qts;
} Fixture;

static void fixture_start_opts(Fixture *f, EventsBackend backend,
                               const char *dev_opts)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *events_opts = NULL;

    f->dir = g_dir_make_tmp("ringside-qtest-XXXXXX", &err);
    g_assert_no_error(err);
    f->console = g_build_filename(f->dir, "console", NULL);
    f->events = g_build_filename(f->dir, "events", NULL);
    switch (backend) {
    case EVENTS_NONE:
        events_opts = g_strdup("");
        break;
    case EVENTS_FILE:
        events_opts = g_strdup_printf("-chardev file,id=ev,path=%s",
                                      f->events);
        break;
    case EVENTS_UNCONNECTED_SOCKET:
        events_opts = g_strdup_printf("-chardev socket,id=ev,path=%s,"
                                      "server=on,wait=off", f->events);
        break;
    }
    f->qts = qtest_initf("-nodefaults -machine pc "
                         "-chardev file,id=con,path=%s %s "
                         "-device ringside-serial,id=rs,chardev=con%s%s",
                         f->console, events_opts,
                         backend == EVENTS_NONE ? "" : ",events=ev",
                         dev_opts);
}

/* The wire tests: ring=off keeps ring events and probe timers out. */
static void fixture_start(Fixture *f, EventsBackend backend)
{
    fixture_start_opts(f, backend, ",ring=off");
}

static void fixture_stop(Fixture *f)
{
    qtest_quit(f->qts);
    unlink(f->console);
    unlink(f->events);
    rmdir(f->dir);
    g_free(f->console);
    g_free(f->events);
    g_free(f->dir);
}

static uint64_t rs_counter(QTestState *qts, const char *name)
{
    QDict *resp = qtest_qmp(qts, "{ 'execute': 'qom-get', 'arguments': "
                            "{ 'path': '/machine/peripheral/rs', "
                            "'property': %s } }", name);
    QNum *n;
    uint64_t v;

    g_assert(qdict_haskey(resp, "return"));
    n = qobject_to(QNum, qdict_get(resp, "return"));
    g_assert(n);
    v = qnum_get_uint(n);
    qobject_unref(resp);
    return v;
}

static char *read_file(const char *path)
{
    g_autoptr(GError) err = NULL;
    char *text = NULL;

    g_file_get_contents(path, &text, NULL, &err);
    g_assert_no_error(err);
    return text;
}

/* Parse the events file into one QDict per line, checking each is JSON. */
static GPtrArray *read_events(const char *path)
{
    g_autofree char *text = read_file(path);
    g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
    GPtrArray *events = g_ptr_array_new_with_free_func(
        (GDestroyNotify)qobject_unref_impl);
    int i;

    for (i = 0; lines[i]; i++) {
        QDict *ev;

        if (!lines[i][0]) {
            g_assert(!lines[i + 1]);  /* only the text after the last \n */
            break;
        }
        ev = qobject_to(QDict, qobject_from_json(lines[i], &error_abort));
        g_assert(ev);
        g_assert_cmpint(qdict_get_int(ev, "v"), ==, 2);
        g_ptr_array_add(events, ev);
    }
    return events;
}

static void uart_put(QTestState *qts, uint8_t c)
{
    qtest_outb(qts, COM1 + REG_THR, c);
}

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
    g_assert_cmpuint(rs_counter(f.qts, "events-written"), ==, strlen(msg) + 1);
    g_assert_cmpuint(rs_counter(f.qts, "events-dropped"), ==, 0);

    console = read_file(f.console);
    g_assert_cmpstr(console, ==, msg);

    ev = read_events(f.events);
    g_assert_cmpuint(ev->len, ==, strlen(msg) + 1);
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
    fixture_stop(&f);
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
    g_assert_cmpuint(written + dropped, ==, n + 1);
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
    t0 = qtest_clock_step(f.qts, 0);
    for (i = 0; i < n; i++) {
        wait_lsr(f.qts, LSR_THRE);
        uart_put(f.qts, 'A' + i % 26);
    }
    wait_lsr(f.qts, LSR_TEMT);
    elapsed = qtest_clock_step(f.qts, 0) - t0;
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
    t0 = qtest_clock_step(f.qts, 0);
    uart_put(f.qts, 'z');
    wait_lsr(f.qts, LSR_TEMT);
    dt = qtest_clock_step(f.qts, 0) - t0;
    g_assert_cmpint(dt, >, 2000000);
    g_assert_cmpint(dt, <, 4000000);
    console = read_file(f.console);
    g_assert_cmpstr(console, ==, "z");
    fixture_stop(&f);
}

/* ---- ring=auto: finding the guest's printk ring ------------------------- */

/*
 * A synthetic guest: a VMCOREINFO note at NOTE_PA with Linux 6.1's printk
 * layout, the kernel image at phys_base 0 (PA = VA - START_KERNEL_MAP), and
 * a printk_ringbuffer at PRB_PA whose header names 16 descriptors and a
 * 1 KiB text ring.  The ring's arrays are not needed to attach.
 */
#define START_KERNEL_MAP    0xffffffff80000000ull
#define NOTE_PA             0x00200000ull
#define PRB_PTR_PA          0x00300000ull
#define PRB_PA              0x00300100ull

static void put_note(QTestState *qts, uint64_t pa, const char *text)
{
    size_t len = strlen(text);
    g_autofree uint8_t *note = g_malloc0(24 + len);

    note[0] = 11;                       /* namesz: "VMCOREINFO\0" */
    note[4] = len & 0xff;               /* descsz */
    note[5] = len >> 8;
    memcpy(note + 12, "VMCOREINFO", 11);
    memcpy(note + 24, text, len);
    qtest_memwrite(qts, pa, note, 24 + len);
}

static char *vmcoreinfo_61(uint64_t prb_sym)
{
    static const struct {
        const char *key;
        unsigned val;
    } lay[] = {
        { "SIZE(printk_ringbuffer)", 88 },
        { "OFFSET(printk_ringbuffer.desc_ring)", 0 },
        { "OFFSET(printk_ringbuffer.text_data_ring)", 48 },
        { "OFFSET(printk_ringbuffer.fail)", 80 },
        { "SIZE(prb_desc_ring)", 48 },
        { "OFFSET(prb_desc_ring.count_bits)", 0 },
        { "OFFSET(prb_desc_ring.descs)", 8 },
        { "OFFSET(prb_desc_ring.infos)", 16 },
        { "OFFSET(prb_desc_ring.head_id)", 24 },
        { "OFFSET(prb_desc_ring.tail_id)", 32 },
        { "SIZE(prb_desc)", 24 },
        { "OFFSET(prb_desc.state_var)", 0 },
        { "OFFSET(prb_desc.text_blk_lpos)", 8 },
        { "SIZE(prb_data_blk_lpos)", 16 },
        { "OFFSET(prb_data_blk_lpos.begin)", 0 },
        { "OFFSET(prb_data_blk_lpos.next)", 8 },
        { "SIZE(printk_info)", 88 },
        { "OFFSET(printk_info.seq)", 0 },
        { "OFFSET(printk_info.ts_nsec)", 8 },
        { "OFFSET(printk_info.text_len)", 16 },
        { "OFFSET(printk_info.caller_id)", 20 },
        { "OFFSET(printk_info.dev_info)", 24 },
        { "SIZE(dev_printk_info)", 64 },
        { "OFFSET(dev_printk_info.subsystem)", 0 },
        { "LENGTH(printk_info_subsystem)", 16 },
        { "OFFSET(dev_printk_info.device)", 16 },
        { "LENGTH(printk_info_device)", 48 },
        { "SIZE(prb_data_ring)", 32 },
        { "OFFSET(prb_data_ring.size_bits)", 0 },
        { "OFFSET(prb_data_ring.data)", 8 },
        { "OFFSET(prb_data_ring.head_lpos)", 16 },
        { "OFFSET(prb_data_ring.tail_lpos)", 24 },
        { "SIZE(atomic_long_t)", 8 },
        { "OFFSET(atomic_long_t.counter)", 0 },
    };
    GString *t = g_string_new("OSRELEASE=6.1.0-qtest\nPAGESIZE=4096\n");
    size_t i;

    g_string_append_printf(t, "SYMBOL(prb)=%" PRIx64 "\n", prb_sym);
    g_string_append_printf(t, "SYMBOL(init_top_pgt)=%llx\n",
                           START_KERNEL_MAP + 0x1000);
    g_string_append(t, "NUMBER(phys_base)=0\n");
    for (i = 0; i < ARRAY_SIZE(lay); i++) {
        g_string_append_printf(t, "%s=%u\n", lay[i].key, lay[i].val);
    }
    return g_string_free(t, false);
}

static void put_prb(QTestState *qts, unsigned count_bits, unsigned size_bits)
{
    uint8_t prb[88] = { 0 };

    qtest_writeq(qts, PRB_PTR_PA, START_KERNEL_MAP + PRB_PA);
    prb[0] = count_bits;                                 /* desc_ring */
    stq_le_p(prb + 8, START_KERNEL_MAP + 0x310000);      /* descs */
    stq_le_p(prb + 16, START_KERNEL_MAP + 0x320000);     /* infos */
    prb[48] = size_bits;                                 /* text_data_ring */
    stq_le_p(prb + 56, START_KERNEL_MAP + 0x330000);     /* data */
    qtest_memwrite(qts, PRB_PA, prb, sizeof(prb));
}

/* The "ring" events in the stream, as their "state" values. */
static GPtrArray *ring_events(Fixture *f)
{
    g_autoptr(GPtrArray) ev = read_events(f->events);
    GPtrArray *out = g_ptr_array_new_with_free_func(
        (GDestroyNotify)qobject_unref_impl);
    unsigned i;

    for (i = 0; i < ev->len; i++) {
        if (!strcmp(qdict_get_str(ev->pdata[i], "ev"), "ring")) {
            g_ptr_array_add(out, qobject_ref((QDict *)ev->pdata[i]));
        }
    }
    return out;
}

static char *ring_state(QTestState *qts)
{
    QDict *resp = qtest_qmp(qts, "{ 'execute': 'qom-get', 'arguments': "
                            "{ 'path': '/machine/peripheral/rs', "
                            "'property': 'ring-state' } }");
    char *v = g_strdup(qdict_get_str(resp, "return"));

    qobject_unref(resp);
    return v;
}

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
    return g_test_run();
}
