/* Parsing and checking of ringside-serial's event stream. */
#include "events/events.h"
#include "errors.h"

#include <gio/gio.h>
#include <json-glib/json-glib.h>
#include <string.h>

/* Where the first byte with an index >= @index is (tx->len if none). */
static guint tx_lower_bound(const RsEventStream *s, guint64 index)
{
    guint lo = 0, hi = s->tx->len;

    /* Indexes only grow along the stream: binary search. */
    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;

        if (g_array_index(s->tx, RsTxByte, mid).index < index) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

RsTxByte *rs_event_stream_byte(RsEventStream *s, guint64 index)
{
    guint at = tx_lower_bound(s, index);
    RsTxByte *b = at < s->tx->len ? &g_array_index(s->tx, RsTxByte, at) :
                  NULL;

    return b && b->index == index ? b : NULL;
}

void rs_event_stream_trim_tx(RsEventStream *s, guint64 before)
{
    /* Never the last byte: the next "tx" is checked against it. */
    guint drop = MIN(tx_lower_bound(s, before),
                     s->tx->len ? s->tx->len - 1 : 0);

    if (drop) {
        g_array_remove_range(s->tx, 0, drop);
    }
}

void rs_event_stream_free(RsEventStream *s)
{
    if (s) {
        g_array_unref(s->tx);
        g_array_unref(s->lines);
        g_array_unref(s->records);
        g_hash_table_unref(s->summary_counts);
        g_array_unref(s->brackets);
        g_array_unref(s->l1_records);
        g_hash_table_unref(s->l1_summary);
        g_array_unref(s->offwire);
        g_array_unref(s->cleared);
        g_free(s);
    }
}

static gboolean member_int(JsonObject *o, const char *name, gint64 min,
                           gint64 max, gint64 *out)
{
    JsonNode *n = json_object_get_member(o, name);

    if (!n || !JSON_NODE_HOLDS_VALUE(n) ||
        json_node_get_value_type(n) != G_TYPE_INT64) {
        return FALSE;
    }
    *out = json_node_get_int(n);
    return *out >= min && *out <= max;
}

static gboolean parse_tx(JsonObject *o, RsTxByte *tx)
{
    gint64 i, vt, ht, cpu, b, loop = 0;

    if (!member_int(o, "i", 0, G_MAXINT64, &i) ||
        !member_int(o, "vt", 0, G_MAXINT64, &vt) ||
        !member_int(o, "ht", G_MININT64, G_MAXINT64, &ht) ||
        !member_int(o, "cpu", -1, G_MAXINT32, &cpu) ||
        !member_int(o, "b", 0, 255, &b)) {
        return FALSE;
    }
    if (json_object_has_member(o, "loop") &&
        !member_int(o, "loop", 0, 1, &loop)) {
        return FALSE;
    }
    *tx = (RsTxByte) {
        .index = i, .vt_ns = vt, .ht_ns = ht, .cpu = cpu, .byte = b,
        .loopback = loop, .wt_ns = -1,
    };
    return TRUE;
}

static gboolean member_str(JsonObject *o, const char *name, char *buf,
                           gsize len)
{
    const char *v = json_object_get_string_member_with_default(o, name, NULL);

    if (!v || strlen(v) >= len) {
        return FALSE;
    }
    g_strlcpy(buf, v, len);
    return TRUE;
}

/* An optional integer member: absent is fine, present must be in range. */
static gboolean member_opt(JsonObject *o, const char *name, gint64 min,
                           gint64 max, gint64 *out, gboolean *has)
{
    gboolean present = json_object_has_member(o, name);

    if (has) {
        *has = present;
    }
    return !present || member_int(o, name, min, max, out);
}

static gboolean parse_line_verdict(JsonObject *o, RsLineVerdict *lv)
{
    gint64 first, last, vt, len, seq = 0, seq2 = 0, ts = 0, lat = 0,
           count = 0, at = -1, want = -1, got = -1, fresh = 0, uat = 0,
           ulen = 0, dt = 0, cpu = -1, cpus = 0, q0 = 0, q = 0;
    char by[8] = "";

    memset(lv, 0, sizeof(*lv));
    if (!member_str(o, "verdict", lv->verdict, sizeof(lv->verdict)) ||
        !member_int(o, "first", 0, G_MAXINT64, &first) ||
        !member_int(o, "last", first, G_MAXINT64, &last) ||
        !member_int(o, "vt", 0, G_MAXINT64, &vt) ||
        !member_int(o, "len", 0, G_MAXUINT32, &len) ||
        !member_opt(o, "seq", 0, G_MAXINT64, &seq, &lv->has_seq) ||
        !member_opt(o, "seq2", 0, G_MAXINT64, &seq2, NULL) ||
        !member_opt(o, "ts", 0, G_MAXINT64, &ts, &lv->has_ts) ||
        !member_opt(o, "lat", G_MININT64, G_MAXINT64, &lat, &lv->has_lat) ||
        !member_opt(o, "fresh", 1, 1, &fresh, &lv->fresh) ||
        !member_opt(o, "count", 0, G_MAXINT64, &count, NULL) ||
        !member_opt(o, "at", 0, G_MAXINT32, &at, NULL) ||
        !member_opt(o, "want", -1, 255, &want, NULL) ||
        !member_opt(o, "got", -1, 255, &got, NULL) ||
        !member_opt(o, "uat", 0, G_MAXUINT32, &uat, NULL) ||
        !member_opt(o, "ulen", 0, G_MAXUINT32, &ulen, NULL) ||
        (json_object_has_member(o, "by") &&
         (!member_str(o, "by", by, sizeof(by)) || strcmp(by, "user"))) ||
        (json_object_has_member(o, "why") &&
         !member_str(o, "why", lv->why, sizeof(lv->why))) ||
        !member_opt(o, "dt", 0, vt, &dt, &lv->has_stamp) ||
        !member_opt(o, "cpu", -1, G_MAXINT32, &cpu, NULL) ||
        !member_opt(o, "cpus", 1, 1, &cpus, &lv->mixed_cpus) ||
        !member_opt(o, "q0", 0, vt - dt, &q0, NULL) ||
        !member_opt(o, "q", 0, vt, &q, NULL)) {
        return FALSE;
    }
    lv->cpu = cpu;
    lv->q0_ns = q0;
    lv->q_ns = q;
    lv->first_vt_ns = lv->has_stamp ? vt - dt : -1;
    lv->by_user = by[0] != '\0';
    lv->user_at = uat;
    lv->user_len = ulen;
    lv->first = first;
    lv->last = last;
    lv->vt_ns = vt;
    lv->len = len;
    lv->seq = seq;
    lv->seq2 = seq2;
    lv->ts_ns = ts;
    lv->lat_ns = lat;
    lv->count = count;
    lv->at = at;
    lv->want = want;
    lv->got = got;
    return TRUE;
}

static gboolean parse_record_verdict(JsonObject *o, RsRecordVerdict *rv)
{
    gint64 seq, count, level;

    memset(rv, 0, sizeof(*rv));
    if (!member_str(o, "verdict", rv->verdict, sizeof(rv->verdict)) ||
        !member_int(o, "seq", 0, G_MAXINT64, &seq) ||
        !member_int(o, "count", 1, G_MAXINT64, &count) ||
        !member_int(o, "level", -1, 7, &level)) {
        return FALSE;
    }
    rv->seq = seq;
    rv->count = count;
    rv->level = level;
    return TRUE;
}

/*
 * A summary's object of counts @which, into @into as name -> count, each
 * name preceded by @prefix.
 */
static gboolean parse_counts(GHashTable *into, JsonObject *o,
                             const char *which, const char *prefix)
{
    JsonNode *n = json_object_get_member(o, which);
    g_autoptr(GList) names = NULL;
    JsonObject *c;
    GList *l;

    if (!n || !JSON_NODE_HOLDS_OBJECT(n)) {
        return FALSE;
    }
    c = json_node_get_object(n);
    names = json_object_get_members(c);
    for (l = names; l; l = l->next) {
        gint64 v;

        if (!member_int(c, l->data, 0, G_MAXINT64, &v)) {
            return FALSE;
        }
        g_hash_table_insert(into, g_strconcat(prefix, l->data, NULL),
                            g_memdup2(&v, sizeof(v)));
    }
    return TRUE;
}

static gboolean parse_bracket(JsonObject *o, RsBracket *b)
{
    gint64 seq, cpu, len, vt, first = 0, last = 0, open = 0, nested = 0,
           by_cpu = -1, by_seq = 0, at = -1, want = -1, got = -1, count = 0;

    memset(b, 0, sizeof(*b));
    if (!member_str(o, "verdict", b->verdict, sizeof(b->verdict)) ||
        !member_int(o, "seq", 0, G_MAXINT64, &seq) ||
        !member_int(o, "cpu", -1, G_MAXINT32, &cpu) ||
        !member_int(o, "vt", 0, G_MAXINT64, &vt) ||
        !member_int(o, "len", 0, G_MAXUINT32, &len) ||
        !member_opt(o, "first", 0, G_MAXINT64, &first, &b->has_bytes) ||
        !member_opt(o, "last", first, G_MAXINT64, &last, NULL) ||
        !member_opt(o, "open", 1, 1, &open, &b->open) ||
        !member_opt(o, "nested", 1, 1, &nested, &b->nested) ||
        !member_opt(o, "by_cpu", -1, G_MAXINT32, &by_cpu, &b->taken) ||
        !member_opt(o, "by_seq", 0, G_MAXINT64, &by_seq, NULL) ||
        !member_opt(o, "at", 0, G_MAXINT32, &at, NULL) ||
        !member_opt(o, "want", -1, 255, &want, NULL) ||
        !member_opt(o, "got", -1, 255, &got, NULL) ||
        !member_opt(o, "count", 0, G_MAXINT64, &count, NULL)) {
        return FALSE;
    }
    b->run = g_str_equal(b->verdict, "ok") && count > 1 ? count : 1;
    b->seq = seq;
    b->cpu = cpu;
    b->first = first;
    b->last = last;
    b->by_cpu = by_cpu;
    b->by_seq = by_seq;
    b->at = at;
    b->want = want;
    b->got = got;
    return TRUE;
}

static gboolean add_tx(RsEventStream *s, const RsTxByte *tx, GError **error)
{
    guint64 expected = s->tx->len ?
        g_array_index(s->tx, RsTxByte, s->tx->len - 1).index + 1 :
        s->resume_index;

    if (tx->index < expected) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "byte index %" G_GUINT64_FORMAT " repeats or goes "
                    "back (expected %" G_GUINT64_FORMAT ")",
                    tx->index, expected);
        return FALSE;
    }
    s->index_gaps += tx->index - expected;
    g_array_append_val(s->tx, *tx);
    return TRUE;
}

