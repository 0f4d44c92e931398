/*
 * qtest for ringside-serial's loading of state: a migration stream or a
 * snapshot is as hostile as the guest.  Each test saves a real machine's
 * state, patches the bytes of one field in it (found by the subsection's
 * name and the field layout, checked against marker values the "guest"
 * put in), and loads it into a new QEMU:
 *
 *  - a field out of range is refused by name, and the destination exits
 *    with the migration error, not a crash (incoming migration ends QEMU
 *    on any load error);
 *  - state for a feature the destination turned off is refused;
 *  - counters too long for a fixed buffer are written whole at the end;
 *  - a snapshot refused by "loadvm" leaves a device that "cont", new
 *    bytes and a reset use without reading what the load left.
 *
 * Copyright (c) 2026 The ringside authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "ringside-qtest.h"
#include "hw/char/rslib-match.h"
#include "hw/char/rslib-l1.h"

#define EXT             0x4f0
#define MARK_LINE       "MIGRATE-MARK"
#define MARK_ARG        0x4d49475241544521ull      /* "MIGRATE!" */

/* ---- the layout of the device's subsections, field by field ---- */

typedef struct Field {
    const char *name;
    size_t size;                /* bytes on the wire */
} Field;

/* rs_l1_frame as vmstate_rs_l1_frame puts it */
#define FRAME_WIRE      (6 * 8 + 4 + 4 + 4 + RS_L1_TEXT)

static const Field pace_fields[] = {
    { "uart_irq_level", 1 }, { "ier", 1 }, { "thri_pending", 1 },
    { "txq", 16 }, { "txq_index", 16 * 8 }, { "txq_head", 1 },
    { "txq_len", 1 }, { NULL, 0 }
};

static const Field verify_fields[] = {
    { "ring_state", 4 }, { "note_gpa", 8 }, { "line", RS_MATCH_LINE_MAX },
    { "len", 4 }, { "overlong", 1 }, { "cr", 1 }, { "first", 8 },
    { "started", 1 }, { "cursor", 8 }, { "level_seq", 8 * RS_LEVELS },
    { "have_fmt", 1 }, { "fmt_flags", 1 }, { "dropped_credit", 8 },
    { "gone_credit", 8 }, { "window", RS_MATCH_WINDOW },
    { "unmatched_run", 4 }, { "in_rec", 1 }, { "rec_seq", 8 },
    { "rec_ts", 8 }, { "rec", RS_CONSOLE_TEXT_MAX }, { "rec_len", 4 },
    { "rec_off", 4 }, { "resid", RS_MATCH_LINE_MAX }, { "resid_len", 4 },
    { "resid_seq", 8 }, { "backlog", RS_MATCH_BACKLOG },
    { "backlog_len", 4 }, { "counts", 8 * RS_V_COUNT },
    { "hist", 8 * RS_MATCH_HIST }, { "vt_first", 8 }, { "have_offset", 1 },
    { "clock_offset", 8 }, { "lat_min", 8 }, { "lat_max", 8 },
    { "lat_n", 8 }, { "lat_negative", 8 }, { "replay", 1 }, { NULL, 0 }
};

static const Field ext_fields[] = {
    { "ext_knock", 1 }, { "ext_answer", 1 }, { "ext_announced", 1 },
    { "ext_marked", 1 }, { "ext_note", 8 }, { "ext_arg", 8 * RS_L1_SLOTS },
    { "frames", (size_t)RS_L1_SLOTS * RS_L1_DEPTH * FRAME_WIRE },
    { "depth", RS_L1_SLOTS }, { "started", 1 }, { "next", 8 },
    { "level_seq", 8 * RS_LEVELS }, { "fmt_flags", 1 },
    { "dropped_credit", 8 }, { "partial_seq", 8 * RS_L1_PARTIAL },
    { "partial_kind", RS_L1_PARTIAL }, { "window", RS_L1_WINDOW },
    { "brackets", 8 * RS_B_COUNT }, { "records", 8 * RS_R_COUNT },
    { NULL, 0 }
};

static size_t field_off(const Field *fields, const char *name)
{
    size_t off = 0;

    for (; fields->name; fields++) {
        if (!strcmp(fields->name, name)) {
            return off;
        }
        off += fields->size;
    }
    g_assert_not_reached();
}

/* A saved stream (or a file holding one), in memory. */
typedef struct Stream {
    char *path;
    uint8_t *b;
    gsize n;
} Stream;

static void stream_read(Stream *s, const char *path)
{
    g_autoptr(GError) err = NULL;

    s->path = g_strdup(path);
    g_file_get_contents(path, (char **)&s->b, &s->n, &err);
    g_assert_no_error(err);
}

static void stream_write(Stream *s, const char *path)
{
    g_autoptr(GError) err = NULL;

    g_file_set_contents(path, (char *)s->b, s->n, &err);
    g_assert_no_error(err);
}

static void stream_free(Stream *s)
{
    g_free(s->path);
    g_free(s->b);
}

/*
 * Where the first field of subsection @name is: after its header
 * (QEMU_VM_SUBSECTION, the name's length, the name, a be32 version).  The
 * vmstate description at the end names it too, but not after a length.
 */
static size_t sub_start(const Stream *s, const char *name)
{
    size_t len = strlen(name), i, found = 0, at = 0;

    for (i = 0; i + 2 + len + 4 <= s->n; i++) {
        if (s->b[i] == 5 && s->b[i + 1] == len &&
            !memcmp(s->b + i + 2, name, len)) {
            found++;
            at = i + 2 + len + 4;
        }
    }
    g_assert_cmpuint(found, ==, 1);
    return at;
}

/* The subsections' fields in @s, checked against the guest's markers. */
typedef struct Layout {
    size_t pace, verify, ext;
} Layout;

