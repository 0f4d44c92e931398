#!/usr/bin/env python3
"""ringside fuzz, run --case, --minimize and replay on the project kernel (TAP).

A small fuzz run: every case judged, failing ones saved as case files, the
snapshot cases really restored (no boot on their wire, the scenario read
from the mailbox), a shard drawing exactly its share of the same seed's
scenarios; a case file rerun; a case that cannot panic under TCG (the
module's hardlockup: no NMI watchdog) minimised to one vCPU and no storm;
a one-vCPU case recorded and replayed with the same wire and verdicts.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ringside = os.environ["RINGSIDE_BIN"]
d = tempfile.mkdtemp(prefix="ringside-fuzz-test-")
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


def run(args, timeout=600):
    return subprocess.run([ringside] + args, capture_output=True, text=True,
                          timeout=timeout)


def results(out):
    with open(os.path.join(out, "results.jsonl")) as fh:
        return [json.loads(l) for l in fh if l.strip()]


def case_file(name, **kw):
    sc = dict(test="panic-task", smp=1, storm=0, storm_ms=0, storm_len=1,
              storm_level=4, storm_gap_us=0, warns=10, pending=10,
              stress_ms=50)
    sc.update(kw)
    origin = sc.pop("origin", None)
    path = os.path.join(d, name)
    with open(path, "w") as fh:
        fh.write("[scenario]\n")
        fh.writelines("%s=%s\n" % kv for kv in sc.items())
        if origin:
            fh.write("[origin]\nclass=%s\n" % origin)
    return path


print("1..15")

# A fuzz run: 12 scenarios from snapshots, the first 4 also booted cold.
d1 = os.path.join(d, "d1")
p = run(["fuzz", "--cases", "12", "--cold", "4", "--seed", "7", "--jobs",
         "2", "-o", d1])
check(p.returncode == 0 and "cases/min" in p.stdout, "fuzz ran",
      p.stdout + p.stderr)
rows = results(d1) if p.returncode == 0 else []
snap = {r["index"]: r for r in rows if r["mode"] == "snapshot"}
cold = {r["index"]: r for r in rows if r["mode"] == "cold"}
check(sorted(snap) == list(range(12)) and sorted(cold) == list(range(4)),
      "12 cases from snapshots, 4 cold", sorted(snap), )
check(all(r["class"] != "error" for r in rows),
      "every case judged", [r for r in rows if r["class"] == "error"])
failing = [r for r in snap.values() if r["class"] != "clean"]
check(all(r.get("case") and os.path.exists(os.path.join(d1, r["case"]))
          for r in failing), "a case file for each of %d failing cases"
      % len(failing), failing)
m = re.search(r"cold boots: +4 cases in [0-9.]+ s, ([0-9.]+) cases/min",
              p.stdout)
m2 = re.search(r"from snapshots: 12 cases in [0-9.]+ s, ([0-9.]+) cases/min",
               p.stdout)
check(m and m2 and float(m.group(1)) > 0 and float(m2.group(1)) > 0,
      "both rates printed", p.stdout)

# Case 0's run directory is kept: it was restored, not booted.
console = open(os.path.join(d1, "runs", "0", "console.log"),
               errors="replace").read() if rows else ""
events = open(os.path.join(d1, "runs", "0", "events.jsonl")).read() \
    if rows else ""
check('"ev":"resume"' in events and "Linux version" not in console,
      "a snapshot case resumes the saved guest (no boot on its wire)")
check(rows and ("fuzz: scenario " + snap[0]["words"]) in console,
      "the guest read its scenario from the mailbox", console[-1500:])

# A shard draws its share of the same scenarios.
d2 = os.path.join(d, "d2")
p = run(["fuzz", "--cases", "6", "--cold", "0", "--seed", "7", "--shard",
         "1/2", "--tests", "panic-task,panic-softirq", "-o", d2])
rows2 = results(d2) if p.returncode == 0 else []
check(sorted(r["index"] for r in rows2) == [1, 3, 5],
      "shard 1/2 of 6 runs scenarios 1, 3 and 5", p.stdout + p.stderr)
check(all(r["test"] in ("panic-task", "panic-softirq") for r in rows2),
      "--tests limits the cases drawn", rows2)

# A case file reruns.
rerun = failing[0]["case"] if failing else None
path = os.path.join(d1, rerun) if rerun else case_file("task.case", smp=2,
                                                       storm=1, storm_ms=20)
p = run(["run", "--case", path, "-q", "--pace", "off", "-o",
         os.path.join(d, "rerun")])
check(re.search(r" class=[a-z-]+ ", p.stdout) and "fuzz: scenario " in
      open(os.path.join(d, "rerun", "console.log"), errors="replace").read(),
      "ringside run --case reruns %s" % os.path.basename(path),
      p.stdout + p.stderr)

# Minimisation keeps the class and drops what does not matter.
hl = case_file("hl.case", test="hardlockup", smp=3, storm=2, storm_ms=20,
               storm_len=40, storm_gap_us=64, origin="guest-did-not-panic")
d3 = os.path.join(d, "d3")
p = run(["fuzz", "--minimize", hl, "--tries", "1", "-o", d3])
mini = open(os.path.join(d3, "minimized.case")).read() \
    if p.returncode == 0 else ""
check("smp=1\n" in mini and "storm=0\n" in mini and "storm_ms=0\n" in mini
      and "class=guest-did-not-panic" in mini,
      "--minimize shrinks hardlockup to 1 vCPU and no storm",
      p.stdout + p.stderr + mini)

# A case that does not fail is not shrunk against.
ok = case_file("ok.case", origin="lost")
p = run(["fuzz", "--minimize", ok, "--tries", "1", "-o",
         os.path.join(d, "d4")])
check(p.returncode == 1 and "did not fail (lost) in 1 runs" in p.stdout,
      "--minimize of a case that does not fail exits 1 and says so",
      p.stdout + p.stderr)

# Record and replay one case.
rp = case_file("rr.case", test="pending-panic", pending=200)
p = run(["replay", rp, "-o", os.path.join(d, "rr")])
check(p.returncode == 0 and "replay reproduced" in p.stdout,
      "ringside replay reproduces a one-vCPU case", p.stdout + p.stderr)
rec = open(os.path.join(d, "rr", "record", "console.log"), "rb").read() \
    if p.returncode == 0 else b""
rep = open(os.path.join(d, "rr", "replay", "console.log"), "rb").read() \
    if p.returncode == 0 else b"-"
check(rec == rep and b"Kernel panic - not syncing" in rec,
      "the replay's console is the recording's, byte for byte (%d bytes)"
      % len(rec))
m = re.search(r"record: class=(\S+)", p.stdout)
m2 = re.search(r"replay: class=(\S+)", p.stdout)
check(m and m2 and m.group(1) == m2.group(1), "the same class both times",
      p.stdout)

sys.exit(1 if failed else 0)
