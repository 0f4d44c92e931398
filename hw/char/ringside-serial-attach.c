/*
 * ringside-serial: find the guest kernel's printk ring (level 0).
 *
 * Until a ring is found the device only records bytes.  A timer on the
 * virtual clock looks for the kernel's VMCOREINFO note: first where QEMU's
 * vmcoreinfo device says the guest put it (needs the guest's fw_cfg
 * driver), else by scanning guest RAM page starts, a bounded number of
 * pages per tick.  The note is parsed and the ring opened with the shared
 * decoder (rslib-ring.c); a "ring" event reports the outcome, and the
 * console checker (ringside-serial-verify.c) starts judging against it.
 * A reset (reboot, kexec through reset) forgets the ring and starts again;
 * so does a kexec without reset, noticed when the ring stops making sense
 * and the note we attached with has changed.
 *
 * Everything here reads guest-controlled memory: only RAM is read (never
 * MMIO or RAM-device memory, whose reads reach a device), every read is
 * bounded by the decoder and charged to the read budget of the guest
 * action or timer tick it serves, and the work per tick is fixed.
 *
 * The budget and the cost meter live here, with the reader they govern:
 * each register access and each timer tick of the device's sets a budget
 * of guest-memory reads; once spent, reads fail fast and the work is put
 * off (the note scan resumes where it stopped, a ring not opened is tried
 * again next tick) or judged "under budget" by the checkers, never held
 * against the guest.
 *
 * Copyright (c) 2026 The ringside authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <sys/mman.h>
#include "qemu/log.h"
#include "qemu/timer.h"
#include "qemu/units.h"
#include "exec/address-spaces.h"
#include "exec/memory.h"
#include "hw/boards.h"
#include "hw/misc/vmcoreinfo.h"
#include "ringside-serial.h"
#include "trace.h"

#define RING_PROBE_NS   (100 * SCALE_MS)
/* How often an attached note is checked for a new kernel's. */
#define RING_CHECK_NS   (1000 * SCALE_MS)
/*
 * Work per tick: at most 8192 page headers read, in at most 64 pieces of
 * 32 MiB (pages the host never backed cost nothing but a mincore() bit).
 */
#define RING_SCAN_BYTES (32 * MiB)
#define RING_SCAN_PIECES 64
#define RING_SCAN_READS 8192
/* Guest errors: one line per cause in this long (host time). */
#define GLOG_INTERVAL_NS (10 * NANOSECONDS_PER_SECOND)

const char *const ringside_ring_state_names[] = {
    [RS_RING_NONE] = "none",
    [RS_RING_ATTACHED] = "attached",
    [RS_RING_UNTRUSTED] = "untrusted",
};

/* ---- the read budget and the cost meter ---- */

static const char *const cost_kind_names[RS_COST_KINDS] = {
    [RS_COST_ACCESS] = "access",
    [RS_COST_TICK] = "tick",
};

/* CPU time of this thread: the host time the work took, not preemption */
static int64_t attach_thread_cpu_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * NANOSECONDS_PER_SECOND + ts.tv_nsec;
}

/* Accesses metered from their start: one in this many. */
#define COST_CPU_SAMPLE 1024
/* Reads after which an access's time is taken from the thread's CPU clock */
#define COST_CPU_AFTER_READS 16

/*
 * The thread's CPU clock is a system call: read at every access it made
 * ringside-serial twice as slow as QEMU's 16550 on a console flood, and
 * read at every line's matching it still cost a flood 3%.  A paced line
 * has a timer tick per character, and metering each from its start took
 * a third of the device's main-loop time on a host whose clocks are
 * system calls.  So an action (access or tick) is metered from its start
 * one time in COST_CPU_SAMPLE.
 * Any other is metered from its first guest-memory read, the work
 * the read budget governs: by the wall clock (a vDSO call) while it has
 * made fewer than COST_CPU_AFTER_READS reads, a microsecond or two in which
 * preemption is rare (a console line's two metered accesses make 7 and 8),
 * and by the CPU clock from then on, so that the long ones are not charged
 * for time the host gave to others.
 */
static void cost_clocks_start(RingsideSerialState *s)
{
    s->cost_start = get_clock();
    s->cost_start_cpu = attach_thread_cpu_ns();
    s->cost_wall_ns = 0;
}

