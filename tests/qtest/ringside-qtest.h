/*
 * Helpers shared by the ringside-serial qtests: a machine with the device
 * and its chardevs in a temporary directory, the event stream as QDicts,
 * QOM counters, and a synthetic guest kernel: a VMCOREINFO note at NOTE_PA
 * with Linux 6.1's printk layout, the kernel image at phys_base 0 (PA =
 * VA - START_KERNEL_MAP), and a printk_ringbuffer at PRB_PA whose arrays
 * are at RING_DESCS/RING_INFOS/RING_DATA, filled by ring_push() the way
 * the kernel fills them.
 *
 * Copyright (c) 2026 The ringside authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TESTS_QTEST_RINGSIDE_QTEST_H
#define TESTS_QTEST_RINGSIDE_QTEST_H

#include "libqtest.h"
#include "qapi/error.h"
/* 10.0 moved include/qapi/qmp/ to include/qobject/. */
#if QEMU_VERSION_MAJOR >= 10
#include "qobject/qdict.h"
#include "qobject/qjson.h"
#include "qobject/qlist.h"
#include "qobject/qnum.h"
#include "qobject/qobject.h"
#else
#include "qapi/qmp/qdict.h"
#include "qapi/qmp/qjson.h"
#include "qapi/qmp/qlist.h"
#include "qapi/qmp/qnum.h"
#include "qapi/qmp/qobject.h"
#endif
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

static inline void fixture_start_opts(Fixture *f, EventsBackend backend,
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
                         /* the tests look at bytes: a "tx" event each */
                         backend == EVENTS_NONE ? "" :
                         ",events=ev,tx-events=on",
                         dev_opts);
}

/* The wire tests: ring=off keeps ring events and probe timers out. */
static inline void fixture_start(Fixture *f, EventsBackend backend)
{
    fixture_start_opts(f, backend, ",ring=off");
}

/* Quit QEMU, unless the test already did (f->qts NULL), and clean up. */
static inline void fixture_stop(Fixture *f)
{
    if (f->qts) {
        qtest_quit(f->qts);
    }
    unlink(f->console);
    unlink(f->events);
    rmdir(f->dir);
    g_free(f->console);
    g_free(f->events);
    g_free(f->dir);
}

/*
 * The virtual clock, read by moving it one nanosecond: QEMU 10.0's qtest
 * refuses a zero clock_step, which 7.2 took as a read.
 */
static inline int64_t rs_clock_now(QTestState *qts)
{
    return qtest_clock_step(qts, 1);
}

static inline uint64_t rs_counter(QTestState *qts, const char *name)
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

static inline char *read_file(const char *path)
{
    g_autoptr(GError) err = NULL;
    char *text = NULL;

    g_file_get_contents(path, &text, NULL, &err);
    g_assert_no_error(err);
    return text;
}

/* Parse the events file into one QDict per line, checking each is JSON. */
static inline GPtrArray *read_events(const char *path)
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
        g_assert_cmpint(qdict_get_int(ev, "v"), ==, 3);
        g_ptr_array_add(events, ev);
    }
    return events;
}

/* The events of one kind ("line", "record", "summary"), in order. */
static inline GPtrArray *events_of(const char *path, const char *kind)
{
    g_autoptr(GPtrArray) ev = read_events(path);
    GPtrArray *out = g_ptr_array_new_with_free_func(
        (GDestroyNotify)qobject_unref_impl);
    unsigned i;

    for (i = 0; i < ev->len; i++) {
        if (!strcmp(qdict_get_str(ev->pdata[i], "ev"), kind)) {
            g_ptr_array_add(out, qobject_ref((QDict *)ev->pdata[i]));
        }
    }
    return out;
}

/* Quit (the guest "stops for good") and return its one event of a kind. */
static inline QDict *quit_event(Fixture *f, const char *kind)
{
    g_autoptr(GPtrArray) evs = NULL;

    qtest_quit(f->qts);
    f->qts = NULL;
    evs = events_of(f->events, kind);
    g_assert_cmpuint(evs->len, ==, 1);
    return qobject_ref((QDict *)evs->pdata[0]);
}

/* A count in one of an event's objects, e.g. summary "lines" "ok". */
static inline int64_t sub_int(QDict *d, const char *obj, const char *key)
{
    return qdict_get_int(qdict_get_qdict(d, obj), key);
}

static inline void uart_put(QTestState *qts, uint8_t c)
{
    qtest_outb(qts, COM1 + REG_THR, c);
}

#define START_KERNEL_MAP    0xffffffff80000000ull
#define NOTE_PA             0x00200000ull
#define PRB_PTR_PA          0x00300000ull
#define PRB_PA              0x00300100ull
#define RING_DESCS          0x00310000ull
#define RING_INFOS          0x00320000ull
#define RING_DATA           0x00330000ull
#define DESC_SIZE           24
#define INFO_SIZE           88

static inline void put_note(QTestState *qts, uint64_t pa, const char *text)
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

static inline char *vmcoreinfo_61(uint64_t prb_sym)
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

/* The ring's arrays at base + their PA (base: a kernel VA of PA 0). */
static inline void put_prb_at(QTestState *qts, unsigned count_bits,
                              unsigned size_bits, uint64_t base)
{
    uint8_t prb[88] = { 0 };

    qtest_writeq(qts, PRB_PTR_PA, START_KERNEL_MAP + PRB_PA);
    prb[0] = count_bits;                                 /* desc_ring */
    stq_le_p(prb + 8, base + RING_DESCS);                /* descs */
    stq_le_p(prb + 16, base + RING_INFOS);               /* infos */
    prb[48] = size_bits;                                 /* text_data_ring */
    stq_le_p(prb + 56, base + RING_DATA);                /* data */
    qtest_memwrite(qts, PRB_PA, prb, sizeof(prb));
}

