/*
 * test-console-max.c: GLib g_test unit tests for the console record limit
 * that follows the guest kernel (hw/char/rslib-ring.[ch], rslib-vmci.[ch]):
 * 1024 bytes up to Linux 6.2 (CONSOLE_LOG_MAX), 2048 from 6.3
 * (PRINTK_MESSAGE_MAX), chosen from the OSRELEASE of the kernel's
 * VMCOREINFO when the ring is opened.
 *
 * The fake guest here is small and its own: a VMCOREINFO text with the
 * x86_64 layout of the printk structures of 6.1 and 6.12 (identical in
 * both), a printk_ringbuffer whose records are written finalized, in one
 * wrap, and guest physical memory reached only through the image mapping
 * (VA - __START_KERNEL_map + phys_base), so no page tables are needed.
 * The level 0 matcher (rslib-match.[ch]) then judges the console lines of
 * long 6.12 records against that ring.
 */
#include <glib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rslib-match.h"

#define MEM_SIZE        (256u << 10)
#define IMG(pa)         (RS_START_KERNEL_MAP + (pa))
#define PA_PRB_PTR      0x1000u         /* struct printk_ringbuffer *prb */
#define PA_TOP_PGT      0x2000u         /* init_top_pgt, never walked */
#define PA_PRB          0x3000u         /* the ring's header */
#define PA_DESCS        0x4000u
#define PA_INFOS        0x6000u
#define PA_DATA         0x10000u
#define COUNT_BITS      4               /* 16 descriptors */
#define SIZE_BITS       15              /* 32 KiB of text data */

/* x86_64 offsets and sizes, the same in 6.1.192 and 6.12.118 */
#define DR_OFF          0               /* printk_ringbuffer.desc_ring */
#define TR_OFF          48              /* printk_ringbuffer.text_data_ring */
#define DESC_SIZE       24
#define INFO_SIZE       88
#define INFO_TEXT_LEN   16

#define FINALIZED       (2ull << 62)

typedef struct Guest {
    uint8_t *mem;
    uint64_t n;                 /* records written: seqs and ids 0..n-1 */
    uint64_t lpos;              /* where the next data block begins */
    rs_vmci vi;
    rs_vm vm;
    rs_ring r;
} Guest;

