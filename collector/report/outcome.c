/* How a guest run ended, and its failure class. */
#include "report/outcome.h"

#include <string.h>
#include <stdio.h>

const char *const rs_end_names[RS_N_ENDS] = {
    [RS_END_PANIC] = "panic",
    [RS_END_POWEROFF] = "poweroff",
    [RS_END_REBOOT] = "reboot",
    [RS_END_TIMEOUT] = "timeout",
    [RS_END_QEMU_ERROR] = "qemu-error",
    [RS_END_UNKNOWN] = "exit",
};

const char *const rs_class_names[RS_N_CLASSES] = {
    [RS_CLASS_ERROR] = "error",
    [RS_CLASS_HUNG] = "hung",
    [RS_CLASS_NO_PANIC] = "guest-did-not-panic",
    [RS_CLASS_LOST] = "lost",
    [RS_CLASS_TORN] = "torn",
    [RS_CLASS_CORRUPT] = "corrupt",
    [RS_CLASS_DUPLICATED] = "duplicated",
    [RS_CLASS_CLEAN] = "clean",
};

int rs_class_from_name(const char *name)
{
    return rs_name_index(rs_class_names, RS_N_CLASSES, name);
}

static gboolean line_has(const RsLine *l, const char *needle)
{
    return g_strstr_len(l->text, l->len, needle) != NULL;
}

RsGuestEnd rs_guest_end(const RsGuestResult *res, const RsTranscript *t)
{
    guint i;

    if (res->timed_out) {
        return RS_END_TIMEOUT;
    }
    if (res->exit_status != 0) {
        return RS_END_QEMU_ERROR;
    }
    /*
     * In a printk storm the console may drop the panic line itself; the
     * backtrace through panic() and x86's panic notifier line still say it.
     */
    for (i = 0; i < t->lines->len; i++) {
        if (line_has(t->lines->pdata[i], "Kernel panic - not syncing") ||
            line_has(t->lines->pdata[i], " panic+0x") ||
            line_has(t->lines->pdata[i], "] Kernel Offset: ")) {
            return RS_END_PANIC;
        }
    }
    for (i = t->lines->len; i-- > 0;) {
        if (line_has(t->lines->pdata[i], "reboot: Power down")) {
            return RS_END_POWEROFF;
        }
        if (line_has(t->lines->pdata[i], "reboot: Restarting system")) {
            return RS_END_REBOOT;
        }
    }
    return RS_END_UNKNOWN;
}

static guint64 line_count(const RsVerdictReport *v, const char *name)
{
    int k = rs_name_index(rs_verdict_names, RS_V_LINE_COUNT, name);

    return k < 0 ? 0 : v->lines[k];
}

static guint64 l1_count(const RsL1Report *l1, gboolean record,
                        const char *name)
{
    int k = record ?
        rs_name_index(rs_l1_record_names, RS_R_COUNT,
                         name) :
        rs_name_index(rs_l1_bracket_names, RS_B_COUNT, name);

    if (k < 0 || !l1->present) {
        return 0;
    }
    return record ? l1->records[k] : l1->brackets[k];
}

static void latency_histogram(const RsEventStream *s, RsOutcome *o)
{
    guint i;

    for (i = 0; i < s->lines->len; i++) {
        const RsLineVerdict *lv = &g_array_index(s->lines, RsLineVerdict, i);
        guint64 us;
        int k = 0;

        if (!lv->has_lat || lv->lat_ns < 0 || strcmp(lv->verdict, "ok")) {
            continue;
        }
        for (us = lv->lat_ns / 1000; us > 1 && k < RS_LAT_BUCKETS - 1;
             us >>= 1) {
            k++;
        }
        o->lat_hist[k]++;
    }
}

gboolean rs_run_faithful(const RsGuestResult *res, char *why, gsize len)
{
    guint cores = g_get_num_processors();
    g_autoptr(GString) w = g_string_new(NULL);

    if (res->smp > 0 && (guint)res->smp > cores) {
        g_string_append_printf(w, "smp:%d>cores:%u", res->smp, cores);
    }
    if (res->vcpu_threads && res->vcpu_run_ns + res->vcpu_wait_ns > 0) {
        guint pct = (guint)(100.0 * res->vcpu_wait_ns /
                            (res->vcpu_run_ns + res->vcpu_wait_ns) + 0.5);

        if (pct > RS_VCPU_WAIT_MAX_PCT) {
            g_string_append_printf(w, "%svcpu-wait:%u%%", w->len ? "," : "",
                                   pct);
        }
    }
    g_strlcpy(why, w->str, len);
    return w->len == 0;
}

