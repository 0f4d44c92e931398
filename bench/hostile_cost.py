#!/usr/bin/env python3
"""What a hostile guest can make ringside-serial cost the main loop.

Drives the real device in the QEMU fork under the qtest accelerator: each
case starts a QEMU, writes a hostile guest memory image (a printk ring, a
note, pages that look like notes) with qtest memory writes, then does the
hostile thing through the device's ports or lets its timers tick.  The
device meters itself (ringside-serial-attach.c): the worst host time spent
in one register access and in one timer tick, and the guest-memory reads
each made, read back as QOM counters ("cost-max-access-ns", ...).  Prints
one row per case against the targets: at most 1 ms per access, 5 ms per
tick, and at pace=line (case pace-line) 10% of the line's time per second
of it, all actions together.

Usage: hostile_cost.py [--qemu PATH] [--case NAME]... [--runs N]
(QEMU defaults to $RINGSIDE_CACHE/qemu/build/qemu-system-x86_64.)
"""
import base64
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

CACHE = os.environ.get("RINGSIDE_CACHE",
                       os.path.expanduser("~/.cache/ringside"))
TARGET_ACCESS_NS = 1_000_000
TARGET_TICK_NS = 5_000_000
TARGET_LINE_SHARE = 0.10     # of a paced line's time, all actions together

COM1 = 0x3f8
EXT = 0x4f0
KMAP = 0xffffffff80000000
DIRECT_MAP = 0xffff888000000000     # page_offset_base: reached by a page walk
NOTE_PA = 0x200000
PRB_PTR_PA = 0x300000
PRB_PA = 0x300100
DESCS, INFOS, DATA = 0x1000000, 0x2000000, 0x3000000
DESC_SIZE, INFO_SIZE = 24, 88
FINALIZED = 2 << 62

LAYOUT = [
    ("SIZE(printk_ringbuffer)", 88), ("OFFSET(printk_ringbuffer.desc_ring)", 0),
    ("OFFSET(printk_ringbuffer.text_data_ring)", 48),
    ("OFFSET(printk_ringbuffer.fail)", 80), ("SIZE(prb_desc_ring)", 48),
    ("OFFSET(prb_desc_ring.count_bits)", 0), ("OFFSET(prb_desc_ring.descs)", 8),
    ("OFFSET(prb_desc_ring.infos)", 16), ("OFFSET(prb_desc_ring.head_id)", 24),
    ("OFFSET(prb_desc_ring.tail_id)", 32), ("SIZE(prb_desc)", 24),
    ("OFFSET(prb_desc.state_var)", 0), ("OFFSET(prb_desc.text_blk_lpos)", 8),
    ("SIZE(prb_data_blk_lpos)", 16), ("OFFSET(prb_data_blk_lpos.begin)", 0),
    ("OFFSET(prb_data_blk_lpos.next)", 8), ("SIZE(printk_info)", 88),
    ("OFFSET(printk_info.seq)", 0), ("OFFSET(printk_info.ts_nsec)", 8),
    ("OFFSET(printk_info.text_len)", 16), ("OFFSET(printk_info.caller_id)", 20),
    ("OFFSET(printk_info.dev_info)", 24), ("SIZE(dev_printk_info)", 64),
    ("OFFSET(dev_printk_info.subsystem)", 0), ("LENGTH(printk_info_subsystem)", 16),
    ("OFFSET(dev_printk_info.device)", 16), ("LENGTH(printk_info_device)", 48),
    ("SIZE(prb_data_ring)", 32), ("OFFSET(prb_data_ring.size_bits)", 0),
    ("OFFSET(prb_data_ring.data)", 8), ("OFFSET(prb_data_ring.head_lpos)", 16),
    ("OFFSET(prb_data_ring.tail_lpos)", 24), ("SIZE(atomic_long_t)", 8),
    ("OFFSET(atomic_long_t.counter)", 0),
]


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def note(text):
    t = text.encode()
    return struct.pack("<III", 11, len(t), 0) + b"VMCOREINFO\0\0" + t


def vmcoreinfo():
    t = "OSRELEASE=6.1.0-bench\nPAGESIZE=4096\n"
    t += "SYMBOL(prb)=%x\n" % (KMAP + PRB_PTR_PA)
    t += "SYMBOL(init_top_pgt)=%x\n" % (KMAP + 0x1000)
    t += "NUMBER(phys_base)=0\n"
    return t + "".join("%s=%d\n" % kv for kv in LAYOUT)


