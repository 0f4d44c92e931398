/*
 * ringside report: what ringside-serial judged, from a saved event stream.
 * Exit status 0: clean, 1: problems found, 2: bad input.
 * With --html: ringside fuzz output directories merged into a page.
 */
#include "commands.h"
#include "report/fuzzresults.h"
#include "report/htmlreport.h"
#include "report/verdicts.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <unistd.h>

/*
 * ringside fuzz output directories (shards, machines, resumed runs) merged:
 * the table on stdout, and the page and/or one results.jsonl.
 */
static int report_dirs(const char *html, const char *merge,
                       const char *timeline, int argc, char **argv)
{
    g_autoptr(RsFuzzResults) r = rs_fuzz_results_new();
    g_autoptr(GError) error = NULL;
    g_autofree char *tmp = NULL;
    int i;

    if (argc < 2) {
        g_printerr("ringside report: --html and --merge expect ringside fuzz "
                   "output directories (try --help)\n");
        return 2;
    }
    if (merge) {
        tmp = g_strdup_printf("%s.tmp", merge);
        r->merged = fopen(tmp, "w");
        if (!r->merged) {
            g_printerr("ringside report: %s: %s\n", tmp, g_strerror(errno));
            return 2;
        }
    }
    for (i = 1; i < argc; i++) {
        if (!rs_fuzz_results_add_dir(r, argv[i], &error)) {
            g_printerr("ringside report: %s\n", error->message);
            goto fail;
        }
    }
    if (merge) {
        FILE *m = g_steal_pointer(&r->merged);

        if (fflush(m) != 0 || fsync(fileno(m)) != 0 || fclose(m) != 0 ||
            rename(tmp, merge) != 0) {
            g_printerr("ringside report: %s: %s\n", merge,
                       g_strerror(errno));
            goto fail;
        }
    }
    if (html && !rs_html_report_write(r, html, timeline, &error)) {
        g_printerr("ringside report: %s\n", error->message);
        return 2;
    }
    rs_fuzz_results_print(r, stdout);
    if (merge) {
        printf("ringside: merged cases written to %s\n", merge);
    }
    if (html) {
        printf("ringside: report written to %s\n", html);
    }
    return 0;
fail:
    if (r->merged) {
        fclose(g_steal_pointer(&r->merged));
    }
    if (tmp) {
        g_unlink(tmp);
    }
    return 2;
}

int rs_cmd_report(int argc, char **argv)
{
    gboolean json = FALSE;
    g_autofree char *html = NULL, *timeline = NULL, *merge = NULL;
    const GOptionEntry entries[] = {
        { "json", 0, 0, G_OPTION_ARG_NONE, &json,
          "One JSON object instead of the table", NULL },
        { "html", 0, 0, G_OPTION_ARG_FILENAME, &html,
          "Merge ringside fuzz output directories DIR... into a "
          "self-contained HTML page", "OUT.html" },
        { "merge", 0, 0, G_OPTION_ARG_FILENAME, &merge,
          "Merge ringside fuzz output directories DIR... into one "
          "results.jsonl, each case once", "OUT.jsonl" },
        { "timeline", 0, 0, G_OPTION_ARG_FILENAME, &timeline,
          "--html: draw the timeline of this run directory (default: the "
          "first failing case kept)", "RUNDIR" },
        { NULL },
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("EVENTS.jsonl | [--html OUT.html] [--merge "
                             "OUT.jsonl] DIR... - what the device judged");
    g_autoptr(GError) error = NULL;
    g_autoptr(RsEventStream) events = NULL;
    RsVerdictReport r;
    RsL1Report l1;

    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx,
        "Exit status: 0 if every line was ok and no record missing, 1 if "
        "not, 2 on bad input.  With directories (and --html, --merge): "
        "cases per kernel and class on stdout, and per campaign split in "
        "shards whether all its cases are there; the page in OUT.html, the "
        "cases in OUT.jsonl; 0 if written, 2 on bad input.");
    if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
        g_printerr("ringside report: %s\n", error->message);
        return 2;
    }
    if ((html || merge) && json) {
        g_printerr("ringside report: --json does not go with --html or "
                   "--merge\n");
        return 2;
    }
    if (timeline && !html) {
        g_printerr("ringside report: --timeline goes with --html\n");
        return 2;
    }
    if (html || merge ||
        (argc >= 2 && !json && g_file_test(argv[1], G_FILE_TEST_IS_DIR))) {
        return report_dirs(html, merge, timeline, argc, argv);
    }
    if (argc != 2) {
        g_printerr("ringside report: expected one EVENTS.jsonl file "
                   "(try --help)\n");
        return 2;
    }
    events = rs_event_stream_load(argv[1], &error);
    if (!events) {
        g_printerr("ringside report: %s\n", error->message);
        return 2;
    }
    if (!events->saw_start) {
        g_printerr("ringside report: %s: empty event stream\n", argv[1]);
        return 2;
    }
    rs_verdict_report_build(events, &r);
    rs_l1_report_build(events, &l1);
    if (json) {
        rs_verdict_report_print_json(stdout, events, &r, &l1);
    } else {
        if (events->earlier_boots) {
            printf("%s: the last of %u boots in the file\n", argv[1],
                   events->earlier_boots + 1);
        }
        rs_verdict_report_print(stdout, events, &r);
        rs_l1_report_print(stdout, events, &l1);
    }
    return r.problems || l1.problems ? 1 : 0;
}
