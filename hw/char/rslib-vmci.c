/*
 * rslib-vmci.c: VMCOREINFO text parsing, VMCOREINFO ELF note discovery
 * (in a buffer or by a bounded scan of guest physical memory) and x86_64
 * kernel virtual-to-physical translation. See rslib-vmci.h.
 *
 * Every input is guest-controlled: lengths, numbers and page-table entries
 * are checked before use, and every loop has a fixed bound.
 */
#ifdef RINGSIDE_IN_QEMU
#include "qemu/osdep.h"
#endif
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rslib-vmci.h"

const char *rs_strerror(int e)
{
    switch (e) {
    case RS_OK:             return "success";
    case RS_ERR_ARG:        return "invalid argument";
    case RS_ERR_TOO_BIG:    return "too big";
    case RS_ERR_SYNTAX:     return "malformed VMCOREINFO";
    case RS_ERR_RANGE:      return "value out of range";
    case RS_ERR_DUP:        return "duplicate VMCOREINFO key";
    case RS_ERR_MISSING:    return "required VMCOREINFO key missing";
    case RS_ERR_OLD_KERNEL: return "kernel older than 5.10 (no lockless "
                                   "printk ring)";
    case RS_ERR_LAYOUT:     return "inconsistent printk structure layout";
    case RS_ERR_NOT_FOUND:  return "VMCOREINFO note not found";
    case RS_ERR_READ:       return "guest memory not readable";
    case RS_ERR_XLATE:      return "virtual address not mapped";
    case RS_ERR_RING:       return "printk ring header out of bounds";
    case RS_ERR_RACE:       return "ring kept changing while read";
    case RS_ERR_BUDGET:     return "read budget used up";
    default:                return "unknown error";
    }
}

/* ---- VMCOREINFO keys ---------------------------------------------------- */

enum key_kind {
    K_OSREL,        /* string, 1..64 bytes */
    K_HEX,          /* uint64_t, %lx */
    K_UDEC,         /* uint64_t, %lu */
    K_SDEC,         /* int64_t, %ld */
    K_SDEC_U,       /* %ld stored as uint64_t (two's complement) */
    K_BOOL,         /* %d, 0 or 1 */
    K_LAY,          /* uint32_t in rs_layout, %lu, <= RS_STRUCT_MAX */
};

enum key_req {
    R_OPT,          /* optional */
    R_REQ,          /* required */
    R_PGT,          /* one of the R_PGT keys is required */
};

typedef struct key_desc {
    const char *name;
    uint8_t len;    /* strlen(name), so that a lookup compares lengths */
    uint8_t kind;
    uint8_t req;
    uint16_t off;   /* offsetof(rs_vmci, x) or offsetof(rs_layout, x) */
} key_desc;

#define KV(n, k, r, f)  { n, sizeof(n) - 1, k, r, \
                          (uint16_t)offsetof(rs_vmci, f) }
#define KL(n, f)        { n, sizeof(n) - 1, K_LAY, R_REQ, \
                          (uint16_t)offsetof(rs_layout, f) }