/*
 * A "wire", "overrun" or "cleared" record accounts for byte @i; a "wire"
 * record with "refused" says the console chardev never took it.
 */
static gboolean account_byte(RsEventStream *s, rs_event ev, gint64 i,
                             gint64 wt, gboolean refused, GError **error)
{
    gboolean wire = ev == RS_EV_WIRE;
    RsTxByte *b = rs_event_stream_byte(s, i);
    guint64 u = i;

    if (!wire || refused) {
        g_array_append_val(s->offwire, u);
    }
    if (!b && !s->tx->len && !s->resume_index && (!wire || refused)) {
        /* tx-events=off: no bytes to mark, only losses to count. */
        if (refused) {
            s->notx_refused++;
        } else if (ev == RS_EV_OVERRUN) {
            s->notx_overrun++;
        } else {
            s->notx_cleared++;
        }
        return TRUE;
    }
    if (!b || b->wt_ns >= 0 || b->overrun || b->cleared || b->refused ||
        (wire && wt < b->vt_ns)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "\"%s\" record for byte %" G_GINT64_FORMAT " that "
                    "was not written, or is already accounted for",
                    rs_event_name(ev), i);
        return FALSE;
    }
    if (refused) {
        b->refused = TRUE;
    } else if (wire) {
        b->wt_ns = wt;
    } else if (ev == RS_EV_OVERRUN) {
        b->overrun = TRUE;
    } else {
        b->cleared = TRUE;
    }
    return TRUE;
}

