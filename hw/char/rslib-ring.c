/*
 * rslib-ring.c: lockless reader of the Linux printk ringbuffer in guest
 * memory (ring discovery, per-record reads with the state/seq re-check,
 * first/next seq, an iterator with gap reporting) and console-style
 * formatting of records. See rslib-ring.h.
 *
 * The guest may be writing the ring while it is read, and may be hostile:
 * every index is masked, every size checked against the ring, every loop
 * bounded, and nothing read from the guest is used as an allocation size.
 */
#ifdef RINGSIDE_IN_QEMU
#include "qemu/osdep.h"
#endif
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rslib-ring.h"

/* printk_ringbuffer.h */
#define SV_STATE_SHIFT  62
#define SV_ID_MASK      (~(3ull << SV_STATE_SHIFT))
#define ST_RESERVED     0
#define ST_COMMITTED    1
#define ST_FINALIZED    2
#define ST_REUSABLE     3
#define FAILED_LPOS     1ull
#define NO_LPOS         3ull
#define BLK_ID_SIZE     8u

static int rd64(const rs_ring *r, uint64_t va, uint64_t *v)
{
    uint8_t b[8];
    int e = rs_vm_read(&r->vm, va, b, sizeof(b));

    if (e == RS_OK) {
        *v = rs_le64(b);
    }
    return e;
}

/* ---- opening ------------------------------------------------------------ */

uint32_t rs_console_log_max(const char *osrelease)
{
    unsigned major, minor;

    if (!rs_osrelease_version(osrelease, &major, &minor)) {
        return RS_CONSOLE_LOG_MAX;
    }
    /* "printk: adjust string limit macros" came with 6.3 */
    if (major > 6 || (major == 6 && minor >= 3)) {
        return RS_PRINTK_MESSAGE_MAX;
    }
    return RS_CONSOLE_LOG_MAX;
}

int rs_ring_open(rs_ring *r, const rs_vmci *vi, const rs_vm *vm,
                 char *err, size_t errlen)
{
    uint64_t prb;
    int e;

    if (!r || !vi || !vm) {
        RS_SETERR("NULL argument");
        return RS_ERR_ARG;
    }
    memset(r, 0, sizeof(*r));
    r->vm = *vm;
    e = rd64(r, vi->sym_prb, &prb);
    if (e != RS_OK) {
        RS_SETERR("cannot read prb pointer at SYMBOL(prb)=%llx: %s",
               (unsigned long long)vi->sym_prb, rs_strerror(e));
        return e;
    }
    if (prb == 0) {
        RS_SETERR("prb is NULL");
        return RS_ERR_RING;
    }
    return rs_ring_open_at(r, vi, vm, prb, err, errlen);
}

static bool array_fits(uint64_t base, uint64_t n, uint64_t elem)
{
    /* n <= 2^26 and elem <= RS_STRUCT_MAX: the product cannot overflow */
    return base != 0 && n * elem <= UINT64_MAX - base;
}

