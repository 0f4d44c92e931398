#!/usr/bin/env python3
"""Write the seed corpus of a libFuzzer target in tests/fuzz.

Usage: gen-seeds.py TARGET OUTDIR   (TARGET: ring, match, l1, state, or
qemu: QEMU's generic-fuzz against ringside-serial)

Seeds are small programs in each target's input format (see the comment at
the top of fuzz-TARGET.c) that start the fuzzer where the interesting code
is: records printed and judged ok, torn, cut, corrupt, dropped notices,
the backlog replayed on attach, nested brackets and takeovers.  They are
generated rather than committed so that they follow the format.
"""
import os
import sys

# cfg bits shared by fuzz-match.c and fuzz-l1.c
TIME, TIME_CALLER, SYSLOG_TIME, NOPREFIX = 0, 1, 2, 3
DYN = 4
ATTACH = 128


def loglevel(n):
    return (n & 15) << 3


def match_seeds():
    raw, prn, cut, bad, torn, notice, push, patch, hook, att, det, res, fin, \
        tick, budget = range(15)
    whole = [prn, 0, prn, 1, prn, 2, prn, 3, prn, 5, prn, 7]
    # the static ring has wrapped over its oldest blocks (distrusted)
    yield "static", bytes([ATTACH | TIME]) + bytes(whole + [fin])
    yield "ok-dyn", bytes([ATTACH | DYN | TIME_CALLER]) + bytes(
        [prn, k][i] for k in range(14) for i in range(2)) + bytes([fin])
    yield "ok-syslog-loglevel", bytes([ATTACH | DYN | SYSLOG_TIME | loglevel(7)]) \
        + bytes(whole + [fin])
    yield "noprefix", bytes([ATTACH | DYN | NOPREFIX]) + bytes(whole + [fin])
    # the device's read budget: a lone newline costs thousands of reads
    yield "budget", bytes([DYN | TIME]) + bytes(
        [budget] + whole + [raw, 2, 13, 10, att, torn, 1, 2, 20, prn, 0, fin])
    yield "backlog-replay", bytes([DYN | TIME]) + bytes(
        whole + [att, prn, 8, det, prn, 9, att, fin])
    yield "torn-cut-corrupt", bytes([ATTACH | DYN | TIME]) + bytes(
        [prn, 0, torn, 1, 2, 20, cut, 3, 9, raw, 2, 13, 10,
         bad, 5, 17, ord("X"), prn, 7, fin])
    yield "notice-skip", bytes([ATTACH | DYN | TIME]) + bytes(
        [prn, 0, notice, 3, prn, 4, prn, 9, fin])
    text = b"pushed while the console read it"
    yield "push", bytes([ATTACH | DYN | TIME]) + bytes(
        [prn, 0, push, 6 | 2 << 3, len(text)]) + text + bytes(
        [prn, 16, prn, 17, tick, 200, fin])
    yield "user", bytes([ATTACH | DYN | TIME]) + bytes([raw, 9]) + \
        b"login: \r\n" + bytes([prn, 1, raw, 6]) + b"$ ls\r\n" + bytes([fin])
    # a concurrent writer: a descriptor's state changes at a later read
    yield "hook", bytes([ATTACH | TIME]) + bytes(
        [hook, 0x00, 0x70, 0x00, 8, 0, 0, 0, 0, 0, 0, 0, 0xc0,
         prn, 0, prn, 1, fin])


