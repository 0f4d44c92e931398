/*
 * qtest for ringside-serial's level 0 checking: console lines written to
 * THR are judged against a synthetic printk ring in guest memory.  One
 * case per verdict, hostile rings that must end "untrusted" without harm,
 * and the state surviving migration.
 *
 * Copyright (c) 2026 The ringside authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ringside-qtest.h"

#define ATTACH_NS   (300 * 1000 * 1000)

/* A machine with a synthetic ring in place; attach_now() finds it. */
static void start_attached(Fixture *f, Ring *r, const char *opts)
{
    fixture_start_opts(f, EVENTS_FILE, opts);
    ring_init(r, f->qts, 8, 16);
}

static void attach_now(Fixture *f)
{
    g_autofree char *st = NULL;

    qtest_clock_step(f->qts, ATTACH_NS);
    st = ring_state(f->qts);
    g_assert_cmpstr(st, ==, "attached");
}

/* The verdicts of the "line" events, space-separated. */
static char *line_verdicts(Fixture *f)
{
    g_autoptr(GPtrArray) lines = events_of(f->events, "line");
    GString *s = g_string_new("");
    unsigned i;

    for (i = 0; i < lines->len; i++) {
        g_string_append_printf(s, "%s%s", i ? " " : "",
                               qdict_get_str(lines->pdata[i], "verdict"));
    }
    return g_string_free(s, false);
}

static QDict *line_event(Fixture *f, unsigned n)
{
    g_autoptr(GPtrArray) lines = events_of(f->events, "line");

    g_assert_cmpuint(lines->len, >, n);
    return qobject_ref((QDict *)lines->pdata[n]);
}

/* Quit (the guest "stops for good") and return the summary event. */
static QDict *quit_summary(Fixture *f)
{
    QDict *sum = quit_event(f, "summary");

    g_assert_cmpstr(qdict_get_str(sum, "reason"), ==, "shutdown");
    return sum;
}

/* Every record printed once, in order: all ok, with seqs and latency. */
static void test_ok(void)
{
    static const char *const texts[] = { "Linux version 6.1.0-qtest",
                                         "Command line: console=ttyS0",
                                         "last one" };
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) sum = NULL;
    g_autoptr(QDict) last = NULL;
    int i;

    start_attached(&f, &r, "");
    for (i = 0; i < 3; i++) {
        ring_push(&r, texts[i]);
    }
    attach_now(&f);
    for (i = 0; i < 3; i++) {
        print_rec(f.qts, i, texts[i]);
    }
    /* qom-get answers while the guest runs */
    g_assert_cmpuint(rs_counter(f.qts, "verdict-ok"), ==, 3);
    g_assert_cmpuint(rs_counter(f.qts, "verdict-unmatched"), ==, 0);
    /* the last record was the newest when printed: it sets the offset */
    g_assert_cmpuint(rs_counter(f.qts, "latency-n"), ==, 1);
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok ok ok");
    last = line_event(&f, 2);
    g_assert_cmpint(qdict_get_int(last, "seq"), ==, 2);
    g_assert_cmpint(qdict_get_int(last, "ts"), ==, 3000000);
    g_assert_true(qdict_haskey(last, "fresh"));
    g_assert_cmpint(qdict_get_int(last, "len"), ==,
                    strlen("[    0.003000] last one"));
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "lines", "ok"), ==, 3);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    fixture_stop(&f);
}

/*
 * The default stream (tx-events=off) has no "tx" events: each line event
 * says where its bytes are, when they went and who wrote them, for a line
 * judged at once and for one kept until the ring was found.
 */
static void test_ok_line_stamps(void)
{
    static const char *const texts[] = { "before the ring", "after it" };
    Fixture f = { 0 };
    Ring r;
    g_autoptr(GPtrArray) all = NULL;
    g_autofree char *v = NULL;
    unsigned i, len0;

    start_attached(&f, &r, ",tx-events=off");
    for (i = 0; i < 2; i++) {
        ring_push(&r, texts[i]);
    }
    print_rec(f.qts, 0, texts[0]);      /* kept: no ring yet */
    attach_now(&f);
    print_rec(f.qts, 1, texts[1]);
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok ok");
    len0 = strlen("[    0.001000] before the ring");
    for (i = 0; i < 2; i++) {
        g_autoptr(QDict) l = line_event(&f, i);

        g_assert_cmpint(qdict_get_int(l, "first"), ==, i ? len0 + 2 : 0);
        g_assert_cmpint(qdict_get_int(l, "last"), ==,
                        i ? len0 + 2 + strlen("[    0.002000] after it") + 1 :
                        len0 + 1);
        g_assert_true(qdict_haskey(l, "dt"));
        g_assert_cmpint(qdict_get_int(l, "cpu"), ==, -1);
        g_assert_false(qdict_haskey(l, "q"));
    }
    all = read_events(f.events);
    for (i = 0; i < all->len; i++) {
        g_assert_cmpstr(qdict_get_str(all->pdata[i], "ev"), !=, "tx");
    }
    fixture_stop(&f);
}

/* A byte changed in transit: corrupt, at that byte, with both values. */
static void test_corrupt(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) e = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "hello world");
    ring_push(&r, "second");
    attach_now(&f);
    uart_puts(f.qts, "[    0.001000] hellX world\r\n");
    print_rec(f.qts, 1, "second");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "corrupt ok");
    e = line_event(&f, 0);
    g_assert_cmpint(qdict_get_int(e, "seq"), ==, 0);
    g_assert_cmpint(qdict_get_int(e, "at"), ==, 19);
    g_assert_cmpint(qdict_get_int(e, "want"), ==, 'o');
    g_assert_cmpint(qdict_get_int(e, "got"), ==, 'X');
    g_assert_cmpuint(rs_counter(f.qts, "verdict-corrupt"), ==, 1);
    fixture_stop(&f);
}

/*
 * A byte lost (as a FIFO overrun loses one): corrupt, not unmatched, and
 * the record is not also missing.
 */
static void test_corrupt_lost_byte(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) sum = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "first");
    ring_push(&r, "a line that loses one byte");
    ring_push(&r, "third");
    attach_now(&f);
    print_rec(f.qts, 0, "first");
    print_rec(f.qts, 1, "a line that loses oe byte");
    print_rec(f.qts, 2, "third");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok corrupt ok");
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    fixture_stop(&f);
}

/*
 * Two CPUs printing at once: record 0's line is cut by record 1's whole
 * line, and the rest of record 0 follows: both lines are torn.
 */
static void test_torn(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) e = NULL;
    g_autoptr(QDict) sum = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "hello world");
    ring_push(&r, "other line");
    ring_push(&r, "after");
    attach_now(&f);
    uart_puts(f.qts, "[    0.001000] hello wo");
    uart_puts(f.qts, "[    0.002000] other line\r\n");
    uart_puts(f.qts, "rld\r\n");
    print_rec(f.qts, 2, "after");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "torn torn ok");
    e = line_event(&f, 0);
    g_assert_cmpint(qdict_get_int(e, "seq"), ==, 0);
    g_assert_cmpint(qdict_get_int(e, "seq2"), ==, 1);
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "lines", "torn"), ==, 2);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    fixture_stop(&f);
}

