/*
 * qtest for ringside-serial's level 1 window: discovery through the
 * scratch register, the ring announced by the guest, and console records
 * bracketed with begin/end markers, judged against a synthetic printk ring
 * in guest memory.  qtest accesses come from no vCPU: the device files
 * them as cpu -1, one writer, which is enough for nesting; takeovers
 * between vCPUs are tested on real kernels (tests/boot).
 *
 * Copyright (c) 2026 The ringside authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ringside-qtest.h"

#define EXT         0x4f0
#define REG_SCR     7
#define EXT_ID      0x31585352u

/* Write the key to SCR and read the four answer bytes. */
static void knock(QTestState *qts, uint8_t out[4])
{
    int i;

    for (i = 0; i < 4; i++) {
        qtest_outb(qts, COM1 + REG_SCR, "ring"[i]);
    }
    for (i = 0; i < 4; i++) {
        out[i] = qtest_inb(qts, COM1 + REG_SCR);
    }
}

static void announce(QTestState *qts, uint64_t note)
{
    qtest_outl(qts, EXT + 8, note >> 32);
    qtest_outl(qts, EXT + 8, (uint32_t)note);
    qtest_outl(qts, EXT + 12, 1 | 1 << 8);
}

static void begin(QTestState *qts, uint64_t seq)
{
    qtest_outl(qts, EXT, (uint32_t)seq);
}

static void end(QTestState *qts, uint64_t seq)
{
    qtest_outl(qts, EXT + 4, (uint32_t)seq);
}

/* A record as the patched 8250 console writes it: begin, line, end. */
static void bracket(QTestState *qts, uint64_t seq, const char *text)
{
    begin(qts, seq);
    print_rec(qts, seq, text);
    end(qts, seq);
}

/* A machine whose guest announced a synthetic ring; it is attached. */
static void start_announced_opts(Fixture *f, Ring *r, const char *opts)
{
    g_autofree char *st = NULL;

    fixture_start_opts(f, EVENTS_FILE, opts);
    ring_init(r, f->qts, 8, 16);
    announce(f->qts, NOTE_PA);
    qtest_clock_step(f->qts, 1);
    st = ring_state(f->qts);
    g_assert_cmpstr(st, ==, "attached");
}

static void start_announced(Fixture *f, Ring *r)
{
    start_announced_opts(f, r, "");
}

/* "verdict:seq" of every event of a kind, space-separated. */
static char *verdicts_of(Fixture *f, const char *kind)
{
    g_autoptr(GPtrArray) ev = events_of(f->events, kind);
    GString *s = g_string_new("");
    unsigned i;

    for (i = 0; i < ev->len; i++) {
        g_string_append_printf(s, "%s%s:%" PRId64, i ? " " : "",
                               qdict_get_str(ev->pdata[i], "verdict"),
                               qdict_get_int(ev->pdata[i], "seq"));
    }
    return g_string_free(s, false);
}

/* A plain 16550 (ext=0) stores SCR; ringside-serial answers the key. */
static void test_discovery(void)
{
    Fixture f = { 0 };
    uint8_t a[4];

    fixture_start_opts(&f, EVENTS_NONE, ",ext=0");
    knock(f.qts, a);
    g_assert_cmpmem(a, 4, "gggg", 4);
    fixture_stop(&f);

    memset(&f, 0, sizeof(f));
    fixture_start_opts(&f, EVENTS_NONE, "");
    qtest_outb(f.qts, COM1 + REG_SCR, 0x5a);
    g_assert_cmphex(qtest_inb(f.qts, COM1 + REG_SCR), ==, 0x5a);
    knock(f.qts, a);
    g_assert_cmphex(a[0], ==, 'R');
    g_assert_cmphex(a[1], ==, 'S');
    g_assert_cmphex(a[2] | a[3] << 8, ==, EXT);
    /* the answer is given once: SCR holds the last byte written again */
    g_assert_cmphex(qtest_inb(f.qts, COM1 + REG_SCR), ==, 'g');
    /* a wrong key is just stored */
    qtest_outb(f.qts, COM1 + REG_SCR, 'r');
    qtest_outb(f.qts, COM1 + REG_SCR, 'x');
    g_assert_cmphex(qtest_inb(f.qts, COM1 + REG_SCR), ==, 'x');
    g_assert_cmphex(qtest_inl(f.qts, EXT), ==, EXT_ID);
    fixture_stop(&f);
}

/* Records printed in order: each bracket ok, every record delivered. */
static void test_ok(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autofree char *l1 = NULL;
    g_autofree char *l2 = NULL;
    g_autoptr(QDict) sum = NULL;
    g_autoptr(GPtrArray) hs = NULL;

    start_announced(&f, &r);
    hs = events_of(f.events, "handshake");
    g_assert_cmpuint(hs->len, ==, 1);
    g_assert_cmpint(qdict_get_int(hs->pdata[0], "note"), ==, NOTE_PA);
    ring_push(&r, "a record");
    ring_push(&r, "two\nlines");
    ring_push(&r, "the last one");
    bracket(f.qts, 0, "a record");
    /* every line of a record carries its prefix */
    l1 = console_line(2000000, "two");
    l2 = console_line(2000000, "lines");
    begin(f.qts, 1);
    uart_puts(f.qts, l1);
    uart_puts(f.qts, "\r\n");
    uart_puts(f.qts, l2);
    uart_puts(f.qts, "\r\n");
    end(f.qts, 1);
    bracket(f.qts, 2, "the last one");
    v = verdicts_of(&f, "bracket");
    g_assert_cmpstr(v, ==, "ok:0 ok:1 ok:2");
    g_assert_cmpuint(rs_counter(f.qts, "l1-bracket-ok"), ==, 3);
    g_assert_cmpuint(rs_counter(f.qts, "l1-unattributed"), ==, 0);
    uart_puts(f.qts, "user space\r\n");
    g_assert_cmpuint(rs_counter(f.qts, "l1-unattributed"), ==, 12);
    sum = quit_event(&f, "l1-summary");
    g_assert_cmpint(sub_int(sum, "records", "delivered"), ==, 3);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    g_assert_cmpint(sub_int(sum, "brackets", "ok"), ==, 3);
    fixture_stop(&f);
}

