#!/usr/bin/env python3
"""Fuzz ringside-serial with whole migration streams, loaded into a running
QEMU the way loadvm would, then drive the guest side.

Seeds are real streams of the device: each scenario (idle, mid-line, lines
waiting in the backlog, a level 1 bracket open, the loopback receive FIFO
full, a paced transmit queue full, a byte the console refused held) is set
up in a QEMU under the qtest accelerator with a synthetic 6.1 guest in its
memory, and saved with QMP "xen-save-devices-state" (every device's state,
the same format and code as migration, without RAM).  The layout of the
device's section comes from QEMU: the JSON description it appends to a
full migration of the same machine ("migrate" to a file).

Each stream tried mutates one seed's ringside-serial section, knowing its
structure (tests/fuzz/vmstream.py): field values (boundaries, bit flips,
random bytes) in the embedded UART and in ringside's subsections;
subsections dropped, repeated, reordered, renamed, given other versions,
or inserted (the UART's own transmitter state, which the device never
sends); the body cut short or followed by junk.  Then, in a QEMU with the
same devices and the same guest memory:

  stop; load (x-load-state, as loadvm does); cont   (refused or not)
  ~30 random guest accesses (RBR, IER, IIR, LCR, MCR, LSR, MSR, SCR, THR,
  FCR, the level 1 window) and timer runs;
  then the UART programmed sanely and two marker bytes written.

A stream passes if QEMU is alive (no crash, abort or sanitizer report), the
markers reached the console, every console byte is one the device's
transmitter handed over (console growth == tx-sent), and the transmitter
accounts for no more than the THR writes plus the queue a stream may carry
(17 bytes).  A failing stream is written to --out with QEMU's stderr.

Prints streams tried, streams per second, the distinct paths reached (load
outcomes by message: the field a refusal names, QEMU's own load errors,
loaded) and the findings.

Usage: migrate_fuzz.py [--streams N] [--seconds S] [--seed K] [--only N]
                       [--qemu PATH | --base 7.2|10.0] [--out DIR] [--tap]
                       [--json]
A finding is written as finding-K-N.stream and .txt; --seed K --only N
tries that stream again, with the same guest accesses.
The default QEMU is the ASan/UBSan build of the base (7.2 unless --base)
if there is one, else its plain build.
"""
import argparse
import json
import os
import queue
import random
import re
import signal
import socket
import struct
import sys
import threading
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "lib"))
sys.path.insert(0, here)
import vmstream  # noqa: E402
from qtestvm import CACHE, COM1, EXT, NOTE_PA, Qemu, Ring  # noqa: E402

DEVICE = "ringside-serial"
CONFIGS = {"line": ",pace=line,tx-events=on", "off": ",pace=off,tx-events=on"}
MEM = "64M"
QUEUE_MAX = 17          # transmit FIFO and shift register
VCLOCK_MAX_NS = 120 * 10**9     # a target QEMU runs to this, then a new one
MARK = b"ZQ"
# Device-state saves carry no configuration section, so a QEMU that loads
# them must expect none.  Only the fuzzed QEMUs get this: with it, QEMU 10.0
# aborts on "migrate" (its description writer opens the outer JSON object
# only with the configuration section), which the seeds use for the layout.
LOADER = "-global migration.send-configuration=off"
SANITIZE_ENV = {"ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1",
                "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1"}


def default_qemu(base, tap):
    """The fork on @base (7.2: $CACHE/qemu, else $CACHE/qemu-BASE),
    sanitized if built so."""
    tree = "qemu" if base == "7.2" else "qemu-" + base
    for b in ("build-sanitize", "build"):
        p = os.path.join(CACHE, tree, b, "qemu-system-x86_64")
        if os.access(p, os.X_OK):
            return p
    if tap and base != "7.2":
        print("1..0 # SKIP no QEMU %s build (scripts/build-qemu.sh --base "
              "%s)" % (base, base))
        sys.exit(0)
    sys.exit("migrate_fuzz: no QEMU fork built on %s (scripts/build-qemu.sh"
             " --base %s)" % (base, base))