static void layout_of(const Stream *s, Layout *lay)
{
    size_t o;

    lay->pace = sub_start(s, "ringside-serial/pace");
    lay->verify = sub_start(s, "ringside-serial/verify");
    lay->ext = sub_start(s, "ringside-serial/ext");
    o = lay->verify + field_off(verify_fields, "line");
    g_assert(!memcmp(s->b + o, MARK_LINE, strlen(MARK_LINE)));
    o = lay->verify + field_off(verify_fields, "len");
    g_assert_cmpuint(ldl_be_p(s->b + o), ==, strlen(MARK_LINE));
    o = lay->ext + field_off(ext_fields, "ext_arg");
    g_assert_cmphex(ldq_be_p(s->b + o), ==, MARK_ARG);
}

static char *migration_status(QTestState *qts)
{
    QDict *r = qtest_qmp(qts, "{ 'execute': 'query-migrate' }");
    QDict *ret = qdict_get_qdict(r, "return");
    char *st = ret && qdict_haskey(ret, "status") ?
               g_strdup(qdict_get_str(ret, "status")) : NULL;

    qobject_unref(r);
    return st;
}

/* Until the migration on @qts is over; returns its final status. */
static char *migration_wait(QTestState *qts)
{
    unsigned i;

    for (i = 0; i < 1000; i++) {
        char *st = migration_status(qts);

        if (st && (!strcmp(st, "completed") || !strcmp(st, "failed"))) {
            return st;
        }
        g_free(st);
        g_usleep(10000);
    }
    g_assert_not_reached();
}

/*
 * What a guest leaves in the device's state before it is saved: a
 * bracket marked (level 1), two lines before any ring was found (the
 * backlog), a line under way and an argument latched, the last two the
 * markers layout_of() looks for.
 */
static void guest_activity(QTestState *qts)
{
    qtest_outl(qts, EXT, 0);                    /* begin record 0 */
    qtest_outl(qts, EXT + 4, 0);                /* end it */
    uart_puts(qts, "[    0.001000] first\r\n");
    uart_puts(qts, "[    0.002000] second\r\n");
    uart_puts(qts, MARK_LINE);
    qtest_outl(qts, EXT + 8, MARK_ARG >> 32);
    qtest_outl(qts, EXT + 8, (uint32_t)MARK_ARG);
}

/*
 * Save a machine with a default ringside-serial, after @activity, to
 * @path.
 */
static void save_stream(const char *dir, const char *path,
                        void (*activity)(QTestState *))
{
    g_autofree char *con = g_build_filename(dir, "src-console", NULL);
    g_autofree char *uri = g_strdup_printf("exec:cat > %s", path);
    g_autofree char *st = NULL;
    QTestState *qts;

    qts = qtest_initf("-nodefaults -machine pc -chardev file,id=con,path=%s "
                      "-device ringside-serial,id=rs,chardev=con", con);
    activity(qts);
    qtest_qmp_assert_success(qts, "{ 'execute': 'migrate', 'arguments': "
                             "{ 'uri': %s } }", uri);
    st = migration_wait(qts);
    g_assert_cmpstr(st, ==, "completed");
    qtest_quit(qts);
    unlink(con);
}

/*
 * Load @path into a new QEMU with @dev_opts.  want_fail: the load must be
 * refused, QEMU exit with status 1 (not a signal, not a sanitizer report)
 * and its stderr name @why.  Otherwise the running destination is
 * returned.
 */
static QTestState *load_stream(const char *dir, const char *path,
                               const char *dev_opts, const char *events,
                               bool want_fail, const char *why)
{
    g_autofree char *err = g_build_filename(dir, "dst-stderr", NULL);
    g_autofree char *uri = g_strdup_printf("exec:cat %s", path);
    g_autofree char *ev_opts = events ?
        g_strdup_printf("-chardev file,id=ev,path=%s", events) : g_strdup("");
    g_autofree char *text = NULL;
    QTestState *dst;
    unsigned i;

    dst = qtest_initf("-nodefaults -machine pc -chardev null,id=con %s "
                      "-device ringside-serial,id=rs,chardev=con%s%s "
                      "-incoming defer 2>%s", ev_opts,
                      events ? ",events=ev" : "", dev_opts, err);
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", uri);
    if (!want_fail) {
        g_autofree char *st = migration_wait(dst);

        g_assert_cmpstr(st, ==, "completed");
        unlink(err);
        return dst;
    }
    for (i = 0; i < 1000 && qtest_probe_child(dst); i++) {
        g_usleep(10000);
    }
    g_assert_false(qtest_probe_child(dst));
    /* exit(1), as QEMU ends on a failed incoming migration */
    qtest_set_expected_status(dst, 1);
    qtest_quit(dst);
    text = read_file(err);
    if (g_test_verbose()) {
        g_test_message("destination said: %s", text);
    }
    g_assert_nonnull(strstr(text, "ringside-serial: migrated state "
                                  "refused"));
    g_assert_nonnull(strstr(text, why));
    g_assert_null(strstr(text, "Sanitizer"));
    g_assert_null(strstr(text, "runtime error"));
    unlink(err);
    return NULL;
}

/* ---- the saved stream every test starts from ---- */

static char *tmp_dir;
static char *clean_path;

static const char *clean_stream(void)
{
    if (!clean_path) {
        clean_path = g_build_filename(tmp_dir, "clean", NULL);
        save_stream(tmp_dir, clean_path, guest_activity);
    }
    return clean_path;
}

/* ---- a field out of range is refused by name ---- */

typedef struct Bad {
    const char *test;
    char sub;                   /* 'p'ace, 'v'erify, 'e'xt */
    const char *field;
    size_t at;                  /* bytes into the field */
    int width;                  /* 1, or 4 (be32) */
    uint32_t value;
    const char *why;            /* in the destination's error */
} Bad;

