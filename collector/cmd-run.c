/*
 * ringside run: boot the guest kernel under the QEMU fork with
 * ringside-serial as its console, run one case, and print the timestamped
 * transcript and a one-line summary.
 */
#include "commands.h"
#include "errors.h"
#include "events/events.h"
#include "events/journal.h"
#include "events/transcript.h"
#include "fuzz/scenario.h"
#include "guest/guest.h"
#include "guest/guestopts.h"
#include "report/outcome.h"
#include "report/verdicts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cases /init knows, and how each is meant to end. */
static const struct {
    const char *name;
    RsGuestEnd expect;
} cases[] = {
    { "sysrq-panic", RS_END_PANIC },
    { "poweroff", RS_END_POWEROFF },
    { "dmesg", RS_END_POWEROFF },
    { "dmesg-hang", RS_END_TIMEOUT },
    { "hang", RS_END_TIMEOUT },
    { "kmsg-fill-hang", RS_END_TIMEOUT },
    { "flood", RS_END_POWEROFF },
    { "storm-panic", RS_END_PANIC },
    { "panic-test", RS_END_PANIC },
    { "fuzz", RS_END_PANIC },
    { "tick", RS_END_TIMEOUT },
    { "distro", RS_END_POWEROFF },
};

static void print_transcript(const RsTranscript *t)
{
    guint i;

    for (i = 0; i < t->lines->len; i++) {
        const RsLine *l = t->lines->pdata[i];

        /* Virtual time of the line's last byte, and who wrote it. */
        printf("%6" G_GINT64_FORMAT ".%06" G_GINT64_FORMAT " cpu%-2d%s| %s%s\n",
               l->vt_last_ns / 1000000000, l->vt_last_ns / 1000 % 1000000,
               l->cpu, l->mixed_cpus ? "+" : " ", l->text,
               l->terminated ? "" : " <no newline>");
    }
}

/* --journal: the run's lines as journal entries, under the case's name. */
static gboolean write_journal(const char *path, const char *name,
                              RsEventStream *events, const char *console)
{
    g_autofree char *text = NULL;
    gsize len = 0;
    FILE *f = strcmp(path, "-") ? fopen(path, "a") : stdout;

    if (!f) {
        g_printerr("ringside run: cannot write %s: %s\n", path,
                   g_strerror(errno));
        return FALSE;
    }
    g_file_get_contents(console, &text, &len, NULL);
    rs_journal_write_stream(f, name, 1, events, text ? text : "", len);
    if (f == stdout) {
        fflush(f);
    } else if (fclose(f) != 0) {
        g_printerr("ringside run: cannot write %s: %s\n", path,
                   g_strerror(errno));
        return FALSE;
    }
    return TRUE;
}

/* Last line of QEMU's own output, to explain why it failed. */
static char *qemu_last_words(const char *path)
{
    g_autofree char *log = NULL;
    g_auto(GStrv) lines = NULL;
    int n;

    if (!g_file_get_contents(path, &log, NULL, NULL)) {
        return g_strdup("(no QEMU log)");
    }
    lines = g_strsplit(g_strstrip(log), "\n", -1);
    n = g_strv_length(lines);
    return g_strdup(n ? lines[n - 1] : "(QEMU printed nothing)");
}

/* The end case @name expects; RS_END_UNKNOWN, said, if no case is. */
static RsGuestEnd run_expected_end(const char *name)
{
    g_autoptr(GString) known = g_string_new(NULL);
    gboolean file = g_file_test(name, G_FILE_TEST_EXISTS);
    guint i;

    for (i = 0; i < G_N_ELEMENTS(cases); i++) {
        if (g_str_equal(cases[i].name, name)) {
            return cases[i].expect;
        }
        g_string_append_printf(known, "%s%s", i ? ", " : "", cases[i].name);
    }
    g_printerr("ringside run: unknown case \"%s\" (known: %s%s%s)\n", name,
               known->str, file ? "; a case file is named with a '/' or "
               "\".case\": ./" : "", file ? name : "");
    return RS_END_UNKNOWN;
}