/* Byte-by-byte interleaving of two lines is torn as well. */
static void test_torn_bytes(void)
{
    static const char a[] = "[    0.002000] aaaa";
    static const char b[] = "[    0.003000] bbbbbbbb";
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    size_t i;

    start_attached(&f, &r, "");
    ring_push(&r, "first");
    ring_push(&r, "aaaa");
    ring_push(&r, "bbbbbbbb");
    attach_now(&f);
    print_rec(f.qts, 0, "first");
    /* a's bytes and b's alternate until a is done: a ends the line */
    for (i = 0; i < strlen(a); i++) {
        uart_put(f.qts, a[i]);
        uart_put(f.qts, b[i]);
    }
    uart_puts(f.qts, "\r\n");
    uart_puts(f.qts, b + strlen(a));
    uart_puts(f.qts, "\r\n");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok torn torn");
    fixture_stop(&f);
}

static void test_duplicate(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) e = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "zero");
    ring_push(&r, "one");
    attach_now(&f);
    print_rec(f.qts, 0, "zero");
    print_rec(f.qts, 1, "one");
    print_rec(f.qts, 1, "one");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok ok duplicate");
    e = line_event(&f, 2);
    g_assert_cmpint(qdict_get_int(e, "seq"), ==, 1);
    fixture_stop(&f);
}

/* 0, 2, 1: the late record is reordered and, in the end, not missing. */
static void test_reordered(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) sum = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "zero");
    ring_push(&r, "one");
    ring_push(&r, "two");
    attach_now(&f);
    print_rec(f.qts, 0, "zero");
    print_rec(f.qts, 2, "two");
    print_rec(f.qts, 1, "one");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok ok reordered");
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "lines", "reordered"), ==, 1);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    fixture_stop(&f);
}

/*
 * The kernel's prefix, but no record says it, and the ring cannot vouch
 * for its stamp: a record stamped next to it can no longer be read (its
 * slot holds a newer record's info), so the line may have been that
 * record's.  Unmatched, and the event says why.
 */
static void test_unmatched(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) e = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "zero");
    ring_push(&r, "one");
    ring_push(&r, "two");
    ring_push(&r, "three");
    attach_now(&f);
    print_rec(f.qts, 0, "zero");
    qtest_writeq(f.qts, RING_INFOS + 2 * INFO_SIZE, 2 + 256);
    uart_puts(f.qts, "[    0.002500] something no record says\r\n");
    print_rec(f.qts, 1, "one");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok unmatched ok");
    e = line_event(&f, 1);
    g_assert_cmpstr(qdict_get_str(e, "why"), ==, "gap");
    g_assert_cmpuint(rs_counter(f.qts, "verdict-unmatched"), ==, 1);
    fixture_stop(&f);
}

/*
 * User space stamps its console lines like the kernel (journald's
 * ForwardToConsole= does): a stamped line no record prints is user space's
 * when the ring still holds every record stamped around it, between two
 * records or after the newest.  One stamped exactly as a record, with
 * other text, cannot be told from a kernel line damaged beyond
 * recognition: user space's, "ambiguous", and never the kernel's problem.
 */
static void test_user_stamped(void)
{
    static const char *const want_why[] = {
        NULL, "vouched", NULL, "ambiguous", "vouched", NULL,
    };
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) sum = NULL;
    unsigned i;

    start_attached(&f, &r, "");
    ring_push(&r, "zero");
    ring_push(&r, "one");
    ring_push(&r, "two");
    attach_now(&f);
    print_rec(f.qts, 0, "zero");
    uart_puts(f.qts, "[    0.001500] systemd[1]: Started journald.\r\n");
    print_rec(f.qts, 1, "one");
    uart_puts(f.qts, "[    0.002000] login[221]: ROOT LOGIN on ttyS0\r\n");
    uart_puts(f.qts, "[    9.000000] (udev-worker)[99]: later than all\r\n");
    print_rec(f.qts, 2, "two");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok user ok user user ok");
    for (i = 0; i < G_N_ELEMENTS(want_why); i++) {
        g_autoptr(QDict) e = line_event(&f, i);

        if (want_why[i]) {
            g_assert_cmpstr(qdict_get_str(e, "why"), ==, want_why[i]);
        } else {
            g_assert_false(qdict_haskey(e, "why"));
        }
    }
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "lines", "user"), ==, 3);
    g_assert_cmpint(sub_int(sum, "lines", "unmatched"), ==, 0);
    g_assert_cmpint(sub_int(sum, "lines", "corrupt"), ==, 0);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    fixture_stop(&f);
}

/*
 * The kernel's console writes a whole record while user space's stamped
 * line is still going out: the user line's start is user space's, the
 * record's line is ok, never corrupt, and the user line's rest is user
 * space's too.  Two user lines run together are user space's.
 */
static void test_user_cut_by_kernel(void)
{
    static const char head[] = "[    0.001500] (modprobe)[157]: Executable "
                               "/sbin/modp";
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) u = NULL;
    g_autoptr(QDict) k = NULL;
    g_autoptr(QDict) sum = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "zero");
    ring_push(&r, "systemd[1]: Started systemd-journald.service.");
    ring_push(&r, "two");
    attach_now(&f);
    print_rec(f.qts, 0, "zero");                        /* bytes 0..20 */
    uart_puts(f.qts, head);
    print_rec(f.qts, 1, "systemd[1]: Started systemd-journald.service.");
    uart_puts(f.qts, "robe missing, skipping\r\n");
    uart_puts(f.qts, "[    0.002500] agetty[5]: cut at shut[    0.002600] "
              "systemd-shutdown[1]: Syncing filesystems\r\n");
    print_rec(f.qts, 2, "two");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok user ok user user ok");
    u = line_event(&f, 1);
    g_assert_cmpint(qdict_get_int(u, "first"), ==, 21);
    g_assert_cmpint(qdict_get_int(u, "len"), ==, strlen(head));
    g_assert_cmpstr(qdict_get_str(u, "why"), ==, "vouched");
    k = line_event(&f, 2);
    g_assert_cmpint(qdict_get_int(k, "seq"), ==, 1);
    g_assert_cmpint(qdict_get_int(k, "first"), ==, 21 + strlen(head));
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "lines", "corrupt"), ==, 0);
    g_assert_cmpint(sub_int(sum, "lines", "unmatched"), ==, 0);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    fixture_stop(&f);
}

/*
 * User space writes to the same UART as the kernel (getty, init, an echo
 * to /dev/console): lines without the kernel's prefix that no record
 * explains are its, never a problem.  A line that has lost a byte of its
 * prefix is still the kernel's, corrupt.
 */
static void test_user(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) sum = NULL;
    g_autoptr(QDict) e = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "zero");
    ring_push(&r, "one, a longer line than the others");
    ring_push(&r, "two");
    attach_now(&f);
    print_rec(f.qts, 0, "zero");
    uart_puts(f.qts, "\r\nDebian GNU/Linux 12 guest ttyS0\r\n");
    uart_puts(f.qts, "[\033[0;32m  OK  \033[0m] Started foo.service.\r\n");
    uart_puts(f.qts, "cloud-init[123]: Cloud-init v. 22.4.2 running\r\n");
    uart_puts(f.qts, "[    0.00000] one, a longer line than the others\r\n");
    print_rec(f.qts, 2, "two");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok user user user user corrupt ok");
    e = line_event(&f, 5);
    g_assert_cmpint(qdict_get_int(e, "seq"), ==, 1);
    g_assert_cmpuint(rs_counter(f.qts, "verdict-user"), ==, 4);
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "lines", "user"), ==, 4);
    g_assert_cmpint(sub_int(sum, "lines", "unmatched"), ==, 0);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    g_assert_cmpint(qdict_get_int(sum, "prefix"), ==, 1);
    fixture_stop(&f);
}

