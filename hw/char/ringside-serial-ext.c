/*
 * ringside-serial: the extension window a cooperating kernel talks to
 * (level 1: guest-kernel/6.1/patches/0004 and 0007, 6.12/patches/0004).
 *
 * Discovery goes through the scratch register, which a plain 16550 only
 * stores: after the guest writes the four bytes "ring" to it, the next four
 * reads answer 'R', 'S' and the window's I/O base, low byte first.  The
 * window (ext=, 16 ports, 32-bit accesses only):
 *
 *   +0   read: RS_EXT_ID ("RSX1").  Write: begin a record; the value is the
 *        low 32 bits of its printk seq.
 *   +4   write: end the record begun last by this vCPU.  Read: the next
 *        four bytes of the mailbox (mailbox=), zero past its end.
 *   +8   write: shift 32 bits into this vCPU's argument latch.
 *   +12  write: command; RS_EXT_CMD_ANNOUNCE | layout << 8 announces the
 *        printk ring: the latch holds the guest physical address of the
 *        VMCOREINFO note (layout 1).  The ring is attached before the
 *        write returns, so the records bracketed next are checked; the
 *        note is read and validated as any other (ringside-serial-attach.c).
 *        RS_EXT_CMD_MAILBOX rewinds the mailbox to its first byte.
 *
 * The mailbox hands a test scenario to a guest restored from a snapshot:
 * its text and read position are deliberately not migrated, so a guest
 * saved while polling an empty mailbox reads the scenario the restoring
 * QEMU was given.
 *
 * Which vCPU wrote a marker or a byte is known here, never taken from the
 * guest.  Bracketed bytes are judged by rslib-l1.c; its verdicts become
 * events, QOM counters and trace events.
 *
 * Copyright (c) 2026 The ringside authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/log.h"
#include "qemu/timer.h"
#include "hw/core/cpu.h"
#include "migration/vmstate.h"
#include "ringside-serial.h"
#include "trace.h"

#define RS_EXT_SIZE             16
#define RS_EXT_ID               0x31585352      /* "RSX1" */
#define RS_EXT_BEGIN            0
#define RS_EXT_END              4
#define RS_EXT_ARG              8
#define RS_EXT_CMD              12
#define RS_EXT_MAILBOX          4
#define RS_EXT_CMD_ANNOUNCE     1
#define RS_EXT_CMD_MAILBOX      2
#define RS_EXT_MAILBOX_MAX      4096
#define RS_EXT_LAYOUT_VMCOREINFO 1

static const char rs_ext_key[4] = { 'r', 'i', 'n', 'g' };

static int ext_cpu(void)
{
    return current_cpu ? current_cpu->cpu_index : -1;
}

/* ---- discovery through the scratch register ---- */

void ringside_ext_scr_write(RingsideSerialState *s, uint8_t val)
{
    s->ext_answer = 0;
    if (val == rs_ext_key[s->ext_knock]) {
        s->ext_knock++;
    } else {
        s->ext_knock = val == rs_ext_key[0];
    }
    if (s->ext_knock == sizeof(rs_ext_key)) {
        s->ext_knock = 0;
        s->ext_answer = 1;
    }
}

/* Answers a read of the scratch register if the key was just written. */
bool ringside_ext_scr_read(RingsideSerialState *s, uint64_t *val)
{
    uint8_t answer[4] = { 'R', 'S', s->ext_base & 0xff, s->ext_base >> 8 };

    if (!s->ext_answer) {
        return false;
    }
    *val = answer[s->ext_answer - 1];
    s->ext_answer = s->ext_answer < 4 ? s->ext_answer + 1 : 0;
    return true;
}

/* ---- verdicts out ---- */

static void ext_bracket_event(RingsideSerialState *s,
                              const rs_l1_bracket_info *bi, uint64_t run);

/* Bound on the brackets one run holds back: a follower sees them soon. */
#define EXT_OK_RUN_MAX  1024

void ringside_ext_flush(RingsideSerialState *s)
{
    if (s->ok_run_count) {
        ext_bracket_event(s, &s->ok_run, s->ok_run_count);
        s->ok_run_count = 0;
    }
}

