/* libvirt domain XML: ringside's addition, made and read back with libxml2. */
#include "libvirt/domxml.h"
#include "errors.h"
#include "events/events.h"
#include "guest/guest.h"
#include "guest/qemuopts.h"

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <string.h>

G_DEFINE_AUTOPTR_CLEANUP_FUNC(xmlDoc, xmlFreeDoc)

static gboolean is_elem(xmlNode *n, const char *name, xmlNs *ns)
{
    return n->type == XML_ELEMENT_NODE && !strcmp((const char *)n->name, name)
           && (ns ? n->ns && !strcmp((const char *)n->ns->href,
                                     (const char *)ns->href)
                  : !n->ns);
}

static xmlNode *child(xmlNode *parent, const char *name, xmlNs *ns)
{
    xmlNode *n;

    for (n = parent->children; n; n = n->next) {
        if (is_elem(n, name, ns)) {
            return n;
        }
    }
    return NULL;
}

static xmlNode *child_or_new(xmlNode *parent, const char *name, xmlNs *ns)
{
    xmlNode *n = child(parent, name, ns);

    return n ? n : xmlNewChild(parent, ns, BAD_CAST name, NULL);
}

static gboolean attr_is(xmlNode *n, const char *attr, const char *value)
{
    xmlChar *v = xmlGetProp(n, BAD_CAST attr);
    gboolean eq = v && !strcmp((const char *)v, value);

    xmlFree(v);
    return eq;
}

static void set_text(xmlNode *n, const char *text)
{
    xmlNodeSetContent(n, NULL);
    xmlNodeAddContent(n, BAD_CAST text);
}

static xmlNode *new_child_attr(xmlNode *parent, xmlNs *ns, const char *name,
                               const char *attr, const char *value)
{
    xmlNode *n = xmlNewChild(parent, ns, BAD_CAST name, NULL);

    xmlNewProp(n, BAD_CAST attr, BAD_CAST value);
    return n;
}

static gboolean is_events_chardev(const char *opts)
{
    g_autofree char *id = rs_qemu_opts_value(opts, "id");

    return (g_str_has_prefix(opts, "file,") ||
            g_str_has_prefix(opts, "socket,")) &&
           g_strcmp0(id, RS_EVENTS_CHARDEV) == 0;
}

static const char *arg_value(xmlNode *arg, xmlChar **hold)
{
    *hold = xmlGetProp(arg, BAD_CAST "value");
    return *hold ? (const char *)*hold : "";
}

/*
 * The element after @n, skipping text; used to pair "-chardev" with its
 * options in <qemu:commandline>.
 */
static xmlNode *next_elem(xmlNode *n)
{
    for (n = n->next; n && n->type != XML_ELEMENT_NODE; n = n->next) {
    }
    return n;
}

/*
 * The first "<arg value='@a'/><arg value='@b'/>" pair in @cmd, or with
 * @b NULL the "-chardev" pair of the events chardev.
 */
static xmlNode *find_arg_pair(xmlNode *cmd, xmlNs *ns, const char *a,
                              const char *b)
{
    xmlNode *n, *m;

    for (n = cmd->children; n; n = n->next) {
        xmlChar *va = NULL, *vb = NULL;
        gboolean found;

        if (!is_elem(n, "arg", ns) || !(m = next_elem(n)) ||
            !is_elem(m, "arg", ns)) {
            continue;
        }
        found = !strcmp(arg_value(n, &va), a) &&
                (b ? !strcmp(arg_value(m, &vb), b)
                   : is_events_chardev(arg_value(m, &vb)));
        xmlFree(va);
        xmlFree(vb);
        if (found) {
            return n;
        }
    }
    return NULL;
}

static void remove_node(xmlNode *n)
{
    xmlUnlinkNode(n);
    xmlFreeNode(n);
}

static void remove_arg_pair(xmlNode *first)
{
    remove_node(next_elem(first));
    remove_node(first);
}

/* Remove the events -chardev pair, if there is one. */
static void remove_events_chardev(xmlNode *cmd, xmlNs *ns)
{
    xmlNode *n = find_arg_pair(cmd, ns, "-chardev", NULL);

    if (n) {
        remove_arg_pair(n);
    }
}

static xmlNode *serial0_override(xmlNode *override, xmlNs *ns)
{
    xmlNode *n;

    for (n = override->children; n; n = n->next) {
        if (is_elem(n, "device", ns) && attr_is(n, "alias", "serial0")) {
            return n;
        }
    }
    return NULL;
}

static void add_property(xmlNode *frontend, xmlNs *ns, const char *name,
                         const char *value)
{
    xmlNode *p = new_child_attr(frontend, ns, "property", "name", name);

    xmlNewProp(p, BAD_CAST "type", BAD_CAST "string");
    xmlNewProp(p, BAD_CAST "value", BAD_CAST value);
}