def hostile_note_text():
    """4 KiB of well-formed lines no parser stops early on: unknown keys
    of the length of real ones, no OSRELEASE until nothing is left."""
    out, i = "", 0
    while True:
        line = "OFFSET(printk_ringbuffer.not_a_key_%06d)=%d\n" % (i, i)
        if len(out) + len(line) > 4096:
            return out
        out += line
        i += 1


class Qemu:
    def __init__(self, dev_opts="", events="file", mem="128M",
                 device="ringside-serial,id=rs,chardev=con,events=ev"):
        self.dir = tempfile.mkdtemp(prefix="ringside-hostile-")
        qsock = os.path.join(self.dir, "qtest.sock")
        msock = os.path.join(self.dir, "qmp.sock")
        ls = []
        for p in (qsock, msock):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(p)
            s.listen(1)
            ls.append(s)
        ev = ("-chardev file,id=ev,path=%s" % os.path.join(self.dir, "events")
              if events == "file" else
              "-chardev file,id=ev,path=/dev/full")
        qemu = arg("--qemu", os.path.join(CACHE, "qemu/build/qemu-system-x86_64"))
        cmd = ("%s -qtest unix:%s -qtest-log /dev/null -chardev socket,path=%s,id=mon "
               "-mon chardev=mon,mode=control -display none -nodefaults "
               "-machine pc -m %s -accel qtest "
               "-chardev file,id=con,path=%s %s "
               "-device %s%s"
               % (qemu, qsock, msock, mem, os.path.join(self.dir, "console"),
                  ev, device, dev_opts))
        self.proc = subprocess.Popen(cmd.split(), cwd=os.path.dirname(qemu))
        self.q = ls[0].accept()[0]
        self.m = ls[1].accept()[0]
        self.qf = self.q.makefile("rb")
        self.mf = self.m.makefile("rb")
        self.mf.readline()
        self.qmp("qmp_capabilities")

    def qmp(self, cmd, **args):
        self.m.sendall(json.dumps({"execute": cmd, "arguments": args}).encode()
                       + b"\n")
        while True:
            r = json.loads(self.mf.readline())
            if "return" in r or "error" in r:
                return r.get("return", r.get("error"))

    def cmd(self, line):
        self.q.sendall(line.encode() + b"\n")
        while True:
            r = self.qf.readline().decode()
            if r.startswith("OK") or r.startswith("FAIL"):
                return r

    def cmds(self, lines):
        """Pipelined in batches (the answers must not fill the socket
        while commands are still being sent)."""
        for o in range(0, len(lines), 1000):
            batch = lines[o:o + 1000]
            self.q.sendall("".join(l + "\n" for l in batch).encode())
            for _ in batch:
                while not self.qf.readline().startswith(b"OK"):
                    pass

    def write(self, pa, data):
        for o in range(0, len(data), 1 << 20):
            chunk = data[o:o + (1 << 20)]
            self.cmd("b64write 0x%x 0x%x %s" % (pa + o, len(chunk),
                                                 base64.b64encode(chunk).decode()))

    def wq(self, pa, v):
        self.cmd("writeq 0x%x 0x%x" % (pa, v))

    def puts(self, data):
        self.cmds(["outb 0x%x 0x%x" % (COM1, b) for b in data])

    def step(self, ns):
        self.cmd("clock_step %d" % ns)

    def ticks(self, n, ns=100_000_000):
        for _ in range(n):
            self.step(ns)

    def get(self, name):
        return self.qmp("qom-get", path="/machine/peripheral/rs", property=name)

    def cost(self):
        return {k: self.get(k) for k in
                ("cost-max-access-ns", "cost-max-tick-ns",
                 "cost-max-access-cpu-ns", "cost-max-tick-cpu-ns",
                 "cost-max-access-reads", "cost-max-tick-reads",
                 "budget-out-access", "budget-out-tick")}

    def sums(self):
        """The device's metered CPU time and reads, all actions summed."""
        return (self.get("cost-sum-access-cpu-ns") +
                self.get("cost-sum-tick-cpu-ns"),
                self.get("cost-sum-access-reads") +
                self.get("cost-sum-tick-reads"))

    def process_cpu_ns(self):
        """CPU time of all of QEMU's threads, in ns (schedstat)."""
        d = "/proc/%d/task" % self.proc.pid
        return sum(int(open("%s/%s/schedstat" % (d, t)).read().split()[0])
                   for t in os.listdir(d))

    def vclock(self):
        return int(self.cmd("clock_step 0").split()[1])

    def close(self):
        try:
            self.qmp("quit")
        except OSError:
            pass
        self.proc.wait(timeout=30)
        subprocess.run(["rm", "-rf", self.dir])