/* A JSON integer at *p (no sign unless @neg, no leading zero), consumed. */
static gboolean fast_int(const char **p, gboolean neg, gint64 *out)
{
    const char *s = *p;
    gboolean minus = neg && *s == '-';
    guint64 v = 0;

    s += minus;
    if (*s < '0' || *s > '9' || (*s == '0' && s[1] >= '0' && s[1] <= '9')) {
        return FALSE;
    }
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > ((guint64)G_MAXINT64 - (*s - '0')) / 10) {
            return FALSE;
        }
        v = v * 10 + (*s - '0');
    }
    *out = minus ? -(gint64)v : (gint64)v;
    *p = s;
    return TRUE;
}

static gboolean fast_lit(const char **p, const char *lit)
{
    gsize n = strlen(lit);

    if (strncmp(*p, lit, n)) {
        return FALSE;
    }
    *p += n;
    return TRUE;
}

/* Longer than any head the device writes ({"v":N,"ev":"NAME"). */
#define EVENT_HEAD_MAX  64

/*
 * The event type in the head the device writes ({"v":N,"ev":"NAME"), N a
 * version this reader takes, or -1; @head_len, if given, its length.
 */
static int event_head(const char *line, gsize len, gsize *head_len)
{
    static const char v[] = "{\"v\":", ev[] = ",\"ev\":\"";
    const char *p = line, *end = line + len, *name;
    char buf[32];
    gint64 version = 0;

    if (len < sizeof(v) - 1 || memcmp(p, v, sizeof(v) - 1)) {
        return -1;
    }
    p += sizeof(v) - 1;
    while (p < end && g_ascii_isdigit(*p) && version <= RS_EVENTS_VERSION) {
        version = version * 10 + (*p++ - '0');
    }
    if (version < RS_EVENTS_VERSION_MIN || version > RS_EVENTS_VERSION ||
        (gsize)(end - p) < sizeof(ev) - 1 || memcmp(p, ev, sizeof(ev) - 1)) {
        return -1;
    }
    name = p += sizeof(ev) - 1;
    while (p < end && *p != '"' && p - name < (gssize)sizeof(buf) - 1) {
        p++;
    }
    if (p == end || *p != '"') {
        return -1;
    }
    memcpy(buf, name, p - name);
    buf[p - name] = '\0';
    if (head_len) {
        *head_len = p + 1 - line;
    }
    return rs_name_index(rs_event_names, RS_EV_COUNT, buf);
}