static const Bad bad_fields[] = {
    /* finding 1: l1 verdicts used as indexes of a 7-entry array */
    { "l1-window", 'e', "window", 5, 1, 0xff, "l1.window[]" },
    { "l1-partial-kind", 'e', "partial_kind", 3, 1, 0x40,
      "l1.partial_kind[]" },
    { "l1-depth", 'e', "depth", 0, 1, RS_L1_DEPTH + 1, "l1.depth[]" },
    { "l1-frame-len", 'e', "frames", 6 * 8 + 4, 4, RS_L1_TEXT + 1,
      "l1.frames[].len" },
    { "l1-fmt-flags", 'e', "fmt_flags", 0, 1, 0x80, "l1.fmt_flags" },
    { "ext-knock", 'e', "ext_knock", 0, 1, 4, "ext_knock" },
    /* finding 8: an enum that indexes a names table */
    { "ring-state", 'v', "ring_state", 0, 4, 0x7fffffff, "ring_state" },
    { "match-window", 'v', "window", 1, 1, 0x0f, "match.window[]" },
    { "match-rec-off", 'v', "rec_off", 0, 4, 9, "match.rec_off" },
    { "match-fmt-flags", 'v', "fmt_flags", 0, 1, 0x10, "match.fmt_flags" },
    { "match-replay", 'v', "replay", 0, 1, 3, "match.replay" },
    { "pace-txq-head", 'p', "txq_head", 0, 1, 16, "pace.txq_head" },
};

static void patch(Stream *s, const Layout *lay, char sub, const char *field,
                  size_t at, int width, uint32_t value)
{
    size_t o = sub == 'p' ? lay->pace + field_off(pace_fields, field) :
               sub == 'v' ? lay->verify + field_off(verify_fields, field) :
               lay->ext + field_off(ext_fields, field);

    o += at;
    g_assert_cmpuint(o + width, <=, s->n);
    if (width == 1) {
        s->b[o] = value;
    } else {
        stl_be_p(s->b + o, value);
    }
}

static void test_bad_field(const void *opaque)
{
    const Bad *bad = opaque;
    g_autofree char *path = g_build_filename(tmp_dir, bad->test, NULL);
    Stream s;
    Layout lay;

    stream_read(&s, clean_stream());
    layout_of(&s, &lay);
    patch(&s, &lay, bad->sub, bad->field, bad->at, bad->width, bad->value);
    stream_write(&s, path);
    load_stream(tmp_dir, path, "", NULL, true, bad->why);
    unlink(path);
    stream_free(&s);
}

/*
 * Finding 5: a backlog entry no console line could make (longer than a
 * line, within backlog_len) was replayed whole on the next attach.
 */
static void test_backlog_entry(void)
{
    g_autofree char *path = g_build_filename(tmp_dir, "backlog", NULL);
    uint32_t n = 200000;
    size_t bl;
    Stream s;
    Layout lay;

    stream_read(&s, clean_stream());
    layout_of(&s, &lay);
    bl = lay.verify + field_off(verify_fields, "backlog");
    /* the first entry is the guest's first line (u32 length, host order) */
    g_assert_cmpuint(ldl_le_p(s.b + bl), ==,
                     strlen("[    0.001000] first"));
    stl_le_p(s.b + bl, n);
    patch(&s, &lay, 'v', "backlog_len", 0, 4, 36 + n);
    stream_write(&s, path);
    load_stream(tmp_dir, path, "", NULL, true, "match.backlog");
    unlink(path);
    stream_free(&s);
}

/* The unpatched stream loads: the layout and the checks agree with it. */
static void test_clean_loads(void)
{
    QTestState *dst = load_stream(tmp_dir, clean_stream(), "", NULL, false,
                                  NULL);
    g_autofree char *st = ring_state(dst);

    g_assert_cmpstr(st, ==, "none");
    g_assert_cmpuint(rs_counter(dst, "tx-bytes"), ==,
                     strlen("[    0.001000] first\r\n") +
                     strlen("[    0.002000] second\r\n") +
                     strlen(MARK_LINE));
    qtest_quit(dst);
}

/*
 * Finding 2: QEMU loads a subsection whatever .needed says on the
 * destination: the checker's state into ring=off (no probe timer), the
 * window's into ext=0.
 */
static void test_feature_off(const void *opaque)
{
    const char *opts = opaque;

    load_stream(tmp_dir, clean_stream(), opts, NULL, true,
                strstr(opts, "ring") ? "ring=off" : "ext=0");
}

/* The length of the first event line of @kind in @text. */
static size_t line_len(const char *text, const char *kind)
{
    g_autofree char *key = g_strdup_printf("\"ev\":\"%s\"", kind);
    const char *p = strstr(text, key), *start, *end;

    g_assert_nonnull(p);
    for (start = p; start > text && start[-1] != '\n'; start--) {
    }
    end = strchr(p, '\n');
    g_assert_nonnull(end);
    return end - start;
}

/*
 * Finding 3: counters from a loaded state, 20 digits each, make the
 * summaries far longer than a line buffer; both are written whole.
 */
