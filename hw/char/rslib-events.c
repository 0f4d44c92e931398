/*
 * rslib-events.c: the names of the events and verdicts on the wire; see
 * rslib-events.h.
 */
#ifdef RINGSIDE_IN_QEMU
#include "qemu/osdep.h"
#endif
#include <string.h>
#include "rslib-events.h"

const char *const rs_event_names[RS_EV_COUNT] = {
    [RS_EV_START] = "start",
    [RS_EV_CONNECTED] = "connected",
    [RS_EV_RESUME] = "resume",
    [RS_EV_TX] = "tx",
    [RS_EV_WIRE] = "wire",
    [RS_EV_LOOP] = "loop",
    [RS_EV_OVERRUN] = "overrun",
    [RS_EV_CLEARED] = "cleared",
    [RS_EV_LINE] = "line",
    [RS_EV_RECORD] = "record",
    [RS_EV_RING] = "ring",
    [RS_EV_SUMMARY] = "summary",
    [RS_EV_HANDSHAKE] = "handshake",
    [RS_EV_BRACKET] = "bracket",
    [RS_EV_L1_RECORD] = "l1-record",
    [RS_EV_L1_SUMMARY] = "l1-summary",
    [RS_EV_LOST] = "lost",
};

const char *const rs_verdict_names[RS_V_COUNT] = {
    [RS_V_OK] = "ok",
    [RS_V_CORRUPT] = "corrupt",
    [RS_V_TORN] = "torn",
    [RS_V_DUPLICATE] = "duplicate",
    [RS_V_REORDERED] = "reordered",
    [RS_V_UNMATCHED] = "unmatched",
    [RS_V_NOTICE] = "dropped-notice",
    [RS_V_UNCHECKED] = "unchecked",
    [RS_V_OVERWRITTEN] = "overwritten",
    [RS_V_USER] = "user",
    [RS_V_REPLAYED] = "replayed",
    [RS_V_KNOTICE] = "notice",
    [RS_V_MISSING] = "missing",
    [RS_V_FILTERED] = "filtered",
    [RS_V_DROPPED] = "dropped",
};

const char *const rs_why_names[RS_WHY_COUNT] = {
    [RS_WHY_NONE] = "",
    [RS_WHY_VOUCHED] = "vouched",
    [RS_WHY_AMBIGUOUS] = "ambiguous",
    [RS_WHY_GAP] = "gap",
    [RS_WHY_BUSY] = "busy",
    [RS_WHY_GONE] = "gone",
    [RS_WHY_NO_STAMP] = "no-stamp",
    [RS_WHY_OVERLONG] = "overlong",
    [RS_WHY_BOOTCONSOLE] = "bootconsole",
};

const char *const rs_l1_bracket_names[RS_B_COUNT] = {
    [RS_B_OK] = "ok",
    [RS_B_TORN] = "torn",
    [RS_B_CUT] = "cut",
    [RS_B_CORRUPT] = "corrupt",
    [RS_B_NOTICE] = "dropped-notice",
    [RS_B_OVERWRITTEN] = "overwritten",
    [RS_B_BOGUS] = "bogus",
    [RS_B_UNCHECKED] = "unchecked",
};

const char *const rs_l1_why_names[RS_L1_WHY_COUNT] = {
    [RS_L1_WHY_NONE] = "",
    [RS_L1_WHY_NO_RING] = "none",
    [RS_L1_WHY_UNTRUSTED] = "untrusted",
    [RS_L1_WHY_BUDGET] = "budget",
};

const char *const rs_l1_record_names[RS_R_COUNT] = {
    [RS_R_DELIVERED] = "delivered",
    [RS_R_MISSING] = "missing",
    [RS_R_CUT] = "cut",
    [RS_R_DAMAGED] = "damaged",
    [RS_R_DROPPED] = "dropped",
    [RS_R_FILTERED] = "filtered",
    [RS_R_DUPLICATE] = "duplicate",
};

/* Enums may be unsigned: compare as unsigned, so a negative one is out. */
#define NAME_OR_UNKNOWN(table, count, v) \
    ((unsigned)(v) < (unsigned)(count) ? (table)[v] : "?")

const char *rs_event_name(rs_event ev)
{
    return NAME_OR_UNKNOWN(rs_event_names, RS_EV_COUNT, ev);
}

const char *rs_verdict_name(rs_verdict v)
{
    return NAME_OR_UNKNOWN(rs_verdict_names, RS_V_COUNT, v);
}

const char *rs_why_name(rs_why w)
{
    return NAME_OR_UNKNOWN(rs_why_names, RS_WHY_COUNT, w);
}

const char *rs_l1_bracket_name(rs_l1_bracket_verdict v)
{
    return NAME_OR_UNKNOWN(rs_l1_bracket_names, RS_B_COUNT, v);
}

const char *rs_l1_record_name(rs_l1_record_verdict v)
{
    return NAME_OR_UNKNOWN(rs_l1_record_names, RS_R_COUNT, v);
}

const char *rs_l1_why_name(rs_l1_why why)
{
    return NAME_OR_UNKNOWN(rs_l1_why_names, RS_L1_WHY_COUNT, why);
}

int rs_name_index(const char *const *names, int n, const char *name)
{
    int i;

    for (i = 0; i < n; i++) {
        if (!strcmp(names[i], name)) {
            return i;
        }
    }
    return -1;
}
