/*
 * ringside libvirt-xml: print (or define) a libvirt domain whose serial0
 * is a validating ringside-serial: a new domain for the project's guest
 * kernel, or an existing domain's XML with ringside's addition made.  With
 * the packages installed the addition is the drop-in as <emulator>;
 * otherwise the fork, with serial0 swapped through libvirt's passthrough.
 */
#include "commands.h"
#include "errors.h"
#include "guest/guest.h"
#include "guest/guestopts.h"
#include "libvirt/bootfiles.h"
#include "libvirt/domxml.h"
#include "libvirt/virt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *uri, *domain, *new_name, *qemu, *events, *pace;
    char *kernel, *initrd, *case_name, *append, *boot_dir;
    gboolean define, shared, events_socket;
    int memory, vcpus;
} XmlArgs;

static void xml_args_clear(XmlArgs *a)
{
    g_free(a->uri);
    g_free(a->domain);
    g_free(a->new_name);
    g_free(a->qemu);
    g_free(a->events);
    g_free(a->pace);
    g_free(a->kernel);
    g_free(a->initrd);
    g_free(a->case_name);
    g_free(a->append);
    g_free(a->boot_dir);
}

static char *read_input(const char *path, GError **error)
{
    char *text = NULL;

    if (g_str_equal(path, "-")) {
        g_autoptr(GIOChannel) in = g_io_channel_unix_new(0);

        if (g_io_channel_read_to_end(in, &text, NULL, error) !=
            G_IO_STATUS_NORMAL) {
            return NULL;
        }
        return text;
    }
    if (!g_file_get_contents(path, &text, NULL, error)) {
        return NULL;
    }
    return text;
}

/*
 * The drop-in when it is installed (or named by --qemu), since libvirt
 * runs it with no passthrough; the fork with the passthrough when an
 * option needs the latter or nothing is installed.
 */
static gboolean pick_emulator(const XmlArgs *a, RsDomXmlOptions *opt,
                              GError **error)
{
    gboolean needs_passthrough = a->pace || a->events || a->events_socket;

    if (a->qemu) {
        /* Not realpath: the drop-in is a link, and its name counts. */
        opt->qemu = g_canonicalize_filename(a->qemu, NULL);
        opt->dropin = g_str_has_suffix(opt->qemu, RS_DROPIN_SUFFIX);
    } else if (!needs_passthrough &&
               g_file_test(RS_INSTALLED_DROPIN, G_FILE_TEST_EXISTS)) {
        opt->qemu = g_strdup(RS_INSTALLED_DROPIN);
        opt->dropin = TRUE;
    } else {
        g_autofree char *fork = rs_default_qemu();

        opt->qemu = g_canonicalize_filename(fork, NULL);
    }
    if (opt->dropin && needs_passthrough) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "--pace, --events and --events-socket need the fork "
                    "with libvirt's passthrough, not the drop-in: give "
                    "--qemu " RS_INSTALLED_QEMU);
        return FALSE;
    }
    return TRUE;
}

static void warn_unreachable(const char *emulator)
{
    g_autofree char *why = NULL;

    if (!rs_bootfile_reachable(emulator, TRUE, &why)) {
        g_printerr("ringside libvirt-xml: warning: libvirt-qemu, as which "
                   "Debian's default qemu.conf runs QEMU, cannot run %s (%s); "
                   "install the ringside-qemu package or give --qemu\n",
                   emulator, why);
    }
}

/*
 * A domain for the project's kernel, which is copied into the boot
 * directory once the XML is known to be good.
 */
static char *new_domain(const XmlArgs *a, const RsDomXmlOptions *opt,
                        GError **error)
{
    RsGuestConfig defaults = { 0 };
    g_autofree char *kname = g_strconcat(a->new_name, ".bzImage", NULL);
    g_autofree char *iname = g_strconcat(a->new_name, ".initrd", NULL);
    g_autofree char *cmdline = NULL;
    const char *dir = a->boot_dir ? a->boot_dir : RS_LIBVIRT_BOOT_DIR;
    const char *kernel, *initrd;
    RsDomSpec spec = {
        .name = a->new_name, .memory_mib = a->memory, .vcpus = a->vcpus,
    };
    char *xml;

    rs_guest_config_defaults(&defaults);
    kernel = a->kernel ? a->kernel : defaults.kernel;
    initrd = a->initrd ? a->initrd : defaults.initrd;
    cmdline = rs_guest_cmdline(a->case_name ? a->case_name :
                               defaults.case_name, a->append);
    spec.kernel = rs_bootfile_target(kernel, dir, kname);
    spec.initrd = rs_bootfile_target(initrd, dir, iname);
    spec.cmdline = cmdline;
    xml = rs_domxml_new(&spec, opt, error);
    if (xml && (!rs_bootfile_copy(kernel, spec.kernel, error) ||
                !rs_bootfile_copy(initrd, spec.initrd, error))) {
        g_clear_pointer(&xml, g_free);
    }
    g_free(spec.kernel);
    g_free(spec.initrd);
    rs_guest_config_clear(&defaults);
    return xml;
}

