/*
 * ringside report --html: merged ringside fuzz results as one
 * self-contained HTML page: cases per kernel and failure class, latency
 * histograms, the failing cases and the timeline of one run.
 */
#ifndef RINGSIDE_HTMLREPORT_H
#define RINGSIDE_HTMLREPORT_H

#include "report/fuzzresults.h"

/*
 * Write the page to @path; @r's cases are sorted, worst first.  Its
 * timeline is of the run directory @timeline, or if NULL of the first
 * failing case whose run was kept (else of any kept run).
 */
gboolean rs_html_report_write(RsFuzzResults *r, const char *path,
                              const char *timeline, GError **error);

#endif