/* A writer interrupted on its CPU, the record reprinted by the nested one */
/*
 * Bytes outside any bracket are user space's: its lines are counted as
 * level 0 judges them, a prompt's line ending where a record begins.
 * Level 0 agrees on the same bytes.
 */
static void test_user_lines(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autoptr(QDict) sum = NULL;
    g_autoptr(GPtrArray) sums0 = NULL;
    QDict *sum0;

    start_announced(&f, &r);
    ring_push(&r, "a record");
    ring_push(&r, "another");
    ring_push(&r, "the last one");
    bracket(f.qts, 0, "a record");
    uart_puts(f.qts, "Debian GNU/Linux 12 guest ttyS0\r\n\r\n");
    uart_puts(f.qts, "guest login: ");
    bracket(f.qts, 1, "another");
    uart_puts(f.qts, "[  OK  ] Started foo.service.\r\n");
    bracket(f.qts, 2, "the last one");
    uart_puts(f.qts, "# ");
    g_assert_cmpuint(rs_counter(f.qts, "l1-user"), ==, 4);
    g_assert_cmpuint(rs_counter(f.qts, "verdict-user"), ==, 4);
    sum = quit_event(&f, "l1-summary");
    g_assert_cmpint(qdict_get_int(sum, "user"), ==, 5);
    g_assert_cmpint(sub_int(sum, "brackets", "ok"), ==, 3);
    sums0 = events_of(f.events, "summary");
    g_assert_cmpuint(sums0->len, ==, 1);
    sum0 = sums0->pdata[0];
    g_assert_cmpint(sub_int(sum0, "lines", "user"), ==, 5);
    g_assert_cmpint(sub_int(sum0, "lines", "ok"), ==, 3);
    fixture_stop(&f);
}

static void test_nested_takeover(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autofree char *rec = NULL;
    g_autoptr(QDict) sum = NULL;
    g_autoptr(GPtrArray) br = NULL;

    start_announced(&f, &r);
    ring_push(&r, "interrupted record");
    ring_push(&r, "Kernel panic - not syncing: from NMI");
    /* the console starts seq 0 and is interrupted after 5 bytes */
    begin(f.qts, 0);
    uart_puts(f.qts, "[    ");
    /* the NMI writer: line break, seq 0 again, then seq 1 */
    begin(f.qts, 0);
    uart_puts(f.qts, "\r\n");
    end(f.qts, 0);
    bracket(f.qts, 0, "interrupted record");
    bracket(f.qts, 1, "Kernel panic - not syncing: from NMI");
    /* the interrupted writer sees it was taken over and stops */
    end(f.qts, 0);
    v = verdicts_of(&f, "bracket");
    g_assert_cmpstr(v, ==, "ok:0 ok:1 cut:0");
    br = events_of(f.events, "bracket");
    g_assert_true(qdict_haskey(br->pdata[2], "nested"));
    g_assert_cmpint(qdict_get_int(br->pdata[2], "len"), ==, 5);
    g_assert_cmpuint(rs_counter(f.qts, "l1-bracket-cut"), ==, 1);
    sum = quit_event(&f, "l1-summary");
    g_assert_cmpint(sub_int(sum, "records", "delivered"), ==, 2);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    g_assert_cmpint(sub_int(sum, "records", "cut"), ==, 0);
    fixture_stop(&f);
}

/*
 * An nbcon console taken over after it printed a record whole, before it
 * moved on: the new owner writes the replay notice and the record again.
 * The kernel owned up to the copy, so it is no duplicate, at either level.
 */
static void test_replay_notice(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) sum = NULL;
    g_autoptr(GPtrArray) lines = NULL;

    start_announced(&f, &r);
    ring_push(&r, "printed twice");
    ring_push(&r, "after it");
    bracket(f.qts, 0, "printed twice");
    begin(f.qts, 0);
    uart_puts(f.qts, "** replaying previous printk message **\r\n");
    end(f.qts, 0);
    bracket(f.qts, 0, "printed twice");
    bracket(f.qts, 1, "after it");
    v = verdicts_of(&f, "bracket");
    g_assert_cmpstr(v, ==, "ok:0 dropped-notice:0 ok:0 ok:1");
    lines = events_of(f.events, "line");
    g_assert_cmpuint(lines->len, ==, 4);
    g_assert_cmpstr(qdict_get_str(lines->pdata[1], "verdict"), ==, "notice");
    g_assert_cmpstr(qdict_get_str(lines->pdata[2], "verdict"), ==,
                    "replayed");
    sum = quit_event(&f, "l1-summary");
    g_assert_cmpint(sub_int(sum, "records", "delivered"), ==, 2);
    g_assert_cmpint(sub_int(sum, "records", "duplicate"), ==, 0);
    g_assert_cmpint(sub_int(sum, "records", "dropped"), ==, 0);
    fixture_stop(&f);
}

/*
 * A record stopped between the "\r" and the "\n" the driver sends for its
 * "\n" ended in that CR: a prefix of what the console would send, so cut,
 * not corrupt (level 1 used to compare the CR with the record's LF).
 */
static void test_cut_at_crlf(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;

    start_announced(&f, &r);
    ring_push(&r, "stopped before its LF");
    ring_push(&r, "after it");
    begin(f.qts, 0);
    uart_puts(f.qts, "[    0.001000] stopped before its LF\r");
    end(f.qts, 0);
    bracket(f.qts, 1, "after it");
    v = verdicts_of(&f, "bracket");
    g_assert_cmpstr(v, ==, "cut:0 ok:1");
    g_assert_cmpuint(rs_counter(f.qts, "l1-bracket-corrupt"), ==, 0);
    fixture_stop(&f);
}

/*
 * A writer taken over mid-record, and another in the middle of a dropped
 * notice; the new owner finds both records overwritten and says so (its
 * count includes the cut one), then prints the next.  The cut record is
 * the kernel's dropped one, the cut notice no record's damaged copy.
 */
