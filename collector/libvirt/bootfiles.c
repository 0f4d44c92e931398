/* Kernel, initramfs and emulator where a domain's QEMU user reaches them. */
#include "libvirt/bootfiles.h"

#include <string.h>
#include <sys/stat.h>

static gboolean same_bytes(const char *a, const char *b)
{
    g_autoptr(GMappedFile) ma = g_mapped_file_new(a, FALSE, NULL);
    g_autoptr(GMappedFile) mb = ma ? g_mapped_file_new(b, FALSE, NULL) : NULL;
    gsize len;

    if (!ma || !mb) {
        return FALSE;
    }
    len = g_mapped_file_get_length(ma);
    return len == g_mapped_file_get_length(mb) &&
           (len == 0 || memcmp(g_mapped_file_get_contents(ma),
                               g_mapped_file_get_contents(mb), len) == 0);
}

char *rs_bootfile_target(const char *src, const char *dir, const char *name)
{
    g_autofree char *from = g_canonicalize_filename(src, NULL);
    g_autofree char *into = g_canonicalize_filename(dir, NULL);
    g_autofree char *src_dir = g_path_get_dirname(from);

    if (g_str_equal(src_dir, into)) {
        return g_steal_pointer(&from);
    }
    return g_build_filename(into, name, NULL);
}

gboolean rs_bootfile_copy(const char *src, const char *dest, GError **error)
{
    g_autofree char *from = g_canonicalize_filename(src, NULL);
    g_autofree char *data = NULL;
    gsize len;

    if (g_str_equal(from, dest) || same_bytes(from, dest)) {
        return TRUE;
    }
    if (!g_file_get_contents(from, &data, &len, error)) {
        return FALSE;
    }
    /* Written aside and renamed: a running domain keeps the old file. */
    if (!g_file_set_contents_full(dest, data, len,
                                  G_FILE_SET_CONTENTS_CONSISTENT, 0644,
                                  error)) {
        g_prefix_error(error, "cannot copy %s (give --boot-dir a directory "
                       "the domain's QEMU can read): ", from);
        return FALSE;
    }
    return TRUE;
}

gboolean rs_bootfile_reachable(const char *path, gboolean exec, char **why)
{
    g_autofree char *p = g_canonicalize_filename(path, NULL);
    char *slash = p;
    struct stat st;

    /* Each directory on the way, then the file itself. */
    while ((slash = strchr(slash + 1, '/'))) {
        *slash = '\0';
        if (stat(p, &st) == 0 && !(st.st_mode & S_IXOTH)) {
            *why = g_strdup_printf("%s is not searchable by others", p);
            return FALSE;
        }
        *slash = '/';
    }
    if (stat(p, &st) != 0) {
        *why = g_strdup_printf("%s does not exist", p);
        return FALSE;
    }
    if (!(st.st_mode & (exec ? S_IXOTH : S_IROTH))) {
        *why = g_strdup_printf("%s is not %s by others", p,
                               exec ? "executable" : "readable");
        return FALSE;
    }
    return TRUE;
}