static const key_desc keys[] = {
    KV("OSRELEASE", K_OSREL, R_REQ, osrelease),
    KV("PAGESIZE", K_UDEC, R_REQ, pagesize),
    KV("SYMBOL(prb)", K_HEX, R_REQ, sym_prb),
    KV("SYMBOL(init_top_pgt)", K_HEX, R_PGT, sym_top_pgt),
    /* swapper_pg_dir is #defined to init_top_pgt on x86_64 */
    KV("SYMBOL(swapper_pg_dir)", K_HEX, R_PGT, sym_top_pgt),
    KV("SYMBOL(log_buf)", K_HEX, R_OPT, sym_log_buf),
    KV("NUMBER(phys_base)", K_SDEC, R_REQ, phys_base),
    KV("NUMBER(pgtable_l5_enabled)", K_BOOL, R_OPT, pgtable_l5),
    KV("NUMBER(sme_mask)", K_SDEC_U, R_OPT, sme_mask),
    KV("NUMBER(KERNEL_IMAGE_SIZE)", K_SDEC_U, R_OPT, kernel_image_size),
    KV("KERNELOFFSET", K_HEX, R_OPT, kerneloffset),
    KL("SIZE(printk_ringbuffer)", prb_size),
    KL("OFFSET(printk_ringbuffer.desc_ring)", prb_desc_ring),
    KL("OFFSET(printk_ringbuffer.text_data_ring)", prb_text_data_ring),
    KL("OFFSET(printk_ringbuffer.fail)", prb_fail),
    KL("SIZE(prb_desc_ring)", dr_size),
    KL("OFFSET(prb_desc_ring.count_bits)", dr_count_bits),
    KL("OFFSET(prb_desc_ring.descs)", dr_descs),
    KL("OFFSET(prb_desc_ring.infos)", dr_infos),
    KL("OFFSET(prb_desc_ring.head_id)", dr_head_id),
    KL("OFFSET(prb_desc_ring.tail_id)", dr_tail_id),
    KL("SIZE(prb_desc)", desc_size),
    KL("OFFSET(prb_desc.state_var)", desc_state_var),
    KL("OFFSET(prb_desc.text_blk_lpos)", desc_text_blk_lpos),
    KL("SIZE(prb_data_blk_lpos)", lpos_size),
    KL("OFFSET(prb_data_blk_lpos.begin)", lpos_begin),
    KL("OFFSET(prb_data_blk_lpos.next)", lpos_next),
    KL("SIZE(printk_info)", info_size),
    KL("OFFSET(printk_info.seq)", info_seq),
    KL("OFFSET(printk_info.ts_nsec)", info_ts_nsec),
    KL("OFFSET(printk_info.text_len)", info_text_len),
    KL("OFFSET(printk_info.caller_id)", info_caller_id),
    KL("OFFSET(printk_info.dev_info)", info_dev_info),
    KL("SIZE(dev_printk_info)", devinfo_size),
    KL("OFFSET(dev_printk_info.subsystem)", devinfo_subsystem),
    KL("LENGTH(printk_info_subsystem)", subsystem_len),
    KL("OFFSET(dev_printk_info.device)", devinfo_device),
    KL("LENGTH(printk_info_device)", device_len),
    KL("SIZE(prb_data_ring)", data_size),
    KL("OFFSET(prb_data_ring.size_bits)", data_size_bits),
    KL("OFFSET(prb_data_ring.data)", data_data),
    KL("OFFSET(prb_data_ring.head_lpos)", data_head_lpos),
    KL("OFFSET(prb_data_ring.tail_lpos)", data_tail_lpos),
    KL("SIZE(atomic_long_t)", atomic_long_size),
    KL("OFFSET(atomic_long_t.counter)", atomic_long_counter),
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))
/* vi->have is a 64-bit map of keys[] */
typedef char rs_keys_fit_in_have[(NKEYS <= 64) ? 1 : -1];

/* Up to 4 decimal digits at *p, advancing it; false if there are none. */
static bool version_part(const char **p, unsigned *v)
{
    unsigned n = 0, d;

    for (d = 0; d < 4 && **p >= '0' && **p <= '9'; d++, (*p)++) {
        n = n * 10 + (unsigned)(**p - '0');
    }
    *v = n;
    return d > 0 && !(**p >= '0' && **p <= '9');
}

bool rs_osrelease_version(const char *osrelease, unsigned *major,
                          unsigned *minor)
{
    const char *p = osrelease;
    unsigned a = 0, b = 0;
    bool ok = p && version_part(&p, &a) && *p++ == '.' &&
              version_part(&p, &b);

    if (!ok) {
        a = b = 0;
    }
    if (major) {
        *major = a;
    }
    if (minor) {
        *minor = b;
    }
    return ok;
}

/*
 * A guest's note may hold some 50 lines of unknown keys per 4 KiB: the
 * lookup compares lengths and the first byte before any memcmp.
 */