int rs_ring_open_at(rs_ring *r, const rs_vmci *vi, const rs_vm *vm,
                    uint64_t prb_va, char *err, size_t errlen)
{
    uint8_t b[RS_STRUCT_MAX];
    const rs_layout *l;
    const uint8_t *dr, *tr;
    int e;

    if (!r || !vi || !vm) {
        RS_SETERR("NULL argument");
        return RS_ERR_ARG;
    }
    memset(r, 0, sizeof(*r));
    r->vm = *vm;
    r->lay = vi->lay;
    r->console_max = rs_console_log_max(vi->osrelease);
    l = &r->lay;
    if (l->prb_size == 0 || l->prb_size > sizeof(b)) {
        RS_SETERR("SIZE(printk_ringbuffer) out of range");
        return RS_ERR_ARG;
    }
    r->prb = prb_va;
    e = rs_vm_read(&r->vm, prb_va, b, l->prb_size);
    if (e != RS_OK) {
        RS_SETERR("cannot read printk_ringbuffer at %llx: %s",
               (unsigned long long)prb_va, rs_strerror(e));
        return e;
    }
    /* offsets were checked against the struct sizes by rs_vmci_parse() */
    dr = b + l->prb_desc_ring;
    tr = b + l->prb_text_data_ring;
    r->count_bits = rs_le32(dr + l->dr_count_bits);
    r->descs = rs_le64(dr + l->dr_descs);
    r->infos = rs_le64(dr + l->dr_infos);
    r->size_bits = rs_le32(tr + l->data_size_bits);
    r->data = rs_le64(tr + l->data_data);

    if (r->count_bits < RS_COUNT_BITS_MIN ||
        r->count_bits > RS_COUNT_BITS_MAX) {
        RS_SETERR("count_bits=%u outside [%d, %d]", (unsigned)r->count_bits,
               RS_COUNT_BITS_MIN, RS_COUNT_BITS_MAX);
        return RS_ERR_RING;
    }
    if (r->size_bits < RS_SIZE_BITS_MIN || r->size_bits > RS_SIZE_BITS_MAX) {
        RS_SETERR("size_bits=%u outside [%d, %d]", (unsigned)r->size_bits,
               RS_SIZE_BITS_MIN, RS_SIZE_BITS_MAX);
        return RS_ERR_RING;
    }
    r->count = 1ull << r->count_bits;
    r->data_size = 1ull << r->size_bits;
    if (!array_fits(r->descs, r->count, l->desc_size) ||
        !array_fits(r->infos, r->count, l->info_size) ||
        !array_fits(r->data, r->data_size, 1)) {
        RS_SETERR("descs/infos/data array NULL or wraps the address space");
        return RS_ERR_RING;
    }
    return RS_OK;
}

int rs_ring_pos_read(const rs_ring *r, rs_ring_pos *pos)
{
    uint8_t b[RS_STRUCT_MAX];
    const rs_layout *l = &r->lay;
    const uint8_t *dr, *tr;
    uint32_t c = l->atomic_long_counter;
    int e;

    if (!pos || l->prb_size == 0 || l->prb_size > sizeof(b)) {
        return RS_ERR_ARG;
    }
    e = rs_vm_read(&r->vm, r->prb, b, l->prb_size);
    if (e != RS_OK) {
        return e;
    }
    dr = b + l->prb_desc_ring;
    tr = b + l->prb_text_data_ring;
    pos->head_id = rs_le64(dr + l->dr_head_id + c) & SV_ID_MASK;
    pos->tail_id = rs_le64(dr + l->dr_tail_id + c) & SV_ID_MASK;
    pos->head_lpos = rs_le64(tr + l->data_head_lpos + c);
    pos->tail_lpos = rs_le64(tr + l->data_tail_lpos + c);
    pos->fail = rs_le64(b + l->prb_fail + c);
    return RS_OK;
}

/* ---- descriptor access -------------------------------------------------- */

static uint64_t desc_va(const rs_ring *r, uint64_t n)
{
    return r->descs + (n & (r->count - 1)) * r->lay.desc_size;
}

static uint64_t info_va(const rs_ring *r, uint64_t n)
{
    return r->infos + (n & (r->count - 1)) * r->lay.info_size;
}

static int read_sv(const rs_ring *r, uint64_t n, uint64_t *sv)
{
    return rd64(r, desc_va(r, n) + r->lay.desc_state_var +
                r->lay.atomic_long_counter, sv);
}

static int read_info_seq(const rs_ring *r, uint64_t n, uint64_t *seq)
{
    return rd64(r, info_va(r, n) + r->lay.info_seq, seq);
}