class Target:
    """A QEMU with the device in one configuration and the guest's memory,
    its stderr read by a thread."""

    def __init__(self, qemu, config, console=None, loader=True):
        os.environ.update(SANITIZE_ENV)
        r, w = os.pipe()
        self.vm = Qemu(CONFIGS[config], mem=MEM, qemu=qemu, console=console,
                       stderr=w, extra=LOADER if loader else "")
        os.close(w)
        self.errs = queue.Queue()
        self.err_all = []
        self.reader = threading.Thread(target=self._read, args=(r,),
                                       daemon=True)
        self.reader.start()
        self.ring = Ring(self.vm, count_bits=8, size_bits=14)
        self.ring.push_many(["record %d of the guest" % i for i in range(40)])

    def _read(self, fd):
        with os.fdopen(fd, "rb") as f:
            for line in f:
                self.errs.put(line.decode(errors="replace").rstrip())

    def stderr_lines(self):
        """What QEMU wrote to stderr since the last call (the last 200
        lines are also kept in err_all)."""
        out = []
        while True:
            try:
                out.append(self.errs.get_nowait())
            except queue.Empty:
                self.err_all = (self.err_all + out)[-200:]
                return out

    def alive(self):
        return self.vm.proc.poll() is None

    def close(self):
        try:
            self.vm.close()
        except Exception:
            self.vm.proc.kill()
            self.vm.proc.wait()


# ---- seeds: the device's real state in each scenario ----

def attach(t):
    t.ring.put_note()
    t.vm.ticks(3)


def sc_idle(t):
    t.vm.uart_8n1()
    attach(t)


def sc_midline(t):
    sc_idle(t)
    t.vm.puts(Ring.line(0, "record 0 of the guest")[:20])
    t.vm.step(5_000_000)


def sc_backlog(t):
    t.vm.uart_8n1()
    for i in range(12):
        t.vm.puts(Ring.line(i, "record %d of the guest" % i))
        t.vm.step(5_000_000)


def sc_l1_open(t):
    sc_idle(t)
    t.vm.cmds(["outl 0x%x 0x0" % (EXT + 8), "outl 0x%x 0x%x" % (EXT + 8,
                                                                NOTE_PA),
               "outl 0x%x 0x%x" % (EXT + 12, 1 | 1 << 8),
               "outl 0x%x 0x1" % EXT])
    t.vm.puts(Ring.line(1, "record 1 of the guest")[:10])
    t.vm.step(5_000_000)


def sc_loopback(t):
    sc_idle(t)
    t.vm.cmds(["outb 0x%x 0x13" % (COM1 + 4)])      # loop, DTR, RTS
    t.vm.puts(b"looped back")
    t.vm.step(50_000)


def sc_queue_full(t):
    sc_idle(t)
    t.vm.puts(Ring.line(0, "record 0 of the guest")[:17])


def sc_refused(t):
    """pace=off, the console a socket nobody reads: bytes until one is
    refused and held (LSR.TEMT stays low)."""
    sc_idle(t)
    for _ in range(200):
        t.vm.puts(b"y" * 4096)
        if not int(t.vm.cmd("inb 0x%x" % (COM1 + 5)).split()[1], 16) & 0x40:
            return
    raise RuntimeError("the console socket never refused a byte")


SCENARIOS = [
    ("idle", sc_idle, ("line", "off")),
    ("midline", sc_midline, ("line", "off")),
    ("backlog", sc_backlog, ("line", "off")),
    ("l1-open", sc_l1_open, ("line", "off")),
    ("loopback-rx", sc_loopback, ("line", "off")),
    ("queue-full", sc_queue_full, ("line",)),
    ("refused-held", sc_refused, ("off",)),
]