/*
 * An ok bracket that follows the one before on the wire, from the same
 * vCPU, with the next seq, joins its run: the event says where the run's
 * bytes are, its last bracket's time, and how many ("count").
 */
static bool ext_ok_run_join(RingsideSerialState *s,
                            const rs_l1_bracket_info *bi)
{
    rs_l1_bracket_info *r = &s->ok_run;

    if (s->tx_events || bi->verdict != RS_B_OK || !bi->has_bytes ||
        bi->open || bi->nested || bi->taken) {
        return false;
    }
    if (s->ok_run_count && s->ok_run_count < EXT_OK_RUN_MAX &&
        r->cpu == bi->cpu && r->seq + s->ok_run_count == bi->seq &&
        r->last + 1 == bi->first) {
        r->last = bi->last;
        r->vt = bi->vt;
        r->len += bi->len;
        s->ok_run_count++;
        return true;
    }
    ringside_ext_flush(s);
    *r = *bi;
    s->ok_run_count = 1;
    return true;
}

static void ext_bracket(void *opaque, const rs_l1_bracket_info *bi)
{
    RingsideSerialState *s = opaque;

    trace_ringside_serial_bracket(rs_l1_bracket_name(bi->verdict), bi->seq,
                                  bi->cpu);
    if (ext_ok_run_join(s, bi)) {
        return;
    }
    ringside_ext_flush(s);
    ext_bracket_event(s, bi, 1);
}

static void ext_bracket_event(RingsideSerialState *s,
                              const rs_l1_bracket_info *bi, uint64_t run)
{
    const char *name = rs_l1_bracket_name(bi->verdict);
    char extra[200] = "";
    int n = 0;

    if (bi->has_bytes) {
        n += snprintf(extra + n, sizeof(extra) - n, ",\"first\":%" PRIu64
                      ",\"last\":%" PRIu64, bi->first, bi->last);
    }
    if (bi->open) {
        n += snprintf(extra + n, sizeof(extra) - n, ",\"open\":1");
    }
    if (bi->nested) {
        n += snprintf(extra + n, sizeof(extra) - n, ",\"nested\":1");
    }
    if (bi->taken) {
        n += snprintf(extra + n, sizeof(extra) - n, ",\"by_cpu\":%d"
                      ",\"by_seq\":%" PRIu64, bi->by_cpu, bi->by_seq);
    }
    if (bi->verdict == RS_B_CORRUPT) {
        n += snprintf(extra + n, sizeof(extra) - n,
                      ",\"at\":%d,\"want\":%d,\"got\":%d",
                      bi->at, bi->want, bi->got);
    }
    if (bi->verdict == RS_B_NOTICE) {
        n += snprintf(extra + n, sizeof(extra) - n, ",\"count\":%" PRIu64,
                      bi->count);
    }
    if (bi->verdict == RS_B_UNCHECKED && bi->why != RS_L1_WHY_NONE) {
        n += snprintf(extra + n, sizeof(extra) - n, ",\"why\":\"%s\"",
                      rs_l1_why_name(bi->why));
    }
    if (run > 1) {
        n += snprintf(extra + n, sizeof(extra) - n, ",\"count\":%" PRIu64,
                      run);
    }
    if (bi->verdict == RS_B_BOGUS) {
        ringside_guest_error(s, "bogus marker", "console record %" PRIu64
                             " marked by cpu %d is not in the ring",
                             bi->seq, bi->cpu);
    }
    ringside_event(s, RS_EV_BRACKET, ",\"verdict\":"
                   "\"%s\",\"seq\":%" PRIu64 ",\"cpu\":%d,\"vt\":%"
                   PRId64 ",\"len\":%u%s", name, bi->seq, bi->cpu,
                   bi->vt, bi->len, extra);
}

static void ext_record(void *opaque, const rs_l1_record_info *ri)
{
    RingsideSerialState *s = opaque;
    const char *name = rs_l1_record_name(ri->verdict);

    trace_ringside_serial_l1_record(name, ri->seq, ri->count);
    if (ri->verdict == RS_R_FILTERED) {
        return;                 /* counted only */
    }
    ringside_ext_flush(s);
    ringside_event(s, RS_EV_L1_RECORD, ",\"verdict\":"
                   "\"%s\",\"seq\":%" PRIu64 ",\"count\":%" PRIu64
                   ",\"level\":%d",
                   name, ri->seq, ri->count, ri->level);
}

