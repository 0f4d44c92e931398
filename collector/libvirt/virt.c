/* libvirt plumbing shared by ringside attach and ringside libvirt-xml. */
#include "libvirt/virt.h"
#include "errors.h"

#include <json-glib/json-glib.h>
#include <libvirt-glib/libvirt-glib.h>
#include <libvirt/libvirt-qemu.h>
#include <libvirt/virterror.h>
#include <stdarg.h>

/* libvirt prints every error to stderr by default; we report our own. */
static void quiet_errors(void *opaque G_GNUC_UNUSED,
                         virErrorPtr err G_GNUC_UNUSED)
{
}

void rs_virt_init(void)
{
    virSetErrorFunc(NULL, quiet_errors);
    gvir_event_register();
}

void rs_virt_error(GError **error, const char *what, ...)
{
    g_autofree char *prefix = NULL;
    va_list ap;

    va_start(ap, what);
    prefix = g_strdup_vprintf(what, ap);
    va_end(ap);
    g_set_error(error, RS_ERROR, RS_ERROR_GUEST, "%s: %s", prefix,
                virGetLastErrorMessage());
}

virConnectPtr rs_virt_connect(const char *uri, GError **error)
{
    virConnectPtr conn = virConnectOpen(uri);

    if (!conn) {
        rs_virt_error(error, "cannot connect to %s", uri);
    }
    return conn;
}

char *rs_virt_qom_get(virDomainPtr dom, const char *path, const char *prop,
                      GError **error)
{
    g_autofree char *cmd = NULL, *reply = NULL;
    g_autoptr(JsonParser) parser = json_parser_new();
    g_autoptr(GError) local = NULL;
    JsonObject *o;
    JsonNode *ret;

    cmd = g_strdup_printf("{\"execute\":\"qom-get\",\"arguments\":"
                          "{\"path\":\"%s\",\"property\":\"%s\"}}",
                          path, prop);
    if (virDomainQemuMonitorCommand(dom, cmd, &reply, 0) < 0) {
        rs_virt_error(error, "QMP qom-get %s", prop);
        return NULL;
    }
    if (!json_parser_load_from_data(parser, reply, -1, &local) ||
        !JSON_NODE_HOLDS_OBJECT(json_parser_get_root(parser))) {
        g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                    "QMP qom-get %s: a reply that is not a JSON object", prop);
        return NULL;
    }
    o = json_node_get_object(json_parser_get_root(parser));
    ret = json_object_get_member(o, "return");
    if (!ret) {
        JsonNode *en = json_object_get_member(o, "error");
        JsonObject *e = en && JSON_NODE_HOLDS_OBJECT(en) ?
                        json_node_get_object(en) : NULL;

        g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND, "QMP qom-get %s: %s",
                    prop, e ? json_object_get_string_member_with_default(
                        e, "desc", "error") : "no return value");
        return NULL;
    }
    return json_to_string(ret, FALSE);
}

char *rs_virt_ram_file(virDomainPtr dom, GError **error)
{
    g_autofree char *path = NULL, *share = NULL;
    g_autoptr(JsonNode) node = NULL;

    share = rs_virt_qom_get(dom, "/objects/pc.ram", "share", error);
    if (!share) {
        g_prefix_error(error, "no file memory backend: ");
        return NULL;
    }
    if (!g_str_equal(share, "true")) {
        g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND,
                    "the memory backend is not shared with the host");
        return NULL;
    }
    path = rs_virt_qom_get(dom, "/objects/pc.ram", "mem-path", error);
    node = path ? json_from_string(path, NULL) : NULL;
    if (!node || !JSON_NODE_HOLDS_VALUE(node) ||
        json_node_get_value_type(node) != G_TYPE_STRING) {
        if (path) {
            g_set_error(error, RS_ERROR, RS_ERROR_BAD_INPUT,
                        "the memory backend's mem-path is not a string");
        }
        return NULL;
    }
    return g_strdup(json_node_get_string(node));
}
