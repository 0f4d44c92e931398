#!/usr/bin/env python3
"""A running guest migrated between the fork's two bases (TAP).

The project kernel boots the tick case under one base's fork, machine
pc-i440fx-7.2, with ringside-serial as its console; a few seconds in, it
is migrated over a unix socket to the other base's fork, which goes on to
the panic.  Both ways: 7.2 to 10.0 and 10.0 to 7.2.  The migration
completes; the destination's device attaches the guest's ring from the
migrated state ("via": "loadvm") and judges every line after it ok; and
the two consoles together hold every tick once, in order: nothing lost
or doubled across the move.  Skipped without both builds.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import tap  # noqa: E402
from qmpclient import Qmp  # noqa: E402

cache = os.environ.get("RINGSIDE_CACHE", os.path.expanduser("~/.cache/ringside"))
ringside = os.environ["RINGSIDE_BIN"]
FORKS = {"7.2": os.path.join(cache, "qemu", "build", "qemu-system-x86_64"),
         "10.0": os.path.join(cache, "qemu-10.0", "build",
                              "qemu-system-x86_64")}
TICKS = 40


def qemu_args(qemu, d, tag, extra):
    return [qemu, "-M", "pc-i440fx-7.2", "-accel", "tcg", "-m", "256",
            "-smp", "2", "-nodefaults", "-display", "none", "-no-reboot",
            "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
            "-L", "/usr/lib/ipxe/qemu",
            "-chardev", "file,id=con,path=%s/console-%s" % (d, tag),
            "-chardev", "file,id=ev,path=%s/events-%s.jsonl" % (d, tag),
            "-device", "ringside-serial,id=rs,chardev=con,events=ev",
            "-kernel", os.path.join(cache, "kernel", "bzImage"),
            "-initrd", os.path.join(cache, "initramfs", "initramfs.cpio.gz"),
            "-append", "console=ttyS0,115200 panic=-1 tsc_early_khz=2600000 "
            "ringside.case=tick ringside.ticks=%d ringside.tick_ms=200" % TICKS,
            "-qmp", "unix:%s/qmp-%s,server=on,wait=off" % (d, tag)] + extra


def qmp(path):
    """QMP on @path once QEMU listens there."""
    for _ in range(200):
        try:
            return Qmp(path)
        except OSError:
            time.sleep(0.05)
    return Qmp(path)


def ticks(path):
    text = open(path, errors="replace").read() if os.path.exists(path) else ""
    return [int(n) for n in re.findall(r"ringside-init: tick (\d+)", text)]


def migrate(src_base, dst_base):
    d = tempfile.mkdtemp(prefix="ringside-migrate-")
    what = "%s to %s" % (src_base, dst_base)
    dst = subprocess.Popen(qemu_args(FORKS[dst_base], d, "dst",
                                     ["-incoming", "unix:%s/mig" % d]),
                           stderr=subprocess.PIPE)
    src = subprocess.Popen(qemu_args(FORKS[src_base], d, "src", []),
                           stderr=subprocess.PIPE)
    try:
        q = qmp(os.path.join(d, "qmp-src"))
        deadline = time.time() + 60
        while len(ticks(os.path.join(d, "console-src"))) < 5 and \
                time.time() < deadline:
            time.sleep(0.1)
        q.cmd("migrate", uri="unix:%s/mig" % d)
        status, info = None, {}
        while time.time() < deadline:
            info = q.cmd("query-migrate").get("return", {})
            status = info.get("status")
            if status in ("completed", "failed"):
                break
            time.sleep(0.1)
        tap.check(status == "completed", "%s: the migration completes" % what,
                  info)
        src.kill()
        try:
            dst.wait(timeout=90)
        except subprocess.TimeoutExpired:
            dst.kill()
        err = dst.communicate()[1].decode(errors="replace")
        dcon = open(os.path.join(d, "console-dst"), "rb").read() \
            if os.path.exists(os.path.join(d, "console-dst")) else b""
        tap.check(b"Kernel panic - not syncing" in dcon and
                  dst.returncode == 0,
                  "%s: the destination runs the guest on to its panic" % what,
                  err[-600:] + dcon[-400:].decode(errors="replace"))
        evs = [json.loads(ln) for ln in
               open(os.path.join(d, "events-dst.jsonl"))]
        rings = [e for e in evs if e.get("ev") == "ring" and
                 e.get("state") == "attached"]
        lines = [e for e in evs if e.get("ev") == "line"]
        tap.check(rings and rings[0].get("via") == "loadvm" and
                  len(lines) > 10 and
                  all(e.get("verdict") == "ok" for e in lines),
                  "%s: the destination's device attached the ring from the "
                  "migrated state and judged all %d lines after it ok" %
                  (what, len(lines)),
                  json.dumps(rings[:1]) + " " +
                  json.dumps([e for e in lines if e.get("verdict") != "ok"][:3]))
        both = ticks(os.path.join(d, "console-src")) + \
            ticks(os.path.join(d, "console-dst"))
        tap.check(both == list(range(1, TICKS + 1)),
                  "%s: the two consoles hold every tick once, in order "
                  "(%d before the move)" %
                  (what, len(ticks(os.path.join(d, "console-src")))), both)
    finally:
        for p in (src, dst):
            if p.poll() is None:
                p.kill()
                p.wait()
        if not tap.any_failed():
            shutil.rmtree(d, ignore_errors=True)


def main():
    for base, q in FORKS.items():
        if not os.access(q, os.X_OK):
            print("1..0 # SKIP no QEMU %s build (scripts/build-qemu.sh "
                  "--base %s)" % (base, base))
            return 0
    migrate("7.2", "10.0")
    migrate("10.0", "7.2")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