static void test_huge_summary(void)
{
    g_autofree char *path = g_build_filename(tmp_dir, "huge", NULL);
    g_autofree char *events = g_build_filename(tmp_dir, "huge-events", NULL);
    g_autofree char *text = NULL;
    g_autoptr(GPtrArray) sums = NULL, l1 = NULL;
    QTestState *dst;
    size_t o;
    Stream s;
    Layout lay;
    int i;

    stream_read(&s, clean_stream());
    layout_of(&s, &lay);
    o = lay.verify + field_off(verify_fields, "counts");
    for (i = 0; i < RS_V_COUNT; i++) {
        stq_be_p(s.b + o + 8 * i, 18000000000000000000ull + i);
    }
    o = lay.ext + field_off(ext_fields, "brackets");
    for (i = 0; i < RS_B_COUNT; i++) {
        stq_be_p(s.b + o + 8 * i, 17000000000000000000ull + i);
    }
    o = lay.ext + field_off(ext_fields, "records");
    for (i = 0; i < RS_R_COUNT; i++) {
        stq_be_p(s.b + o + 8 * i, 16000000000000000000ull + i);
    }
    stream_write(&s, path);
    dst = load_stream(tmp_dir, path, "", events, false, NULL);
    g_assert_cmpuint(rs_counter(dst, "verdict-ok"), ==,
                     18000000000000000000ull + RS_V_OK);
    /* the backlog is judged when the guest stops: a summary is due */
    qtest_quit(dst);

    text = read_file(events);
    sums = events_of(events, "summary");
    g_assert_cmpuint(sums->len, ==, 1);
    g_assert_cmpuint(qnum_get_uint(qobject_to(QNum,
                     qdict_get(qdict_get_qdict(sums->pdata[0], "lines"),
                               "ok"))), ==, 18000000000000000000ull);
    l1 = events_of(events, "l1-summary");
    g_assert_cmpuint(l1->len, ==, 1);
    g_assert_cmpuint(qnum_get_uint(qobject_to(QNum,
                     qdict_get(qdict_get_qdict(l1->pdata[0], "records"),
                               "missing"))), ==,
                     16000000000000000000ull + RS_R_MISSING);
    /* both lines are longer than the 512 bytes formatted in place */
    g_assert_cmpuint(line_len(text, "summary"), >, 512);
    g_assert_cmpuint(line_len(text, "l1-summary"), >, 512);
    unlink(path);
    unlink(events);
    stream_free(&s);
}

/* ---- a refused snapshot leaves a device that can go on ---- */

static void blockdev_image(QTestState *qts, const char *img, bool create)
{
    qtest_qmp_assert_success(qts, "{ 'execute': 'blockdev-add', "
                             "'arguments': { 'driver': 'file', "
                             "'node-name': 'f', 'filename': %s } }", img);
    if (create) {
        qtest_qmp_assert_success(qts, "{ 'execute': 'blockdev-create', "
                                 "'arguments': { 'job-id': 'c', 'options': "
                                 "{ 'driver': 'qcow2', 'file': 'f', "
                                 "'size': 1048576 } } }");
        qtest_qmp_eventwait(qts, "JOB_STATUS_CHANGE");
        for (;;) {
            QDict *r = qtest_qmp(qts, "{ 'execute': 'query-jobs' }");
            QList *jobs = qdict_get_qlist(r, "return");
            QDict *job = qobject_to(QDict, qlist_peek(jobs));
            bool done = !strcmp(qdict_get_str(job, "status"), "concluded");

            qobject_unref(r);
            if (done) {
                break;
            }
            g_usleep(10000);
        }
        qtest_qmp_assert_success(qts, "{ 'execute': 'job-dismiss', "
                                 "'arguments': { 'id': 'c' } }");
    }
    qtest_qmp_assert_success(qts, "{ 'execute': 'blockdev-add', "
                             "'arguments': { 'driver': 'qcow2', "
                             "'node-name': 'disk', 'file': 'f' } }");
}

static char *hmp(QTestState *qts, const char *cmd)
{
    QDict *r = qtest_qmp(qts, "{ 'execute': 'human-monitor-command', "
                         "'arguments': { 'command-line': %s } }", cmd);
    char *out = g_strdup(qdict_get_str(r, "return"));

    qobject_unref(r);
    return out;
}

/* Offset of @needle in @s, which holds it once. */
static size_t find_once(const Stream *s, const void *needle, size_t len)
{
    size_t i, at = 0, found = 0;

    for (i = 0; i + len <= s->n; i++) {
        if (!memcmp(s->b + i, needle, len)) {
            at = i;
            found++;
        }
    }
    g_assert_cmpuint(found, ==, 1);
    return at;
}

/*
 * Finding 8: a snapshot whose ring_state is out of range.  "loadvm"
 * refuses it and QEMU stays up; the user may "cont".  The ring state read
 * then, the bytes the guest writes, a reset and the summary at the end
 * must not index with what the load left.  cut: reading the snapshot
 * also fails soon after that field, so the checker's post_load never
 * runs and only the device's memory of an unfinished load stands between
 * the garbage and its next use.
 */
