/*
 * ringside run: boot the guest kernel under the QEMU fork with
 * ringside-serial as its console, run one case, and print the timestamped
 * transcript and a one-line summary.
 */
#include "commands.h"
#include "errors.h"
#include "events.h"
#include "guest.h"
#include "transcript.h"
#include "verdicts.h"

#include <stdio.h>
#include <string.h>

typedef enum {
    END_PANIC,
    END_POWEROFF,
    END_REBOOT,
    END_TIMEOUT,
    END_QEMU_ERROR,
    END_UNKNOWN,
} GuestEnd;

static const char *const end_names[] = {
    [END_PANIC] = "panic",
    [END_POWEROFF] = "poweroff",
    [END_REBOOT] = "reboot",
    [END_TIMEOUT] = "timeout",
    [END_QEMU_ERROR] = "qemu-error",
    [END_UNKNOWN] = "exit",
};

/* The cases /init knows, and how each is meant to end. */
static const struct {
    const char *name;
    GuestEnd expect;
} cases[] = {
    { "sysrq-panic", END_PANIC },
    { "poweroff", END_POWEROFF },
    { "dmesg", END_POWEROFF },
    { "dmesg-hang", END_TIMEOUT },
    { "hang", END_TIMEOUT },
    { "kmsg-fill-hang", END_TIMEOUT },
    { "flood", END_POWEROFF },
    { "storm-panic", END_PANIC },
    { "panic-test", END_PANIC },
};

static gboolean line_has(const RsLine *l, const char *needle)
{
    return g_strstr_len(l->text, l->len, needle) != NULL;
}

/* How the guest ended, from QEMU's exit and the kernel's last words. */
static GuestEnd guest_end(const RsGuestResult *res, const RsTranscript *t)
{
    guint i;

    if (res->timed_out) {
        return END_TIMEOUT;
    }
    if (res->exit_status != 0) {
        return END_QEMU_ERROR;
    }
    /*
     * In a printk storm the console may drop the panic line itself; the
     * backtrace through panic() and x86's panic notifier line still say it.
     */
    for (i = 0; i < t->lines->len; i++) {
        if (line_has(t->lines->pdata[i], "Kernel panic - not syncing") ||
            line_has(t->lines->pdata[i], " panic+0x") ||
            line_has(t->lines->pdata[i], "] Kernel Offset: ")) {
            return END_PANIC;
        }
    }
    for (i = t->lines->len; i-- > 0;) {
        if (line_has(t->lines->pdata[i], "reboot: Power down")) {
            return END_POWEROFF;
        }
        if (line_has(t->lines->pdata[i], "reboot: Restarting system")) {
            return END_REBOOT;
        }
    }
    return END_UNKNOWN;
}

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
    g_autofree char *qemu = NULL, *kernel = NULL, *initrd = NULL;
    g_autofree char *case_name = NULL, *accel = NULL, *out = NULL;
    g_autofree char *append = NULL, *pace = NULL;
    gboolean quiet = FALSE;
    int smp = -1, memory = -1, timeout = -1;   /* -1: not given */
    int64_t latency;
    GuestEnd end, expect = END_UNKNOWN;
    guint i;
    int status = 1;
    const GOptionEntry entries[] = {
        { "case", 'c', 0, G_OPTION_ARG_STRING, &case_name,
          "Case for the guest's /init (default sysrq-panic)", "NAME" },
        { "kernel", 'k', 0, G_OPTION_ARG_FILENAME, &kernel,
          "Guest bzImage (default: the cached project kernel)", "FILE" },
        { "initrd", 0, 0, G_OPTION_ARG_FILENAME, &initrd,
          "Initramfs (default: the cached project initramfs)", "FILE" },
        { "qemu", 0, 0, G_OPTION_ARG_FILENAME, &qemu,
          "QEMU fork binary (default: the cached build)", "FILE" },
        { "smp", 0, 0, G_OPTION_ARG_INT, &smp, "vCPUs (default 2)", "N" },
        { "memory", 'm', 0, G_OPTION_ARG_INT, &memory,
          "Guest RAM in MiB (default 256)", "MIB" },
        { "accel", 0, 0, G_OPTION_ARG_STRING, &accel,
          "QEMU accelerators in order of preference (default tcg; "
          "kvm:tcg uses KVM where it works)", "LIST" },
        { "timeout", 't', 0, G_OPTION_ARG_INT, &timeout,
          "Seconds before a guest that has not ended is an error "
          "(default 120)", "S" },
        { "pace", 0, 0, G_OPTION_ARG_STRING, &pace,
          "line: the UART sends at the rate the guest programmed (default); "
          "off: as fast as QEMU can", "line|off" },
        { "append", 0, 0, G_OPTION_ARG_STRING, &append,
          "Extra kernel command line", "ARGS" },
        { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
          "Directory for console.log, events.jsonl and qemu.log "
          "(default: a new directory under /tmp)", "DIR" },
        { "quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet,
          "Print only the summary line", NULL },
        { "print-qemu", 0, 0, G_OPTION_ARG_NONE, &cfg.print_only,
          "Print the QEMU command line (shell-quoted) instead of running it",
          NULL },
        { NULL }
    };

    ctx = g_option_context_new("- boot a guest, run a case, show the wire");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
        g_printerr("ringside run: %s\n", error->message);
        return 2;
    }
    if (argc > 1) {
        g_printerr("ringside run: unexpected argument \"%s\"\n", argv[1]);
        return 2;
    }

    rs_guest_config_defaults(&cfg);
