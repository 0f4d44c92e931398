/*
 * ringside qemu: a drop-in qemu-system-x86_64 for tools that start QEMU
 * themselves (syzkaller, virtme-ng, test runners).  It takes their QEMU
 * command line unchanged, puts ringside-serial in front of the console's
 * chardev, and execs the fork in its own place: the caller's pid, stdio,
 * signals and exit status are QEMU's, and the console's bytes are the
 * ones plain QEMU would give.  Each run's events and verdicts go to a
 * directory of their own.
 */
#include "commands.h"
#include "dropin/qemuargs.h"
#include "dropin/runlog.h"
#include "errors.h"
#include "events/events.h"
#include "guest/guest.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_KEEP 20

/* A -name made safe as one path component. */
static char *safe_name(const char *name)
{
    char *s = g_strdup(name && *name ? name : "qemu");
    char *p;

    for (p = s; *p; p++) {
        if (!g_ascii_isalnum(*p) && *p != '-' && *p != '_' && *p != '.') {
            *p = '_';
        }
    }
    if (s[0] == '.') {
        s[0] = '_';
    }
    return s;
}

static void usage_error(const char *msg)
{
    g_printerr("ringside qemu: %s (try ringside qemu --help)\n", msg);
}

static const char description[] =
    "QEMU-ARGS is a qemu-system-x86_64 command line, unchanged.  Its first\n"
    "serial port (-serial stdio|pty|file:|pipe:|null|chardev:ID|mon:...,\n"
    "an isa-serial -device, or QEMU's default) becomes a ringside-serial\n"
    "on the same chardev; nothing else changes, and ringside prints\n"
    "nothing on success.  Tools that only let you add QEMU arguments can\n"
    "give these settings as -ringside out=DIR,pace=line,keep=N,qemu=PATH,\n"
    "vmcoreinfo\n"
    "among them; the environment's RINGSIDE_OUT and RINGSIDE_QEMU come\n"
    "last.\n\n"
    "Each run gets OUT/run-DATE-TIME-PID/ with the device's events.jsonl\n"
    "and the QEMU command line; when QEMU has gone, its verdicts go to\n"
    "report.json there and one line to OUT/runs.jsonl, and only the\n"
    "newest KEEP runs are kept.  OUT defaults to\n"
    "$XDG_STATE_HOME/ringside/qemu/NAME (~/.local/state/...; NAME from\n"
    "-name).  Exit status: QEMU's; 2 if the command line cannot be taken\n"
    "over.";