static void test_cut_then_dropped(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autofree char *rv = NULL;
    g_autoptr(QDict) sum = NULL;

    start_announced(&f, &r);
    ring_push(&r, "zero");
    ring_push(&r, "one, cut by a takeover");
    ring_push(&r, "two, its notice cut");
    ring_push(&r, "three");
    ring_push(&r, "four");
    bracket(f.qts, 0, "zero");
    begin(f.qts, 1);
    uart_puts(f.qts, "[    0.002000] one, c");
    end(f.qts, 1);
    begin(f.qts, 2);
    uart_puts(f.qts, "** 7 printk mes");
    end(f.qts, 2);
    qtest_writeq(f.qts, PRB_PA + 32, 4);            /* tail: 0-3 gone */
    begin(f.qts, 4);
    uart_puts(f.qts, "\r\n");                       /* ends the cut line */
    end(f.qts, 4);
    begin(f.qts, 4);
    uart_puts(f.qts, "** 3 printk messages dropped **\r\n");
    end(f.qts, 4);
    bracket(f.qts, 4, "four");
    v = verdicts_of(&f, "bracket");
    g_assert_cmpstr(v, ==, "ok:0 cut:1 dropped-notice:2 dropped-notice:4 ok:4");
    sum = quit_event(&f, "l1-summary");
    rv = verdicts_of(&f, "l1-record");
    g_assert_cmpstr(rv, ==, "dropped:1");
    g_assert_cmpint(sub_int(sum, "records", "dropped"), ==, 3);
    g_assert_cmpint(sub_int(sum, "records", "cut"), ==, 0);
    g_assert_cmpint(sub_int(sum, "records", "damaged"), ==, 0);
    g_assert_cmpint(sub_int(sum, "records", "delivered"), ==, 2);
    fixture_stop(&f);
}

/*
 * A panicking CPU goes past records other CPUs are still writing and counts
 * them in its dropped notice (printk_get_next_message() in 6.1 and 6.12):
 * such a record is the kernel's dropped one.  One skipped without that word
 * is missing, its level unknown, not read as level 0.
 */
static void test_unfinished_skipped(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *rv = NULL;
    g_autoptr(QDict) sum = NULL;
    g_autoptr(GPtrArray) ev = NULL;

    start_announced(&f, &r);
    ring_push(&r, "zero");
    ring_push(&r, "one, still being written");
    ring_push(&r, "two");
    ring_push(&r, "three, still being written");
    ring_push(&r, "four");
    ring_write_desc(&r, 1, 1, 0, 0);                /* 1: reserved */
    ring_write_desc(&r, 3, 3, 0, 0);                /* 3: reserved */
    bracket(f.qts, 0, "zero");
    begin(f.qts, 2);
    uart_puts(f.qts, "** 1 printk messages dropped **\r\n");
    end(f.qts, 2);
    bracket(f.qts, 2, "two");
    bracket(f.qts, 4, "four");
    sum = quit_event(&f, "l1-summary");
    rv = verdicts_of(&f, "l1-record");
    g_assert_cmpstr(rv, ==, "dropped:1 missing:3");
    ev = events_of(f.events, "l1-record");
    g_assert_cmpint(qdict_get_int(g_ptr_array_index(ev, 1), "level"), ==, -1);
    g_assert_cmpint(sub_int(sum, "records", "dropped"), ==, 1);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 1);
    g_assert_cmpint(sub_int(sum, "records", "delivered"), ==, 3);
    fixture_stop(&f);
}

/*
 * Records the console went past: exactly the skipped seqs, judged missing,
 * filtered (more verbose than anything printed) or cut (only a prefix ever
 * went out), and the ones never printed before the stop.
 */
static void test_skipped(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autofree char *rv = NULL;
    g_autoptr(QDict) sum = NULL;

    start_announced(&f, &r);
    ring_push(&r, "zero");                          /* 0: printed */
    ring_push(&r, "one, never printed");            /* 1: missing */
    ring_push_full(&r, 3000000, 7, 1, "debug");     /* 2: filtered */
    ring_push(&r, "three, cut short");              /* 3: cut */
    ring_push(&r, "four");                          /* 4: printed */
    ring_push(&r, "five, left in the ring");        /* 5: missing */
    bracket(f.qts, 0, "zero");
    begin(f.qts, 3);
    uart_puts(f.qts, "[    0.004000] three");
    end(f.qts, 3);
    bracket(f.qts, 4, "four");
    v = verdicts_of(&f, "bracket");
    g_assert_cmpstr(v, ==, "ok:0 cut:3 ok:4");
    sum = quit_event(&f, "l1-summary");
    rv = verdicts_of(&f, "l1-record");
    g_assert_cmpstr(rv, ==, "missing:1 cut:3 missing:5");
    g_assert_cmpint(sub_int(sum, "records", "delivered"), ==, 2);
    g_assert_cmpint(sub_int(sum, "records", "filtered"), ==, 1);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 2);
    g_assert_cmpint(sub_int(sum, "records", "cut"), ==, 1);
    fixture_stop(&f);
}

/*
 * Records level 1 passed without the budget to read them are counted
 * from boot: the count goes with the machine when it migrates.
 */
static void test_migrate_budget(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *file = NULL, *events2 = NULL, *uri = NULL;
    QTestState *dst;
    QDict *rsp;
    uint64_t before;
    int i;

    start_announced_opts(&f, &r, ",read-budget=64");
    for (i = 0; i < 200; i++) {
        ring_push(&r, "a record");
    }
    bracket(f.qts, 0, "a record");
    bracket(f.qts, 199, "a record");
    before = rs_counter(f.qts, "l1-under-budget");
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
    g_assert_cmpuint(rs_counter(dst, "l1-under-budget"), ==, before);
    qtest_quit(dst);
    unlink(file);
    unlink(events2);
    fixture_stop(&f);
}

/*
 * panic() makes the console verbose: a debug record it prints then does
 * not make the one it rightly skipped before missing; records that left
 * the ring before the next one printed, with no "dropped" notice, were
 * skipped while there.
 */
static void test_verbose_later(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *rv = NULL;
    g_autoptr(QDict) sum = NULL;
    int i;

    start_announced(&f, &r);
    ring_push(&r, "zero");                          /* 0: printed */
    ring_push_full(&r, 2000000, 7, 1, "debug");     /* 1: filtered then */
    for (i = 2; i < 6; i++) {
        ring_push_full(&r, 3000000, 7, 1, "gone");  /* 2-5: overwritten */
    }
    ring_push_full(&r, 7000000, 7, 1, "verbose");   /* 6: printed */
    bracket(f.qts, 0, "zero");
    qtest_writeq(f.qts, PRB_PA + 32, 6);            /* tail: 0-5 gone */
    bracket(f.qts, 6, "verbose");
    sum = quit_event(&f, "l1-summary");
    rv = verdicts_of(&f, "l1-record");
    g_assert_cmpstr(rv, ==, "");
    g_assert_cmpint(sub_int(sum, "records", "delivered"), ==, 2);
    g_assert_cmpint(sub_int(sum, "records", "filtered"), ==, 5);
    fixture_stop(&f);
}