def page_tables(vm, ranges):
    """Four levels of 4 KiB pages mapping DIRECT_MAP + pa to pa for each
    (pa, length) in ranges, rooted at init_top_pgt (pa 0x1000): every read
    of the ring then costs the device a walk.  Each range lies within one
    2 MiB region; its page table goes at 0x7000, 0x8000, ..."""
    pml4, pdpt, pd = 0x1000, 0x5000, 0x6000
    vm.wq(pml4 + ((DIRECT_MAP >> 39) & 511) * 8, pdpt | 3)
    vm.wq(pdpt, pd | 3)
    for i, (pa, length) in enumerate(ranges):
        pt = 0x7000 + i * 0x1000
        assert pa >> 21 == (pa + length - 1) >> 21
        vm.wq(pd + ((pa >> 21) & 511) * 8, pt | 3)
        ptes = b"".join(struct.pack("<Q", (pa & ~0x1fffff) + (j << 12) | 3)
                        for j in range(512))
        vm.write(pt, ptes)


class Ring:
    """A Linux 6.1 printk ring in guest memory, filled as printk does."""

    def __init__(self, vm, count_bits=12, size_bits=20, note_pa=NOTE_PA,
                 walked=False):
        self.vm, self.cb, self.sb = vm, count_bits, size_bits
        self.n, self.lpos = 0, 0
        base = KMAP
        if walked:
            base = DIRECT_MAP
            page_tables(vm, [(DESCS, DESC_SIZE << count_bits),
                             (INFOS, INFO_SIZE << count_bits),
                             (DATA, 1 << size_bits)])
        vm.wq(PRB_PTR_PA, KMAP + PRB_PA)
        prb = bytearray(88)
        prb[0] = count_bits
        struct.pack_into("<QQ", prb, 8, base + DESCS, base + INFOS)
        prb[48] = size_bits
        struct.pack_into("<Q", prb, 56, base + DATA)
        vm.write(PRB_PA, bytes(prb))
        self.note_pa = note_pa

    def put_note(self):
        self.vm.write(self.note_pa, note(vmcoreinfo()))

    def push_many(self, texts, ts0=1_000_000, step=1_000_000):
        """Records as one memory image per array: fast to write."""
        data, infos, descs = bytearray(), {}, {}
        first_lpos = self.lpos
        for i, text in enumerate(texts):
            t = text.encode()
            rid, size = self.n, (8 + len(t) + 7) & ~7
            idx = rid & ((1 << self.cb) - 1)
            blk = struct.pack("<Q", rid) + t
            data += blk + bytes(size - len(blk))
            info = bytearray(INFO_SIZE)
            struct.pack_into("<QQHBB I", info, 0, rid, ts0 + rid * step,
                             len(t), 0, 6 << 5 | 2, 1)
            infos[idx] = bytes(info)
            descs[idx] = struct.pack("<QQQ", FINALIZED | rid, self.lpos,
                                     self.lpos + size)
            self.lpos += size
            self.n += 1
        self.vm.write(DATA + first_lpos, bytes(data))
        lo = min(infos)
        hi = max(infos)
        ib = bytearray((hi - lo + 1) * INFO_SIZE)
        db = bytearray((hi - lo + 1) * DESC_SIZE)
        for idx in infos:
            ib[(idx - lo) * INFO_SIZE:(idx - lo + 1) * INFO_SIZE] = infos[idx]
            db[(idx - lo) * DESC_SIZE:(idx - lo + 1) * DESC_SIZE] = descs[idx]
        self.vm.write(INFOS + lo * INFO_SIZE, bytes(ib))
        self.vm.write(DESCS + lo * DESC_SIZE, bytes(db))
        self.vm.wq(PRB_PA + 24, self.n - 1)
        self.vm.wq(PRB_PA + 32, 0)
        self.vm.wq(PRB_PA + 64, self.lpos)

    @staticmethod
    def line(seq, text, step=1_000_000, ts0=1_000_000):
        ts = ts0 + seq * step
        return ("[%5d.%06d] %s\r\n" % (ts // 10**9, ts % 10**9 // 1000,
                                       text)).encode()


def attached(vm, records=64, cb=12):
    r = Ring(vm, count_bits=cb)
    r.push_many(["record %d of a hostile guest" % i for i in range(records)])
    r.put_note()
    vm.ticks(3)
    assert vm.get("ring-state") == "attached", vm.get("ring-state")
    return r


