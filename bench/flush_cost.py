#!/usr/bin/env python3
"""Benchmark: what the emergency flush costs, patched vs unpatched.

The test module's pending-panic case holds console_lock, stores --pending
records (default 1000) that the console cannot print yet, stores a marker
record and calls panic(): every kernel then has to get those records, the
marker and the panic report onto the wire.  Per kernel, --runs times each
(1 vCPU, TCG, --pace off by default), from the device's event stream:

  to-first   ms from panic() (when the marker was stored: its first byte
             on the wire less the latency the device measured for it, from
             the guest/device clock offset of the last fresh line before it)
             to the first byte of the first pending record on the wire
  to-last    ms from panic() to the last byte on the wire
  per-1000   to-last scaled to 1000 pending records
  delivered  pending records that reached the wire whole

Kernels: patched (the project kernel), baseline (the same kernel without
the series but the test module: scripts/build-kernel.sh --baseline), and
stock and rt (Debian's 6.1 kernels, generic and PREEMPT_RT, with the
module built out of tree: scripts/prepare-comparison.sh), each where
built.  Prints the medians and the ratio of each kernel's per-1000 to the
baseline's.

Usage: flush_cost.py [--kernels patched,baseline,stock,rt] [--pending N]
                     [--runs N] [--pace off|line]
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

from comparison import arg, kernels, ringside

MARKER = "pending-panic: panic with"


def measure(out, pending):
    """(to_first_ms, to_last_ms, delivered) from one run's output."""
    with open(os.path.join(out, "console.log"), "rb") as f:
        console = f.read()
    lines, tx_vt, last_vt = [], {}, None
    with open(os.path.join(out, "events.jsonl")) as f:
        for l in f:
            ev = json.loads(l)
            kind = ev.get("ev")
            if kind == "line":
                lines.append(ev)
            elif kind == "tx":
                tx_vt.setdefault(ev["i"], ev["vt"])
                last_vt = ev["vt"]
    if last_vt is None:
        raise RuntimeError("no wire bytes in %s" % out)
    # The guest's printk clock drifts against the device's under TCG, so
    # the offset that holds here is the one measured nearest the marker
    # (its latency), not the one of the whole run.
    marker = next((e for e in lines if MARKER.encode() in
                   console[e["first"]:e["last"] + 1] and "lat" in e), None)
    first = next((e for e in lines if b" pending 1/" in
                  console[e["first"]:e["last"] + 1]), None)
    if marker is None or first is None:
        raise RuntimeError("the marker (with a measured latency) or the first "
                           "pending record is not on the wire (%s)" % out)
    panic_vt = marker["vt"] - marker["lat"]
    first_vt = tx_vt[first["first"]]
    whole = set()
    for e in lines:
        if e["verdict"] != "ok":
            continue
        m = re.search(rb" pending ([0-9]+)/%d the quick brown fox jumps over the lazy dog"
                      % pending, console[e["first"]:e["last"] + 1])
        if m:
            whole.add(int(m.group(1)))
    return ((first_vt - panic_vt) / 1e6, (last_vt - panic_vt) / 1e6, len(whole))


def run(kernel, pending, pace):
    with tempfile.TemporaryDirectory(prefix="ringside-flush-") as out:
        r = subprocess.run([ringside, "run", "-q", "--kernel", kernel,
                            "--case", "panic-test", "--smp", "1", "--pace", pace,
                            "--accel", "tcg", "--timeout", "120", "--out", out,
                            "--append", "ringside.panic=pending-panic "
                            "test_printk_panic.pending=%d" % pending],
                           capture_output=True, text=True)
        m = re.search(r"ended=(\S+)", r.stdout)
        if not m or m.group(1) != "panic":
            raise RuntimeError("%s: the guest did not panic: %s" %
                               (kernel, (r.stdout + r.stderr).strip()[-300:]))
        return measure(out, pending)


def main():
    pending = int(arg("--pending", "1000"))
    runs = int(arg("--runs", "3"))
    pace = arg("--pace", "off")
    have = kernels()
    names = [k for k in arg("--kernels", "patched,baseline,stock,rt").split(",")
             if k in have]
    if "baseline" not in names:
        sys.exit("flush_cost: no baseline kernel: run scripts/build-kernel.sh "
                 "--baseline first")
    res = {}
    print("%-9s %5s %10s %10s %10s %10s" %
          ("kernel", "run", "to-first", "to-last", "per-1000", "delivered"))
    for i in range(runs):
        # Interleaved, so that host load drifts hit every kernel alike.
        for k in names:
            f, l, d = run(have[k], pending, pace)
            res.setdefault(k, []).append((f, l, d))
            print("%-9s %5d %8.1fms %8.1fms %8.1fms %6d/%d" %
                  (k, i + 1, f, l, l * 1000 / pending, d, pending))
            sys.stdout.flush()
    base = statistics.median(l for _, l, _ in res["baseline"]) * 1000 / pending
    print("medians (pending=%d runs=%d smp=1 pace=%s accel=tcg):" %
          (pending, runs, pace))
    for k in names:
        f = statistics.median(x[0] for x in res[k])
        p = statistics.median(x[1] for x in res[k]) * 1000 / pending
        d = min(x[2] for x in res[k])
        print("  %-9s to-first %8.1f ms  per-1000 %8.1f ms  %.2fx baseline  "
              "delivered >= %d/%d" % (k, f, p, p / base, d, pending))


if __name__ == "__main__":
    main()
