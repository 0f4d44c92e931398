/*
 * ringside-serial: judge every console line against the guest's printk
 * ring (level 0), live, as the guest writes it.
 *
 * The judging itself is rslib-match.c (plain C, shared with the tests);
 * this file feeds it the THR bytes, turns its verdicts into events, QOM
 * counters and trace events, writes a summary when the guest stops (panic,
 * shutdown, quit, reset) and migrates its state.
 *
 * Copyright (c) 2026 The ringside authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/qapi-types-run-state.h"
#include "qapi/visitor.h"
#include "qemu/timer.h"
#include "migration/vmstate.h"
#include "hw/char/ringside-compat.h"
#include "ringside-serial.h"
#include "trace.h"

/* Write the record verdict held back for merging, if any. */
static void verify_flush_record(RingsideSerialState *s)
{
    rs_verdict_info *p = &s->pending_record;

    if (!p->count) {
        return;
    }
    ringside_event(s, RS_EV_RECORD, ",\"verdict\":"
                   "\"%s\",\"seq\":%" PRIu64 ",\"count\":%" PRIu64
                   ",\"level\":%d",
                   rs_verdict_name(p->verdict), p->seq, p->count,
                   p->level);
    p->count = 0;
}

/*
 * Records judged missing or dropped come in runs (a console far behind
 * skips thousands): consecutive ones of a kind make one event.
 */
static void verify_record(RingsideSerialState *s, const rs_verdict_info *vi)
{
    rs_verdict_info *p = &s->pending_record;

    trace_ringside_serial_record(rs_verdict_name(vi->verdict), vi->seq,
                                 vi->count);
    if (vi->verdict == RS_V_FILTERED) {
        return;                 /* counted only: a quiet boot has many */
    }
    if (p->count && p->verdict == vi->verdict &&
        p->seq + p->count == vi->seq) {
        p->count += vi->count;
        if (p->level != vi->level) {
            p->level = -1;
        }
        return;
    }
    verify_flush_record(s);
    *p = *vi;
}

static void verify_report(void *opaque, const rs_verdict_info *vi)
{
    RingsideSerialState *s = opaque;
    const char *name = rs_verdict_name(vi->verdict);
    char extra[160] = "";
    char stamp[128];
    int n = 0;

    s->verify_dirty = true;
    if (vi->verdict >= RS_V_MISSING) {
        verify_record(s, vi);
        return;
    }
    verify_flush_record(s);
    trace_ringside_serial_line(name, vi->first, vi->last, vi->seq);
    if (vi->has_seq) {
        n += snprintf(extra + n, sizeof(extra) - n, ",\"seq\":%" PRIu64,
                      vi->seq);
    }
    if (vi->under_budget) {
        n += snprintf(extra + n, sizeof(extra) - n, ",\"budget\":1");
    }
    switch (vi->verdict) {
    case RS_V_OK:
        if (vi->has_ts) {
            n += snprintf(extra + n, sizeof(extra) - n, ",\"ts\":%" PRIu64,
                          vi->ts_nsec);
        }
        if (vi->has_latency) {
            n += snprintf(extra + n, sizeof(extra) - n, ",\"lat\":%" PRId64,
                          vi->latency);
        }
        if (vi->fresh) {
            n += snprintf(extra + n, sizeof(extra) - n, ",\"fresh\":1");
        }
        break;
    case RS_V_CORRUPT:
        n += snprintf(extra + n, sizeof(extra) - n,
                      ",\"at\":%d,\"want\":%d,\"got\":%d",
                      vi->at, vi->want, vi->got);
        break;
    case RS_V_TORN:
        if (vi->has_seq2) {
            n += snprintf(extra + n, sizeof(extra) - n, ",\"seq2\":%" PRIu64,
                          vi->seq2);
        }
        if (vi->by_user) {
            n += snprintf(extra + n, sizeof(extra) - n,
                          ",\"by\":\"user\",\"uat\":%u,\"ulen\":%u",
                          vi->user_at, vi->user_len);
        }
        break;
    case RS_V_USER:
    case RS_V_UNMATCHED:
        if (vi->why != RS_WHY_NONE) {
            n += snprintf(extra + n, sizeof(extra) - n, ",\"why\":\"%s\"",
                          rs_why_name(vi->why));
        }
        break;
    case RS_V_NOTICE:
        n += snprintf(extra + n, sizeof(extra) - n, ",\"count\":%" PRIu64,
                      vi->count);
        break;
    case RS_V_REPLAYED:
        if (vi->at >= 0) {      /* the cut copy: where it was cut */
            n += snprintf(extra + n, sizeof(extra) - n, ",\"at\":%d",
                          vi->at);
        }
        break;
    default:
        break;
    }
    ringside_line_fields(s, stamp, sizeof(stamp), vi->first, vi->last,
                         vi->vt);
    ringside_event(s, RS_EV_LINE, ",\"verdict\":\"%s\""
                   ",\"first\":%" PRIu64 ",\"last\":%" PRIu64
                   ",\"vt\":%" PRId64 "%s,\"len\":%u%s", name, vi->first,
                   vi->last, vi->vt, stamp, vi->len, extra);
}

