/* ringside: command dispatch. */
#include "commands.h"
#include "errors.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>


static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} commands[] = {
    { "run", rs_cmd_run,
      "boot a guest under the QEMU fork, run a case, print the wire" },
    { "dmesg", rs_cmd_dmesg,
      "print the guest kernel's log from guest memory or a dump" },
    { "report", rs_cmd_report,
      "what the device judged, from a saved event stream" },
    { "fuzz", rs_cmd_fuzz,
      "run panic scenarios from a seed, save the failing ones" },
    { "replay", rs_cmd_replay,
      "record a case file's run, replay it, check it happens again" },
    { "attach", rs_cmd_attach,
      "follow libvirt domains' ringside consoles and verdicts" },
    { "libvirt-xml", rs_cmd_libvirt_xml,
      "libvirt domain XML that makes serial0 a ringside-serial" },
    { "qemu", rs_cmd_qemu,
      "a drop-in qemu-system-x86_64 whose console is ringside's" },
};

static void usage(FILE *f)
{
    guint i;

    fprintf(f, "Usage: ringside COMMAND [OPTION...]\n\n"
            "Check that what a guest kernel logged reached its console.\n\n"
            "Commands:\n");
    for (i = 0; i < G_N_ELEMENTS(commands); i++) {
        fprintf(f, "  %-12s %s\n", commands[i].name, commands[i].summary);
    }
    fprintf(f, "\n'ringside COMMAND --help' describes a command's options.\n"
            "  --version  print the version and exit\n");
}

/*
 * Run as qemu-system-x86_64 (the packages' drop-in is a link to this
 * program): every argument is QEMU's, as in "ringside qemu -- ARGS".
 */
static int as_qemu(int argc, char **argv)
{
    g_autofree char **args = g_new0(char *, argc + 3);
    int i;

    g_set_prgname("ringside qemu");
    args[0] = (char *)"qemu";
    args[1] = (char *)"--";
    for (i = 1; i < argc; i++) {
        args[i + 1] = argv[i];
    }
    return rs_cmd_qemu(argc + 1, args);
}

int main(int argc, char **argv)
{
    g_autofree char *self = g_path_get_basename(argv[0] ? argv[0] : "");
    guint i;

    if (!strcmp(self, "qemu-system-x86_64")) {
        return as_qemu(argc, argv);
    }
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("ringside %s\n", RINGSIDE_VERSION);
        return 0;
    }
    for (i = 0; i < G_N_ELEMENTS(commands); i++) {
        if (!strcmp(argv[1], commands[i].name)) {
            char *prgname = g_strdup_printf("ringside %s", argv[1]);

            g_set_prgname(prgname);
            g_free(prgname);
            return commands[i].fn(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "ringside: unknown command \"%s\" (try ringside --help)\n",
            argv[1]);
    return 2;
}