static void cost_read(RingsideSerialState *s)
{
    if (!s->cost_depth || s->cost_start_cpu >= 0) {
        return;
    }
    if (s->cost_start < 0) {
        s->cost_start = get_clock();
    } else if (s->budget.spent_reads >= COST_CPU_AFTER_READS) {
        s->cost_wall_ns = get_clock() - s->cost_start;
        s->cost_start_cpu = attach_thread_cpu_ns();
    }
}

/*
 * pace=line: the reads the line's virtual time has earned, at
 * line_read_rate a second, saved up to one tick's budget.  Kept in
 * billionths of a read so that no fraction is lost between actions
 * (at most 2^32 reads a tick and a rate below 2^32: it fits in 64 bits).
 */
static uint64_t cost_rate_allowance(RingsideSerialState *s)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    int64_t dt = now - s->rate_vt;
    uint64_t cap = (uint64_t)s->tick_reads * NANOSECONDS_PER_SECOND;

    if (dt >= NANOSECONDS_PER_SECOND || dt < 0) {
        /* a second earns more than a tick holds; a clock reset starts over */
        s->rate_credit = cap;
    } else {
        s->rate_credit = MIN(s->rate_credit +
                             (uint64_t)dt * s->line_read_rate, cap);
    }
    s->rate_vt = now;
    return s->rate_credit / NANOSECONDS_PER_SECOND;
}

void ringside_cost_begin(RingsideSerialState *s, int kind)
{
    uint64_t reads;

    if (s->cost_depth++) {
        return;
    }
    reads = kind == RS_COST_ACCESS ? s->access_reads : s->tick_reads;
    s->rate_cut = false;
    if (s->pace) {
        uint64_t allowed = cost_rate_allowance(s);

        if (allowed < reads) {
            reads = allowed;
            s->rate_cut = true;
        }
    }
    s->cost_kind = kind;
    rs_budget_set(&s->budget, reads, reads * RS_BUDGET_BYTES_PER_READ);
    s->cost_start = s->cost_start_cpu = -1;
    if (++s->cost_sample % COST_CPU_SAMPLE == 0) {
        cost_clocks_start(s);
    }
}

void ringside_cost_end(RingsideSerialState *s)
{
    int k = s->cost_kind;
    uint64_t ns = 0, cpu_ns;

    assert(s->cost_depth > 0);
    if (--s->cost_depth) {
        return;
    }
    if (s->cost_start >= 0) {
        ns = get_clock() - s->cost_start;
        cpu_ns = s->cost_start_cpu < 0 ? ns :
                 s->cost_wall_ns + attach_thread_cpu_ns() - s->cost_start_cpu;
        s->cost_max_ns[k] = MAX(s->cost_max_ns[k], ns);
        s->cost_max_cpu_ns[k] = MAX(s->cost_max_cpu_ns[k], cpu_ns);
        s->cost_sum_cpu_ns[k] += cpu_ns;
    }
    s->cost_max_reads[k] = MAX(s->cost_max_reads[k], s->budget.spent_reads);
    s->cost_sum_reads[k] += s->budget.spent_reads;
    if (s->pace) {
        s->rate_credit -= MIN(s->rate_credit, s->budget.spent_reads *
                              NANOSECONDS_PER_SECOND);
    }
    if (s->budget.out) {
        s->budget_out[k]++;
        s->rate_limited += s->rate_cut;
    }
    trace_ringside_serial_cost(cost_kind_names[k], ns,
                               s->budget.spent_reads, s->budget.spent_bytes,
                               s->budget.out);
    /* between actions (realize, QMP): not metered */
    rs_budget_set(&s->budget, UINT64_MAX, UINT64_MAX);
}