/*
 * The ring broke a rule.  If the note we attached with has changed, a new
 * kernel is running (kexec without a reset): look for its ring.  If not,
 * the guest's ring cannot be trusted until the next reset.
 */
static void verify_untrusted(void *opaque, const char *reason)
{
    RingsideSerialState *s = opaque;

    trace_ringside_serial_untrusted(reason);
    if (!ringside_attach_note_unchanged(s)) {
        ringside_attach_restart(s, "note changed");
    } else {
        ringside_attach_untrusted(s, reason);
    }
}

void ringside_verify_attached(RingsideSerialState *s, bool resumed)
{
    if (resumed) {
        rs_match_resume(&s->match, &s->ring);
    } else {
        rs_match_attach(&s->match, &s->ring);
    }
}

void ringside_verify_byte(RingsideSerialState *s, uint8_t byte,
                          uint64_t index, int64_t vt)
{
    uint32_t run = s->match.unmatched_run;

    rs_match_byte(&s->match, byte, index, vt);
    /* Many lines in a row that nothing explains: a new kernel? */
    if (s->match.unmatched_run >= 32 && run < 32 &&
        s->ring_state == RS_RING_ATTACHED &&
        !ringside_attach_note_unchanged(s)) {
        rs_match_detach(&s->match);
        ringside_attach_restart(s, "note changed");
    }
}

static void verify_summary(RingsideSerialState *s, const char *reason)
{
    const uint64_t *c = s->match.counts;
    rs_latency lat;

    verify_flush_record(s);
    rs_match_latency(&s->match, &lat);
    trace_ringside_serial_summary(reason);
    ringside_event(s, RS_EV_SUMMARY,
        ",\"reason\":\"%s\",\"ring\":\"%s\","
        "\"lines\":{\"ok\":%" PRIu64 ",\"corrupt\":%" PRIu64
        ",\"torn\":%" PRIu64 ",\"duplicate\":%" PRIu64
        ",\"reordered\":%" PRIu64 ",\"unmatched\":%" PRIu64
        ",\"dropped-notice\":%" PRIu64 ",\"unchecked\":%" PRIu64
        ",\"overwritten\":%" PRIu64 ",\"user\":%" PRIu64
        ",\"replayed\":%" PRIu64 ",\"notice\":%" PRIu64 "},"
        "\"records\":{\"missing\":%" PRIu64 ",\"filtered\":%" PRIu64
        ",\"dropped\":%" PRIu64 "},"
        "\"lat\":{\"n\":%" PRIu64 ",\"min\":%" PRId64 ",\"p50\":%" PRId64
        ",\"p99\":%" PRId64 ",\"max\":%" PRId64 ",\"negative\":%" PRIu64
        ",\"clock_offset\":%" PRId64 "},\"prefix\":%d,"
        "\"under_budget\":%" PRIu64, reason,
        ringside_ring_state_names[s->ring_state],
        c[RS_V_OK], c[RS_V_CORRUPT], c[RS_V_TORN], c[RS_V_DUPLICATE],
        c[RS_V_REORDERED], c[RS_V_UNMATCHED], c[RS_V_NOTICE],
        c[RS_V_UNCHECKED], c[RS_V_OVERWRITTEN], c[RS_V_USER],
        c[RS_V_REPLAYED], c[RS_V_KNOTICE], c[RS_V_MISSING],
        c[RS_V_FILTERED],
        c[RS_V_DROPPED], lat.n, lat.min, lat.p50, lat.p99, lat.max,
        lat.negative, lat.clock_offset,
        s->match.have_fmt ? s->match.fmt_flags : -1,
        s->match.under_budget);
    s->verify_dirty = false;
}