static int first_seq_id(const rs_ring *r, uint64_t *seq, uint64_t *tail_out)
{
    uint64_t va = r->prb + r->lay.prb_desc_ring + r->lay.dr_tail_id +
                  r->lay.atomic_long_counter;
    int i, e;

    for (i = 0; i < RS_TAIL_TRIES; i++) {
        uint64_t tail, sv, sv2, s;
        unsigned st;

        e = rd64(r, va, &tail);
        if (e != RS_OK) {
            return e;
        }
        tail &= SV_ID_MASK;
        e = read_sv(r, tail, &sv);
        if (e != RS_OK) {
            return e;
        }
        st = (unsigned)(sv >> SV_STATE_SHIFT);
        if ((sv & SV_ID_MASK) != tail ||
            (st != ST_FINALIZED && st != ST_REUSABLE)) {
            continue;   /* the tail moved on; reload it */
        }
        e = read_info_seq(r, tail, &s);
        if (e == RS_OK) {
            e = read_sv(r, tail, &sv2);
        }
        if (e != RS_OK) {
            return e;
        }
        st = (unsigned)(sv2 >> SV_STATE_SHIFT);
        if ((sv2 & SV_ID_MASK) != tail ||
            (st != ST_FINALIZED && st != ST_REUSABLE)) {
            continue;
        }
        *seq = s;
        if (tail_out) {
            *tail_out = tail;
        }
        return RS_OK;
    }
    return RS_ERR_RACE;
}

int rs_ring_first_seq(const rs_ring *r, uint64_t *seq)
{
    if (!r || !seq) {
        return RS_ERR_ARG;
    }
    return first_seq_id(r, seq, NULL);
}

int rs_ring_next_seq(const rs_ring *r, uint64_t *seq)
{
    rs_ring_pos pos;
    rs_record rec;
    uint64_t first, tail, h, s, d = 0;
    unsigned probes = 0;
    int i, e;

    if (!r || !seq) {
        return RS_ERR_ARG;
    }
    for (i = 0; ; i++) {
        e = first_seq_id(r, &first, &tail);
        if (e == RS_OK) {
            e = rs_ring_pos_read(r, &pos);
        }
        if (e != RS_OK) {
            return e;
        }
        /* ids and seqs both advance by one per reserved descriptor */
        d = (pos.head_id - tail) & SV_ID_MASK;
        if (d < r->count) {
            break;
        }
        if (i + 1 >= RS_TAIL_TRIES) {
            d = 0;      /* inconsistent: probe forward from the tail */
            break;
        }
    }
    h = first + d;
    if (h < first) {
        return RS_ERR_RING;
    }
    s = h;
    if (rs_ring_read(r, h, &rec, NULL, 0) != RS_REC_NOT_YET) {
        s = h + 1;
        while (s != UINT64_MAX && probes++ < RS_NEXT_SCAN_MAX &&
               rs_ring_read(r, s, &rec, NULL, 0) != RS_REC_NOT_YET) {
            s++;
        }
    } else {
        while (s > first && probes++ < RS_NEXT_SCAN_MAX &&
               rs_ring_read(r, s - 1, &rec, NULL, 0) == RS_REC_NOT_YET) {
            s--;
        }
    }
    *seq = s;
    return RS_OK;
}

/* ---- reading one record ------------------------------------------------- */

const char *rs_rec_status_name(rs_rec_status st)
{
    switch (st) {
    case RS_REC_OK:      return "ok";
    case RS_REC_NODATA:  return "nodata";
    case RS_REC_NOT_YET: return "not-yet";
    case RS_REC_GONE:    return "gone";
    case RS_REC_CHANGED: return "changed";
    case RS_REC_BAD:     return "bad";
    default:             return "?";
    }
}

static void copy_str(char *dst, size_t dcap, const uint8_t *src, size_t n)
{
    size_t i;

    if (n > dcap - 1) {
        n = dcap - 1;
    }
    for (i = 0; i < n && src[i]; i++) {
        dst[i] = (char)src[i];
    }
    dst[i] = '\0';
}

/* Not finalized (reserved/committed): overwritten, or not yet written? */
static rs_rec_status absent(const rs_ring *r, uint64_t seq, rs_record *rec)
{
    uint64_t first;

    if (first_seq_id(r, &first, NULL) != RS_OK) {
        rec->reason = "tail descriptor unreadable or unstable";
        return RS_REC_BAD;
    }
    if (seq < first) {
        rec->reason = "overwritten";
        return RS_REC_GONE;
    }
    rec->reason = "not finalized yet";
    return RS_REC_NOT_YET;
}