def make_seeds(qemu):
    """{config: [(name, stream)]}, the subsection catalog, and the
    device's layout."""
    seeds = {c: [] for c in CONFIGS}
    subs = {}
    layout = None
    for name, fn, configs in SCENARIOS:
        for config in configs:
            console = None
            if name == "refused-held":
                sock = "/tmp/ringside-mf-%d.sock" % os.getpid()
                console = "socket,id=con,path=%s,server=on,wait=off" % sock
            t = Target(qemu, config, console, loader=False)
            client = None
            try:
                if console:
                    client = socket.socket(socket.AF_UNIX)
                    client.connect(sock)
                    time.sleep(0.2)
                fn(t)
                t.vm.qmp("stop")
                path = os.path.join(t.vm.dir, "dev")
                t.vm.qmp("xen-save-devices-state", filename=path, live=False)
                # the loader reads a layout after the end, as loadvm does
                stream = open(path, "rb").read() + bytes(
                    [vmstream.VMDESCRIPTION]) + struct.pack(">I", 2) + b"{}"
                mig = os.path.join(t.vm.dir, "mig")
                t.vm.qmp("migrate", uri="exec:tail -c 4000000 > " + mig)
                for _ in range(600):
                    st = t.vm.qmp("query-migrate").get("status")
                    if st in ("completed", "failed"):
                        break
                    time.sleep(0.05)
                desc = vmstream.device_desc(
                    vmstream.vmdesc(open(mig, "rb").read()), DEVICE)
                layout = layout or desc
                vmstream.catalog(desc, subs)
                seeds[config].append((name, stream))
            finally:
                if client:
                    client.close()
                t.close()
    return seeds, subs, layout


# ---- mutation ----

def field(name, kind, size):
    return {"name": name, "type": kind, "size": size}


# Subsections no seed carries (the UART's own transmitter and THRE state,
# which the device never leaves set; counters only sent when non-zero), in
# the wire format of their VMStateDescriptions (hw/char/ringside-serial*.c),
# so that a mutation can insert them.
EXTRA_SUBS = {
    "serial/thr_ipending": [field("thr_ipending", "int32", 4)],
    "serial/tsr": [field("tsr_retry", "uint32", 4), field("thr", "uint8", 1),
                   field("tsr", "uint8", 1)],
    "serial/timeout_ipending": [field("timeout_ipending", "int32", 4)],
    "serial/poll": [field("poll_msl", "int32", 4),
                    field("modem_status_poll", "timer", 8)],
    "ringside-serial/verify/budget": [field("under_budget", "uint64", 8)],
    "ringside-serial/ext/budget": [field("under_budget", "uint64", 8)],
    "ringside-serial/ext/untrusted": [field("untrusted", "uint64", 8)],
}


def complete_catalog(subs):
    for name, fields in EXTRA_SUBS.items():
        subs.setdefault(name, {"vmsd_name": name, "version": 1,
                               "fields": fields})
    if "serial/recv_fifo" in subs and "serial/xmit_fifo" not in subs:
        rx = subs["serial/recv_fifo"]
        subs["serial/xmit_fifo"] = {
            "vmsd_name": "serial/xmit_fifo", "version": rx["version"],
            "fields": [dict(rx["fields"][0], name="xmit_fifo")]}
    return subs


def insert_point(node, name):
    """Where a subsection of this name goes: the UART's for serial/*, its
    parent's for a/b/c, else the device's."""
    if name.startswith("serial/"):
        return node.fields[0][1]
    if name.count("/") >= 2:
        parent = name.rsplit("/", 1)[0]
        for owner, i in node.all_subs():
            if owner.subs[i].name == parent:
                return owner.subs[i].body
    return node


INTERESTING = [0, 1, 2, 0x7f, 0x80, 0xff, 0x100, 0xffff, 15, 16, 17,
               0x7fffffff, 0x80000000, 0xffffffff, 0x40000000,
               0x7fffffffffffffff, 0xffffffffffffffff, 1 << 62]


