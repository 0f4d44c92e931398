/*
 * Unit tests for the collector's event stream reader and line assembly,
 * on event files written the way ringside-serial writes them.
 */
#include "errors.h"
#include "events/events.h"
#include "events/transcript.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

static char *write_events(const char *text)
{
    g_autoptr(GError) err = NULL;
    char *path = NULL;
    int fd = g_file_open_tmp("ringside-events-XXXXXX", &path, &err);

    g_assert_no_error(err);
    g_assert_true(g_file_set_contents(path, text, -1, &err));
    g_assert_no_error(err);
    close(fd);
    return path;
}

/* Events for @s as written by cpu @cpu from virtual time @vt, 10 ns apart. */
static void append_tx(GString *out, guint64 *i, int64_t vt, int cpu,
                      const char *s)
{
    for (; *s; s++, vt += 10) {
        g_string_append_printf(out, "{\"v\":2,\"ev\":\"tx\",\"i\":%"
                               G_GUINT64_FORMAT ",\"vt\":%" G_GINT64_FORMAT
                               ",\"ht\":5,\"cpu\":%d,\"b\":%u}\n",
                               (*i)++, vt, cpu, (guint8)*s);
    }
}

static RsEventStream *load(const char *text, GError **err)
{
    g_autofree char *path = write_events(text);
    RsEventStream *s = rs_event_stream_load(path, err);

    g_unlink(path);
    return s;
}

static void test_lines(void)
{
    g_autoptr(GString) ev = g_string_new("{\"v\":2,\"ev\":\"start\"}\n");
    g_autoptr(GError) err = NULL;
    g_autoptr(RsEventStream) s = NULL;
    g_autoptr(RsTranscript) t = NULL;
    RsLine *l;
    guint64 i = 0;
    int64_t lat;

    append_tx(ev, &i, 1000, 0, "[    1.000000] one\r\n");
    append_tx(ev, &i, 2000000000, 1, "[    1.500000] two\r\n");
    append_tx(ev, &i, 3000000000, 1, "cut");
    s = load(ev->str, &err);
    g_assert_no_error(err);
    g_assert_cmpuint(s->tx->len, ==, i);

    t = rs_transcript_build(s);
    g_assert_cmpuint(t->lines->len, ==, 3);
    g_assert_cmpuint(t->wire_bytes, ==, i);
    l = t->lines->pdata[0];
    g_assert_cmpstr(l->text, ==, "[    1.000000] one");
    g_assert_true(l->terminated);
    g_assert_true(l->has_ts);
    g_assert_cmpint(l->ts_ns, ==, 1000000000);
    g_assert_cmpint(l->vt_first_ns, ==, 1000);
    l = t->lines->pdata[1];
    g_assert_cmpint(l->cpu, ==, 1);
    g_assert_false(l->mixed_cpus);
    l = t->lines->pdata[2];
    g_assert_cmpstr(l->text, ==, "cut");
    g_assert_false(l->terminated);
    g_assert_false(l->has_ts);

    /* Line 1: 1000+190 - 1e9; line 2: 2e9+190 - 1.5e9. */
    g_assert_true(rs_transcript_last_latency(t, &lat));
    g_assert_cmpint(lat, ==, 1500000000 - 1000);
}

static void test_mixed_and_loopback(void)
{
    g_autoptr(GString) ev = g_string_new("{\"v\":2,\"ev\":\"start\"}\n");
    g_autoptr(GError) err = NULL;
    g_autoptr(RsEventStream) s = NULL;
    g_autoptr(RsTranscript) t = NULL;
    guint64 i = 0;

    g_string_append(ev, "{\"v\":2,\"ev\":\"tx\",\"i\":0,\"vt\":1,\"ht\":1,"
                    "\"cpu\":0,\"b\":88,\"loop\":1}\n");
    i = 1;
    append_tx(ev, &i, 10, 0, "ab");
    append_tx(ev, &i, 50, 1, "c\n");
    s = load(ev->str, &err);
    g_assert_no_error(err);
    t = rs_transcript_build(s);
    g_assert_cmpuint(t->loopback_bytes, ==, 1);
    g_assert_cmpuint(t->lines->len, ==, 1);
    g_assert_cmpstr(((RsLine *)t->lines->pdata[0])->text, ==, "abc");
    g_assert_true(((RsLine *)t->lines->pdata[0])->mixed_cpus);
}