/*
 * Locate the data of a finalized record as get_data() does. Returns NULL
 * and sets *off and *size on success, else a reason. NO_LPOS / FAILED_LPOS are
 * handled by the caller.
 *
 * Two placement rules, both accepted without knowing the kernel version.
 * Up to 6.18 a block whose end falls exactly on a wrap boundary is moved to
 * index 0 of the next wrap; from 6.19 (67e1b0052f6b) it stays where it is,
 * and a block is in place when begin and next - 1 share a wrap. The rules
 * never give the same lpos pair two meanings: an old kernel never leaves a
 * block in place with next on a boundary, and a block moved to index 0
 * never has next on a boundary (its size would be 0).
 * lpos arithmetic wraps at 2^64 as in the kernel, whose first wrap after
 * boot is the last one before 0: there an in-place block may end at next 0.
 */
static const char *locate_block(const rs_ring *r, uint64_t begin,
                                uint64_t next, uint64_t *off, uint64_t *size)
{
    uint64_t mask = r->data_size - 1;
    uint64_t len = next - begin;
    unsigned sb = r->size_bits;

    if ((begin & 1) || (next & 1)) {
        return "illegal data-less lpos";
    }
    if ((begin & 7) || (next & 7)) {
        return "lpos not 8-aligned";
    }
    if (begin >> sb == (next - 1) >> sb && len != 0 && len <= r->data_size) {
        *off = begin & mask;
        *size = len;
    } else if ((begin + r->data_size) >> sb == next >> sb) {
        /* wrapping block: the data is at index 0 of next's wrap */
        *off = 0;
        *size = next & mask;
    } else {
        return "illegal lpos pair";
    }
    if (*size < BLK_ID_SIZE) {
        return "block smaller than its id";
    }
    if (*off + *size > r->data_size) {
        return "block outside the data ring";
    }
    return NULL;
}

static rs_rec_status ring_read(const rs_ring *r, uint64_t seq,
                               rs_record *rec, char *text, size_t cap);

/*
 * A read refused for want of budget makes the record BAD, for a reason
 * that says so: its callers look at rs_ring_budget_out() before blaming
 * the ring.
 */
rs_rec_status rs_ring_read(const rs_ring *r, uint64_t seq, rs_record *rec,
                           char *text, size_t cap)
{
    rs_rec_status st;

    if (rec && rs_ring_budget_out(r)) {
        memset(rec, 0, sizeof(*rec));
        rec->seq = seq;
        rec->text = text;
        rec->reason = "read budget used up";
        return RS_REC_BAD;
    }
    st = ring_read(r, seq, rec, text, cap);
    if (st != RS_REC_OK && st != RS_REC_NODATA && rs_ring_budget_out(r)) {
        rec->reason = "read budget used up";
        return RS_REC_BAD;
    }
    return st;
}