def mutate_value(rng, b):
    n = len(b)
    k = rng.randrange(6)
    if k == 0 and n in (1, 2, 4, 8):
        v = rng.choice(INTERESTING) & ((1 << (8 * n)) - 1)
        return v.to_bytes(n, rng.choice(("little", "big")))
    if k == 1 and n in (1, 2, 4, 8):
        fmt = {1: ">B", 2: ">H", 4: ">I", 8: ">Q"}[n]
        v = struct.unpack(fmt, b)[0] + rng.choice((-1, 1, -16, 16))
        return struct.pack(fmt, v & ((1 << (8 * n)) - 1))
    if k == 2:
        a = bytearray(b)
        i = rng.randrange(n)
        a[i] ^= 1 << rng.randrange(8)
        return bytes(a)
    if k == 3:
        return bytes(rng.randrange(256) for _ in range(min(n, 64))) + b[64:]
    if k == 4:
        return b"\xff" * n
    return b"\0" * n


def mutate(rng, prefix, node, suffix, subs_catalog):
    """One stream: 1-4 mutations of the device's section."""
    for _ in range(rng.choice((1, 1, 2, 3, 4))):
        k = rng.randrange(100)
        leaves = list(node.leaves())
        owners = list(node.all_subs())
        if k < 45 and leaves:
            owner, i = rng.choice(leaves)
            name, v = owner.fields[i]
            owner.fields[i] = (name, mutate_value(rng, v))
        elif k < 55 and owners:                  # drop
            owner, i = rng.choice(owners)
            del owner.subs[i]
        elif k < 62 and owners:                  # repeat
            owner, i = rng.choice(owners)
            owner.subs.insert(i, owner.subs[i])
        elif k < 69 and owners:                  # reorder
            owner, i = rng.choice(owners)
            if len(owner.subs) > 1:
                j = rng.randrange(len(owner.subs))
                owner.subs[i], owner.subs[j] = owner.subs[j], owner.subs[i]
        elif k < 80:                             # insert one from the catalog
            name = rng.choice(sorted(subs_catalog))
            body, _ = vmstream.parse(subs_catalog[name],
                                     bytes(1 << 20), 0, {})
            for o, i in body.leaves():
                if rng.random() < 0.5:
                    n, v = o.fields[i]
                    o.fields[i] = (n, mutate_value(rng, v))
            target = insert_point(node, name)
            target.subs.insert(rng.randrange(len(target.subs) + 1),
                               vmstream.Sub(name, subs_catalog[name]
                                            ["version"], body))
        elif k < 85 and owners:                  # version
            owner, i = rng.choice(owners)
            s = owner.subs[i]
            owner.subs[i] = vmstream.Sub(s.name, rng.choice(
                (0, s.version - 1, s.version + 1, 0xffffffff)), s.body)
        elif k < 88 and owners:                  # name
            owner, i = rng.choice(owners)
            s = owner.subs[i]
            raw = s.name.encode()
            raw = rng.choice((raw[:-1], raw + b"x", b"", raw.upper()))
            owner.subs[i] = vmstream.Sub(s.name, s.version, s.body, raw)
        else:                                    # lengths: cut or junk
            body = node.encode()
            if rng.random() < 0.5:
                body = body[:rng.randrange(len(body) + 1)]
            else:
                body += bytes(rng.randrange(256)
                              for _ in range(rng.randrange(1, 32)))
            return prefix + body + suffix
    return prefix + node.encode() + suffix


# ---- one stream ----

def drive_ops(rng):
    ops = []
    for _ in range(rng.randrange(10, 40)):
        k = rng.randrange(10)
        reg = rng.randrange(8)
        if k < 3:
            ops.append("inb 0x%x" % (COM1 + reg))
        elif k < 6:
            ops.append("outb 0x%x 0x%x" % (COM1, rng.choice(
                (0x0d, 0x0a, 0x5b, 0x20, 0x78, rng.randrange(256)))))
        elif k < 8:
            ops.append("outb 0x%x 0x%x" % (COM1 + reg, rng.randrange(256)))
        elif k < 9:
            ops.append("outl 0x%x 0x%x" % (EXT + 4 * rng.randrange(4),
                                           rng.choice((0, 1, 2, 0x101,
                                                       rng.randrange(1 << 32)))))
        else:
            ops.append("clock_step %d" % rng.choice(
                (1000, 100_000, 5_000_000, 150_000_000)))
    return ops


