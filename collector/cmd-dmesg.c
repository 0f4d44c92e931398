/*
 * ringside dmesg: print the guest kernel's log from guest memory (a live
 * guest's shared RAM file, a QEMU ELF dump or a raw image), with no help
 * from the guest, as dmesg would, or as JSON Lines.
 */
#include "commands.h"
#include "errors.h"
#include "jsontext.h"
#include "witness/discover.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* printk_info.text_len is 16 bits: no record holds more. */
#define TEXT_MAX    65536
#define FOLLOW_POLL_US  (100 * 1000)

typedef struct {
    gboolean json;
    gboolean caller;
    guint64 bad;
    guint64 lost;
    GString *out;
} Printer;

static void caller_str(uint32_t id, char *buf, size_t len)
{
    /* Bit 31 marks a CPU number (printk outside task context). */
    if (id & 0x80000000u) {
        g_snprintf(buf, len, "C%u", id & ~0x80000000u);
    } else {
        g_snprintf(buf, len, "T%u", id);
    }
}

static void print_record(Printer *p, const rs_record *rec)
{
    char caller[16];
    GString *o = p->out;

    g_string_truncate(o, 0);
    caller_str(rec->caller_id, caller, sizeof(caller));
    if (p->json) {
        g_string_append_printf(o, "{\"seq\":%" G_GUINT64_FORMAT
                               ",\"ts_nsec\":%" G_GUINT64_FORMAT
                               ",\"level\":%u,\"facility\":%u"
                               ",\"caller\":\"%s\",\"flags\":%u,\"text\":\"",
                               rec->seq, rec->ts_nsec, rec->level,
                               rec->facility, caller, rec->flags);
        rs_json_escape(o, rec->text, rec->text_copied);
        g_string_append_c(o, '"');
        if (rec->subsystem[0]) {
            g_string_append(o, ",\"subsystem\":\"");
            rs_json_escape(o, rec->subsystem, strlen(rec->subsystem));
            g_string_append_c(o, '"');
        }
        if (rec->device[0]) {
            g_string_append(o, ",\"device\":\"");
            rs_json_escape(o, rec->device, strlen(rec->device));
            g_string_append_c(o, '"');
        }
        g_string_append(o, "}\n");
    } else {
        unsigned flags = RS_FMT_TIME | (p->caller ? RS_FMT_CALLER : 0);
        size_t n = rs_format(rec, flags, 0, o->str, o->allocated_len);

        /* Formatted again only when the buffer had to grow. */
        if (n >= o->allocated_len) {
            g_string_set_size(o, n);
            rs_format(rec, flags, 0, o->str, n + 1);
        }
        o->len = n;
    }
    fwrite(o->str, 1, o->len, stdout);
}

/* Print records from @it until the ring has no more; FALSE on LIMIT. */
static gboolean drain(Printer *p, rs_iter *it, char *text)
{
    rs_record rec;

    for (;;) {
        switch (rs_iter_next(it, &rec, text, TEXT_MAX)) {
        case RS_IT_RECORD:
            print_record(p, &rec);
            break;
        case RS_IT_NODATA:
            break;
        case RS_IT_GAP:
            p->lost += it->gap_count;
            g_printerr("ringside dmesg: %" G_GUINT64_FORMAT " records lost "
                       "(overwritten) before seq %" G_GUINT64_FORMAT "\n",
                       it->gap_count, it->gap_first + it->gap_count);
            break;
        case RS_IT_BAD:
            p->bad++;
            g_printerr("ringside dmesg: record %" G_GUINT64_FORMAT
                       " unreadable: %s\n", rec.seq,
                       rec.reason ? rec.reason : "?");
            break;
        case RS_IT_END:
            fflush(stdout);
            return TRUE;
        case RS_IT_LIMIT:
            fflush(stdout);
            return FALSE;
        }
    }
}