static rs_rec_status ring_read(const rs_ring *r, uint64_t seq,
                               rs_record *rec, char *text, size_t cap)
{
    const rs_layout *l;
    uint8_t ib[RS_STRUCT_MAX], lb[RS_STRUCT_MAX];
    uint64_t idx, sv, sv2, s, s2, blk_id = 0, id, begin, next, off = 0, size = 0;
    const uint8_t *tl, *di;
    const char *why = NULL;
    rs_rec_status verdict;
    unsigned st, st2;
    size_t n = 0;

    if (!rec) {
        return RS_REC_BAD;
    }
    memset(rec, 0, sizeof(*rec));
    rec->seq = seq;
    rec->text = text;
    if (!r || (!text && cap) || r->count == 0) {
        rec->reason = "bad argument";
        return RS_REC_BAD;
    }
    if (cap && text) {
        text[0] = '\0';
    }
    l = &r->lay;
    if (l->info_size > sizeof(ib) || l->lpos_size > sizeof(lb)) {
        rec->reason = "bad layout";
        return RS_REC_BAD;
    }
    idx = seq & (r->count - 1);

    /* 1. the state word, with one aligned 8-byte load */
    if (read_sv(r, seq, &sv) != RS_OK) {
        rec->reason = "descriptor unreadable";
        return RS_REC_BAD;
    }
    id = sv & SV_ID_MASK;
    st = (unsigned)(sv >> SV_STATE_SHIFT);
    rec->id = id;
    if ((id & (r->count - 1)) != idx) {
        if (sv == 0) {
            /* never used: descriptors start zeroed (reserved, id 0) */
            return absent(r, seq, rec);
        }
        rec->reason = "descriptor id does not index its slot";
        return RS_REC_BAD;
    }
    if (st == ST_RESERVED || st == ST_COMMITTED) {
        return absent(r, seq, rec);
    }

    /* 2. info (with seq) and lpos; valid only if the re-check passes */
    if (rs_vm_read(&r->vm, info_va(r, seq), ib, l->info_size) != RS_OK ||
        rs_vm_read(&r->vm, desc_va(r, seq) + l->desc_text_blk_lpos, lb,
                   l->lpos_size) != RS_OK) {
        rec->reason = "descriptor/info unreadable";
        return RS_REC_BAD;
    }
    s = rs_le64(ib + l->info_seq);
    if (s != seq) {
        /* the slot holds another record: a newer one, or an older one */
        rec->reason = s > seq ? "slot reused by a newer record"
                              : "slot still holds an older record";
        return s > seq ? RS_REC_GONE : RS_REC_NOT_YET;
    }
    tl = ib + l->info_text_len;
    di = ib + l->info_dev_info;
    rec->ts_nsec = rs_le64(ib + l->info_ts_nsec);
    rec->caller_id = rs_le32(ib + l->info_caller_id);
    rec->text_len = rs_le16(tl);
    rec->facility = tl[2];
    rec->flags = tl[3] & 0x1f;
    rec->force_con = (rec->flags & RS_LOG_FORCE_CON) != 0;
    rec->level = tl[3] >> 5;
    copy_str(rec->subsystem, sizeof(rec->subsystem),
             di + l->devinfo_subsystem, l->subsystem_len);
    copy_str(rec->device, sizeof(rec->device),
             di + l->devinfo_device, l->device_len);
    begin = rs_le64(lb + l->lpos_begin);
    next = rs_le64(lb + l->lpos_next);
    rec->lpos_begin = begin;
    rec->lpos_next = next;

    /* 3. the data block */
    if (st == ST_REUSABLE) {
        verdict = RS_REC_NODATA;
        why = "reusable (data may be gone)";
    } else if (begin == FAILED_LPOS && next == FAILED_LPOS) {
        verdict = RS_REC_NODATA;
        why = "FAILED_LPOS: text was lost";
    } else if (begin == NO_LPOS && next == NO_LPOS) {
        verdict = rec->text_len ? RS_REC_BAD : RS_REC_OK;
        why = rec->text_len ? "text_len > block (NO_LPOS)" : NULL;
    } else {
        why = locate_block(r, begin, next, &off, &size);
        if (!why && rec->text_len > size - BLK_ID_SIZE) {
            why = "text_len > block";
        }
        if (!why && rd64(r, r->data + off, &blk_id) != RS_OK) {
            why = "data block unreadable";
        }
        if (!why && blk_id != id) {
            why = "block id does not match descriptor id";
        }
        if (!why) {
            n = rec->text_len < cap ? rec->text_len : cap;
            if (rs_vm_read(&r->vm, r->data + off + BLK_ID_SIZE, text, n)
                != RS_OK) {
                why = "text unreadable";
                n = 0;
            }
        }
        verdict = why ? RS_REC_BAD : RS_REC_OK;
    }

    /* 4. re-check: still the same finalized record? */
    if (read_sv(r, seq, &sv2) != RS_OK || read_info_seq(r, seq, &s2)) {
        rec->reason = "descriptor unreadable on re-check";
        return RS_REC_BAD;
    }
    st2 = (unsigned)(sv2 >> SV_STATE_SHIFT);
    if (s2 != seq || (sv2 & SV_ID_MASK) != id ||
        (verdict == RS_REC_NODATA ? st2 < ST_FINALIZED : sv2 != sv)) {
        rec->reason = "record changed while read";
        return RS_REC_CHANGED;
    }
    rec->reason = why;
    if (verdict == RS_REC_OK) {
        rec->text_copied = n;
        rec->truncated = rec->text_len > cap;
        if (n < cap) {
            text[n] = '\0';
        }
    }
    return verdict;
}