COUNTERS = ("tx-bytes", "tx-sent", "tx-refused", "tx-overruns", "tx-cleared")


def counters(vm):
    return {c: vm.get(c) for c in COUNTERS}


def norm(msg):
    """A load message with its numbers and addresses taken out."""
    msg = re.sub(r"^qemu-system-x86_64: ", "", msg)
    return re.sub(r"0x[0-9a-f]+|-?\d+", "N", msg)[:160]


def try_stream(t, stream, rng):
    """None if it passed, else what went wrong; and the path it took."""
    vm = t.vm
    path = os.path.join(vm.dir, "stream")
    with open(path, "wb") as f:
        f.write(stream)
    vm.qmp("stop")
    # the qtest-only loader (hw/char/ringside-serial-loadtest.c)
    r = vm.qmp("qom-set", path="/machine/peripheral/rs",
               property="x-load-state", value=path)
    loaded = isinstance(r, dict) and "desc" not in r
    vm.qmp("cont")
    before, size0 = counters(vm), os.path.getsize(vm.console)
    vm.cmds(drive_ops(rng))
    vm.uart_8n1()
    vm.puts(MARK)
    # a character on the wire when the divisor was reprogrammed ends at the
    # old rate: at a loaded divisor of 65535, up to 6.8 s.  Steps that grow,
    # since every timer of the machine runs through them.
    for ns in (5_000_000, 100_000_000, 1_000_000_000, 10_000_000_000):
        vm.step(ns)
        console = open(vm.console, "rb").read()
        if console.endswith(MARK):
            break
    after = counters(vm)
    msgs = [norm(m) for m in t.stderr_lines()]
    where = tuple(sorted(set(m for m in msgs if m)))
    key = ("loaded" if loaded else "refused",) + where
    # the counters are 64-bit and wrap: a stream may load one near 2^64
    d = {c: (after[c] - before[c]) % (1 << 64) for c in COUNTERS}
    if len(console) - size0 != d["tx-sent"]:
        return ("%d console bytes, the transmitter handed over %d"
                % (len(console) - size0, d["tx-sent"])), key
    if not console.endswith(MARK):
        return ("the marker bytes did not reach the console (it ends %r; "
                "%s)" % (console[-24:], d)), key
    taken = d["tx-sent"] + d["tx-refused"] + d["tx-overruns"] + d["tx-cleared"]
    if taken > d["tx-bytes"] + QUEUE_MAX:
        return ("the transmitter accounts for %d bytes, %d were written"
                % (taken, d["tx-bytes"])), key
    return None, key


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--streams", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", type=int, default=0,
                    help="try only stream N of this seed (a replay)")
    ap.add_argument("--qemu", default=None)
    ap.add_argument("--base", default="7.2", choices=("7.2", "10.0"),
                    help="the fork's base, when --qemu is not given")
    ap.add_argument("--out", default=os.path.join(CACHE, "fuzz", "migrate"))
    ap.add_argument("--tap", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    qemu = a.qemu or default_qemu(a.base, a.tap)
    if a.only:
        a.streams = a.only
    t0 = time.time()
    seeds, subs_catalog, layout = make_seeds(qemu)
    complete_catalog(subs_catalog)
    nseeds = sum(len(v) for v in seeds.values())
    print("# %d seeds from %s; %d subsection layouts; %.1f s" % (
        nseeds, qemu, len(subs_catalog), time.time() - t0))
    streams = {}
    for config, ss in seeds.items():
        for name, stream in ss:
            vmstream.split(stream, DEVICE, layout, subs_catalog)  # parses
            streams[(config, name)] = stream
    targets = {c: Target(qemu, c) for c in CONFIGS}
    for t in targets.values():
        attach(t)
    paths, findings = {}, []
    t1 = time.time()
    keys = sorted(streams)
    signal.signal(signal.SIGTERM, interrupted)
    try:
        ran, tried = fuzz_loop(a, qemu, streams, keys, targets, paths,
                               findings, layout, subs_catalog, t1)
    except KeyboardInterrupt:
        ran, tried = PROGRESS["ran"], PROGRESS["tried"]
        print("# interrupted", file=sys.stderr)
    finally:
        secs = time.time() - t1
        for t in targets.values():
            t.close()
    report(a, ran, secs, paths, findings, nseeds)
    return 1 if findings or not nseeds else 0


PROGRESS = {"ran": 0, "tried": 0}


def interrupted(signum, frame):
    """SIGTERM ends a long run as SIGINT does: with its figures."""
    raise KeyboardInterrupt


def fuzz_loop(a, qemu, streams, keys, targets, paths, findings, layout,
              subs_catalog, t1):
    tried = ran = 0
    while True:
        if a.seconds and time.time() - t1 >= a.seconds:
            break
        if not a.seconds and tried >= a.streams:
            break
        if a.only and tried + 1 != a.only:
            tried += 1
            continue
        # each stream its own generator: --seed K --only N replays stream N
        rng = random.Random("%d-%d" % (a.seed, tried + 1))
        config, name = keys[tried % len(keys)]
        prefix, node, suffix = vmstream.split(streams[(config, name)],
                                              DEVICE, layout, subs_catalog)
        stream = mutate(rng, prefix, node, suffix, subs_catalog)
        t = targets[config]
        tried += 1
        ran += 1
        try:
            bad, key = try_stream(t, stream, rng)
        except (OSError, ValueError) as e:
            bad, key = "QEMU stopped answering (%s)" % e, ("died",)
        if not t.alive():
            time.sleep(0.2)
            bad = "QEMU exited with %s" % t.vm.proc.poll()
            key = ("died",)
        paths[key] = paths.get(key, 0) + 1
        if bad:
            os.makedirs(a.out, exist_ok=True)
            base = os.path.join(a.out, "finding-%d-%d" % (a.seed, tried))
            with open(base + ".stream", "wb") as f:
                f.write(stream)
            with open(base + ".txt", "w") as f:
                f.write("%s\nseed %s/%s\n" % (bad, config, name))
                f.write("\n".join(t.err_all + t.stderr_lines()))
            findings.append((bad, config, name, base))
            t.close()
            targets[config] = Target(qemu, config)
            attach(targets[config])
        elif t.vm.vclock() > VCLOCK_MAX_NS:
            # the other devices' loaded timers count from the seeds' clock:
            # a QEMU whose clock ran far ahead spends each load catching up
            t.close()
            targets[config] = Target(qemu, config)
            attach(targets[config])
        PROGRESS.update(ran=ran, tried=tried)
        if ran % 5000 == 0:
            print("# %d streams, %.1f/s, %d paths, %d findings" % (
                ran, ran / (time.time() - t1), len(paths), len(findings)),
                file=sys.stderr, flush=True)
    return ran, tried


def report(a, ran, secs, paths, findings, nseeds):
    summary = {"streams": ran, "seconds": round(secs, 1),
               "streams_per_second": round(ran / secs, 1) if secs else 0,
               "paths": len(paths), "findings": len(findings),
               "seeds": nseeds}
    if a.json:
        print(json.dumps({**summary, "path_list": [
            [list(k), n] for k, n in sorted(paths.items(),
                                            key=lambda kv: -kv[1])]}))
    print("# %d streams in %.1f s (%.1f/s), %d distinct paths, %d findings"
          % (ran, secs, summary["streams_per_second"], len(paths),
             len(findings)))
    for k, n in sorted(paths.items(), key=lambda kv: -kv[1])[:40]:
        print("#   %6d  %s" % (n, " | ".join(k)))
    for bad, config, name, base in findings[:20]:
        print("# FINDING (%s/%s): %s -> %s.stream" % (config, name, bad,
                                                      base))
    if a.tap:
        print("ok 1 - %d seeds" % nseeds if nseeds else "not ok 1 - no seeds")
        print("%s 2 - %d streams, no crash, abort or unaccounted byte" % (
            "not ok" if findings else "ok", ran))
        print("1..2")


if __name__ == "__main__":
    sys.exit(main())