/* A backlog entry's header, as backlog_put() in rslib-match.c lays it. */
#define VERIFY_BL_HDR   (4 + 8 + 8 + 8 + 8)     /* len, first, last, vt, vt0 */

/*
 * The boot ends with lines from before the ring that the replay's budget
 * has not reached: each is unchecked for want of budget, counted in the
 * verdict and under-budget counters and reported, in order; none drops
 * out of the backlog unseen.  The entries are as rs_match_state_ok()
 * checked them after a load, or as the device made them.
 */
static void verify_backlog_unread(RingsideSerialState *s)
{
    rs_match *m = &s->match;
    uint32_t off = 0, n;
    uint64_t lines = 0;

    while (m->backlog_len - off >= VERIFY_BL_HDR) {
        rs_verdict_info vi = {
            .verdict = RS_V_UNCHECKED, .under_budget = true,
            .at = -1, .want = -1, .got = -1, .level = -1,
        };

        memcpy(&n, m->backlog + off, 4);
        if (n > m->backlog_len - off - VERIFY_BL_HDR) {
            break;
        }
        memcpy(&vi.first, m->backlog + off + 4, 8);
        memcpy(&vi.last, m->backlog + off + 12, 8);
        memcpy(&vi.vt, m->backlog + off + 20, 8);
        vi.len = n;
        m->counts[RS_V_UNCHECKED]++;
        m->under_budget++;
        lines++;
        verify_report(s, &vi);
        off += VERIFY_BL_HDR + n;
    }
    m->backlog_len = 0;
    if (lines) {
        trace_ringside_serial_backlog_unread(lines);
    }
}

/* The guest is done (or stopped for good): judge what is left. */
static void verify_finish(RingsideSerialState *s, const char *reason)
{
    rs_match_finish(&s->match, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL));
    /* without a ring the finish judged them all; with one, the budget */
    if (s->match.backlog_len) {
        verify_backlog_unread(s);
    }
    if (s->verify_dirty) {
        verify_summary(s, reason);
    }
    ringside_ext_finish(s);
}

/*
 * Panic (with a pvpanic device), shutdown and quit end the guest: the
 * console has printed all it will.  Other stops (a "stop" command,
 * savevm) only get a summary of what was judged so far.
 */
static void verify_vm_state(void *opaque, bool running, RunState state)
{
    RingsideSerialState *s = opaque;

    if (running) {
        return;
    }
    ringside_cost_begin(s, RS_COST_TICK);
    verify_flush_record(s);
    ringside_ext_flush(s);
    if (state == RUN_STATE_SHUTDOWN || state == RUN_STATE_GUEST_PANICKED ||
        state == RUN_STATE_INTERNAL_ERROR) {
        verify_finish(s, RunState_str(state));
    } else if (s->verify_dirty) {
        verify_summary(s, RunState_str(state));
    }
    ringside_cost_end(s);
}

/* A reset ends one boot: judge it, then start afresh for the next. */
void ringside_verify_reset(RingsideSerialState *s)
{
    if (s->match.ring || s->match.len || s->match.backlog_len) {
        verify_finish(s, "reset");
    }
    rs_match_detach(&s->match);
    s->match.len = 0;
    s->match.overlong = false;
    s->match.cr = false;
    s->match.backlog_len = 0;
}

