#!/usr/bin/env python3
"""A real distribution guest on every kernel, as a Markdown table for
docs/distro-guests.md: Debian bookworm's user space with systemd
(scripts/build-distro-initramfs.sh) on the project kernel and Debian's
stock 6.1 and 6.12, paced at 115200 and unpaced, ending in a panic and in
a poweroff, with journald's forwarding to the console on and off; 2 vCPUs
under TCG, one row per boot.  Columns: how the guest ended, the summary
verdicts, the device's level-0 and level-1 counts, the lines journald
forwarded, whether getty logged root in, and how many records of the ring
the guest left (`ringside dmesg` of its RAM) at a console level are on
the console.  Lines the device flagged are listed on stderr.  The same
boots, checked, are tests/boot/test_distro.py (three of them in the
suite).

Usage: distro_table.py [--kernels project,6.1,6.12] [--pace off,line]
                       [--end panic,poweroff] [--forward on,off]
"""
import os
import shutil
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests", "lib"))
import distroguest as dg  # noqa: E402

ringside = os.environ.get("RINGSIDE_BIN", os.path.join(root, "build", "collector", "ringside"))


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1].split(",") if name in sys.argv else default


def main():
    want = arg("--kernels", dg.KERNELS)
    paces = arg("--pace", ["off", "line"])
    ends = arg("--end", ["panic", "poweroff"])
    forwards = arg("--forward", ["on", "off"])
    if not os.path.exists(dg.INITRD):
        sys.exit("distro_table: no %s: run scripts/build-distro-initramfs.sh" % dg.INITRD)
    base = tempfile.mkdtemp(prefix="ringside-distro-")
    rows, t0 = [], time.time()
    try:
        for name, path in dg.kernels():
            if name not in want:
                continue
            if not os.path.exists(path):
                sys.exit("distro_table: no %s: run scripts/build-all.sh test" % path)
            missing = dg.missing_config(name, path)
            if missing:
                print("distro_table: %s skipped: it lacks %s, which systemd needs"
                      % (name, " ".join(missing)), file=sys.stderr)
                continue
            for pace in paces:
                for end in ends:
                    for fwd in forwards:
                        out = os.path.join(base, "%s-%s-%s-%s" % (name, pace, end, fwd))
                        b = dg.boot(ringside, name, path, fwd == "on", end, pace, out)
                        rows.append(dg.row(b))
                        if b["retried"]:
                            print("booted again, the first boot crashed by the "
                                  "emulator: " + b["retried"], file=sys.stderr)
                        print("%s forwarding=%s: %s" % (name, fwd, b["summary"]),
                              file=sys.stderr)
                        if b["rc"] and b["stderr"]:
                            print("  " + b["stderr"], file=sys.stderr)
                        for v, t in b["flagged"]:
                            print("  %s: %r" % (v, t[:200]), file=sys.stderr)
                        for t in b["not_shown"][:5]:
                            print("  not on the console: %r" % t[:200], file=sys.stderr)
                        shutil.rmtree(out, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(dg.markdown(rows))
    print("\n%d boots in %.0f s" % (len(rows), time.time() - t0))


main()