/*
 * A prompt without a newline, then a kernel line on the same wire line:
 * the prompt is user space's, the record is judged on its own.
 */
static void test_user_prompt(void)
{
    static const char prompt[] = "guest login: ";
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) u = NULL;
    g_autoptr(QDict) k = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "zero");
    ring_push(&r, "one");
    ring_push(&r, "two");
    attach_now(&f);
    print_rec(f.qts, 0, "zero");                /* bytes 0..20 */
    uart_puts(f.qts, prompt);
    print_rec(f.qts, 1, "one");
    print_rec(f.qts, 2, "two");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok user ok ok");
    u = line_event(&f, 1);
    g_assert_cmpint(qdict_get_int(u, "first"), ==, 21);
    g_assert_cmpint(qdict_get_int(u, "last"), ==, 21 + strlen(prompt) - 1);
    g_assert_cmpint(qdict_get_int(u, "len"), ==, strlen(prompt));
    k = line_event(&f, 2);
    g_assert_cmpint(qdict_get_int(k, "seq"), ==, 1);
    g_assert_cmpint(qdict_get_int(k, "first"), ==, 21 + strlen(prompt));
    fixture_stop(&f);
}

/*
 * User space's bytes inside a kernel line: torn, a problem for the
 * record, and the event says which bytes were user space's.
 */
static void test_user_torn(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) a = NULL;
    g_autoptr(QDict) b = NULL;
    g_autoptr(QDict) sum = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "hello world");
    ring_push(&r, "second line");
    ring_push(&r, "third");
    attach_now(&f);
    /* inserted whole */
    uart_puts(f.qts, "[    0.001000] hello woUSERrld\r\n");
    /* the line ends with user space's bytes; the record's rest follows */
    uart_puts(f.qts, "[    0.002000] second lilogin: \r\n");
    uart_puts(f.qts, "ne\r\n");
    print_rec(f.qts, 2, "third");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "torn torn torn ok");
    a = line_event(&f, 0);
    g_assert_cmpstr(qdict_get_str(a, "by"), ==, "user");
    g_assert_cmpint(qdict_get_int(a, "seq"), ==, 0);
    g_assert_cmpint(qdict_get_int(a, "uat"), ==, 23);
    g_assert_cmpint(qdict_get_int(a, "ulen"), ==, 4);
    b = line_event(&f, 1);
    g_assert_cmpint(qdict_get_int(b, "seq"), ==, 1);
    g_assert_cmpint(qdict_get_int(b, "uat"), ==, 24);
    g_assert_cmpint(qdict_get_int(b, "ulen"), ==, 7);
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    fixture_stop(&f);
}

/*
 * printk.time=0: no prefix tells the kernel's lines from user space's,
 * so content does, and the summary says the console has no prefix.
 */
static void test_user_no_time(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) sum = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "zero");
    ring_push(&r, "one");
    attach_now(&f);
    uart_puts(f.qts, "zero\r\n");
    uart_puts(f.qts, "guest login: root\r\n");
    uart_puts(f.qts, "one\r\n");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok user ok");
    sum = quit_summary(&f);
    g_assert_cmpint(qdict_get_int(sum, "prefix"), ==, 0);
    fixture_stop(&f);
}

/*
 * A record the console skipped is missing once the console is a window
 * (128 records) past it; one never printed before the guest stops is
 * missing at the stop.
 */
static void test_missing(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autoptr(GPtrArray) recs = NULL;
    g_autoptr(QDict) sum = NULL;
    int i;

    start_attached(&f, &r, "");
    for (i = 0; i < 140; i++) {
        g_autofree char *t = g_strdup_printf("record %d", i);

        ring_push(&r, t);
    }
    attach_now(&f);
    for (i = 0; i < 139; i++) {
        g_autofree char *t = g_strdup_printf("record %d", i);

        if (i != 1) {
            print_rec(f.qts, i, t);
        }
        if (i == 100) {
            g_assert_cmpuint(rs_counter(f.qts, "verdict-missing"), ==, 0);
        }
    }
    g_assert_cmpuint(rs_counter(f.qts, "verdict-missing"), ==, 1);
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 2);
    g_assert_cmpint(sub_int(sum, "lines", "ok"), ==, 138);
    recs = events_of(f.events, "record");
    g_assert_cmpuint(recs->len, ==, 2);
    g_assert_cmpstr(qdict_get_str(recs->pdata[0], "verdict"), ==, "missing");
    g_assert_cmpint(qdict_get_int(recs->pdata[0], "seq"), ==, 1);
    g_assert_cmpint(qdict_get_int(recs->pdata[0], "level"), ==, 6);
    g_assert_cmpint(qdict_get_int(recs->pdata[1], "seq"), ==, 139);
    fixture_stop(&f);
}

/*
 * A debug record the console does not print: filtered when the loglevel
 * is inferred (nothing that verbose was printed) or given (7), missing if
 * the loglevel says it should have been printed (8).
 */
static void test_filtered(const void *opaque)
{
    const char *opts = opaque;
    bool expect_missing = !strcmp(opts, ",loglevel=8");
    Fixture f = { 0 };
    Ring r;
    g_autoptr(QDict) sum = NULL;

    start_attached(&f, &r, opts);
    ring_push_full(&r, 1000000, 3, 1, "error");
    ring_push_full(&r, 2000000, 7, 1, "debug");
    ring_push_full(&r, 3000000, 3, 1, "error again");
    attach_now(&f);
    print_rec(f.qts, 0, "error");
    print_rec(f.qts, 2, "error again");
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "records", "filtered"), ==, !expect_missing);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, expect_missing);
    fixture_stop(&f);
}

/*
 * panic() makes the console verbose: the debug record printed then does
 * not make the debug record the console skipped before missing.
 */
static void test_verbose_later(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autoptr(QDict) sum = NULL;

    start_attached(&f, &r, "");
    ring_push_full(&r, 1000000, 3, 1, "error");
    ring_push_full(&r, 2000000, 7, 1, "debug");
    ring_push_full(&r, 3000000, 0, 1, "Kernel panic");
    ring_push_full(&r, 4000000, 7, 1, "debug, verbose now");
    attach_now(&f);
    print_rec(f.qts, 0, "error");
    print_rec(f.qts, 2, "Kernel panic");
    print_rec(f.qts, 3, "debug, verbose now");
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "records", "filtered"), ==, 1);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    fixture_stop(&f);
}

/*
 * Records that left the ring before the console printed the next one: the
 * kernel's notice accounts for those it dropped; the rest the console went
 * past while they were there (it says so when it falls behind), so below
 * its loglevel.  Records still there are read and judged as usual.
 */
static void test_gone(const void *opaque)
{
    bool notice = opaque != NULL;
    Fixture f = { 0 };
    Ring r;
    g_autoptr(QDict) sum = NULL;
    int i;

    start_attached(&f, &r, "");
    for (i = 0; i < 20; i++) {
        g_autofree char *t = g_strdup_printf("rec %d", i);

        ring_push(&r, t);
    }
    attach_now(&f);
    print_rec(f.qts, 0, "rec 0");
    qtest_writeq(f.qts, PRB_PA + 32, 12);           /* tail: 1-11 gone */
    if (notice) {
        uart_puts(f.qts, "** 5 printk messages dropped **\r\n");
    }
    print_rec(f.qts, 19, "rec 19");
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "records", "dropped"), ==, notice ? 5 : 0);
    g_assert_cmpint(sub_int(sum, "records", "filtered"), ==,
                    notice ? 6 : 11);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 7);
    fixture_stop(&f);
}