/* A changed byte, and a bracket left open when the guest stops. */
static void test_corrupt_and_open(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    g_autoptr(QDict) sum = NULL;
    g_autoptr(GPtrArray) br = NULL;
    g_autofree char *line = NULL;

    start_announced(&f, &r);
    ring_push(&r, "abcdef");
    ring_push(&r, "the last words");
    line = console_line(1000000, "abcXef");
    begin(f.qts, 0);
    uart_puts(f.qts, line);
    uart_puts(f.qts, "\r\n");
    end(f.qts, 0);
    begin(f.qts, 1);
    uart_puts(f.qts, "[    0.002000] the la");
    sum = quit_event(&f, "l1-summary");
    v = verdicts_of(&f, "bracket");
    g_assert_cmpstr(v, ==, "corrupt:0 cut:1");
    br = events_of(f.events, "bracket");
    g_assert_cmpint(qdict_get_int(br->pdata[0], "at"), ==, 18);
    g_assert_cmpint(qdict_get_int(br->pdata[0], "want"), ==, 'd');
    g_assert_cmpint(qdict_get_int(br->pdata[0], "got"), ==, 'X');
    g_assert_true(qdict_haskey(br->pdata[1], "open"));
    g_assert_cmpint(sub_int(sum, "records", "damaged"), ==, 1);
    g_assert_cmpint(sub_int(sum, "records", "cut"), ==, 1);
    g_assert_cmpint(sub_int(sum, "records", "delivered"), ==, 0);
    fixture_stop(&f);
}

/*
 * Hostile markers: nesting beyond the bound, a seq that is no record, a
 * bracket longer than any console record, byte-wide window accesses, an
 * unknown command, a note announced in MMIO.  The UART keeps working.
 */
static void test_hostile(void)
{
    Fixture f = { 0 };
    Ring r;
    g_autofree char *v = NULL;
    int i;

    start_announced(&f, &r);
    ring_push(&r, "only record");
    for (i = 0; i < 8; i++) {
        begin(f.qts, 0);
    }
    for (i = 0; i < 8; i++) {
        end(f.qts, 0);
    }
    bracket(f.qts, 0x80000000u, "not a record");
    begin(f.qts, 0);
    for (i = 0; i < 3000; i++) {
        uart_put(f.qts, 'x');
    }
    end(f.qts, 0);
    qtest_outb(f.qts, EXT, 1);
    qtest_outw(f.qts, EXT + 4, 1);
    qtest_outl(f.qts, EXT + 12, 0x77);
    announce(f.qts, 0xfee00000ull);     /* the local APIC's page */
    qtest_clock_step(f.qts, 300 * 1000 * 1000);
    bracket(f.qts, 0, "only record");
    v = verdicts_of(&f, "bracket");
    /* 4 nested empty brackets ignored; the rest judged */
    g_assert_cmpstr(v, ==, "bogus:2147483648 corrupt:0 ok:0");
    uart_put(f.qts, 'z');
    g_assert_cmpuint(rs_counter(f.qts, "tx-bytes"), >, 3000);
    fixture_stop(&f);
}

/*
 * The ring lost and found again (a reset of the search): records printed
 * meanwhile are unchecked, and the ones they skipped are not blamed.
 */
/* The mailbox: four bytes a read, zeros past the end, rewound by command. */
static void test_mailbox(void)
{
    Fixture f = { 0 };
    int i;

    fixture_start_opts(&f, EVENTS_NONE, "");
    g_assert_cmphex(qtest_inl(f.qts, EXT + 4), ==, 0);
    g_assert_cmphex(qtest_inl(f.qts, EXT + 4), ==, 0);
    g_assert_cmpuint(rs_counter(f.qts, "mailbox-waits"), ==, 2);
    fixture_stop(&f);

    memset(&f, 0, sizeof(f));
    fixture_start_opts(&f, EVENTS_NONE, ",mailbox=ringside.x=1");
    for (i = 0; i < 2; i++) {
        g_assert_cmphex(qtest_inl(f.qts, EXT + 4), ==, 0x676e6972); /* ring */
        g_assert_cmphex(qtest_inl(f.qts, EXT + 4), ==, 0x65646973); /* side */
        g_assert_cmphex(qtest_inl(f.qts, EXT + 4), ==, 0x313d782e); /* .x=1 */
        g_assert_cmphex(qtest_inl(f.qts, EXT + 4), ==, 0);
        qtest_outl(f.qts, EXT + 12, 2);
    }
    g_assert_cmpuint(rs_counter(f.qts, "mailbox-waits"), ==, 0);
    /* a reset rewinds it too */
    qtest_inl(f.qts, EXT + 4);
    qtest_qmp_assert_success(f.qts, "{ 'execute': 'system_reset' }");
    g_assert_cmphex(qtest_inl(f.qts, EXT + 4), ==, 0x676e6972);
    fixture_stop(&f);
}

static void test_unchecked_gap(void)
{
    g_autofree char *text = vmcoreinfo_61(START_KERNEL_MAP + PRB_PTR_PA);
    Fixture f = { 0 };
    Ring r;
    g_autofree char *st = NULL;
    g_autofree char *v = NULL;
    g_autoptr(QDict) sum = NULL;
    g_autoptr(GPtrArray) rings = NULL;

    start_announced(&f, &r);
    ring_push(&r, "zero");
    ring_push(&r, "one");
    ring_push(&r, "two");
    ring_push(&r, "three");
    bracket(f.qts, 0, "zero");
    /* a note announced elsewhere: no ring until it is there */
    qtest_memset(f.qts, NOTE_PA, 0, 4096);
    announce(f.qts, NOTE_PA + 0x1000);
    qtest_clock_step(f.qts, 1);
    st = ring_state(f.qts);
    g_assert_cmpstr(st, ==, "none");
    rings = events_of(f.events, "ring");
    g_assert_cmpstr(qdict_get_str(rings->pdata[rings->len - 1], "why"), ==,
                    "announce");
    bracket(f.qts, 2, "two");
    put_note(f.qts, NOTE_PA + 0x1000, text);
    announce(f.qts, NOTE_PA + 0x1000);
    qtest_clock_step(f.qts, 1);
    bracket(f.qts, 3, "three");
    v = verdicts_of(&f, "bracket");
    g_assert_cmpstr(v, ==, "ok:0 unchecked:2 ok:3");
    sum = quit_event(&f, "l1-summary");
    g_assert_cmpint(sub_int(sum, "records", "delivered"), ==, 2);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    fixture_stop(&f);
}