void ringside_cost_add_props(Object *obj)
{
    RingsideSerialState *s = RINGSIDE_SERIAL(obj);
    int k;

    rs_budget_set(&s->budget, UINT64_MAX, UINT64_MAX);
    for (k = 0; k < RS_COST_KINDS; k++) {
        g_autofree char *ns = g_strdup_printf("cost-max-%s-ns",
                                              cost_kind_names[k]);
        g_autofree char *rd = g_strdup_printf("cost-max-%s-reads",
                                              cost_kind_names[k]);
        g_autofree char *cpu = g_strdup_printf("cost-max-%s-cpu-ns",
                                               cost_kind_names[k]);
        g_autofree char *out = g_strdup_printf("budget-out-%s",
                                               cost_kind_names[k]);
        g_autofree char *sum_cpu = g_strdup_printf("cost-sum-%s-cpu-ns",
                                                   cost_kind_names[k]);
        g_autofree char *sum_rd = g_strdup_printf("cost-sum-%s-reads",
                                                  cost_kind_names[k]);

        object_property_add_uint64_ptr(obj, ns, &s->cost_max_ns[k],
                                       OBJ_PROP_FLAG_READ);
        object_property_add_uint64_ptr(obj, rd, &s->cost_max_reads[k],
                                       OBJ_PROP_FLAG_READ);
        object_property_add_uint64_ptr(obj, cpu, &s->cost_max_cpu_ns[k],
                                       OBJ_PROP_FLAG_READ);
        object_property_add_uint64_ptr(obj, out, &s->budget_out[k],
                                       OBJ_PROP_FLAG_READ);
        object_property_add_uint64_ptr(obj, sum_cpu, &s->cost_sum_cpu_ns[k],
                                       OBJ_PROP_FLAG_READ);
        object_property_add_uint64_ptr(obj, sum_rd, &s->cost_sum_reads[k],
                                       OBJ_PROP_FLAG_READ);
    }
    object_property_add_uint64_ptr(obj, "rate-limited", &s->rate_limited,
                                   OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "scan-deferred", &s->scan_deferred,
                                   OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "guest-errors", &s->guest_errors,
                                   OBJ_PROP_FLAG_READ);
    object_property_add_uint64_ptr(obj, "guest-errors-logged",
                                   &s->guest_errors_logged,
                                   OBJ_PROP_FLAG_READ);
}

/*
 * Log a guest error with -d guest_errors: at most one line per cause
 * (a static string) every GLOG_INTERVAL_NS, saying how many were held
 * back since.  Causes beyond the table share its last slot.  Reset does
 * not clear it: a guest that reboots in a loop is held to it too.
 */
void ringside_guest_error(RingsideSerialState *s, const char *cause,
                          const char *fmt, ...)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_REALTIME);
    g_autofree char *msg = NULL;
    size_t i, last = ARRAY_SIZE(s->glog) - 1;
    va_list ap;

    s->guest_errors++;
    for (i = 0; i < last; i++) {
        if (s->glog[i].cause == cause || !s->glog[i].cause) {
            break;
        }
    }
    if (!s->glog[i].cause) {
        s->glog[i].cause = cause;
    } else if (s->glog[i].last && now - s->glog[i].last < GLOG_INTERVAL_NS) {
        s->glog[i].held++;
        return;
    }
    if (!qemu_loglevel_mask(LOG_GUEST_ERROR)) {
        return;
    }
    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    if (s->glog[i].held) {
        qemu_log("ringside-serial: %s (%" PRIu64 " more %s since, not "
                 "logged)\n", msg, s->glog[i].held,
                 i == last ? "guest errors" : "like it");
    } else {
        qemu_log("ringside-serial: %s\n", msg);
    }
    s->glog[i].last = now;
    s->glog[i].held = 0;
    s->guest_errors_logged++;
}

/* ---- reading guest memory ---- */

/*
 * Is mr memory we may read on the guest's say-so?  RAM, but not a RAM
 * device (a VFIO BAR, a vhost-user notifier: memory_region_is_ram() is
 * true for those, and reading them reaches the device).
 */
static bool attach_readable(MemoryRegion *mr)
{
    return memory_region_is_ram(mr) && !memory_region_is_ram_device(mr);
}

/*
 * The decoder's read callback, charged to the current budget.  Guest RAM
 * only: a guest that points its ring at a device must not make us
 * trigger that device's reads.
 */
static int attach_read(void *opaque, uint64_t gpa, void *buf, size_t len)
{
    RingsideSerialState *s = opaque;
    MemoryRegion *mr;
    hwaddr xlat, l = len;

    if (len == 0 || gpa + len < gpa || !rs_budget_take(&s->budget, len)) {
        return -1;
    }
    cost_read(s);
    /* one lookup, then RAM straight: a line's matching makes some 15 */
    RCU_READ_LOCK_GUARD();
    mr = address_space_translate(&address_space_memory, gpa, &xlat, &l,
                                 false, MEMTXATTRS_UNSPECIFIED);
    if (l < len || !attach_readable(mr)) {
        return -1;
    }
    memcpy(buf, qemu_map_ram_ptr(mr->ram_block, xlat), len);
    return 0;
}