/* ---- the window ---- */

static void ext_announce(RingsideSerialState *s, int cpu, uint32_t cmd)
{
    unsigned layout = (cmd >> 8) & 0xff;
    uint64_t note = s->ext_arg[cpu + 1];

    if (layout != RS_EXT_LAYOUT_VMCOREINFO) {
        ringside_guest_error(s, "unknown layout", "announce of an unknown "
                             "ring layout %u ignored", layout);
        return;
    }
    trace_ringside_serial_announce(note, cpu);
    s->ext_note = note;
    s->ext_announced = true;
    ringside_event(s, RS_EV_HANDSHAKE, ",\"note\":%"
                   PRIu64 ",\"layout\":%u,\"cpu\":%d", note, layout, cpu);
    ringside_attach_announced(s);
}

static uint64_t ext_mailbox_read(RingsideSerialState *s)
{
    size_t len = s->mailbox ? strlen(s->mailbox) : 0;
    uint64_t val = 0;
    int i;

    if (!len) {
        s->mailbox_waits++;
        return 0;
    }
    for (i = 0; i < 4 && s->mailbox_pos < len; i++) {
        val |= (uint64_t)(uint8_t)s->mailbox[s->mailbox_pos++] << (8 * i);
    }
    return val;
}

static uint64_t ext_read(void *opaque, hwaddr addr, unsigned size)
{
    RingsideSerialState *s = opaque;

    switch (addr) {
    case RS_EXT_BEGIN:
        return RS_EXT_ID;
    case RS_EXT_MAILBOX:
        return ext_mailbox_read(s);
    }
    return 0;
}

static void ext_do_write(RingsideSerialState *s, hwaddr addr, uint64_t val)
{
    int cpu = ext_cpu();

    if (cpu + 1 >= RS_L1_SLOTS) {
        if (!s->ext_cpu_logged) {
            s->ext_cpu_logged = true;
            qemu_log_mask(LOG_UNIMP, "ringside-serial: markers of vCPUs "
                          "above %d are not tracked\n", RS_L1_SLOTS - 2);
        }
        return;
    }
    switch (addr) {
    case RS_EXT_BEGIN:
        s->ext_marked = true;
        if (!rs_l1_begin(&s->l1, cpu, val,
                         qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL))) {
            ringside_guest_error(s, "nesting", "cpu %d nests console "
                                 "records deeper than %d", cpu, RS_L1_DEPTH);
        }
        break;
    case RS_EXT_END:
        rs_l1_end(&s->l1, cpu, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
        break;
    case RS_EXT_ARG:
        s->ext_arg[cpu + 1] = s->ext_arg[cpu + 1] << 32 | (uint32_t)val;
        break;
    case RS_EXT_CMD:
        if ((val & 0xff) == RS_EXT_CMD_ANNOUNCE) {
            ext_announce(s, cpu, val);
        } else if ((val & 0xff) == RS_EXT_CMD_MAILBOX) {
            s->mailbox_pos = 0;
        } else {
            ringside_guest_error(s, "unknown command", "unknown extension "
                                 "command 0x%" PRIx64, val);
        }
        break;
    }
}

/* One guest access: one read budget, metered (ringside-serial-attach.c). */
static void ext_write(void *opaque, hwaddr addr, uint64_t val, unsigned size)
{
    RingsideSerialState *s = opaque;

    ringside_cost_begin(s, RS_COST_ACCESS);
    ext_do_write(s, addr, val);
    ringside_cost_end(s);
}

static const MemoryRegionOps ringside_ext_ops = {
    .read = ext_read,
    .write = ext_write,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
    .endianness = DEVICE_LITTLE_ENDIAN,
};

/* ---- the device's side ---- */

void ringside_ext_byte(RingsideSerialState *s, uint8_t byte, uint64_t index,
                       bool lost)
{
    if (s->ext_marked) {
        rs_l1_byte(&s->l1, ext_cpu(), byte, index, lost);
    }
}

