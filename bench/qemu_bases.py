#!/usr/bin/env python3
"""Benchmark: the fork on its two bases, QEMU 7.2 and QEMU 10.0, side by side.

Both builds must exist (scripts/build-qemu.sh and scripts/build-qemu.sh
--base 10.0).  Each measure runs on both bases, interleaved where it is
timed, in one run:

  boot to panic   'ringside run' (the project kernel, 2 vCPUs, sysrq-panic),
                  paced and unpaced, --boots times each: median wall
  checking cost   bench/verify_cost.py --lines N --runs 1 on each base:
                  the checking device against QEMU's isa-serial
  fuzz rate       'ringside fuzz' (resident mode, quick cases), the same
                  seed and number of cases: cases a minute, cold and resident
  stale int3      Debian's stock 6.12 kernel (the matrix's 'distro' case,
                  unpaced, 2 vCPUs) booted --int3-boots times: how many
                  boots the emulator crashed with a stale int3
                  (kernelmatrix.stale_int3) and how many ended otherwise
  icount, 2 vCPUs the sysrq-panic boot with -icount shift=5,sleep=off and two
                  vCPUs: whether it reaches the panic within 120 s

Usage: qemu_bases.py [--boots N] [--lines N] [--fuzz-cases N]
                     [--int3-boots N] [--skip int3,verify,...]
"""
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "lib"))
import kernelmatrix as km  # noqa: E402

cache = os.environ.get("RINGSIDE_CACHE", os.path.expanduser("~/.cache/ringside"))
ringside = os.environ.get("RINGSIDE_BIN",
                          os.path.join(HERE, "..", "build", "collector", "ringside"))
BASES = {"7.2": os.path.join(cache, "qemu", "build", "qemu-system-x86_64"),
         "10.0": os.path.join(cache, "qemu-10.0", "build", "qemu-system-x86_64")}


def opt(name, default):
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


boots = opt("--boots", 5)
lines = opt("--lines", 20000)
fuzz_cases = opt("--fuzz-cases", 40)
int3_boots = opt("--int3-boots", 50)
skip = sys.argv[sys.argv.index("--skip") + 1].split(",") if "--skip" in sys.argv else []


def env(base):
    return dict(os.environ, RINGSIDE_QEMU=BASES[base])


def run_wall(base, args):
    out = tempfile.mkdtemp(prefix="ringside-bases-")
    try:
        t0 = time.monotonic()
        r = subprocess.run([ringside, "run", "-o", out] + args, env=env(base),
                           capture_output=True, text=True, timeout=300)
        wall = time.monotonic() - t0
        ok = r.returncode == 0 and "verdict=clean" in r.stdout
        return wall, ok
    finally:
        shutil.rmtree(out, ignore_errors=True)


def boot_to_panic():
    print("## boot to panic (ringside run, project kernel, 2 vCPUs, TCG; "
          "median of %d, wall s)" % boots)
    print("| pace | 7.2 | 10.0 | 10.0 / 7.2 |")
    print("|---|---|---|---|")
    for pace in ("line", "off"):
        walls = {b: [] for b in BASES}
        bad = {b: 0 for b in BASES}
        for _ in range(boots):
            for b in BASES:
                w, ok = run_wall(b, ["--pace", pace])
                walls[b].append(w)
                bad[b] += not ok
        m = {b: statistics.median(walls[b]) for b in BASES}
        print("| %s | %.2f%s | %.2f%s | %.2f |" % (
            pace, m["7.2"], " (%d not clean)" % bad["7.2"] if bad["7.2"] else "",
            m["10.0"], " (%d not clean)" % bad["10.0"] if bad["10.0"] else "",
            m["10.0"] / m["7.2"]))
    print()


def verify():
    print("## checking cost (bench/verify_cost.py --lines %d --runs 1)" % lines)
    print("| | 7.2 | 10.0 |")
    print("|---|---|---|")
    got = {}
    for b in BASES:
        r = subprocess.run([sys.executable, os.path.join(HERE, "verify_cost.py"),
                            "--lines", str(lines), "--runs", "1"], env=env(b),
                           capture_output=True, text=True)
        got[b] = {}
        for ln in r.stdout.splitlines():
            m = re.match(r"\| (isa-serial|ringside, checking) \| ([\d.]+) \|", ln)
            if m:
                got[b][m.group(1) + " wall s"] = m.group(2)
            m = re.match(r"checking / isa-serial, wall: ([\d.]+)", ln)
            if m:
                got[b]["checking / isa-serial"] = m.group(1)
        if r.returncode:
            got[b]["error"] = (r.stderr or r.stdout).strip()[-200:]
    for k in sorted(set(got["7.2"]) | set(got["10.0"])):
        print("| %s | %s | %s |" % (k, got["7.2"].get(k, "-"),
                                    got["10.0"].get(k, "-")))
    print()


