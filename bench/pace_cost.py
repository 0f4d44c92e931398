#!/usr/bin/env python3
"""Benchmark: what pace=line costs, side by side with pace=off.

Boots the project kernel to a sysrq panic (2 vCPUs, TCG) --runs times in
each mode and prints wall time, guest time and host CPU time of QEMU per
run.  The paced run is slower by design (the guest waits for a 115200-baud
line); the device's own host CPU cost per byte is measured separately, by
sampling QEMU with perf during a paced run and summing the samples in the
device's functions (ringside_*, pace_*) and in QEMU's timer code they arm.

Usage: pace_cost.py [--runs N]
"""
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import shutil
import statistics

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ringside = os.environ.get("RINGSIDE_BIN", os.path.join(root, "build", "collector", "ringside"))
runs = int(sys.argv[sys.argv.index("--runs") + 1]) if "--runs" in sys.argv else 3


def one(pace):
    out = tempfile.mkdtemp(prefix="ringside-pace-")
    try:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run([ringside, "run", "-q", "--pace", pace, "--out", out],
                           capture_output=True, text=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    kv = dict(re.findall(r"(\S+)=(\S+)", r.stdout.strip().split("\n")[-1]))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return float(kv["wall"].rstrip("s")), float(kv["guest-time"].rstrip("s")), cpu, int(kv["bytes"])


def perf_share():
    out = tempfile.mkdtemp(prefix="ringside-perf-")
    try:
        cmd = subprocess.run([ringside, "run", "--print-qemu", "--pace", "line", "--out", out],
                             capture_output=True, text=True, check=True).stdout
        data = os.path.join(out, "perf.data")
        subprocess.run(["perf", "record", "-q", "-F", "2000", "-o", data, "--"] +
                       shlex.split(cmd), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=300)
        rep = subprocess.run(["perf", "report", "-i", data, "--stdio", "--sort", "symbol"],
                             capture_output=True, text=True).stdout
        share = 0.0
        for l in rep.split("\n"):
            m = re.match(r"^\s+([0-9.]+)%\s+\[\.\]\s+(\S+)", l)
            if m and re.match(r"^(ringside_|pace_|timer_mod|timerlist_|qemu_clock_)", m.group(2)):
                share += float(m.group(1))
        nbytes = os.path.getsize(os.path.join(out, "console.log"))
        return share / 100, nbytes
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main():
    res = {p: [one(p) for _ in range(runs)] for p in ("off", "line")}
    print("boot to sysrq panic, project kernel, 2 vCPUs, TCG, %d runs each (medians)" % runs)
    print("| pace | wall s | guest s | QEMU host CPU s | bytes |")
    print("|---|---|---|---|---|")
    for p, rs in res.items():
        print("| %s | %.2f | %.2f | %.2f | %d |" % (p, *(statistics.median(x[i] for x in rs)
                                                     for i in range(3)), rs[0][3]))
    try:
        share, nbytes = perf_share()
    except (OSError, subprocess.SubprocessError) as e:
        print("perf not usable here (%s): no per-byte figure" % e)
        return
    cpu = statistics.median(x[2] for x in res["line"])
    print("pacing code's share of QEMU's samples (paced run): %.3f%% -> %.0f ns of host "
          "CPU per byte (%d bytes, %.2f s CPU)" % (share * 100, share * cpu / nbytes * 1e9,
                                                  nbytes, cpu))


main()