/*
 * Level 1 follows level 0's trust (ringside-serial-attach.c calls these
 * as the ring state changes): a ring it judges against, none, or one it
 * must not judge against.  A ring attached anew (not resumed after a
 * load) starts level 1 afresh on it: the records from before, the
 * stretch without a trusted ring among them, are not judged.
 */
void ringside_ext_ring(RingsideSerialState *s, const rs_ring *ring,
                       bool resumed)
{
    if (!s->ext_base) {
        return;
    }
    trace_ringside_serial_l1_ring(ring ? "attached" : "none", resumed);
    if (ring && !resumed) {
        rs_l1_restart(&s->l1);
    }
    rs_l1_attach(&s->l1, ring);
}

void ringside_ext_untrusted(RingsideSerialState *s)
{
    if (!s->ext_base) {
        return;
    }
    trace_ringside_serial_l1_ring("untrusted", false);
    rs_l1_distrust(&s->l1);
}

/* The guest stopped for good: judge what is open and what was skipped. */
void ringside_ext_finish(RingsideSerialState *s)
{
    const uint64_t *b = s->l1.brackets, *r = s->l1.records;

    if (!s->ext_base || !s->ext_marked) {
        return;
    }
    rs_l1_finish(&s->l1);
    ringside_ext_flush(s);
    ringside_event(s, RS_EV_L1_SUMMARY,
        ",\"brackets\":{\"ok\":%" PRIu64
        ",\"torn\":%" PRIu64 ",\"cut\":%" PRIu64 ",\"corrupt\":%" PRIu64
        ",\"dropped-notice\":%" PRIu64 ",\"overwritten\":%" PRIu64
        ",\"bogus\":%" PRIu64 ",\"unchecked\":%" PRIu64 "},"
        "\"records\":{\"delivered\":%" PRIu64 ",\"missing\":%" PRIu64
        ",\"cut\":%" PRIu64 ",\"damaged\":%" PRIu64 ",\"dropped\":%" PRIu64
        ",\"filtered\":%" PRIu64 ",\"duplicate\":%" PRIu64 "},"
        "\"takeovers\":%" PRIu64 ",\"unattributed\":%" PRIu64
        ",\"user\":%" PRIu64 ",\"under_budget\":%" PRIu64
        ",\"untrusted\":%" PRIu64, b[RS_B_OK], b[RS_B_TORN], b[RS_B_CUT],
        b[RS_B_CORRUPT], b[RS_B_NOTICE], b[RS_B_OVERWRITTEN], b[RS_B_BOGUS],
        b[RS_B_UNCHECKED], r[RS_R_DELIVERED], r[RS_R_MISSING], r[RS_R_CUT],
        r[RS_R_DAMAGED], r[RS_R_DROPPED], r[RS_R_FILTERED],
        r[RS_R_DUPLICATE], s->l1.takeovers, s->l1.unattributed,
        s->l1.user_lines, s->l1.under_budget, s->l1.untrusted);
}

/* The window's own state: the knock, the answer, what the guest said. */
static void ext_window_clear(RingsideSerialState *s)
{
    s->ext_knock = 0;
    s->ext_answer = 0;
    s->ext_announced = false;
    s->ext_marked = false;
    s->ext_note = 0;
    memset(s->ext_arg, 0, sizeof(s->ext_arg));
}

void ringside_ext_reset(RingsideSerialState *s)
{
    ext_window_clear(s);
    s->mailbox_pos = 0;
    ringside_ext_flush(s);
    rs_l1_reset(&s->l1);
}

bool ringside_ext_realize(RingsideSerialState *s, Error **errp)
{
    rs_l1_init(&s->l1, s->loglevel, ext_bracket, ext_record, s);
    if (!s->ext_base) {
        return true;
    }
    if (s->mailbox && strlen(s->mailbox) > RS_EXT_MAILBOX_MAX) {
        error_setg(errp, "mailbox: %zu bytes, at most %d",
                   strlen(s->mailbox), RS_EXT_MAILBOX_MAX);
        return false;
    }
    if (s->ext_base > 0x10000 - RS_EXT_SIZE || s->ext_base & 3) {
        error_setg(errp, "ext 0x%x: expected a 4-aligned I/O port up to "
                   "0x%x, or 0 for no extension window", s->ext_base,
                   0x10000 - RS_EXT_SIZE);
        return false;
    }
    if (s->ext_base < s->iobase + 8 && s->iobase < s->ext_base + RS_EXT_SIZE) {
        error_setg(errp, "ext 0x%x overlaps the UART's ports at 0x%x",
                   s->ext_base, s->iobase);
        return false;
    }
    memory_region_init_io(&s->ext_io, OBJECT(s), &ringside_ext_ops, s,
                          "ringside-serial-ext", RS_EXT_SIZE);
    isa_register_ioport(ISA_DEVICE(s), &s->ext_io, s->ext_base);
    return true;
}