/* ---- iterator ----------------------------------------------------------- */

void rs_iter_init(rs_iter *it, const rs_ring *r, uint64_t from, uint64_t end,
                  uint64_t budget, unsigned flags)
{
    memset(it, 0, sizeof(*it));
    it->ring = r;
    it->seq = from;
    it->end = end;
    it->budget = budget;
    it->flags = flags;
}

rs_iter_ev rs_iter_next(rs_iter *it, rs_record *rec, char *text, size_t cap)
{
    unsigned retries = 0;
    uint64_t first;

    for (;;) {
        rs_rec_status st;

        if (it->seq >= it->end) {
            return RS_IT_END;
        }
        if (it->budget == 0 || rs_ring_budget_out(it->ring)) {
            return RS_IT_LIMIT;
        }
        it->budget--;
        st = rs_ring_read(it->ring, it->seq, rec, text, cap);
        switch (st) {
        case RS_REC_OK:
            it->n_records++;
            it->seq++;
            return RS_IT_RECORD;
        case RS_REC_NODATA:
            it->n_nodata++;
            it->seq++;
            if (it->flags & RS_ITER_NODATA) {
                return RS_IT_NODATA;
            }
            continue;
        case RS_REC_NOT_YET:
            return RS_IT_END;
        case RS_REC_CHANGED:
            it->n_changed++;
            if (++retries < RS_CHANGED_TRIES) {
                continue;
            }
            rec->reason = "record kept changing";
            break;
        case RS_REC_GONE:
            if (rs_ring_first_seq(it->ring, &first) != RS_OK) {
                rec->reason = "overwritten, and tail unreadable";
                break;
            }
            if (first > it->seq) {
                uint64_t stop = first < it->end ? first : it->end;

                it->gap_first = it->seq;
                it->gap_count = stop - it->seq;
                it->n_lost += it->gap_count;
                it->seq = stop;
                return RS_IT_GAP;
            }
            /* the slot was reused but the tail is not past seq: retry */
            if (++retries < RS_CHANGED_TRIES) {
                continue;
            }
            rec->reason = "overwritten but tail not past it";
            break;
        case RS_REC_BAD:
        default:
            if (rs_ring_budget_out(it->ring)) {
                return RS_IT_LIMIT;     /* the reader's, not the ring's */
            }
            break;
        }
        it->n_bad++;
        it->seq++;
        return RS_IT_BAD;
    }
}

/* ---- formatting --------------------------------------------------------- */

typedef struct outbuf {
    char *buf;
    size_t cap, len;
} outbuf;

static void put(outbuf *o, const char *s, size_t n)
{
    if (o->cap && o->len < o->cap - 1) {
        size_t room = o->cap - 1 - o->len;

        memcpy(o->buf + o->len, s, n < room ? n : room);
    }
    o->len += n;
}

/*
 * Decimal v, padded on the left with pad to at least width characters.
 * Hand-rolled: this runs for every record printed, and snprintf was the
 * largest cost of decoding a full ring.
 */