/* The one summary line. */
static void print_summary(const RsGuestConfig *cfg, const RsGuestResult *res,
                          const RsEventStream *events, const RsTranscript *t,
                          RsGuestEnd end, const RsVerdictReport *verdicts,
                          const RsL1Report *l1, gboolean have_sc)
{
    int64_t latency;
    char why[64];

    printf("ringside: case=%s ended=%s bytes=%" G_GUINT64_FORMAT
           " lines=%u", cfg->case_name, rs_end_names[end], t->wire_bytes,
           t->lines->len);
    if (rs_transcript_last_latency(t, &latency)) {
        printf(" last-line-latency=%.3fms", latency / 1e6);
    }
    if (t->lines->len) {
        const RsLine *last = t->lines->pdata[t->lines->len - 1];

        printf(" guest-time=%.3fs", last->vt_last_ns / 1e9);
    }
    printf(" wall=%.2fs pace=%s", res->wall_s, cfg->pace);
    if (events->ring_state[0]) {
        printf(" verdict=%s", verdicts->problems ? "problems" : "clean");
        if (verdicts->problems) {
            printf(":%" G_GUINT64_FORMAT, verdicts->problems);
        }
        if (verdicts->lines[RS_V_UNCHECKED]) {
            printf(" unchecked=%" G_GUINT64_FORMAT,
                   verdicts->lines[RS_V_UNCHECKED]);
        }
    }
    if (l1->present) {
        printf(" l1=%s", l1->problems ? "problems" : "clean");
        if (l1->problems) {
            printf(":%" G_GUINT64_FORMAT, l1->problems);
        }
    }
    if (t->unsent_bytes || t->overrun_bytes || t->cleared_bytes ||
        t->refused_bytes) {
        printf(" unsent=%" G_GUINT64_FORMAT " overrun=%" G_GUINT64_FORMAT
               " cleared=%" G_GUINT64_FORMAT " refused=%" G_GUINT64_FORMAT,
               t->unsent_bytes, t->overrun_bytes, t->cleared_bytes,
               t->refused_bytes);
    }
    /* Timing-dependent results (flush times, what got out before a
     * timeout, overruns) are the host's when this says no. */
    if (rs_run_faithful(res, why, sizeof(why))) {
        printf(" faithful=yes");
    } else {
        printf(" faithful=no(%s)", why);
    }
    if (events->lost_events || events->index_gaps) {
        printf(" LOST-EVENTS=%" G_GUINT64_FORMAT,
               events->lost_events + events->index_gaps);
    }
    if (have_sc) {
        RsOutcome o;

        if (rs_outcome_judge(res, RS_END_PANIC, &o, NULL)) {
            printf(" class=%s", rs_class_names[o.klass]);
        }
    }
    printf(" out=%s\n", cfg->outdir);
    fflush(stdout);
}

/* 0 if the guest ended as the case expects and no event was lost; else
 * 1, said. */
static int run_status(const RsGuestConfig *cfg, const RsGuestResult *res,
                      const RsEventStream *events, RsGuestEnd end,
                      RsGuestEnd expect)
{
    if (end == RS_END_QEMU_ERROR) {
        g_autofree char *why = qemu_last_words(res->qemu_log_path);

        g_printerr("ringside run: QEMU exited with status %d: %s\n",
                   res->exit_status, why);
    } else if (end != expect && end == RS_END_TIMEOUT) {
        g_printerr("ringside run: the guest did not end within %d s\n",
                   cfg->timeout_s);
    } else if (end != expect) {
        g_printerr("ringside run: case %s should end in %s, but the guest "
                   "ended in %s\n", cfg->case_name, rs_end_names[expect],
                   rs_end_names[end]);
    } else if (events->lost_events || events->index_gaps) {
        g_printerr("ringside run: the event stream lost records\n");
    } else {
        return 0;
    }
    return 1;
}

