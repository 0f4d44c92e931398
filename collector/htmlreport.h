/*
 * ringside report --html: the output directories of ringside fuzz (shards,
 * machines, kernels) merged into a plain-text table and one self-contained
 * HTML page: cases per kernel and failure class, latency histograms, the
 * failing cases and the timeline of one run.
 */
#ifndef RINGSIDE_HTMLREPORT_H
#define RINGSIDE_HTMLREPORT_H

#include <glib.h>
#include <stdio.h>

typedef struct RsHtmlReport RsHtmlReport;

RsHtmlReport *rs_html_report_new(void);
void rs_html_report_free(RsHtmlReport *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(RsHtmlReport, rs_html_report_free)

/*
 * Merge a fuzz output directory: its results.jsonl (a case already merged,
 * same kernel, seed, index and mode, is skipped) and fuzz.json if there is
 * one.  Fails on a missing results.jsonl and on any malformed line.
 */
gboolean rs_html_report_add_dir(RsHtmlReport *r, const char *dir,
                                GError **error);

/* Cases per kernel, mode and class. */
void rs_html_report_print(const RsHtmlReport *r, FILE *f);

/*
 * Write the page to @path.  Its timeline is of the run directory
 * @timeline, or if NULL of the first failing case whose run was kept
 * (else of any kept run).
 */
gboolean rs_html_report_write(RsHtmlReport *r, const char *path,
                              const char *timeline, GError **error);

#endif