static void put64(uint8_t *p, uint64_t v)
{
    int i;

    for (i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static void put32(uint8_t *p, uint32_t v)
{
    int i;

    for (i = 0; i < 4; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static int mem_read(void *opaque, uint64_t gpa, void *buf, size_t len)
{
    Guest *g = opaque;

    if (gpa >= MEM_SIZE || len > MEM_SIZE - gpa) {
        return -1;
    }
    memcpy(buf, g->mem + gpa, len);
    return 0;
}

/* VMCOREINFO as a 6.1 or 6.12 x86_64 kernel writes the keys the decoder
 * reads, with osrelease as OSRELEASE. */
static gchar *vmcoreinfo(const char *osrelease)
{
    return g_strdup_printf(
        "OSRELEASE=%s\n"
        "PAGESIZE=4096\n"
        "SYMBOL(prb)=%" G_GINT64_MODIFIER "x\n"
        "SYMBOL(init_top_pgt)=%" G_GINT64_MODIFIER "x\n"
        "NUMBER(phys_base)=0\n"
        "SIZE(printk_ringbuffer)=88\n"
        "OFFSET(printk_ringbuffer.desc_ring)=%d\n"
        "OFFSET(printk_ringbuffer.text_data_ring)=%d\n"
        "OFFSET(printk_ringbuffer.fail)=80\n"
        "SIZE(prb_desc_ring)=48\n"
        "OFFSET(prb_desc_ring.count_bits)=0\n"
        "OFFSET(prb_desc_ring.descs)=8\n"
        "OFFSET(prb_desc_ring.infos)=16\n"
        "OFFSET(prb_desc_ring.head_id)=24\n"
        "OFFSET(prb_desc_ring.tail_id)=32\n"
        "SIZE(prb_desc)=%d\n"
        "OFFSET(prb_desc.state_var)=0\n"
        "OFFSET(prb_desc.text_blk_lpos)=8\n"
        "SIZE(prb_data_blk_lpos)=16\n"
        "OFFSET(prb_data_blk_lpos.begin)=0\n"
        "OFFSET(prb_data_blk_lpos.next)=8\n"
        "SIZE(printk_info)=%d\n"
        "OFFSET(printk_info.seq)=0\n"
        "OFFSET(printk_info.ts_nsec)=8\n"
        "OFFSET(printk_info.text_len)=%d\n"
        "OFFSET(printk_info.caller_id)=20\n"
        "OFFSET(printk_info.dev_info)=24\n"
        "SIZE(dev_printk_info)=64\n"
        "OFFSET(dev_printk_info.subsystem)=0\n"
        "LENGTH(printk_info_subsystem)=16\n"
        "OFFSET(dev_printk_info.device)=16\n"
        "LENGTH(printk_info_device)=48\n"
        "SIZE(prb_data_ring)=32\n"
        "OFFSET(prb_data_ring.size_bits)=0\n"
        "OFFSET(prb_data_ring.data)=8\n"
        "OFFSET(prb_data_ring.head_lpos)=16\n"
        "OFFSET(prb_data_ring.tail_lpos)=24\n"
        "SIZE(atomic_long_t)=8\n"
        "OFFSET(atomic_long_t.counter)=0\n",
        osrelease, (guint64)IMG(PA_PRB_PTR), (guint64)IMG(PA_TOP_PGT),
        DR_OFF, TR_OFF, DESC_SIZE, INFO_SIZE, INFO_TEXT_LEN);
}

/* An empty ring of the kernel osrelease, opened as the device opens it. */
static void g_open(Guest *g, const char *osrelease)
{
    g_autofree gchar *text = vmcoreinfo(osrelease);
    uint8_t *prb;
    char err[160] = "";

    memset(g, 0, sizeof(*g));
    g->mem = g_malloc0(MEM_SIZE);
    put64(g->mem + PA_PRB_PTR, IMG(PA_PRB));
    prb = g->mem + PA_PRB;
    put32(prb + DR_OFF, COUNT_BITS);
    put64(prb + DR_OFF + 8, IMG(PA_DESCS));
    put64(prb + DR_OFF + 16, IMG(PA_INFOS));
    put32(prb + TR_OFF, SIZE_BITS);
    put64(prb + TR_OFF + 8, IMG(PA_DATA));
    g_assert_cmpint(rs_vmci_parse(text, strlen(text), &g->vi, err,
                                  sizeof(err)), ==, RS_OK);
    g_assert_cmpint(rs_vm_init(&g->vm, &g->vi, mem_read, g), ==, RS_OK);
    g_assert_cmpint(rs_ring_open(&g->r, &g->vi, &g->vm, err, sizeof(err)),
                    ==, RS_OK);
}

static void g_close(Guest *g)
{
    g_free(g->mem);
    g->mem = NULL;
}

/*
 * Store a finalized record of len bytes of text, as printk() leaves it:
 * the id is the seq (one wrap of the descriptor ring), the text after the
 * block's 8-byte id, level and LOG_NEWLINE in the byte after facility.
 */
static uint64_t g_push(Guest *g, const char *text, size_t len, uint64_t ts,
                       uint32_t caller)
{
    uint64_t seq = g->n++, begin = g->lpos;
    uint64_t next = begin + ((8 + len + 7) & ~(uint64_t)7);
    uint8_t *desc = g->mem + PA_DESCS + seq * DESC_SIZE;
    uint8_t *info = g->mem + PA_INFOS + seq * INFO_SIZE;
    uint8_t *prb = g->mem + PA_PRB;

    g_assert_cmpuint(seq, <, 1u << COUNT_BITS);
    g_assert_cmpuint(len, >, 0);
    g_assert_cmpuint(next, <=, 1u << SIZE_BITS);
    put64(g->mem + PA_DATA + begin, seq);
    memcpy(g->mem + PA_DATA + begin + 8, text, len);
    put64(info, seq);
    put64(info + 8, ts);
    info[INFO_TEXT_LEN] = (uint8_t)len;
    info[INFO_TEXT_LEN + 1] = (uint8_t)(len >> 8);
    info[INFO_TEXT_LEN + 2] = 0;                    /* facility: kernel */
    info[INFO_TEXT_LEN + 3] = 4 << 5 | RS_LOG_NEWLINE;  /* KERN_WARNING */
    put32(info + 20, caller);
    put64(desc + 8, begin);
    put64(desc + 16, next);
    put64(desc, FINALIZED | seq);
    put64(prb + DR_OFF + 24, seq);                  /* head_id */
    put64(prb + DR_OFF + 32, 0);                    /* tail_id */
    put64(prb + TR_OFF + 16, next);                 /* head_lpos */
    g->lpos = next;
    return seq;
}

/* Record seq as its console writes it, formatted with limit. */
static gchar *g_console(Guest *g, uint64_t seq, unsigned flags,
                        uint32_t limit)
{
    char text[RS_CONSOLE_TEXT_MAX];
    gchar *out = g_malloc(RS_CONSOLE_TEXT_MAX);
    rs_record rec;
    size_t n;

    g_assert_cmpint(rs_ring_read(&g->r, seq, &rec, text, sizeof(text)), ==,
                    RS_REC_OK);
    g_assert_false(rec.truncated);
    n = rs_format(&rec, flags, limit, out, RS_CONSOLE_TEXT_MAX);
    g_assert_cmpuint(n, <, RS_CONSOLE_TEXT_MAX);
    return out;
}

/* "[    5.000000][  T123] ": what every line of these records starts with */
#define TS              5000000000ull
#define CALLER          123u
#define FLAGS           (RS_FMT_TIME | RS_FMT_CALLER)
#define PREFIX          "[    5.000000][  T123] "
#define PREFIX_LEN      23

/* lines of w >= 4 bytes each, "\n" between them: "L000xxx\nL001xxx..." */
static gchar *lines_text(unsigned lines, unsigned w)
{
    GString *s = g_string_new(NULL);
    unsigned i, j;

    for (i = 0; i < lines; i++) {
        g_string_append_printf(s, "%sL%03u", i ? "\n" : "", i);
        for (j = 4; j < w; j++) {
            g_string_append_c(s, 'x');
        }
    }
    return g_string_free(s, FALSE);
}

/* The first n of those lines as the console prints them. */
static gchar *lines_console(unsigned n, unsigned w)
{
    g_autofree gchar *text = lines_text(n, w);
    gchar **v = g_strsplit(text, "\n", -1);
    GString *s = g_string_new(NULL);
    unsigned i;

    for (i = 0; v[i]; i++) {
        g_string_append_printf(s, PREFIX "%s\n", v[i]);
    }
    g_strfreev(v);
    return g_string_free(s, FALSE);
}

/* ---- the kernel version --------------------------------------------------- */

static void test_osrelease(void)
{
    static const struct {
        const char *s;
        bool ok;
        unsigned major, minor;
    } cases[] = {
        { "6.12.118+deb12-amd64", true, 6, 12 },
        { "6.1.0-57-amd64", true, 6, 1 },
        { "6.1.192", true, 6, 1 },
        { "6.3.0-rc1", true, 6, 3 },
        { "5.10.0-30-rt-amd64", true, 5, 10 },
        { "7.0", true, 7, 0 },
        { "6.12", true, 6, 12 },
        { "6.12-rc7", true, 6, 12 },
        { "1000.9999.1", true, 1000, 9999 },
        { "", false, 0, 0 },
        { "6", false, 0, 0 },
        { "6.", false, 0, 0 },
        { ".12", false, 0, 0 },
        { "6-12", false, 0, 0 },
        { "v6.12.1", false, 0, 0 },
        { "12345.1", false, 0, 0 },
        { "6.12345", false, 0, 0 },
        { "linux", false, 0, 0 },
    };
    unsigned major, minor;
    size_t i;

    for (i = 0; i < G_N_ELEMENTS(cases); i++) {
        major = minor = 77;
        g_assert_cmpint(rs_osrelease_version(cases[i].s, &major, &minor), ==,
                        cases[i].ok);
        g_assert_cmpuint(major, ==, cases[i].major);
        g_assert_cmpuint(minor, ==, cases[i].minor);
    }
    g_assert_false(rs_osrelease_version(NULL, &major, &minor));
    g_assert_true(rs_osrelease_version("6.12.118", NULL, NULL));
}

static void test_limit_by_kernel(void)
{
    static const struct {
        const char *s;
        uint32_t max;
    } cases[] = {
        { "5.10.0-30-amd64", RS_CONSOLE_LOG_MAX },
        { "6.1.0-57-amd64", RS_CONSOLE_LOG_MAX },
        { "6.1.192", RS_CONSOLE_LOG_MAX },
        { "6.2.16", RS_CONSOLE_LOG_MAX },
        { "6.3.0-rc1", RS_PRINTK_MESSAGE_MAX },
        { "6.12.118+deb12-amd64", RS_PRINTK_MESSAGE_MAX },
        { "6.12.118+deb12-rt-amd64", RS_PRINTK_MESSAGE_MAX },
        { "7.3.0", RS_PRINTK_MESSAGE_MAX },
        { "10.0", RS_PRINTK_MESSAGE_MAX },
        { "", RS_CONSOLE_LOG_MAX },
        { "not-a-version", RS_CONSOLE_LOG_MAX },
    };
    rs_ring zero;
    size_t i;

    for (i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_assert_cmpuint(rs_console_log_max(cases[i].s), ==, cases[i].max);
    }
    g_assert_cmpuint(rs_console_log_max(NULL), ==, RS_CONSOLE_LOG_MAX);
    g_assert_cmpuint(RS_CONSOLE_TEXT_MAX, >=, RS_PRINTK_MESSAGE_MAX);
    g_assert_cmpuint(RS_CONSOLE_TEXT_MAX, >=, RS_CONSOLE_LOG_MAX);
    /* no ring, a ring nobody opened, a ring whose field went wrong */
    g_assert_cmpuint(rs_ring_console_max(NULL), ==, RS_CONSOLE_LOG_MAX);
    memset(&zero, 0, sizeof(zero));
    g_assert_cmpuint(rs_ring_console_max(&zero), ==, RS_CONSOLE_LOG_MAX);
    zero.console_max = 1u << 20;
    g_assert_cmpuint(rs_ring_console_max(&zero), ==, RS_CONSOLE_LOG_MAX);
    zero.console_max = RS_PRINTK_MESSAGE_MAX;
    g_assert_cmpuint(rs_ring_console_max(&zero), ==, RS_PRINTK_MESSAGE_MAX);
}

/* Opening the ring takes the limit from the VMCOREINFO's OSRELEASE. */
static void test_ring_open(void)
{
    static const struct {
        const char *s;
        uint32_t max;
    } cases[] = {
        { "6.1.0-57-amd64", RS_CONSOLE_LOG_MAX },
        { "6.12.118+deb12-amd64", RS_PRINTK_MESSAGE_MAX },
        { "6.2.0", RS_CONSOLE_LOG_MAX },
        { "6.3.0", RS_PRINTK_MESSAGE_MAX },
        { "x.y", RS_CONSOLE_LOG_MAX },
    };
    size_t i;

    for (i = 0; i < G_N_ELEMENTS(cases); i++) {
        Guest g;
        rs_ring again;

        g_open(&g, cases[i].s);
        g_assert_cmpstr(g.vi.osrelease, ==, cases[i].s);
        g_assert_cmpuint(g.r.console_max, ==, cases[i].max);
        g_assert_cmpuint(rs_ring_console_max(&g.r), ==, cases[i].max);
        /* reopening at the announced address gives the same limit */
        g_assert_cmpint(rs_ring_open_at(&again, &g.vi, &g.vm, g.r.prb, NULL,
                                        0), ==, RS_OK);
        g_assert_cmpuint(rs_ring_console_max(&again), ==, cases[i].max);
        g_close(&g);
    }
}

/* ---- long records --------------------------------------------------------- */

/*
 * The longest record printk() stores on 6.12 is one line of 1023 bytes
 * (PRINTKRB_RECORD_MAX less the NUL): on the console, with its prefix,
 * 1047 bytes.  Formatted with 6.1's 1024 the line does not fit and the
 * copy is empty: what a 6.12 line over 1 KiB used to be judged against.
 */
static void test_long_line_6_12(void)
{
    char text[1023];
    g_autofree gchar *want = NULL, *got = NULL, *old = NULL;
    Guest g;
    uint64_t seq;

    memset(text, 'w', sizeof(text));
    memcpy(text, "long record:", 12);
    g_open(&g, "6.12.118+deb12-amd64");
    seq = g_push(&g, text, sizeof(text), TS, CALLER);
    want = g_strdup_printf(PREFIX "%.*s\n", (int)sizeof(text), text);
    g_assert_cmpuint(strlen(want), ==, PREFIX_LEN + 1023 + 1);
    got = g_console(&g, seq, FLAGS, rs_ring_console_max(&g.r));
    g_assert_cmpstr(got, ==, want);
    old = g_console(&g, seq, FLAGS, RS_CONSOLE_LOG_MAX);
    g_assert_cmpstr(old, ==, "");
    g_close(&g);
}

/*
 * 6.1 stores at most 1024 - PREFIX_MAX (48 with CONFIG_PRINTK_CALLER)
 * bytes of text in a record, so a one-line record always fits its 1024:
 * the limit that follows the kernel changes nothing there.
 */
static void test_long_line_6_1(void)
{
    char text[1024 - 48 - 1];
    g_autofree gchar *want = NULL, *got = NULL;
    Guest g;
    uint64_t seq;

    memset(text, 'v', sizeof(text));
    g_open(&g, "6.1.0-57-amd64");
    seq = g_push(&g, text, sizeof(text), TS, CALLER);
    want = g_strdup_printf(PREFIX "%.*s\n", (int)sizeof(text), text);
    got = g_console(&g, seq, FLAGS, rs_ring_console_max(&g.r));
    g_assert_cmpstr(got, ==, want);
    g_assert_cmpuint(strlen(got), <, RS_CONSOLE_LOG_MAX);
    g_close(&g);
}

/*
 * A record of several lines whose console text is between 1 and 2 KiB:
 * 32 lines of 31 bytes (1023 bytes of text), 55 bytes each on the console,
 * 1760 in all.  6.12 prints all of it; 6.1's buffer takes 18 lines
 * (18 * 55 = 990; a 19th would need 1045 + the NUL).
 */
static void test_multi_line(void)
{
    g_autofree gchar *text = lines_text(32, 31);
    g_autofree gchar *all = lines_console(32, 31);
    g_autofree gchar *first18 = lines_console(18, 31);
    g_autofree gchar *got = NULL, *got61 = NULL;
    Guest g;
    uint64_t seq;

    g_assert_cmpuint(strlen(text), ==, 1023);
    g_assert_cmpuint(strlen(all), ==, 1760);
    g_open(&g, "6.12.118+deb12-amd64");
    seq = g_push(&g, text, strlen(text), TS, CALLER);
    got = g_console(&g, seq, FLAGS, rs_ring_console_max(&g.r));
    g_assert_cmpstr(got, ==, all);
    g_close(&g);

    g_open(&g, "6.1.192");
    seq = g_push(&g, text, strlen(text), TS, CALLER);
    got61 = g_console(&g, seq, FLAGS, rs_ring_console_max(&g.r));
    g_assert_cmpstr(got61, ==, first18);
    g_close(&g);
}

/*
 * Over 2 KiB, 6.12 drops lines too, by the same rule: 64 lines of 15
 * bytes (1023 bytes of text) would print 64 * 39 = 2496 bytes.  The rule
 * cuts the text once 23 * k + 1048 > 2048 (k = 44 lines printed) and keeps
 * printing whole lines while len + 23 + 15 + 2 <= 2048: 52 lines, 2028
 * bytes.
 */
static void test_multi_line_over_2k(void)
{
    g_autofree gchar *text = lines_text(64, 15);
    g_autofree gchar *first52 = lines_console(52, 15);
    g_autofree gchar *got = NULL;
    Guest g;
    uint64_t seq;

    g_assert_cmpuint(strlen(text), ==, 1023);
    g_assert_cmpuint(strlen(first52), ==, 2028);
    g_open(&g, "6.12.118+deb12-amd64");
    seq = g_push(&g, text, strlen(text), TS, CALLER);
    got = g_console(&g, seq, FLAGS, rs_ring_console_max(&g.r));
    g_assert_cmpstr(got, ==, first52);
    g_close(&g);
}

/* ---- level 0 on long records --------------------------------------------- */

typedef struct Judged {
    uint64_t lines[RS_V_COUNT];
    const char *untrusted;
} Judged;

static void on_verdict(void *opaque, const rs_verdict_info *vi)
{
    Judged *j = opaque;

    if (vi->verdict < RS_V_COUNT) {
        j->lines[vi->verdict] += vi->verdict >= RS_V_MISSING && vi->count ?
                                 vi->count : 1;
    }
}

static void on_untrusted(void *opaque, const char *reason)
{
    ((Judged *)opaque)->untrusted = reason;
}

/* The console's bytes as the 8250 sends them: each '\n' as "\r\n". */
static void feed(rs_match *m, const char *s, uint64_t *index, int64_t *vt)
{
    for (; *s; s++) {
        if (*s == '\n') {
            rs_match_byte(m, '\r', (*index)++, *vt);
        }
        rs_match_byte(m, (uint8_t)*s, (*index)++, *vt);
        *vt += 87000;           /* a byte at 115200 baud */
    }
}

/*
 * A 6.12 console printing, among short records, the longest one-line
 * record (a 1046-byte line) and one of 32 lines (1760 bytes): every line
 * is ok, nothing corrupt, unmatched or missing.  With 6.1's limit the long
 * line's copy was empty and the other record's lines from the 19th had
 * none: 15 lines corrupt.
 */
static void test_match_long_records(void)
{
    g_autofree gchar *many = lines_text(32, 31);
    char one[1023];
    Guest g;
    rs_match *m = g_new0(rs_match, 1);
    Judged j = { { 0 }, NULL };
    uint64_t seq, index = 0, n;
    int64_t vt = 6000000000;
    int v;

    memset(one, 'w', sizeof(one));
    g_open(&g, "6.12.118+deb12-amd64");
    g_push(&g, "before", 6, TS, CALLER);
    g_push(&g, one, sizeof(one), TS + 1000, CALLER);
    g_push(&g, many, strlen(many), TS + 2000, CALLER);
    g_push(&g, "after", 5, TS + 3000, CALLER);
    rs_match_init(m, 0, on_verdict, on_untrusted, &j);
    rs_match_attach(m, &g.r);
    for (seq = 0; seq < g.n; seq++) {
        g_autofree gchar *out = g_console(&g, seq, FLAGS,
                                          rs_ring_console_max(&g.r));

        feed(m, out, &index, &vt);
    }
    rs_match_finish(m, vt);
    g_assert_null(j.untrusted);
    n = 1 + 1 + 32 + 1;
    g_assert_cmpuint(j.lines[RS_V_OK], ==, n);
    for (v = 0; v < RS_V_COUNT; v++) {
        if (v != RS_V_OK) {
            g_assert_cmpuint(j.lines[v], ==, 0);
        }
    }
    g_free(m);
    g_close(&g);
}

/*
 * earlyprintk=serial with console=ttyS0: the boot console and the console
 * replacing it share the UART, and both print the two messages of the
 * handover, so each reaches the wire twice in a row.  The second copies
 * are replayed (bootconsole), not duplicates; a record printed twice
 * otherwise still is a duplicate.
 */
static void test_bootconsole_handover(void)
{
    static const char *const recs[] = {
        "first", "printk: console [ttyS0] enabled",
        "printk: bootconsole [earlyser0] disabled", "last",
    };
    /* the wire: each record's index, in the order printed */
    static const int wire[] = { 0, 1, 1, 2, 2, 3, 3 };
    Guest g;
    rs_match *m = g_new0(rs_match, 1);
    Judged j = { { 0 }, NULL };
    uint64_t index = 0;
    int64_t vt = 6000000000;
    unsigned i;
    int v;

    g_open(&g, "6.1.0-28-amd64");
    for (i = 0; i < G_N_ELEMENTS(recs); i++) {
        g_push(&g, recs[i], strlen(recs[i]), TS + i * 1000, CALLER);
    }
    rs_match_init(m, 0, on_verdict, on_untrusted, &j);
    rs_match_attach(m, &g.r);
    for (i = 0; i < G_N_ELEMENTS(wire); i++) {
        g_autofree gchar *out = g_console(&g, wire[i], FLAGS,
                                          rs_ring_console_max(&g.r));

        feed(m, out, &index, &vt);
    }
    rs_match_finish(m, vt);
    g_assert_null(j.untrusted);
    g_assert_cmpuint(j.lines[RS_V_OK], ==, 4);
    g_assert_cmpuint(j.lines[RS_V_REPLAYED], ==, 2);
    g_assert_cmpuint(j.lines[RS_V_DUPLICATE], ==, 1);
    for (v = 0; v < RS_V_COUNT; v++) {
        if (v != RS_V_OK && v != RS_V_REPLAYED && v != RS_V_DUPLICATE) {
            g_assert_cmpuint(j.lines[v], ==, 0);
        }
    }
    g_free(m);
    g_close(&g);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/console-max/osrelease", test_osrelease);
    g_test_add_func("/console-max/limit-by-kernel", test_limit_by_kernel);
    g_test_add_func("/console-max/ring-open", test_ring_open);
    g_test_add_func("/console-max/long-line-6.12", test_long_line_6_12);
    g_test_add_func("/console-max/long-line-6.1", test_long_line_6_1);
    g_test_add_func("/console-max/multi-line", test_multi_line);
    g_test_add_func("/console-max/multi-line-over-2k",
                    test_multi_line_over_2k);
    g_test_add_func("/console-max/bootconsole-handover",
                    test_bootconsole_handover);
    g_test_add_func("/console-max/match-long-records",
                    test_match_long_records);
    return g_test_run();
}