# ---- the cases ----

def case_scan(vm):
    """No ring; 32 MiB of pages whose header is a VMCOREINFO note's and
    whose 4 KiB of text parse to the end and fail (finding 4)."""
    page = note(hostile_note_text())[:4096]
    page += bytes(4096 - len(page))
    vm.write(0x4000000, page * 8192)
    vm.ticks(40)


def case_announce(vm):
    """The same hostile note announced through the level 1 window again and
    again, at two addresses (finding 4: ANNOUNCE)."""
    page = note(hostile_note_text())
    vm.write(0x600000, page)
    vm.write(0x700000, page)
    for i in range(200):
        pa = 0x600000 if i % 2 else 0x700000
        vm.cmds(["outl 0x%x 0x%x" % (EXT + 8, pa >> 32),
                 "outl 0x%x 0x%x" % (EXT + 8, pa & 0xffffffff),
                 "outl 0x%x 0x%x" % (EXT + 12, 1 | 1 << 8)])
    vm.ticks(5)


def case_newlines(vm):
    """Attached to a 4096-record ring; the guest writes lone newlines
    (finding 5: a 1-byte line)."""
    attached(vm, records=4000)
    vm.puts(b"\n" * 2000)
    vm.ticks(2)


def case_torn(vm):
    """1,272-byte lines holding 127 timestamps no record has
    (finding 5: torn())."""
    r = attached(vm, records=4000)
    vm.puts(r.line(0, "record 0 of a hostile guest"))
    body = b"[    9.999999]" + b"[    9.999999]" * 90
    for _ in range(20):
        vm.puts(b"[    0.001000] " + body[:1257] + b"\r\n")
    vm.ticks(2)


