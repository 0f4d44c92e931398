#!/usr/bin/env python3
"""ringside run --journal, read back through systemd-journal-remote (TAP).

A boot of the tick case under 'ringside run --journal FILE': one journal
entry per console line with the device's verdict, virtual time, vCPU and
the record's seq, whose MESSAGE is the line's text as console.log has it;
Debian's systemd-journal-remote takes the export stream and journalctl
reads it back.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import tap  # noqa: E402

ringside = os.environ["RINGSIDE_BIN"]
JOURNAL_REMOTE = "/lib/systemd/systemd-journal-remote"


def main():
    if not os.path.exists(JOURNAL_REMOTE):
        print("1..0 # SKIP no %s (package systemd-journal-remote)" %
              JOURNAL_REMOTE)
        return 0
    tmp = tempfile.mkdtemp(prefix="ringside-run-journal-")
    export = os.path.join(tmp, "run.export")
    out = os.path.join(tmp, "run")
    r = subprocess.run([ringside, "run", "-q", "--case", "tick", "--append",
                        "ringside.ticks=3 ringside.tick_ms=200", "--pace",
                        "off", "--timeout", "60", "--out", out,
                        "--journal", export],
                       capture_output=True, text=True, timeout=120)
    m = re.search(r" lines=(\d+) ", r.stdout)
    tap.check(m and os.path.exists(export), "ringside run --journal ran",
              r.stdout + r.stderr)
    jfile = os.path.join(tmp, "run.journal")
    with open(export, "rb") as f:
        jr = subprocess.run([JOURNAL_REMOTE, "--output=" + jfile, "-"],
                            stdin=f, capture_output=True, text=True,
                            timeout=60)
    tap.check(jr.returncode == 0, "systemd-journal-remote takes it", jr.stderr)
    jc = subprocess.run(["journalctl", "--file", jfile, "-o", "json",
                         "--no-pager"], capture_output=True, text=True,
                        timeout=60)
    ents = [json.loads(x) for x in jc.stdout.splitlines() if x.strip()]
    lines = [e for e in ents if e.get("RINGSIDE_EVENT") == "line"]
    tap.check(m and len(lines) == int(m.group(1)),
              "one entry per console line (%d)" % len(lines))
    console = [l.rstrip("\r") for l in
               open(os.path.join(out, "console.log"),
                    errors="replace").read().split("\n")]
    texts = [e.get("MESSAGE") for e in lines]
    tap.check(texts == console[:len(texts)],
              "MESSAGE is each console line's text, in order",
              [(a, b) for a, b in zip(texts, console) if a != b][:3])
    ok = [e for e in lines if e.get("RINGSIDE_VERDICT") == "ok"]
    tap.check(len(ok) == len(lines) and all(
        e.get("SYSLOG_IDENTIFIER") == "ringside" and
        e.get("RINGSIDE_DOMAIN") == "tick" and
        e.get("RINGSIDE_BOOT") == "1" and e.get("PRIORITY") == "6" and
        int(e.get("RINGSIDE_VT_NS", -1)) > 0 and
        e.get("RINGSIDE_CPU") in ("0", "1") and "RINGSIDE_SEQ" in e
        for e in ok),
        "every line judged ok, with its vt, vCPU, seq and PRIORITY",
        json.dumps(lines[:1]))
    ticks = [e for e in ok if e["MESSAGE"].endswith("ringside-init: tick 2")]
    tap.check(len(ticks) == 1, "a tick's entry found by its text")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