/* The decoders reach guest memory through attach_read and s's budget. */
static void attach_vm_init(RingsideSerialState *s, rs_vm *vm,
                           const rs_vmci *vi)
{
    rs_vm_init(vm, vi, attach_read, s);
    vm->budget = &s->budget;
}

/*
 * Level 1 follows the state level 0 gives the ring: with a ring level 0
 * distrusts it judges nothing, and otherwise it has no ring until
 * attach_from_text() gives it one that level 0 has opened and still
 * trusts once the lines from before it are judged.
 */
static void attach_l1_follow(RingsideSerialState *s)
{
    if (s->ring_state == RS_RING_UNTRUSTED) {
        ringside_ext_untrusted(s);
    } else {
        ringside_ext_ring(s, NULL, false);
    }
}

static void attach_set_state(RingsideSerialState *s, int state)
{
    s->ring_state = state;
    trace_ringside_serial_ring(ringside_ring_state_names[state]);
    attach_l1_follow(s);
}

/* Log a cause of distrust, rate-limited per cause. */
static void attach_log_cause(RingsideSerialState *s, const char *cause,
                             const char *detail)
{
    ringside_guest_error(s, cause, "guest printk ring untrusted: %s%s%s",
                         cause, detail ? ": " : "", detail ? detail : "");
}

/* JSON takes the decoder's reasons as they are: keep it that way. */
static const char *attach_json_safe(char *why)
{
    g_strcanon(why, G_CSET_A_2_Z G_CSET_a_2_z G_CSET_DIGITS
               " ._+-~()<>=,:/'", '?');
    return why;
}

/*
 * Parse a note's text and open the ring it names.  resumed: the checker's
 * position came with the migrated state, keep it.
 */
static void attach_from_text(RingsideSerialState *s, const char *text,
                             size_t len, const char *via, uint64_t note_gpa,
                             bool resumed)
{
    char why[160];
    rs_vm vm;
    uint64_t next = 0;
    int rc;

    rc = rs_vmci_parse(text, len, &s->vmci, why, sizeof(why));
    if (rc == RS_OK) {
        attach_vm_init(s, &vm, &s->vmci);
        rc = rs_ring_open(&s->ring, &s->vmci, &vm, why, sizeof(why));
    }
    if (rc != RS_OK && rs_budget_out(&s->budget)) {
        /* not the note's fault: the next tick tries again */
        timer_mod_anticipate(s->ring_timer,
                             qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                             RING_PROBE_NS);
        return;
    }
    s->note_gpa = note_gpa;
    if (rc != RS_OK) {
        attach_set_state(s, RS_RING_UNTRUSTED);
        attach_log_cause(s, "VMCOREINFO note does not describe a ring", why);
        ringside_event(s, RS_EV_RING, ",\"state\":"
                       "\"untrusted\",\"via\":\"%s\",\"note\":%"
                       PRIu64 ",\"why\":\"%.100s\"", via, note_gpa,
                       attach_json_safe(why));
        return;
    }
    memcpy(s->note_text, text, len);
    s->note_len = len;
    rs_ring_next_seq(&s->ring, &next);
    attach_set_state(s, RS_RING_ATTACHED);
    /* The guest wrote osrelease: keep it to characters JSON takes as is. */
    g_strcanon(s->vmci.osrelease, G_CSET_A_2_Z G_CSET_a_2_z G_CSET_DIGITS
               "._+-~", '?');
    ringside_event(s, RS_EV_RING, ",\"state\":"
                   "\"attached\",\"via\":\"%s\",\"note\":%" PRIu64
                   ",\"osrelease\":\"%s\",\"descs\":%" PRIu64
                   ",\"data_bytes\":%" PRIu64 ",\"next_seq\":%"
                   PRIu64, via,
                   note_gpa, s->vmci.osrelease, s->ring.count,
                   s->ring.data_size, next);
    ringside_verify_attached(s, resumed);
    /*
     * Level 0's replay of the lines from before the ring may have found
     * it breaking its rules (now untrusted) or found a new kernel's note
     * (looking again): level 1 judges only against a ring level 0 trusts.
     */
    if (s->ring_state == RS_RING_ATTACHED && s->match.ring == &s->ring) {
        ringside_ext_ring(s, &s->ring, resumed);
    }
}

/*
 * When the probe timer runs next: every RING_PROBE_NS while looking for a
 * ring or replaying the lines from before it, else every RING_CHECK_NS.
 */