/*
 * "tx" and "wire" records are nearly all of a stream: those exactly as
 * the device writes them are read here without a JSON parser.  Anything
 * else (other spacing, order, members) goes through json-glib, with the
 * same checks.  Returns FALSE if the line is not one of them.
 */
static gboolean parse_fast(RsEventStream *s, const char *line,
                           gboolean *ok, GError **error)
{
    gsize head = 0;
    int ev = event_head(line, strnlen(line, EVENT_HEAD_MAX), &head);
    const char *p = line + head;
    gint64 i, vt, ht, cpu, b, wt;

    /* tx and wire records are alike in every version read */
    if (ev == RS_EV_TX) {
        gboolean loop;
        RsTxByte tx;

        if (!fast_lit(&p, ",\"i\":") || !fast_int(&p, FALSE, &i) ||
            !fast_lit(&p, ",\"vt\":") ||
            !fast_int(&p, FALSE, &vt) || !fast_lit(&p, ",\"ht\":") ||
            !fast_int(&p, TRUE, &ht) || !fast_lit(&p, ",\"cpu\":") ||
            !fast_int(&p, TRUE, &cpu) || !fast_lit(&p, ",\"b\":") ||
            !fast_int(&p, FALSE, &b) || cpu < -1 || cpu > G_MAXINT32 ||
            b > 255) {
            return FALSE;
        }
        loop = fast_lit(&p, ",\"loop\":1");
        if (strcmp(p, "}")) {
            return FALSE;
        }
        tx = (RsTxByte) {
            .index = i, .vt_ns = vt, .ht_ns = ht, .cpu = cpu, .byte = b,
            .loopback = loop, .wt_ns = -1,
        };
        if (loop) {
            guint64 u = i;

            g_array_append_val(s->offwire, u);
        }
        *ok = add_tx(s, &tx, error);
        return TRUE;
    }
    if (ev == RS_EV_WIRE) {
        if (!fast_lit(&p, ",\"i\":") || !fast_int(&p, FALSE, &i) ||
            !fast_lit(&p, ",\"wt\":") || !fast_int(&p, FALSE, &wt) ||
            strcmp(p, "}")) {
            return FALSE;
        }
        *ok = account_byte(s, RS_EV_WIRE, i, wt, FALSE, error);
        return TRUE;
    }
    return FALSE;
}

