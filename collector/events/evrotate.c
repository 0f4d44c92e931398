/* Size-capped, rotated event files. */
#include "events/evrotate.h"
#include "errors.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Written out at least this often by the caller's flush; or when this big. */
#define BUF_MAX     (256 * 1024)

struct RsRotator {
    char *path;
    goffset max_size, size;
    guint keep, rotations;
    int fd;
    GString *buf;
};

static gboolean open_path(RsRotator *r, GError **error)
{
    struct stat st;

    r->fd = open(r->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    if (r->fd < 0 || fstat(r->fd, &st) < 0) {
        g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND, "cannot write %s: %s",
                    r->path, g_strerror(errno));
        return FALSE;
    }
    r->size = st.st_size;
    return TRUE;
}

/*
 * Read back @path: cut a last record without its newline (a collector
 * killed mid-write) and feed the rest to @ledger.
 */
static gboolean prime_file(const char *path, RsLedger *ledger,
                           GError **error)
{
    g_autofree char *data = NULL;
    g_autoptr(GError) local = NULL;
    gsize len, at = 0;
    char *nl;

    if (!g_file_get_contents(path, &data, &len, &local)) {
        if (g_error_matches(local, G_FILE_ERROR, G_FILE_ERROR_NOENT)) {
            return TRUE;
        }
        g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND, "%s",
                    local->message);
        return FALSE;
    }
    while (ledger && (nl = memchr(data + at, '\n', len - at))) {
        guint64 gap;
        gboolean new_run;

        rs_ledger_feed(ledger, data + at, nl - (data + at), &gap, &new_run);
        at = nl - data + 1;
    }
    if (len && data[len - 1] != '\n') {
        char *last = g_strrstr_len(data, len, "\n");

        if (truncate(path, last ? last - data + 1 : 0) < 0) {
            g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND,
                        "cannot cut %s's broken last record: %s", path,
                        g_strerror(errno));
            return FALSE;
        }
    }
    return TRUE;
}

/*
 * The newest rotated file first: a collector killed just after rotating
 * leaves PATH without its "rotated" head, or empty.
 */
static gboolean prime(RsRotator *r, RsLedger *ledger, GError **error)
{
    g_autofree char *older = g_strdup_printf("%s.1", r->path);

    return (!ledger || prime_file(older, ledger, error)) &&
           prime_file(r->path, ledger, error);
}

RsRotator *rs_rotator_open(const char *path, goffset max_size, guint keep,
                           RsLedger *ledger, GError **error)
{
    RsRotator *r = g_new0(RsRotator, 1);

    r->path = g_strdup(path);
    r->max_size = max_size;
    r->keep = keep;
    r->fd = -1;
    r->buf = g_string_new(NULL);
    if (!prime(r, ledger, error) || !open_path(r, error)) {
        rs_rotator_free(r);
        return NULL;
    }
    return r;
}

gboolean rs_rotator_flush(RsRotator *r, GError **error)
{
    gsize done = 0;

    while (done < r->buf->len) {
        ssize_t n = write(r->fd, r->buf->str + done, r->buf->len - done);

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND,
                        "cannot write %s: %s", r->path, g_strerror(errno));
            g_string_erase(r->buf, 0, done);
            return FALSE;
        }
        done += n;
    }
    g_string_truncate(r->buf, 0);
    return TRUE;
}

static gboolean rotate(RsRotator *r, const RsLedger *ledger, GError **error)
{
    g_autofree char *head = NULL;
    guint i;

    if (!rs_rotator_flush(r, error)) {
        return FALSE;
    }
    close(r->fd);
    r->fd = -1;
    for (i = r->keep; i >= 1; i--) {
        g_autofree char *to = g_strdup_printf("%s.%u", r->path, i);
        g_autofree char *from = i > 1 ?
            g_strdup_printf("%s.%u", r->path, i - 1) : g_strdup(r->path);

        if (i == r->keep) {
            g_unlink(to);
        }
        if (g_rename(from, to) < 0 && errno != ENOENT) {
            g_set_error(error, RS_ERROR, RS_ERROR_NOT_FOUND,
                        "cannot rotate %s to %s: %s", from, to,
                        g_strerror(errno));
            open_path(r, NULL);
            return FALSE;
        }
    }
    if (!r->keep) {
        g_unlink(r->path);
    }
    if (!open_path(r, error)) {
        return FALSE;
    }
    r->rotations++;
    head = ledger ? rs_ledger_rotated_record(ledger) : NULL;
    if (head) {
        g_string_append(r->buf, head);
        g_string_append_c(r->buf, '\n');
        r->size += strlen(head) + 1;
    }
    return TRUE;
}

gboolean rs_rotator_write(RsRotator *r, const char *rec, gsize len,
                          const RsLedger *ledger, GError **error)
{
    if (r->fd < 0 && !open_path(r, error)) {
        return FALSE;
    }
    if (r->size > 0 && r->size + (goffset)len + 1 > r->max_size &&
        !rotate(r, ledger, error)) {
        return FALSE;
    }
    g_string_append_len(r->buf, rec, len);
    g_string_append_c(r->buf, '\n');
    r->size += len + 1;
    return r->buf->len < BUF_MAX || rs_rotator_flush(r, error);
}

guint rs_rotator_rotations(RsRotator *r)
{
    return r->rotations;
}

const char *rs_rotator_path(RsRotator *r)
{
    return r->path;
}

void rs_rotator_free(RsRotator *r)
{
    if (!r) {
        return;
    }
    if (r->fd >= 0) {
        rs_rotator_flush(r, NULL);
        close(r->fd);
    }
    g_string_free(r->buf, TRUE);
    g_free(r->path);
    g_free(r);
}