static xmlDoc *parse_domain(const char *xml, xmlNode **root, GError **error)
{
    xmlDoc *doc = xmlReadMemory(xml, strlen(xml), "domain.xml", NULL,
                                XML_PARSE_NONET | XML_PARSE_NOBLANKS |
                                XML_PARSE_NOERROR | XML_PARSE_NOWARNING);

    if (!doc) {
        const xmlError *e = xmlGetLastError();

        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "not XML: %s", e && e->message ? g_strstrip(
                        g_strdup(e->message)) : "parse error");
        return NULL;
    }
    *root = xmlDocGetRootElement(doc);
    if (!*root || !is_elem(*root, "domain", NULL)) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "not a libvirt domain: the root element is not <domain>");
        xmlFreeDoc(doc);
        return NULL;
    }
    return doc;
}

/* The first <serial>, or the one with <target port='0'/>. */
static xmlNode *serial_port0(xmlNode *devices)
{
    xmlNode *n, *first = NULL;

    for (n = devices->children; n; n = n->next) {
        xmlNode *t;

        if (!is_elem(n, "serial", NULL)) {
            continue;
        }
        first = first ? first : n;
        t = child(n, "target", NULL);
        if (t && attr_is(t, "port", "0")) {
            return n;
        }
    }
    return first;
}

char *rs_domxml_default_socket(const char *name)
{
    return g_strdup_printf("unix:/var/lib/libvirt/qemu/%s.ringside-events."
                           "sock", name);
}

/*
 * The -chardev for @events: a file QEMU appends to, or a listening
 * socket ("unix:PATH", "tcp:HOST:PORT") that ringside attach reads and
 * keeps rotated files of; wait=off: the guest never waits for a reader.
 */
static char *events_chardev(const char *events)
{
    g_autofree char *esc = NULL;

    if (g_str_has_prefix(events, "unix:")) {
        esc = rs_qemu_opts_escape(events + 5);
        return g_strdup_printf("socket,id=%s,path=%s,server=on,wait=off",
                               RS_EVENTS_CHARDEV, esc);
    }
    if (g_str_has_prefix(events, "tcp:")) {
        const char *port = strrchr(events + 4, ':');
        g_autofree char *host = NULL;

        if (!port || port == events + 4 || !port[1]) {
            return NULL;
        }
        host = g_strndup(events + 4, port - (events + 4));
        esc = rs_qemu_opts_escape(host);
        return g_strdup_printf("socket,id=%s,host=%s,port=%s,server=on,"
                               "wait=off", RS_EVENTS_CHARDEV, esc, port + 1);
    }
    esc = rs_qemu_opts_escape(events);
    return g_strdup_printf("file,id=%s,path=%s,append=on", RS_EVENTS_CHARDEV,
                           esc);
}

/* A pty serial0 and its console, for a domain that has no serial port. */
static void add_serial0(xmlNode *devices)
{
    xmlNode *s = new_child_attr(devices, NULL, "serial", "type", "pty");

    new_child_attr(s, NULL, "target", "port", "0");
    if (!child(devices, "console", NULL)) {
        xmlNode *c = new_child_attr(devices, NULL, "console", "type", "pty");
        xmlNode *t = new_child_attr(c, NULL, "target", "type", "serial");

        xmlNewProp(t, BAD_CAST "port", BAD_CAST "0");
    }
}

static void add_shared_memory(xmlNode *root)
{
    xmlNode *mb = child_or_new(root, "memoryBacking", NULL);
    xmlNode *n;

    while ((n = child(mb, "source", NULL)) ||
           (n = child(mb, "access", NULL))) {
        remove_node(n);
    }
    new_child_attr(mb, NULL, "source", "type", "file");
    new_child_attr(mb, NULL, "access", "mode", "shared");
}

static char *domain_name(xmlNode *root)
{
    xmlNode *n = child(root, "name", NULL);
    xmlChar *c = n ? xmlNodeGetContent(n) : NULL;
    char *name = c ? g_strdup((const char *)c) : NULL;

    xmlFree(c);
    return name;
}

/*
 * The passthrough: Debian's firmware directories and the events chardev
 * in <qemu:commandline>, serial0's device swapped in <qemu:override>.
 */
