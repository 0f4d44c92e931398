/* Line accounting across joins and rotations of an event stream. */
#define _GNU_SOURCE             /* memmem */
#include "events/evledger.h"

#include <stdlib.h>
#include <string.h>

void rs_ledger_clear(RsLedger *l)
{
    g_clear_pointer(&l->start, g_free);
    memset(l, 0, sizeof(*l));
}

/* The device writes each record's members in one fixed order. */
void rs_ledger_event_name(const char *rec, gsize len, char ev[24])
{
    const char *p = memmem(rec, MIN(len, 24), ",\"ev\":\"", 7);
    gsize i = 0;

    if (p) {
        for (p += 7; p < rec + len && *p != '"' && i < 23; p++) {
            ev[i++] = *p;
        }
    }
    ev[i] = '\0';
}

/* The number after "@name": in @rec, 0 if none. */
static guint64 member_u64(const char *rec, gsize len, const char *name)
{
    g_autofree char *key = g_strdup_printf(",\"%s\":", name);
    const char *p = memmem(rec, len, key, strlen(key));

    return p ? g_ascii_strtoull(p + strlen(key), NULL, 10) : 0;
}

/* The "start" object a join record ends with: ...,"start":{...}} */
static char *join_start(const char *rec, gsize len)
{
    const char *p = memmem(rec, len, ",\"start\":{", 10);

    if (!p || len < 2 || rec[len - 1] != '}') {
        return NULL;
    }
    p += 9;
    return g_strndup(p, rec + len - 1 - p);
}

RsLedgerKind rs_ledger_feed(RsLedger *l, const char *rec, gsize len,
                            guint64 *gap, gboolean *new_run)
{
    char ev[24];

    *gap = 0;
    *new_run = FALSE;
    rs_ledger_event_name(rec, len, ev);
    if (!strcmp(ev, "line")) {
        l->lines++;
        l->seen++;
        return RS_LEDGER_LINE;
    }
    if (!strcmp(ev, "lost")) {
        guint64 n = member_u64(rec, len, "lines");

        l->lines += n;
        l->lost += n;
        return RS_LEDGER_LOST;
    }
    if (!strcmp(ev, "start")) {
        rs_ledger_clear(l);
        l->start = g_strndup(rec, len);
        *new_run = TRUE;
        return RS_LEDGER_START;
    }
    if (!strcmp(ev, "connected") || !strcmp(ev, "rotated")) {
        g_autofree char *start = join_start(rec, len);
        guint64 before = member_u64(rec, len, "lines");

        if (!start) {
            return RS_LEDGER_OTHER;
        }
        if (g_strcmp0(start, l->start)) {
            /* A run this reader did not see begin. */
            rs_ledger_clear(l);
            l->start = g_steal_pointer(&start);
            *new_run = TRUE;
        }
        if (before > l->lines) {
            *gap = before - l->lines;
            l->gaps += *gap;
            l->lines = before;
        }
        return RS_LEDGER_JOIN;
    }
    return RS_LEDGER_OTHER;
}

char *rs_ledger_rotated_record(const RsLedger *l)
{
    const char *v = l->start ? strstr(l->start, "\"v\":") : NULL;

    if (!v) {
        return NULL;
    }
    return g_strdup_printf("{\"v\":%d,\"ev\":\"rotated\",\"lines\":%"
                           G_GUINT64_FORMAT ",\"start\":%s}",
                           atoi(v + 4), l->lines, l->start);
}