static void test_gaps_and_lost(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(RsEventStream) s = load(
        "{\"v\":2,\"ev\":\"start\"}\n"
        "{\"v\":2,\"ev\":\"tx\",\"i\":0,\"vt\":1,\"ht\":1,\"cpu\":0,\"b\":65}\n"
        "{\"v\":2,\"ev\":\"lost\",\"events\":3}\n"
        "{\"v\":2,\"ev\":\"tx\",\"i\":4,\"vt\":2,\"ht\":1,\"cpu\":0,\"b\":66}\n"
        "{\"v\":2,\"ev\":\"future-kind\",\"x\":[1,2]}\n", &err);

    g_assert_no_error(err);
    g_assert_cmpuint(s->lost_events, ==, 3);
    g_assert_cmpuint(s->index_gaps, ==, 3);
    g_assert_cmpuint(s->tx->len, ==, 2);
}

/* pace=line: line times are wire times; lost bytes are not on the wire. */
static void test_paced(void)
{
    g_autoptr(GString) ev = g_string_new(
        "{\"v\":2,\"ev\":\"start\",\"pace\":\"line\"}\n");
    g_autoptr(GError) err = NULL;
    g_autoptr(RsEventStream) s = NULL;
    g_autoptr(RsTranscript) t = NULL;
    RsLine *l;
    guint64 i = 0;

    append_tx(ev, &i, 100, 0, "ab\ncd");
    g_string_append(ev, "{\"v\":2,\"ev\":\"wire\",\"i\":0,\"wt\":1000}\n"
                    "{\"v\":2,\"ev\":\"wire\",\"i\":1,\"wt\":2000}\n"
                    "{\"v\":2,\"ev\":\"wire\",\"i\":2,\"wt\":3000}\n"
                    "{\"v\":2,\"ev\":\"overrun\",\"i\":3}\n"
                    "{\"v\":2,\"ev\":\"cleared\",\"i\":4}\n");
    s = load(ev->str, &err);
    g_assert_no_error(err);
    g_assert_true(s->paced);
    t = rs_transcript_build(s);
    g_assert_cmpuint(t->lines->len, ==, 1);
    l = t->lines->pdata[0];
    g_assert_cmpstr(l->text, ==, "ab");
    g_assert_cmpint(l->vt_first_ns, ==, 1000);
    g_assert_cmpint(l->vt_last_ns, ==, 3000);
    g_assert_cmpuint(t->overrun_bytes, ==, 1);
    g_assert_cmpuint(t->cleared_bytes, ==, 1);
    g_assert_cmpuint(t->unsent_bytes, ==, 0);
    g_assert_cmpuint(t->wire_bytes, ==, 3);
}

/*
 * Bytes the guest's own FIFO reset discarded are found by the lines that
 * held them; a "cleared" record's byte value must be a byte.
 */
static void test_cleared_in_line(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(RsEventStream) s = NULL, bad = NULL;

    s = load("{\"v\":3,\"ev\":\"start\",\"pace\":\"line\"}\n"
             "{\"v\":3,\"ev\":\"cleared\",\"i\":12,\"b\":32}\n"
             "{\"v\":3,\"ev\":\"cleared\",\"i\":13,\"b\":32}\n"
             "{\"v\":3,\"ev\":\"cleared\",\"i\":40}\n", &err);
    g_assert_no_error(err);
    g_assert_cmpuint(rs_event_stream_cleared_in(s, 0, 9), ==, 0);
    g_assert_cmpuint(rs_event_stream_cleared_in(s, 10, 20), ==, 2);
    g_assert_cmpuint(rs_event_stream_cleared_in(s, 13, 13), ==, 1);
    g_assert_cmpuint(rs_event_stream_cleared_in(s, 14, 39), ==, 0);
    g_assert_cmpuint(rs_event_stream_cleared_in(s, 0, G_MAXUINT64 - 1), ==,
                     3);
    g_assert_cmpuint(rs_event_stream_cleared_in(s, 20, 10), ==, 0);

    bad = load("{\"v\":3,\"ev\":\"start\",\"pace\":\"line\"}\n"
               "{\"v\":3,\"ev\":\"cleared\",\"i\":1,\"b\":256}\n", &err);
    g_assert_null(bad);
    g_assert_error(err, RS_ERROR, RS_ERROR_BAD_INPUT);
}