/*
 * One handler per event type: FALSE for a malformed record, with @error
 * set or left for parse_line to say so.
 */
typedef struct {
    rs_event ev;
    JsonObject *o;
    gint64 v;           /* its schema version */
    GError **error;
} EventRecord;
typedef gboolean (*EventHandler)(RsEventStream *s, const EventRecord *r);

static gboolean ev_tx(RsEventStream *s, const EventRecord *r)
{
    RsTxByte tx;

    if (!parse_tx(r->o, &tx)) {
        return FALSE;
    }
    if (tx.loopback) {
        guint64 u = tx.index;

        g_array_append_val(s->offwire, u);
    }
    return add_tx(s, &tx, r->error);
}

static gboolean ev_loop(RsEventStream *s, const EventRecord *r)
{
    gint64 n;
    guint64 u;

    if (!member_int(r->o, "i", 0, G_MAXINT64, &n)) {
        return FALSE;
    }
    u = n;
    g_array_append_val(s->offwire, u);
    s->notx_loop++;
    return TRUE;
}

static gboolean ev_lost(RsEventStream *s, const EventRecord *r)
{
    gint64 n;

    if (!member_int(r->o, "events", 1, G_MAXINT64, &n)) {
        return FALSE;
    }
    s->lost_events += n;
    return TRUE;
}

/* "wire", "overrun" and "cleared": what became of byte i. */
static gboolean ev_byte(RsEventStream *s, const EventRecord *r)
{
    gboolean wire = r->ev == RS_EV_WIRE;
    gboolean cleared = r->ev == RS_EV_CLEARED;
    gint64 i, wt = 0, refused = 0, byte;

    if (!member_int(r->o, "i", 0, G_MAXINT64, &i) ||
        (wire && !member_int(r->o, "wt", 0, G_MAXINT64, &wt)) ||
        (wire && !member_opt(r->o, "refused", 0, 1, &refused, NULL)) ||
        (cleared && !member_opt(r->o, "b", 0, 255, &byte, NULL))) {
        return FALSE;
    }
    if (!account_byte(s, r->ev, i, wt, refused, r->error)) {
        return FALSE;
    }
    if (cleared) {
        guint64 u = i;

        g_array_append_val(s->cleared, u);
    }
    return TRUE;
}

static gboolean ev_line(RsEventStream *s, const EventRecord *r)
{
    RsLineVerdict lv;
    RsTxByte *b;

    if (!parse_line_verdict(r->o, &lv)) {
        return FALSE;
    }
    /* Kept here: a follower forgets bytes of lines it has shown. */
    b = rs_event_stream_byte(s, lv.first);
    if (b && !lv.has_stamp) {
        lv.first_vt_ns = b->vt_ns;
        lv.cpu = b->cpu;
    }
    g_array_append_val(s->lines, lv);
    return TRUE;
}

static gboolean ev_record(RsEventStream *s, const EventRecord *r)
{
    RsRecordVerdict rv;

    if (!parse_record_verdict(r->o, &rv)) {
        return FALSE;
    }
    g_array_append_val(s->records, rv);
    return TRUE;
}

static gboolean ev_ring(RsEventStream *s, const EventRecord *r)
{
    if (!member_str(r->o, "state", s->ring_state, sizeof(s->ring_state))) {
        return FALSE;
    }
    if (!member_str(r->o, "via", s->ring_via, sizeof(s->ring_via))) {
        s->ring_via[0] = '\0';
    }
    if (!member_str(r->o, "osrelease", s->osrelease, sizeof(s->osrelease))) {
        s->osrelease[0] = '\0';
    }
    return TRUE;
}

