#!/usr/bin/env python3
"""ringside fuzz resumed after being killed, on the project kernel (TAP).

A real campaign is killed twice while its QEMUs run: once with SIGKILL
(nothing of it gets to clean up; a torn half line is then added to
results.jsonl, as a write cut by the kill leaves one) and once with
SIGTERM (it says how to go on, exits 143).  Each time the same command
goes on: the lines already written stay as they were, no case is run
twice, the cases in flight at the kill run once, and at the end every
case index of the campaign, cold and from snapshots, is in results.jsonl
exactly once.  The QEMUs die with the killed run.  A run of a finished
campaign runs nothing; another seed or --tests on the same directory is
refused; ringside report merges it with no duplicate.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

ringside = os.environ["RINGSIDE_BIN"]
d = tempfile.mkdtemp(prefix="ringside-fuzz-resume-")
out = os.path.join(d, "campaign")
CASES, COLD = 14, 2
TESTS = "panic-task,panic-softirq,panic-hardirq"
cmd = [ringside, "fuzz", "--cases", str(CASES), "--cold", str(COLD),
       "--seed", "31", "--jobs", "2", "--tests", TESTS, "-o", out]
n = 0
failed = 0


def check(ok, what, detail=""):
    global n, failed
    n += 1
    if not ok:
        failed += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, what))
    if not ok and detail:
        print("# " + str(detail)[-2000:].replace("\n", "\n# "))
    sys.stdout.flush()


def lines():
    try:
        with open(os.path.join(out, "results.jsonl"), "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return b""


def rows():
    """The complete lines: each ends in a newline (a torn one does not)."""
    return [json.loads(l) for l in lines().split(b"\n")[:-1] if l]


def qemus():
    """QEMU processes whose command line names the campaign directory."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            argv = open("/proc/%s/cmdline" % pid, "rb").read()
        except OSError:
            continue
        if b"qemu" in argv.split(b"\0")[0] and out.encode() in argv:
            found.append(int(pid))
    return found


def kill_midway(sig, snapshot_lines):
    """Start the campaign, wait until it has written @snapshot_lines more
    snapshot lines with QEMUs running, and send it @sig."""
    before = sum(r["mode"] == "snapshot" for r in rows())
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and p.poll() is None:
        done = sum(r["mode"] == "snapshot" for r in rows()) - before
        if done >= snapshot_lines and qemus():
            break
        time.sleep(0.05)
    running = qemus()
    p.send_signal(sig)
    o, e = p.communicate(timeout=60)
    time.sleep(0.5)
    return p.returncode, o + e, running


print("1..12")

# 1. SIGKILL in the snapshot phase, QEMUs running.
rc, log, running = kill_midway(signal.SIGKILL, 3)
first = lines()
check(rc == -signal.SIGKILL and running and not qemus(),
      "SIGKILL mid-run: its %d QEMUs die with it" % len(running),
      "rc %s, still running %s\n%s" % (rc, qemus(), log))
done1 = {(r["mode"], r["index"]) for r in rows()}
check(3 <= sum(m == "snapshot" for m, _ in done1) < CASES,
      "the killed run recorded some cases, not all (%d)" % len(done1), done1)
# The kill could have cut a line's write: a resumed run drops such a tail.
torn = b'{"index":99,"seed":31,"mode":"snap'
with open(os.path.join(out, "results.jsonl"), "ab") as fh:
    fh.write(torn)

# 2. SIGTERM: the same command resumes, and is stopped again.
rc, log, running = kill_midway(signal.SIGTERM, 3)
second = lines()
m = re.search(r"resuming: (\d+) cases recorded \(\d+ cold\), (\d+) left "
              r"unfinished to run again, (\d+) bytes of a torn last line",
              log)
check(m and int(m.group(1)) == len(done1) and int(m.group(2)) >= 1 and
      int(m.group(3)) == len(torn),
      "the second run resumed the %d cases, the %s in flight at the kill "
      "to run again, and dropped the torn line"
      % (len(done1), m.group(2) if m else "?"), log)
check(rc == 128 + signal.SIGTERM and "the same command goes on" in log
      and not qemus(), "SIGTERM: exit 143, says how to go on, QEMUs gone",
      "rc %s\n%s" % (rc, log))
check(second.startswith(first) and torn not in second,
      "the first run's lines kept byte for byte, the torn one gone")

# 3. The same command again finishes the campaign.
p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
final = rows()
m = re.search(r"(\d+) left unfinished", p.stdout)
check(p.returncode == 0 and "complete=yes" in p.stdout and m and
      int(m.group(1)) >= 1, "the third run reruns the %s cases cut by "
      "SIGTERM and finishes the campaign" % (m.group(1) if m else "?"),
      p.stdout + p.stderr)
check(lines().startswith(second), "the second run's lines kept")
keys = [(r["mode"], r["index"]) for r in final]
want = [("snapshot", i) for i in range(CASES)] + \
    [("cold", i) for i in range(COLD)]
check(sorted(keys) == sorted(want),
      "every case index exactly once: %d snapshot, %d cold, %d lines"
      % (CASES, COLD, len(keys)),
      sorted(k for k in keys if keys.count(k) > 1 or k not in want))
check(all(r["class"] != "error" for r in final) and
      all(os.path.exists(os.path.join(out, r["case"]))
          for r in final if r.get("case")),
      "every case judged, each failing one with its case file",
      [r for r in final if r["class"] == "error"])
runs = os.listdir(os.path.join(out, "runs"))
kept = {("cold" if x.endswith("-cold") else "snapshot",
         int(x.split("-")[0])) for x in runs}
check(kept <= set(keys), "no run directory of an unfinished case left",
      sorted(runs))

# 4. Nothing left to run; another campaign refused; report merges once.
before = lines()
p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
check(p.returncode == 0 and lines() == before
      and "fuzz snapshot:" not in p.stderr,
      "a finished campaign runs no case again", p.stdout + p.stderr)
bad = [c if c != "31" else "32" for c in cmd]
p2 = subprocess.run(bad, capture_output=True, text=True, timeout=60)
p3 = subprocess.run(cmd[:-4] + ["--tests", "panic-nmi", "-o", out],
                    capture_output=True, text=True, timeout=60)
p4 = subprocess.run([ringside, "report", "--html",
                     os.path.join(d, "r.html"), out, out],
                    capture_output=True, text=True, timeout=60)
check(p2.returncode == 2 and "another campaign" in p2.stderr and
      p3.returncode == 2 and "--tests" in p3.stderr and
      p4.returncode == 0 and
      "cases: %d (%d snapshot, %d cold)" % (len(want), CASES, COLD)
      in p4.stdout, "another seed or --tests refused; report counts "
      "each case once", p2.stderr + p3.stderr + p4.stdout + p4.stderr)

sys.exit(1 if failed else 0)
