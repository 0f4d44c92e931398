#!/usr/bin/env python3
"""What following a domain under libvirt costs: ringside attach on a printk
flood, against the same flood under 'ringside run' side by side.

Starts its own libvirtd (tests/lib/libvirtd.py), defines a domain with
'ringside libvirt-xml --new' booting the flood case, starts it paused and
lets 'attach --json --resume --boots 1' resume it, under /usr/bin/time.
Then boots the same domain under libvirt with no follower, and the same
flood with 'ringside run --pace off' (no libvirt).  Prints per run:
console lines, lines the libvirt stream missed, attach's CPU time and
peak private memory, the boot's wall time the three ways, and followed
against 'ringside run'.

Usage: attach_cost.py [--records N] [--runs N]
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

from comparison import arg, ringside

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests",
                                "lib"))
import libvirtd  # noqa: E402

NAME = "ringside-bench-attach"
records = int(arg("--records", "20000"))
runs = int(arg("--runs", "2"))
append = "printk.devkmsg=on ringside.flood=%d" % records


def peak_anon(pid, stop, out):
    """Sample the follower's private memory (RssAnon: its RSS also counts
    the guest RAM file it maps) until @stop is set."""
    while not stop.is_set():
        try:
            for line in open("/proc/%d/status" % pid):
                if line.startswith("RssAnon:"):
                    out[0] = max(out[0], int(line.split()[1]))
        except OSError:
            return
        time.sleep(0.2)


def under_libvirt(tmp):
    xml = subprocess.run([ringside, "libvirt-xml", "--new", NAME, "--case",
                          "flood", "--append", append], check=True,
                         capture_output=True, text=True).stdout
    path = os.path.join(tmp, "domain.xml")
    open(path, "w").write(xml)
    libvirtd.virsh("undefine", NAME, check=False)
    libvirtd.virsh("define", path)
    out = os.path.join(tmp, "attach.jsonl")
    tfile = os.path.join(tmp, "time")
    att = subprocess.Popen(["/usr/bin/time", "-f", "%U %S", "-o", tfile,
                            ringside, "attach", "-d", NAME, "--json",
                            "--resume", "--boots", "1"],
                           stdout=open(out, "w"), stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    stop, peak = threading.Event(), [0]
    child = subprocess.run(["pgrep", "-P", str(att.pid)],
                           capture_output=True, text=True).stdout.split()
    sampler = threading.Thread(target=peak_anon,
                               args=(int(child[0]) if child else att.pid,
                                     stop, peak))
    sampler.start()
    t0 = time.time()
    libvirtd.virsh("start", "--paused", NAME)
    att.wait(timeout=600)
    wall = time.time() - t0
    stop.set()
    sampler.join()
    user, system = (float(x) for x in open(tfile).read().split()[-2:])
    evs = [json.loads(line) for line in open(out)]
    end = [e for e in evs if e["ev"] == "boot-end"][-1]
    lines = sum(1 for e in evs if e["ev"] == "line")
    # The same boot with nobody following it.
    t0 = time.time()
    libvirtd.virsh("start", NAME)
    while libvirtd.virsh("domstate", NAME).stdout.strip() == "running":
        time.sleep(0.1)
    alone = time.time() - t0
    libvirtd.virsh("undefine", NAME)
    return (lines, end["console"]["missed"], user + system, peak[0], wall,
            alone)


def plain(tmp):
    r = subprocess.run([ringside, "run", "-q", "--case", "flood", "--pace",
                        "off", "--append", append, "--out",
                        os.path.join(tmp, "run")], capture_output=True,
                       text=True)
    m = re.search(r"wall=([0-9.]+)s", r.stdout)
    return float(m.group(1)) if m else float("nan")


def main():
    why = libvirtd.unavailable()
    if why:
        print("attach_cost: " + why)
        return 1
    print("flood of %d records, 2 vCPUs, TCG, unpaced" % records)
    print("%-4s %7s %6s %10s %10s %9s %11s %7s %6s" %
          ("run", "lines", "missed", "attach CPU", "private MB",
           "followed", "unfollowed", "run", "ratio"))
    libvirtd.start()
    try:
        for i in range(runs):
            with tempfile.TemporaryDirectory(prefix="ringside-bench-") as tmp:
                lines, missed, cpu, anon, wall, alone = under_libvirt(tmp)
                base = plain(tmp)
            print("%-4d %7d %6d %9.2fs %10.1f %8.2fs %10.2fs %6.2fs %5.2fx" %
                  (i + 1, lines, missed, cpu, anon / 1024, wall, alone, base,
                   wall / base))
            sys.stdout.flush()
    finally:
        libvirtd.stop([NAME])
        for f in ("/var/lib/libvirt/qemu/%s.ringside-events.jsonl" % NAME,):
            if os.path.exists(f):
                os.unlink(f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