/*
 * pace=off: a byte the chardev refused is lost, not on the wire; one that
 * waited for its chardev keeps the time it went; the rest went as written.
 * Without "tx" records (tx-events=off) losses are counted all the same.
 */
static void test_unpaced_refused(void)
{
    g_autoptr(GString) ev = g_string_new("{\"v\":2,\"ev\":\"start\"}\n");
    g_autoptr(GError) err = NULL;
    g_autoptr(RsEventStream) s = NULL, s2 = NULL;
    g_autoptr(RsTranscript) t = NULL;
    RsLine *l;
    guint64 i = 0;

    append_tx(ev, &i, 100, 0, "abc\n");
    g_string_append(ev, "{\"v\":2,\"ev\":\"wire\",\"i\":1,\"wt\":900,"
                    "\"refused\":1}\n"
                    "{\"v\":2,\"ev\":\"wire\",\"i\":2,\"wt\":5000}\n");
    s = load(ev->str, &err);
    g_assert_no_error(err);
    g_assert_false(s->paced);
    t = rs_transcript_build(s);
    g_assert_cmpuint(t->refused_bytes, ==, 1);
    g_assert_cmpuint(t->wire_bytes, ==, 3);
    g_assert_cmpuint(t->lines->len, ==, 1);
    l = t->lines->pdata[0];
    g_assert_cmpstr(l->text, ==, "ac");
    g_assert_cmpint(l->vt_first_ns, ==, 100);
    g_assert_cmpint(rs_event_stream_byte(s, 2)->wt_ns, ==, 5000);
    g_assert_cmpint(rs_event_stream_byte(s, 3)->wt_ns, ==, 130);
    g_assert_cmpint(rs_event_stream_byte(s, 1)->wt_ns, ==, -1);

    s2 = load("{\"v\":2,\"ev\":\"start\",\"pace\":\"line\"}\n"
              "{\"v\":2,\"ev\":\"wire\",\"i\":7,\"wt\":9,\"refused\":1}\n"
              "{\"v\":2,\"ev\":\"overrun\",\"i\":8}\n", &err);
    g_assert_no_error(err);
    g_assert_cmpuint(s2->notx_refused, ==, 1);
    g_assert_cmpuint(s2->notx_overrun, ==, 1);
}

/*
 * Schema 3's default stream: line events and the console's bytes.  Each
 * console line gets the times and vCPU of the line event holding its
 * first byte, past bytes that never reached the console ("loop",
 * "overrun", a refused "wire"); ok brackets come merged into runs.
 */