static int find_key(const char *k, size_t klen)
{
    size_t i;

    for (i = 0; i < NKEYS; i++) {
        if (keys[i].len == klen && keys[i].name[0] == k[0] &&
            memcmp(keys[i].name, k, klen) == 0) {
            return (int)i;
        }
    }
    return -1;
}

static bool have_key(const rs_vmci *vi, const char *name)
{
    int i = find_key(name, strlen(name));

    return i >= 0 && (vi->have >> i) & 1;
}

/* ---- number parsing (strict, overflow-checked) -------------------------- */

static int parse_udec(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    size_t i;

    if (n == 0) {
        return RS_ERR_SYNTAX;
    }
    for (i = 0; i < n; i++) {
        unsigned d;

        if (s[i] < '0' || s[i] > '9') {
            return RS_ERR_SYNTAX;
        }
        d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10) {
            return RS_ERR_RANGE;
        }
        v = v * 10 + d;
    }
    *out = v;
    return RS_OK;
}

static int parse_sdec(const char *s, size_t n, int64_t *out)
{
    bool neg = false;
    uint64_t mag;
    int r;

    if (n > 0 && s[0] == '-') {
        neg = true;
        s++;
        n--;
    }
    r = parse_udec(s, n, &mag);
    if (r != RS_OK) {
        return r;
    }
    if (neg) {
        if (mag > (uint64_t)INT64_MAX + 1) {
            return RS_ERR_RANGE;
        }
        /* -(2^63) is representable; compute without signed overflow */
        *out = mag == 0 ? 0 : -(int64_t)(mag - 1) - 1;
    } else {
        if (mag > (uint64_t)INT64_MAX) {
            return RS_ERR_RANGE;
        }
        *out = (int64_t)mag;
    }
    return RS_OK;
}