void ringside_verify_realize(RingsideSerialState *s)
{
    rs_match_init(&s->match, s->loglevel, verify_report, verify_untrusted, s);
    s->vmse = qemu_add_vm_change_state_handler(verify_vm_state, s);
}

void ringside_verify_unrealize(RingsideSerialState *s)
{
    qemu_del_vm_change_state_handler(s->vmse);
    s->vmse = NULL;
}

/* QOM: a counter per verdict, "verdict-<name>", and latency figures. */
static void verify_get_latency(Object *obj, Visitor *v, const char *name,
                               void *opaque, Error **errp)
{
    RingsideSerialState *s = RINGSIDE_SERIAL(obj);
    const char *which = opaque;
    rs_latency lat;
    uint64_t val;

    rs_match_latency(&s->match, &lat);
    if (!strcmp(which, "n")) {
        val = lat.n;
    } else if (!strcmp(which, "min")) {
        val = lat.min;
    } else if (!strcmp(which, "median")) {
        val = lat.p50;
    } else if (!strcmp(which, "p99")) {
        val = lat.p99;
    } else {
        val = lat.max;
    }
    visit_type_uint64(v, name, &val, errp);
}

void ringside_verify_add_props(Object *obj)
{
    RingsideSerialState *s = RINGSIDE_SERIAL(obj);
    static const char *const lat[] = { "n", "min", "median", "p99", "max" };
    int i;

    for (i = 0; i < RS_V_COUNT; i++) {
        g_autofree char *name = g_strdup_printf("verdict-%s",
                                                rs_verdict_name(i));

        object_property_add_uint64_ptr(obj, name, &s->match.counts[i],
                                       OBJ_PROP_FLAG_READ);
    }
    for (i = 0; i < ARRAY_SIZE(lat); i++) {
        g_autofree char *name = g_strdup_printf("latency-%s%s", lat[i],
                                                i ? "-ns" : "");

        object_property_add(obj, name, "uint64", verify_get_latency, NULL,
                            NULL, (void *)lat[i]);
    }
    /* lines and records not judged for want of read budget */
    object_property_add_uint64_ptr(obj, "under-budget",
                                   &s->match.under_budget,
                                   OBJ_PROP_FLAG_READ);
}

static bool verify_needed(void *opaque)
{
    RingsideSerialState *s = opaque;

    return s->ring_auto;
}

/* A line held back for the next one is judged now: the stream ends here. */
static int verify_pre_save(void *opaque)
{
    RingsideSerialState *s = opaque;

    rs_match_flush(&s->match);
    return 0;
}

/* QEMU loads a subsection whatever .needed says: ring=off has no checker */
static int verify_pre_load(void *opaque)
{
    RingsideSerialState *s = opaque;

    if (!s->ring_auto) {
        error_report("ringside-serial: migrated state refused, it checks "
                     "the console against the guest's ring and this "
                     "device has ring=off");
        return -EINVAL;
    }
    return 0;
}

/* Until the ring is open again: fresh, as the device was realized. */
void ringside_verify_forget(RingsideSerialState *s)
{
    rs_match_init(&s->match, s->loglevel, verify_report, verify_untrusted, s);
    s->pending_record.count = 0;
    s->verify_dirty = false;
    s->ring_state = RS_RING_NONE;
    s->note_gpa = 0;
}

static int verify_post_load(void *opaque, int version_id)
{
    RingsideSerialState *s = opaque;
    const char *why = NULL;

    if (s->ring_state < RS_RING_NONE || s->ring_state > RS_RING_UNTRUSTED) {
        return ringside_load_refuse(s, "ring_state: not a ring state");
    }
    if (!rs_match_state_ok(&s->match, &why)) {
        return ringside_load_refuse(s, why);
    }
    s->match.ring = NULL;
    s->match.held = false;
    ringside_attach_post_load(s);
    return 0;
}

#define M(f) match.f

static bool verify_budget_needed(void *opaque)
{
    RingsideSerialState *s = opaque;

    return s->match.under_budget != 0;
}