/*
 * The early announcement: a kernel announces its ring when its console
 * registers, before it has written its full VMCOREINFO.
 */
#define EARLY_PA    0x00203100ull   /* not page-aligned: no scan finds it */
#define EVIL_PTR_PA 0x00380000ull   /* a prb pointer to a hostile header */
#define EVIL_PRB_PA 0x00380100ull

/* The minimal note: only the keys the device needs to read the ring. */
static char *early_note(void)
{
    return vmcoreinfo_61(START_KERNEL_MAP + PRB_PTR_PA);
}

/* The full VMCOREINFO of the same kernel: more keys, the same ring. */
static char *full_note(void)
{
    g_autofree char *base = early_note();

    return g_strdup_printf("%sBUILD-ID=0123456789abcdef0123456789abcdef01234567"
                           "\nSYMBOL(_stext)=ffffffff81000000\n"
                           "SYMBOL(printk_rb_static)=%llx\n"
                           "NUMBER(pgtable_l5_enabled)=0\n"
                           "KERNELOFFSET=0\nNUMBER(KERNEL_IMAGE_SIZE)="
                           "1073741824\nNUMBER(sme_mask)=0\n", base,
                           START_KERNEL_MAP + PRB_PA);
}

/* The "ring" events' states, as "state[:why]" separated by spaces. */
static char *ring_states(Fixture *f)
{
    g_autoptr(GPtrArray) ev = ring_events(f);
    GString *s = g_string_new("");
    unsigned i;

    for (i = 0; i < ev->len; i++) {
        QDict *d = ev->pdata[i];

        g_string_append_printf(s, "%s%s", i ? " " : "",
                               qdict_get_str(d, "state"));
        if (qdict_haskey(d, "why")) {
            g_string_append_printf(s, ":%s", qdict_get_str(d, "why"));
        }
        if (qdict_haskey(d, "kept")) {
            g_string_append(s, ":kept");
        }
    }
    return g_string_free(s, false);
}

/*
 * Announced at the console's set-up: the very next bracket is checked,
 * with no virtual time passing.  The full VMCOREINFO, announced later in
 * the middle of a record, describes the same ring: the device adopts the
 * note and keeps its state, so nothing is judged twice or counted twice.
 */
static void test_early_announce(void)
{
    g_autofree char *early = early_note();
    g_autofree char *full = full_note();
    g_autofree char *line = NULL;
    g_autofree char *v = NULL;
    g_autofree char *rs = NULL;
    g_autofree char *st = NULL;
    g_autoptr(QDict) sum = NULL;
    g_autoptr(GPtrArray) rings = NULL;
    g_autoptr(GPtrArray) lines = NULL;
    Fixture f = { 0 };
    Ring r = { 0 };
    unsigned i;

    fixture_start_opts(&f, EVENTS_FILE, "");
    r.qts = f.qts;
    r.count_bits = 8;
    r.size_bits = 16;
    put_prb(f.qts, 8, 16);
    put_note(f.qts, EARLY_PA, early);
    ring_push(&r, "Linux version 6.1.0-qtest");
    ring_push(&r, "Command line: console=ttyS0");
    ring_push(&r, "printk: console [ttyS0] enabled");
    ring_push(&r, "the last one");

    announce(f.qts, EARLY_PA);
    st = ring_state(f.qts);
    g_assert_cmpstr(st, ==, "attached");
    bracket(f.qts, 0, "Linux version 6.1.0-qtest");
    /* the full note is announced while record 1 is on the wire */
    line = console_line(2000000, "Command line: console=ttyS0");
    begin(f.qts, 1);
    uart_puts(f.qts, "[    0.0020");
    put_note(f.qts, NOTE_PA, full);
    announce(f.qts, NOTE_PA);
    uart_puts(f.qts, line + strlen("[    0.0020"));
    uart_puts(f.qts, "\r\n");
    end(f.qts, 1);
    /* a second announce of the same note changes nothing */
    announce(f.qts, NOTE_PA);
    bracket(f.qts, 2, "printk: console [ttyS0] enabled");
    /* the once-a-second check reads the adopted note: still unchanged */
    qtest_clock_step(f.qts, 2500 * 1000 * 1000ll);
    bracket(f.qts, 3, "the last one");

    v = verdicts_of(&f, "bracket");
    g_assert_cmpstr(v, ==, "ok:0 ok:1 ok:2 ok:3");
    rs = ring_states(&f);
    g_assert_cmpstr(rs, ==, "none:reset attached attached:kept");
    rings = ring_events(&f);
    g_assert_cmpstr(qdict_get_str(rings->pdata[1], "via"), ==, "announce");
    g_assert_cmpint(qdict_get_int(rings->pdata[1], "note"), ==, EARLY_PA);
    g_assert_cmpint(qdict_get_int(rings->pdata[2], "note"), ==, NOTE_PA);
    g_assert_cmpuint(rs_counter(f.qts, "l1-bracket-ok"), ==, 4);
    g_assert_cmpuint(rs_counter(f.qts, "l1-bracket-unchecked"), ==, 0);
    g_assert_cmpuint(rs_counter(f.qts, "verdict-ok"), ==, 4);
    g_assert_cmpuint(rs_counter(f.qts, "verdict-unchecked"), ==, 0);
    sum = quit_event(&f, "l1-summary");
    g_assert_cmpint(sub_int(sum, "records", "delivered"), ==, 4);
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    g_assert_cmpint(sub_int(sum, "records", "duplicate"), ==, 0);
    g_assert_cmpint(sub_int(sum, "brackets", "ok"), ==, 4);
    lines = events_of(f.events, "line");
    g_assert_cmpuint(lines->len, ==, 4);
    for (i = 0; i < lines->len; i++) {
        g_assert_cmpstr(qdict_get_str(lines->pdata[i], "verdict"), ==, "ok");
        g_assert_cmpint(qdict_get_int(lines->pdata[i], "seq"), ==, i);
    }
    fixture_stop(&f);
}

