/*
 * Where a drop-in QEMU run leaves its record: a directory per run under
 * the operator's output directory (the device's events, the command line,
 * and after QEMU has gone the verdicts), one summary line per run in
 * OUT/runs.jsonl, and only the newest runs kept.
 */
#ifndef RINGSIDE_RUNLOG_H
#define RINGSIDE_RUNLOG_H

#include <glib.h>

typedef struct {
    char *out;          /* the operator's directory */
    char *dir;          /* OUT/run-YYYYMMDD-HHMMSS-PID */
    char *events;       /* DIR/events.jsonl */
    guint keep;         /* run directories kept, newest first (0: all) */
    gint64 started_us;  /* wall clock */
} RsRunLog;

/* Make OUT and a new run directory in it. */
gboolean rs_run_log_open(RsRunLog *log, const char *out, guint keep,
                         GError **error);
/* Keep QEMU's whole command line (NULL-terminated) in the run's directory. */
gboolean rs_run_log_write_command(const RsRunLog *log,
                                  const char *const *qemu_argv,
                                  GError **error);
void rs_run_log_clear(RsRunLog *log);

/*
 * Judge the run from its events, write DIR/report.json and a line to
 * OUT/runs.jsonl (@console: how the console was given, @pid: QEMU's),
 * then remove the oldest run directories beyond log->keep.
 */
gboolean rs_run_log_finish(const RsRunLog *log, const char *console,
                           int pid, GError **error);

/*
 * Leave a process behind that waits for this one (which goes on to exec
 * QEMU) to end, then runs rs_run_log_finish().  It holds none of this
 * process's descriptors: whoever reads QEMU's stdout sees it end when
 * QEMU does.
 */
gboolean rs_run_log_watch(const RsRunLog *log, const char *console,
                          GError **error);

#endif
