/*
 * Unit tests for the events socket's bookkeeping: the line ledger across
 * joins and device drops, and the rotated files attach keeps.
 */
#include "events/events.h"
#include "events/evledger.h"
#include "events/evrotate.h"

#include <glib/gstdio.h>
#include <string.h>

#define START "{\"v\":3,\"ev\":\"start\",\"dev\":\"ringside-serial\"," \
              "\"iobase\":1016,\"irq\":4,\"pace\":\"off\"}"
#define LINE "{\"v\":3,\"ev\":\"line\",\"verdict\":\"ok\",\"first\":0," \
             "\"last\":9,\"vt\":1,\"len\":8}"

static RsLedgerKind feed(RsLedger *l, const char *rec, guint64 *gap,
                         gboolean *new_run)
{
    return rs_ledger_feed(l, rec, strlen(rec), gap, new_run);
}

static void test_ledger(void)
{
    RsLedger l = { 0 };
    g_autofree char *join = NULL, *other = NULL, *rot = NULL;
    gboolean new_run;
    guint64 gap;
    int i;

    g_assert_cmpint(feed(&l, START, &gap, &new_run), ==, RS_LEDGER_START);
    g_assert_true(new_run);
    for (i = 0; i < 3; i++) {
        g_assert_cmpint(feed(&l, LINE, &gap, &new_run), ==, RS_LEDGER_LINE);
    }
    feed(&l, "{\"v\":3,\"ev\":\"lost\",\"events\":5,\"lines\":2}", &gap,
         &new_run);
    g_assert_cmpuint(l.lines, ==, 5);
    g_assert_cmpuint(l.lost, ==, 2);
    /* The device made 10 lines before this connection: 5 never came. */
    join = g_strdup_printf("{\"v\":3,\"ev\":\"connected\",\"lines\":10,"
                           "\"start\":%s}", START);
    g_assert_cmpint(feed(&l, join, &gap, &new_run), ==, RS_LEDGER_JOIN);
    g_assert_false(new_run);
    g_assert_cmpuint(gap, ==, 5);
    g_assert_cmpuint(l.seen + l.lost + l.gaps, ==, 10);
    /* A rotated head continues the run without a gap. */
    rot = rs_ledger_rotated_record(&l);
    g_assert_true(g_str_has_prefix(rot, "{\"v\":3,\"ev\":\"rotated\","
                                   "\"lines\":10,"));
    g_assert_cmpint(feed(&l, rot, &gap, &new_run), ==, RS_LEDGER_JOIN);
    g_assert_cmpuint(gap, ==, 0);
    g_assert_false(new_run);
    /* Another run, joined late: all its lines so far are a gap. */
    other = g_strdup_printf("{\"v\":3,\"ev\":\"connected\",\"lines\":7,"
                            "\"start\":%s}", "{\"v\":3,\"ev\":\"start\","
                            "\"dev\":\"ringside-serial\",\"iobase\":760,"
                            "\"irq\":3,\"pace\":\"off\"}");
    feed(&l, other, &gap, &new_run);
    g_assert_true(new_run);
    g_assert_cmpuint(gap, ==, 7);
    g_assert_true(g_str_has_suffix(l.start, "\"irq\":3,\"pace\":\"off\"}"));
    rs_ledger_clear(&l);
}

static void test_rotate(void)
{
    g_autoptr(GError) err = NULL;
    g_autofree char *dir = g_dir_make_tmp("ringside-rotate-XXXXXX", &err);
    g_autofree char *path = g_build_filename(dir, "ev.jsonl", NULL);
    RsLedger l = { 0 }, again = { 0 };
    RsRotator *r;
    gboolean new_run;
    guint64 gap;
    int i, k;

    g_assert_no_error(err);
    r = rs_rotator_open(path, 4096, 3, &l, &err);
    g_assert_no_error(err);
    g_assert_true(rs_rotator_write(r, START, strlen(START), &l, &err));
    feed(&l, START, &gap, &new_run);
    for (i = 0; i < 1000; i++) {
        g_assert_true(rs_rotator_write(r, LINE, strlen(LINE), &l, &err));
        feed(&l, LINE, &gap, &new_run);
    }
    g_assert_cmpuint(rs_rotator_rotations(r), >, 10);
    rs_rotator_free(r);
    /* Bounded: the file and 3 older ones, each within the cap. */
    for (k = 0; k <= 4; k++) {
        g_autofree char *p = k ? g_strdup_printf("%s.%d", path, k) :
                             g_strdup(path);
        g_autofree char *data = NULL;
        gsize len;

        if (k == 4) {
            g_assert_false(g_file_test(p, G_FILE_TEST_EXISTS));
            continue;
        }
        g_assert_true(g_file_get_contents(p, &data, &len, NULL));
        g_assert_cmpuint(len, <=, 4096);
        g_assert_true(g_str_has_prefix(data, "{\"v\":3,\"ev\":\"rotated\","));
    }
    /* A collector killed mid-record: the piece is cut, the count goes on. */
    {
        FILE *f = fopen(path, "a");

        fputs("{\"v\":3,\"ev\":\"li", f);
        fclose(f);
    }
    r = rs_rotator_open(path, 4096, 3, &again, &err);
    g_assert_no_error(err);
    g_assert_cmpuint(again.lines, ==, 1000);
    g_assert_cmpstr(again.start, ==, START);
    rs_rotator_free(r);
    rs_ledger_clear(&l);
    rs_ledger_clear(&again);
    for (k = 0; k <= 3; k++) {
        g_autofree char *p = k ? g_strdup_printf("%s.%d", path, k) :
                             g_strdup(path);

        g_unlink(p);
    }
    g_rmdir(dir);
}

/* A rotated file reads on its own: the run begins from its head. */
static void test_rotated_head(void)
{
    g_autoptr(RsEventStream) s = rs_event_stream_new();
    g_autoptr(JsonParser) parser = json_parser_new_immutable();
    g_autoptr(GError) err = NULL;
    g_autofree char *head = g_strdup_printf(
        "{\"v\":3,\"ev\":\"rotated\",\"lines\":5,\"start\":%s}", START);
    const char *line = "{\"v\":3,\"ev\":\"line\",\"verdict\":\"ok\","
                       "\"first\":100,\"last\":109,\"vt\":1,\"len\":8}";

    g_assert_true(rs_event_stream_feed(s, parser, head, strlen(head), &err));
    g_assert_no_error(err);
    g_assert_true(s->saw_start);
    g_assert_true(rs_event_stream_feed(s, parser, line, strlen(line), &err));
    g_assert_cmpuint(s->lines->len, ==, 1);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/evstream/ledger", test_ledger);
    g_test_add_func("/evstream/rotate", test_rotate);
    g_test_add_func("/evstream/rotated-head", test_rotated_head);
    return g_test_run();
}