static gboolean add_passthrough(xmlNode *root, xmlNs *ns,
                                const RsDomXmlOptions *opt, GError **error)
{
    xmlNode *cmd = child_or_new(root, "commandline", ns);
    xmlNode *override, *dev, *frontend;
    g_autofree char *path = NULL, *chardev = NULL;
    guint i;

    for (i = 0; i < RS_N_FIRMWARE_DIRS; i++) {
        if (!find_arg_pair(cmd, ns, "-L", rs_firmware_dirs[i])) {
            new_child_attr(cmd, ns, "arg", "value", "-L");
            new_child_attr(cmd, ns, "arg", "value", rs_firmware_dirs[i]);
        }
    }
    remove_events_chardev(cmd, ns);
    if (opt->events) {
        path = g_strdup(opt->events);
    } else {
        g_autofree char *name = domain_name(root);

        if (!name || !*name || strchr(name, '/') || name[0] == '.') {
            g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                        "cannot name the events file after the domain's "
                        "<name>; give one");
            return FALSE;
        }
        path = opt->socket ? rs_domxml_default_socket(name) :
               rs_events_libvirt_path(name);
    }
    chardev = events_chardev(path);
    if (!chardev) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "events %s: expected a file, unix:PATH or "
                    "tcp:HOST:PORT", path);
        return FALSE;
    }
    new_child_attr(cmd, ns, "arg", "value", "-chardev");
    new_child_attr(cmd, ns, "arg", "value", chardev);

    override = child_or_new(root, "override", ns);
    dev = serial0_override(override, ns);
    if (dev) {
        remove_node(dev);
    }
    dev = new_child_attr(override, ns, "device", "alias", "serial0");
    frontend = xmlNewChild(dev, ns, BAD_CAST "frontend", NULL);
    add_property(frontend, ns, "driver", "ringside-serial");
    add_property(frontend, ns, "events", RS_EVENTS_CHARDEV);
    if (opt->pace) {
        add_property(frontend, ns, "pace", opt->pace);
    }
    return TRUE;
}

static gboolean has_elem_children(xmlNode *n)
{
    for (n = n->children; n; n = n->next) {
        if (n->type == XML_ELEMENT_NODE) {
            return TRUE;
        }
    }
    return FALSE;
}

/* Undo add_passthrough (the drop-in needs none), leaving the rest alone. */
static void remove_passthrough(xmlNode *root, xmlNs *ns)
{
    xmlNode *cmd = ns ? child(root, "commandline", ns) : NULL;
    xmlNode *override = ns ? child(root, "override", ns) : NULL;
    xmlNode *n;
    guint i;

    if (cmd) {
        remove_events_chardev(cmd, ns);
        for (i = 0; i < RS_N_FIRMWARE_DIRS; i++) {
            while ((n = find_arg_pair(cmd, ns, "-L", rs_firmware_dirs[i]))) {
                remove_arg_pair(n);
            }
        }
        if (!has_elem_children(cmd)) {
            remove_node(cmd);
        }
    }
    if (override) {
        n = serial0_override(override, ns);
        if (n) {
            remove_node(n);
        }
        if (!has_elem_children(override)) {
            remove_node(override);
        }
    }
}

char *rs_domxml_patch(const char *xml, const RsDomXmlOptions *opt,
                      GError **error)
{
    g_autoptr(xmlDoc) doc = NULL;
    xmlNode *root, *devices, *features;
    xmlNs *ns;
    xmlChar *out = NULL;
    int len = 0;
    char *ret;

    doc = parse_domain(xml, &root, error);
    if (!doc) {
        return NULL;
    }
    ns = xmlSearchNsByHref(doc, root, BAD_CAST RS_QEMU_NS);
    devices = child_or_new(root, "devices", NULL);
    set_text(child_or_new(devices, "emulator", NULL), opt->qemu);
    if (!serial_port0(devices)) {
        add_serial0(devices);
    }
    if (opt->shared_memory) {
        add_shared_memory(root);
    }
    /* Lets the device find the guest's ring without scanning RAM. */
    features = child_or_new(root, "features", NULL);
    if (!child(features, "vmcoreinfo", NULL)) {
        new_child_attr(features, NULL, "vmcoreinfo", "state", "on");
    }
    if (opt->dropin) {
        remove_passthrough(root, ns);
    } else {
        if (!ns) {
            ns = xmlNewNs(root, BAD_CAST RS_QEMU_NS, BAD_CAST "qemu");
        }
        if (!add_passthrough(root, ns, opt, error)) {
            return NULL;
        }
    }

    xmlDocDumpFormatMemory(doc, &out, &len, 1);
    if (!out) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "could not write the domain XML");
        return NULL;
    }
    /* Without the <?xml?> declaration, as virsh dumpxml prints it. */
    ret = g_strdup(g_str_has_prefix((char *)out, "<?xml") ?
                   strchr((char *)out, '\n') + 1 : (char *)out);
    xmlFree(out);
    return ret;
}