/*
 * @cfg from the defaults, a case file's [origin] if --case names one, and
 * then the options given (@smp, @memory, @timeout: -1 if not).
 */
static gboolean run_configure(RsGuestConfig *cfg, RsGuestGiven *given,
                              int smp, int memory, int timeout,
                              RsScenario *sc, gboolean *have_sc,
                              GError **error)
{
    rs_guest_config_defaults(cfg);
    if (given->case_name && rs_case_file_named(given->case_name)) {
        g_autoptr(GHashTable) origin = NULL;
        const char *file = given->case_name;
        const char *v;

        if (!rs_scenario_load(file, sc, &origin, error)) {
            return FALSE;
        }
        *have_sc = TRUE;
        /* The case's own kernel and settings, unless overridden. */
        v = g_hash_table_lookup(origin, "kernel");
        if (v && !given->kernel) {
            given->kernel = g_strdup(v);
        }
        v = g_hash_table_lookup(origin, "pace");
        if (v && !given->pace) {
            given->pace = g_strdup(v);
        }
        v = g_hash_table_lookup(origin, "memory");
        if (v && memory == -1 &&
            !rs_origin_int(file, "memory", v, RS_MEMORY_MIN, RS_MEMORY_MAX,
                           &memory, error)) {
            return FALSE;
        }
        if (smp == -1) {
            smp = sc->smp;
        }
        cfg->mailbox = rs_scenario_words(sc);
        g_free(given->case_name);
        given->case_name = g_strdup("fuzz");
    }
    if (given->oracle) {
        char *words = g_strdup_printf("%s%sringside.oracle=ttyS1",
                                      given->append ? given->append : "",
                                      given->append ? " " : "");

        g_free(given->append);
        given->append = words;
    }
    rs_guest_given_apply(given, cfg);
    if (smp != -1) {
        cfg->smp = smp;
    }
    if (memory != -1) {
        cfg->memory_mib = memory;
    }
    if (timeout != -1) {
        cfg->timeout_s = timeout;
    }
    return rs_guest_config_check(cfg, error);
}

