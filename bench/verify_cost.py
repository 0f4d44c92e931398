#!/usr/bin/env python3
"""Benchmark: what checking the console against the ring costs.

Boots the project kernel (2 vCPUs, TCG, unpaced) with the "flood" case: one
task writes --lines records (default 200,000) to /dev/kmsg as fast as the
console takes them, then the guest powers off.  The same QEMU command line
is run with four consoles, interleaved, --runs times each:

  isa-serial          QEMU's own 16550 (the baseline)
  ringside, no check  ringside-serial, ring=off, no event stream
  ringside, checking  ringside-serial, ring=auto, no event stream
  ringside run        ring=auto with the event stream, as 'ringside run'
                      gives it (schema 3: an event per console line)
  ringside run, tx-events=on
                      the same with a "tx" record per byte, as every
                      stream was before schema 3

and prints, per console, the median and the best wall time (boot to
poweroff; on a shared machine other jobs only ever add time, so the best
of several runs is the steadier figure), QEMU's host CPU time, console
throughput, and the ratios the checking costs:
"checking" against "no check" and against isa-serial, and per line in ns
of host CPU.

Then the event stream's volume, in bytes of events per console byte, for
the flood and for a normal boot (the "poweroff" case), unpaced and paced,
with the default stream and with tx-events=on: one 'ringside run' each.

A paced flood runs at the line's 11.5 KB/s, so it writes --paced-lines
records (default 1,000).

Usage: verify_cost.py [--lines N] [--paced-lines N] [--runs N] [--kernel FILE]
"""
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ringside = os.environ.get("RINGSIDE_BIN", os.path.join(root, "build", "collector", "ringside"))


def opt(name, default):
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


lines = opt("--lines", 200000)
runs = opt("--runs", 2)
paced_lines = opt("--paced-lines", 1000)
kernel = sys.argv[sys.argv.index("--kernel") + 1] if "--kernel" in sys.argv else None
kernel_args = ["--kernel", kernel] if kernel else []

CONSOLES = [
    ("isa-serial", "isa-serial,chardev=console"),
    ("ringside, no check", "ringside-serial,chardev=console,ring=off"),
    ("ringside, checking", "ringside-serial,chardev=console"),
    ("ringside run", None),     # the device as 'ringside run' gives it
    ("ringside run, tx-events=on", "+tx-events=on"),
]


def command(out, device):
    r = subprocess.run([ringside, "run", "--print-qemu", "--case", "flood", "--pace", "off",
                        "--out", out, "--append",
                        "printk.devkmsg=on ringside.flood=%d" % lines] + kernel_args,
                       capture_output=True, text=True, check=True)
    argv = shlex.split(r.stdout)
    if device:
        i = next(k for k, a in enumerate(argv) if a.startswith("ringside-serial,"))
        argv[i] = argv[i] + "," + device[1:] if device[0] == "+" else device
    return argv


def one(device):
    out = tempfile.mkdtemp(prefix="ringside-verify-cost-")
    try:
        argv = command(out, device)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True, timeout=3600)
        wall = time.monotonic() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        console = open(os.path.join(out, "console.log"), "rb").read()
        if b"ringside-init: flood of %d lines done" % lines not in console:
            sys.exit("verify_cost: the guest did not finish its flood (%s)" % device)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return wall, cpu, console.count(b"\n"), len(console)
    finally:
        shutil.rmtree(out, ignore_errors=True)


def main():
    res = {name: [] for name, _ in CONSOLES}
    for _ in range(runs):
        for name, device in CONSOLES:
            res[name].append(one(device))
    med = {n: tuple(statistics.median(r[k] for r in v) for k in range(4))
           for n, v in res.items()}
    best = {n: min(r[0] for r in v) for n, v in res.items()}
    print("project kernel, 2 vCPUs, TCG, unpaced: %d printk lines then poweroff, "
          "median and best of %d runs" % (lines, runs))
    print("| console | wall s | best wall s | QEMU CPU s | console lines | lines/s (wall) |")
    print("|---|---|---|---|---|---|")
    for name, _ in CONSOLES:
        w, c, n, _b = med[name]
        print("| %s | %.2f | %.2f | %.2f | %d | %.0f |" % (name, w, best[name], c, n, n / w))
    base, off, on = med["isa-serial"], med["ringside, no check"], med["ringside, checking"]
    print("checking / no check, wall: %.3f  (%+.1f%%)" % (on[0] / off[0], 100 * (on[0] / off[0] - 1)))
    print("checking / isa-serial, wall: %.3f  (%+.1f%%)" % (on[0] / base[0], 100 * (on[0] / base[0] - 1)))
    print("checking cost per console line: %.0f ns of host CPU (vs no check), "
          "%.0f ns (vs isa-serial)" % ((on[1] - off[1]) / on[2] * 1e9,
                                       (on[1] - base[1]) / on[2] * 1e9))
    print("ringside run (with the event stream) / isa-serial, wall: %.3f, "
          "best wall: %.3f  (tx-events=on, as before schema 3: %.3f, %.3f)" %
          (med["ringside run"][0] / base[0],
           best["ringside run"] / best["isa-serial"],
           med["ringside run, tx-events=on"][0] / base[0],
           best["ringside run, tx-events=on"] / best["isa-serial"]))
    volume()


def stream_volume(case, pace, tx):
    """One 'ringside run': (events bytes, console bytes, wall s)."""
    out = tempfile.mkdtemp(prefix="ringside-verify-volume-")
    try:
        argv = [ringside, "run", "--quiet", "--case", case, "--pace", pace,
                "--out", out, "--timeout", "900"] + kernel_args
        if case == "flood":
            argv += ["--append", "printk.devkmsg=on ringside.flood=%d" %
                     (paced_lines if pace == "line" else lines)]
        if tx:
            argv.append("--tx-events")
        t0 = time.monotonic()
        r = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
        wall = time.monotonic() - t0
        if r.returncode:
            sys.exit("verify_cost: ringside run --case %s --pace %s failed: %s%s" %
                     (case, pace, r.stdout, r.stderr))
        ev = os.path.getsize(os.path.join(out, "events.jsonl"))
        con = os.path.getsize(os.path.join(out, "console.log"))
        return ev, con, wall
    finally:
        shutil.rmtree(out, ignore_errors=True)


def volume():
    print()
    print("event stream volume, bytes of events per console byte "
          "('ringside run', one run each; target for the default: at most 3)")
    print("| workload | pace | console bytes | tx-events=on (before) | "
          "default, schema 3 | B/B before | B/B after |")
    print("|---|---|---|---|---|---|---|")
    for case in ("flood", "poweroff"):
        for pace in ("off", "line"):
            label = "normal boot" if case == "poweroff" else \
                "flood, %d records" % (paced_lines if pace == "line" else lines)
            b_ev, b_con, _ = stream_volume(case, pace, True)
            a_ev, a_con, _ = stream_volume(case, pace, False)
            print("| %s | %s | %d / %d | %d | %d | %.1f | %.2f |" %
                  (label, pace, b_con, a_con, b_ev, a_ev, b_ev / b_con,
                   a_ev / a_con))


main()