static void test_v3_lines_and_console(void)
{
    static const char ev[] =
        "{\"v\":3,\"ev\":\"start\",\"pace\":\"line\"}\n"
        "{\"v\":3,\"ev\":\"line\",\"verdict\":\"ok\",\"first\":0,"
        "\"last\":4,\"vt\":900,\"dt\":400,\"cpu\":1,\"q0\":50,\"q\":70,"
        "\"len\":3,\"seq\":0}\n"
        "{\"v\":3,\"ev\":\"loop\",\"i\":5}\n"
        "{\"v\":3,\"ev\":\"overrun\",\"i\":7}\n"
        "{\"v\":3,\"ev\":\"line\",\"verdict\":\"unchecked\",\"first\":6,"
        "\"last\":9,\"vt\":2000,\"dt\":100,\"cpu\":0,\"cpus\":1,"
        "\"len\":2}\n"
        "{\"v\":3,\"ev\":\"bracket\",\"verdict\":\"ok\",\"seq\":0,"
        "\"cpu\":1,\"vt\":950,\"len\":4,\"first\":0,\"last\":4,"
        "\"count\":3}\n";
    static const char console[] = "one\r\nxy\npartial";
    g_autoptr(GError) err = NULL;
    g_autoptr(RsEventStream) s = load(ev, &err);
    g_autoptr(RsTranscript) t = NULL;
    const RsLineVerdict *lv;
    const RsLine *l;
    guint64 off, len;

    g_assert_no_error(err);
    g_assert_cmpint(s->version, ==, 3);
    g_assert_cmpuint(s->tx->len, ==, 0);
    lv = &g_array_index(s->lines, RsLineVerdict, 0);
    g_assert_true(lv->has_stamp);
    g_assert_cmpint(lv->first_vt_ns, ==, 500);
    g_assert_cmpint(lv->cpu, ==, 1);
    g_assert_cmpint(lv->q_ns, ==, 70);
    g_assert_cmpuint(g_array_index(s->brackets, RsBracket, 0).run, ==, 3);
    rs_event_stream_console_span(s, 6, 9, &off, &len);
    g_assert_cmpuint(off, ==, 5);
    g_assert_cmpuint(len, ==, 3);

    t = rs_transcript_build_console(s, console, strlen(console));
    g_assert_cmpuint(t->lines->len, ==, 3);
    g_assert_cmpuint(t->loopback_bytes, ==, 1);
    g_assert_cmpuint(t->overrun_bytes, ==, 1);
    l = t->lines->pdata[0];
    g_assert_cmpstr(l->text, ==, "one");
    g_assert_cmpint(l->vt_first_ns, ==, 500);
    g_assert_cmpint(l->vt_last_ns, ==, 900);
    g_assert_cmpint(l->cpu, ==, 1);
    l = t->lines->pdata[1];
    g_assert_cmpstr(l->text, ==, "xy");
    g_assert_cmpint(l->vt_first_ns, ==, 1900);
    g_assert_cmpint(l->cpu, ==, 0);
    g_assert_true(l->mixed_cpus);
    l = t->lines->pdata[2];         /* no line event (yet): no times */
    g_assert_cmpstr(l->text, ==, "partial");
    g_assert_cmpint(l->vt_last_ns, ==, -1);
    g_assert_false(l->terminated);
}

static void test_bad_streams(void)
{
    static const struct {
        const char *text;
        const char *why;
    } bad[] = {
        { "{\"v\":2,\"ev\":\"start\"}\nnot json\n", "not JSON" },
        { "[1,2]\n", "not a JSON object" },
        { "{\"ev\":\"start\"}\n", "no schema version" },
        { "{\"v\":4,\"ev\":\"start\"}\n", "schema version 4" },
        { "{\"v\":3,\"ev\":\"start\"}\n{\"v\":2,\"ev\":\"lost\","
          "\"events\":1}\n", "one per stream" },
        { "{\"v\":3,\"ev\":\"start\"}\n{\"v\":3,\"ev\":\"line\","
          "\"verdict\":\"ok\",\"first\":0,\"last\":3,\"vt\":5,\"dt\":6,"
          "\"len\":2}\n", "malformed \"line\"" },
        { "{\"v\":2}\n", "no event type" },
        { "{\"v\":2,\"ev\":\"start\"}\n{\"v\":2,\"ev\":\"tx\",\"i\":0,"
          "\"vt\":1,\"ht\":1,\"cpu\":0,\"b\":256}\n", "malformed \"tx\"" },
        { "{\"v\":2,\"ev\":\"start\"}\n{\"v\":2,\"ev\":\"tx\",\"i\":0,"
          "\"vt\":1,\"ht\":1,\"cpu\":0,\"b\":\"A\"}\n", "malformed \"tx\"" },
        { "{\"v\":2,\"ev\":\"start\"}\n"
          "{\"v\":2,\"ev\":\"tx\",\"i\":5,\"vt\":1,\"ht\":1,\"cpu\":0,\"b\":1}\n"
          "{\"v\":2,\"ev\":\"tx\",\"i\":5,\"vt\":1,\"ht\":1,\"cpu\":0,\"b\":1}\n",
          "repeats or goes back" },
        { "{\"v\":2,\"ev\":\"tx\",\"i\":0,\"vt\":1,\"ht\":1,\"cpu\":0,"
          "\"b\":1}\n", "no \"start\" record" },
        { "{\"v\":2,\"ev\":\"start\"}\n{\"v\":2,\"ev\":\"lost\"}\n",
          "malformed \"lost\"" },
        { "{\"v\":2,\"ev\":\"start\",\"pace\":\"line\"}\n"
          "{\"v\":2,\"ev\":\"wire\",\"i\":0,\"wt\":5}\n",
          "was not written" },
        { "{\"v\":2,\"ev\":\"start\",\"pace\":\"line\"}\n"
          "{\"v\":2,\"ev\":\"tx\",\"i\":0,\"vt\":9,\"ht\":1,\"cpu\":0,"
          "\"b\":1}\n{\"v\":2,\"ev\":\"wire\",\"i\":0,\"wt\":5}\n",
          "already accounted" },
    };
    guint i;

    for (i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) err = NULL;
        g_autoptr(RsEventStream) s = load(bad[i].text, &err);

        g_assert_null(s);
        g_assert_error(err, RS_ERROR, RS_ERROR_BAD_INPUT);
        if (!strstr(err->message, bad[i].why)) {
            g_error("case %u: \"%s\" lacks \"%s\"", i, err->message,
                    bad[i].why);
        }
    }
}