int rs_cmd_qemu(int argc, char **argv)
{
    g_autofree char *qemu = NULL, *out = NULL, *pace = NULL;
    g_autofree char *out_dir = NULL, *print_events = NULL;
    gboolean print = FALSE, for_attach = FALSE, vmcoreinfo = FALSE;
    int keep = -1;
    const GOptionEntry entries[] = {
        { "qemu", 0, 0, G_OPTION_ARG_FILENAME, &qemu,
          "The QEMU fork to run (default: the installed or built one)",
          "PATH" },
        { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
          "Where each run's directory goes", "DIR" },
        { "pace", 0, 0, G_OPTION_ARG_STRING, &pace,
          "off (default: the 16550's timing, as plain QEMU) or line "
          "(the wire's 115200 baud, for latency)", "MODE" },
        { "keep", 0, 0, G_OPTION_ARG_INT, &keep,
          "Run directories kept (default 20; 0: all)", "N" },
        { "vmcoreinfo", 0, 0, G_OPTION_ARG_NONE, &vmcoreinfo,
          "Add -device vmcoreinfo (if the line has none), so that the "
          "device finds a stock kernel's ring; the guest sees it", NULL },
        { "print", 0, 0, G_OPTION_ARG_NONE, &print,
          "Print the command line it would run, and exit", NULL },
        { NULL },
    };
    g_autoptr(GOptionContext) ctx =
        g_option_context_new("-- QEMU-ARGS... - run QEMU with "
                             "ringside-serial as its console");
    g_autoptr(GPtrArray) qargs = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GHashTable) own = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) full = NULL;
    RsQemuArgs rw = { 0 };
    RsRunLog log = { 0 };
    RsQemuArgsOpts opts = { 0 };
    int dashdash = argc, i;
    const char *v;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--")) {
            dashdash = i;
            break;
        }
    }
    for (i = dashdash + 1; i < argc; i++) {
        g_ptr_array_add(qargs, g_strdup(argv[i]));
    }
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx, description);
    if (!rs_parse_options(ctx, &dashdash, &argv, 1)) {
        return 2;
    }
    if (!qargs->len) {
        usage_error("expected -- and a QEMU command line");
        return 2;
    }

    own = rs_qemu_args_take_own(qargs);
    if (own) {
        GHashTableIter it;
        gpointer k;

        g_hash_table_iter_init(&it, own);
        while (g_hash_table_iter_next(&it, &k, NULL)) {
            if (strcmp(k, "out") && strcmp(k, "pace") && strcmp(k, "keep") &&
                strcmp(k, "qemu") && strcmp(k, "vmcoreinfo")) {
                g_autofree char *m = g_strdup_printf(
                    "-ringside: no setting \"%s\" (out, pace, keep, qemu, "
                    "vmcoreinfo)",
                    (char *)k);

                usage_error(m);
                return 2;
            }
        }
#define OWN(var, key) \
        if (!var && (v = g_hash_table_lookup(own, key))) { \
            var = g_strdup(v); \
        }
        OWN(out, "out");
        OWN(pace, "pace");
        OWN(qemu, "qemu");
#undef OWN
        if (keep < 0 && (v = g_hash_table_lookup(own, "keep"))) {
            guint64 n;

            if (!g_ascii_string_to_unsigned(v, 10, 0, 100000, &n, NULL)) {
                usage_error("-ringside keep= expects a number of runs");
                return 2;
            }
            keep = (int)n;
        }
        if ((v = g_hash_table_lookup(own, "vmcoreinfo"))) {
            if (*v && strcmp(v, "on") && strcmp(v, "off")) {
                usage_error("-ringside vmcoreinfo= expects on or off");
                return 2;
            }
            vmcoreinfo |= strcmp(v, "off") != 0;
        }
    }
    if (pace && strcmp(pace, "off") && strcmp(pace, "line")) {
        usage_error("--pace expects off or line");
        return 2;
    }
    if (keep < -1 || keep > 100000) {
        usage_error("--keep expects 0 to 100000");
        return 2;
    }
    if (!qemu) {
        qemu = rs_default_qemu();      /* $RINGSIDE_QEMU first */
    }
    g_ptr_array_add(qargs, NULL);

    /* The run's directory is needed before the device's chardev names
     * its events file; it is made only once there is a console. */
    opts.pace = pace;
    opts.vmcoreinfo = vmcoreinfo;
    opts.events_path = "EVENTS";
    if (!rs_qemu_args_rewrite((char **)qargs->pdata, &opts, &rw, &error)) {
        g_printerr("ringside qemu: %s\n", error->message);
        return 2;
    }
    if (rw.console) {
        g_autofree char *name = safe_name(rw.name);

        if (!out && (v = g_getenv("RINGSIDE_OUT")) && *v && !rw.libvirt) {
            out = g_strdup(v);
        }
        if (rw.libvirt && !out) {
            /*
             * A libvirt domain: the events go where ringside attach reads
             * them, appended boot after boot, and attach judges each boot.
             */
            print_events = rs_events_libvirt_path(name);
            opts.events_path = print_events;
            for_attach = TRUE;
        } else {
            /* The user's own state directory, not a shared /tmp path that
             * someone else could have made first. */
            out_dir = out ? g_strdup(out)
                          : g_build_filename(g_get_user_state_dir(),
                                             "ringside", "qemu", name, NULL);
            if (print) {
                print_events = g_build_filename(out_dir, "run-DATE-TIME-PID",
                                                "events.jsonl", NULL);
                opts.events_path = print_events;
            } else if (rs_run_log_open(&log, out_dir,
                                       keep < 0 ? DEFAULT_KEEP : (guint)keep,
                                       &error)) {
                opts.events_path = log.events;
            } else {
                g_printerr("ringside qemu: %s\n", error->message);
                rs_qemu_args_clear(&rw);
                return 2;
            }
        }
        rs_qemu_args_clear(&rw);
        if (!rs_qemu_args_rewrite((char **)qargs->pdata, &opts, &rw,
                                  &error)) {
            g_printerr("ringside qemu: %s\n", error->message);
            return 2;
        }
    }

    full = g_ptr_array_new();
    g_ptr_array_add(full, qemu);
    for (i = 0; i < (int)rw.argv->len; i++) {
        g_ptr_array_add(full, rw.argv->pdata[i]);
    }
    g_ptr_array_add(full, NULL);

    if (print) {
        for (i = 0; full->pdata[i]; i++) {
            g_autofree char *q = g_shell_quote(full->pdata[i]);

            printf("%s%s", i ? " " : "", q);
        }
        printf("\n");
        rs_qemu_args_clear(&rw);
        return 0;
    }
    if (rw.console && !for_attach) {
        if (!rs_run_log_write_command(&log, (const char *const *)full->pdata,
                                      &error) ||
            (!rw.daemonize && !rs_run_log_watch(&log, rw.console, &error))) {
            g_printerr("ringside qemu: %s\n", error->message);
            return 2;
        }
    }
    execv(qemu, (char **)full->pdata);
    g_printerr("ringside qemu: cannot run %s: %s\n", qemu, g_strerror(errno));
    return errno == ENOENT ? 127 : 126;
}