static gboolean ev_summary(RsEventStream *s, const EventRecord *r)
{
    gint64 n;

    if (!member_str(r->o, "reason", s->summary_reason,
                    sizeof(s->summary_reason)) ||
        !parse_counts(s->summary_counts, r->o, "lines", "") ||
        !parse_counts(s->summary_counts, r->o, "records", "") ||
        !member_opt(r->o, "prefix", -1, 7, &n, NULL)) {
        return FALSE;
    }
    s->prefix = json_object_has_member(r->o, "prefix") ? (int)n : -1;
    s->saw_summary = TRUE;
    return TRUE;
}

static gboolean ev_handshake(RsEventStream *s, const EventRecord *r)
{
    gint64 n;

    if (!member_int(r->o, "note", 0, G_MAXINT64, &n)) {
        return FALSE;
    }
    s->saw_handshake = TRUE;
    s->handshake_note = n;
    return TRUE;
}

static gboolean ev_bracket(RsEventStream *s, const EventRecord *r)
{
    RsBracket b;

    if (!parse_bracket(r->o, &b)) {
        return FALSE;
    }
    g_array_append_val(s->brackets, b);
    return TRUE;
}

static gboolean ev_l1_record(RsEventStream *s, const EventRecord *r)
{
    RsRecordVerdict rv;

    if (!parse_record_verdict(r->o, &rv)) {
        return FALSE;
    }
    g_array_append_val(s->l1_records, rv);
    return TRUE;
}

static void l1_summary_put(RsEventStream *s, const char *key, gint64 n)
{
    g_hash_table_insert(s->l1_summary, g_strdup(key),
                        g_memdup2(&n, sizeof(n)));
}

static gboolean ev_l1_summary(RsEventStream *s, const EventRecord *r)
{
    gint64 takeovers, unattributed, user = 0, untrusted = 0;
    gboolean has_untrusted;

    g_hash_table_remove_all(s->l1_summary);
    if (!parse_counts(s->l1_summary, r->o, "brackets", "bracket-") ||
        !parse_counts(s->l1_summary, r->o, "records", "record-") ||
        !member_int(r->o, "takeovers", 0, G_MAXINT64, &takeovers) ||
        !member_int(r->o, "unattributed", 0, G_MAXINT64, &unattributed) ||
        !member_opt(r->o, "user", 0, G_MAXINT64, &user, NULL) ||
        !member_opt(r->o, "untrusted", 0, G_MAXINT64, &untrusted,
                    &has_untrusted)) {
        return FALSE;
    }
    l1_summary_put(s, "takeovers", takeovers);
    l1_summary_put(s, "unattributed", unattributed);
    l1_summary_put(s, "user", user);
    if (has_untrusted) {
        l1_summary_put(s, "untrusted", untrusted);
    }
    s->saw_l1_summary = TRUE;
    return TRUE;
}

static gboolean ev_resume(RsEventStream *s, const EventRecord *r)
{
    gint64 n;

    if (!member_int(r->o, "tx", 0, G_MAXINT64, &n) || s->tx->len) {
        g_set_error(r->error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "malformed or late \"resume\" record");
        return FALSE;
    }
    s->resume_index = n;
    return TRUE;
}

static gboolean ev_start(RsEventStream *s, const EventRecord *r)
{
    s->saw_start = TRUE;
    s->version = r->v;
    s->paced = g_strcmp0(json_object_get_string_member_with_default(
                             r->o, "pace", "off"), "line") == 0;
    return TRUE;
}

/* Types with no handler ("connected") carry nothing the stream keeps. */
static const EventHandler event_handlers[RS_EV_COUNT] = {
    [RS_EV_START] = ev_start,
    [RS_EV_RESUME] = ev_resume,
    [RS_EV_TX] = ev_tx,
    [RS_EV_WIRE] = ev_byte,
    [RS_EV_LOOP] = ev_loop,
    [RS_EV_OVERRUN] = ev_byte,
    [RS_EV_CLEARED] = ev_byte,
    [RS_EV_LINE] = ev_line,
    [RS_EV_RECORD] = ev_record,
    [RS_EV_RING] = ev_ring,
    [RS_EV_SUMMARY] = ev_summary,
    [RS_EV_HANDSHAKE] = ev_handshake,
    [RS_EV_BRACKET] = ev_bracket,
    [RS_EV_L1_RECORD] = ev_l1_record,
    [RS_EV_L1_SUMMARY] = ev_l1_summary,
    [RS_EV_LOST] = ev_lost,
};

