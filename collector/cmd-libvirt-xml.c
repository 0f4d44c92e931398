/*
 * ringside libvirt-xml: print (or define) a libvirt domain whose serial0
 * is a validating ringside-serial under the QEMU fork: a new domain for
 * the project's guest kernel, or an existing domain's XML with ringside's
 * addition made.
 */
#include "commands.h"
#include "errors.h"
#include "guest/guest.h"
#include "libvirt/domxml.h"
#include "libvirt/virt.h"

#include <stdio.h>
#include <string.h>

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

int rs_cmd_libvirt_xml(int argc, char **argv)
{
    g_autoptr(GOptionContext) ctx = NULL;
    g_autoptr(GError) error = NULL;
    g_autofree char *uri = NULL, *domain = NULL, *new_name = NULL;
    g_autofree char *qemu = NULL, *events = NULL, *pace = NULL;
    g_autofree char *kernel = NULL, *initrd = NULL, *case_name = NULL;
    g_autofree char *append = NULL, *xml = NULL, *out = NULL;
    g_autofree char *emulator = NULL;
    gboolean define = FALSE, shared = FALSE, events_socket = FALSE;
    int memory = 256, vcpus = 2;
    RsDomXmlOptions opt = { 0 };
    RsGuestConfig defaults = { 0 };
    virConnectPtr conn = NULL;
    virDomainPtr dom = NULL;
    int status = 1;
    const GOptionEntry entries[] = {
        { "new", 0, 0, G_OPTION_ARG_STRING, &new_name,
          "A new domain NAME that boots the project's guest kernel "
          "(direct kernel boot, no disks)", "NAME" },
        { "connect", 'c', 0, G_OPTION_ARG_STRING, &uri,
          "libvirt URI (default qemu:///system)", "URI" },
        { "domain", 'd', 0, G_OPTION_ARG_STRING, &domain,
          "Make the addition to this defined domain's XML", "NAME" },
        { "define", 0, 0, G_OPTION_ARG_NONE, &define,
          "Define the result on the connection instead of printing it",
          NULL },
        { "qemu", 0, 0, G_OPTION_ARG_FILENAME, &qemu,
          "QEMU fork binary for <emulator> (default: the cached build)",
          "FILE" },
        { "events", 0, 0, G_OPTION_ARG_FILENAME, &events,
          "File the device appends its events to (default "
          "/var/lib/libvirt/qemu/NAME.ringside-events.jsonl)", "FILE" },
        { "events-socket", 0, 0, G_OPTION_ARG_NONE, &events_socket,
          "The device writes its events to a socket that ringside attach "
          "reads and keeps in rotated files (default unix:/var/lib/libvirt/"
          "qemu/NAME.ringside-events.sock; or give --events unix:PATH or "
          "tcp:HOST:PORT)", NULL },
        { "shared-memory", 0, 0, G_OPTION_ARG_NONE, &shared,
          "Back guest RAM with a file shared with the host, so that "
          "ringside attach reads the printk ring too (always with --new)",
          NULL },
        { "pace", 0, 0, G_OPTION_ARG_STRING, &pace,
          "ringside-serial pace= (default: the device's, off)", "line|off" },
        { "kernel", 'k', 0, G_OPTION_ARG_FILENAME, &kernel,
          "--new: guest bzImage (default: the cached project kernel)",
          "FILE" },
        { "initrd", 0, 0, G_OPTION_ARG_FILENAME, &initrd,
          "--new: initramfs (default: the cached project initramfs)",
          "FILE" },
        { "case", 0, 0, G_OPTION_ARG_STRING, &case_name,
          "--new: case for the guest's /init (default sysrq-panic)", "NAME" },
        { "append", 0, 0, G_OPTION_ARG_STRING, &append,
          "--new: extra kernel command line", "ARGS" },
        { "memory", 'm', 0, G_OPTION_ARG_INT, &memory,
          "--new: guest RAM in MiB (default 256)", "MIB" },
        { "vcpus", 0, 0, G_OPTION_ARG_INT, &vcpus,
          "--new: vCPUs (default 2)", "N" },
        { NULL }
    };

    ctx = g_option_context_new("[FILE|-] - libvirt domain XML for ringside");
    g_option_context_set_description(ctx,
        "With FILE (or - for standard input), print that domain XML with\n"
        "ringside's addition: <emulator> set to the fork, serial0 turned\n"
        "into ringside-serial through <qemu:override>, and the device's\n"
        "event file added through <qemu:commandline>.  'virsh console'\n"
        "keeps working: the serial port is still libvirt's pty.\n");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!rs_parse_options(ctx, &argc, &argv, 1)) {
        return 2;
    }
    if ((new_name != NULL) + (domain != NULL) + (argc > 1) != 1) {
        g_printerr("ringside libvirt-xml: give exactly one of --new NAME, "
                   "--domain NAME or FILE\n");
        return 2;
    }
    if (define && argc > 1) {
        g_printerr("ringside libvirt-xml: --define needs --new or "
                   "--domain\n");
        return 2;
    }
    if (pace && !g_str_equal(pace, "line") && !g_str_equal(pace, "off")) {
        g_printerr("ringside libvirt-xml: --pace must be line or off\n");
        return 2;
    }
    if (memory < 64 || memory > 65536 || vcpus < 1 || vcpus > 64) {
        g_printerr("ringside libvirt-xml: --memory must be 64..65536, "
                   "--vcpus 1..64\n");
        return 2;
    }

    rs_guest_config_defaults(&defaults);
    /* libvirt wants absolute paths. */
    emulator = g_canonicalize_filename(qemu ? qemu : defaults.qemu, NULL);
    opt.qemu = emulator;
    opt.pace = pace;
    opt.shared_memory = shared || new_name;
    opt.events = events;
    opt.socket = events_socket;

    if (define || domain) {
        rs_virt_init();
        conn = rs_virt_connect(uri ? uri : "qemu:///system", &error);
        if (!conn) {
            goto fail;
        }
    }
    if (new_name) {
        g_autofree char *cmdline = NULL;
        RsDomSpec spec = {
            .name = new_name, .memory_mib = memory, .vcpus = vcpus,
        };

        spec.kernel = g_canonicalize_filename(kernel ? kernel :
                                              defaults.kernel, NULL);
        spec.initrd = g_canonicalize_filename(initrd ? initrd :
                                              defaults.initrd, NULL);
        cmdline = rs_guest_cmdline(case_name ? case_name :
                                   defaults.case_name, append);
        spec.cmdline = cmdline;
        out = rs_domxml_new(&spec, &opt, &error);
        g_free(spec.kernel);
        g_free(spec.initrd);
    } else {
        g_autofree char *from = NULL;

        if (domain) {
            dom = virDomainLookupByName(conn, domain);
            if (!dom) {
                rs_virt_error(&error, "no domain \"%s\"", domain);
                goto fail;
            }
            xml = virDomainGetXMLDesc(dom, VIR_DOMAIN_XML_INACTIVE);
            if (!xml) {
                rs_virt_error(&error, "cannot read %s's XML", domain);
                goto fail;
            }
            from = g_strdup(domain);
        } else {
            xml = read_input(argv[1], &error);
            if (!xml) {
                goto fail;
            }
            from = g_strdup(argv[1]);
        }
        out = rs_domxml_patch(xml, &opt, &error);
        if (!out) {
            g_prefix_error(&error, "%s: ", from);
        }
    }
    if (!out) {
        goto fail;
    }
    if (define) {
        virDomainPtr d = virDomainDefineXML(conn, out);

        if (!d) {
            rs_virt_error(&error, "cannot define the domain");
            goto fail;
        }
        printf("defined domain %s\n", virDomainGetName(d));
        virDomainFree(d);
    } else {
        fputs(out, stdout);
    }
    status = 0;
    goto out;

fail:
    g_printerr("ringside libvirt-xml: %s\n", error->message);
out:
    rs_guest_config_clear(&defaults);
    if (dom) {
        virDomainFree(dom);
    }
    if (conn) {
        virConnectClose(conn);
    }
    return status;
}
