/*
 * ringside report: what ringside-serial judged, from a saved event stream.
 * Exit status 0: clean, 1: problems found, 2: bad input.
 */
#include "commands.h"
#include "verdicts.h"

#include <stdio.h>

int rs_cmd_report(int argc, char **argv)
{
    gboolean json = FALSE;
    const GOptionEntry entries[] = {
        { "json", 0, 0, G_OPTION_ARG_NONE, &json,
          "One JSON object instead of the table", NULL },
        { NULL },
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("EVENTS.jsonl - what the device judged");
    g_autoptr(GError) error = NULL;
    g_autoptr(RsEventStream) events = NULL;
    RsVerdictReport r;
    RsL1Report l1;

    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx,
        "Exit status: 0 if every line was ok and no record missing, 1 if "
        "not, 2 on bad input.");
    if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
        g_printerr("ringside report: %s\n", error->message);
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
        rs_verdict_report_print(stdout, events, &r);
        rs_l1_report_print(stdout, events, &l1);
    }
    return r.problems || l1.problems ? 1 : 0;
}
