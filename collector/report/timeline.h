/*
 * The timeline of one run, for the HTML report: a run directory's event
 * stream laid out on guest virtual time, each console line in the lane of
 * its vCPU under the ring records it carried, drawn as inline SVG.
 */
#ifndef RINGSIDE_TIMELINE_H
#define RINGSIDE_TIMELINE_H

#include <glib.h>

typedef struct RsTimeline RsTimeline;

/*
 * Read @rundir/events.jsonl and lay its lines out, with at least @smp vCPU
 * lanes.  Fails if there is no event stream or it is empty or malformed.
 */
RsTimeline *rs_timeline_load(const char *rundir, guint smp, GError **error);
void rs_timeline_free(RsTimeline *tl);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsTimeline, rs_timeline_free)

/* Its lines per verdict and its time span: <dt>/<dd> pairs for a <dl>. */
void rs_timeline_facts_html(GString *o, const RsTimeline *tl);

/*
 * The legend, the SVG, the records that never reached the wire and a note
 * on how to read it all.
 */
void rs_timeline_html(GString *o, const RsTimeline *tl);

#endif
