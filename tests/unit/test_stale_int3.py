#!/usr/bin/env python3
"""kernelmatrix.stale_int3() (TAP): it blames the emulator only for an
"Oops: int3" whose Code: line has no int3 (cc) before the trapping RIP,
the crash multi-threaded TCG gave a stock 6.12 guest on 2026-12-07; a
trap on an int3 still in memory, another oops, or no Code: line at all
stay the guest's."""
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import kernelmatrix as km  # noqa: E402
import tap  # noqa: E402

OOPS = "[    1.814601] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI\r\n"
RIP = "[    1.815119] RIP: 0010:run_timer_softirq+0xd7/0xf0\r\n"
# The kept crash's Code: line: "eb" before the trapping RIP's "<0a>".
CODE = ("[    1.815119] Code: 9f c0 4b 02 00 48 8b 87 d8 4b 02 00 48 39 c2 78 "
        "18 48 89 df e8 ca 26 b4 00 48 89 df e8 12 f8 ff ff 48 89 df e8 7a "
        "27 b4 00 %s <0a> 48 83 c4 18 5b c3 cc cc cc cc 48 83 c4 18 5b e9 "
        "54 be 01 00 0f\r\n")
PANIC = ("[    1.817510] Kernel panic - not syncing: Fatal exception in "
         "interrupt\r\n")
GPF = "[    2.000000] Oops: general protection fault, probably for non-canonical address\r\n"


dirs = []


def console(text):
    d = tempfile.mkdtemp(prefix="ringside-int3-")
    dirs.append(d)
    with open(os.path.join(d, "console.log"), "w") as f:
        f.write("[    0.000000] Linux version 6.12.118+deb12-amd64\r\n" + text)
    return d


why = km.stale_int3(console(OOPS + RIP + CODE % "eb" + PANIC))
tap.check(why is not None and "byte before RIP is eb" in why,
          "an int3 trap where memory holds eb: the emulator's", why)
tap.check(km.stale_int3(console(OOPS + RIP + CODE % "cc" + PANIC)) is None,
          "an int3 trap where memory holds the int3: the guest's")
tap.check(km.stale_int3(console(GPF + RIP + CODE % "eb" + PANIC)) is None,
          "another oops: the guest's")
tap.check(km.stale_int3(console(OOPS + RIP + PANIC)) is None,
          "no Code: line: the guest's")
tap.check(km.stale_int3("/nonexistent") is None, "no console.log: nothing to blame")
tail = km.console_tail(console(OOPS + RIP + CODE % "eb" + PANIC), 1)
tap.check("Oops: int3" in tail and "Kernel panic" in tail and "\r" not in tail,
          "a failed boot's detail names its oops and panic", tail)
for d in dirs:
    shutil.rmtree(d, ignore_errors=True)
sys.exit(tap.done())