static int parse_hex(const char *s, size_t n, uint64_t *out)
{
    uint64_t v = 0;
    size_t i;

    if (n == 0) {
        return RS_ERR_SYNTAX;
    }
    for (i = 0; i < n; i++) {
        char c = s[i];
        unsigned d;

        if (c >= '0' && c <= '9') {
            d = (unsigned)(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            d = (unsigned)(c - 'a' + 10);
        } else if (c >= 'A' && c <= 'F') {
            d = (unsigned)(c - 'A' + 10);
        } else {
            return RS_ERR_SYNTAX;
        }
        if (v >> 60) {
            return RS_ERR_RANGE;
        }
        v = v << 4 | d;
    }
    *out = v;
    return RS_OK;
}

static int store_value(rs_vmci *vi, const key_desc *k, const char *v,
                       size_t n)
{
    unsigned char *base = (unsigned char *)vi;
    uint64_t u = 0;
    int64_t s = 0;
    uint32_t u32;
    int r;

    switch (k->kind) {
    case K_OSREL:
        if (n == 0) {
            return RS_ERR_SYNTAX;
        }
        if (n >= sizeof(vi->osrelease)) {
            return RS_ERR_RANGE;
        }
        memcpy(vi->osrelease, v, n);
        vi->osrelease[n] = '\0';
        return RS_OK;
    case K_HEX:
        r = parse_hex(v, n, &u);
        if (r == RS_OK) {
            memcpy(base + k->off, &u, sizeof(u));
        }
        return r;
    case K_UDEC:
        r = parse_udec(v, n, &u);
        if (r == RS_OK) {
            memcpy(base + k->off, &u, sizeof(u));
        }
        return r;
    case K_SDEC:
        r = parse_sdec(v, n, &s);
        if (r == RS_OK) {
            memcpy(base + k->off, &s, sizeof(s));
        }
        return r;
    case K_SDEC_U:
        r = parse_sdec(v, n, &s);
        if (r == RS_OK) {
            u = (uint64_t)s;
            memcpy(base + k->off, &u, sizeof(u));
        }
        return r;
    case K_BOOL:
        r = parse_sdec(v, n, &s);
        if (r == RS_OK && s != 0 && s != 1) {
            r = RS_ERR_RANGE;
        }
        if (r == RS_OK) {
            bool b = s == 1;
            memcpy(base + k->off, &b, sizeof(b));
        }
        return r;
    case K_LAY:
        r = parse_udec(v, n, &u);
        if (r == RS_OK && u > RS_STRUCT_MAX) {
            r = RS_ERR_RANGE;
        }
        if (r == RS_OK) {
            u32 = (uint32_t)u;
            memcpy((unsigned char *)&vi->lay + k->off, &u32, sizeof(u32));
        }
        return r;
    default:
        return RS_ERR_ARG;
    }
}

/* ---- layout consistency ------------------------------------------------- */

/* Every field that is read must lie inside its struct. Values are all
 * <= RS_STRUCT_MAX, so the sums below cannot overflow. */
static int check_layout(const rs_layout *l, char *err, size_t errlen)
{
    const uint32_t a = l->atomic_long_size;
    struct {
        const char *what;
        uint32_t off, width, size;
    } f[] = {
        { "atomic_long_t.counter", l->atomic_long_counter, 8, a },
        { "printk_ringbuffer.desc_ring", l->prb_desc_ring, l->dr_size,
          l->prb_size },
        { "printk_ringbuffer.text_data_ring", l->prb_text_data_ring,
          l->data_size, l->prb_size },
        { "printk_ringbuffer.fail", l->prb_fail, a, l->prb_size },
        { "prb_desc_ring.count_bits", l->dr_count_bits, 4, l->dr_size },
        { "prb_desc_ring.descs", l->dr_descs, 8, l->dr_size },
        { "prb_desc_ring.infos", l->dr_infos, 8, l->dr_size },
        { "prb_desc_ring.head_id", l->dr_head_id, a, l->dr_size },
        { "prb_desc_ring.tail_id", l->dr_tail_id, a, l->dr_size },
        { "prb_desc.state_var", l->desc_state_var, a, l->desc_size },
        { "prb_desc.text_blk_lpos", l->desc_text_blk_lpos, l->lpos_size,
          l->desc_size },
        { "prb_data_blk_lpos.begin", l->lpos_begin, 8, l->lpos_size },
        { "prb_data_blk_lpos.next", l->lpos_next, 8, l->lpos_size },
        { "printk_info.seq", l->info_seq, 8, l->info_size },
        { "printk_info.ts_nsec", l->info_ts_nsec, 8, l->info_size },
        /* text_len u16, then facility u8 and the flags:5/level:3 byte */
        { "printk_info.text_len", l->info_text_len, 4, l->info_size },
        { "printk_info.caller_id", l->info_caller_id, 4, l->info_size },
        { "printk_info.dev_info", l->info_dev_info, l->devinfo_size,
          l->info_size },
        { "dev_printk_info.subsystem", l->devinfo_subsystem,
          l->subsystem_len, l->devinfo_size },
        { "dev_printk_info.device", l->devinfo_device, l->device_len,
          l->devinfo_size },
        { "prb_data_ring.size_bits", l->data_size_bits, 4, l->data_size },
        { "prb_data_ring.data", l->data_data, 8, l->data_size },
        { "prb_data_ring.head_lpos", l->data_head_lpos, a, l->data_size },
        { "prb_data_ring.tail_lpos", l->data_tail_lpos, a, l->data_size },
    };
    size_t i;

    if (a < 8) {
        RS_SETERR("SIZE(atomic_long_t)=%u: need 8", (unsigned)a);
        return RS_ERR_LAYOUT;
    }
    if (l->desc_size == 0 || l->info_size == 0) {
        RS_SETERR("SIZE(prb_desc)/SIZE(printk_info) is 0");
        return RS_ERR_LAYOUT;
    }
    for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        if (f[i].off + f[i].width > f[i].size) {
            RS_SETERR("OFFSET(%s)=%u + %u bytes exceeds its struct size %u",
                   f[i].what, (unsigned)f[i].off, (unsigned)f[i].width,
                   (unsigned)f[i].size);
            return RS_ERR_LAYOUT;
        }
    }
    return RS_OK;
}

/* ---- the parser --------------------------------------------------------- */

