/*
 * Rewriting a QEMU command line so that ringside-serial is the guest's
 * ttyS0.  What plain QEMU would do with the same line is followed here
 * (QEMU 7.2's softmmu/vl.c and chardev/char.c were read for it): which
 * serial port is ttyS0, which chardev it gets and under what label, and
 * what the defaults add when the line names none.
 */
#include "dropin/qemuargs.h"
#include "errors.h"
#include "guest/qemuopts.h"

#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

#define EVENTS_ID "ringside-events"
#define CONSOLE_ID "serial0"    /* the label QEMU gives its first -serial */

/* QEMU's options that take no argument; every other one takes one. */
static const char *const flag_options[] = {
    "nographic", "nodefaults", "no-reboot", "no-shutdown", "S", "s",
    "snapshot", "enable-kvm", "daemonize", "no-user-config", "no-hpet",
    "no-acpi", "version", "h", "help", "full-screen", "win2k-hack",
    "no-fd-bootchk", "only-migratable", "preconfig", "enable-fips",
    "nodefconfig", "usb", "localtime", "no-quit", "no-frame", "alt-grab",
    "ctrl-grab", "enable-sync-profile", "semihosting", "old-param",
    "xen-attach", "xen-domid-restrict", "portrait", "curses",
    "no-kvm", "no-kvm-irqchip", "no-kvm-pit", "no-kvm-pit-reinjection",
};

static gboolean takes_argument(const char *opt)
{
    guint i;

    for (i = 0; i < G_N_ELEMENTS(flag_options); i++) {
        if (!strcmp(opt, flag_options[i])) {
            return FALSE;
        }
    }
    return TRUE;
}

/* "-serial" and "--serial" both name QEMU's option "serial". */
static const char *option_name(const char *arg)
{
    if (arg[0] != '-' || !arg[1]) {
        return NULL;
    }
    return arg[1] == '-' ? arg + 2 : arg + 1;
}

GHashTable *rs_qemu_args_take_own(GPtrArray *args)
{
    GHashTable *own = NULL;
    guint i = 0;

    while (i < args->len) {
        const char *opt = option_name(args->pdata[i]);
        g_autoptr(GHashTable) kv = NULL;
        GHashTableIter it;
        gpointer k, v;

        if (!opt || strcmp(opt, "ringside") || i + 1 >= args->len) {
            if (opt && takes_argument(opt) && i + 1 < args->len) {
                i++;
            }
            i++;
            continue;
        }
        if (!own) {
            own = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                        g_free);
        }
        kv = rs_qemu_opts_split(args->pdata[i + 1]);
        g_hash_table_iter_init(&it, kv);
        while (g_hash_table_iter_next(&it, &k, &v)) {
            g_hash_table_replace(own, g_strdup(k), g_strdup(v));
        }
        g_ptr_array_remove_range(args, i, 2);
    }
    return own;
}

/* -device's driver and whether it names an index, in either syntax. */
static char *device_driver(const char *val, gboolean *has_index,
                           gint64 *index)
{
    *has_index = FALSE;
    if (val[0] == '{') {
        g_autoptr(JsonParser) p = json_parser_new();
        JsonObject *o;
        JsonNode *ix, *d;

        if (!json_parser_load_from_data(p, val, -1, NULL) ||
            !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p))) {
            return NULL;
        }
        o = json_node_get_object(json_parser_get_root(p));
        ix = json_object_get_member(o, "index");
        if (ix && json_node_get_value_type(ix) == G_TYPE_INT64) {
            *has_index = TRUE;
            *index = json_node_get_int(ix);
        }
        d = json_object_get_member(o, "driver");
        return d && json_node_get_value_type(d) == G_TYPE_STRING ?
               g_strdup(json_node_get_string(d)) : NULL;
    } else {
        g_autoptr(GHashTable) kv = rs_qemu_opts_split(val);
        const char *d = g_hash_table_lookup(kv, "driver");
        const char *ix = g_hash_table_lookup(kv, "index");

        if (ix) {
            *has_index = TRUE;
            *index = g_ascii_strtoll(ix, NULL, 0);
        }
        if (!d) {
            d = g_hash_table_lookup(kv, "");
        }
        return g_strdup(d);
    }
}

/* ringside-serial's own properties, after the caller's. */
static char *device_props(const RsQemuArgsOpts *o)
{
    g_autofree char *pace = o->pace ? g_strdup_printf(",pace=%s", o->pace)
                                    : NULL;

    return g_strdup_printf("events=" EVENTS_ID "%s", pace ? pace : "");
}

