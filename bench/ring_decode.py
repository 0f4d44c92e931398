#!/usr/bin/env python3
"""Benchmark: decode a full 16 MiB printk ring from a QEMU ELF dump.

Boots Debian's stock 6.1 kernel with log_buf_len=16M, fills the ring from
/init (/dev/kmsg, 250,000 records), dumps the guest with dump-guest-memory
(paging off), and times on that same dump, side by side:
  - ringside dmesg (text, and --json), best and median of several runs;
  - crash's 'log' with Debian's -dbg vmlinux (the reference decoder);
  - makedumpfile --dump-dmesg (reported; 1.7.2 refuses QEMU's dumps).
Prints records/s, MB/s of ring and the ratios.

Usage: ring_decode.py [--runs N] [--keep DIR]
Needs scripts/build-all.sh test to have run (QEMU fork, initramfs, stock
kernel and its -dbg vmlinux in the cache).
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "tests", "lib"))
from liveguest import LiveGuest  # noqa: E402

root = os.path.dirname(here)
cache = os.environ.get("RINGSIDE_CACHE", os.path.expanduser("~/.cache/ringside"))
ringside = os.environ.get("RINGSIDE_BIN", os.path.join(root, "build", "collector", "ringside"))
kernel = os.path.join(cache, "stock", "vmlinuz")
vmlinux = os.path.join(cache, "stock", "vmlinux-dbg")
runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 5
keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
RING = 16 << 20


def timed(cmd, **kw):
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)
    return time.perf_counter() - t0, p


def main():
    for f in (ringside, kernel, vmlinux):
        if not os.path.exists(f):
            sys.exit("ring_decode: %s missing (run scripts/build-all.sh test)" % f)
    out = keep or tempfile.mkdtemp(prefix="ringside-bench-")
    os.makedirs(out, exist_ok=True)
    dump = os.path.join(out, "dump.elf")
    g = LiveGuest(ringside, out, "kmsg-fill-hang", "--kernel", kernel,
                  "--memory", "512", "--append",
                  "log_buf_len=16M printk.devkmsg=on loglevel=1")
    t0 = time.time()
    lines = g.wait_line("ringside-fill-done 250000", timeout=600)
    if lines is None:
        g.stop()
        sys.exit("ring_decode: the guest did not fill its ring:\n" + g.qemu_log())
    fill_s = time.time() - t0
    r = g.dump(dump)
    g.stop()
    if "return" not in r:
        sys.exit("ring_decode: dump-guest-memory failed: %s" % r)

    # Warm the page cache so every tool reads the dump from memory.
    subprocess.run(["cat", dump], stdout=subprocess.DEVNULL, check=True)
    res = {}
    for name, cmd in (("ringside dmesg", [ringside, "dmesg", dump]),
                      ("ringside dmesg --json", [ringside, "dmesg", "--json", dump])):
        times = []
        for _ in range(runs):
            t, p = timed(cmd)
            if p.returncode != 0:
                sys.exit("ring_decode: %s failed: %s" % (name, p.stderr.decode()))
            times.append(t)
        res[name] = (min(times), statistics.median(times), p.stdout.count(b"\n"))
    t, p = timed(["crash", "-s", vmlinux, dump], input=b"log\nquit\n")
    crash_records = sum(1 for l in p.stdout.split(b"\n") if l.startswith(b"["))
    res["crash log"] = (t, t, crash_records)
    t, p = timed(["makedumpfile", "--dump-dmesg", dump, os.path.join(out, "mdf.txt")])
    mdf = "read it in %.3f s" % t if p.returncode == 0 else "refused the dump: " + \
        (p.stdout + p.stderr).decode(errors="replace").strip().split("\n")[-1]

    print("ring: log_buf_len=16M, filled by /init in %.1f s (TCG); dump %.0f MiB" %
          (fill_s, os.path.getsize(dump) / 2**20))
    print("%-24s %10s %10s %10s %12s %10s" % ("tool", "best s", "median s",
                                             "records", "records/s", "MB/s"))
    for name, (best, med, n) in res.items():
        print("%-24s %10.3f %10.3f %10d %12.0f %10.1f" %
              (name, best, med, n, n / best, RING / best / 1e6))
    rs = res["ringside dmesg"][0]
    print("crash log / ringside dmesg: %.1fx" % (res["crash log"][0] / rs))
    print("makedumpfile 1.7.2: %s" % mdf)
    if res["ringside dmesg"][2] != res["crash log"][2]:
        print("WARNING: ringside printed %d lines, crash %d records" %
              (res["ringside dmesg"][2], res["crash log"][2]))
    if not keep:
        shutil.rmtree(out, ignore_errors=True)


main()