/* The record's object with its version checked, or NULL. */
static JsonObject *parse_object(RsEventStream *s, JsonParser *parser,
                                const char *line, gint64 *v, GError **error)
{
    g_autoptr(GError) json_error = NULL;
    JsonObject *o;

    if (!json_parser_load_from_data(parser, line, -1, &json_error)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "not JSON: %s",
                    json_error->message);
        return NULL;
    }
    if (!JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "not a JSON object");
        return NULL;
    }
    o = json_node_get_object(json_parser_get_root(parser));
    if (!member_int(o, "v", 0, G_MAXINT32, v)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "no schema version \"v\"");
        return NULL;
    }
    if (*v < RS_EVENTS_VERSION_MIN || *v > RS_EVENTS_VERSION ||
        (s->version && *v != s->version)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "schema version %" G_GINT64_FORMAT " (this ringside reads "
                    "versions %d to %d, one per stream)", *v,
                    RS_EVENTS_VERSION_MIN, RS_EVENTS_VERSION);
        return NULL;
    }
    return o;
}

static gboolean parse_line(RsEventStream *s, JsonParser *parser,
                           const char *line, GError **error)
{
    JsonObject *o;
    const char *ev;
    gint64 v;
    gboolean ok;
    int k;

    if (parse_fast(s, line, &ok, error)) {
        return ok;
    }
    o = parse_object(s, parser, line, &v, error);
    if (!o) {
        return FALSE;
    }
    ev = json_object_get_string_member_with_default(o, "ev", NULL);
    if (!ev) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "no event type \"ev\"");
        return FALSE;
    }
    k = rs_name_index(rs_event_names, RS_EV_COUNT, ev);
    /* Other event types belong to later schema additions: skip them. */
    if (k < 0 || !event_handlers[k] ||
        event_handlers[k](s, &(EventRecord) { k, o, v, error })) {
        return TRUE;
    }
    if (error && !*error) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "malformed \"%s\" record", ev);
    }
    return FALSE;
}

int rs_event_line_type(const char *line, gsize len)
{
    return event_head(line, len, NULL);
}

gboolean rs_event_line_is_start(const char *line)
{
    /* Only the head is read: a NUL within it ends the line early. */
    return event_head(line, strnlen(line, EVENT_HEAD_MAX), NULL) ==
           RS_EV_START;
}

RsEventStream *rs_event_stream_new(void)
{
    RsEventStream *s = g_new0(RsEventStream, 1);

    s->tx = g_array_new(FALSE, FALSE, sizeof(RsTxByte));
    s->lines = g_array_new(FALSE, FALSE, sizeof(RsLineVerdict));
    s->records = g_array_new(FALSE, FALSE, sizeof(RsRecordVerdict));
    s->summary_counts = g_hash_table_new_full(g_str_hash, g_str_equal,
                                              g_free, g_free);
    s->brackets = g_array_new(FALSE, FALSE, sizeof(RsBracket));
    s->l1_records = g_array_new(FALSE, FALSE, sizeof(RsRecordVerdict));
    s->l1_summary = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                          g_free);
    s->offwire = g_array_new(FALSE, FALSE, sizeof(guint64));
    s->cleared = g_array_new(FALSE, FALSE, sizeof(guint64));
    s->prefix = -1;
    return s;
}