/* The kernel's own "dropped" notice explains the records it skipped. */
static void test_dropped(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) sum = NULL;
    int i;

    start_attached(&f, &r, "");
    for (i = 0; i < 4; i++) {
        ring_push(&r, "rec");
    }
    attach_now(&f);
    print_rec(f.qts, 0, "rec");
    uart_puts(f.qts, "** 2 printk messages dropped **\r\n");
    print_rec(f.qts, 3, "rec");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok dropped-notice ok");
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "records", "dropped"), ==, 2);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    fixture_stop(&f);
}

/*
 * An nbcon console took over mid-record (6.12 nbcon.c): the cut line ends
 * with the takeover's newline, the replay notice follows and the record is
 * printed again whole.  The cut copy is "replayed", the reprint ok: no
 * problem, nothing counted twice.
 */
static void test_replay_cut(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) cut = NULL;
    g_autoptr(QDict) sum = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "alpha");
    ring_push(&r, "beta, a longer line");
    ring_push(&r, "gamma");
    attach_now(&f);
    print_rec(f.qts, 0, "alpha");
    uart_puts(f.qts, "[    0.002000] beta, a lo\r\n");
    uart_puts(f.qts, "** replaying previous printk message **\r\n");
    print_rec(f.qts, 1, "beta, a longer line");
    print_rec(f.qts, 2, "gamma");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok replayed notice ok ok");
    cut = line_event(&f, 1);
    g_assert_cmpint(qdict_get_int(cut, "seq"), ==, 1);
    g_assert_cmpint(qdict_get_int(cut, "at"), ==, 25);
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "lines", "corrupt"), ==, 0);
    g_assert_cmpint(sub_int(sum, "lines", "duplicate"), ==, 0);
    g_assert_cmpint(sub_int(sum, "lines", "replayed"), ==, 1);
    g_assert_cmpint(sub_int(sum, "lines", "notice"), ==, 1);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    fixture_stop(&f);
}

/*
 * In a storm the record a takeover cut can be overwritten before its cut
 * copy is judged (rt-6.12, 4 vCPUs, a WARN storm): nothing to compare the
 * copy with, but the replay notice after it says what it was.  The
 * record is then gone and the kernel owns up to dropping it.
 */
static void test_replay_cut_gone(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) sum = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "alpha");
    ring_push(&r, "beta, a longer line");
    ring_push(&r, "gamma");
    attach_now(&f);
    print_rec(f.qts, 0, "alpha");
    qtest_writeq(f.qts, RING_INFOS + 1 * INFO_SIZE, 1 + 256);
    uart_puts(f.qts, "[    0.002000] beta, a lo\r\n");
    uart_puts(f.qts, "** replaying previous printk message **\r\n");
    uart_puts(f.qts, "** 1 printk messages dropped **\r\n");
    print_rec(f.qts, 2, "gamma");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok replayed notice dropped-notice ok");
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "lines", "unmatched"), ==, 0);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    g_assert_cmpint(sub_int(sum, "records", "dropped"), ==, 1);
    fixture_stop(&f);
}

/*
 * A line as the console prints it, stamped just after the oldest record
 * left, with the records before that overwritten: a storming CPU whose
 * clock ran ahead stamped its record, and the ring moved on while the
 * line was on the wire.  Overwritten, not unmatched.
 */
static void test_overwritten_near_tail(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) sum = NULL;
    int i;

    start_attached(&f, &r, "");
    for (i = 0; i < 6; i++) {
        ring_push(&r, "storm");
    }
    attach_now(&f);
    print_rec(f.qts, 0, "storm");
    qtest_writeq(f.qts, PRB_PA + 32, 3);        /* desc_ring.tail_id */
    uart_puts(f.qts, "[    0.004500] Modules linked in:\r\n");
    print_rec(f.qts, 3, "storm");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok overwritten ok");
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "lines", "unmatched"), ==, 0);
    fixture_stop(&f);
}

/*
 * A takeover in a storm can end the old owner's line before its time stamp
 * was whole ("[", "[    8.33"), or in the middle of a notice: no prefix to
 * judge it by, but the notice the new owner writes next says it was the
 * console's own line.  Before a replay notice it is replayed, before a
 * dropped notice (which counts the record it began) too, and a cut notice
 * is a notice.  The same start before anything else is user space's.
 */
static void test_takeover_fragments(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) sum = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "zero");
    ring_push(&r, "one");
    ring_push(&r, "two");
    ring_push(&r, "three");
    attach_now(&f);
    print_rec(f.qts, 0, "zero");
    uart_puts(f.qts, "[    0.00\r\n");
    uart_puts(f.qts, "** replaying previous printk message **\r\n");
    print_rec(f.qts, 1, "one");
    uart_puts(f.qts, "[  \r\n");
    uart_puts(f.qts, "** 1 printk messages dropped **\r\n");
    print_rec(f.qts, 3, "three");
    uart_puts(f.qts, "** 90 printk messag\r\n");
    uart_puts(f.qts, "** replaying previous printk message **\r\n");
    uart_puts(f.qts, "[    \r\n");
    uart_puts(f.qts, "a user line\r\n");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok replayed notice ok replayed dropped-notice ok "
                    "notice notice user user");
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "records", "dropped"), ==, 1);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    fixture_stop(&f);
}

/*
 * A takeover's new owner announces again the drops the old owner had
 * announced (it recounts from the console's seq): the second notice's
 * credit must not make a record the console later skips without a word
 * "dropped".  It is missing.
 */
static void test_dropped_announced_twice(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) sum = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "zero");
    ring_push(&r, "one");
    ring_push(&r, "two");
    ring_push(&r, "three");
    ring_push(&r, "four");
    attach_now(&f);
    print_rec(f.qts, 0, "zero");
    uart_puts(f.qts, "** 1 printk messages dropped **\r\n");
    print_rec(f.qts, 2, "two");
    uart_puts(f.qts, "** replaying previous printk message **\r\n");
    uart_puts(f.qts, "** 1 printk messages dropped **\r\n");
    print_rec(f.qts, 2, "two");
    print_rec(f.qts, 4, "four");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok dropped-notice ok notice dropped-notice "
                    "replayed ok");
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "records", "dropped"), ==, 1);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 1);
    fixture_stop(&f);
}

/*
 * The takeover came between the "\r" and the "\n" the driver sends for the
 * record's "\n" (seen on 6.12 in a WARN storm): the cut line ends in that
 * CR.  It is the kernel's cut copy, replayed, not a corrupt line.
 */
static void test_replay_cut_crlf(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) cut = NULL;
    g_autoptr(QDict) sum = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "alpha");
    ring_push(&r, "beta");
    attach_now(&f);
    print_rec(f.qts, 0, "alpha");
    uart_puts(f.qts, "[    0.002000] beta\r\r\n");
    uart_puts(f.qts, "** replaying previous printk message **\r\n");
    print_rec(f.qts, 1, "beta");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok replayed notice ok");
    cut = line_event(&f, 1);
    g_assert_cmpint(qdict_get_int(cut, "at"), ==, 19);
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "lines", "corrupt"), ==, 0);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    fixture_stop(&f);
}

/*
 * The guest stopped (a panic's reboot) while the console wrote a dropped
 * notice: the start of the console's own line, not user space's.  User
 * space's partial line stays user space's.
 */