static size_t put_dec(char *p, uint64_t v, size_t width, char pad)
{
    char digits[20];
    size_t nd = 0, n = 0;

    do {
        digits[nd++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (nd + n < width) {
        p[n++] = pad;
    }
    while (nd) {
        p[n++] = digits[--nd];
    }
    return n;
}

/* p must hold RS_PREFIX_MAX bytes. */
#define RS_PREFIX_MAX   64

static size_t make_prefix(const rs_record *rec, unsigned flags, char *p)
{
    size_t n = 0;

    if (flags & RS_FMT_SYSLOG) {
        p[n++] = '<';
        n += put_dec(p + n, (unsigned)rec->facility << 3 | rec->level, 0, 0);
        p[n++] = '>';
    }
    if (flags & RS_FMT_TIME) {
        p[n++] = '[';
        n += put_dec(p + n, rec->ts_nsec / 1000000000u, 5, ' ');
        p[n++] = '.';
        n += put_dec(p + n, rec->ts_nsec % 1000000000u / 1000, 6, '0');
        p[n++] = ']';
    }
    if (flags & RS_FMT_CALLER) {
        /* "[%6s]" of "T<pid>" or "C<cpu>" */
        char c[16];
        size_t cl = 0, pad;

        c[cl++] = (rec->caller_id & 0x80000000u) ? 'C' : 'T';
        cl += put_dec(c + cl, rec->caller_id & ~0x80000000u, 0, 0);
        p[n++] = '[';
        for (pad = cl; pad < 6; pad++) {
            p[n++] = ' ';
        }
        memcpy(p + n, c, cl);
        n += cl;
        p[n++] = ']';
    }
    if (flags & (RS_FMT_TIME | RS_FMT_CALLER)) {
        p[n++] = ' ';
    }
    p[n] = '\0';
    return n;
}

size_t rs_format(const rs_record *rec, unsigned flags, size_t limit,
                 char *out, size_t cap)
{
    /* longest: "<2047>" + "[18446744073.709551]" + "[C4294967295]" + " " */
    char pfx[RS_PREFIX_MAX];
    outbuf o = { out, out ? cap : 0, 0 };
    const char *t = rec && rec->text ? rec->text : "";
    size_t tl = rec && rec->text ? rec->text_copied : 0;
    size_t plen, len = 0;
    bool cut = false;

    if (!rec) {
        if (o.cap) {
            out[0] = '\0';
        }
        return 0;
    }
    plen = make_prefix(rec, flags, pfx);
    if (limit && tl > limit) {
        tl = limit;
    }
    /* one iteration per line; each consumes >= 1 byte or ends the loop */
    for (;;) {
        const char *nl = memchr(t, '\n', tl);
        size_t line;

        if (nl) {
            line = (size_t)(nl - t);
        } else if (cut) {
            break;              /* drop a cut-off last line */
        } else {
            line = tl;
        }
        if (limit && len + plen + tl + 2 > limit) {
            if (len + plen + line + 2 > limit) {
                break;          /* not even this line fits */
            }
            tl = limit - len - plen - 2;
            cut = true;
        }
        put(&o, pfx, plen);
        put(&o, t, line);
        put(&o, "\n", 1);
        len += plen + line + 1;
        if (tl == line) {
            break;
        }
        t += line + 1;
        tl -= line + 1;
    }
    if (o.cap) {
        out[o.len < o.cap ? o.len : o.cap - 1] = '\0';
    }
    return o.len;
}

/* ---- console lines that are not records ------------------------------- */

/* Does p[*i..n) start with the string s?  Advances *i past it if so. */
static bool eat(const uint8_t *p, size_t n, size_t *i, const char *s)
{
    size_t l = strlen(s);

    if (n - *i < l || memcmp(p + *i, s, l)) {
        return false;
    }
    *i += l;
    return true;
}

/*
 * A decimal number as printf prints it: an optional '-' when neg is set,
 * then "0" or digits not starting with 0, at most 20 of them, no overflow.
 * *v gets the magnitude, *minus the sign.
 */
static bool eat_num(const uint8_t *p, size_t n, size_t *i, bool neg,
                    uint64_t *v, bool *minus)
{
    size_t j = *i, d = 0;
    uint64_t x = 0;

    *minus = neg && j < n && p[j] == '-';
    if (*minus) {
        j++;
    }
    if (j < n && p[j] == '0' && j + 1 < n && p[j + 1] >= '0' &&
        p[j + 1] <= '9') {
        return false;
    }
    for (; j < n && p[j] >= '0' && p[j] <= '9'; j++, d++) {
        unsigned c = p[j] - '0';

        if (d >= 20 || x > (UINT64_MAX - c) / 10) {
            return false;
        }
        x = x * 10 + c;
    }
    if (!d) {
        return false;
    }
    *i = j;
    *v = x;
    return true;
}

rs_console_notice rs_parse_console_notice(const uint8_t *p, size_t n,
                                          uint64_t *count)
{
    uint64_t v = 0, unused;
    size_t i = 0;
    bool minus;

    if (count) {
        *count = 0;
    }
    if (!p) {
        return RS_NOTICE_NONE;
    }
    if (eat(p, n, &i, "** ")) {
        size_t at = i;

        if (eat(p, n, &i, "replaying previous printk message **") &&
            i == n) {
            return RS_NOTICE_REPLAYING;
        }
        i = at;
        /* %lu: the kernel prints it only when non-zero */
        if (eat_num(p, n, &i, false, &v, &minus) && v &&
            eat(p, n, &i, " printk messages dropped **") && i == n) {
            if (count) {
                *count = v;
            }
            return RS_NOTICE_DROPPED;
        }
        return RS_NOTICE_NONE;
    }
    if (eat(p, n, &i, "perf: interrupt took too long (") &&
        eat_num(p, n, &i, true, &unused, &minus) &&
        eat(p, n, &i, " > ") &&
        eat_num(p, n, &i, true, &unused, &minus) &&
        eat(p, n, &i, "), lowering kernel.perf_event_max_sample_rate to ") &&
        eat_num(p, n, &i, true, &v, &minus) && i == n) {
        if (count && !minus) {
            *count = v;
        }
        return RS_NOTICE_PERF_EARLY;
    }
    return RS_NOTICE_NONE;
}

/* As eat(), but p may end inside s: then all of p's rest must agree. */
static bool eat_cut(const uint8_t *p, size_t n, size_t *i, const char *s)
{
    size_t l = strlen(s);

    if (n - *i < l) {
        l = n - *i;
    }
    if (memcmp(p + *i, s, l)) {
        return false;
    }
    *i += l;
    return true;
}

rs_console_notice rs_console_notice_cut(const uint8_t *p, size_t n)
{
    size_t i = 0, at;

    if (!p || n < 4 || !eat(p, n, &i, "** ")) {
        return RS_NOTICE_NONE;
    }
    at = i;
    if (eat_cut(p, n, &i, "replaying previous printk message **") && i == n) {
        return RS_NOTICE_REPLAYING;
    }
    i = at;
    if (p[i] < '1' || p[i] > '9') {
        return RS_NOTICE_NONE;
    }
    while (i < n && i - at < 20 && p[i] >= '0' && p[i] <= '9') {
        i++;
    }
    if (i == n ||
        (eat_cut(p, n, &i, " printk messages dropped **") && i == n)) {
        return RS_NOTICE_DROPPED;
    }
    return RS_NOTICE_NONE;
}

const char *rs_console_notice_name(rs_console_notice k)
{
    switch (k) {
    case RS_NOTICE_NONE:        return "none";
    case RS_NOTICE_DROPPED:     return "dropped";
    case RS_NOTICE_REPLAYING:   return "replaying";
    case RS_NOTICE_PERF_EARLY:  return "perf-early";
    default:                    return "?";
    }
}

bool rs_parse_dropped_notice(const uint8_t *p, size_t n, uint64_t *count)
{
    uint64_t v;

    if (rs_parse_console_notice(p, n, &v) != RS_NOTICE_DROPPED) {
        return false;
    }
    *count = v;
    return true;
}

rs_rec_status rs_ring_read_settled(const rs_ring *r, uint64_t seq,
                                   rs_record *rec, char *text, size_t cap)
{
    rs_rec_status st = RS_REC_CHANGED;
    int i;

    for (i = 0; i < RS_CHANGED_TRIES && st == RS_REC_CHANGED; i++) {
        st = rs_ring_read(r, seq, rec, text, cap);
    }
    return st;
}