/*
 * The reader's fast path (records exactly as the device writes them) and
 * json-glib (anything else) must read the same stream the same way.
 */
static void test_fast_and_json_agree(void)
{
    static const char *const fast =
        "{\"v\":2,\"ev\":\"start\",\"pace\":\"line\"}\n"
        "{\"v\":2,\"ev\":\"tx\",\"i\":0,\"vt\":10,\"ht\":-7,\"cpu\":-1,"
        "\"b\":65}\n"
        "{\"v\":2,\"ev\":\"tx\",\"i\":3,\"vt\":20,\"ht\":9223372036854775807,"
        "\"cpu\":1,\"b\":255,\"loop\":1}\n"
        "{\"v\":2,\"ev\":\"wire\",\"i\":0,\"wt\":15}\n";
    g_auto(GStrv) parts = g_strsplit(fast, "\":", -1);
    g_autofree char *slow = NULL;
    g_autoptr(GError) err = NULL;
    g_autoptr(RsEventStream) a = load(fast, &err);
    g_autoptr(RsEventStream) b = NULL;
    guint i;

    g_assert_no_error(err);
    /* The same records, spaced so that only json-glib reads them. */
    slow = g_strjoinv("\": ", parts);
    b = load(slow, &err);
    g_assert_no_error(err);
    g_assert_cmpuint(a->tx->len, ==, 2);
    g_assert_cmpuint(b->tx->len, ==, 2);
    g_assert_cmpuint(a->index_gaps, ==, 2);
    g_assert_cmpuint(b->index_gaps, ==, 2);
    for (i = 0; i < a->tx->len; i++) {
        RsTxByte *x = &g_array_index(a->tx, RsTxByte, i);
        RsTxByte *y = &g_array_index(b->tx, RsTxByte, i);

        g_assert_cmpuint(x->index, ==, y->index);
        g_assert_cmpint(x->vt_ns, ==, y->vt_ns);
        g_assert_cmpint(x->ht_ns, ==, y->ht_ns);
        g_assert_cmpint(x->cpu, ==, y->cpu);
        g_assert_cmpuint(x->byte, ==, y->byte);
        g_assert_cmpint(x->loopback, ==, y->loopback);
        g_assert_cmpint(x->wt_ns, ==, y->wt_ns);
    }
    g_assert_cmpint(g_array_index(a->tx, RsTxByte, 0).wt_ns, ==, 15);
    g_assert_cmpint(g_array_index(a->tx, RsTxByte, 1).ht_ns, ==, G_MAXINT64);
}

