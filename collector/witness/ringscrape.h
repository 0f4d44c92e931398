/*
 * The guest's printk ring read from its live shared RAM file, a poll at a
 * time, keeping the newest records' text: the second witness next to the
 * console, for a follower that has no dump to read afterwards.
 */
#ifndef RINGSIDE_RINGSCRAPE_H
#define RINGSIDE_RINGSCRAPE_H

#include <glib.h>
#include <stdint.h>

typedef struct {
    uint64_t seq;
    uint8_t level;
    char *text;         /* NUL-terminated; may hold newlines */
} RsScrapedRecord;

typedef struct RsRingScrape RsRingScrape;

/* Map @ram_path (a memory-backend-file shared with QEMU). */
RsRingScrape *rs_ring_scrape_open(const char *ram_path, GError **error);
void rs_ring_scrape_free(RsRingScrape *s);

/*
 * Read what the guest logged since the last poll; finds the ring first if
 * the kernel has not published it yet.  Returns how many records are new.
 */
guint rs_ring_scrape_poll(RsRingScrape *s);

gboolean rs_ring_scrape_found(const RsRingScrape *s);
/* Records read in all, and lost (overwritten before a poll read them). */
guint64 rs_ring_scrape_total(const RsRingScrape *s);
guint64 rs_ring_scrape_lost(const RsRingScrape *s);

/* The kept records, oldest first (RsScrapedRecord *). */
GPtrArray *rs_ring_scrape_records(RsRingScrape *s);
/* Record @seq if still kept, else NULL. */
const RsScrapedRecord *rs_ring_scrape_get(RsRingScrape *s, uint64_t seq);

#endif
