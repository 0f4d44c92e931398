#!/usr/bin/env python3
"""Console records over 1 KiB, judged whole (TAP).

Usage: test_long_record.py [KVER ...]   (default: 6.12 6.1)

From 6.3 the kernel formats a console record in a 2 KiB buffer
(PRINTK_MESSAGE_MAX) and stores up to 1 KiB of text per record, so a
one-line record prints up to 1 KiB plus its prefix; up to 6.2 both the
buffer and the line stay under 1 KiB (CONSOLE_LOG_MAX, LOG_LINE_MAX).

The guest's own boot makes such a record: the kernel logs its command
line ("Command line: ..." from setup_arch(), "Kernel command line: ..."
from start_kernel()), and a command line of over 1 KiB (ringside.pad=,
which nothing reads) fills those records: on 6.12 their lines, with
CONFIG_PRINTK_CALLER's prefix, are over 1 KiB, while 6.1 keeps their text
short of its 1 KiB console buffer.

For each kernel (the project's, with the handshake: level 0 and level 1),
one unpaced boot to poweroff under TCG, 1 vCPU, then:
  - the run ended in poweroff and the device attached to the ring;
  - on 6.12 the command line records reach the wire as lines over 1 KiB
    (on 6.1 under it: the control);
  - level 0 judged each of them ok, against its record;
  - level 1 judged the bracket holding each of them ok, and no other
    bracket covers its bytes;
  - the run is clean at both levels (no problem, nothing unchecked).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import tap  # noqa: E402

cache = os.environ.get("RINGSIDE_CACHE", os.path.expanduser("~/.cache/ringside"))
ringside = os.environ["RINGSIDE_BIN"]
KVERS = sys.argv[1:] or ["6.12", "6.1"]
# The kernel's command line is the default one (some 70 bytes) plus these
# 1100, far under x86's COMMAND_LINE_SIZE (2048): each record that logs it
# holds as much text as a record can, its end cut by printk() itself, 1023
# bytes on 6.12 (PRINTKRB_RECORD_MAX) and 975 on 6.1 (LOG_LINE_MAX with
# the caller's prefix), less the 2 bytes of KERN_INFO/KERN_NOTICE: 1044
# and 996 bytes on the wire with the prefix "[    0.000000][    T0] ".
PAD = "ringside.pad=" + "-".join("%03d" % i for i in range(272))
LONG = 1024         # the line (without "\r\n") 6.1's console buffer cannot hold
MARKERS = (b"Command line: ", b"Kernel command line: ")


def kernel_of(kver):
    # build-kernel.sh's outputs: kernel/ for 6.1, kernel-KVER/ for others.
    return os.path.join(cache, "kernel" if kver == "6.1" else "kernel-" + kver,
                        "bzImage")


def events(out):
    with open(os.path.join(out, "events.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def covers(ev, line):
    return ("first" in ev and ev["first"] <= line["first"] and
            line["last"] <= ev["last"])


def boot(kver):
    kernel = kernel_of(kver)
    if not os.path.exists(kernel):
        print("# SKIP %s: no %s (scripts/build-kernel.sh --kernel-version %s)"
              % (kver, kernel, kver))
        return
    with tempfile.TemporaryDirectory(prefix="ringside-long-") as out:
        r = subprocess.run([ringside, "run", "-q", "--kernel", kernel,
                            "--case", "poweroff", "--smp", "1",
                            "--pace", "off", "--accel", "tcg",
                            "--timeout", "120", "--out", out,
                            "--append", PAD],
                           capture_output=True, text=True)
        m = re.search(r"ended=(\S+)", r.stdout)
        ended = m.group(1) if m else "error"
        rep = subprocess.run([ringside, "report", "--json",
                              os.path.join(out, "events.jsonl")],
                             capture_output=True, text=True)
        try:
            v = json.loads(rep.stdout)
        except ValueError:
            v = {}
        if not tap.check(ended == "poweroff" and v.get("ring") == "attached",
                         "%s: boots to poweroff with %d more bytes of command "
                         "line, ring attached" % (kver, len(PAD) + 1),
                         "ended=%s ring=%s\n%s\n%s" %
                         (ended, v.get("ring"), r.stdout[-1500:],
                          r.stderr[-1500:])):
            return
        with open(os.path.join(out, "console.log"), "rb") as f:
            console = f.read()   # unpaced: byte i of the stream at offset i
        ev = events(out)
        lines = [e for e in ev if e.get("ev") == "line"]
        brackets = [e for e in ev if e.get("ev") == "bracket"]

        def text(e):
            return console[e["first"]:e["last"] + 1].rstrip(b"\r\n")

        cmd = [e for e in lines if any(mk in text(e) for mk in MARKERS)]
        lens = [len(text(e)) for e in cmd]
        if kver == "6.1":
            tap.check(len(cmd) == 2 and all(n < LONG for n in lens),
                      "6.1: the 2 command line records print under 1 KiB "
                      "(%s bytes)" % lens, repr([text(e)[:80] for e in cmd]))
        else:
            tap.check(len(cmd) == 2 and all(n > LONG for n in lens),
                      "%s: the 2 command line records print over 1 KiB "
                      "(%s bytes)" % (kver, lens),
                      repr([text(e)[:80] for e in cmd]))
        bad = [(e["verdict"], len(text(e))) for e in cmd
               if e["verdict"] != "ok"]
        tap.check(cmd and not bad,
                  "%s: level 0 judges them ok" % kver,
                  "not ok: %r" % bad)
        l1_bad = []
        for e in cmd:
            over = [b for b in brackets if covers(b, e)]
            if not over or any(b["verdict"] != "ok" for b in over):
                l1_bad.append((len(text(e)), [(b["verdict"], b.get("len"))
                                              for b in over]))
        tap.check(cmd and not l1_bad,
                  "%s: level 1 judges their brackets ok" % kver,
                  "lines and the brackets covering them: %r" % l1_bad)
        l0 = v.get("lines", {})
        l1 = v.get("l1") or {}
        br = l1.get("brackets", {})
        rec = l1.get("records", {})
        tap.check(v.get("problems") == 0 and l0.get("unchecked") == 0 and
                  v.get("summary_agrees") and l1.get("summary_agrees") and
                  not any(br.get(k) for k in ("corrupt", "cut", "bogus",
                                              "unchecked")) and
                  not any(rec.get(k) for k in ("missing", "cut", "damaged",
                                               "duplicate")),
                  "%s: clean at both levels (%d lines ok, %d records "
                  "delivered)" % (kver, l0.get("ok", 0),
                                  rec.get("delivered", 0)),
                  json.dumps({"lines": l0, "l1": l1})[:1500])


def main():
    if not any(os.path.exists(kernel_of(k)) for k in KVERS):
        print("1..0 # SKIP no project kernel (scripts/build-kernel.sh)")
        return 0
    for kver in KVERS:
        boot(kver)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
