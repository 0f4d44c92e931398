/*
 * The device's event records kept on disk, bounded: PATH grows to a size
 * cap, then becomes PATH.1 (PATH.1 becomes PATH.2, ... up to PATH.KEEP,
 * the oldest dropped), while the guest runs.  Each new PATH begins with a
 * "rotated" record (evledger.h) carrying the run's "start", so that each
 * file reads on its own and the line accounting goes on across files.
 */
#ifndef RINGSIDE_EVROTATE_H
#define RINGSIDE_EVROTATE_H

#include "events/evledger.h"

#include <glib.h>

typedef struct RsRotator RsRotator;

/*
 * Append to @path (a record cut off at its end by a collector that was
 * killed is cut away), rotating at @max_size bytes and keeping @keep
 * rotated files.  @ledger, if not NULL, is primed with what @path already
 * accounts for, so that a restarted collector counts what it missed.
 */
RsRotator *rs_rotator_open(const char *path, goffset max_size, guint keep,
                           RsLedger *ledger, GError **error);

/*
 * Append record @rec (@len bytes, no newline), rotating first if it would
 * pass the cap; @ledger is the run as accounted before @rec.
 */
gboolean rs_rotator_write(RsRotator *r, const char *rec, gsize len,
                          const RsLedger *ledger, GError **error);
/* Write out what is buffered. */
gboolean rs_rotator_flush(RsRotator *r, GError **error);
guint rs_rotator_rotations(RsRotator *r);
const char *rs_rotator_path(RsRotator *r);
void rs_rotator_free(RsRotator *r);

#endif