static void test_notice_cut_at_stop(void)
{
    static const struct {
        const char *tail, *want;
    } cases[] = {
        { "** 2044 ", "notice" },
        { "** replaying prev", "notice" },
        { "** boot ok", "user" },
    };
    unsigned i;

    for (i = 0; i < G_N_ELEMENTS(cases); i++) {
        Fixture f = { 0 };
        Ring r;
        g_autofree char *v = NULL;
        g_autofree char *want = g_strdup_printf("ok %s", cases[i].want);
        g_autoptr(QDict) sum = NULL;

        start_attached(&f, &r, "");
        ring_push(&r, "alpha");
        attach_now(&f);
        print_rec(f.qts, 0, "alpha");
        uart_puts(f.qts, cases[i].tail);
        sum = quit_summary(&f);
        v = line_verdicts(&f);
        g_assert_cmpstr(v, ==, want);
        g_assert_cmpint(sub_int(sum, "lines", "user"), ==,
                        !strcmp(cases[i].want, "user"));
        fixture_stop(&f);
    }
}

/*
 * The takeover came after the whole record was out but before the console
 * moved on: the reprint after the notice is the redundant copy.  A cut
 * line that no notice follows stays corrupt, judged in its place.
 */
static void test_replay_whole(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) sum = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "alpha");
    ring_push(&r, "beta");
    ring_push(&r, "gamma, cut");
    ring_push(&r, "delta");
    attach_now(&f);
    print_rec(f.qts, 0, "alpha");
    uart_puts(f.qts, "** replaying previous printk message **\r\n");
    print_rec(f.qts, 0, "alpha");
    print_rec(f.qts, 1, "beta");
    uart_puts(f.qts, "[    0.003000] gamma\r\n");
    print_rec(f.qts, 3, "delta");
    /* not after a notice: a reprint is a duplicate */
    print_rec(f.qts, 3, "delta");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok notice replayed ok corrupt ok duplicate");
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "lines", "replayed"), ==, 1);
    g_assert_cmpint(sub_int(sum, "lines", "corrupt"), ==, 1);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    fixture_stop(&f);
}

/*
 * pace=line judges what reached the wire: bytes written to a full
 * transmitter are lost (overruns) and their line is corrupt, with the
 * first lost byte named.
 */
static void test_paced_overrun(void)
{
    static const char text[] = "a line written without waiting for THRE";
    g_autofree char *l = console_line(1000000, text);
    g_autofree char *rec = console_line(2000000, "next");
    g_autofree char *next = g_strconcat(rec, "\r\n", NULL);
    const char *p;
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) e = NULL;

    start_attached(&f, &r, ",pace=line");
    ring_push(&r, text);
    ring_push(&r, "next");
    attach_now(&f);
    qtest_outb(f.qts, COM1 + REG_FCR, FCR_ENABLE_RESET);
    uart_puts(f.qts, l);                    /* 16 in the FIFO, 1 shifting */
    qtest_clock_step(f.qts, 100 * 1000 * 1000);
    uart_puts(f.qts, "\r\n");
    qtest_clock_step(f.qts, 100 * 1000 * 1000);
    g_assert_cmpuint(rs_counter(f.qts, "tx-overruns"), ==, strlen(l) - 17);
    /* a line cut short is judged when the next one says it is no replay */
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "");
    for (p = next; *p; p++) {               /* waiting for THRE this time */
        while (!(qtest_inb(f.qts, COM1 + REG_LSR) & LSR_THRE)) {
            qtest_clock_step(f.qts, 100 * 1000);
        }
        qtest_outb(f.qts, COM1 + REG_THR, *p);
    }
    qtest_clock_step(f.qts, 100 * 1000 * 1000);
    g_free(v);
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "corrupt ok");
    e = line_event(&f, 0);
    g_assert_cmpint(qdict_get_int(e, "at"), ==, 17);
    g_assert_cmpint(qdict_get_int(e, "want"), ==, (uint8_t)l[17]);
    g_assert_cmpint(qdict_get_int(e, "got"), ==, -1);
    fixture_stop(&f);
}

/* A record of several lines prints each with the prefix: all ok. */
static void test_multiline(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "Call Trace:\n <TASK>\n dump_stack+0x10");
    ring_push(&r, "next");
    attach_now(&f);
    uart_puts(f.qts, "[    0.001000] Call Trace:\r\n"
                     "[    0.001000]  <TASK>\r\n"
                     "[    0.001000]  dump_stack+0x10\r\n");
    print_rec(f.qts, 1, "next");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok ok ok ok");
    fixture_stop(&f);
}

/* Lines printed before the ring is found are checked once it is. */
static void test_backlog(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v0 = NULL, *v1 = NULL, *st = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "early");
    ring_push(&r, "also early");
    print_rec(f.qts, 0, "early");
    print_rec(f.qts, 1, "also early");
    st = ring_state(f.qts);
    g_assert_cmpstr(st, ==, "none");
    v0 = line_verdicts(&f);
    g_assert_cmpstr(v0, ==, "");
    attach_now(&f);
    v1 = line_verdicts(&f);
    g_assert_cmpstr(v1, ==, "ok ok");
    fixture_stop(&f);
}

/* Without a ring at all, lines end up unchecked when the guest stops. */
static void test_no_ring(void)
{
    Fixture f = { 0 };
    g_autoptr(QDict) sum = NULL;

    fixture_start_opts(&f, EVENTS_FILE, "");
    uart_puts(f.qts, "[    0.001000] nothing to check against\r\n");
    sum = quit_summary(&f);
    g_assert_cmpint(sub_int(sum, "lines", "unchecked"), ==, 1);
    g_assert_cmpstr(qdict_get_str(sum, "ring"), ==, "none");
    fixture_stop(&f);
}

/*
 * Hostile rings, each found only after a first good line: the ring must
 * end "untrusted", the line "unchecked", QEMU still answering.
 */
enum {
    HOSTILE_SLOT_ID,        /* a descriptor whose id indexes another slot */
    HOSTILE_LPOS,           /* a text block far outside the data ring */
    HOSTILE_DATA_OUTSIDE_RAM,   /* the data array itself beyond RAM */
    HOSTILE_REWRITTEN,      /* descriptors overwritten between two lines */
    HOSTILE_HEAD_FAR,       /* a head id 2^40 records ahead of the tail */
};