static int parse_text(const char *text, size_t len, rs_vmci *vi, bool full,
                      char *err, size_t errlen)
{
    size_t pos = 0, i;
    unsigned line = 0;
    int r;

    if (!vi || (!text && len)) {
        RS_SETERR("NULL argument");
        return RS_ERR_ARG;
    }
    memset(vi, 0, sizeof(*vi));
    if (len > RS_VMCI_TEXT_MAX) {
        RS_SETERR("VMCOREINFO text of %zu bytes exceeds %u", len,
               RS_VMCI_TEXT_MAX);
        return RS_ERR_TOO_BIG;
    }

    while (pos < len && text[pos] != '\0') {
        const char *l = text + pos, *eq;
        size_t e = pos, n;
        int k;

        line++;
        while (e < len && text[e] != '\n' && text[e] != '\0') {
            unsigned char c = (unsigned char)text[e];

            if (c < 0x20 || c > 0x7e) {
                RS_SETERR("line %u: non-printable byte 0x%02x at offset %zu",
                       line, c, e);
                return RS_ERR_SYNTAX;
            }
            e++;
        }
        n = e - pos;
        if (n > RS_VMCI_LINE_MAX) {
            RS_SETERR("line %u: longer than %u bytes", line, RS_VMCI_LINE_MAX);
            return RS_ERR_SYNTAX;
        }
        if (e == len || text[e] == '\0') {
            /* unterminated last line: the kernel cut it at one page */
            vi->text_truncated = true;
            break;
        }
        pos = e + 1;
        if (n == 0) {
            continue;
        }
        eq = memchr(l, '=', n);
        if (!eq || eq == l) {
            RS_SETERR("line %u: not KEY=VALUE", line);
            return RS_ERR_SYNTAX;
        }
        k = find_key(l, (size_t)(eq - l));
        if (k < 0) {
            continue;
        }
        if ((vi->have >> k) & 1) {
            RS_SETERR("duplicate %s", keys[k].name);
            return RS_ERR_DUP;
        }
        r = store_value(vi, &keys[k], eq + 1, n - (size_t)(eq + 1 - l));
        if (r != RS_OK) {
            RS_SETERR("bad value for %s on line %u (%s)", keys[k].name, line,
                   rs_strerror(r));
            return r;
        }
        vi->have |= (uint64_t)1 << k;
    }

    if (!have_key(vi, "OSRELEASE")) {
        RS_SETERR("missing OSRELEASE");
        return RS_ERR_MISSING;
    }
    if (!full) {
        return RS_OK;
    }
    if (!have_key(vi, "SYMBOL(prb)")) {
        if (have_key(vi, "SYMBOL(log_buf)")) {
            RS_SETERR("kernel %s has SYMBOL(log_buf) but no SYMBOL(prb): "
                   "older than 5.10, no lockless printk ring",
                   vi->osrelease);
            return RS_ERR_OLD_KERNEL;
        }
        RS_SETERR("missing SYMBOL(prb)");
        return RS_ERR_MISSING;
    }
    for (i = 0; i < NKEYS; i++) {
        if (keys[i].req == R_REQ && !((vi->have >> i) & 1)) {
            RS_SETERR("missing %s", keys[i].name);
            return RS_ERR_MISSING;
        }
    }
    if (!have_key(vi, "SYMBOL(init_top_pgt)") &&
        !have_key(vi, "SYMBOL(swapper_pg_dir)")) {
        RS_SETERR("missing SYMBOL(init_top_pgt)");
        return RS_ERR_MISSING;
    }
    if (vi->pagesize != 4096) {
        RS_SETERR("PAGESIZE=%llu: only 4096 is supported",
               (unsigned long long)vi->pagesize);
        return RS_ERR_RANGE;
    }
    if (vi->kernel_image_size == 0 ||
        vi->kernel_image_size > (1ull << 30)) {
        vi->kernel_image_size = 1ull << 30;
    }
    return check_layout(&vi->lay, err, errlen);
}

int rs_vmci_parse(const char *text, size_t len, rs_vmci *out,
                  char *err, size_t errlen)
{
    if (err && errlen) {
        err[0] = '\0';
    }
    return parse_text(text, len, out, true, err, errlen);
}