static int64_t attach_next_ns(RingsideSerialState *s)
{
    return s->ring_state == RS_RING_ATTACHED &&
           !rs_match_replay_pending(&s->match) ? RING_CHECK_NS
                                               : RING_PROBE_NS;
}

/* Read the note at gpa (at most size bytes); its text goes to text. */
static bool attach_read_note(RingsideSerialState *s, uint64_t gpa,
                             uint32_t size, char *text, size_t *len)
{
    uint8_t note[RS_NOTE_HDR_SIZE + RS_VMCI_TEXT_MAX];
    const char *found;

    size = MIN(size, sizeof(note));
    if (size < RS_NOTE_HDR_SIZE || attach_read(s, gpa, note, size) != 0) {
        return false;
    }
    found = rs_note_find(note, size, len, NULL);
    if (!found) {
        return false;
    }
    memcpy(text, found, *len);
    return true;
}

/*
 * Is the note we attached with still there, word for word?  With the
 * budget spent we cannot tell, and say yes: the next tick looks again.
 */
bool ringside_attach_note_unchanged(RingsideSerialState *s)
{
    g_autofree char *text = g_malloc(RS_VMCI_TEXT_MAX);
    size_t len = 0;

    if (!attach_read_note(s, s->note_gpa, RS_NOTE_HDR_SIZE + s->note_len,
                          text, &len)) {
        return rs_budget_out(&s->budget);
    }
    return len == s->note_len && !memcmp(text, s->note_text, len);
}

/* Forget the ring and look for one again (a new kernel, a reset). */
void ringside_attach_restart(RingsideSerialState *s, const char *why)
{
    attach_set_state(s, RS_RING_NONE);
    s->scan_gpa = 0;
    ringside_event(s, RS_EV_RING, ",\"state\":"
                   "\"none\",\"why\":\"%s\"", why);
    timer_mod(s->ring_timer,
              qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + RING_PROBE_NS);
}

/* The ring broke a rule while being read: judge nothing more against it. */
void ringside_attach_untrusted(RingsideSerialState *s, const char *why)
{
    char buf[128];

    attach_set_state(s, RS_RING_UNTRUSTED);
    attach_log_cause(s, why, NULL);
    g_strlcpy(buf, why, sizeof(buf));
    ringside_event(s, RS_EV_RING, ",\"state\":"
                   "\"untrusted\",\"note\":%" PRIu64
                   ",\"why\":\"%s\"",
                   s->note_gpa, attach_json_safe(buf));
}

static void attach_post_load(RingsideSerialState *s);

/*
 * After loadvm/migration guest RAM is the saved one: open the ring the
 * saved state was attached to, else resume the search.
 */
void ringside_attach_post_load(RingsideSerialState *s)
{
    ringside_cost_begin(s, RS_COST_TICK);
    attach_post_load(s);
    ringside_cost_end(s);
}

static void attach_post_load(RingsideSerialState *s)
{
    g_autofree char *text = g_malloc(RS_VMCI_TEXT_MAX);
    size_t len = 0;

    /*
     * The loaded ring state stands for level 1 too: a ring distrusted when
     * the state was saved is not judged against after it is loaded (nor
     * the ring this device had attached before a loadvm), and a ring is
     * given back only once it is open again.
     */
    attach_l1_follow(s);
    if (s->ring_state == RS_RING_ATTACHED &&
        attach_read_note(s, s->note_gpa,
                         RS_NOTE_HDR_SIZE + RS_VMCI_TEXT_MAX, text, &len)) {
        attach_from_text(s, text, len, "loadvm", s->note_gpa, true);
        if (s->ring_state == RS_RING_ATTACHED) {
            timer_mod(s->ring_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                      RING_CHECK_NS);
            return;
        }
    }
    if (s->ring_state != RS_RING_UNTRUSTED) {
        rs_match_detach(&s->match);
        ringside_attach_restart(s, "loadvm");
    }
}

/* Where QEMU's vmcoreinfo device says the guest's note is, if anywhere. */
static bool attach_try_fw_cfg(RingsideSerialState *s, char *text,
                              size_t *len, uint64_t *note_gpa)
{
    VMCoreInfoState *vmci = vmcoreinfo_find();

    if (!vmci || !vmci->has_vmcoreinfo) {
        return false;
    }
    *note_gpa = le64_to_cpu(vmci->vmcoreinfo.paddr);
    return attach_read_note(s, *note_gpa,
                            le32_to_cpu(vmci->vmcoreinfo.size), text, len);
}