/* The caller's isa-serial -device as a ringside-serial. */
static char *device_rewrite(const char *val, const RsQemuArgsOpts *o,
                            GError **error)
{
    if (val[0] == '{') {
        g_autoptr(JsonParser) p = json_parser_new();
        g_autoptr(JsonGenerator) gen = json_generator_new();
        JsonObject *obj;

        if (!json_parser_load_from_data(p, val, -1, NULL) ||
            !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(p))) {
            g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                        "-device %s: not a JSON object", val);
            return NULL;
        }
        obj = json_node_get_object(json_parser_get_root(p));
        json_object_set_string_member(obj, "driver", "ringside-serial");
        json_object_set_string_member(obj, "events", EVENTS_ID);
        if (o->pace) {
            json_object_set_string_member(obj, "pace", o->pace);
        }
        json_generator_set_root(gen, json_parser_get_root(p));
        return json_generator_to_data(gen, NULL);
    } else {
        g_autofree char *props = device_props(o);
        const char *comma = val;

        /* The driver is the first item, bare or as driver=. */
        while ((comma = strchr(comma, ',')) && comma[1] == ',') {
            comma += 2;
        }
        if (g_str_has_prefix(val, "driver=")) {
            return g_strdup_printf("driver=ringside-serial%s,%s",
                                   comma ? comma : "", props);
        }
        return g_strdup_printf("ringside-serial%s,%s", comma ? comma : "",
                               props);
    }
}

/*
 * A -serial value as a -chardev with @id, as QEMU's legacy parser reads
 * it; @mux_mon: it was "mon:...", so a monitor shares it.  NULL (and
 * @error) for the forms ringside does not take over.
 */
static char *serial_to_chardev(const char *spec, const char *id,
                               gboolean *mux_mon, GError **error)
{
    const char *p;
    g_autofree char *mux = NULL;
    g_autofree char *esc = NULL;
    char host[65], port[33];
    int w, h, pos = 0;

    *mux_mon = FALSE;
    if (g_str_has_prefix(spec, "mon:")) {
        spec += 4;
        *mux_mon = TRUE;
        /* Ctrl-C goes to the guest when the monitor shares stdio. */
        mux = g_strdup(!strcmp(spec, "stdio") ? ",mux=on,signal=off"
                                              : ",mux=on");
    }
#define CHR(fmt, ...) \
    g_strdup_printf(fmt ",id=%s%s", __VA_ARGS__, id, mux ? mux : "")
    if (!strcmp(spec, "null") || !strcmp(spec, "pty") ||
        !strcmp(spec, "stdio") || !strcmp(spec, "msmouse") ||
        !strcmp(spec, "wctablet") || !strcmp(spec, "braille") ||
        !strcmp(spec, "testdev")) {
        return CHR("%s", spec);
    }
    if (!strcmp(spec, "vc")) {
        return CHR("%s", "vc");
    }
    if (sscanf(spec, "vc:%dCx%dC%n", &w, &h, &pos) == 2 && !spec[pos]) {
        return CHR("vc,cols=%d,rows=%d", w, h);
    }
    if (sscanf(spec, "vc:%dx%d%n", &w, &h, &pos) == 2 && !spec[pos]) {
        return CHR("vc,width=%d,height=%d", w, h);
    }
    if ((p = g_str_has_prefix(spec, "file:") ? spec + 5 : NULL)) {
        esc = rs_qemu_opts_escape(p);
        return CHR("file,path=%s", esc);
    }
    if ((p = g_str_has_prefix(spec, "pipe:") ? spec + 5 : NULL)) {
        esc = rs_qemu_opts_escape(p);
        return CHR("pipe,path=%s", esc);
    }
    if (g_str_has_prefix(spec, "tcp:") || g_str_has_prefix(spec, "telnet:")) {
        const char *telnet = g_str_has_prefix(spec, "telnet:") ?
                             ",telnet=on" : "";

        p = strchr(spec, ':') + 1;
        pos = 0;
        if (sscanf(p, "%64[^:]:%32[^,]%n", host, port, &pos) < 2) {
            host[0] = '\0';
            pos = 0;
            if (sscanf(p, ":%32[^,]%n", port, &pos) < 1) {
                goto unsupported;
            }
        }
        return CHR("socket,host=%s,port=%s%s%s", host, port, p + pos,
                   telnet);
    }
    if ((p = g_str_has_prefix(spec, "unix:") ? spec + 5 : NULL)) {
        return CHR("socket,path=%s", p);
    }
    if (g_str_has_prefix(spec, "/dev/") &&
        !g_str_has_prefix(spec, "/dev/parport") &&
        !g_str_has_prefix(spec, "/dev/ppi")) {
        esc = rs_qemu_opts_escape(spec);
        return CHR("serial,path=%s", esc);
    }
#undef CHR
unsupported:
    g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                "-serial %s%s: not a console ringside can put its UART in "
                "front of; give it as -chardev BACKEND,id=ID -serial "
                "chardev:ID", *mux_mon ? "mon:" : "", spec);
    return NULL;
}