/* text with its line key replaced by repl */
static char *note_with(const char *text, const char *key, const char *repl)
{
    g_auto(GStrv) parts = g_strsplit(text, key, 2);

    g_assert_nonnull(parts[1]);
    return g_strjoinv(repl, parts);
}

/* A hostile ring header for the note below: 2^63 descriptors. */
static void put_evil_prb(QTestState *qts)
{
    uint8_t prb[88] = { 0 };

    qtest_writeq(qts, EVIL_PTR_PA, START_KERNEL_MAP + EVIL_PRB_PA);
    prb[0] = 63;
    stq_le_p(prb + 8, START_KERNEL_MAP + RING_DESCS);
    stq_le_p(prb + 16, START_KERNEL_MAP + RING_INFOS);
    prb[48] = 64;
    stq_le_p(prb + 56, START_KERNEL_MAP + RING_DATA);
    qtest_memwrite(qts, EVIL_PRB_PA, prb, sizeof(prb));
}

/* Announce a note; the ring state is the one expected at once. */
static void announce_then(Fixture *f, uint64_t note, const char *state)
{
    g_autofree char *st = NULL;

    announce(f->qts, note);
    st = ring_state(f->qts);
    g_assert_cmpstr(st, ==, state);
}

/*
 * Early announcements with hostile values: a note beyond RAM or wrapping
 * past 2^64, in MMIO, with a text longer than a page, with bytes that are
 * no text, with a key out of range, a phys_base that puts the kernel
 * outside RAM, and a ring of 2^63 descriptors.  None attaches, the ones
 * that do not describe a ring make it untrusted and are not read again,
 * the UART keeps working, and a good note announced next attaches at once.
 * An untrusted announcement does not keep the device from finding the
 * ring its own way either.
 */
static void test_early_announce_hostile(void)
{
    g_autofree char *good = early_note();
    g_autofree char *big = NULL;
    g_autofree char *range = NULL;
    g_autofree char *outside = NULL;
    g_autofree char *evil = vmcoreinfo_61(START_KERNEL_MAP + EVIL_PTR_PA);
    g_autofree char *v = NULL;
    g_autofree char *st = NULL;
    g_autoptr(GPtrArray) rings = NULL;
    unsigned i;
    uint8_t hdr[24] = { 11, 0, 0, 0, 0xff, 0xff, 0, 0 };
    Fixture f = { 0 };
    Ring r = { 0 };
    const uint64_t at = 0x00240000ull;

    fixture_start_opts(&f, EVENTS_FILE, "");
    r.qts = f.qts;
    r.count_bits = 8;
    r.size_bits = 16;
    put_prb(f.qts, 8, 16);
    put_evil_prb(f.qts);
    ring_push(&r, "zero");
    ring_push(&r, "one");
    ring_push(&r, "two");

    /* nothing readable there: no ring, nothing logged as untrusted */
    announce_then(&f, 0xfffffffffffffff8ull, "none");
    announce_then(&f, 0x100000000ull, "none");      /* beyond 128 MiB RAM */
    announce_then(&f, 0xfee00000ull, "none");       /* the local APIC */
    memcpy(hdr + 12, "VMCOREINFO", 11);              /* descsz 65535 */
    qtest_memwrite(f.qts, at, hdr, sizeof(hdr));
    announce_then(&f, at, "none");
    put_note(f.qts, at + 0x1000, "OSRELEASE=6.1\x01\nPAGESIZE=4096\n");
    announce_then(&f, at + 0x1000, "none");
    /* notes that are text but describe no ring */
    range = note_with(good, "OFFSET(prb_desc.state_var)=0\n",
                      "OFFSET(prb_desc.state_var)=100\n");
    put_note(f.qts, at + 0x2000, range);
    announce_then(&f, at + 0x2000, "untrusted");
    outside = note_with(good, "NUMBER(phys_base)=0\n",
                        "NUMBER(phys_base)=-1073741824\n");
    put_note(f.qts, at + 0x4000, outside);
    announce_then(&f, at + 0x4000, "untrusted");
    put_note(f.qts, at + 0x3000, evil);
    announce_then(&f, at + 0x3000, "untrusted");
    /* the same untrusted note announced again is not read again */
    announce_then(&f, at + 0x3000, "untrusted");
    bracket(f.qts, 0, "zero");

    /* a good note next: attached before the next record */
    put_note(f.qts, EARLY_PA, good);
    announce_then(&f, EARLY_PA, "attached");
    bracket(f.qts, 1, "one");
    bracket(f.qts, 2, "two");
    v = verdicts_of(&f, "bracket");
    g_assert_cmpstr(v, ==, "unchecked:0 ok:1 ok:2");
    rings = ring_events(&f);
    g_assert_cmpuint(rings->len, ==, 5);
    for (i = 1; i < 4; i++) {
        static const char *const why[] = {
            "OFFSET(prb_desc.state_var)", "prb pointer", "count_bits"
        };

        g_assert_cmpstr(qdict_get_str(rings->pdata[i], "state"), ==,
                        "untrusted");
        g_assert_cmpstr(qdict_get_str(rings->pdata[i], "via"), ==,
                        "announce");
        g_assert_nonnull(strstr(qdict_get_str(rings->pdata[i], "why"),
                                why[i - 1]));
    }
    g_assert_cmpstr(qdict_get_str(rings->pdata[4], "state"), ==, "attached");
    g_assert_cmpint(qdict_get_int(rings->pdata[4], "note"), ==, EARLY_PA);
    g_assert_cmpuint(rs_counter(f.qts, "tx-bytes"), >, 40);
    fixture_stop(&f);

    /* untrusted, and no better note announced: found by the scan */
    memset(&f, 0, sizeof(f));
    fixture_start_opts(&f, EVENTS_FILE, "");
    ring_init(&r, f.qts, 8, 16);
    put_evil_prb(f.qts);
    put_note(f.qts, at, evil);
    announce_then(&f, at, "untrusted");
    qtest_clock_step(f.qts, 300 * 1000 * 1000);
    st = ring_state(f.qts);
    g_assert_cmpstr(st, ==, "attached");
    g_ptr_array_unref(rings);
    rings = ring_events(&f);
    g_assert_cmpstr(qdict_get_str(rings->pdata[rings->len - 1], "via"), ==,
                    "scan");
    fixture_stop(&f);
}

