#!/usr/bin/env python3
"""Boot test (TAP): a real distribution guest.  Debian bookworm's user
space with systemd (scripts/build-distro-initramfs.sh), booted with
rdinit=/sbin/init, 2 vCPUs under TCG, on the project kernel and Debian's
stock 6.1 and 6.12.  Its console carries systemd's status, getty's
automatic root login, journald's forwarding when switched on
(systemd.journald.forward_to_console=1), a shell loop writing to
/dev/console and a service systemd restarts twice; a unit ends the run
in a panic (sysrq) or a poweroff.  Each boot must:
  - end as asked, after getty logged root in and both services ran;
  - have journald's forwarded lines on the console exactly when
    forwarding is on (the flaky service's own lines come only that way);
  - be judged clean at level 0, and at level 1 on the project kernel, the
    one that brackets its records (but for lines the guest's own transmit
    FIFO reset cut, each a record's line as the guest wrote it, as in
    test_matrix.py);
  - have every line the device calls ok be a record's console line in
    the ring the guest left in RAM (`ringside dmesg`, formatted here),
    and no line it calls user space's be one;
  - have every record of that ring at a level the console prints on the
    console, each of its lines whole.
The full matrix (both pacings, both endings, forwarding on and off) is
bench/distro_table.py.

Usage: test_distro.py [--boots KERNEL:on|off:panic|poweroff:off|line,...]
"""
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import distroguest as dg  # noqa: E402
import kernelmatrix as km  # noqa: E402
import tap  # noqa: E402

ringside = os.environ["RINGSIDE_BIN"]
# Three boots cover the kernels, both endings, forwarding on and off and
# both pacings; the bench boots every combination.
BOOTS = "project:on:panic:off,6.12:on:poweroff:off,6.1:off:panic:line"


def show(lines, n=8):
    return "\n".join(repr(x) for x in lines[:n])


def judge(b):
    what = "%s forwarding=%s end=%s pace=%s" % (
        b["kernel"], "on" if b["forward"] else "off", b["end"], b["pace"])
    if b["retried"]:
        print("# booted again, the first boot crashed by the emulator: " + b["retried"])
    print("# " + b["summary"])
    for v, t in b["flagged"][:10]:
        print("# flagged %s: %r" % (v, t[:160]))
    tap.check(b["rc"] == 0 and b["ended"] == b["end"] and b["end_line"],
              "%s: ended in the %s, by the guest's unit" % (what, b["end"]),
              "%s\n%s\n%s\n%s" % (km.console_tail(b["out"]), km.describe_out(b["out"]),
                                 b["summary"], b["stderr"]))
    tap.check(b["login"] and b["chatter"] == 5 and b["flaky_failed"] >= 1 and
              b["flaky_restarts"] == 2,
              "%s: getty logged root in; the shell loop's 5 lines; the flaky "
              "service failed, was restarted twice and is active" % what,
              "%s\nlogin %s, chatter lines %d, flaky failed %d, restarts %s" % (
                  km.console_tail(b["out"], 12), b["login"], b["chatter"],
                  b["flaky_failed"], b["flaky_restarts"]))
    if b["forward"]:
        # The third attempt's line races the end of the run: in about one
        # run of three on 6.12 it is not on the console as a line of its
        # own (not yet understood; journalctl --sync did not stop it).
        # Its two failures, long before, must be there.
        tap.check(b["forwarded_flaky"][:2] == [1, 2] and
                  b["forwarded_lines"] > 20,
                  "%s: journald forwarded %d lines to the console, the flaky "
                  "service's failed attempts among them" % (
                      what, b["forwarded_lines"]),
                  "flaky attempts forwarded: %s" % b["forwarded_flaky"])
    else:
        tap.check(not b["flaky_any"] and b["forwarded_lines"] == 0,
                  "%s: journald forwarded nothing to the console" % what,
                  "flaky lines on the console %s, lines like journald's %d" % (
                      b["flaky_any"], b["forwarded_lines"]))
    rep = b["report"]
    lines = rep.get("lines", {})
    cut = b["fifo_cut"]
    problems = rep.get("problems")
    tap.check(rep.get("ring") == "attached" and lines.get("ok", 0) > 100 and
              lines.get("user", 0) > 20 and
              problems == rep.get("fifo_reset_lines") == len(cut) and
              all(whole for _, _, whole in cut) and
              b["verdict"] == ("problems:%d" % problems if problems else "clean"),
              "%s: level 0 clean but for %d lines the guest's FIFO reset cut (%s)"
              % (what, len(cut), km.counts(lines)),
              "verdict %s, lines %s, records %s, cut by the FIFO reset %s\n"
              "flagged:\n%s" % (b["verdict"], lines, rep.get("records"), cut,
                                show(b["flagged"])))
    if b["kernel"] == "project":
        l1 = rep.get("l1", {})
        tap.check(l1.get("problems") == 0 and b["l1"] == "clean" and
                  l1.get("brackets", {}).get("ok", 0) > 100,
                  "%s: level 1 clean" % what, "l1 %s: %s" % (b["l1"], l1))
    tap.check(b["dmesg_rc"] == 0 and b["records"] > 100 and b["ok_lines"] > 100 and
              not b["wrong_ok"] and not b["wrong_user"],
              "%s: each of %d ok lines is a ring record's, none of %d user "
              "lines is" % (what, b["ok_lines"], b["user_lines"]),
              "ringside dmesg exit %d %s\nok, no record's line:\n%s\nuser, a "
              "record's line:\n%s" % (b["dmesg_rc"], b["dmesg_err"],
                                      show(b["wrong_ok"]), show(b["wrong_user"])))
    tap.check(b["due"] > 100 and b["shown"] == b["due"],
              "%s: every ring record at a console level is on the console, "
              "%d/%d" % (what, b["shown"], b["due"]),
              "not on the console:\n" + show(b["not_shown"]))


def main():
    spec = sys.argv[sys.argv.index("--boots") + 1] if "--boots" in sys.argv else BOOTS
    ks = dict(dg.kernels())
    if not os.path.exists(dg.INITRD):
        print("1..0 # SKIP no %s (scripts/build-distro-initramfs.sh)" % dg.INITRD)
        return 0
    base = tempfile.mkdtemp(prefix="ringside-distro-")
    rows, t0 = [], time.time()
    try:
        for s in spec.split(","):
            name, fwd, end, pace = s.split(":")
            if not os.path.exists(ks[name]):
                tap.check(False, "%s: kernel %s" % (name, ks[name]),
                          "not built or fetched: scripts/build-all.sh test")
                continue
            missing = dg.missing_config(name, ks[name])
            if missing:
                tap.check(True, "%s: boot # SKIP the kernel lacks %s, which "
                          "systemd needs" % (s, " ".join(missing)))
                continue
            out = os.path.join(base, s.replace(":", "-"))
            b = dg.boot(ringside, name, ks[name], fwd == "on", end, pace, out)
            b["out"] = out
            judge(b)
            rows.append(dg.row(b))
            shutil.rmtree(out, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print("# distribution guest, %.0f s:" % (time.time() - t0))
    for line in dg.markdown(rows).split("\n"):
        print("# " + line)
    return tap.done()


sys.exit(main())
