#!/usr/bin/env python3
"""The printk storm at panic, paced and unpaced (issue: real-speed wire).

Boots Debian's stock 6.1 kernel with 4 vCPUs under TCG; 1 or 3 CPUs write
KERN_WARNING records to /dev/kmsg without pause (printk.devkmsg=on) for
1 s, then CPU 0 panics from task context (sysrq).  For each run, from the
device's event stream and the ring left in the guest's RAM file:
  console lines      lines that reached the wire
  storm lines        of those, storm records
  acked drops        sum of the kernel's "** N printk messages dropped **"
  missing at panic   records in the ring at the end, below the console
                     loglevel, that are not on the wire whole (a record
                     hit by a transmitter overrun counts here too)
  overrun bytes      bytes the 8250 driver wrote to a full transmitter
  panic->last byte   guest time from the panic record to the last byte
Prints a table.  Usage: storm_table.py [--writers 1,3] [--pace line,off]
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
cache = os.environ.get("RINGSIDE_CACHE", os.path.expanduser("~/.cache/ringside"))
ringside = os.environ.get("RINGSIDE_BIN", os.path.join(root, "build", "collector", "ringside"))
kernel = os.path.join(cache, "stock", "vmlinuz")


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1].split(",") if name in sys.argv else default


def run(writers, pace, out):
    r = subprocess.run([ringside, "run", "--kernel", kernel, "--case", "storm-panic",
                        "--smp", "4", "--pace", pace, "--timeout", "600", "--out", out,
                        "--append", "printk.devkmsg=on ringside.storm=%s" % writers],
                       capture_output=True, text=True)
    summary = r.stdout.strip().split("\n")[-1] if r.stdout else ""
    if r.returncode != 0:
        sys.exit("storm_table: run failed: %s\n%s" % (summary, r.stderr))
    lines = []      # (wire time of last byte, text)
    for l in r.stdout.split("\n"):
        m = re.match(r"^ *([0-9]+)\.([0-9]{6}) cpu[0-9]+ *[ +]\| (.*)$", l)
        if m:
            lines.append((int(m.group(1)) * 10**9 + int(m.group(2)) * 1000, m.group(3)))
    texts = set(t for _, t in lines)
    dmesg = subprocess.run([ringside, "dmesg", "--json", os.path.join(out, "guest.ram")],
                           capture_output=True, text=True, errors="replace", check=True)
    missing = 0
    for rec in map(json.loads, dmesg.stdout.split("\n")[:-1]):
        # The console prints levels below console_loglevel (7 here) only.
        if rec["level"] >= 7:
            continue
        stamp = "[%5d.%06d] " % (rec["ts_nsec"] // 10**9, rec["ts_nsec"] // 1000 % 10**6)
        if any(stamp + l not in texts for l in rec["text"].split("\n")):
            missing += 1
    drops = sum(int(n) for _, t in lines
                for n in re.findall(r"\*\* ([0-9]+) printk messages dropped \*\*", t))
    stamped = []
    for vt, t in lines:
        m = re.match(r"^\[ *([0-9]+)\.([0-9]{6})\]", t)
        if m:
            stamped.append((vt, int(m.group(1)) * 10**9 + int(m.group(2)) * 1000, t))
    offset = min(vt - ts for vt, ts, _ in stamped)
    # A storm can cost the stock kernel its panic line itself.
    panic_ts = next((ts for _, ts, t in stamped if "Kernel panic - not syncing" in t), None)
    last_vt = lines[-1][0]
    return {
        "console lines": len(lines),
        "storm lines": sum(1 for _, t in lines if "ringside-storm" in t),
        "acked drops": drops,
        "missing at panic": missing,
        "panic->last byte ms": ((last_vt - offset - panic_ts) / 1e6
                                if panic_ts is not None else "no panic line"),
        "overrun bytes": int((re.search(r"overrun=([0-9]+)", summary) or [0, 0])[1]),
        "wall s": float(re.search(r"wall=([0-9.]+)s", summary).group(1)),
        # 4 vCPUs on a 2-core host: the flush times are the host's.
        "faithful": (re.search(r" faithful=(\S+)", summary) or [None, "-"])[1],
    }


def main():
    rows = []
    for writers in arg("--writers", ["1", "3"]):
        for pace in arg("--pace", ["off", "line"]):
            out = tempfile.mkdtemp(prefix="ringside-storm-")
            try:
                rows.append(("%s storming, pace=%s" % (writers, pace), run(writers, pace, out)))
            finally:
                shutil.rmtree(out, ignore_errors=True)
    cols = list(rows[0][1])
    print("stock %s, 4 vCPUs, TCG, storm 1 s then sysrq panic on CPU 0" %
          os.path.basename(os.path.realpath(kernel)))
    print("| run | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for name, r in rows:
        print("| %s | %s |" % (name, " | ".join(
            ("%.1f" % r[c]) if isinstance(r[c], float) else
            r[c] if isinstance(r[c], str) else "{:,}".format(r[c]) for c in cols)))


main()