gboolean rs_event_stream_feed(RsEventStream *s, JsonParser *parser,
                              const char *line, gsize len, GError **error)
{
    if (strlen(line) != len) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT, "NUL byte in line");
        return FALSE;
    }
    /*
     * A rotated file's head ("rotated") or a late reader's first record
     * ("connected") carries the run's "start", ...,"start":{...}}: the
     * run begins from it.
     */
    if (!s->saw_start && (strstr(line, ",\"ev\":\"rotated\",") ||
                          strstr(line, ",\"ev\":\"connected\","))) {
        const char *start = strstr(line, ",\"start\":{");
        g_autofree char *obj = start && len > 1 && line[len - 1] == '}' ?
            g_strndup(start + 9, line + len - 1 - (start + 9)) : NULL;

        if (obj && !parse_line(s, parser, obj, error)) {
            return FALSE;
        }
    }
    if (!parse_line(s, parser, line, error)) {
        return FALSE;
    }
    /* Checked on the first line, so a follower stops at once. */
    if (!s->saw_start) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "no \"start\" record first: not a ringside-serial "
                    "event stream");
        return FALSE;
    }
    return TRUE;
}

static gint u64_order(gconstpointer a, gconstpointer b)
{
    guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;

    return x < y ? -1 : x > y;
}

/* How many of the sorted indexes @a are below @index. */
static guint64 count_below(const GArray *a, guint64 index)
{
    guint lo = 0, hi = a->len;

    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;

        if (g_array_index(a, guint64, mid) < index) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

void rs_event_stream_console_span(const RsEventStream *s, guint64 first,
                                  guint64 last, guint64 *off, guint64 *len)
{
    guint64 a = first - MIN(first, s->resume_index);
    guint64 b = last + 1 - MIN(last + 1, s->resume_index);

    a -= MIN(a, count_below(s->offwire, first));
    b -= MIN(b, count_below(s->offwire, last + 1));
    *off = a;
    *len = b > a ? b - a : 0;
}

guint64 rs_event_stream_cleared_in(const RsEventStream *s, guint64 first,
                                   guint64 last)
{
    if (last < first || last == G_MAXUINT64) {
        return 0;
    }
    return count_below(s->cleared, last + 1) - count_below(s->cleared, first);
}

void rs_event_stream_finish(RsEventStream *s)
{
    guint i;

    g_array_sort(s->offwire, u64_order);
    g_array_sort(s->cleared, u64_order);
    if (s->paced) {
        return;
    }
    /* Unpaced, a byte is on the wire when written, unless a "wire"
     * record says when it went (it waited for its chardev) or it was lost. */
    for (i = 0; i < s->tx->len; i++) {
        RsTxByte *b = &g_array_index(s->tx, RsTxByte, i);

        if (b->wt_ns < 0 && !b->overrun && !b->cleared && !b->refused) {
            b->wt_ns = b->vt_ns;
        }
    }
}

RsEventStream *rs_event_stream_load(const char *path, GError **error)
{
    g_autoptr(GFile) file = g_file_new_for_path(path);
    g_autoptr(GFileInputStream) fin = NULL;
    g_autoptr(GDataInputStream) in = NULL;
    g_autoptr(JsonParser) parser = json_parser_new_immutable();
    g_autoptr(RsEventStream) s = rs_event_stream_new();
    guint64 lineno = 0;

    fin = g_file_read(file, NULL, error);
    if (!fin) {
        return NULL;
    }
    in = g_data_input_stream_new(G_INPUT_STREAM(fin));
    for (;;) {
        g_autoptr(GError) local = NULL;
        gsize len;
        g_autofree char *line = g_data_input_stream_read_line(in, &len, NULL,
                                                              &local);

        if (local) {
            g_propagate_error(error, g_steal_pointer(&local));
            return NULL;
        }
        if (!line) {
            break;
        }
        lineno++;
        if (s->saw_start && rs_event_line_is_start(line)) {
            guint earlier = s->earlier_boots + 1;

            rs_event_stream_free(s);
            s = rs_event_stream_new();
            s->earlier_boots = earlier;
        }
        if (!rs_event_stream_feed(s, parser, line, len, &local)) {
            g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                        "%s:%" G_GUINT64_FORMAT ": %s", path, lineno,
                        local->message);
            return NULL;
        }
    }
    rs_event_stream_finish(s);
    return g_steal_pointer(&s);
}

char *rs_events_libvirt_path(const char *name)
{
    return g_strdup_printf("/var/lib/libvirt/qemu/%s.ringside-events.jsonl",
                           name);
}