/*
 * Guest RAM as the note scan sees it: [0, ram_size), and for guests above
 * 2 GiB also [4 GiB, 4 GiB + ram_size), where PC machines put the RAM that
 * does not fit below the PCI hole.  What is not RAM there reads as absent.
 */
static uint64_t attach_scan_top(void)
{
    uint64_t ram = current_machine->ram_size;

    return ram > 2 * GiB ? 4 * GiB + ram : ram;
}

/* What the note scan reads: one RAM section through its host pointer. */
typedef struct ScanRam {
    RingsideSerialState *s;
    uint64_t gpa, len;
    const uint8_t *host;
} ScanRam;

enum { SCAN_NONE, SCAN_FOUND, SCAN_STOPPED };

/*
 * The scan's reader: page headers by the thousand, so straight from the
 * section's host memory rather than an address-space lookup each; a note
 * that runs past the section is read the careful way.  Charged to the
 * budget all the same.
 */
static int scan_read(void *opaque, uint64_t gpa, void *buf, size_t len)
{
    ScanRam *r = opaque;

    if (gpa < r->gpa || gpa - r->gpa > r->len ||
        len > r->len - (gpa - r->gpa)) {
        return attach_read(r->s, gpa, buf, len);
    }
    if (!rs_budget_take(&r->s->budget, len)) {
        return -1;
    }
    cost_read(r->s);
    memcpy(buf, r->host + (gpa - r->gpa), len);
    return 0;
}

/*
 * Scan [gpa, gpa + len) of one RAM region, host pointer host, page starts
 * only, and only pages the host has backed: a page the guest never wrote
 * holds no note, and reading it would make the host allocate and zero it
 * (with memory-backend-file, fill the whole file).  mincore() says which.
 * SCAN_STOPPED: the budget ran out; *resume is where to go on.
 */
static int attach_scan_resident(RingsideSerialState *s, uint64_t gpa,
                                uint64_t len, void *host, char *text,
                                size_t *tlen, uint64_t *note_gpa,
                                uint64_t *reads, uint64_t *resume)
{
    size_t page = qemu_real_host_page_size();
    uintptr_t start = QEMU_ALIGN_DOWN((uintptr_t)host, page);
    uint64_t lead = (uintptr_t)host - start;
    size_t npages = DIV_ROUND_UP(lead + len, page);
    g_autofree unsigned char *vec = g_malloc(npages);
    ScanRam ram = { .s = s, .gpa = gpa, .len = len, .host = host };
    uint8_t work[4096];
    size_t i = 0, j;

    if (mincore((void *)start, lead + len, vec) != 0) {
        memset(vec, 1, npages);     /* cannot tell: read them all */
    }
    while (i < npages) {
        uint64_t from, to;
        int rc = RS_ERR_NOT_FOUND;

        if (!(vec[i] & 1)) {
            i++;
            continue;
        }
        for (j = i; j < npages && (vec[j] & 1); j++) {
        }
        from = MAX((uint64_t)i * page, lead) - lead;
        to = MIN((uint64_t)j * page - lead, len);
        *reads += DIV_ROUND_UP(to - from, 4096);
        if (to > from) {
            rc = rs_note_scan_budget(scan_read, &ram, &s->budget, gpa + from,
                                     to - from, RS_SCAN_PAGE_STARTS, work,
                                     sizeof(work), text, RS_VMCI_TEXT_MAX,
                                     tlen, note_gpa, resume);
        }
        if (rc == RS_OK) {
            return SCAN_FOUND;
        }
        if (rc == RS_ERR_BUDGET) {
            return SCAN_STOPPED;
        }
        i = j;
    }
    return SCAN_NONE;
}

/*
 * Scan the next RING_SCAN_BYTES of guest RAM; wraps around at the end.
 * Stopped by the budget, it goes on from the page it did not read.
 */
