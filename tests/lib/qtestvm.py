"""A QEMU under the qtest accelerator with ringside-serial on COM1, driven
from Python: qtest commands (ports, guest memory, the virtual clock) on one
socket, QMP on another; and a synthetic Linux 6.1 guest in its memory (a
VMCOREINFO note, a printk ring filled as printk does, page tables).

Used by bench/hostile_cost.py and tests/fuzz/migrate_fuzz.py.
"""
import base64
import os
import socket
import struct
import subprocess
import tempfile

from qmpclient import Qmp

CACHE = os.environ.get("RINGSIDE_CACHE",
                       os.path.expanduser("~/.cache/ringside"))
QEMU = os.path.join(CACHE, "qemu/build/qemu-system-x86_64")

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


def note(text):
    t = text.encode()
    return struct.pack("<III", 11, len(t), 0) + b"VMCOREINFO\0\0" + t


def vmcoreinfo():
    t = "OSRELEASE=6.1.0-bench\nPAGESIZE=4096\n"
    t += "SYMBOL(prb)=%x\n" % (KMAP + PRB_PTR_PA)
    t += "SYMBOL(init_top_pgt)=%x\n" % (KMAP + 0x1000)
    t += "NUMBER(phys_base)=0\n"
    return t + "".join("%s=%d\n" % kv for kv in LAYOUT)


class Qemu:
    """events: "file" (self.dir/events), "full" (/dev/full) or None;
    console: a chardev for id "con" (default: the file self.dir/console);
    stderr: passed to Popen; extra: more QEMU arguments."""

    def __init__(self, dev_opts="", events="file", mem="128M",
                 device="ringside-serial,id=rs,chardev=con,events=ev",
                 qemu=None, console=None, stderr=None, extra=""):
        self.dir = tempfile.mkdtemp(prefix="ringside-qtest-")
        self.console = os.path.join(self.dir, "console")
        qsock = os.path.join(self.dir, "qtest.sock")
        msock = os.path.join(self.dir, "qmp.sock")
        ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ls.bind(qsock)
        ls.listen(1)
        ls.settimeout(60)           # QEMU that failed to start never comes
        self.mon = Qmp(msock, listen=True)
        self.events = os.path.join(self.dir, "events")
        ev = {"file": "-chardev file,id=ev,path=%s" % self.events,
              "full": "-chardev file,id=ev,path=/dev/full",
              None: ""}[events]
        qemu = qemu or QEMU
        cmd = ("%s -qtest unix:%s -qtest-log /dev/null -chardev socket,path=%s,id=mon "
               "-mon chardev=mon,mode=control -display none -nodefaults "
               "-machine pc -m %s -accel qtest "
               "-chardev %s %s "
               "-device %s%s %s"
               % (qemu, qsock, msock, mem,
                  console or "file,id=con,path=%s" % self.console,
                  ev, device, dev_opts, extra))
        self.proc = subprocess.Popen(cmd.split(), cwd=os.path.dirname(qemu),
                                     stderr=stderr)
        self.q = ls.accept()[0]
        ls.close()
        self.q.settimeout(None)
        self.qf = self.q.makefile("rb")
        self.mon.accept(60)

    def qmp(self, cmd, **args):
        """QMP's "return", or its "error"; OSError if QEMU went away."""
        r = self.mon.cmd(cmd, **args)
        return r.get("return", r.get("error"))

    def answer(self):
        """The next answer (OK or FAIL) to a qtest command, skipping the
        IRQ lines; OSError if QEMU went away."""
        while True:
            r = self.qf.readline()
            if not r:
                raise OSError("QEMU closed its qtest socket")
            if r.startswith(b"OK") or r.startswith(b"FAIL"):
                return r.decode()

    def cmd(self, line):
        self.q.sendall(line.encode() + b"\n")
        return self.answer()

    def cmds(self, lines):
        """Pipelined in batches (the answers must not fill the socket
        while commands are still being sent)."""
        for o in range(0, len(lines), 1000):
            batch = lines[o:o + 1000]
            self.q.sendall("".join(l + "\n" for l in batch).encode())
            for _ in batch:
                self.answer()

    def write(self, pa, data):
        for o in range(0, len(data), 1 << 20):
            chunk = data[o:o + (1 << 20)]
            self.cmd("b64write 0x%x 0x%x %s" % (pa + o, len(chunk),
                                                 base64.b64encode(chunk).decode()))

    def wq(self, pa, v):
        self.cmd("writeq 0x%x 0x%x" % (pa, v))

    def uart_8n1(self, fifo=True):
        """The UART at 115200 baud 8N1, DTR and RTS up with loopback off,
        the FIFOs on (or off) and reset."""
        self.cmds(["outb 0x%x 0x83" % (COM1 + 3), "outb 0x%x 0x1" % COM1,
                   "outb 0x%x 0x0" % (COM1 + 1), "outb 0x%x 0x3" % (COM1 + 3),
                   "outb 0x%x 0x3" % (COM1 + 4),
                   "outb 0x%x 0x%x" % (COM1 + 2, 7 if fifo else 6)])

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
        """The virtual clock, stepped 1 ns to read it: QEMU 10.0's qtest
        refuses "clock_step 0"."""
        return int(self.cmd("clock_step 1").split()[1])

    def close(self):
        try:
            self.qmp("quit")
        except OSError:
            pass
        try:
            self.mon.close()
        except Exception:
            pass                # QEMU gone first: nothing left to close
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
