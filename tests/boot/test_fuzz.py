#!/usr/bin/env python3
"""ringside fuzz, run --case, --minimize and replay on the project kernel (TAP).

A small fuzz run: every case judged, failing ones saved as case files, the
snapshot cases really restored (no boot on their wire, the scenario read
from the mailbox), a shard drawing exactly its share of the same seed's
scenarios; a case file rerun; a case that cannot panic under TCG (the
module's hardlockup: no NMI watchdog) minimised to one vCPU and no storm;
a one-vCPU case recorded and replayed with the same wire and verdicts.
The resident fuzzer (many cases in one QEMU, reset by loadvm): each
case's console and events its own, cut at the case's own markers even
after panics with records still to flush and a case stopped as hung; the
same scenarios as a new QEMU per case; a failing case rerun.
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


print("1..23")

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

# The resident fuzzer.  pending-panic panics with records still to flush;
# hardlockup cannot panic under TCG and powers the guest off; warn-storm
# on 4 vCPUs under --timeout 1 is likely stopped as hung.  One job, so
# each QEMU runs its vCPU count's cases in index order: seed 5 has two
# hardlockup cases that the same QEMU follows with another case.
d5 = os.path.join(d, "d5")
tests5 = "panic-task,pending-panic,warn-storm,hardlockup"
p = run(["fuzz", "--cases", "12", "--cold", "2", "--seed", "5", "--jobs",
         "1", "--timeout", "1", "--keep-runs", "--tests", tests5, "-o", d5])
rows5 = [r for r in results(d5) if r["mode"] == "snapshot"] \
    if os.path.exists(os.path.join(d5, "results.jsonl")) else []
check(p.returncode == 0 and sorted(r["index"] for r in rows5) ==
      list(range(12)) and all(r.get("restore") == "resident" for r in rows5),
      "resident: 12 cases, each run in a resident QEMU", p.stdout + p.stderr)
check(re.search(r"targets: cold boots [0-9.]+ cases/min \| resident [0-9.]+ "
                r"cases/min \| [0-9.]+x \(target 5x: \w+\) \| median "
                r"overhead [0-9.]+ ms a case \(target 50 ms: \w+\)",
                p.stdout) and "per-case overhead, median" in p.stdout,
      "the summary prints the rate and overhead targets side by side",
      p.stdout)


def text(path):
    with open(path, "rb") as fh:
        return fh.read().decode("utf-8", "replace")


epoch_re = re.compile(r"ringside-init: fuzz: scenario (.*) ringside\.epoch="
                      r"(\d+)\r?$", re.M)
bad = []
for r in rows5:
    rd = os.path.join(d5, "runs", str(r["index"]))
    con = text(os.path.join(rd, "console.log"))
    marks = epoch_re.findall(con)
    evs = [json.loads(l) for l in open(os.path.join(rd, "events.jsonl"))]
    kinds = [e["ev"] for e in evs]
    closing = kinds[kinds.index("summary"):] if "summary" in kinds else []
    if marks != [(r["words"], str(r["index"]))] or r.get("stray_bytes"):
        bad.append((r["index"], "console", marks, r.get("stray_bytes")))
    if kinds[:2] != ["start", "ring"] or evs[1].get("why") != "reset" or \
            kinds.count("summary") != 1 or kinds.count("resume") != 1 or \
            any(k not in ("summary", "bracket", "l1-summary")
                for k in closing):
        bad.append((r["index"], "events", kinds[:3], closing[:4]))
check(rows5 and not bad, "each case's console holds its own epoch line and "
      "no other's, its events run from its restore's reset to its summary",
      bad)

# Nothing lost or doubled: a QEMU's console after its boot is its cases'
# consoles one after the other, in the order they ran.
bad = []
for q in sorted(set(r["qemu"] for r in rows5 if "qemu" in r)):
    mine = [r for r in rows5 if r.get("qemu") == q]
    mine.sort(key=lambda r: r["end_unix_ms"])
    whole = text(os.path.join(d5, q, "console.log"))
    cases = "".join(text(os.path.join(d5, "runs", str(r["index"]),
                                      "console.log")) for r in mine)
    if not cases or not whole.endswith(cases) or \
            epoch_re.search(whole[:len(whole) - len(cases)]):
        bad.append(q)
check(rows5 and not bad, "each QEMU's console is its cases' consoles in "
      "turn: nothing mixed, lost or doubled", bad)
flushing = [r for r in rows5 if r["test"] == "pending-panic" and
            r["class"] != "hung"]
check(flushing and all(r["class"] in ("clean", "lost", "torn", "corrupt",
                                      "duplicated") and
                       r.get("ended") == "panic" for r in flushing),
      "cases that panic with records still to flush are judged as panics "
      "(%d)" % len(flushing), flushing)
ended = [r for r in rows5 if r["class"] in ("hung", "guest-did-not-panic")]
after = [r for r in rows5 if any(r.get("qemu") == h.get("qemu") and
                                 r["end_unix_ms"] > h["end_unix_ms"]
                                 for h in ended)]
check(len([r for r in ended if r["test"] == "hardlockup"]) == 3 and
      len(after) >= 2 and all(r["class"] != "error" for r in after),
      "after a guest's poweroff or a case stopped as hung (%d), its QEMU "
      "runs the next ones (%d)" % (len(ended), len(after)), rows5)

# The same seed and index give the same scenario in a new QEMU per case.
d6 = os.path.join(d, "d6")
p = run(["fuzz", "--cases", "3", "--cold", "0", "--seed", "5", "--mode",
         "process", "--timeout", "2", "--tests", tests5, "-o", d6])
rows6 = results(d6) if p.returncode == 0 else []
w5 = {r["index"]: r["words"] for r in rows5}
check(len(rows6) == 3 and all(w5.get(r["index"]) == r["words"] and
                              r.get("restore") is None for r in rows6),
      "--mode process runs the same scenarios for the same seed and index",
      p.stdout + p.stderr)

# A failing resident case reruns from its case file.
failing5 = [r for r in rows5 if r["class"] != "clean" and "case" in r and
            r["test"] != "hardlockup"]
rf = failing5[0] if failing5 else None
if rf:
    p = run(["run", "--case", os.path.join(d5, rf["case"]), "-q", "--pace",
             "off", "-o", os.path.join(d, "rerun5")])
    con = text(os.path.join(d, "rerun5", "console.log")) \
        if os.path.exists(os.path.join(d, "rerun5", "console.log")) else ""
    check(re.search(r" class=[a-z-]+ ", p.stdout) and
          ("fuzz: scenario " + rf["words"]) in con,
          "ringside run --case reruns resident case %s (%s)"
          % (rf["index"], rf["class"]), p.stdout + p.stderr)
else:
    print("ok %d - # SKIP no failing resident case to rerun" % (n + 1))
    n += 1

sys.exit(1 if failed else 0)