static bool ext_get_announced(Object *obj, Error **errp)
{
    return RINGSIDE_SERIAL(obj)->ext_announced;
}

/* QOM: "l1-<verdict>" per bracket and record verdict, and the rest. */
void ringside_ext_add_props(Object *obj)
{
    RingsideSerialState *s = RINGSIDE_SERIAL(obj);
    int i;

    for (i = 0; i < RS_B_COUNT; i++) {
        g_autofree char *name = g_strdup_printf("l1-bracket-%s",
                                                rs_l1_bracket_name(i));

        object_property_add_uint64_ptr(obj, name, &s->l1.brackets[i],
                                       OBJ_PROP_FLAG_READ);
    }
    for (i = 0; i < RS_R_COUNT; i++) {
        g_autofree char *name = g_strdup_printf("l1-record-%s",
                                                rs_l1_record_name(i));

        object_property_add_uint64_ptr(obj, name, &s->l1.records[i],
                                       OBJ_PROP_FLAG_READ);
    }
    object_property_add_uint64_ptr(obj, "l1-takeovers", &s->l1.takeovers,
                                   OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "l1-unattributed",
                                   &s->l1.unattributed, OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "l1-under-budget",
                                   &s->l1.under_budget, OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "l1-user", &s->l1.user_lines,
                                   OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "l1-untrusted", &s->l1.untrusted,
                                   OBJ_PROP_FLAG_READ);
    object_property_add_bool(obj, "announced", ext_get_announced, NULL);
}

static bool ext_needed(void *opaque)
{
    RingsideSerialState *s = opaque;

    return s->ext_base != 0;
}

/* As after realize: no window state, level 1 fresh (counters too). */
void ringside_ext_forget(RingsideSerialState *s)
{
    ringside_ext_flush(s);
    ext_window_clear(s);
    rs_l1_init(&s->l1, s->loglevel, ext_bracket, ext_record, s);
}

/* QEMU loads a subsection whatever .needed says: ext=0 has no window */
static int ext_pre_load(void *opaque)
{
    RingsideSerialState *s = opaque;

    if (!s->ext_base) {
        error_report("ringside-serial: migrated state refused, it has the "
                     "extension window's state and this device has none "
                     "(ext=0 or ring=off)");
        return -EINVAL;
    }
    /* sent only when not 0: a stream without them means 0 */
    s->l1.under_budget = 0;
    s->l1.untrusted = 0;
    return 0;
}

static int ext_post_load(void *opaque, int version_id)
{
    RingsideSerialState *s = opaque;
    const char *why = NULL;

    if (s->ext_knock >= sizeof(rs_ext_key)) {
        return ringside_load_refuse(s, "ext_knock: past the key");
    }
    if (s->ext_answer > 4) {
        return ringside_load_refuse(s, "ext_answer: past the answer");
    }
    if (!rs_l1_state_ok(&s->l1, &why)) {
        return ringside_load_refuse(s, why);
    }
    return 0;
}

static const VMStateDescription vmstate_rs_l1_frame = {
    .name = "ringside-serial/l1-frame",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (VMStateField[]) {
        VMSTATE_UINT64(seq, rs_l1_frame),
        VMSTATE_UINT64(first, rs_l1_frame),
        VMSTATE_UINT64(last, rs_l1_frame),
        VMSTATE_UINT64(nbytes, rs_l1_frame),
        VMSTATE_INT64(vt, rs_l1_frame),
        VMSTATE_UINT64(by_seq, rs_l1_frame),
        VMSTATE_INT32(by_cpu, rs_l1_frame),
        VMSTATE_UINT32(len, rs_l1_frame),
        VMSTATE_UINT8(cr, rs_l1_frame),
        VMSTATE_UINT8(overlong, rs_l1_frame),
        VMSTATE_UINT8(nested, rs_l1_frame),
        VMSTATE_UINT8(lost, rs_l1_frame),
        VMSTATE_UINT8_ARRAY(text, rs_l1_frame, RS_L1_TEXT),
        VMSTATE_END_OF_LIST()
    }
};