static void test_failed_loadvm(const void *opaque)
{
    bool cut = GPOINTER_TO_INT(opaque);
    g_autofree char *img = g_build_filename(tmp_dir, "img.qcow2", NULL);
    g_autofree char *con = g_build_filename(tmp_dir, "lv-console", NULL);
    g_autofree char *events = g_build_filename(tmp_dir, "lv-events", NULL);
    g_autofree char *out = NULL, *st = NULL;
    static const char hdr[] = "\x05\x16ringside-serial/verify";
    QTestState *qts;
    size_t at;
    Stream s;

    g_assert_true(g_file_set_contents(img, "", 0, NULL));
    qts = qtest_initf("-nodefaults -machine pc -chardev file,id=con,path=%s "
                      "-device ringside-serial,id=rs,chardev=con", con);
    blockdev_image(qts, img, true);
    guest_activity(qts);
    out = hmp(qts, "savevm s1");
    g_assert_cmpstr(out, ==, "");
    qtest_quit(qts);

    /* qcow2 stores the snapshot's state as written, uncompressed */
    stream_read(&s, img);
    at = find_once(&s, hdr, sizeof(hdr) - 1) + sizeof(hdr) - 1 + 4;
    stl_be_p(s.b + at, 0x7fffffff);             /* ring_state */
    if (cut) {
        /*
         * The snapshot's state breaks off after ring_state: the second
         * cluster after the one holding it (beyond the 32 KiB QEMU reads
         * at once, within the checker's 260 KiB) is made a compressed
         * cluster of one sector, its own first bytes, which do not
         * inflate: qcow2 fails the read there (-EIO).  The clusters of
         * the state were allocated in order; the snapshot's L1 table
         * (first in the snapshot table) leads to its L2 tables.
         */
        uint32_t cbits = ldl_be_p(s.b + 20);
        uint64_t csize = 1ull << cbits, table = ldq_be_p(s.b + 64);
        uint64_t l1 = ldq_be_p(s.b + table), mask = 0x00fffffffffffe00ull;
        uint64_t next = (at & ~(csize - 1)) + 2 * csize;
        uint32_t l1_size = ldl_be_p(s.b + table + 8), j, k;
        bool broken = false;

        g_assert_cmpuint(ldl_be_p(s.b + 60), ==, 1);    /* nb_snapshots */
        for (j = 0; j < l1_size && !broken; j++) {
            uint64_t l2 = ldq_be_p(s.b + l1 + 8 * j) & mask;

            for (k = 0; l2 && k < csize / 8 && !broken; k++) {
                uint64_t e = ldq_be_p(s.b + l2 + 8 * k);

                if ((e & mask) == next) {
                    stq_be_p(s.b + l2 + 8 * k, 1ull << 62 | next);
                    broken = true;
                }
            }
        }
        g_assert_true(broken);
        memset(s.b + next, 0, 512);     /* a stored block, lengths wrong */
        s.b[next + 1] = 1;
    }
    stream_write(&s, img);

    qts = qtest_initf("-nodefaults -machine pc -chardev null,id=con "
                      "-chardev file,id=ev,path=%s -device ringside-serial,"
                      "id=rs,chardev=con,events=ev", events);
    blockdev_image(qts, img, false);
    g_free(out);
    out = hmp(qts, "loadvm s1");
    g_assert_nonnull(strstr(out, "Error"));
    st = ring_state(qts);
    g_assert_cmpstr(st, ==, "none");
    qtest_qmp_assert_success(qts, "{ 'execute': 'cont' }");
    uart_puts(qts, "[    0.003000] after\r\n");
    qtest_qmp_assert_success(qts, "{ 'execute': 'system_reset' }");
    qtest_qmp_eventwait(qts, "RESET");
    g_free(st);
    st = ring_state(qts);
    g_assert_cmpstr(st, ==, "none");
    qtest_quit(qts);                /* a signal would fail here */
    /* what was written says a known ring state, as JSON */
    {
        g_autoptr(GPtrArray) sums = events_of(events, "summary");
        unsigned i;

        for (i = 0; i < sums->len; i++) {
            g_assert_cmpstr(qdict_get_str(sums->pdata[i], "ring"), ==,
                            "none");
        }
    }
    stream_free(&s);
    unlink(img);
    unlink(con);
    unlink(events);
}

/* ---- the embedded UART's state: QEMU's 16550 inside the section ---- */

/*
 * The UART's fields as vmstate_serial puts them, first in the device's
 * section: divider (be16), rbr, ier, iir, lcr, mcr, lsr, msr, scr, fcr.
 */
#define UART_FIELDS     11
#define UART_MCR        6
#define UART_LSR        7
#define UART_FCR        10
#define UART_FIFO_HDR   "\x05\x10serial/recv_fifo"
#define LSR_DR          0x01
#define MCR_OUT2        0x08

/*
 * A guest that left a byte in the UART's receive FIFO: looped back from
 * its own transmitter (which reaches no console), FIFO on, loop off
 * again.  The stream then has the "serial/recv_fifo" subsection, right
 * after the UART's fields.
 */
static void uart_activity(QTestState *qts)
{
    qtest_outb(qts, COM1 + REG_MCR, MCR_LOOP | MCR_OUT2);
    qtest_outb(qts, COM1 + REG_FCR, FCR_ENABLE_RESET);
    uart_put(qts, 'Q');
    qtest_outb(qts, COM1 + REG_MCR, MCR_OUT2);
}

static char *uart_path;

static const char *uart_stream(void)
{
    if (!uart_path) {
        uart_path = g_build_filename(tmp_dir, "uart", NULL);
        save_stream(tmp_dir, uart_path, uart_activity);
    }
    return uart_path;
}

/*
 * Where the UART's fields begin in @s, checked against what
 * uart_activity() left; *fifo: where its receive FIFO's fields begin
 * (16 bytes of data, head and num, be32 each).
 */
static size_t uart_layout(const Stream *s, size_t *fifo)
{
    size_t hdr_len = sizeof(UART_FIFO_HDR) - 1;
    size_t f = find_once(s, UART_FIFO_HDR, hdr_len);
    size_t u = f - UART_FIELDS;

    *fifo = f + hdr_len + 4;
    g_assert_cmphex(s->b[u + UART_MCR], ==, MCR_OUT2);
    g_assert_cmphex(s->b[u + UART_LSR], ==, LSR_TEMT | LSR_THRE | LSR_DR);
    g_assert_cmphex(s->b[u + UART_FCR], ==, 0x01);
    g_assert_cmphex(s->b[*fifo], ==, 'Q');
    g_assert_cmpuint(ldl_be_p(s->b + *fifo + 16), ==, 0);     /* head */
    g_assert_cmpuint(ldl_be_p(s->b + *fifo + 20), ==, 1);     /* num */
    return u;
}