/* ---- level 1 follows level 0's trust ---- */

/*
 * Eight records, "r0".."r7"; *b1 and *e1 are record 1's text block, for
 * putting back the descriptor break_desc1() breaks.
 */
static void push_eight(Ring *r, uint64_t *b1, uint64_t *e1)
{
    char text[8];
    int i;

    for (i = 0; i < 8; i++) {
        if (i == 1) {
            *b1 = r->lpos;
        }
        g_snprintf(text, sizeof(text), "r%d", i);
        ring_push(r, text);
        if (i == 1) {
            *e1 = r->lpos;
        }
    }
}

/* Record 1's descriptor claims another slot's id: a ring breaking a rule */
static void break_desc1(Ring *r)
{
    ring_write_desc(r, 1, SV_FINALIZED | 5, 0, 16);
}

static void bracket_rec(QTestState *qts, uint64_t seq)
{
    g_autofree char *text = g_strdup_printf("r%" PRIu64, seq);

    bracket(qts, seq, text);
}

/* Every unchecked bracket says why, and says it is the ring's distrust. */
static void assert_unchecked_untrusted(Fixture *f, unsigned expect)
{
    g_autoptr(GPtrArray) br = events_of(f->events, "bracket");
    unsigned i, n = 0;

    for (i = 0; i < br->len; i++) {
        QDict *b = br->pdata[i];

        if (strcmp(qdict_get_str(b, "verdict"), "unchecked")) {
            continue;
        }
        g_assert_true(qdict_haskey(b, "why"));
        g_assert_cmpstr(qdict_get_str(b, "why"), ==, "untrusted");
        n++;
    }
    g_assert_cmpuint(n, ==, expect);
}

/*
 * Level 1 follows level 0's trust.  The console wrote two lines before
 * the guest announced its ring; level 0 judges them when the ring comes,
 * before the announcing write returns, and the second leads it to a
 * record that breaks the ring's rules: the ring is untrusted.  Level 1
 * must not judge against it either: the records bracketed meanwhile are
 * "unchecked" (why: "untrusted") and none that the console went past is
 * missing.  (It used to be given the ring anyway: ok brackets, and every
 * record between and after them missing, blamed on the kernel.)  A note
 * at another address describing a sane ring is trusted again; level 1
 * judges from there on, and the distrusted stretch is not blamed then.
 */
static void test_untrusted_at_attach(void)
{
    g_autofree char *text = vmcoreinfo_61(START_KERNEL_MAP + PRB_PTR_PA);
    g_autofree char *st = NULL;
    g_autofree char *st2 = NULL;
    g_autofree char *v = NULL;
    g_autofree char *rv = NULL;
    g_autoptr(QDict) sum = NULL;
    Fixture f = { 0 };
    Ring r;
    uint64_t b1 = 0, e1 = 0;

    fixture_start_opts(&f, EVENTS_FILE, "");
    ring_init(&r, f.qts, 8, 16);
    push_eight(&r, &b1, &e1);
    break_desc1(&r);
    /* before the ring is known: kept for level 0, no brackets yet */
    print_rec(f.qts, 0, "r0");
    uart_puts(f.qts, "[    0.002000] not record 1\r\n");
    announce(f.qts, NOTE_PA);
    st = ring_state(f.qts);
    g_assert_cmpstr(st, ==, "untrusted");

    bracket_rec(f.qts, 2);
    bracket_rec(f.qts, 5);
    v = verdicts_of(&f, "bracket");
    g_assert_cmpstr(v, ==, "unchecked:2 unchecked:5");
    assert_unchecked_untrusted(&f, 2);
    g_assert_cmpuint(rs_counter(f.qts, "l1-bracket-ok"), ==, 0);
    g_assert_cmpuint(rs_counter(f.qts, "l1-untrusted"), ==, 2);
    g_assert_cmpuint(rs_counter(f.qts, "l1-record-missing"), ==, 0);

    /* a sane ring announced anew: trusted, judged from its next record */
    ring_write_desc(&r, 1, SV_FINALIZED | 1, b1, e1);
    put_note(f.qts, NOTE_PA + 0x1000, text);
    announce(f.qts, NOTE_PA + 0x1000);
    st2 = ring_state(f.qts);
    g_assert_cmpstr(st2, ==, "attached");
    bracket_rec(f.qts, 7);
    g_free(v);
    v = verdicts_of(&f, "bracket");
    g_assert_cmpstr(v, ==, "unchecked:2 unchecked:5 ok:7");

    sum = quit_event(&f, "l1-summary");
    rv = verdicts_of(&f, "l1-record");
    g_assert_cmpstr(rv, ==, "");
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    g_assert_cmpint(sub_int(sum, "records", "delivered"), ==, 1);
    g_assert_cmpint(sub_int(sum, "brackets", "ok"), ==, 1);
    g_assert_cmpint(sub_int(sum, "brackets", "unchecked"), ==, 2);
    g_assert_cmpint(qdict_get_int(sum, "untrusted"), ==, 2);
    fixture_stop(&f);
}

/*
 * The ring distrusted while level 1 judges: level 0 finds record 1
 * breaking the ring's rules as its line ends, inside the record's
 * bracket.  That bracket and the ones after it are unchecked
 * ("untrusted"), and the records they skipped, or the console never
 * reached, are not missing.
 */
static void test_untrusted_live(void)
{
    g_autofree char *v = NULL;
    g_autofree char *rv = NULL;
    g_autoptr(QDict) sum = NULL;
    g_autofree char *st = NULL;
    Fixture f = { 0 };
    Ring r;
    uint64_t b1 = 0, e1 = 0;

    start_announced(&f, &r);
    push_eight(&r, &b1, &e1);
    bracket_rec(f.qts, 0);
    break_desc1(&r);
    bracket_rec(f.qts, 1);
    st = ring_state(f.qts);
    g_assert_cmpstr(st, ==, "untrusted");
    bracket_rec(f.qts, 3);
    /* a dropped notice says nothing level 1 would credit now */
    begin(f.qts, 5);
    uart_puts(f.qts, "** 1 printk messages dropped **\r\n");
    end(f.qts, 5);
    bracket_rec(f.qts, 5);
    v = verdicts_of(&f, "bracket");
    g_assert_cmpstr(v, ==,
                    "ok:0 unchecked:1 unchecked:3 unchecked:5 unchecked:5");
    assert_unchecked_untrusted(&f, 4);
    sum = quit_event(&f, "l1-summary");
    rv = verdicts_of(&f, "l1-record");
    g_assert_cmpstr(rv, ==, "");
    g_assert_cmpint(sub_int(sum, "records", "missing"), ==, 0);
    g_assert_cmpint(sub_int(sum, "records", "delivered"), ==, 1);
    g_assert_cmpint(sub_int(sum, "brackets", "unchecked"), ==, 4);
    g_assert_cmpint(qdict_get_int(sum, "untrusted"), ==, 4);
    fixture_stop(&f);
}