static int attach_scan_piece(RingsideSerialState *s, char *text, size_t *len,
                             uint64_t *note_gpa, uint64_t *reads)
{
    uint64_t top = attach_scan_top();
    uint64_t ram = current_machine->ram_size;
    uint64_t n, end, resume = 0;
    int sections, rc = SCAN_NONE;

    if (s->scan_gpa >= ram && s->scan_gpa < 4 * GiB) {
        s->scan_gpa = 4 * GiB;      /* skip the hole below 4 GiB */
    }
    if (s->scan_gpa >= top) {
        s->scan_gpa = 0;
    }
    n = MIN(RING_SCAN_BYTES, (s->scan_gpa < ram ? ram : top) - s->scan_gpa);
    end = s->scan_gpa + n;
    /* region by region: RAM, holes and ROM alternate below 1 MiB */
    for (sections = 0; s->scan_gpa < end && sections < 64 && rc == SCAN_NONE;
         sections++) {
        MemoryRegionSection sec = memory_region_find(get_system_memory(),
                                                     s->scan_gpa,
                                                     end - s->scan_gpa);
        uint64_t at, size;

        if (!sec.mr) {
            break;
        }
        at = sec.offset_within_address_space;
        size = int128_get64(sec.size);
        if (attach_readable(sec.mr) && !memory_region_is_rom(sec.mr) &&
            size) {
            rc = attach_scan_resident(s, at, size,
                                      (uint8_t *)memory_region_get_ram_ptr(
                                          sec.mr) + sec.offset_within_region,
                                      text, len, note_gpa, reads, &resume);
        }
        memory_region_unref(sec.mr);
        s->scan_gpa = rc == SCAN_STOPPED ? resume : at + MAX(size, 1);
    }
    if (rc != SCAN_STOPPED) {
        s->scan_gpa = MAX(s->scan_gpa, end);
    }
    return rc;
}

/*
 * One tick's worth of scanning, at most one pass over guest RAM, and no
 * more than the tick's read budget: a guest that fills its RAM with
 * pages that look like notes gets them read a budget's worth a tick.
 */
static bool attach_scan_step(RingsideSerialState *s, char *text, size_t *len,
                             uint64_t *note_gpa)
{
    uint64_t reads = 0;
    int i, rc;

    for (i = 0; i < RING_SCAN_PIECES && reads < RING_SCAN_READS; i++) {
        rc = attach_scan_piece(s, text, len, note_gpa, &reads);
        if (rc == SCAN_FOUND) {
            return true;
        }
        if (rc == SCAN_STOPPED) {
            s->scan_deferred++;
            break;
        }
        if (s->scan_gpa >= attach_scan_top()) {
            break;              /* a full pass: go on from 0 next tick */
        }
    }
    return false;
}

static void attach_probe_tick(RingsideSerialState *s)
{
    g_autofree char *text = NULL;
    uint64_t note_gpa = 0;
    size_t len = 0;
    const char *via = NULL;

    /* Attached: a kexec'd kernel (no reset) writes a note of its own. */
    if (s->ring_state == RS_RING_ATTACHED) {
        if (ringside_attach_note_unchanged(s)) {
            /* lines from before the ring the last budget did not cover */
            rs_match_replay(&s->match);
            timer_mod(s->ring_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                      attach_next_ns(s));
        } else {
            rs_match_detach(&s->match);
            ringside_attach_restart(s, "note changed");
        }
        return;
    }
    text = g_malloc(RS_VMCI_TEXT_MAX);
    /* an announced note found untrusted leaves the other ways open */
    if (s->ext_announced &&
        !(s->ring_state == RS_RING_UNTRUSTED && s->note_gpa == s->ext_note) &&
        attach_read_note(s, s->ext_note, RS_NOTE_HDR_SIZE + RS_VMCI_TEXT_MAX,
                         text, &len)) {
        note_gpa = s->ext_note;
        via = "announce";
    } else if (attach_try_fw_cfg(s, text, &len, &note_gpa)) {
        via = "vmcoreinfo";
    } else if (attach_scan_step(s, text, &len, &note_gpa)) {
        via = "scan";
    }
    /* a note found untrusted is not tried again until the next reset */
    if (via && !(s->ring_state == RS_RING_UNTRUSTED &&
                 note_gpa == s->note_gpa)) {
        attach_from_text(s, text, len, via, note_gpa, false);
    }
    timer_mod(s->ring_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
              attach_next_ns(s));
}

static void attach_probe(void *opaque)
{
    RingsideSerialState *s = opaque;

    ringside_cost_begin(s, RS_COST_TICK);
    attach_probe_tick(s);
    ringside_cost_end(s);
}