static void test_hostile(const void *opaque)
{
    const int which = GPOINTER_TO_INT(opaque);
    Fixture f = { 0 };
    Ring r;
    g_autofree char *st = NULL, *v = NULL;
    g_autoptr(GPtrArray) rings = NULL;
    g_autofree uint8_t *junk = NULL;
    int i;

    start_attached(&f, &r, "");
    ring_push(&r, "good");
    ring_push(&r, "target");
    if (which == HOSTILE_DATA_OUTSIDE_RAM) {
        /* read only once a record's text is wanted */
        qtest_writeq(f.qts, PRB_PA + 56, START_KERNEL_MAP + 0x3f000000ull);
    }
    attach_now(&f);
    print_rec(f.qts, 0, "good");

    switch (which) {
    case HOSTILE_SLOT_ID:
        ring_write_desc(&r, 1, SV_FINALIZED | 5, 0, 16);
        break;
    case HOSTILE_LPOS:
        ring_write_desc(&r, 1, SV_FINALIZED | 1, 0x7ffffffffff0ull,
                        0x7ffffffffff8ull);
        break;
    case HOSTILE_REWRITTEN:
        junk = g_malloc(DESC_SIZE << 8);
        for (i = 0; i < DESC_SIZE << 8; i++) {
            junk[i] = 0xa5 ^ i;
        }
        qtest_memwrite(f.qts, RING_DESCS, junk, DESC_SIZE << 8);
        break;
    case HOSTILE_HEAD_FAR:
        qtest_writeq(f.qts, PRB_PA + 24, 1ull << 40);
        break;
    }
    /* A line the fast path cannot place: the ring gets searched. */
    uart_puts(f.qts, "[    0.002000] not the target\r\n");
    print_rec(f.qts, 1, "target");

    st = ring_state(f.qts);
    if (which == HOSTILE_HEAD_FAR) {
        /*
         * The head is a lie the reader cannot see past (it never trusts
         * it further than RS_NEXT_SCAN_MAX records): either untrusted or
         * still checking, but bounded and without a crash.
         */
        g_assert_true(!strcmp(st, "untrusted") || !strcmp(st, "attached"));
    } else {
        g_assert_cmpstr(st, ==, "untrusted");
        rings = events_of(f.events, "ring");
        g_assert_cmpstr(qdict_get_str(rings->pdata[rings->len - 1], "state"),
                        ==, "untrusted");
        g_assert_true(qdict_haskey(rings->pdata[rings->len - 1], "why"));
        v = line_verdicts(&f);
        g_assert_cmpstr(v, ==, which == HOSTILE_DATA_OUTSIDE_RAM ?
                        "unchecked" : "ok unchecked");
    }
    /* the UART still works and QMP still answers */
    uart_put(f.qts, 'k');
    if (which == HOSTILE_DATA_OUTSIDE_RAM) {
        g_assert_cmpuint(rs_counter(f.qts, "verdict-ok"), ==, 0);
    } else {
        g_assert_cmpuint(rs_counter(f.qts, "verdict-ok"), >=, 1);
    }
    fixture_stop(&f);
}

/*
 * A kexec without reset: the note changes and the old ring stops making
 * sense; the device looks again and checks the new kernel's lines.
 */
static void test_new_kernel(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(GPtrArray) rings = NULL;
    g_autofree char *text = vmcoreinfo_61(START_KERNEL_MAP + PRB_PTR_PA);
    g_autofree char *text2 = NULL;

    start_attached(&f, &r, "");
    ring_push(&r, "old kernel");
    attach_now(&f);
    print_rec(f.qts, 0, "old kernel");

    /* the new kernel: another OSRELEASE, its ring from scratch */
    text2 = g_strdup(text);
    memcpy(strstr(text2, "6.1.0-qtest"), "6.1.9-qtest", 11);
    qtest_memset(f.qts, RING_DESCS, 0, DESC_SIZE << 8);
    qtest_memset(f.qts, RING_INFOS, 0, INFO_SIZE << 8);
    r.n = 0;
    r.lpos = 0;
    put_note(f.qts, NOTE_PA, text2);
    ring_push(&r, "new kernel");
    ring_push(&r, "new kernel 2");
    /* noticed within a second, found again at the next probe */
    qtest_clock_step(f.qts, 1300 * 1000 * 1000);
    rings = events_of(f.events, "ring");
    g_assert_cmpstr(qdict_get_str(rings->pdata[rings->len - 2], "why"), ==,
                    "note changed");
    g_assert_cmpstr(qdict_get_str(rings->pdata[rings->len - 1], "osrelease"),
                    ==, "6.1.9-qtest");
    print_rec(f.qts, 0, "new kernel");
    print_rec(f.qts, 1, "new kernel 2");
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok ok ok");
    fixture_stop(&f);
}

/*
 * Migration: the checker's position and counters go with the machine,
 * and the destination judges the next line against the same ring.
 */