static char *existing_domain(virConnectPtr conn, const char *domain,
                             const char *file, const RsDomXmlOptions *opt,
                             GError **error)
{
    g_autofree char *xml = NULL;
    char *out;

    if (domain) {
        virDomainPtr dom = virDomainLookupByName(conn, domain);
        char *desc;

        if (!dom) {
            rs_virt_error(error, "no domain \"%s\"", domain);
            return NULL;
        }
        desc = virDomainGetXMLDesc(dom, VIR_DOMAIN_XML_INACTIVE);
        if (!desc) {
            rs_virt_error(error, "cannot read %s's XML", domain);
        }
        virDomainFree(dom);
        if (!desc) {
            return NULL;
        }
        xml = g_strdup(desc);
        free(desc);
    } else {
        xml = read_input(file, error);
        if (!xml) {
            return NULL;
        }
    }
    out = rs_domxml_patch(xml, opt, error);
    if (!out) {
        g_prefix_error(error, "%s: ", domain ? domain : file);
    }
    return out;
}

static gboolean check_args(const XmlArgs *a, int argc)
{
    g_autoptr(GError) error = NULL;
    const char *bad = NULL;

    if ((a->new_name != NULL) + (a->domain != NULL) + (argc > 1) != 1) {
        bad = "give exactly one of --new NAME, --domain NAME or FILE";
    } else if (a->define && argc > 1) {
        bad = "--define needs --new or --domain";
    } else if (a->new_name && (!*a->new_name || strchr(a->new_name, '/') ||
                               a->new_name[0] == '.')) {
        bad = "--new NAME: no '/', and not beginning with '.'";
    } else if (!rs_opt_pace(a->pace, &error) ||
               !rs_opt_range("--memory", a->memory, RS_MEMORY_MIN,
                             RS_MEMORY_MAX, &error) ||
               !rs_opt_range("--vcpus", a->vcpus, 1, RS_SMP_MAX, &error)) {
        bad = error->message;
    }
    if (bad) {
        g_printerr("ringside libvirt-xml: %s\n", bad);
    }
    return !bad;
}

/* @xml defined on @conn, its name said; or, without @define, printed. */
static gboolean deliver(virConnectPtr conn, const char *xml, gboolean define,
                        GError **error)
{
    virDomainPtr d;

    if (!define) {
        fputs(xml, stdout);
        return TRUE;
    }
    d = virDomainDefineXML(conn, xml);
    if (!d) {
        rs_virt_error(error, "cannot define the domain");
        return FALSE;
    }
    printf("defined domain %s\n", virDomainGetName(d));
    virDomainFree(d);
    return TRUE;
}

