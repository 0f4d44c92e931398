#!/usr/bin/env python3
"""Every panic path on the patched kernel, judged at level 1 (TAP).

Usage: test_panic_paths.py [KVER]   (6.1, the default, or 6.12)

Boots the project kernel of that version (with guest-kernel/KVER/patches/,
so the handshake and the atomic console: the series' own on 6.1, the 8250
as an nbcon console on 6.12) under TCG with 1, 2 and 4 vCPUs and runs the
test module's panic cases (/init's panic-test case), other CPUs storming printk.  For each run, from the device's own verdicts (ringside report
--json): the guest panicked, the kernel announced its ring, every record
the console went past reached the wire whole (no record missing, cut or
damaged, none printed twice, no bracket corrupt or naming a record that
is not there) and the panic record itself was delivered.  A record cut on
the wire by a takeover counts only if it was never reprinted whole.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

cache = os.environ.get("RINGSIDE_CACHE", os.path.expanduser("~/.cache/ringside"))
ringside = os.environ["RINGSIDE_BIN"]
kver = sys.argv[1] if len(sys.argv) > 1 else "6.1"
# build-kernel.sh's outputs: kernel/ for 6.1, kernel-KVER/ for the others.
kernel = os.path.join(cache, "kernel" if kver == "6.1" else "kernel-" + kver,
                      "bzImage")

# (vCPUs, case, storming CPUs).  Not here: hardlockup, which needs the NMI
# watchdog's perf counter (no PMU under TCG; the case says so and returns).
RUNS = [(1, "panic-task", 0), (1, "panic-nmi", 0), (1, "warn-storm", 0),
        (1, "pending-panic", 0)]
RUNS += [(2, c, 1) for c in ("panic-task", "panic-softirq", "panic-hardirq",
                             "panic-nmi", "port-lock", "nested-oops",
                             "warn-storm", "stress-panic")]
RUNS += [(4, "panic-nmi", 3), (4, "panic-hardirq", 3), (4, "port-lock", 3)]
if kver != "6.1":
    # The same cases, fewer runs: every case once on 2 vCPUs with a storm,
    # the pending records on 1, and a port-lock holder (which owns the nbcon
    # console, unsafe: the panic must take it over) among three storms.
    # The WARN storm goes without the printk storm here: nbcon prints every
    # pending record from each WARN's emergency section, which under TCG
    # takes over 2 minutes of guest time with one (and passes).
    RUNS = [(1, "pending-panic", 0)] + RUNS[4:12] + [(4, "port-lock", 3)]
    RUNS = [(s, c, 0 if c == "warn-storm" else n) for s, c, n in RUNS]
# To chase a flaky case: RINGSIDE_PANIC_RUNS="2:panic-nmi:1*20" (vCPUs:case:
# storming CPUs, optionally *repeats, comma-separated) runs only those.
if os.environ.get("RINGSIDE_PANIC_RUNS"):
    RUNS = []
    for spec in os.environ["RINGSIDE_PANIC_RUNS"].split(","):
        spec, _, times = spec.partition("*")
        smp, case, storm = spec.split(":")
        RUNS += [(int(smp), case, int(storm))] * int(times or 1)

n = 0
failed = 0


def check(ok, what):
    global n, failed
    n += 1
    if not ok:
        failed += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
    sys.stdout.flush()


def panic_delivered(out):
    """Is 'Kernel panic - not syncing' inside a bracket judged delivered:
    ok, or overwritten (three storming CPUs can push the record out of the
    ring while it is on the wire: whole, but no longer comparable)?
    Unpaced, console.log holds byte i of the stream at offset i."""
    with open(os.path.join(out, "console.log"), "rb") as f:
        console = f.read()
    with open(os.path.join(out, "events.jsonl")) as f:
        for line in f:
            ev = json.loads(line)
            if (ev.get("ev") == "bracket" and
                    ev["verdict"] in ("ok", "overwritten") and
                    b"Kernel panic - not syncing" in
                    console[ev["first"]:ev["last"] + 1]):
                return True
    return False


def replay_notices(out):
    """Brackets holding nbcon's "** replaying previous printk message **":
    after a takeover the new owner prints the record again, and when the
    old owner had got all of it out (lost the console between its last
    byte and the console's seq update, a safe point by nbcon's design),
    that is a second whole copy the kernel owned up to."""
    with open(os.path.join(out, "console.log"), "rb") as f:
        console = f.read()
    n = 0
    with open(os.path.join(out, "events.jsonl")) as f:
        for line in f:
            ev = json.loads(line)
            if (ev.get("ev") == "bracket" and "first" in ev and
                    b"** replaying previous printk message **" in
                    console[ev["first"]:ev["last"] + 1]):
                n += 1
    return n


def keep(out, name, summary):
    """A failing run's directory, kept in the cache with what it said: a
    case that fails once in many runs is then there to read."""
    dest = os.path.join(cache, "failed", "panic-%s-%d" % (
        re.sub(r"[^a-z0-9=.-]+", "_", name), int(time.time())))
    shutil.copytree(out, dest, ignore=shutil.ignore_patterns("guest.ram"))
    print("# kept: %s" % dest)
    for line in summary.strip().splitlines()[-1:]:
        print("# " + line)
    with open(os.path.join(out, "console.log"), "rb") as f:
        tail = f.read()[-600:].decode("utf-8", "replace")
    for line in tail.splitlines()[-6:]:
        print("#   " + line)


def one(smp, case, storm):
    with tempfile.TemporaryDirectory(prefix="ringside-panic-") as out:
        r = subprocess.run([ringside, "run", "-q", "--kernel", kernel,
                            "--case", "panic-test", "--smp", str(smp),
                            "--pace", "off", "--accel", "tcg",
                            "--timeout", "120", "--out", out, "--append",
                            "ringside.panic=%s test_printk_panic.storm=%d"
                            % (case, storm)],
                           capture_output=True, text=True)
        m = re.search(r"ended=(\S+)", r.stdout)
        ended = m.group(1) if m else "error: " + r.stderr.strip()[-200:]
        rep = subprocess.run([ringside, "report", "--json",
                              os.path.join(out, "events.jsonl")],
                             capture_output=True, text=True)
        try:
            v = json.loads(rep.stdout)
        except ValueError:
            v = {}
        l1 = v.get("l1")
        name = "%s smp=%d storm=%d" % (case, smp, storm)
        if ended != "panic" or not l1:
            check(False, "%s: ended=%s, level 1 %s" %
                  (name, ended, "seen" if l1 else "NOT seen"))
            return
        rec, br = l1["records"], l1["brackets"]
        bad = {k: rec[k] for k in ("missing", "cut", "damaged", "duplicate")
               if rec[k]}
        # nbcon (6.12): a copy printed again after a replay notice is owned up
        # to; more duplicates than notices are not.
        replays = replay_notices(out) if kver != "6.1" else 0
        if 0 < bad.get("duplicate", 0) <= replays:
            del bad["duplicate"]
        bad.update({"bracket-" + k: br[k] for k in ("corrupt", "bogus")
                    if br[k]})
        if not panic_delivered(out):
            bad["panic-record"] = "not delivered"
        if not l1["summary_agrees"]:
            bad["summary"] = "differs"
        if bad:
            keep(out, name, r.stdout)
        check(not bad, "%s: %d delivered, %d dropped by the kernel, %d "
              "takeovers, %d cut brackets reprinted%s%s" %
              (name, rec["delivered"], rec["dropped"], l1["takeovers"],
               br["cut"], ", %d replay notices (%d duplicates)" %
               (replays, rec["duplicate"]) if replays else "",
               "" if not bad else "; " + json.dumps(bad)))


def main():
    if not os.path.exists(kernel):
        print("1..0 # SKIP no %s (scripts/build-kernel.sh --kernel-version %s)"
              % (kernel, kver))
        return 0
    print("1..%d" % len(RUNS))
    for smp, case, storm in RUNS:
        one(smp, case, storm)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