gboolean rs_outcome_judge(const RsGuestResult *res, RsGuestEnd expect,
                          RsOutcome *o, GError **error)
{
    g_autoptr(RsEventStream) s = NULL;
    g_autoptr(RsTranscript) t = NULL;
    guint i;

    memset(o, 0, sizeof(*o));
    s = rs_event_stream_load(res->events_path, error);
    if (!s) {
        return FALSE;
    }
    if (s->tx->len) {
        t = rs_transcript_build(s);
    } else {
        /* A device with tx-events=off: what it sent is the console log. */
        g_autofree char *text = NULL;
        gsize len = 0;

        g_file_get_contents(res->console_path, &text, &len, NULL);
        t = rs_transcript_build_console(s, text ? text : "", len);
    }
    rs_verdict_report_build(s, &o->v);
    rs_l1_report_build(s, &o->l1);
    latency_histogram(s, o);
    g_strlcpy(o->osrelease, s->osrelease, sizeof(o->osrelease));
    o->end = rs_guest_end(res, t);
    o->faithful = rs_run_faithful(res, o->unfaithful_why,
                                  sizeof(o->unfaithful_why));
    o->wire_bytes = t->wire_bytes;
    o->lines = t->lines->len;
    for (i = 0; i < t->lines->len; i++) {
        if (line_has(t->lines->pdata[i], "Kernel panic - not syncing")) {
            o->panic_line = TRUE;
        }
    }

    /*
     * Level 1 judges each record by its exact seq; level 0 matches lines
     * by content and can fail to place a line in a storm that overwrites
     * the ring under it.  So a kernel that brackets its records is judged
     * at level 1 only.
     */
    if (o->l1.present) {
        o->lost = l1_count(&o->l1, TRUE, "missing");
        o->torn = l1_count(&o->l1, FALSE, "torn") +
                  l1_count(&o->l1, TRUE, "cut");
        o->corrupt = l1_count(&o->l1, FALSE, "corrupt") +
                     l1_count(&o->l1, FALSE, "bogus") +
                     l1_count(&o->l1, TRUE, "damaged");
        o->duplicated = l1_count(&o->l1, TRUE, "duplicate");
        o->dropped = l1_count(&o->l1, TRUE, "dropped");
    } else {
        o->lost = o->v.records[RS_REC(RS_V_MISSING)];
        o->torn = line_count(&o->v, "torn");
        o->corrupt = line_count(&o->v, "corrupt") +
                     line_count(&o->v, "unmatched");
        o->duplicated = line_count(&o->v, "duplicate") +
                        line_count(&o->v, "reordered");
        o->dropped = o->v.records[RS_REC(RS_V_DROPPED)];
    }

    if (o->end == RS_END_QEMU_ERROR || s->lost_events || s->index_gaps) {
        o->klass = RS_CLASS_ERROR;
    } else if (o->end == RS_END_TIMEOUT && expect != RS_END_TIMEOUT) {
        o->klass = RS_CLASS_HUNG;
    } else if (o->end != expect) {
        o->klass = RS_CLASS_NO_PANIC;
    } else if (o->lost || (expect == RS_END_PANIC && !o->panic_line)) {
        o->klass = RS_CLASS_LOST;
    } else if (o->torn) {
        o->klass = RS_CLASS_TORN;
    } else if (o->corrupt) {
        o->klass = RS_CLASS_CORRUPT;
    } else if (o->duplicated) {
        o->klass = RS_CLASS_DUPLICATED;
    } else {
        o->klass = RS_CLASS_CLEAN;
    }
    return TRUE;
}

void rs_outcome_json(GString *out, const RsOutcome *o)
{
    int k;

    g_string_append_printf(out, "\"class\":\"%s\",\"ended\":\"%s\","
                           "\"panic_line\":%s,\"wire_bytes\":%" G_GUINT64_FORMAT
                           ",\"lines\":%" G_GUINT64_FORMAT ",\"lost\":%"
                           G_GUINT64_FORMAT ",\"torn\":%" G_GUINT64_FORMAT
                           ",\"corrupt\":%" G_GUINT64_FORMAT ",\"duplicated\":%"
                           G_GUINT64_FORMAT ",\"dropped\":%" G_GUINT64_FORMAT
                           ",\"ok\":%" G_GUINT64_FORMAT ",\"level1\":%s,"
                           "\"faithful\":%s,\"unfaithful_why\":\"%s\","
                           "\"lat_hist_log2_us\":[",
                           rs_class_names[o->klass], rs_end_names[o->end],
                           o->panic_line ? "true" : "false", o->wire_bytes,
                           o->lines, o->lost, o->torn, o->corrupt,
                           o->duplicated, o->dropped, o->v.lines[RS_V_OK],
                           o->l1.present ? "true" : "false",
                           o->faithful ? "true" : "false",
                           o->unfaithful_why);
    for (k = 0; k < RS_LAT_BUCKETS; k++) {
        g_string_append_printf(out, "%s%" G_GUINT64_FORMAT, k ? "," : "",
                               o->lat_hist[k]);
    }
    g_string_append(out, "]");
}