/* Would the two rings be read the same way, from the same memory? */
static bool attach_same_ring(const rs_ring *a, const rs_ring *b)
{
    return a->vm.phys_base == b->vm.phys_base &&
           a->vm.image_size == b->vm.image_size &&
           a->vm.root == b->vm.root &&
           a->vm.entry_mask == b->vm.entry_mask &&
           a->vm.l5 == b->vm.l5 && a->vm.have_root == b->vm.have_root &&
           !memcmp(&a->lay, &b->lay, sizeof(a->lay)) &&
           a->prb == b->prb && a->count_bits == b->count_bits &&
           a->size_bits == b->size_bits && a->descs == b->descs &&
           a->infos == b->infos && a->data == b->data;
}

/*
 * Attached, and the guest announced another note (say a minimal one early
 * in boot, then the full VMCOREINFO): if it describes the ring attached,
 * adopt the note and keep every verdict and position.  Returns false if it
 * describes another ring, or none.
 */
static bool attach_adopt(RingsideSerialState *s, const char *text,
                         size_t len, uint64_t note_gpa)
{
    g_autofree rs_vmci *vi = g_new0(rs_vmci, 1);
    g_autofree rs_ring *ring = g_new0(rs_ring, 1);
    uint64_t next = 0;
    rs_vm vm;

    if (rs_vmci_parse(text, len, vi, NULL, 0) != RS_OK ||
        (attach_vm_init(s, &vm, vi), false) ||
        rs_ring_open(ring, vi, &vm, NULL, 0) != RS_OK ||
        !attach_same_ring(ring, &s->ring)) {
        return false;
    }
    s->vmci = *vi;
    memcpy(s->note_text, text, len);
    s->note_len = len;
    s->note_gpa = note_gpa;
    g_strcanon(s->vmci.osrelease, G_CSET_A_2_Z G_CSET_a_2_z G_CSET_DIGITS
               "._+-~", '?');
    rs_ring_next_seq(&s->ring, &next);
    ringside_event(s, RS_EV_RING, ",\"state\":"
                   "\"attached\",\"via\":\"announce\",\"note\":%"
                   PRIu64 ",\"osrelease\":\"%s\",\"descs\":%"
                   PRIu64 ",\"data_bytes\":%" PRIu64
                   ",\"next_seq\":%" PRIu64 ",\"kept\":1", note_gpa,
                   s->vmci.osrelease, s->ring.count,
                   s->ring.data_size, next);
    return true;
}

/*
 * The guest announced where its note is (level 1): attach now, before the
 * guest writes the next byte, so that the console's first records are
 * checked.  The work is one note read, parsed and its ring header opened,
 * all of it within the access's read budget (what does not fit is done
 * by the next probe tick).  A note for the ring attached already keeps
 * the state; a note not written yet is looked for every tick.
 */
void ringside_attach_announced(RingsideSerialState *s)
{
    g_autofree char *text = g_malloc(RS_VMCI_TEXT_MAX);
    size_t len = 0;
    bool readable;

    if (s->ring_state == RS_RING_ATTACHED && s->note_gpa == s->ext_note) {
        return;
    }
    readable = attach_read_note(s, s->ext_note,
                                RS_NOTE_HDR_SIZE + RS_VMCI_TEXT_MAX, text,
                                &len);
    if (s->ring_state == RS_RING_ATTACHED) {
        if (readable && attach_adopt(s, text, len, s->ext_note)) {
            return;
        }
        rs_match_detach(&s->match);
        ringside_attach_restart(s, "announce");
    }
    /* a note found untrusted is not tried again until the next reset */
    if (readable && !(s->ring_state == RS_RING_UNTRUSTED &&
                      s->note_gpa == s->ext_note)) {
        attach_from_text(s, text, len, "announce", s->ext_note, false);
    }
    /*
     * Never later than it was: a guest announcing in a loop must not keep
     * the probe tick (and the scan, and the note check) from running.
     */
    timer_mod_anticipate(s->ring_timer,
                         qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                         attach_next_ns(s));
}

void ringside_attach_reset(RingsideSerialState *s)
{
    ringside_attach_restart(s, "reset");
}

/* The machine's reset, which follows, starts the search. */
void ringside_attach_realize(RingsideSerialState *s)
{
    s->ring_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, attach_probe, s);
}

void ringside_attach_unrealize(RingsideSerialState *s)
{
    timer_free(s->ring_timer);
    s->ring_timer = NULL;
}