typedef struct {
    int first_serial;       /* index in argv of the first -serial's value */
    int serial_count;
    int isa_dev;            /* -device isa-serial that is ttyS0, or -1 */
    int isa_dev_noindex;    /* the first isa-serial without an index */
    gboolean nographic, nodefaults, default_monitor, vmcoreinfo;
    char *machine;          /* the machine type, NULL: QEMU's default */
} Scan;

/*
 * The PC boards (pc, q35 and their versions, isapc) make ttyS0 of the
 * type their x-serial0-type property names: the fork's, which makes it
 * where and when the board makes its isa-serial, so that the guest sees
 * the same machine as under plain QEMU.  QEMU's default is pc.
 */
static gboolean pc_board(const char *machine)
{
    return !machine || g_str_has_prefix(machine, "pc") ||
           g_str_has_prefix(machine, "q35") || !strcmp(machine, "isapc");
}

static void scan_args(char **argv, Scan *s, RsQemuArgs *out)
{
    int i;

    memset(s, 0, sizeof(*s));
    s->first_serial = s->isa_dev = s->isa_dev_noindex = -1;
    s->default_monitor = TRUE;
    for (i = 0; argv[i]; i++) {
        const char *opt = option_name(argv[i]);
        const char *val;

        if (!opt) {
            continue;
        }
        if (!takes_argument(opt)) {
            s->nographic |= !strcmp(opt, "nographic");
            s->nodefaults |= !strcmp(opt, "nodefaults");
            out->daemonize |= !strcmp(opt, "daemonize");
            continue;
        }
        val = argv[i + 1];
        if (!val) {
            break;
        }
        i++;
        if (!strcmp(opt, "serial")) {
            if (s->first_serial < 0) {
                s->first_serial = i;
            }
            s->serial_count++;
            if (g_str_has_prefix(val, "mon:")) {
                s->default_monitor = FALSE;
            }
        } else if (!strcmp(opt, "monitor") || !strcmp(opt, "qmp") ||
                   !strcmp(opt, "qmp-pretty") || !strcmp(opt, "mon")) {
            s->default_monitor = FALSE;
        } else if (!strcmp(opt, "device")) {
            gboolean has_index;
            gint64 index = -1;
            g_autofree char *drv = device_driver(val, &has_index, &index);

            if (drv && !strcmp(drv, "vmcoreinfo")) {
                s->vmcoreinfo = TRUE;
            }
            if (!drv || strcmp(drv, "isa-serial")) {
                continue;
            }
            if (has_index && index == 0 && s->isa_dev < 0) {
                s->isa_dev = i;
            } else if (!has_index && s->isa_dev_noindex < 0) {
                s->isa_dev_noindex = i;
            }
        } else if (!strcmp(opt, "name") && !out->name) {
            g_autoptr(GHashTable) kv = rs_qemu_opts_split(val);
            const char *n = g_hash_table_lookup(kv, "guest");

            /* libvirt names its domains so, and only libvirt does. */
            out->libvirt = n != NULL;
            out->name = g_strdup(n ? n : g_hash_table_lookup(kv, ""));
        } else if (!strcmp(opt, "machine") || !strcmp(opt, "M")) {
            g_autoptr(GHashTable) kv = rs_qemu_opts_split(val);
            const char *t = g_hash_table_lookup(kv, "type");

            if (!t) {
                t = g_hash_table_lookup(kv, "");
            }
            if (t && *t) {
                g_free(s->machine);
                s->machine = g_strdup(t);
            }
        }
    }
}

static void add(GPtrArray *a, const char *opt, char *val)
{
    g_ptr_array_add(a, g_strdup(opt));
    g_ptr_array_add(a, val);
}

static void add_events(GPtrArray *a, const RsQemuArgsOpts *o)
{
    g_autofree char *events = rs_qemu_opts_escape(o->events_path);

    add(a, "-chardev",
        g_strdup_printf("file,id=" EVENTS_ID ",path=%s,append=on", events));
}

static void add_vmcoreinfo(GPtrArray *a, const Scan *s,
                           const RsQemuArgsOpts *o)
{
    if (o->vmcoreinfo && !s->vmcoreinfo) {
        /* Lets the device find the ring of a kernel without ringside's
         * announce (a stock kernel with qemu_fw_cfg loaded).  Only when
         * asked: the firmware sees one more fw_cfg file, and a
         * deterministic boot's timing moves with it. */
        add(a, "-device", g_strdup("vmcoreinfo"));
    }
}

