#!/usr/bin/env python3
"""Boot test (TAP): ringside dmesg reads the guest's printk ring, with no
help from the guest, and must agree record for record with the guest's own
dmesg.  The guest (case dmesg-hang) prints its log read from /dev/kmsg to
the console and stays up; ringside dmesg then reads the ring from the live
shared RAM file, and from QEMU dump-guest-memory ELF dumps made with paging
off and on.  The QEMU command line comes from 'ringside run --print-qemu'.

With --crash VMLINUX (the kernel's -dbg vmlinux), each dump is also read by
crash's 'log', the reference, and must give the same records; makedumpfile
--dump-dmesg is tried on the same dumps and its result reported.

Usage: test_dmesg.py KERNEL [--caller] [--crash VMLINUX]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
from liveguest import LiveGuest  # noqa: E402

ringside = os.environ["RINGSIDE_BIN"]
kernel = sys.argv[1]
caller = "--caller" in sys.argv[2:]
vmlinux = sys.argv[sys.argv.index("--crash") + 1] if "--crash" in sys.argv else None
results = []


def check(what, ok, detail=""):
    results.append(ok)
    print("%s %d - %s" % ("ok" if ok else "not ok", len(results), what))
    if not ok and detail:
        for line in detail.splitlines()[:30]:
            print("# " + line)


def guest_dmesg(lines):
    """The records /init printed between its markers."""
    b = lines.index("ringside-dmesg-begin")
    return lines[b + 1:lines.index("ringside-dmesg-end")]


def ringside_dmesg(path, *extra):
    args = [ringside, "dmesg"] + (["--caller"] if caller else []) + list(extra)
    p = subprocess.run(args + [path], capture_output=True, text=True,
                       errors="replace", timeout=60)
    return p.returncode, p.stdout.split("\n")[:-1], p.stderr


def crash_log(dump):
    """crash's 'log', with the time stamp repeated on continuation lines:
    crash indents the later lines of a multi-line record, where the console
    (and ringside) repeat the prefix."""
    p = subprocess.run(["crash", "-s", vmlinux, dump], input="log\nquit\n",
                       capture_output=True, text=True, errors="replace",
                       timeout=300)
    lines, prefix = [], ""
    for line in p.stdout.split("\n")[:-1]:
        if line.startswith("[") and "] " in line:
            prefix = line[:line.index("] ") + 2]
        elif prefix and line.startswith(" " * len(prefix)):
            line = prefix + line[len(prefix):]
        lines.append(line)
    return p.returncode, lines, p.stderr


def try_makedumpfile(dump):
    out = dump + ".mdf.txt"
    p = subprocess.run(["makedumpfile", "--dump-dmesg", dump, out],
                       capture_output=True, text=True, timeout=300)
    verdict = "read it" if p.returncode == 0 else "failed: " + \
        " ".join(p.stdout.split("\n")[-3:] + p.stderr.split("\n")[-3:]).strip()
    print("# makedumpfile --dump-dmesg on %s: %s" % (os.path.basename(dump), verdict))


def compare(what, expected, got_rc, got, err):
    # The ring holds the records /init printed, then whatever the kernel
    # logged after /init read it: the guest's dmesg must be a prefix.
    n = len(expected)
    ok = got_rc == 0 and n > 50 and got[:n] == expected
    detail = err
    if got_rc == 0:
        for i, (a, b) in enumerate(zip(expected, got)):
            if a != b:
                detail += "first difference at line %d:\n guest: %r\n ringside: %r\n" % (i, a, b)
                break
        detail += "guest dmesg %d lines, ringside %d" % (n, len(got))
    check(what, ok, detail)


def main():
    out = tempfile.mkdtemp(prefix="ringside-dmesg-")
    g = None
    print("1..%d" % (12 if vmlinux else 10))
    try:
        g = LiveGuest(ringside, out, "dmesg-hang", "--kernel", kernel)
        g.wait_ram()
        # --follow from the start of boot: it must wait for the kernel's
        # note, then print every record as it lands.
        follow_out = open(os.path.join(out, "follow.txt"), "w+")
        follow = subprocess.Popen(
            [ringside, "dmesg", "--follow"] + (["--caller"] if caller else []) + [g.ram],
            stdout=follow_out, stderr=subprocess.STDOUT)
        lines = g.wait_line("ringside-dmesg-end")
        check("guest printed its dmesg and stays up",
              lines is not None and g.alive(), g.qemu_log())
        if lines is None:
            follow.kill()
            return
        guest = guest_dmesg(lines)
        time.sleep(0.5)
        follow.terminate()
        follow.wait()
        follow_out.seek(0)
        followed = follow_out.read().split("\n")[:-1]
        compare("--follow from boot == guest dmesg", guest, 0, followed, "")
        compare("live shared RAM == guest dmesg", guest, *ringside_dmesg(g.ram))
        rings = [e for e in map(json.loads, open(os.path.join(out, "events.jsonl")))
                 if e["ev"] == "ring"]
        osrel = subprocess.run([ringside, "dmesg", "--json", g.ram], capture_output=True,
                               text=True).stdout.split("\n")[0]
        version = json.loads(osrel)["text"].split()[2] if osrel else "?"
        check("the device found the guest's ring by itself (%s)" %
              (rings[-1].get("via") if rings else "-"),
              bool(rings) and rings[0]["state"] == "none" and
              rings[-1]["state"] == "attached" and rings[-1]["osrelease"] == version,
              "ring events %r, kernel says version %r" % (rings, version))

        rc, js, err = ringside_dmesg(g.ram, "--json")
        recs = [json.loads(l) for l in js] if rc == 0 else []
        seqs = [r["seq"] for r in recs]
        check("--json: valid records, seqs strictly increasing",
              rc == 0 and len(recs) >= len(guest) // 2 and
              all(b > a for a, b in zip(seqs, seqs[1:])) and
              all({"seq", "ts_nsec", "level", "facility", "caller", "flags",
                   "text"} <= set(r) for r in recs), err)
        mid = seqs[len(seqs) // 2] if seqs else 0
        rc, tail, err = ringside_dmesg(g.ram, "--json", "--from-seq", str(mid))
        check("--from-seq starts at that record",
              rc == 0 and tail and json.loads(tail[0])["seq"] == mid, err)

        for paging in (False, True):
            dump = os.path.join(out, "dump-%s.elf" % ("paging" if paging else "phys"))
            r = g.dump(dump, paging)
            check("dump-guest-memory paging=%s" % paging, "return" in r, str(r))
            rc, ours, err = ringside_dmesg(dump)
            compare("ELF dump (paging=%s) == guest dmesg" % paging, guest,
                    rc, ours, err)
            if vmlinux:
                crc, ref, cerr = crash_log(dump)
                diff = [(i, a, b) for i, (a, b) in enumerate(zip(ref, ours)) if a != b]
                check("ELF dump (paging=%s): ringside == crash log, %d records" %
                      (paging, len(ref)),
                      crc == 0 and len(ref) > 50 and ref == ours,
                      "crash rc %d, %d lines vs ringside %d\nfirst diff: %r\n%s" %
                      (crc, len(ref), len(ours), diff[:1], cerr))
                try_makedumpfile(dump)
            os.unlink(dump)
    finally:
        if g:
            g.stop()
        shutil.rmtree(out, ignore_errors=True)


main()
sys.exit(0 if results and all(results) else 1)