char *rs_domxml_new(const RsDomSpec *spec, const RsDomXmlOptions *opt,
                    GError **error)
{
    g_autoptr(GString) xml = g_string_new(NULL);
    g_autofree char *head = NULL, *initrd = NULL, *tail = NULL;

    head = g_markup_printf_escaped(
        "<domain type='qemu'>\n"
        "  <name>%s</name>\n"
        "  <memory unit='MiB'>%d</memory>\n"
        "  <vcpu>%d</vcpu>\n"
        "  <os>\n"
        "    <type arch='x86_64' machine='pc'>hvm</type>\n"
        "    <kernel>%s</kernel>\n",
        spec->name, spec->memory_mib, spec->vcpus, spec->kernel);
    if (spec->initrd) {
        initrd = g_markup_printf_escaped("    <initrd>%s</initrd>\n",
                                         spec->initrd);
    }
    tail = g_markup_printf_escaped(
        "    <cmdline>%s</cmdline>\n"
        "  </os>\n"
        "  <features><acpi/></features>\n"
        "  <on_poweroff>destroy</on_poweroff>\n"
        "  <on_reboot>destroy</on_reboot>\n"
        "  <on_crash>destroy</on_crash>\n"
        "  <devices>\n"
        "    <serial type='pty'>\n"
        "      <log file='/var/log/libvirt/qemu/%s-serial0.log'/>\n"
        "      <target port='0'/>\n"
        "    </serial>\n"
        "    <console type='pty'>\n"
        "      <target type='serial' port='0'/>\n"
        "    </console>\n"
        "    <controller type='usb' model='none'/>\n"
        "    <memballoon model='none'/>\n"
        "  </devices>\n"
        "</domain>\n", spec->cmdline, spec->name);
    g_string_append(xml, head);
    g_string_append(xml, initrd ? initrd : "");
    g_string_append(xml, tail);
    return rs_domxml_patch(xml->str, opt, error);
}

gboolean rs_domxml_inspect(const char *xml, gboolean *ringside,
                           char **events, GError **error)
{
    g_autoptr(xmlDoc) doc = NULL;
    xmlNode *root, *n, *dev, *fe;
    xmlNs *ns;

    *ringside = FALSE;
    *events = NULL;
    doc = parse_domain(xml, &root, error);
    if (!doc) {
        return FALSE;
    }
    /* The drop-in as the emulator: its device writes where attach reads. */
    n = child(root, "devices", NULL);
    n = n ? child(n, "emulator", NULL) : NULL;
    if (n) {
        xmlChar *em = xmlNodeGetContent(n);
        xmlNode *nm = child(root, "name", NULL);
        xmlChar *name = nm ? xmlNodeGetContent(nm) : NULL;

        if (em && name &&
            g_str_has_suffix((const char *)em, RS_DROPIN_SUFFIX)) {
            *ringside = TRUE;
            *events = rs_events_libvirt_path((const char *)name);
        }
        xmlFree(em);
        xmlFree(name);
    }
    ns = xmlSearchNsByHref(doc, root, BAD_CAST RS_QEMU_NS);
    if (!ns) {
        return TRUE;
    }
    n = child(root, "override", ns);
    dev = n ? serial0_override(n, ns) : NULL;
    fe = dev ? child(dev, "frontend", ns) : NULL;
    for (n = fe ? fe->children : NULL; n; n = n->next) {
        if (is_elem(n, "property", ns) && attr_is(n, "name", "driver") &&
            attr_is(n, "value", "ringside-serial")) {
            *ringside = TRUE;
        }
    }
    n = child(root, "commandline", ns);
    for (n = n ? n->children : NULL; n; n = n->next) {
        xmlNode *m = next_elem(n);
        xmlChar *va = NULL, *vb = NULL;

        if (is_elem(n, "arg", ns) && m && is_elem(m, "arg", ns) &&
            !strcmp(arg_value(n, &va), "-chardev") &&
            is_events_chardev(arg_value(m, &vb))) {
            g_autofree char *path = rs_qemu_opts_value((const char *)vb,
                                                       "path");

            g_free(*events);
            if (g_str_has_prefix((const char *)vb, "file,")) {
                *events = g_steal_pointer(&path);
            } else if (path) {
                *events = g_strdup_printf("unix:%s", path);
            } else {
                const char *o = (const char *)vb;
                g_autofree char *host = rs_qemu_opts_value(o, "host");
                g_autofree char *port = rs_qemu_opts_value(o, "port");

                *events = g_strdup_printf("tcp:%s:%s", host && *host ?
                                          host : "localhost",
                                          port ? port : "0");
            }
        }
        xmlFree(va);
        xmlFree(vb);
    }
    return TRUE;
}
