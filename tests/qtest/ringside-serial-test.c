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

#define COM1        0x3f8
#define REG_THR     0
#define REG_DLL     0
#define REG_DLM     1
#define REG_LCR     3
#define REG_MCR     4
#define REG_LSR     5
#define LCR_8N1     0x03
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

static void fixture_start(Fixture *f, EventsBackend backend)
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
                         "-device ringside-serial,id=rs,chardev=con%s",
                         f->console, events_opts,
                         backend == EVENTS_NONE ? "" : ",events=ev");
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
        g_assert_cmpint(qdict_get_int(ev, "v"), ==, 1);
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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/ringside-serial/tx-recorded", test_tx_recorded);
    qtest_add_func("/ringside-serial/loopback-marked", test_loopback_marked);
    qtest_add_func("/ringside-serial/no-events-chardev",
                   test_no_events_chardev);
    qtest_add_func("/ringside-serial/events-backpressure",
                   test_events_backpressure);
    return g_test_run();
}