/* A file QEMU appended several runs to: the last one is read. */
static void test_several_boots(void)
{
    g_autoptr(GString) ev = g_string_new("{\"v\":2,\"ev\":\"start\"}\n");
    g_autoptr(GError) err = NULL;
    g_autoptr(RsEventStream) s = NULL;
    guint64 i = 0;

    append_tx(ev, &i, 1000, 0, "first boot\r\n");
    g_string_append(ev, "{\"v\":2,\"ev\":\"start\"}\n");
    i = 0;
    append_tx(ev, &i, 1000, 1, "second\r\n");
    s = load(ev->str, &err);
    g_assert_no_error(err);
    g_assert_cmpuint(s->earlier_boots, ==, 1);
    g_assert_cmpuint(s->tx->len, ==, 8);
    g_assert_cmpint(g_array_index(s->tx, RsTxByte, 0).cpu, ==, 1);
}

/* Forgetting shown bytes keeps the rest, and always the last byte. */
static void test_trim(void)
{
    static const char *const next =
        "{\"v\":2,\"ev\":\"tx\",\"i\":10,\"vt\":1,\"ht\":1,\"cpu\":0,"
        "\"b\":1}";
    g_autoptr(JsonParser) parser = json_parser_new_immutable();
    g_autoptr(GString) ev = g_string_new("{\"v\":2,\"ev\":\"start\"}\n");
    g_autoptr(GError) err = NULL;
    g_autoptr(RsEventStream) s = NULL;
    guint64 i = 0;

    append_tx(ev, &i, 1000, 0, "0123456789");
    s = load(ev->str, &err);
    g_assert_no_error(err);
    rs_event_stream_trim_tx(s, 4);
    g_assert_cmpuint(s->tx->len, ==, 6);
    g_assert_null(rs_event_stream_byte(s, 3));
    g_assert_nonnull(rs_event_stream_byte(s, 4));
    rs_event_stream_trim_tx(s, 100);
    g_assert_cmpuint(s->tx->len, ==, 1);
    g_assert_cmpuint(g_array_index(s->tx, RsTxByte, 0).index, ==, 9);
    /* The next byte still continues the stream. */
    g_assert_true(rs_event_stream_feed(s, parser, next, strlen(next), &err));
    g_assert_no_error(err);
    g_assert_cmpuint(s->index_gaps, ==, 0);
}

static void test_missing_file(void)
{
    g_autoptr(GError) err = NULL;
    g_autoptr(RsEventStream) s =
        rs_event_stream_load("/nonexistent/events.jsonl", &err);

    g_assert_null(s);
    g_assert_error(err, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
}

static void test_printk_ts(void)
{
    int64_t ts;

    g_assert_true(rs_parse_printk_ts("[    0.000000] x", 16, &ts));
    g_assert_cmpint(ts, ==, 0);
    g_assert_true(rs_parse_printk_ts("[123456.654321]", 15, &ts));
    g_assert_cmpint(ts, ==, G_GINT64_CONSTANT(123456654321000));
    g_assert_false(rs_parse_printk_ts("[    1.00000] x", 15, &ts));
    g_assert_false(rs_parse_printk_ts("[     .000000]", 14, &ts));
    g_assert_false(rs_parse_printk_ts("[    1.000000", 13, &ts));
    g_assert_false(rs_parse_printk_ts("no stamp", 8, &ts));
    g_assert_false(rs_parse_printk_ts("[9999999999999.000000]", 22, &ts));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/transcript/lines", test_lines);
    g_test_add_func("/transcript/mixed-and-loopback", test_mixed_and_loopback);
    g_test_add_func("/events/gaps-and-lost", test_gaps_and_lost);
    g_test_add_func("/events/bad-streams", test_bad_streams);
    g_test_add_func("/transcript/v3-lines-and-console",
                    test_v3_lines_and_console);
    g_test_add_func("/transcript/paced", test_paced);
    g_test_add_func("/transcript/unpaced-refused", test_unpaced_refused);
    g_test_add_func("/events/missing-file", test_missing_file);
    g_test_add_func("/events/fast-and-json-agree", test_fast_and_json_agree);
    g_test_add_func("/events/several-boots", test_several_boots);
    g_test_add_func("/events/trim", test_trim);
    g_test_add_func("/events/cleared-in-line", test_cleared_in_line);
    g_test_add_func("/transcript/printk-ts", test_printk_ts);
    return g_test_run();
}
