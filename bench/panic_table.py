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
  to-last    ms of guest time from panic() (the panic record's stamp, on
             the device's clock) to the last byte on the wire; "-" when
             the panic record never arrived
Usage: panic_table.py [--set 6.1|6.12] [--cases a,b] [--kernels K,K]
                      [--smp 2,4] [--pace off|line] [--storm N]
                      [--timeout SECONDS] [--markdown]
  --timeout   wall seconds a run gets (default 120, warn-storm 360)
  --keep DIR  keep each run's output (console, events, guest RAM) in
              DIR/CASE-VCPUS-KERNEL instead of discarding it
  --set 6.1   (default) patched, baseline, stock, rt on 2 vCPUs
  --set 6.12  today's kernels, on 2 and 4 vCPUs:
    ringside-6.12  the 6.12 series' kernel: the 8250 as an nbcon console,
                   with the handshake (build-kernel.sh --kernel-version 6.12)
    stock-6.12     Debian's linux-image-6.12.*+deb12-amd64 (legacy 8250)
    rt-6.12        Debian's linux-image-6.12.*+deb12-rt-amd64 (upstream's
                   nbcon 8250, from the RT patch set)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from comparison import arg, kernels, ringside

SETS = {"6.1": ("patched,baseline,stock,rt", "2"),
        "6.12": ("ringside-6.12,stock-6.12,rt-6.12", "2,4")}

CASES = ["panic-task", "panic-softirq", "panic-hardirq", "panic-nmi",
         "port-lock", "nested-oops", "pending-panic", "warn-storm",
         "stress-panic"]


# Seconds of wall time a run gets before it counts as a timeout.  The WARN
# storm needs longer: on an nbcon console each WARN's emergency flush prints
# the whole backlog, so the module's own wait for its WARN()s (120 s, then it
# panics anyway) can run out before the panic starts.
TIMEOUT = 120
CASE_TIMEOUT = {"warn-storm": 360}


def to_last_ms(out):
    """ms from panic() to the last wire byte, or None: panic() is when the
    panic record was stamped, mapped to the device's clock by its line's
    measured latency (the offset nearest it: the clocks drift under TCG)."""
    with open(os.path.join(out, "console.log"), "rb") as fh:
        console = fh.read()
    panic_vt = last_vt = None
    with open(os.path.join(out, "events.jsonl")) as fh:
        for l in fh:
            ev = json.loads(l)
            if ev.get("ev") in ("tx", "line") and "vt" in ev:
                # the last byte: its tx event with --wire-events, else the
                # last line's (vt is its last byte's)
                last_vt = max(last_vt or 0, ev["vt"])
            if (ev.get("ev") == "line" and panic_vt is None and "lat" in ev and
                  b"Kernel panic - not syncing" in console[ev["first"]:ev["last"] + 1]):
                panic_vt = ev["vt"] - ev["lat"]
    if panic_vt is None or last_vt is None:
        return None
    return (last_vt - panic_vt) / 1e6


def run(kernel, case, pace, storm, out, smp=2, timeout=None):
    if timeout is None:
        timeout = CASE_TIMEOUT.get(case, TIMEOUT)
    r = subprocess.run([ringside, "run", "-q", "--kernel", kernel, "--case", "panic-test",
                        "--smp", str(smp), "--pace", pace, "--timeout", str(timeout),
                        "--out", out,
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
    with open(os.path.join(out, "console.log"), "rb") as fh:
        panic_line = b"Kernel panic - not syncing" in fh.read()
    try:
        ms = to_last_ms(out)
    except (OSError, ValueError, KeyError):
        ms = None
    lines, recs = v.get("lines", {}), v.get("records", {})
    l1 = v.get("l1")
    row = {"ended": ended, "panic-line": "yes" if panic_line else "NO",
           "ok": lines.get("ok", 0), "missing": recs.get("missing", 0),
           "dropped": recs.get("dropped", 0), "torn": lines.get("torn", 0),
           "corrupt": lines.get("corrupt", 0), "unmatched": lines.get("unmatched", 0),
           "l1-missing": "-", "l1-cut": "-", "takeovers": "-",
           "to-last": "%.0f" % ms if ms is not None else "-",
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
    timeout = arg("--timeout", None)
    timeout = int(timeout) if timeout else None
    set_kernels, set_smp = SETS[arg("--set", "6.1")]
    smps = [int(n) for n in arg("--smp", set_smp).split(",")]
    have = kernels()
    names = [k for k in arg("--kernels", set_kernels).split(",") if k in have]
    cols = ["ended", "panic-line", "ok", "missing", "dropped", "torn", "corrupt", "unmatched",
            "l1-missing", "l1-cut", "takeovers", "to-last", "faithful"]
    keep = arg("--keep", None)
    md = "--markdown" in sys.argv
    if md:
        print("| case | vCPUs | kernel | " + " | ".join(cols) + " |")
        print("|---" * (len(cols) + 3) + "|")
    else:
        print("%-14s %5s %-13s " % ("case", "vCPUs", "kernel") +
              " ".join("%10s" % c for c in cols))
    for case in cases:
        for smp in smps:
            for k in names:
                if keep:
                    out = os.path.join(keep, "%s-%d-%s" % (case, smp, k))
                    shutil.rmtree(out, ignore_errors=True)
                    row = run(have[k], case, pace, storm, out, smp, timeout)
                else:
                    with tempfile.TemporaryDirectory(prefix="ringside-table-") as out:
                        row = run(have[k], case, pace, storm, out, smp, timeout)
                vals = [str(row[c]) for c in cols]
                if md:
                    print("| %s | %d | %s | %s |" % (case, smp, k, " | ".join(vals)))
                else:
                    print("%-14s %5d %-13s " % (case, smp, k) +
                          " ".join("%10s" % x for x in vals))
                sys.stdout.flush()
    print("pace=%s storm=%d smp=%s accel=tcg" % (pace, storm, ",".join(map(str, smps))))


if __name__ == "__main__":
    main()
