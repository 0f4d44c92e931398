/*
 * ringside report: what ringside-serial judged, from a saved event stream.
 * Exit status 0: clean, 1: problems found, 2: bad input.
 * With --html: ringside fuzz output directories merged into a page.
 */
#include "commands.h"
#include "fuzzresults.h"
#include "htmlreport.h"
#include "verdicts.h"

#include <stdio.h>

static int report_html(const char *out, const char *timeline, int argc,
                       char **argv)
{
    g_autoptr(RsFuzzResults) r = rs_fuzz_results_new();
    g_autoptr(GError) error = NULL;
    int i;

    if (argc < 2) {
        g_printerr("ringside report: --html expects ringside fuzz output "
                   "directories (try --help)\n");
        return 2;
    }
    for (i = 1; i < argc; i++) {
        if (!rs_fuzz_results_add_dir(r, argv[i], &error)) {
            g_printerr("ringside report: %s\n", error->message);
            return 2;
        }
    }
    if (!rs_html_report_write(r, out, timeline, &error)) {
        g_printerr("ringside report: %s\n", error->message);
        return 2;
    }
    rs_fuzz_results_print(r, stdout);
    printf("ringside: report written to %s\n", out);
    return 0;
}

int rs_cmd_report(int argc, char **argv)
{
    gboolean json = FALSE;
    g_autofree char *html = NULL, *timeline = NULL;
    const GOptionEntry entries[] = {
        { "json", 0, 0, G_OPTION_ARG_NONE, &json,
          "One JSON object instead of the table", NULL },
        { "html", 0, 0, G_OPTION_ARG_FILENAME, &html,
          "Merge ringside fuzz output directories DIR... into a "
          "self-contained HTML page", "OUT.html" },
        { "timeline", 0, 0, G_OPTION_ARG_FILENAME, &timeline,
          "--html: draw the timeline of this run directory (default: the "
          "first failing case kept)", "RUNDIR" },
        { NULL },
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("EVENTS.jsonl | --html OUT.html DIR... - what "
                             "the device judged");
    g_autoptr(GError) error = NULL;
    g_autoptr(RsEventStream) events = NULL;
    RsVerdictReport r;
    RsL1Report l1;

    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx,
        "Exit status: 0 if every line was ok and no record missing, 1 if "
        "not, 2 on bad input.  With --html: cases per kernel and class on "
        "stdout, the page in OUT.html; 0 if written, 2 on bad input.");
    if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
        g_printerr("ringside report: %s\n", error->message);
        return 2;
    }
    if (html && json) {
        g_printerr("ringside report: --json and --html do not go together\n");
        return 2;
    }
    if (html) {
        return report_html(html, timeline, argc, argv);
    }
    if (timeline) {
        g_printerr("ringside report: --timeline goes with --html\n");
        return 2;
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