int rs_vmci_check_text(const char *text, size_t len)
{
    rs_vmci tmp;

    return parse_text(text, len, &tmp, false, NULL, 0);
}

/* ---- note discovery ----------------------------------------------------- */

static const char note_name[12] = "VMCOREINFO";  /* + 2 NULs */

/* 24-byte header: namesz 11, descsz in (0, max], type 0, "VMCOREINFO\0" */
static bool note_hdr_ok(const uint8_t *p, uint32_t *descsz)
{
    uint32_t d;

    if (rs_le32(p) != 11 || rs_le32(p + 8) != 0 ||
        memcmp(p + 12, note_name, 11) != 0) {
        return false;
    }
    d = rs_le32(p + 4);
    if (d == 0 || d > RS_VMCI_TEXT_MAX) {
        return false;
    }
    *descsz = d;
    return true;
}

const char *rs_note_find(const void *buf, size_t len, size_t *text_len,
                         size_t *note_off)
{
    const uint8_t *b = buf;
    size_t off;

    if (!b || !text_len || len < RS_NOTE_HDR_SIZE) {
        return NULL;
    }
    for (off = 0; off <= len - RS_NOTE_HDR_SIZE; off += 4) {
        uint32_t d;

        if (b[off] != 11 || !note_hdr_ok(b + off, &d)) {
            continue;
        }
        if (d > len - off - RS_NOTE_HDR_SIZE) {
            continue;
        }
        if (rs_vmci_check_text((const char *)b + off + RS_NOTE_HDR_SIZE,
                               d) != RS_OK) {
            continue;
        }
        *text_len = d;
        if (note_off) {
            *note_off = off;
        }
        return (const char *)b + off + RS_NOTE_HDR_SIZE;
    }
    return NULL;
}

typedef struct scan_ctx {
    rs_read_fn rd;
    void *opaque;
    const rs_budget *budget;
    uint64_t step;
    char *text;
    size_t *text_len;
    uint64_t *note_gpa;
    uint64_t stop;              /* budget spent: resume here */
    bool stopped;
} scan_ctx;

/* A read failed: for want of budget (stop at gpa), or unreadable? */
static bool scan_out(scan_ctx *c, uint64_t gpa)
{
    if (rs_budget_out(c->budget)) {
        c->stop = gpa;
        c->stopped = true;
        return true;
    }
    return false;
}

/* Check the candidate at gpa whose header is hdr; on success fill outputs. */
static bool scan_candidate(scan_ctx *c, uint64_t gpa, const uint8_t *hdr)
{
    uint32_t d;

    if (!note_hdr_ok(hdr, &d)) {
        return false;
    }
    if (gpa > UINT64_MAX - RS_NOTE_HDR_SIZE - d) {
        return false;
    }
    if (c->rd(c->opaque, gpa + RS_NOTE_HDR_SIZE, c->text, d) != 0) {
        scan_out(c, gpa);
        return false;
    }
    if (rs_vmci_check_text(c->text, d) != RS_OK) {
        return false;
    }
    *c->text_len = d;
    if (c->note_gpa) {
        *c->note_gpa = gpa;
    }
    return true;
}

/* Candidates in [base, base + n) whose memory is buf[0..n). */
static bool scan_buf(scan_ctx *c, uint64_t base, const uint8_t *buf,
                     size_t n)
{
    uint8_t hdr[RS_NOTE_HDR_SIZE];
    size_t o;

    for (o = 0; o < n && !c->stopped; o += c->step) {
        const uint8_t *h = buf + o;

        if (o + RS_NOTE_HDR_SIZE > n) {
            /* straddles the end of what we have: read it on its own */
            if (buf[o] != 11 || base + o > UINT64_MAX - RS_NOTE_HDR_SIZE) {
                continue;
            }
            if (c->rd(c->opaque, base + o, hdr, sizeof(hdr)) != 0) {
                scan_out(c, base + o);
                continue;
            }
            h = hdr;
        }
        if (h[0] == 11 && scan_candidate(c, base + o, h)) {
            return true;
        }
    }
    return false;
}