/* What a guest reading the UART does: data, line, interrupt, modem. */
static void guest_reads(QTestState *qts)
{
    int i;

    for (i = 0; i < 2; i++) {
        g_test_message("RBR 0x%02x", qtest_inb(qts, COM1 + REG_THR));
        g_test_message("LSR 0x%02x", qtest_inb(qts, COM1 + REG_LSR));
        g_test_message("IIR 0x%02x", qtest_inb(qts, COM1 + REG_IIR));
        g_test_message("MSR 0x%02x", qtest_inb(qts, COM1 + 6));
    }
}

/*
 * Load @path, a stream with a hostile UART state, into a new QEMU whose
 * console is a file: the load must be refused naming @why, QEMU exit 1
 * (not abort, not crash) and the console get no byte.  A destination
 * that takes the state is first read as a guest would, to show what the
 * state does, and the test then fails.
 */
static void load_hostile(const char *path, const char *why)
{
    g_autofree char *err = g_build_filename(tmp_dir, "dst-stderr", NULL);
    g_autofree char *con = g_build_filename(tmp_dir, "dst-console", NULL);
    g_autofree char *uri = g_strdup_printf("exec:cat %s", path);
    g_autofree char *text = NULL, *wire = NULL;
    QTestState *dst;
    unsigned i;

    dst = qtest_initf("-nodefaults -machine pc -chardev file,id=con,path=%s "
                      "-device ringside-serial,id=rs,chardev=con "
                      "-incoming defer 2>%s", con, err);
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", uri);
    for (i = 0; i < 300 && qtest_probe_child(dst); i++) {
        g_usleep(10000);
    }
    if (qtest_probe_child(dst)) {
        g_autofree char *st = migration_wait(dst);

        g_test_message("destination took the state (%s); tx-bytes %" PRIu64,
                       st, rs_counter(dst, "tx-bytes"));
        guest_reads(dst);
        qtest_quit(dst);
        wire = read_file(con);
        g_test_message("its console got %zu bytes", strlen(wire));
        g_assert_cmpstr(wire, ==, "");
        g_assert_cmpstr(st, ==, "refused");
    }
    qtest_set_expected_status(dst, 1);
    qtest_quit(dst);
    text = read_file(err);
    wire = read_file(con);
    if (g_test_verbose()) {
        g_test_message("destination said: %s", text);
    }
    g_assert_nonnull(strstr(text, "ringside-serial: migrated state "
                                  "refused"));
    g_assert_nonnull(strstr(text, why));
    g_assert_null(strstr(text, "Sanitizer"));
    g_assert_null(strstr(text, "runtime error"));
    g_assert_cmpstr(wire, ==, "");
    unlink(err);
    unlink(con);
}

/* The UART's stream loads as it was saved: the byte is still there. */
static void test_uart_clean(void)
{
    QTestState *dst = load_stream(tmp_dir, uart_stream(), "", NULL, false,
                                  NULL);

    g_assert_cmphex(qtest_inb(dst, COM1 + REG_LSR), ==,
                    LSR_TEMT | LSR_THRE | LSR_DR);
    g_assert_cmphex(qtest_inb(dst, COM1 + REG_THR), ==, 'Q');
    g_assert_cmphex(qtest_inb(dst, COM1 + REG_LSR), ==, LSR_TEMT | LSR_THRE);
    qtest_quit(dst);
}

/*
 * Issue 32, finding 1: the receive FIFO's head far past its 16 bytes.
 * Taken, the guest's next RBR read indexed the heap with it (SIGSEGV).
 */
static void test_uart_fifo_head(void)
{
    g_autofree char *path = g_build_filename(tmp_dir, "uart-head", NULL);
    size_t fifo;
    Stream s;

    stream_read(&s, uart_stream());
    uart_layout(&s, &fifo);
    stl_be_p(s.b + fifo + 16, 0x40000000);
    stream_write(&s, path);
    load_hostile(path, "serial.recv_fifo.head");
    unlink(path);
    stream_free(&s);
}

/* The UART's other fields the device checks, each refused by name. */
typedef struct UartBad {
    const char *test;
    bool fifo;                  /* in the receive FIFO's subsection */
    size_t at;                  /* into the fields, or into the FIFO's */
    int width;                  /* 1, or 4 (be32) */
    uint32_t value;
    const char *why;
} UartBad;

static const UartBad uart_bad[] = {
    { "ier-bits", false, 3, 1, 0x11, "serial.ier: bits" },
    { "ier-thri", false, 3, 1, 0x02, "serial.ier: THRE" },
    { "iir", false, 4, 1, 0x32, "serial.iir" },
    { "mcr", false, UART_MCR, 1, 0x28, "serial.mcr" },
    { "lsr-fifo-error", false, UART_LSR, 1, 0xe1, "serial.lsr: a receive" },
    { "fcr", false, UART_FCR, 1, 0x07, "serial.fcr_vmstate" },
    { "recv-fifo-num", true, 20, 4, 17, "serial.recv_fifo.num" },
};

static void test_uart_bad_field(const void *opaque)
{
    const UartBad *bad = opaque;
    g_autofree char *path = g_build_filename(tmp_dir, "uart-bad", NULL);
    size_t fifo, o;
    Stream s;

    stream_read(&s, uart_stream());
    o = uart_layout(&s, &fifo);
    o = (bad->fifo ? fifo : o) + bad->at;
    if (bad->width == 1) {
        s.b[o] = bad->value;
    } else {
        stl_be_p(s.b + o, bad->value);
    }
    stream_write(&s, path);
    load_hostile(path, bad->why);
    unlink(path);
    stream_free(&s);
}

/*
 * Issue 32, finding 1: a "serial/tsr" subsection (the UART's own
 * transmitter waiting to retry a byte), with LSR saying both THR and the
 * shift register hold bytes.  Taken, QEMU's 16550 sent the shift
 * register's byte and THR's to the console, past the witness (FIFO off),
 * or aborted on its empty transmit FIFO while loading (FIFO on).
 */
