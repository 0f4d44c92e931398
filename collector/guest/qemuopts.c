/* QEMU's option strings: escaping and splitting. */
#include "guest/qemuopts.h"

#include <string.h>

char *rs_qemu_opts_escape(const char *s)
{
    GString *e = g_string_new(NULL);

    for (; *s; s++) {
        g_string_append_c(e, *s);
        if (*s == ',') {
            g_string_append_c(e, ',');
        }
    }
    return g_string_free(e, FALSE);
}

GHashTable *rs_qemu_opts_split(const char *s)
{
    GHashTable *kv = g_hash_table_new_full(g_str_hash, g_str_equal, g_free,
                                           g_free);
    GString *cur = g_string_new(NULL);
    const char *p = s;

    for (;;) {
        if (*p == ',' && p[1] == ',') {
            g_string_append_c(cur, ',');
            p += 2;
            continue;
        }
        if (*p == ',' || !*p) {
            char *eq = strchr(cur->str, '=');

            if (eq) {
                *eq = '\0';
                g_hash_table_replace(kv, g_strdup(cur->str), g_strdup(eq + 1));
            } else if (cur->len && !g_hash_table_contains(kv, "")) {
                g_hash_table_replace(kv, g_strdup(""), g_strdup(cur->str));
            }
            g_string_truncate(cur, 0);
            if (!*p) {
                break;
            }
            p++;
            continue;
        }
        g_string_append_c(cur, *p++);
    }
    g_string_free(cur, TRUE);
    return kv;
}

char *rs_qemu_opts_value(const char *opts, const char *key)
{
    g_autoptr(GHashTable) kv = rs_qemu_opts_split(opts);

    return g_strdup(g_hash_table_lookup(kv, key));
}