int rs_note_scan(rs_read_fn rd, void *opaque, uint64_t gpa,
                 uint64_t max_bytes, unsigned flags,
                 void *work, size_t work_len,
                 char *text, size_t text_cap, size_t *text_len,
                 uint64_t *note_gpa)
{
    uint64_t resume;

    return rs_note_scan_budget(rd, opaque, NULL, gpa, max_bytes, flags, work,
                               work_len, text, text_cap, text_len, note_gpa,
                               &resume);
}

int rs_note_scan_budget(rs_read_fn rd, void *opaque, const rs_budget *budget,
                        uint64_t gpa, uint64_t max_bytes, unsigned flags,
                        void *work, size_t work_len,
                        char *text, size_t text_cap, size_t *text_len,
                        uint64_t *note_gpa, uint64_t *resume)
{
    scan_ctx c;
    uint64_t end, cur, chunk;

    if (!rd || !work || work_len < 4096 || !text ||
        text_cap < RS_VMCI_TEXT_MAX || !text_len || !resume) {
        return RS_ERR_ARG;
    }
    memset(&c, 0, sizeof(c));
    c.rd = rd;
    c.opaque = opaque;
    c.budget = budget;
    c.step = (flags & RS_SCAN_PAGE_STARTS) ? 4096 : 4;
    c.text = text;
    c.text_len = text_len;
    c.note_gpa = note_gpa;

    end = max_bytes > UINT64_MAX - gpa ? UINT64_MAX : gpa + max_bytes;
    *resume = end;
    if (gpa > UINT64_MAX - (c.step - 1)) {
        return RS_ERR_NOT_FOUND;
    }
    cur = (gpa + c.step - 1) & ~(c.step - 1);
    if (flags & RS_SCAN_PAGE_STARTS) {
        /*
         * Only a header at a page start can match: read just those bytes,
         * and the text only behind a header that is exactly a VMCOREINFO
         * note's (scan_candidate() checks all 24 bytes first).
         */
        uint8_t hdr[RS_NOTE_HDR_SIZE];

        for (; cur < end && !c.stopped; cur += 4096) {
            if (rd(opaque, cur, hdr, sizeof(hdr)) != 0) {
                scan_out(&c, cur);
            } else if (hdr[0] == 11 && scan_candidate(&c, cur, hdr)) {
                return RS_OK;
            }
            if (cur > UINT64_MAX - 4096) {
                break;
            }
        }
        if (c.stopped) {
            *resume = c.stop;
            return RS_ERR_BUDGET;
        }
        return RS_ERR_NOT_FOUND;
    }
    chunk = work_len < RS_READ_MAX ? work_len : RS_READ_MAX;
    chunk &= ~(uint64_t)4095;

    while (cur < end && !c.stopped) {
        /* chunks end on multiples of the chunk size */
        uint64_t n = chunk - cur % chunk;
        uint64_t p;

        if (n > end - cur) {
            n = end - cur;
        }
        if (rd(opaque, cur, work, (size_t)n) == 0) {
            if (scan_buf(&c, cur, work, (size_t)n)) {
                return RS_OK;
            }
        } else if (!scan_out(&c, cur)) {
            /* a hole somewhere: go page by page, skip what fails */
            for (p = cur; p < cur + n && !c.stopped; ) {
                uint64_t pn = 4096 - (p & 4095);

                if (pn > cur + n - p) {
                    pn = cur + n - p;
                }
                if (rd(opaque, p, work, (size_t)pn) != 0) {
                    scan_out(&c, p);
                } else if (scan_buf(&c, p, work, (size_t)pn)) {
                    return RS_OK;
                }
                p += pn;
            }
        }
        cur += n;
    }
    if (c.stopped) {
        *resume = c.stop;
        return RS_ERR_BUDGET;
    }
    return RS_ERR_NOT_FOUND;
}

/* ---- x86_64 address translation ----------------------------------------- */