int rs_cmd_libvirt_xml(int argc, char **argv)
{
    g_autoptr(GOptionContext) ctx = NULL;
    g_autoptr(GError) error = NULL;
    g_autofree char *out = NULL;
    XmlArgs a = { .memory = 256, .vcpus = 2 };
    RsDomXmlOptions opt = { 0 };
    virConnectPtr conn = NULL;
    int status = 1;
    const GOptionEntry entries[] = {
        { "new", 0, 0, G_OPTION_ARG_STRING, &a.new_name,
          "A new domain NAME that boots the project's guest kernel "
          "(direct kernel boot, no disks)", "NAME" },
        { "connect", 'c', 0, G_OPTION_ARG_STRING, &a.uri,
          "libvirt URI (default qemu:///system)", "URI" },
        { "domain", 'd', 0, G_OPTION_ARG_STRING, &a.domain,
          "Make the addition to this defined domain's XML", "NAME" },
        { "define", 0, 0, G_OPTION_ARG_NONE, &a.define,
          "Define the result on the connection instead of printing it",
          NULL },
        { "qemu", 0, 0, G_OPTION_ARG_FILENAME, &a.qemu,
          "<emulator>: the drop-in (" RS_INSTALLED_DROPIN ", the default "
          "when installed) or a fork binary", "FILE" },
        { "events", 0, 0, G_OPTION_ARG_FILENAME, &a.events,
          "File the device appends its events to (default "
          "/var/lib/libvirt/qemu/NAME.ringside-events.jsonl)", "FILE" },
        { "events-socket", 0, 0, G_OPTION_ARG_NONE, &a.events_socket,
          "The device writes its events to a socket that ringside attach "
          "reads and keeps in rotated files (default unix:/var/lib/libvirt/"
          "qemu/NAME.ringside-events.sock; or give --events unix:PATH or "
          "tcp:HOST:PORT)", NULL },
        { "shared-memory", 0, 0, G_OPTION_ARG_NONE, &a.shared,
          "Back guest RAM with a file shared with the host, so that "
          "ringside attach reads the printk ring too (always with --new)",
          NULL },
        { "pace", 0, 0, G_OPTION_ARG_STRING, &a.pace,
          "ringside-serial pace= (default: the device's, off)", "line|off" },
        { "kernel", 'k', 0, G_OPTION_ARG_FILENAME, &a.kernel,
          "--new: guest bzImage (default: the project kernel, built or "
          "installed)", "FILE" },
        { "initrd", 0, 0, G_OPTION_ARG_FILENAME, &a.initrd,
          "--new: initramfs (default: the project's, built or installed)",
          "FILE" },
        { "boot-dir", 0, 0, G_OPTION_ARG_FILENAME, &a.boot_dir,
          "--new: where the kernel and initramfs are copied, as NAME.bzImage "
          "and NAME.initrd, for the domain's QEMU to read (default "
          RS_LIBVIRT_BOOT_DIR ")", "DIR" },
        { "case", 0, 0, G_OPTION_ARG_STRING, &a.case_name,
          "--new: case for the guest's /init (default sysrq-panic)", "NAME" },
        { "append", 0, 0, G_OPTION_ARG_STRING, &a.append,
          "--new: extra kernel command line", "ARGS" },
        { "memory", 'm', 0, G_OPTION_ARG_INT, &a.memory,
          "--new: guest RAM in MiB (default 256)", "MIB" },
        { "vcpus", 0, 0, G_OPTION_ARG_INT, &a.vcpus,
          "--new: vCPUs (default 2)", "N" },
        { NULL }
    };

    ctx = g_option_context_new("[FILE|-] - libvirt domain XML for ringside");
    g_option_context_set_description(ctx,
        "With FILE (or - for standard input), print that domain XML with\n"
        "ringside's addition.  With the packages installed the addition is\n"
        "<emulator> set to the drop-in, which puts ringside-serial in front\n"
        "of libvirt's serial0 itself; otherwise <emulator> is the fork,\n"
        "serial0 turned into ringside-serial through <qemu:override>, and\n"
        "the device's event file added through <qemu:commandline>.\n"
        "'virsh console' keeps working: the serial port is still libvirt's\n"
        "pty.\n");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!rs_parse_options(ctx, &argc, &argv, 1) || !check_args(&a, argc)) {
        xml_args_clear(&a);
        return 2;
    }
    if (!pick_emulator(&a, &opt, &error)) {
        goto out;
    }
    opt.pace = a.pace;
    opt.shared_memory = a.shared || a.new_name;
    opt.events = a.events;
    opt.socket = a.events_socket;

    if (a.define || a.domain) {
        rs_virt_init();
        conn = rs_virt_connect(a.uri ? a.uri : "qemu:///system", &error);
        if (!conn) {
            goto out;
        }
    }
    out = a.new_name ? new_domain(&a, &opt, &error)
                     : existing_domain(conn, a.domain, argv[1], &opt, &error);
    if (out && deliver(conn, out, a.define, &error)) {
        warn_unreachable(opt.qemu);
        status = 0;
    }
out:
    if (error) {
        g_printerr("ringside libvirt-xml: %s\n", error->message);
    }
    g_free(opt.qemu);
    xml_args_clear(&a);
    if (conn) {
        virConnectClose(conn);
    }
    return status;
}