def case_backlog(vm):
    """256 KiB of console lines before the ring is found, each matching
    nothing, then the note: the replay (finding 5)."""
    r = Ring(vm, count_bits=12)
    r.push_many(["record %d of a hostile guest" % i for i in range(4000)])
    line = b"[    9.999999] " + b"x" * 200 + b"\r\n"
    vm.puts(line * (256 * 1024 // (len(line) + 36) + 8))
    r.put_note()
    vm.ticks(30)


def case_l1_end(vm):
    """Level 1: a bracket for a record 60,000 records ahead of the last,
    then its END (finding 5: judge_skipped)."""
    r = Ring(vm, count_bits=16, size_bits=22)
    for k in range(0, 60000, 10000):
        r.push_many(["r%d" % i for i in range(k, k + 10000)])
    r.put_note()
    pa = NOTE_PA
    vm.cmds(["outl 0x%x 0x%x" % (EXT + 8, 0), "outl 0x%x 0x%x" % (EXT + 8, pa),
             "outl 0x%x 0x%x" % (EXT + 12, 1 | 1 << 8)])
    for seq in (0, 59990, 1, 59999):
        vm.cmds(["outl 0x%x 0x%x" % (EXT, seq)])
        vm.puts(b"x\r\n")
        vm.cmds(["outl 0x%x 0x0" % (EXT + 4)])
    vm.ticks(2)


def case_flood(vm):
    """A well-behaved guest for scale: 500 lines that match their records."""
    r = attached(vm, records=500)
    for i in range(500):
        vm.puts(r.line(i, "record %d of a hostile guest" % i))
    vm.ticks(2)


CHAR_NS = 10 * 10**9 // 115200     # 8N1 at 115200 baud, as the UART rates it
LINE_SECONDS = 4


def drive_line(vm, text):
    """115200 baud 8N1 with the FIFO on, then LINE_SECONDS of line time
    with the transmit FIFO kept full of text, 16 bytes a batch and a clock
    step over their character times.  Returns (process CPU ns, virtual ns)
    of the driving."""
    vm.cmds(["outb 0x%x 0x83" % (COM1 + 3), "outb 0x%x 0x1" % COM1,
             "outb 0x%x 0x0" % (COM1 + 1), "outb 0x%x 0x3" % (COM1 + 3),
             "outb 0x%x 0x7" % (COM1 + 2)])
    chunk = (text * 16)[:16]
    batch = []
    for _ in range(LINE_SECONDS * 115200 // 10 // 16):
        batch += ["outb 0x%x 0x%x" % (COM1, b) for b in chunk]
        batch.append("clock_step %d" % (16 * CHAR_NS + 1))
    t0, c0 = vm.vclock(), vm.process_cpu_ns()
    vm.cmds(batch)
    return vm.process_cpu_ns() - c0, vm.vclock() - t0


def case_pace_line(vm):
    """pace=line at 115200 baud, the ring behind four-level page walks; the
    guest keeps the FIFO full of "x\r\n", lines no record has, for
    LINE_SECONDS of line time (finding 2 of issue 32).  The share of the
    line's time the device takes from the main loop, two ways: its own
    meter (every timer tick and every access that read guest memory), and
    QEMU's CPU time less that of QEMU's own isa-serial driven the same."""
    r = Ring(vm, count_bits=12, walked=True)
    r.push_many(["record %d of a hostile guest" % i for i in range(4000)])
    r.put_note()
    vm.ticks(3)
    assert vm.get("ring-state") == "attached", vm.get("ring-state")
    before = vm.sums()
    cpu, vt = drive_line(vm, b"x\r\n")
    after = vm.sums()
    base = Qemu(device="isa-serial,id=rs,chardev=con")
    try:
        base_cpu, base_vt = drive_line(base, b"x\r\n")
    finally:
        base.close()
    vm.share = max((after[0] - before[0]) / vt, (cpu - base_cpu) / vt)
    vm.extra = ("line time %.1f s: the device's meter %.1f%%, QEMU's CPU "
                "%.1f%% against isa-serial's %.1f%% (+%.1f%%); %d reads, "
                "%d actions cut by line-read-rate" % (
                    vt / 1e9, (after[0] - before[0]) / vt * 100,
                    cpu / vt * 100, base_cpu / base_vt * 100,
                    (cpu - base_cpu) / vt * 100, after[1] - before[1],
                    vm.get("rate-limited")))


def case_events_full(vm):
    """The events backend takes nothing and polls writable (/dev/full):
    host CPU used over 2 s of idling (finding 7)."""
    vm.puts(b"some bytes\r\n" * 50)
    pid = vm.proc.pid
    t0 = cpu(pid)
    time.sleep(2)
    vm.extra = "CPU %.0f%% while idle" % ((cpu(pid) - t0) / 2 * 100)


def cpu(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


CASES = [
    ("scan", case_scan, "", "file"),
    ("announce", case_announce, "", "file"),
    ("newlines", case_newlines, "", "file"),
    ("torn", case_torn, "", "file"),
    ("backlog", case_backlog, "", "file"),
    ("l1-end", case_l1_end, "", "file"),
    ("flood", case_flood, "", "file"),
    ("pace-line", case_pace_line, ",pace=line", "file"),
    # the same with the per-second bound lifted: what it bounds
    ("pace-line-unbounded", case_pace_line,
     ",pace=line,line-read-rate=4294967295", "file"),
    ("events-full", case_events_full, ",ring=off", "full"),
]


def ms(ns):
    return "%.3f" % (ns / 1e6)


def main():
    want = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--case"]
    runs = int(arg("--runs", "1"))
    extra_opts = arg("--opts", "")
    print("| case | worst access: CPU ms, wall ms (reads) "
          "| worst tick: CPU ms, wall ms (reads) "
          "| budget out: accesses, ticks | CPU within 1 ms / 5 ms / 10% "
          "| note |")
    print("|---|---|---|---|---|---|")
    for name, fn, opts, events in CASES:
        if want and name not in want:
            continue
        worst = None
        for _ in range(runs):
            vm = Qemu(opts + extra_opts, events,
                      mem="256M" if name == "scan" else "128M")
            vm.extra, vm.share = "", 0.0
            try:
                fn(vm)
                c = vm.cost()
            finally:
                vm.close()
            key = (vm.share, c["cost-max-access-cpu-ns"] +
                   c["cost-max-tick-cpu-ns"])
            if not worst or key > worst_key:
                worst_key = key
                worst, extra, share = c, vm.extra, vm.share
        ok = (worst["cost-max-access-cpu-ns"] <= TARGET_ACCESS_NS and
              worst["cost-max-tick-cpu-ns"] <= TARGET_TICK_NS and
              share <= TARGET_LINE_SHARE)
        print("| %s | %s, %s (%d) | %s, %s (%d) | %d, %d | %s | %s |" % (
            name, ms(worst["cost-max-access-cpu-ns"]),
            ms(worst["cost-max-access-ns"]),
            worst["cost-max-access-reads"],
            ms(worst["cost-max-tick-cpu-ns"]), ms(worst["cost-max-tick-ns"]),
            worst["cost-max-tick-reads"], worst["budget-out-access"],
            worst["budget-out-tick"], "yes" if ok else "NO", extra))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
