#!/usr/bin/env python3
"""Boot test (TAP): the kernel matrix.  The project kernel and every Debian
bookworm flavour (6.1 and 6.12, generic, cloud and PREEMPT_RT: fetched by
scripts/fetch-stock-kernel.sh --matrix) boot /init's distro case, a
realistic boot whose user space writes to the console between kernel
records (systemd status lines, cloud-init, an echo, getty's prompt
without a newline), paced at 115200 and unpaced, 2 vCPUs, 256 MiB.  Each
boot must:
  - end in the poweroff, with /init's whole case on the wire;
  - be judged clean at level 0 with 0 transmitter overruns (user space's
    lines are not the kernel's problems) but for lines the guest's own
    transmit FIFO reset cut (each must be a record's line as the guest
    wrote it: the device names every byte it discarded), and clean at
    level 1 on the project kernel, the one that brackets its records;
  - have as many lines judged `user` as the wire has lines (or parts of
    a line before a kernel record: a prompt) that are no ring record's
    console line, counted here from the ring independently;
  - have `ringside dmesg` of its RAM file equal, record for record, the
    guest's own /dev/kmsg readout, which /init copies to a second UART
    (ttyS1, `ringside run --oracle`): an oracle that needs neither crash
    nor debug info.
The table (docs/guest-kernel.md's) is printed as TAP comments;
bench/kernel_matrix.py prints it as Markdown.

Usage: test_matrix.py [--kernels project,6.1,...] [--pace line,off]
"""
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import kernelmatrix as km  # noqa: E402

ringside = os.environ["RINGSIDE_BIN"]
results = []


def check(what, ok, detail=""):
    results.append(ok)
    print("%s %d - %s" % ("ok" if ok else "not ok", len(results), what))
    if not ok and detail:
        # Also on stderr: meson's --print-errorlogs shows only that.
        for line in str(detail).rstrip().split("\n")[:30]:
            print("# " + line)
            print("%s: %s" % (what, line), file=sys.stderr)
    sys.stdout.flush()


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1].split(",") if name in sys.argv else default


def main():
    want = arg("--kernels", [n for n, _ in km.kernels()])
    paces = arg("--pace", km.PACES)
    ks = [(n, p) for n, p in km.kernels() if n in want]
    print("1..%d" % sum(5 if n == "project" else 4 for n, _ in ks for _ in paces))
    base = tempfile.mkdtemp(prefix="ringside-matrix-")
    rows, t0 = [], time.time()
    try:
        for name, path in ks:
            for pace in paces:
                what = "%s pace=%s" % (name, pace)
                if not os.path.exists(path):
                    n = 5 if name == "project" else 4
                    for _ in range(n):
                        check("%s: kernel %s" % (what, path), False,
                              "not fetched: scripts/fetch-stock-kernel.sh --matrix")
                    continue
                out = os.path.join(base, "%s-%s" % (name, pace))
                b = km.boot(ringside, name, path, pace, out)
                rows.append(km.row(b))
                if b["retried"]:
                    print("# booted again, the first boot crashed by the "
                          "emulator: " + b["retried"])
                print("# " + b["summary"])
                check("%s: ended in the poweroff, the distro case whole on the wire"
                      % what, b["rc"] == 0 and b["ended"] == "poweroff" and b["distro"],
                      "%s\n%s\n%s\n%s" % (b["stderr"], b["summary"], km.describe_out(out),
                                         km.console_tail(out)))
                rep = b["report"]
                lines = rep.get("lines", {})
                # A line the guest's own UART driver cut (it reset the
                # transmit FIFO under the console: the 8250 does at a tty's
                # first open and last close) is the kernel's loss, rightly
                # judged; it must be whole as the guest wrote it.
                cut = b["fifo_cut"]
                problems = rep.get("problems")
                check("%s: level 0 clean but for %d lines the guest's FIFO reset "
                      "cut, 0 overruns (%s)" % (what, len(cut), km.counts(lines)),
                      rep.get("ring") == "attached" and
                      problems == rep.get("fifo_reset_lines") == len(cut) and
                      all(whole for _, _, whole in cut) and
                      b["verdict"] == ("problems:%d" % problems if problems
                                       else "clean") and
                      b["overrun"] == 0 and lines.get("ok", 0) > 100,
                      "verdict %s, overrun %d, lines %s, records %s, cut by "
                      "the FIFO reset (verdict, text as written, a record's "
                      "line): %s" % (b["verdict"], b["overrun"], lines,
                                     rep.get("records"), cut))
                check("%s: the lines called user are user space's, %d of them"
                      % (what, b["wire_user"]),
                      b["wire_user"] > 10 and lines.get("user") == b["wire_user"],
                      "device: %s user lines; wire lines that are no record's "
                      "console line: %d" % (lines.get("user"), b["wire_user"]))
                if name == "project":
                    l1 = rep.get("l1", {})
                    check("%s: level 1 clean" % what,
                          l1.get("problems") == 0 and b["l1"] == "clean" and
                          l1.get("brackets", {}).get("ok", 0) > 100,
                          "l1 %s: %s" % (b["l1"], l1))
                check("%s: ringside dmesg == the guest's /dev/kmsg, %d/%d records"
                      % (what, b["equal"], b["total"]),
                      b["total"] > 100 and b["equal"] == b["total"] and
                      not b["diff"] and b["dmesg_rc"] == 0, b["diff"])
                shutil.rmtree(out, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("# kernel matrix, %.0f s:" % (time.time() - t0))
    for line in km.markdown(rows).split("\n"):
        print("# " + line)


main()
sys.exit(0 if results and all(results) else 1)