int rs_cmd_dmesg(int argc, char **argv)
{
    g_autoptr(GOptionContext) ctx = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(RsGuestMem) mem = NULL;
    g_autoptr(GString) out = g_string_new(NULL);
    g_autofree char *text = g_malloc(TEXT_MAX);
    g_autofree char *raw_base = NULL;
    gboolean json = FALSE, follow = FALSE, caller = FALSE;
    gint64 from_seq = -1;
    Printer p = { 0 };
    RsDiscovery d;
    rs_iter it;
    uint64_t seq, base = 0;
    const GOptionEntry entries[] = {
        { "json", 'j', 0, G_OPTION_ARG_NONE, &json,
          "JSON Lines: seq, ts_nsec, level, facility, caller, flags, text",
          NULL },
        { "follow", 'w', 0, G_OPTION_ARG_NONE, &follow,
          "Keep printing new records as the live guest logs them", NULL },
        { "from-seq", 0, 0, G_OPTION_ARG_INT64, &from_seq,
          "Start at this sequence number", "N" },
        { "caller", 'C', 0, G_OPTION_ARG_NONE, &caller,
          "Print the caller field, as PRINTK_CALLER kernels do", NULL },
        { "raw-base", 0, 0, G_OPTION_ARG_STRING, &raw_base,
          "FILE is a raw memory image starting at this guest physical "
          "address", "ADDR" },
        { NULL }
    };

    ctx = g_option_context_new("FILE - print the guest kernel's log");
    g_option_context_set_description(ctx,
        "FILE is a live guest's shared RAM file (memory-backend-file), a "
        "QEMU dump-guest-memory ELF, or with --raw-base a raw image.\n");
    g_option_context_add_main_entries(ctx, entries, NULL);
    if (!g_option_context_parse(ctx, &argc, &argv, &error)) {
        g_printerr("ringside dmesg: %s\n", error->message);
        return 2;
    }
    if (argc != 2) {
        g_printerr("ringside dmesg: expected one FILE (see --help)\n");
        return 2;
    }
    if (raw_base) {
        char *end;

        errno = 0;
        base = g_ascii_strtoull(raw_base, &end, 0);
        if (errno || end == raw_base || *end) {
            g_printerr("ringside dmesg: --raw-base \"%s\" is not a number\n",
                       raw_base);
            return 2;
        }
        mem = rs_guestmem_open_raw(argv[1], base, &error);
    } else {
        mem = rs_guestmem_open_auto(argv[1], &error);
    }
    if (!mem) {
        g_printerr("ringside dmesg: %s\n", error->message);
        return 1;
    }

    /* A guest that is still booting may not have its note yet. */
    while (!rs_discover(mem, &d, &error)) {
        if (!follow || !g_error_matches(error, RS_ERROR, RS_ERROR_GUEST)) {
            g_printerr("ringside dmesg: %s\n", error->message);
            return 1;
        }
        g_clear_error(&error);
        g_usleep(FOLLOW_POLL_US);
    }
    if (rs_ring_first_seq(&d.ring, &seq) != RS_OK) {
        g_printerr("ringside dmesg: %s: cannot find the oldest record of the "
                   "ring\n", argv[1]);
        return 1;
    }
    if (from_seq >= 0 && (uint64_t)from_seq > seq) {
        seq = from_seq;
    }

    p.json = json;
    p.caller = caller;
    p.out = out;
    for (;;) {
        rs_iter_init(&it, &d.ring, seq, UINT64_MAX, 2 * d.ring.count + 64, 0);
        if (!drain(&p, &it, text)) {
            seq = it.seq;
            continue;
        }
        seq = it.seq;
        if (!follow) {
            break;
        }
        g_usleep(FOLLOW_POLL_US);
        rs_discovery_refresh(&d);
    }
    if (p.bad) {
        g_printerr("ringside dmesg: %" G_GUINT64_FORMAT " records could not "
                   "be read\n", p.bad);
        return 1;
    }
    return 0;
}