def l1_seeds():
    begin, end, byt, prn, cut, bad, nest, notice, push, patch, hook, att, \
        reset, fin, tick, budget = range(16)
    cpu0, cpu1, cpu3 = 1, 2, 4     # writer bytes: vCPU (w % 20) - 1
    whole = [prn, cpu0, 0, prn, cpu0, 1, prn, cpu1, 2, prn, cpu0, 3,
             prn, cpu0, 5, prn, cpu0, 7]
    yield "static", bytes([ATTACH | TIME]) + bytes(whole + [fin])
    yield "ok-dyn", bytes([ATTACH | DYN | TIME_CALLER]) + bytes(
        [prn, cpu0, k][i] for k in range(14) for i in range(3)) + \
        bytes([fin])
    yield "budget", bytes([ATTACH | DYN | TIME]) + bytes(
        [budget] + whole + [prn, cpu0, 13, fin])
    yield "loglevel", bytes([ATTACH | DYN | SYSLOG_TIME | loglevel(5)]) + bytes(
        whole + [fin])
    yield "nested-takeover", bytes([ATTACH | DYN | TIME]) + bytes(
        [prn, cpu0, 0, nest, cpu0, 1, cpu0, 2, 10,
         nest, cpu0, 3, cpu1, 5, 7, prn, cpu3, 8, fin])
    yield "cut-corrupt-skip", bytes([ATTACH | DYN | TIME]) + bytes(
        [prn, cpu0, 0, cut, cpu0, 1, 6, end, cpu0, bad, cpu0, 2, 4, ord("Z"),
         prn, cpu0, 9, fin])
    yield "notice", bytes([ATTACH | DYN | TIME]) + bytes(
        [prn, cpu0, 0, notice, cpu0, 1, 3, notice, cpu0, 64 | 2, 0,
         prn, cpu0, 2, prn, cpu0, 6, fin])
    yield "unchecked-then-ring", bytes([DYN | TIME]) + bytes(
        [prn, cpu0, 0, att, 1, prn, cpu0, 1, reset, prn, cpu0, 2, fin])
    yield "bytes-lost-user", bytes([ATTACH | DYN | TIME]) + bytes(
        [byt, 0, 7]) + b"login: " + bytes([prn, cpu0 | 128, 1, byt, 1, 2]) + \
        b"\r\n" + bytes([fin])
    text = b"pushed while the console read it"
    yield "push", bytes([ATTACH | DYN | TIME]) + bytes(
        [prn, cpu0, 0, push, 6 | 2 << 3, len(text)]) + text + bytes(
        [prn, cpu0, 16, prn, cpu0, 17, tick, 9, fin])
    yield "far-seq", bytes([ATTACH | DYN | TIME]) + bytes(
        [begin, cpu0, 128, 0xff, 0xff, 0xff, 0x7f, byt, cpu0, 3]) + \
        b"x\r\n" + bytes([end, cpu0, fin])


def state_seeds():
    # [cfg][n][steps (kind, k, x)][changes][later steps]; see fuzz-state.c
    L1, RING_AFTER, BUDGET, REPLAY = 1, 2, 4, 8
    whole = b"".join(bytes([0, k, 0]) for k in range(6))
    torn_cut = bytes([3, 6, 2, 1, 7, 9])
    stop = bytes([5, 0, 0])

    def field(i, idx, v):
        return bytes([0, i, idx]) + v.to_bytes(8, "little")

    def st(cfg, attached, steps, changes, later):
        n = len(steps) // 3 | (128 if attached else 0)
        return bytes([cfg, n]) + steps + changes + bytes([2]) + later
    # match fields: 1 len, 6 cursor, 12 window, 18 rec_len, 19 rec_off,
    # 21 resid_len, 24 backlog_len, 34 replay (fuzz-state.c's table)
    yield "match-len", st(RING_AFTER, True, whole + torn_cut,
                          field(1, 0, 5), whole + stop)
    yield "match-cursor", st(RING_AFTER, True, whole,
                             field(6, 0, 1 << 40) + field(12, 3, 0x23),
                             whole + stop)
    yield "match-backlog", st(RING_AFTER | REPLAY, False, whole,
                              field(24, 0, 36), whole + stop)
    yield "match-budget", st(RING_AFTER | BUDGET, True, whole + torn_cut,
                             field(34, 0, 2), whole + stop)
    # l1 fields: 0 depth, 2 next, 6 partial_seq, 7 partial_kind, 8 window;
    # frames (128 | i): 6 by_cpu, 7 len
    yield "l1-depth", st(L1 | RING_AFTER, True, whole + torn_cut,
                         field(0, 1, 1), whole + stop)
    yield "l1-frame", st(L1 | RING_AFTER, True, whole + bytes([1, 3, 9]),
                         field(128 | 7, 4, 1000) + field(128 | 6, 4, 3),
                         whole + stop)
    yield "l1-partial", st(L1 | RING_AFTER | BUDGET, True, whole + torn_cut,
                           field(6, 2, 11) + field(7, 2, 2), whole + stop)


# generic-fuzz (QEMU's device fuzzer, scripts/fuzz-qemu.sh): commands of
# tests/qtest/fuzz/generic_fuzz.c separated by "FUZZ"; the device's ports
# are fuzzable region 0 (the UART, 8 ports) and 1 (the level 1 window).
GF_OUT, GF_DMA, GF_STEP = 1, 7, 9
GF_BYTE, GF_LONG = 0, 2
UART, EXT = 0, 1