static void test_uart_tsr(const void *opaque)
{
    bool fifo_on = GPOINTER_TO_INT(opaque);
    g_autofree char *path = g_build_filename(tmp_dir, "uart-tsr", NULL);
    static const char sub[] = "\x05\x0aserial/tsr";
    size_t fifo, u, hdr, n;
    Stream s, out;

    stream_read(&s, uart_stream());
    u = uart_layout(&s, &fifo);
    s.b[u + UART_LSR] = 0;
    s.b[u + UART_FCR] = fifo_on;
    /* the subsection goes before the receive FIFO's */
    hdr = u + UART_FIELDS;
    n = sizeof(sub) - 1;
    out.path = NULL;
    out.n = s.n + n + 4 + 4 + 2;
    out.b = g_malloc(out.n);
    memcpy(out.b, s.b, hdr);
    memcpy(out.b + hdr, sub, n);
    stl_be_p(out.b + hdr + n, 1);               /* version */
    stl_be_p(out.b + hdr + n + 4, 1);           /* tsr_retry */
    out.b[hdr + n + 8] = 'T';                   /* thr */
    out.b[hdr + n + 9] = 'S';                   /* tsr */
    memcpy(out.b + hdr + n + 10, s.b + hdr, s.n - hdr);
    stream_write(&out, path);
    load_hostile(path, "serial.tsr_retry");
    unlink(path);
    stream_free(&out);
    stream_free(&s);
}

/*
 * Issue 32, finding 1: a snapshot "loadvm" refuses leaves the UART as a
 * reset does, so that "cont" and the guest's reads use nothing the load
 * left.  bad: the refused field is the UART's own (the receive FIFO's
 * head, taken before: the read then crashed); otherwise the UART's state
 * is sound and the checker's ring_state is refused after it (before, the
 * UART kept the loaded state: its byte, FIFO and line status).
 */
static void test_uart_loadvm(const void *opaque)
{
    bool bad = GPOINTER_TO_INT(opaque);
    g_autofree char *img = g_build_filename(tmp_dir, "uimg.qcow2", NULL);
    g_autofree char *con = g_build_filename(tmp_dir, "ulv-console", NULL);
    g_autofree char *out = NULL, *wire = NULL;
    static const char verify_hdr[] = "\x05\x16ringside-serial/verify";
    uint8_t lsr, rbr, iir, mcr;
    QTestState *qts;
    size_t at;
    Stream s;

    g_assert_true(g_file_set_contents(img, "", 0, NULL));
    qts = qtest_initf("-nodefaults -machine pc -chardev file,id=con,path=%s "
                      "-device ringside-serial,id=rs,chardev=con", con);
    blockdev_image(qts, img, true);
    guest_activity(qts);
    uart_activity(qts);
    out = hmp(qts, "savevm s1");
    g_assert_cmpstr(out, ==, "");
    qtest_quit(qts);

    stream_read(&s, img);
    if (bad) {
        at = find_once(&s, UART_FIFO_HDR, sizeof(UART_FIFO_HDR) - 1) +
             sizeof(UART_FIFO_HDR) - 1 + 4;
        g_assert_cmphex(s.b[at], ==, 'Q');
        stl_be_p(s.b + at + 16, 0x40000000);    /* head */
    } else {
        at = find_once(&s, verify_hdr, sizeof(verify_hdr) - 1) +
             sizeof(verify_hdr) - 1 + 4;
        stl_be_p(s.b + at, 0x7fffffff);         /* ring_state */
    }
    stream_write(&s, img);

    qts = qtest_initf("-nodefaults -machine pc -chardev file,id=con,path=%s "
                      "-device ringside-serial,id=rs,chardev=con", con);
    blockdev_image(qts, img, false);
    g_free(out);
    out = hmp(qts, "loadvm s1");
    g_test_message("loadvm said: %s", out);
    qtest_qmp_assert_success(qts, "{ 'execute': 'cont' }");
    lsr = qtest_inb(qts, COM1 + REG_LSR);
    rbr = qtest_inb(qts, COM1 + REG_THR);
    iir = qtest_inb(qts, COM1 + REG_IIR);
    mcr = qtest_inb(qts, COM1 + REG_MCR);
    g_test_message("after cont: LSR 0x%02x RBR 0x%02x IIR 0x%02x MCR 0x%02x",
                   lsr, rbr, iir, mcr);
    g_assert_nonnull(strstr(out, "Error"));
    /* as a reset leaves it: transmitter empty, nothing received, FIFO off */
    g_assert_cmphex(lsr, ==, LSR_TEMT | LSR_THRE);
    g_assert_cmphex(rbr, ==, 0);
    g_assert_cmphex(iir, ==, 0x01);
    g_assert_cmphex(mcr, ==, MCR_OUT2);
    qtest_quit(qts);
    /* the destination's guest wrote nothing: its console got nothing */
    wire = read_file(con);
    g_assert_cmpstr(wire, ==, "");
    stream_free(&s);
    unlink(img);
    unlink(con);
}

/* ---- issue 32, finding 3: a backlog the replay has not got through ---- */

#define BACKLOG_LINES   200

/*
 * A guest that printed BACKLOG_LINES records' lines before any note
 * said where its ring is: the device keeps them all in the backlog.
 */
static void backlog_activity(QTestState *qts)
{
    Ring r;
    int i;

    put_prb(qts, 8, 16);
    memset(&r, 0, sizeof(r));
    r.qts = qts;
    r.count_bits = 8;
    r.size_bits = 16;
    for (i = 0; i < BACKLOG_LINES; i++) {
        g_autofree char *text = g_strdup_printf("early %d", i);

        ring_push(&r, text);
        print_rec(qts, i, text);
    }
}