int rs_vm_init(rs_vm *vm, const rs_vmci *vi, rs_read_fn rd, void *opaque)
{
    if (!vm || !vi || !rd) {
        return RS_ERR_ARG;
    }
    memset(vm, 0, sizeof(*vm));
    vm->read = rd;
    vm->opaque = opaque;
    vm->phys_base = (uint64_t)vi->phys_base;
    vm->image_size = vi->kernel_image_size;
    if (vm->image_size == 0 || vm->image_size > (1ull << 30)) {
        vm->image_size = 1ull << 30;
    }
    vm->entry_mask = RS_PTE_ADDR_MASK & ~vi->sme_mask;
    vm->l5 = vi->pgtable_l5;
    if (vi->sym_top_pgt >= RS_START_KERNEL_MAP &&
        vi->sym_top_pgt - RS_START_KERNEL_MAP < vm->image_size) {
        vm->root = (vi->sym_top_pgt - RS_START_KERNEL_MAP + vm->phys_base) &
                   vm->entry_mask;
        vm->have_root = true;
    }
    return RS_OK;
}

void rs_vm_set_cr3(rs_vm *vm, uint64_t cr3, bool pti)
{
    vm->root = cr3 & vm->entry_mask;
    if (pti) {
        vm->root &= ~(uint64_t)0x1000;
    }
    vm->have_root = true;
}

int rs_vm_translate(const rs_vm *vm, uint64_t va, uint64_t *pa,
                    uint64_t *page_left)
{
    uint64_t table, top;
    int shift;

    if (page_left) {
        *page_left = 4096 - (va & 4095);
    }
    if (va >= RS_START_KERNEL_MAP && va - RS_START_KERNEL_MAP < vm->image_size) {
        *pa = va - RS_START_KERNEL_MAP + vm->phys_base;
        return RS_OK;
    }
    top = va >> (vm->l5 ? 56 : 47);
    if (top != 0 && top != (vm->l5 ? 0xffull : 0x1ffffull)) {
        return RS_ERR_XLATE;
    }
    if (!vm->have_root) {
        return RS_ERR_XLATE;
    }
    table = vm->root;
    /* fixed depth: self-referencing entries cannot make this loop */
    for (shift = vm->l5 ? 48 : 39; shift >= 12; shift -= 9) {
        uint8_t eb[8];
        uint64_t e, size;

        if (vm->read(vm->opaque, table + ((va >> shift) & 511) * 8, eb, 8)) {
            return RS_ERR_READ;
        }
        e = rs_le64(eb);
        if (!(e & 1)) {
            return RS_ERR_XLATE;
        }
        if (shift == 12) {
            *pa = (e & vm->entry_mask) | (va & 4095);
            return RS_OK;
        }
        if (e & 0x80) {
            if (shift > 30) {
                return RS_ERR_XLATE;    /* PS is reserved in PML5E/PML4E */
            }
            size = 1ull << shift;       /* 1 GiB or 2 MiB */
            *pa = (e & vm->entry_mask & ~(size - 1)) | (va & (size - 1));
            return RS_OK;
        }
        table = e & vm->entry_mask;
    }
    return RS_ERR_XLATE;
}

int rs_vm_read(const rs_vm *vm, uint64_t va, void *buf, size_t len)
{
    uint8_t *out = buf;

    if (!vm || (!buf && len)) {
        return RS_ERR_ARG;
    }
    if (len == 0) {
        return RS_OK;
    }
    if (len > RS_READ_MAX) {
        return RS_ERR_TOO_BIG;
    }
    if (va > UINT64_MAX - (len - 1)) {
        return RS_ERR_XLATE;
    }
    while (len) {
        uint64_t pa, left;
        size_t n;
        int r = rs_vm_translate(vm, va, &pa, &left);

        if (r != RS_OK) {
            return r;
        }
        n = left < len ? (size_t)left : len;
        if (pa > UINT64_MAX - (n - 1) || vm->read(vm->opaque, pa, out, n)) {
            return RS_ERR_READ;
        }
        out += n;
        va += n;
        len -= n;
    }
    return RS_OK;
}
