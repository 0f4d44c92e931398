#!/usr/bin/env python3
"""The kernel matrix as a Markdown table, for docs/guest-kernel.md: the project
kernel and Debian bookworm's 6.1 and 6.12 generic, cloud and RT kernels
(scripts/fetch-stock-kernel.sh --matrix) boot /init's distro case (user
space on the console between kernel records), paced at 115200 and
unpaced, 2 vCPUs under TCG.  Columns: how the guest ended, the summary
verdicts, the device's level-0 and level-1 counts, transmitter overruns,
and how many records of `ringside dmesg` on the guest's RAM file equal
the guest's own /dev/kmsg readout (copied by /init to a second UART).
The same boots, checked, are tests/boot/test_matrix.py.

Usage: kernel_matrix.py [--kernels project,6.1,...] [--pace line,off]
"""
import os
import shutil
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "tests", "lib"))
import kernelmatrix as km  # noqa: E402

ringside = os.environ.get("RINGSIDE_BIN", os.path.join(root, "build", "collector", "ringside"))


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1].split(",") if name in sys.argv else default


def main():
    want = arg("--kernels", [n for n, _ in km.kernels()])
    paces = arg("--pace", km.PACES)
    base = tempfile.mkdtemp(prefix="ringside-matrix-")
    rows, t0 = [], time.time()
    try:
        for name, path in km.kernels():
            if name not in want:
                continue
            if not os.path.exists(path):
                sys.exit("kernel_matrix: no %s: run scripts/fetch-stock-kernel.sh --matrix"
                         % path)
            for pace in paces:
                out = os.path.join(base, "%s-%s" % (name, pace))
                b = km.boot(ringside, name, path, pace, out)
                rows.append(km.row(b))
                if b["retried"]:
                    print("booted again, the first boot crashed by the emulator: "
                          + b["retried"], file=sys.stderr)
                print(b["summary"], file=sys.stderr)
                if b["diff"]:
                    print("  dmesg: " + b["diff"].split("\n")[0], file=sys.stderr)
                shutil.rmtree(out, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(km.markdown(rows))
    print("\n%d boots in %.0f s" % (len(rows), time.time() - t0))


main()