def fuzz():
    print("## fuzz rate (ringside fuzz -n %d -j 2 -s 11, resident, quick cases)"
          % fuzz_cases)
    print("| | 7.2 | 10.0 |")
    print("|---|---|---|")
    got = {}
    for b in BASES:
        out = tempfile.mkdtemp(prefix="ringside-bases-fuzz-")
        try:
            r = subprocess.run([ringside, "fuzz", "-n", str(fuzz_cases), "-j",
                                "2", "-s", "11", "-o", out], env=env(b),
                               capture_output=True, text=True, timeout=1800)
        finally:
            shutil.rmtree(out, ignore_errors=True)
        m = re.search(r"cold boots ([\d.]+) cases/min \| resident ([\d.]+) "
                      r"cases/min", r.stdout)
        got[b] = m.groups() if m else ("?", "?")
    print("| cold boots, cases/min | %s | %s |" % (got["7.2"][0], got["10.0"][0]))
    print("| resident, cases/min | %s | %s |" % (got["7.2"][1], got["10.0"][1]))
    print()


def int3():
    kernel = os.path.join(cache, "stock", "matrix", "6.12")
    print("## stale int3: Debian's stock 6.12 (%s), %d boots each, "
          "distro case, unpaced, 2 vCPUs" % (km.kernel_release(kernel), int3_boots))
    print("| | 7.2 | 10.0 |")
    print("|---|---|---|")
    count = {b: {"poweroff": 0, "stale int3": 0, "other": 0} for b in BASES}
    for _ in range(int3_boots):
        for b in BASES:
            out = tempfile.mkdtemp(prefix="ringside-bases-int3-")
            os.environ["RINGSIDE_QEMU"] = BASES[b]
            try:
                r = km.boot_once(ringside, "6.12", kernel, "off", out)
                if r["ended"] == "poweroff":
                    count[b]["poweroff"] += 1
                elif km.stale_int3(out):
                    count[b]["stale int3"] += 1
                else:
                    count[b]["other"] += 1
            finally:
                shutil.rmtree(out, ignore_errors=True)
    os.environ.pop("RINGSIDE_QEMU", None)
    for k in ("poweroff", "stale int3", "other"):
        print("| %s | %d | %d |" % (k, count["7.2"][k], count["10.0"][k]))
    print()


def icount():
    print("## -icount shift=5,sleep=off with 2 vCPUs (sysrq-panic, 120 s)")
    print("| | 7.2 | 10.0 |")
    print("|---|---|---|")
    res = {}
    for b in BASES:
        out = tempfile.mkdtemp(prefix="ringside-bases-icount-")
        line = subprocess.run([ringside, "run", "--print-qemu", "--pace", "off",
                               "--smp", "2", "-o", out], env=env(b),
                              capture_output=True, text=True, check=True).stdout
        argv = shlex.split(line) + ["-icount", "shift=5,sleep=off"]
        console = os.path.join(out, "console.log")
        t0 = time.monotonic()
        try:
            subprocess.run(argv, capture_output=True, timeout=120)
            hung = False
        except subprocess.TimeoutExpired:
            hung = True
        text = open(console, "rb").read() if os.path.exists(console) else b""
        last = (text.strip().splitlines()[-1:] or [b""])[0]
        last = last.decode(errors="replace")[:70]
        if b"Kernel panic - not syncing" in text:
            res[b] = "reached the panic in %.1f s" % (time.monotonic() - t0)
        else:
            res[b] = "%s; last line: %s" % (
                "hung, no panic in 120 s" if hung else "ended without a panic",
                last or "(none)")
        shutil.rmtree(out, ignore_errors=True)
    print("| result | %s | %s |" % (res["7.2"], res["10.0"]))
    print()


def main():
    for b, q in BASES.items():
        if not os.access(q, os.X_OK):
            sys.exit("qemu_bases: no %s build at %s" % (b, q))
    print("ringside-serial's fork on QEMU 7.2 and QEMU 10.0, %s\n" %
          time.strftime("%Y-%m-%d"))
    for name, fn in (("boot", boot_to_panic), ("verify", verify),
                     ("fuzz", fuzz), ("icount", icount), ("int3", int3)):
        if name not in skip:
            fn()
            sys.stdout.flush()


main()
