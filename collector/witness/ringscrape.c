/* The guest's printk ring, scraped from live shared RAM by polling. */
#include "witness/ringscrape.h"
#include "witness/discover.h"

/* The newest records kept; older ones are dropped in halves. */
#define KEEP_RECORDS    65536
/* printk_info.text_len is 16 bits: no record holds more. */
#define TEXT_MAX        65536

struct RsRingScrape {
    RsGuestMem *mem;
    RsDiscovery d;
    gboolean found;
    uint64_t next_seq;
    GPtrArray *records;         /* RsScrapedRecord *, by seq */
    guint64 total, lost;
    char *text;
};

static void record_free(gpointer p)
{
    RsScrapedRecord *r = p;

    g_free(r->text);
    g_free(r);
}

RsRingScrape *rs_ring_scrape_open(const char *ram_path, GError **error)
{
    RsGuestMem *mem = rs_guestmem_open_ram(ram_path, error);
    RsRingScrape *s;

    if (!mem) {
        return NULL;
    }
    s = g_new0(RsRingScrape, 1);
    s->mem = mem;
    s->records = g_ptr_array_new_with_free_func(record_free);
    s->text = g_malloc(TEXT_MAX);
    return s;
}

void rs_ring_scrape_free(RsRingScrape *s)
{
    if (!s) {
        return;
    }
    rs_guestmem_free(s->mem);
    g_ptr_array_unref(s->records);
    g_free(s->text);
    g_free(s);
}

static gboolean find(RsRingScrape *s)
{
    g_autoptr(GError) error = NULL;

    if (!rs_discover(s->mem, &s->d, &error) ||
        rs_ring_first_seq(&s->d.ring, &s->next_seq) != RS_OK) {
        return FALSE;           /* not published yet: try next poll */
    }
    s->found = TRUE;
    return TRUE;
}

guint rs_ring_scrape_poll(RsRingScrape *s)
{
    guint before = s->records->len;
    rs_record rec;
    rs_iter it;
    gboolean more = TRUE;

    if (!s->found && !find(s)) {
        return 0;
    }
    rs_discovery_refresh(&s->d);
    while (more) {
        /* A bounded walk: a hostile ring cannot keep us here. */
        rs_iter_init(&it, &s->d.ring, s->next_seq, UINT64_MAX,
                     2 * s->d.ring.count + 64, 0);
        for (;;) {
            rs_iter_ev ev = rs_iter_next(&it, &rec, s->text, TEXT_MAX);

            if (ev == RS_IT_RECORD) {
                RsScrapedRecord *r = g_new(RsScrapedRecord, 1);

                r->seq = rec.seq;
                r->level = rec.level;
                r->text = g_strndup(rec.text, rec.text_copied);
                g_ptr_array_add(s->records, r);
                s->total++;
            } else if (ev == RS_IT_GAP) {
                s->lost += it.gap_count;
            } else if (ev == RS_IT_END || ev == RS_IT_LIMIT) {
                more = ev == RS_IT_LIMIT && it.seq != s->next_seq;
                break;
            }
        }
        s->next_seq = it.seq;
    }
    if (s->records->len > 2 * KEEP_RECORDS) {
        g_ptr_array_remove_range(s->records, 0,
                                 s->records->len - KEEP_RECORDS);
        before = MIN(before, s->records->len);
    }
    return s->records->len - before;
}

gboolean rs_ring_scrape_found(const RsRingScrape *s)
{
    return s->found;
}

guint64 rs_ring_scrape_total(const RsRingScrape *s)
{
    return s->total;
}

guint64 rs_ring_scrape_lost(const RsRingScrape *s)
{
    return s->lost;
}

GPtrArray *rs_ring_scrape_records(RsRingScrape *s)
{
    return s->records;
}

const RsScrapedRecord *rs_ring_scrape_get(RsRingScrape *s, uint64_t seq)
{
    guint lo = 0, hi = s->records->len;

    while (lo < hi) {
        guint mid = lo + (hi - lo) / 2;
        const RsScrapedRecord *r = s->records->pdata[mid];

        if (r->seq == seq) {
            return r;
        }
        if (r->seq < seq) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}