#define L(f) l1.f

static bool ext_budget_needed(void *opaque)
{
    RingsideSerialState *s = opaque;

    return s->l1.under_budget != 0;
}

/* Records the budget left unjudged: the summary counts them from boot. */
static const VMStateDescription vmstate_ringside_ext_budget = {
    .name = "ringside-serial/ext/budget",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ext_budget_needed,
    .fields = (VMStateField[]) {
        VMSTATE_UINT64(L(under_budget), RingsideSerialState),
        VMSTATE_END_OF_LIST()
    }
};

static bool ext_untrusted_needed(void *opaque)
{
    RingsideSerialState *s = opaque;

    return s->l1.untrusted != 0;
}

/*
 * Brackets left unchecked because level 0 distrusted the ring: the
 * summary counts them from boot.  post_load checks it against the
 * unchecked brackets (rs_l1_state_ok()).
 */
static const VMStateDescription vmstate_ringside_ext_untrusted = {
    .name = "ringside-serial/ext/untrusted",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ext_untrusted_needed,
    .fields = (VMStateField[]) {
        VMSTATE_UINT64(L(untrusted), RingsideSerialState),
        VMSTATE_END_OF_LIST()
    }
};

const VMStateDescription vmstate_ringside_ext = {
    .name = "ringside-serial/ext",
    .version_id = 4,            /* 4: l1 frames of 2 KiB (6.3+ records) */
    .minimum_version_id = 4,
    .needed = ext_needed,
    .pre_load = ext_pre_load,
    .post_load = ext_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_UINT8(ext_knock, RingsideSerialState),
        VMSTATE_UINT8(ext_answer, RingsideSerialState),
        VMSTATE_BOOL(ext_announced, RingsideSerialState),
        VMSTATE_BOOL(ext_marked, RingsideSerialState),
        VMSTATE_UINT64(ext_note, RingsideSerialState),
        VMSTATE_UINT64_ARRAY(ext_arg, RingsideSerialState, RS_L1_SLOTS),
        VMSTATE_STRUCT_ARRAY(L(frames), RingsideSerialState,
                             RS_L1_SLOTS * RS_L1_DEPTH, 1,
                             vmstate_rs_l1_frame, rs_l1_frame),
        VMSTATE_UINT8_ARRAY(L(depth), RingsideSerialState, RS_L1_SLOTS),
        VMSTATE_BOOL(L(started), RingsideSerialState),
        VMSTATE_UINT64(L(next), RingsideSerialState),
        VMSTATE_UINT64_ARRAY(L(level_seq), RingsideSerialState, RS_LEVELS),
        VMSTATE_UINT8(L(fmt_flags), RingsideSerialState),
        VMSTATE_UINT64(L(dropped_credit), RingsideSerialState),
        VMSTATE_UINT64_ARRAY(L(partial_seq), RingsideSerialState,
                             RS_L1_PARTIAL),
        VMSTATE_UINT8_ARRAY(L(partial_kind), RingsideSerialState,
                            RS_L1_PARTIAL),
        VMSTATE_UINT8_ARRAY(L(window), RingsideSerialState, RS_L1_WINDOW),
        VMSTATE_UINT64_ARRAY(L(brackets), RingsideSerialState, RS_B_COUNT),
        VMSTATE_UINT64_ARRAY(L(records), RingsideSerialState, RS_R_COUNT),
        VMSTATE_UINT64(L(takeovers), RingsideSerialState),
        VMSTATE_UINT64(L(unattributed), RingsideSerialState),
        VMSTATE_UINT64(L(user_lines), RingsideSerialState),
        VMSTATE_BOOL(L(user_open), RingsideSerialState),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * []) {
        &vmstate_ringside_ext_budget,
        &vmstate_ringside_ext_untrusted,
        NULL
    }
};