/* A qcow2 disk in dir, for savevm and loadvm. */
static void snapshot_disk(QTestState *qts, const char *dir)
{
    g_autofree char *img = g_build_filename(dir, "disk.qcow2", NULL);

    g_assert_true(g_file_set_contents(img, "", 0, NULL));
    qtest_qmp_assert_success(qts, "{ 'execute': 'blockdev-add', "
                             "'arguments': { 'driver': 'file', "
                             "'node-name': 'img', 'filename': %s } }", img);
    qtest_qmp_assert_success(qts, "{ 'execute': 'blockdev-create', "
                             "'arguments': { 'job-id': 'mk', 'options': "
                             "{ 'driver': 'qcow2', 'file': 'img', "
                             "'size': 1048576 } } }");
    for (;;) {
        QDict *ev = qtest_qmp_eventwait_ref(qts, "JOB_STATUS_CHANGE");
        bool done = !strcmp(qdict_get_str(qdict_get_qdict(ev, "data"),
                                          "status"), "concluded");

        qobject_unref(ev);
        if (done) {
            break;
        }
    }
    qtest_qmp_assert_success(qts, "{ 'execute': 'job-dismiss', "
                             "'arguments': { 'id': 'mk' } }");
    qtest_qmp_assert_success(qts, "{ 'execute': 'blockdev-add', "
                             "'arguments': { 'driver': 'qcow2', "
                             "'node-name': 'disk', 'file': 'img' } }");
    unlink(img);            /* the open file lives on until QEMU quits */
}

static void hmp_ok(QTestState *qts, const char *cmd)
{
    QDict *rsp = qtest_qmp(qts, "{ 'execute': 'human-monitor-command', "
                           "'arguments': { 'command-line': %s } }", cmd);

    g_assert_cmpstr(qdict_get_str(rsp, "return"), ==, "");
    qobject_unref(rsp);
}

/*
 * A snapshot taken while the ring was distrusted, loaded into a device
 * that trusts a ring again: the loaded state says the ring is untrusted,
 * and level 1 follows it, saying why.  (The reset loadvm does first had
 * already taken level 1's ring away, but its brackets said no more than
 * "no ring yet".)
 */
static void test_untrusted_loadvm(void)
{
    g_autofree char *text = vmcoreinfo_61(START_KERNEL_MAP + PRB_PTR_PA);
    g_autofree char *v = NULL;
    g_autofree char *st = NULL;
    g_autofree char *st2 = NULL;
    g_autofree char *st3 = NULL;
    Fixture f = { 0 };
    Ring r;
    uint64_t b1 = 0, e1 = 0;

    start_announced(&f, &r);
    snapshot_disk(f.qts, f.dir);
    push_eight(&r, &b1, &e1);
    bracket_rec(f.qts, 0);
    break_desc1(&r);
    bracket_rec(f.qts, 1);
    st = ring_state(f.qts);
    g_assert_cmpstr(st, ==, "untrusted");
    hmp_ok(f.qts, "savevm distrusted");

    ring_write_desc(&r, 1, SV_FINALIZED | 1, b1, e1);
    put_note(f.qts, NOTE_PA + 0x1000, text);
    announce(f.qts, NOTE_PA + 0x1000);
    st2 = ring_state(f.qts);
    g_assert_cmpstr(st2, ==, "attached");
    bracket_rec(f.qts, 2);

    hmp_ok(f.qts, "loadvm distrusted");
    st3 = ring_state(f.qts);
    g_assert_cmpstr(st3, ==, "untrusted");
    bracket_rec(f.qts, 3);
    v = verdicts_of(&f, "bracket");
    g_assert_cmpstr(v, ==, "ok:0 unchecked:1 ok:2 unchecked:3");
    assert_unchecked_untrusted(&f, 2);
    g_assert_cmpuint(rs_counter(f.qts, "l1-untrusted"), ==, 2);
    g_assert_cmpuint(rs_counter(f.qts, "l1-record-missing"), ==, 0);
    fixture_stop(&f);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/ringside-ext/discovery", test_discovery);
    qtest_add_func("/ringside-ext/ok", test_ok);
    qtest_add_func("/ringside-ext/user-lines", test_user_lines);
    qtest_add_func("/ringside-ext/nested-takeover", test_nested_takeover);
    qtest_add_func("/ringside-ext/replay-notice", test_replay_notice);
    qtest_add_func("/ringside-ext/cut-at-crlf", test_cut_at_crlf);
    qtest_add_func("/ringside-ext/cut-then-dropped", test_cut_then_dropped);
    qtest_add_func("/ringside-ext/unfinished-skipped",
                   test_unfinished_skipped);
    qtest_add_func("/ringside-ext/skipped", test_skipped);
    qtest_add_func("/ringside-ext/migrate-budget", test_migrate_budget);
    qtest_add_func("/ringside-ext/verbose-later", test_verbose_later);
    qtest_add_func("/ringside-ext/corrupt-and-open", test_corrupt_and_open);
    qtest_add_func("/ringside-ext/hostile", test_hostile);
    qtest_add_func("/ringside-ext/unchecked-gap", test_unchecked_gap);
    qtest_add_func("/ringside-ext/mailbox", test_mailbox);
    qtest_add_func("/ringside-ext/early-announce", test_early_announce);
    qtest_add_func("/ringside-ext/early-announce-hostile",
                   test_early_announce_hostile);
    qtest_add_func("/ringside-ext/untrusted-at-attach",
                   test_untrusted_at_attach);
    qtest_add_func("/ringside-ext/untrusted-live", test_untrusted_live);
    qtest_add_func("/ringside-ext/untrusted-loadvm", test_untrusted_loadvm);
    return g_test_run();
}