/*
 * A PC board: the caller's line stays as it is, serial ports and all;
 * the board makes ttyS0 a ringside-serial, whose own properties come as
 * -global (they apply to that one device, the only ringside-serial).
 */
static gboolean board_rewrite(char **argv, const Scan *s, const char *spec,
                              gboolean implicit, const RsQemuArgsOpts *o,
                              RsQemuArgs *out)
{
    GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
    int i;

    for (i = 0; argv[i]; i++) {
        g_ptr_array_add(a, g_strdup(argv[i]));
    }
    add_events(a, o);
    add(a, "-machine", g_strdup("x-serial0-type=ringside-serial"));
    add(a, "-global", g_strdup("ringside-serial.events=" EVENTS_ID));
    if (o->pace) {
        add(a, "-global", g_strdup_printf("ringside-serial.pace=%s",
                                          o->pace));
    }
    add_vmcoreinfo(a, s, o);
    out->console = g_strdup_printf("-serial %s%s", spec,
                                   implicit ? " (QEMU's default)" : "");
    out->argv = a;
    return TRUE;
}

gboolean rs_qemu_args_rewrite(char **argv, const RsQemuArgsOpts *o,
                              RsQemuArgs *out, GError **error)
{
    Scan s;
    g_autofree char *machine = NULL;
    g_autoptr(GPtrArray) a = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *spec = NULL, *chardev = NULL;
    const char *console_id = CONSOLE_ID;
    gboolean mux_mon = FALSE, implicit = FALSE;
    int i, isa = -1;

    memset(out, 0, sizeof(*out));
    scan_args(argv, &s, out);
    machine = s.machine;
    if (machine && !strcmp(machine, "none")) {
        /* nothing to do */
    } else if (s.first_serial >= 0) {
        if (strcmp(argv[s.first_serial], "none")) {
            spec = g_strdup(argv[s.first_serial]);
        }
    } else if (s.isa_dev >= 0 || s.isa_dev_noindex >= 0) {
        isa = s.isa_dev >= 0 ? s.isa_dev : s.isa_dev_noindex;
    } else if (!s.nodefaults) {
        /* QEMU's default serial port (qemu_create_default_devices()). */
        spec = g_strdup(!s.nographic ? "vc:80Cx24C" :
                        s.default_monitor ? "mon:stdio" : "stdio");
        implicit = TRUE;
    }

    if (spec && pc_board(machine)) {
        return board_rewrite(argv, &s, spec, implicit, o, out);
    }
    if (spec && g_str_has_prefix(spec, "chardev:")) {
        console_id = spec + strlen("chardev:");
    } else if (spec) {
        chardev = serial_to_chardev(spec, CONSOLE_ID, &mux_mon, error);
        if (!chardev) {
            return FALSE;
        }
    }

    for (i = 0; argv[i]; i++) {
        if (spec && i + 1 == s.first_serial) {
            /* ttyS0 stays index 0 for QEMU, with no board UART on it. */
            add(a, argv[i], g_strdup("none"));
            i++;
            continue;
        }
        if (i + 1 == isa) {
            char *dev = device_rewrite(argv[isa], o, error);

            if (!dev) {
                return FALSE;
            }
            add(a, argv[i], dev);
            i++;
            continue;
        }
        g_ptr_array_add(a, g_strdup(argv[i]));
    }
    if (!spec && isa < 0) {
        out->argv = g_steal_pointer(&a);
        return TRUE;
    }
    if (implicit) {
        add(a, "-serial", g_strdup("none"));
    }
    if (chardev) {
        add(a, "-chardev", g_steal_pointer(&chardev));
    }
    if (mux_mon) {
        add(a, "-mon", g_strdup_printf("chardev=%s,mode=readline",
                                       CONSOLE_ID));
    }
    add_events(a, o);
    if (spec) {
        g_autofree char *props = device_props(o);
        g_autofree char *id = rs_qemu_opts_escape(console_id);

        add(a, "-device", g_strdup_printf("ringside-serial,chardev=%s,"
                                          "index=0,%s", id, props));
    }
    add_vmcoreinfo(a, &s, o);
    out->console = spec ? g_strdup_printf("-serial %s%s", spec,
                                          implicit ? " (QEMU's default)" : "")
                        : g_strdup_printf("-device %s", argv[isa]);
    out->argv = g_steal_pointer(&a);
    return TRUE;
}

void rs_qemu_args_clear(RsQemuArgs *a)
{
    if (a->argv) {
        g_ptr_array_unref(a->argv);
    }
    g_free(a->console);
    g_free(a->name);
    memset(a, 0, sizeof(*a));
}