#define OVERRIDE(field, value) \
    if (value) { g_free(cfg.field); cfg.field = g_steal_pointer(&value); }
    OVERRIDE(qemu, qemu);
    OVERRIDE(kernel, kernel);
    OVERRIDE(initrd, initrd);
    OVERRIDE(case_name, case_name);
    OVERRIDE(accel, accel);
    OVERRIDE(append, append);
    OVERRIDE(pace, pace);
    OVERRIDE(outdir, out);
#undef OVERRIDE
    if (smp != -1) {
        cfg.smp = smp;
    }
    if (memory != -1) {
        cfg.memory_mib = memory;
    }
    if (timeout != -1) {
        cfg.timeout_s = timeout;
    }
    if (cfg.smp < 1 || cfg.smp > 64 || cfg.memory_mib < 64 ||
        cfg.memory_mib > 65536 || cfg.timeout_s < 1) {
        g_printerr("ringside run: --smp must be 1..64, --memory 64..65536, "
                   "--timeout at least 1\n");
        goto out;
    }
    if (!g_str_equal(cfg.pace, "line") && !g_str_equal(cfg.pace, "off")) {
        g_printerr("ringside run: --pace must be line or off\n");
        goto out;
    }
    for (i = 0; i < G_N_ELEMENTS(cases); i++) {
        if (g_str_equal(cases[i].name, cfg.case_name)) {
            expect = cases[i].expect;
        }
    }
    if (expect == END_UNKNOWN) {
        g_autoptr(GString) known = g_string_new(NULL);

        for (i = 0; i < G_N_ELEMENTS(cases); i++) {
            g_string_append_printf(known, "%s%s", i ? ", " : "",
                                   cases[i].name);
        }
        g_printerr("ringside run: unknown case \"%s\" (known: %s)\n",
                   cfg.case_name, known->str);
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
    t = rs_transcript_build(events);
    end = guest_end(&res, t);
    rs_verdict_report_build(events, &verdicts);
    rs_l1_report_build(events, &l1);
    if (!quiet) {
        print_transcript(t);
        rs_verdict_report_print(stdout, events, &verdicts);
        rs_l1_report_print(stdout, events, &l1);
    }

    printf("ringside: case=%s ended=%s bytes=%" G_GUINT64_FORMAT
           " lines=%u", cfg.case_name, end_names[end], t->wire_bytes,
           t->lines->len);
    if (rs_transcript_last_latency(t, &latency)) {
        printf(" last-line-latency=%.3fms", latency / 1e6);
    }
    if (t->lines->len) {
        const RsLine *last = t->lines->pdata[t->lines->len - 1];

        printf(" guest-time=%.3fs", last->vt_last_ns / 1e9);
    }
    printf(" wall=%.2fs pace=%s", res.wall_s, cfg.pace);
    if (events->ring_state[0]) {
        printf(" verdict=%s", verdicts.problems ? "problems" : "clean");
        if (verdicts.problems) {
            printf(":%" G_GUINT64_FORMAT, verdicts.problems);
        }
        if (verdicts.lines[7]) {
            printf(" unchecked=%" G_GUINT64_FORMAT, verdicts.lines[7]);
        }
    }
    if (l1.present) {
        printf(" l1=%s", l1.problems ? "problems" : "clean");
        if (l1.problems) {
            printf(":%" G_GUINT64_FORMAT, l1.problems);
        }
    }
    if (t->unsent_bytes || t->overrun_bytes || t->cleared_bytes) {
        printf(" unsent=%" G_GUINT64_FORMAT " overrun=%" G_GUINT64_FORMAT
               " cleared=%" G_GUINT64_FORMAT, t->unsent_bytes,
               t->overrun_bytes, t->cleared_bytes);
    }
    if (events->lost_events || events->index_gaps) {
        printf(" LOST-EVENTS=%" G_GUINT64_FORMAT,
               events->lost_events + events->index_gaps);
    }
    printf(" out=%s\n", cfg.outdir);
    fflush(stdout);

    if (end == END_QEMU_ERROR) {
        g_autofree char *why = qemu_last_words(res.qemu_log_path);

        g_printerr("ringside run: QEMU exited with status %d: %s\n",
                   res.exit_status, why);
    } else if (end != expect && end == END_TIMEOUT) {
        g_printerr("ringside run: the guest did not end within %d s\n",
                   cfg.timeout_s);
    } else if (end != expect) {
        g_printerr("ringside run: case %s should end in %s, but the guest "
                   "ended in %s\n", cfg.case_name, end_names[expect],
                   end_names[end]);
    } else if (events->lost_events || events->index_gaps) {
        g_printerr("ringside run: the event stream lost records\n");
    } else {
        status = 0;
    }
out:
    rs_guest_config_clear(&cfg);
    rs_guest_result_clear(&res);
    return status;
}
