#!/usr/bin/env python3
"""Every panic path, on every kernel: the project's headline table.

Runs the test module's panic cases (guest-kernel/6.1/patches/0005, /init's
panic-test case) under TCG with 2 vCPUs, one of them storming printk, on:
  patched   the project kernel with the atomic console series
  baseline  the same kernel and config without the series, but for the
            test module (scripts/build-kernel.sh --baseline)
  stock     Debian's linux-image-6.1.0-*-amd64, the same module built out
            of tree (scripts/build-test-module.sh)
  rt        Debian's linux-image-6.1.0-*-rt-amd64, likewise (if cached)
and prints, per case and kernel, from the device's own verdicts (the same
report `ringside report` prints):
  ended      how the guest ended (panic, timeout, ...)
  panic-line whether "Kernel panic - not syncing" reached the wire
  ok         console lines matched intact to their record
  missing    records at or above the console loglevel never printed
  dropped    records the kernel overwrote before printing (and said so)
  torn/corrupt/unmatched  damaged console lines
and, where the kernel has the ringside handshake (patched), its level 1
verdicts, exact by seq:
  l1-missing records the console went past that never reached the wire
  l1-cut     records of which only a prefix ever reached the wire
  takeovers  records another CPU took over while one was printing them
Usage: panic_table.py [--cases a,b] [--kernels patched,baseline,stock,rt]
                      [--pace off|line] [--storm N] [--markdown]
"""
import json
import os
import re
import subprocess
import sys
import tempfile

from comparison import arg, kernels, ringside

CASES = ["panic-task", "panic-softirq", "panic-hardirq", "panic-nmi",
         "port-lock", "nested-oops", "pending-panic", "warn-storm",
         "stress-panic"]


def run(kernel, case, pace, storm, out):
    r = subprocess.run([ringside, "run", "-q", "--kernel", kernel, "--case", "panic-test",
                        "--smp", "2", "--pace", pace, "--timeout", "120", "--out", out,
                        "--append", "ringside.panic=%s test_printk_panic.storm=%d" % (case, storm)],
                       capture_output=True, text=True)
    m = re.search(r"ended=(\S+)", r.stdout)
    ended = m.group(1) if m else "error"
    # Whether the timing was one real hardware could have (run's summary).
    f = re.search(r" faithful=(\S+)", r.stdout)
    rep = subprocess.run([ringside, "report", "--json", os.path.join(out, "events.jsonl")],
                         capture_output=True, text=True)
    try:
        v = json.loads(rep.stdout)
    except ValueError:
        v = {"lines": {}, "records": {}}
    with open(os.path.join(out, "console.log"), "rb") as f:
        panic_line = b"Kernel panic - not syncing" in f.read()
    lines, recs = v.get("lines", {}), v.get("records", {})
    l1 = v.get("l1")
    row = {"ended": ended, "panic-line": "yes" if panic_line else "NO",
           "ok": lines.get("ok", 0), "missing": recs.get("missing", 0),
           "dropped": recs.get("dropped", 0), "torn": lines.get("torn", 0),
           "corrupt": lines.get("corrupt", 0), "unmatched": lines.get("unmatched", 0),
           "l1-missing": "-", "l1-cut": "-", "takeovers": "-",
           "faithful": f.group(1) if f else "-"}
    if l1:
        row["l1-missing"] = l1["records"]["missing"]
        row["l1-cut"] = l1["records"]["cut"] + l1["records"]["damaged"]
        row["takeovers"] = l1["takeovers"]
    return row


def main():
    cases = arg("--cases", ",".join(CASES)).split(",")
    pace = arg("--pace", "off")
    storm = int(arg("--storm", "1"))
    have = kernels()
    names = [k for k in arg("--kernels", "patched,baseline,stock,rt").split(",") if k in have]
    cols = ["ended", "panic-line", "ok", "missing", "dropped", "torn", "corrupt", "unmatched",
            "l1-missing", "l1-cut", "takeovers", "faithful"]
    md = "--markdown" in sys.argv
    if md:
        print("| case | kernel | " + " | ".join(cols) + " |")
        print("|---" * (len(cols) + 2) + "|")
    else:
        print("%-14s %-8s " % ("case", "kernel") + " ".join("%10s" % c for c in cols))
    for case in cases:
        for k in names:
            with tempfile.TemporaryDirectory(prefix="ringside-table-") as out:
                row = run(have[k], case, pace, storm, out)
            vals = [str(row[c]) for c in cols]
            if md:
                print("| %s | %s | %s |" % (case, k, " | ".join(vals)))
            else:
                print("%-14s %-8s " % (case, k) + " ".join("%10s" % x for x in vals))
            sys.stdout.flush()
    print("pace=%s storm=%d smp=2 accel=tcg" % (pace, storm))


if __name__ == "__main__":
    main()