static inline void put_prb(QTestState *qts, unsigned count_bits, unsigned size_bits)
{
    put_prb_at(qts, count_bits, size_bits, START_KERNEL_MAP);
}

/*
 * The direct map (page_offset_base) of PA 0x200000-0x3fffff in 4 KiB pages,
 * four levels under init_top_pgt (PA 0x1000): a ring put there with
 * put_prb_at(..., DIRECT_MAP) costs the device a page walk per read.
 */
#define DIRECT_MAP          0xffff888000000000ull

static inline void map_direct(QTestState *qts)
{
    const uint64_t pml4 = 0x1000, pdpt = 0x5000, pd = 0x6000, pt = 0x7000;
    int i;

    qtest_writeq(qts, pml4 + ((DIRECT_MAP >> 39) & 511) * 8, pdpt | 3);
    qtest_writeq(qts, pdpt, pd | 3);
    qtest_writeq(qts, pd + 8, pt | 3);
    for (i = 0; i < 512; i++) {
        qtest_writeq(qts, pt + i * 8, (0x200000ull + i * 0x1000) | 3);
    }
}

/* The "ring" events in the stream, as their "state" values. */
static inline GPtrArray *ring_events(Fixture *f)
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

static inline char *ring_state(QTestState *qts)
{
    QDict *resp = qtest_qmp(qts, "{ 'execute': 'qom-get', 'arguments': "
                            "{ 'path': '/machine/peripheral/rs', "
                            "'property': 'ring-state' } }");
    char *v = g_strdup(qdict_get_str(resp, "return"));

    qobject_unref(resp);
    return v;
}

/* ---- filling the synthetic ring as printk does ---- */

#define SV_FINALIZED        (2ull << 62)
#define LOG_NEWLINE         2

typedef struct Ring {
    QTestState *qts;
    unsigned count_bits, size_bits;
    uint64_t n;                 /* records pushed: the next seq and id */
    uint64_t lpos;              /* data ring head */
} Ring;

/* A ring of 2^count_bits descriptors and 2^size_bits bytes, and its note. */
static inline void ring_init(Ring *r, QTestState *qts, unsigned count_bits,
                             unsigned size_bits)
{
    g_autofree char *text = vmcoreinfo_61(START_KERNEL_MAP + PRB_PTR_PA);

    memset(r, 0, sizeof(*r));
    r->qts = qts;
    r->count_bits = count_bits;
    r->size_bits = size_bits;
    put_prb(qts, count_bits, size_bits);
    put_note(qts, NOTE_PA, text);
}

static inline void ring_write_desc(Ring *r, uint64_t id, uint64_t sv,
                                   uint64_t begin, uint64_t next)
{
    uint64_t d = RING_DESCS + (id & ((1ull << r->count_bits) - 1)) * DESC_SIZE;

    qtest_writeq(r->qts, d, sv);
    qtest_writeq(r->qts, d + 8, begin);
    qtest_writeq(r->qts, d + 16, next);
}

/*
 * Store a finalized record: text block (id + text, 8-aligned) at the data
 * head, info, descriptor, then the ring's head.  Returns its seq.  The
 * tests never fill the ring, so nothing is evicted.
 */
static inline uint64_t ring_push_full(Ring *r, uint64_t ts_nsec, int level,
                                      uint32_t caller, const char *text)
{
    uint64_t id = r->n, size = (8 + strlen(text) + 7) & ~7ull;
    uint64_t idx = id & ((1ull << r->count_bits) - 1);
    uint8_t info[INFO_SIZE] = { 0 };
    uint64_t begin = r->lpos;

    g_assert(begin + size <= 1ull << r->size_bits);
    g_assert(r->n < 1ull << r->count_bits);
    qtest_writeq(r->qts, RING_DATA + begin, id);
    qtest_memwrite(r->qts, RING_DATA + begin + 8, text, strlen(text));
    stq_le_p(info, r->n);                       /* seq */
    stq_le_p(info + 8, ts_nsec);
    stw_le_p(info + 16, strlen(text));          /* text_len */
    info[19] = level << 5 | LOG_NEWLINE;
    stl_le_p(info + 20, caller);
    qtest_memwrite(r->qts, RING_INFOS + idx * INFO_SIZE, info, sizeof(info));
    ring_write_desc(r, id, SV_FINALIZED | id, begin, begin + size);
    r->lpos = begin + size;
    qtest_writeq(r->qts, PRB_PA + 24, id);      /* desc_ring.head_id */
    qtest_writeq(r->qts, PRB_PA + 32, 0);       /* desc_ring.tail_id */
    qtest_writeq(r->qts, PRB_PA + 64, r->lpos); /* text_data_ring.head_lpos */
    return r->n++;
}

/* A KERN_INFO record from task 1, stamped seq + 1 ms. */
static inline uint64_t ring_push(Ring *r, const char *text)
{
    return ring_push_full(r, (r->n + 1) * 1000000, 6, 1, text);
}

/* The console line record_print_text() makes with printk.time=1. */
static inline char *console_line(uint64_t ts_nsec, const char *text)
{
    return g_strdup_printf("[%5" PRIu64 ".%06" PRIu64 "] %s",
                           ts_nsec / 1000000000, ts_nsec % 1000000000 / 1000,
                           text);
}

static inline void uart_puts(QTestState *qts, const char *s)
{
    for (; *s; s++) {
        uart_put(qts, *s);
    }
}

/* Print seq's line as the 8250 console does: text, then "\r\n". */
static inline void print_rec(QTestState *qts, uint64_t seq, const char *text)
{
    g_autofree char *l = console_line((seq + 1) * 1000000, text);

    uart_puts(qts, l);
    uart_puts(qts, "\r\n");
}

#endif