/*
 * The stream carries the backlog; the destination finds the ring, starts
 * replaying the lines under a small tick budget, and the guest resets
 * before the replay is through.  Every line is reported once: judged, or
 * unchecked with "budget", and counted so in the reset's summary.
 * Before, the lines not replayed yet vanished with the reset: no event,
 * no count, no under_budget.
 */
static void test_backlog_reset(void)
{
    g_autofree char *path = g_build_filename(tmp_dir, "backlog-reset", NULL);
    g_autofree char *events = g_build_filename(tmp_dir, "bl-events", NULL);
    g_autofree char *note = vmcoreinfo_61(START_KERNEL_MAP + PRB_PTR_PA);
    g_autoptr(GPtrArray) lines = NULL, sums = NULL;
    g_autofree char *st = NULL;
    uint64_t ok = 0, budget = 0;
    QDict *sum = NULL;
    QTestState *dst;
    unsigned i;

    save_stream(tmp_dir, path, backlog_activity);
    dst = load_stream(tmp_dir, path, ",tick-read-budget=1024", events,
                      false, NULL);
    put_note(dst, NOTE_PA, note);
    for (i = 0; i < 100; i++) {
        g_free(st);
        st = ring_state(dst);
        if (!strcmp(st, "attached")) {
            break;
        }
        qtest_clock_step(dst, 100 * 1000 * 1000);
    }
    g_assert_cmpstr(st, ==, "attached");
    g_assert_cmpuint(rs_counter(dst, "verdict-ok"), <, BACKLOG_LINES);
    qtest_qmp_assert_success(dst, "{ 'execute': 'system_reset' }");
    qtest_qmp_eventwait(dst, "RESET");
    qtest_quit(dst);

    lines = events_of(events, "line");
    for (i = 0; i < lines->len; i++) {
        QDict *l = lines->pdata[i];
        const char *v = qdict_get_str(l, "verdict");

        if (!strcmp(v, "ok")) {
            ok++;
        } else {
            g_assert_cmpstr(v, ==, "unchecked");
            g_assert_cmpint(qdict_get_try_int(l, "budget", 0), ==, 1);
            budget++;
        }
    }
    g_test_message("%u line events: %" PRIu64 " ok, %" PRIu64
                   " unchecked for budget", lines->len, ok, budget);
    g_assert_cmpuint(lines->len, ==, BACKLOG_LINES);
    g_assert_cmpuint(budget, >, 0);     /* the reset did cut the replay */
    sums = events_of(events, "summary");
    for (i = 0; i < sums->len; i++) {
        if (!strcmp(qdict_get_str(sums->pdata[i], "reason"), "reset")) {
            sum = sums->pdata[i];
        }
    }
    g_assert_nonnull(sum);
    g_assert_cmpint(sub_int(sum, "lines", "ok"), ==, ok);
    g_assert_cmpint(sub_int(sum, "lines", "unchecked"), ==, budget);
    g_assert_cmpint(qdict_get_int(sum, "under_budget"), >=, budget);
    unlink(path);
    unlink(events);
}

int main(int argc, char **argv)
{
    g_autoptr(GError) err = NULL;
    size_t i;
    int ret;

    g_test_init(&argc, &argv, NULL);
    tmp_dir = g_dir_make_tmp("ringside-migrate-XXXXXX", &err);
    g_assert_no_error(err);
    qtest_add_func("/ringside-migrate/clean-loads", test_clean_loads);
    for (i = 0; i < ARRAY_SIZE(bad_fields); i++) {
        g_autofree char *path = g_strdup_printf("/ringside-migrate/bad/%s",
                                                bad_fields[i].test);

        qtest_add_data_func(path, &bad_fields[i], test_bad_field);
    }
    qtest_add_func("/ringside-migrate/bad/backlog-entry", test_backlog_entry);
    qtest_add_data_func("/ringside-migrate/feature-off/ring", ",ring=off",
                        test_feature_off);
    qtest_add_data_func("/ringside-migrate/feature-off/ext", ",ext=0",
                        test_feature_off);
    qtest_add_func("/ringside-migrate/huge-summary", test_huge_summary);
    qtest_add_data_func("/ringside-migrate/failed-loadvm/refused",
                        GINT_TO_POINTER(false), test_failed_loadvm);
    qtest_add_data_func("/ringside-migrate/failed-loadvm/cut",
                        GINT_TO_POINTER(true), test_failed_loadvm);
    qtest_add_func("/ringside-migrate/uart/clean-loads", test_uart_clean);
    qtest_add_func("/ringside-migrate/uart/recv-fifo-head",
                   test_uart_fifo_head);
    qtest_add_data_func("/ringside-migrate/uart/tsr-fifo-off",
                        GINT_TO_POINTER(false), test_uart_tsr);
    qtest_add_data_func("/ringside-migrate/uart/tsr-fifo-on",
                        GINT_TO_POINTER(true), test_uart_tsr);
    for (i = 0; i < ARRAY_SIZE(uart_bad); i++) {
        g_autofree char *path = g_strdup_printf("/ringside-migrate/uart/"
                                                "bad/%s", uart_bad[i].test);

        qtest_add_data_func(path, &uart_bad[i], test_uart_bad_field);
    }
    qtest_add_data_func("/ringside-migrate/uart/loadvm-bad-uart",
                        GINT_TO_POINTER(true), test_uart_loadvm);
    qtest_add_data_func("/ringside-migrate/uart/loadvm-forget",
                        GINT_TO_POINTER(false), test_uart_loadvm);
    qtest_add_func("/ringside-migrate/backlog-reset", test_backlog_reset);
    ret = g_test_run();
    if (clean_path) {
        unlink(clean_path);
    }
    if (uart_path) {
        unlink(uart_path);
    }
    rmdir(tmp_dir);
    return ret;
}