int rs_cmd_run(int argc, char **argv)
{
    RsGuestConfig cfg = { 0 };
    RsGuestResult res = { 0 };
    g_autoptr(GError) error = NULL;
    g_autoptr(GOptionContext) ctx = NULL;
    g_autoptr(RsEventStream) events = NULL;
    g_autoptr(RsTranscript) t = NULL;
    RsVerdictReport verdicts;
    RsL1Report l1;
    g_auto(RsGuestGiven) given = { 0 };
    g_autofree char *journal = NULL;
    gboolean quiet = FALSE;
    int smp = -1, memory = -1, timeout = -1;   /* -1: not given */
    RsScenario sc;
    gboolean have_sc = FALSE;
    RsGuestEnd end, expect = RS_END_UNKNOWN;
    int status = 1;
    const GOptionEntry entries[] = {
        { "case", 'c', 0, G_OPTION_ARG_STRING, &given.case_name,
          "Case for the guest's /init (default sysrq-panic), or a case "
          "file that ringside fuzz saved", "NAME|FILE" },
        { "kernel", 'k', 0, G_OPTION_ARG_FILENAME, &given.kernel,
          "Guest bzImage (default: the cached project kernel)", "FILE" },
        { "initrd", 0, 0, G_OPTION_ARG_FILENAME, &given.initrd,
          "Initramfs (default: the cached project initramfs)", "FILE" },
        { "qemu", 0, 0, G_OPTION_ARG_FILENAME, &given.qemu,
          "QEMU fork binary (default: the cached build)", "FILE" },
        { "smp", 0, 0, G_OPTION_ARG_INT, &smp, "vCPUs (default 2)", "N" },
        { "memory", 'm', 0, G_OPTION_ARG_INT, &memory,
          "Guest RAM in MiB (default 256)", "MIB" },
        { "accel", 0, 0, G_OPTION_ARG_STRING, &given.accel,
          "QEMU accelerators in order of preference (default tcg; "
          "kvm:tcg uses KVM where it works)", "LIST" },
        { "timeout", 't', 0, G_OPTION_ARG_INT, &timeout,
          "Seconds before a guest that has not ended is an error "
          "(default 120)", "S" },
        { "pace", 0, 0, G_OPTION_ARG_STRING, &given.pace,
          "line: the UART sends at the rate the guest programmed (default); "
          "off: as fast as QEMU can", "line|off" },
        { "append", 0, 0, G_OPTION_ARG_STRING, &given.append,
          "Extra kernel command line", "ARGS" },
        { "oracle", 0, 0, G_OPTION_ARG_FILENAME, &given.oracle,
          "A second UART (ttyS1) to FILE, to which /init copies the kernel "
          "log from /dev/kmsg before a poweroff (ringside.oracle=ttyS1)",
          "FILE" },
        { "out", 'o', 0, G_OPTION_ARG_FILENAME, &given.outdir,
          "Directory for console.log, events.jsonl and qemu.log "
          "(default: a new directory under /tmp)", "DIR" },
        { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet,
          "Print only the summary line", NULL },
        { "tx-events", 0, 0, G_OPTION_ARG_NONE, &cfg.tx_events,
          "Also a \"tx\" event per byte in events.jsonl (the device's "
          "tx-events=on: some 30 times the volume, for a byte-level look)",
          NULL },
        { "journal", 0, 0, G_OPTION_ARG_FILENAME, &journal,
          "Also write each console line (and each record that never "
          "reached the console) as a journal entry in the Journal Export "
          "Format to FILE, appending (- for standard output)", "FILE" },
        { "print-qemu", 0, 0, G_OPTION_ARG_NONE, &cfg.print_only,
          "Print the QEMU command line (shell-quoted) instead of running it",
          NULL },
        { NULL }
    };

    ctx = g_option_context_new("- boot a guest, run a case, show the wire");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!rs_parse_options(ctx, &argc, &argv, 0)) {
        return 2;
    }

    if (!run_configure(&cfg, &given, smp, memory, timeout, &sc, &have_sc,
                       &error)) {
        g_printerr("ringside run: %s\n", error->message);
        goto out;
    }
    expect = run_expected_end(cfg.case_name);
    if (expect == RS_END_UNKNOWN) {
        goto out;
    }
    if (!cfg.outdir) {
        cfg.outdir = g_dir_make_tmp("ringside-run-XXXXXX", &error);
        if (!cfg.outdir) {
            g_printerr("ringside run: %s\n", error->message);
            goto out;
        }
    }

    if (!rs_guest_run(&cfg, &res, &error)) {
        g_printerr("ringside run: %s\n", error->message);
        goto out;
    }
    if (cfg.print_only) {
        status = 0;
        goto out;
    }
    events = rs_event_stream_load(res.events_path, &error);
    if (!events) {
        g_autofree char *why = qemu_last_words(res.qemu_log_path);

        g_printerr("ringside run: no event stream (%s); QEMU said: %s\n",
                   error->message, why);
        goto out;
    }
    {
        g_autofree char *text = NULL;
        gsize len = 0;

        /* the text of a stream of line events is what the console got */
        if (!events->tx->len) {
            g_file_get_contents(res.console_path, &text, &len, NULL);
        }
        t = rs_transcript_build_console(events, text ? text : "", len);
        if (journal && !write_journal(journal, cfg.case_name, events,
                                      res.console_path)) {
            goto out;
        }
    }
    end = rs_guest_end(&res, t);
    rs_verdict_report_build(events, &verdicts);
    rs_l1_report_build(events, &l1);
    if (!quiet) {
        print_transcript(t);
        rs_verdict_report_print(stdout, events, &verdicts);
        rs_l1_report_print(stdout, events, &l1);
    }

    print_summary(&cfg, &res, events, t, end, &verdicts, &l1, have_sc);

    status = run_status(&cfg, &res, events, end, expect);
out:
    rs_guest_config_clear(&cfg);
    rs_guest_result_clear(&res);
    return status;
}