def gf_out(size, region, offset, value):
    return bytes([GF_OUT, size, region]) + offset.to_bytes(2, "little") + \
        value.to_bytes(4, "little")


def gf_note():
    """A VMCOREINFO ELF note (6.1 layout, kernel image at PA 0) that the
    device reads where the guest announces it: generic-fuzz writes it into
    guest RAM as a DMA pattern when the device reads there."""
    sym = {"swapper_pg_dir": 0xffffffff81000000, "prb": 0xffffffff81004000,
           "printk_rb_static": 0xffffffff81004100,
           "init_top_pgt": 0xffffffff81000000}
    layout = [
        ("printk_ringbuffer", 88, [("desc_ring", 0), ("text_data_ring", 48),
                                   ("fail", 80)]),
        ("prb_desc_ring", 48, [("count_bits", 0), ("descs", 8),
                               ("infos", 16), ("head_id", 24),
                               ("tail_id", 32)]),
        ("prb_desc", 24, [("state_var", 0), ("text_blk_lpos", 8)]),
        ("prb_data_blk_lpos", 16, [("begin", 0), ("next", 8)]),
        ("printk_info", 88, [("seq", 0), ("ts_nsec", 8), ("text_len", 16),
                             ("caller_id", 20), ("dev_info", 24)]),
        ("dev_printk_info", 64, [("subsystem", 0), ("device", 16)]),
        ("prb_data_ring", 32, [("size_bits", 0), ("data", 8),
                               ("head_lpos", 16), ("tail_lpos", 24)]),
        ("atomic_long_t", 8, [("counter", 0)]),
        ("latched_seq", 24, [("val", 8)]),
    ]
    lines = ["OSRELEASE=6.1.0-57-amd64", "BUILD-ID=0123456789abcdef",
             "PAGESIZE=4096"]
    lines += ["SYMBOL(%s)=%x" % kv for kv in sym.items()]
    for name, size, offs in layout:
        lines.append("SIZE(%s)=%d" % (name, size))
        lines += ["OFFSET(%s.%s)=%d" % (name, f, o) for f, o in offs]
    lines += ["LENGTH(printk_info_subsystem)=16",
              "LENGTH(printk_info_device)=48", "NUMBER(phys_base)=-16777216",
              "NUMBER(pgtable_l5_enabled)=0", "KERNELOFFSET=0",
              "NUMBER(KERNEL_IMAGE_SIZE)=1073741824", "NUMBER(sme_mask)=0"]
    text = ("\n".join(lines) + "\n").encode()
    return (11).to_bytes(4, "little") + len(text).to_bytes(4, "little") + \
        (0).to_bytes(4, "little") + b"VMCOREINFO\0\0" + text


def qemu_seeds():
    sep = b"FUZZ"
    line = b"[    0.000000] Linux version 6.1.0-57-amd64\r\n"
    console = [gf_out(GF_BYTE, UART, 0, c) for c in line]
    knock = [gf_out(GF_BYTE, UART, 7, c) for c in b"ring"] + \
        [bytes([0, GF_BYTE, UART, 7, 0])] * 4
    announce = [bytes([GF_DMA, 0, 0]) + gf_note(),
                gf_out(GF_LONG, EXT, 8, 0), gf_out(GF_LONG, EXT, 8, 0x100000),
                gf_out(GF_LONG, EXT, 12, 1 | 1 << 8)]
    bracket = [gf_out(GF_LONG, EXT, 0, 0)] + console + \
        [gf_out(GF_LONG, EXT, 4, 0)]
    steps = [bytes([GF_STEP])] * 4
    yield "console", sep.join(console + steps)
    yield "knock", sep.join(knock)
    yield "announce", sep.join(announce + bracket + steps)
    yield "scan", sep.join([bytes([GF_DMA, 0, 0]) + gf_note()] + steps * 8)


def ring_seeds():
    # [mode][hook_at u16] then patches; see fuzz-ring.c
    for mode in (0, 1, 2, 4 | 2, 8, 16 | 1):
        yield "mode%d" % mode, bytes([mode, 5, 0])


def main():
    gen = {"ring": ring_seeds, "match": match_seeds, "l1": l1_seeds,
           "state": state_seeds, "qemu": qemu_seeds}
    if len(sys.argv) != 3 or sys.argv[1] not in gen:
        sys.exit("usage: gen-seeds.py ring|match|l1|state|qemu OUTDIR")
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for name, data in gen[sys.argv[1]]():
        with open(os.path.join(out, "seed-" + name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
