/*
 * How a guest run ended, and its failure class: what ringside run prints
 * and what ringside fuzz sorts its cases by.
 */
#ifndef RINGSIDE_OUTCOME_H
#define RINGSIDE_OUTCOME_H

#include "events/transcript.h"
#include "guest/guest.h"
#include "report/verdicts.h"

typedef enum {
    RS_END_PANIC,
    RS_END_POWEROFF,
    RS_END_REBOOT,
    RS_END_TIMEOUT,
    RS_END_QEMU_ERROR,
    RS_END_UNKNOWN,
    RS_N_ENDS,
} RsGuestEnd;

extern const char *const rs_end_names[RS_N_ENDS];

/* From QEMU's exit and the kernel's last words on the wire. */
RsGuestEnd rs_guest_end(const RsGuestResult *res, const RsTranscript *t);

/* Worst first: a run gets the first class that applies. */
typedef enum {
    RS_CLASS_ERROR,         /* QEMU failed, or the event stream lost records */
    RS_CLASS_HUNG,          /* the guest never stopped */
    RS_CLASS_NO_PANIC,      /* it stopped, but not in a panic */
    RS_CLASS_LOST,          /* a record (or the panic line) never got out */
    RS_CLASS_TORN,          /* records interleaved, or cut short */
    RS_CLASS_CORRUPT,       /* bytes changed, or lines no record explains */
    RS_CLASS_DUPLICATED,    /* a record printed twice, or out of order */
    RS_CLASS_CLEAN,
    RS_N_CLASSES,
} RsClass;

extern const char *const rs_class_names[RS_N_CLASSES];
int rs_class_from_name(const char *name);      /* -1 if unknown */

/* ok-line wire latency, log2 buckets: [2^k, 2^(k+1)) microseconds. */
#define RS_LAT_BUCKETS 24

typedef struct {
    RsGuestEnd end;
    RsClass klass;
    gboolean panic_line;    /* "Kernel panic - not syncing" reached the wire */
    guint64 wire_bytes, lines;
    guint64 lost, torn, corrupt, duplicated, dropped;
    RsVerdictReport v;
    RsL1Report l1;
    guint64 lat_hist[RS_LAT_BUCKETS];
    char osrelease[65];
    gboolean faithful;      /* see rs_run_faithful() */
    char unfaithful_why[64];
} RsOutcome;

/*
 * Whether the run's timing is one real hardware could have: not if the
 * guest has more vCPUs than the host has cores, nor if its vCPU threads
 * waited for a host core more than RS_VCPU_WAIT_MAX_PCT of their running
 * time.  Otherwise what depends on timing (how long a flush took, whether
 * a line got out before a timeout, overruns) is the host's doing.  @why
 * gets the reasons, without spaces ("smp:4>cores:2,vcpu-wait:48%").
 */
#define RS_VCPU_WAIT_MAX_PCT 20
gboolean rs_run_faithful(const RsGuestResult *res, char *why, gsize len);

/*
 * Judge a run that expected to end in @expect from its event stream.  Fails
 * only if there is no event stream to judge (QEMU did not start); a run
 * that went wrong gets its class.
 */
gboolean rs_outcome_judge(const RsGuestResult *res, RsGuestEnd expect,
                          RsOutcome *o, GError **error);

/* The run as one JSON object's members: "class":...,"ended":...,... */
void rs_outcome_json(GString *out, const RsOutcome *o);

#endif