/* Lines and records the budget left unjudged: the summary counts them. */
static const VMStateDescription vmstate_ringside_verify_budget = {
    .name = "ringside-serial/verify/budget",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = verify_budget_needed,
    .fields = (VMStateField[]) {
        VMSTATE_UINT64(M(under_budget), RingsideSerialState),
        VMSTATE_END_OF_LIST()
    }
};

const VMStateDescription vmstate_ringside_verify = {
    .name = "ringside-serial/verify",
    .version_id = 4,            /* 4: records of up to 2 KiB (6.3+) */
    .minimum_version_id = 4,
    .needed = verify_needed,
    .pre_load = verify_pre_load,
    .pre_save = verify_pre_save,
    .post_load = verify_post_load,
    .fields = (VMStateField[]) {
        VMSTATE_INT32(ring_state, RingsideSerialState),
        VMSTATE_UINT64(note_gpa, RingsideSerialState),
        VMSTATE_UINT8_ARRAY(M(line), RingsideSerialState, RS_MATCH_LINE_MAX),
        VMSTATE_UINT32(M(len), RingsideSerialState),
        VMSTATE_BOOL(M(overlong), RingsideSerialState),
        VMSTATE_BOOL(M(cr), RingsideSerialState),
        VMSTATE_UINT64(M(first), RingsideSerialState),
        VMSTATE_BOOL(M(started), RingsideSerialState),
        VMSTATE_UINT64(M(cursor), RingsideSerialState),
        VMSTATE_UINT64_ARRAY(M(level_seq), RingsideSerialState, RS_LEVELS),
        VMSTATE_BOOL(M(have_fmt), RingsideSerialState),
        VMSTATE_UINT8(M(fmt_flags), RingsideSerialState),
        VMSTATE_UINT64(M(dropped_credit), RingsideSerialState),
        VMSTATE_UINT64(M(gone_credit), RingsideSerialState),
        VMSTATE_UINT8_ARRAY(M(window), RingsideSerialState, RS_MATCH_WINDOW),
        VMSTATE_UINT32(M(unmatched_run), RingsideSerialState),
        VMSTATE_BOOL(M(in_rec), RingsideSerialState),
        VMSTATE_UINT64(M(rec_seq), RingsideSerialState),
        VMSTATE_UINT64(M(rec_ts), RingsideSerialState),
        VMSTATE_UINT8_ARRAY(M(rec), RingsideSerialState, RS_CONSOLE_TEXT_MAX),
        VMSTATE_UINT32(M(rec_len), RingsideSerialState),
        VMSTATE_UINT32(M(rec_off), RingsideSerialState),
        VMSTATE_UINT8_ARRAY(M(resid), RingsideSerialState, RS_MATCH_LINE_MAX),
        VMSTATE_UINT32(M(resid_len), RingsideSerialState),
        VMSTATE_UINT64(M(resid_seq), RingsideSerialState),
        VMSTATE_UINT8_ARRAY(M(backlog), RingsideSerialState,
                            RS_MATCH_BACKLOG),
        VMSTATE_UINT32(M(backlog_len), RingsideSerialState),
        VMSTATE_UINT64_ARRAY(M(counts), RingsideSerialState, RS_V_COUNT),
        VMSTATE_UINT64_ARRAY(M(hist), RingsideSerialState, RS_MATCH_HIST),
        VMSTATE_INT64(M(vt_first), RingsideSerialState),
        VMSTATE_BOOL(M(have_offset), RingsideSerialState),
        VMSTATE_INT64(M(clock_offset), RingsideSerialState),
        VMSTATE_INT64(M(lat_min), RingsideSerialState),
        VMSTATE_INT64(M(lat_max), RingsideSerialState),
        VMSTATE_UINT64(M(lat_n), RingsideSerialState),
        VMSTATE_UINT64(M(lat_negative), RingsideSerialState),
        VMSTATE_UINT8(M(replay), RingsideSerialState),
        VMSTATE_UINT64(M(replay_seq), RingsideSerialState),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * []) {
        &vmstate_ringside_verify_budget,
        NULL
    }
};