static void test_migrate(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *file = NULL, *events2 = NULL, *uri = NULL;
    g_autoptr(GPtrArray) lines = NULL;
    QTestState *dst;
    QDict *rsp;

    start_attached(&f, &r, "");
    ring_push(&r, "before");
    ring_push(&r, "after");
    attach_now(&f);
    print_rec(f.qts, 0, "before");
    uart_puts(f.qts, "[    0.002000] af");     /* half a line in flight */

    file = g_build_filename(f.dir, "state", NULL);
    events2 = g_build_filename(f.dir, "events2", NULL);
    uri = g_strdup_printf("exec:cat > %s", file);
    rsp = qtest_qmp(f.qts, "{ 'execute': 'migrate', 'arguments': "
                    "{ 'uri': %s } }", uri);
    g_assert(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    g_free(uri);
    qtest_qmp_eventwait(f.qts, "STOP");

    /*
     * Deferred, so that RESUME comes after this QMP client is there: a
     * quick incoming migration can otherwise end before it connects.
     */
    dst = qtest_initf("-nodefaults -machine pc -chardev null,id=con "
                      "-chardev file,id=ev,path=%s "
                      "-device ringside-serial,id=rs,chardev=con,events=ev "
                      "-incoming defer", events2);
    uri = g_strdup_printf("exec:cat %s", file);
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", uri);
    qtest_qmp_eventwait(dst, "RESUME");
    g_assert_cmpuint(rs_counter(dst, "verdict-ok"), ==, 1);
    uart_puts(dst, "ter\r\n");
    g_assert_cmpuint(rs_counter(dst, "verdict-ok"), ==, 2);
    lines = events_of(events2, "line");
    g_assert_cmpuint(lines->len, ==, 1);
    g_assert_cmpint(qdict_get_int(lines->pdata[0], "seq"), ==, 1);
    g_assert_cmpint(qdict_get_int(lines->pdata[0], "first"), ==, 23);
    qtest_quit(dst);
    unlink(file);
    unlink(events2);
    fixture_stop(&f);
}

/* What the budget left unjudged is counted from boot, across a migration. */
static void test_migrate_budget(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *file = NULL, *events2 = NULL, *uri = NULL;
    QTestState *dst;
    QDict *rsp;
    uint64_t before;
    int i;

    start_attached(&f, &r, ",read-budget=16");
    for (i = 0; i < 40; i++) {
        ring_push(&r, "a record");
    }
    attach_now(&f);
    uart_puts(f.qts, "[    0.001000] ");
    for (i = 0; i < 90; i++) {
        uart_puts(f.qts, "[    9.999999]");
    }
    uart_puts(f.qts, "\r\n");
    before = rs_counter(f.qts, "under-budget");
    g_assert_cmpuint(before, >=, 1);

    file = g_build_filename(f.dir, "state", NULL);
    events2 = g_build_filename(f.dir, "events2", NULL);
    uri = g_strdup_printf("exec:cat > %s", file);
    rsp = qtest_qmp(f.qts, "{ 'execute': 'migrate', 'arguments': "
                    "{ 'uri': %s } }", uri);
    g_assert(qdict_haskey(rsp, "return"));
    qobject_unref(rsp);
    g_free(uri);
    qtest_qmp_eventwait(f.qts, "STOP");

    dst = qtest_initf("-nodefaults -machine pc -chardev null,id=con "
                      "-chardev file,id=ev,path=%s "
                      "-device ringside-serial,id=rs,chardev=con,events=ev "
                      "-incoming defer", events2);
    uri = g_strdup_printf("exec:cat %s", file);
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", uri);
    qtest_qmp_eventwait(dst, "RESUME");
    g_assert_cmpuint(rs_counter(dst, "under-budget"), ==, before);
    qtest_quit(dst);
    unlink(file);
    unlink(events2);
    fixture_stop(&f);
}

/* ---- hostile guests: bounded work, reported, never blamed (issue 18) ---- */

#define HOSTILE_PA      0x1000000ull
#define HOSTILE_PAGES   2048
#define FAR_NOTE_PA     0x5000000ull

/* A page that passes the note header check and whose 4 KiB of text parse
 * to the end before failing (no OSRELEASE). */
static void put_hostile_pages(QTestState *qts, uint64_t pa, unsigned pages)
{
    g_autofree uint8_t *buf = g_malloc0((size_t)pages * 4096);
    GString *t = g_string_new("");
    unsigned i;

    for (i = 0; t->len < 4096 - 64; i++) {
        g_string_append_printf(t, "OFFSET(printk_ringbuffer.nokey_%06u)=%u\n",
                               i, i);
    }
    for (i = 0; i < pages; i++) {
        uint8_t *p = buf + (size_t)i * 4096;

        p[0] = 11;
        stl_le_p(p + 4, 4096 - 24);
        memcpy(p + 12, "VMCOREINFO", 11);
        memcpy(p + 24, t->str, MIN(t->len, 4096 - 24));
    }
    qtest_bufwrite(qts, pa, buf, (size_t)pages * 4096);
    g_string_free(t, true);
}

/*
 * Finding 4: 8 MiB of note-like pages before the real note.  Each tick
 * reads at most its budget and the scan resumes where it stopped: the
 * ticks run out of budget, say so, and the note is still found.
 */
static void test_hostile_scan(void)
{
    g_autofree char *text = vmcoreinfo_61(START_KERNEL_MAP + PRB_PTR_PA);
    g_autofree char *st = NULL;
    Fixture f = { 0 };
    int i;

    fixture_start_opts(&f, EVENTS_FILE, "");
    put_prb(f.qts, 8, 16);
    put_hostile_pages(f.qts, HOSTILE_PA, HOSTILE_PAGES);
    put_note(f.qts, FAR_NOTE_PA, text);
    qtest_clock_step(f.qts, 100 * 1000 * 1000);
    g_assert_cmpuint(rs_counter(f.qts, "scan-deferred"), >=, 1);
    g_assert_cmpuint(rs_counter(f.qts, "budget-out-tick"), >=, 1);
    g_assert_cmpuint(rs_counter(f.qts, "cost-max-tick-reads"), <=, 8192);
    for (i = 0; i < 60; i++) {
        qtest_clock_step(f.qts, 100 * 1000 * 1000);
    }
    st = ring_state(f.qts);
    g_assert_cmpstr(st, ==, "attached");
    fixture_stop(&f);
}

/*
 * Finding 5: a line whose judgement needs more reads than an access may
 * make is "unchecked" with "budget":1, the ring stays trusted and nothing
 * is unmatched.
 */
static void test_hostile_line_budget(void)
{
    g_autofree char *st = NULL;
    g_autoptr(QDict) e = NULL;
    Fixture f = { 0 };
    Ring r;
    int i;

    start_attached(&f, &r, ",read-budget=16");
    for (i = 0; i < 40; i++) {
        ring_push(&r, "a record");
    }
    attach_now(&f);
    uart_puts(f.qts, "[    0.001000] ");
    for (i = 0; i < 90; i++) {
        uart_puts(f.qts, "[    9.999999]");
    }
    uart_puts(f.qts, "\r\n");
    g_assert_cmpuint(rs_counter(f.qts, "under-budget"), >=, 1);
    g_assert_cmpuint(rs_counter(f.qts, "verdict-unmatched"), ==, 0);
    g_assert_cmpuint(rs_counter(f.qts, "budget-out-access"), >=, 1);
    st = ring_state(f.qts);
    g_assert_cmpstr(st, ==, "attached");
    e = line_event(&f, 0);
    g_assert_cmpstr(qdict_get_str(e, "verdict"), ==, "unchecked");
    g_assert_cmpint(qdict_get_int(e, "budget"), ==, 1);
    fixture_stop(&f);
}

/*
 * Records the console went past, unread for want of budget, still spend
 * the dropped notices' credit: the next lines, all stamped alike (a
 * vCPU whose clock stood still), are then found where the console is,
 * not blamed on records further on.
 */
static void test_budget_keeps_credits(void)
{
    Fixture f = { 0 };
    Ring r;
    char text[32];
    g_autofree char *v = NULL;
    g_autofree char *l = NULL;
    uint64_t i, seq;

    start_attached(&f, &r, ",read-budget=512");
    for (i = 0; i < 100; i++) {
        ring_push(&r, "filler");
    }
    for (i = 100; i < 140; i++) {
        snprintf(text, sizeof(text), "storm %03" PRIu64, i);
        ring_push_full(&r, 5000000000ull, 6, 1, text);
    }
    attach_now(&f);
    print_rec(f.qts, 0, "filler");
    uart_puts(f.qts, "** 109 printk messages dropped **\r\n");
    for (seq = 110; seq < 140; seq += 6) {
        snprintf(text, sizeof(text), "storm %03" PRIu64, seq);
        l = console_line(5000000000ull, text);
        uart_puts(f.qts, l);
        uart_puts(f.qts, "\r\n");
        g_clear_pointer(&l, g_free);
        if (seq + 6 < 140) {
            uart_puts(f.qts, "** 5 printk messages dropped **\r\n");
        }
    }
    v = line_verdicts(&f);
    g_assert_cmpstr(v, ==, "ok dropped-notice ok dropped-notice ok "
                    "dropped-notice ok dropped-notice ok dropped-notice ok");
    g_assert_cmpuint(rs_counter(f.qts, "budget-out-access"), >=, 1);
    fixture_stop(&f);
}

/*
 * Finding 5: the lines from before the ring are replayed a tick's budget
 * at a time, not in one callback, and all of them are judged in the end.
 */
static uint64_t judged(QTestState *qts)
{
    return rs_counter(qts, "verdict-ok") + rs_counter(qts, "under-budget");
}

static void test_hostile_replay(void)
{
    g_autofree char *text = vmcoreinfo_61(START_KERNEL_MAP + PRB_PTR_PA);
    Fixture f = { 0 };
    Ring r;
    int i;

    fixture_start_opts(&f, EVENTS_FILE, ",tick-read-budget=1024");
    put_prb(f.qts, 8, 16);
    memset(&r, 0, sizeof(r));
    r.qts = f.qts;
    r.count_bits = 8;
    r.size_bits = 16;
    for (i = 0; i < 200; i++) {
        g_autofree char *t = g_strdup_printf("early %d", i);

        ring_push(&r, t);
        print_rec(f.qts, i, t);
    }
    put_note(f.qts, NOTE_PA, text);
    for (i = 0; i < 100 && strcmp(ring_state(f.qts), "attached"); i++) {
        qtest_clock_step(f.qts, 100 * 1000 * 1000);
    }
    g_assert_cmpuint(judged(f.qts), <, 200);      /* not in one callback */
    for (i = 0; i < 100 && judged(f.qts) < 200; i++) {
        qtest_clock_step(f.qts, 100 * 1000 * 1000);
    }
    g_assert_cmpuint(judged(f.qts), ==, 200);
    g_assert_cmpuint(rs_counter(f.qts, "verdict-ok"), >, 150);
    g_assert_cmpuint(rs_counter(f.qts, "verdict-unmatched"), ==, 0);
    g_assert_cmpuint(rs_counter(f.qts, "cost-max-tick-reads"), <=, 1024);
    fixture_stop(&f);
}

/*
 * Finding 6: a note announced in device memory (the HPET's registers) is
 * never read: the device reads RAM only, not MMIO and not RAM devices
 * (this machine has no RAM-device region to point at: no VFIO device,
 * vhost-user or TPM in this build).
 */
static void test_hostile_device_memory(void)
{
    g_autofree char *st = NULL;
    Fixture f = { 0 };
    uint64_t note = 0xfed00000ull;

    fixture_start_opts(&f, EVENTS_FILE, "");
    qtest_outl(f.qts, 0x4f0 + 8, note >> 32);
    qtest_outl(f.qts, 0x4f0 + 8, (uint32_t)note);
    qtest_outl(f.qts, 0x4f0 + 12, 1 | 1 << 8);
    qtest_clock_step(f.qts, ATTACH_NS);
    st = ring_state(f.qts);
    g_assert_cmpstr(st, ==, "none");
    fixture_stop(&f);
}

/*
 * Finding 7: an events backend that polls writable and takes nothing
 * (/dev/full) is retried with back-off, not in a loop: a second of idling
 * makes a few writes, not thousands.
 */
static void test_hostile_events_full(void)
{
    QTestState *qts = qtest_init("-nodefaults -machine pc "
                                 "-chardev null,id=con "
                                 "-chardev file,id=ev,path=/dev/full "
                                 "-device ringside-serial,id=rs,chardev=con,"
                                 "events=ev,ring=off");
    uint64_t tries;
    int i;

    for (i = 0; i < 100; i++) {
        uart_put(qts, 'x');
    }
    g_usleep(1000 * 1000);
    tries = rs_counter(qts, "events-write-tries");
    g_assert_cmpuint(tries, <, 200);
    g_assert_cmpuint(rs_counter(qts, "events-write-fails"), >=, 1);
    qtest_quit(qts);
}

/*
 * Finding 9: a guest repeating an error logs it once per 10 s with
 * -d guest_errors, and counts every one.
 */
static void test_hostile_log_flood(void)
{
    g_autofree char *dir = g_dir_make_tmp("ringside-qtest-XXXXXX", NULL);
    g_autofree char *log = g_build_filename(dir, "log", NULL);
    g_autofree char *text = NULL;
    QTestState *qts;
    const char *p;
    int i, lines = 0;

    qts = qtest_initf("-nodefaults -machine pc -d guest_errors -D %s "
                      "-chardev null,id=con "
                      "-device ringside-serial,id=rs,chardev=con", log);
    for (i = 0; i < 1000; i++) {
        qtest_outl(qts, 0x4f0 + 12, 0x77);
    }
    g_assert_cmpuint(rs_counter(qts, "guest-errors"), ==, 1000);
    g_assert_cmpuint(rs_counter(qts, "guest-errors-logged"), ==, 1);
    qtest_quit(qts);
    text = read_file(log);
    for (p = text; (p = strstr(p, "unknown extension command")); p++) {
        lines++;
    }
    g_assert_cmpint(lines, ==, 1);
    unlink(log);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int which;
    } hostile[] = {
        { "slot-id", HOSTILE_SLOT_ID },
        { "lpos-outside", HOSTILE_LPOS },
        { "data-outside-ram", HOSTILE_DATA_OUTSIDE_RAM },
        { "rewritten", HOSTILE_REWRITTEN },
        { "head-far", HOSTILE_HEAD_FAR },
    };
    size_t i;

    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/ringside-verify/ok", test_ok);
    qtest_add_func("/ringside-verify/ok-line-stamps", test_ok_line_stamps);
    qtest_add_func("/ringside-verify/corrupt", test_corrupt);
    qtest_add_func("/ringside-verify/corrupt-lost-byte",
                   test_corrupt_lost_byte);
    qtest_add_func("/ringside-verify/torn", test_torn);
    qtest_add_func("/ringside-verify/torn-bytes", test_torn_bytes);
    qtest_add_func("/ringside-verify/duplicate", test_duplicate);
    qtest_add_func("/ringside-verify/reordered", test_reordered);
    qtest_add_func("/ringside-verify/unmatched", test_unmatched);
    qtest_add_func("/ringside-verify/user-stamped", test_user_stamped);
    qtest_add_func("/ringside-verify/user-cut-by-kernel",
                   test_user_cut_by_kernel);
    qtest_add_func("/ringside-verify/user", test_user);
    qtest_add_func("/ringside-verify/user-prompt", test_user_prompt);
    qtest_add_func("/ringside-verify/user-torn", test_user_torn);
    qtest_add_func("/ringside-verify/user-no-time", test_user_no_time);
    qtest_add_func("/ringside-verify/missing", test_missing);
    qtest_add_data_func("/ringside-verify/filtered-inferred", "",
                        test_filtered);
    qtest_add_data_func("/ringside-verify/filtered-loglevel7",
                        ",loglevel=7", test_filtered);
    qtest_add_data_func("/ringside-verify/missing-loglevel8",
                        ",loglevel=8", test_filtered);
    qtest_add_func("/ringside-verify/dropped", test_dropped);
    qtest_add_func("/ringside-verify/replay-cut", test_replay_cut);
    qtest_add_func("/ringside-verify/replay-cut-crlf", test_replay_cut_crlf);
    qtest_add_func("/ringside-verify/replay-cut-gone", test_replay_cut_gone);
    qtest_add_func("/ringside-verify/takeover-fragments",
                   test_takeover_fragments);
    qtest_add_func("/ringside-verify/dropped-announced-twice",
                   test_dropped_announced_twice);
    qtest_add_func("/ringside-verify/overwritten-near-tail",
                   test_overwritten_near_tail);
    qtest_add_func("/ringside-verify/replay-whole", test_replay_whole);
    qtest_add_func("/ringside-verify/notice-cut-at-stop",
                   test_notice_cut_at_stop);
    qtest_add_func("/ringside-verify/verbose-later", test_verbose_later);
    qtest_add_data_func("/ringside-verify/gone", NULL, test_gone);
    qtest_add_data_func("/ringside-verify/gone-notice", "", test_gone);
    qtest_add_func("/ringside-verify/multiline", test_multiline);
    qtest_add_func("/ringside-verify/paced-overrun", test_paced_overrun);
    qtest_add_func("/ringside-verify/backlog", test_backlog);
    qtest_add_func("/ringside-verify/no-ring", test_no_ring);
    for (i = 0; i < ARRAY_SIZE(hostile); i++) {
        g_autofree char *path = g_strdup_printf("/ringside-verify/hostile/%s",
                                                hostile[i].name);

        qtest_add_data_func(path, GINT_TO_POINTER(hostile[i].which),
                            test_hostile);
    }
    qtest_add_func("/ringside-verify/new-kernel", test_new_kernel);
    qtest_add_func("/ringside-verify/migrate", test_migrate);
    qtest_add_func("/ringside-verify/migrate-budget", test_migrate_budget);
    qtest_add_func("/ringside-verify/hostile/scan", test_hostile_scan);
    qtest_add_func("/ringside-verify/hostile/line-budget",
                   test_hostile_line_budget);
    qtest_add_func("/ringside-verify/budget-keeps-credits",
                   test_budget_keeps_credits);
    qtest_add_func("/ringside-verify/hostile/replay", test_hostile_replay);
    qtest_add_func("/ringside-verify/hostile/device-memory",
                   test_hostile_device_memory);
    qtest_add_func("/ringside-verify/hostile/events-full",
                   test_hostile_events_full);
    qtest_add_func("/ringside-verify/hostile/log-flood",
                   test_hostile_log_flood);
    return g_test_run();
}
