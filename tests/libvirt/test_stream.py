#!/usr/bin/env python3
"""ringside attach reading the device's events from a socket chardev (TAP).

  rotate (default): a flood domain whose events go to a unix socket;
    attach keeps them in files rotated every 64 KiB while the guest runs,
    is stopped, then killed mid-flood and started again more than 10 s
    later (the device gives up its queue and reports what it dropped), and
    libvirtd is restarted meanwhile.  Every console line the device judged is
    accounted for: lines in the rotated files + lines the device reported
    lost + gaps counted = lines on the wire (the device's own count).
  remote: a domain whose events go to a TCP socket, followed by attach
    over TCP (as from another host): per-line verdicts, the kept files
    bounded by --rotate-size and --rotate-count, and --journal's entries
    read back through systemd-journal-remote and journalctl.
  journal: a stream served by this test (ok, corrupt, user-space lines and
    a missing record) to attach --events-socket, its --journal output
    through systemd-journal-remote, every field checked.
"""
import glob
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import tap  # noqa: E402
import libvirtd  # noqa: E402

ringside = os.environ["RINGSIDE_BIN"]
mode = sys.argv[1] if len(sys.argv) > 1 else "rotate"
tmp = tempfile.mkdtemp(prefix="ringside-stream-test-")
JOURNAL_REMOTE = "/lib/systemd/systemd-journal-remote"
NAME = "ringside-test-stream"
FORK = []  # the fork staged where libvirt-qemu can run it


def read_jsonl(path):
    out = []
    if os.path.exists(path):
        for line in open(path, errors="replace"):
            if line.endswith("\n"):
                out.append(json.loads(line))
    return out


def events(evs, ev, boot=None):
    return [e for e in evs if e["ev"] == ev and
            (boot is None or e["boot"] == boot)]


def wait_for(path, pred, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred(read_jsonl(path)):
            return True
        time.sleep(0.2)
    tap.check(False, "within %d s: %s" % (timeout, what),
              "\n".join(json.dumps(e)[:300] for e in read_jsonl(path)[-10:]))
    return False


def define(name, case, append, events):
    xml = subprocess.run([ringside, "libvirt-xml", "--qemu", FORK[0], "--new",
                          name, "--case", case, "--append", append,
                          "--events", events],
                         capture_output=True, text=True, check=True).stdout
    path = os.path.join(tmp, "domain.xml")
    open(path, "w").write(xml)
    libvirtd.virsh("define", path)
    return xml


def attach(out, *args):
    return subprocess.Popen([ringside, "attach", "-d", NAME, "--json"] +
                            list(args), stdout=open(out, "w"),
                            stderr=subprocess.PIPE, text=True)


def finish(proc, timeout):
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return "hung"


def rotated_files(base):
    """The kept files, oldest first: BASE.N ... BASE.1, BASE."""
    rot = sorted(glob.glob(base + ".*"), key=lambda p: -int(p.rsplit(".", 1)[1]))
    return rot + ([base] if os.path.exists(base) else [])


def account(paths):
    """Replay the files as a reader would: lines seen, lost, gaps."""
    seen = lost = gaps = at = 0
    start = summary = None
    for p in paths:
        for raw in open(p, errors="replace"):
            if not raw.endswith("\n"):
                continue
            r = json.loads(raw)
            ev = r.get("ev")
            if ev == "start":
                start, seen, lost, gaps, at = raw, 0, 0, 0, 0
            elif ev == "line":
                seen += 1
                at += 1
            elif ev == "lost":
                lost += r.get("lines", 0)
                at += r.get("lines", 0)
            elif ev == "summary":
                summary = r
            elif ev in ("connected", "rotated"):
                if r["lines"] > at:
                    gaps += r["lines"] - at
                    at = r["lines"]
    return seen, lost, gaps, start, summary


def rotate():
    lines = 20000
    sock = "/var/lib/libvirt/qemu/%s.ringside-events.sock" % NAME
    keep = os.path.join(tmp, "events.jsonl")
    define(NAME, "flood", "printk.devkmsg=on ringside.flood=%d" % lines,
           "unix:" + sock)
    opts = ["--keep-events", keep, "--rotate-size", "64K",
            "--rotate-count", "1000"]
    libvirtd.virsh("start", "--paused", NAME)
    out1 = os.path.join(tmp, "attach1.jsonl")
    att = attach(out1, "--resume", *opts)
    if not wait_for(out1, lambda e: len(events(e, "line")) > 3000, 60,
                    "the first attach follows the flood"):
        att.kill()
        return
    # Stopped, the socket fills and the device queues; killed, what sat in
    # the socket is gone.  The guest is paused meanwhile (so that the flood
    # outlasts this): the device waits 10 s for a reader, then drops its
    # queue and says so in a "lost" record.  The daemon restarts too.
    att.send_signal(signal.SIGSTOP)
    time.sleep(2)
    libvirtd.virsh("suspend", NAME)
    att.send_signal(signal.SIGKILL)
    att.wait()
    libvirtd.kill()
    time.sleep(1)
    libvirtd.start()
    time.sleep(10.5)
    out2 = os.path.join(tmp, "attach2.jsonl")
    att = attach(out2, "--boots", "1", "--resume", *opts)
    rc = finish(att, 120)
    tap.check(rc in (0, 1), "the second attach follows the flood to its end",
              "rc %s; %s" % (rc, att.stderr.read()[-2000:]))
    evs = read_jsonl(out2)
    end = (events(evs, "boot-end") or [None])[0]
    if not tap.check(end is not None, "the boot's end is judged", evs[-5:]):
        return
    files = rotated_files(keep)
    sizes = [os.path.getsize(p) for p in files]
    tap.check(len(files) >= 40,
              "the events were rotated many times while the guest ran (%d "
              "files)" % len(files), files)
    tap.check(max(sizes) <= 64 * 1024,
              "no file passes the 64 KiB cap (largest %d bytes)" % max(sizes))
    seen, lost, gaps, start, summary = account(files)
    tap.check(start is not None and summary is not None,
              "the run's start and the device's summary are in the kept files")
    if not summary:
        return
    # Lines on the wire: the device's own count of the lines it judged.
    wire = summary["lines"]
    total = sum(wire.values())
    tap.check(seen + lost + gaps == total,
              "every line accounted for: %d in the files + %d reported lost by "
              "the device + %d gaps = %d on the wire" % (seen, lost, gaps, total),
              json.dumps(wire)[:1500])
    said = sum(e["lines"] for e in events(evs, "gap"))
    # Whether the device also dropped records depends on the flood filling
    # the socket before the pause, which a loaded host's slower flood may
    # not: the drop itself is the qtest events-full's to prove.
    tap.check(said == gaps and gaps > 0,
              "the restarted attach said how many lines it missed (%d), as the "
              "files count them (%d); the device reported %d lost" %
              (said, gaps, lost),
              [e["msg"] for e in events(evs, "gap")])
    st = end.get("stream", {})
    tap.check(st.get("gaps") == gaps and st.get("lost") == lost,
              "boot-end's stream counts: seen %s, lost %s, gaps %s" %
              (st.get("lines"), st.get("lost"), st.get("gaps")), st)
    shown = events(evs, "line")
    ok = [e for e in shown if e["console"] == "ok" and e["text"]]
    # Lines sent while libvirtd was down never reached its console stream.
    tap.check(shown and len(ok) >= 0.8 * len(shown),
              "the restarted attach showed every line it received (%d), most "
              "with their console text (%d)" % (len(shown), len(ok)))
    # Each with its own text, not a line of the same length: the console
    # stream a restarted attach opens first brings what the console held
    # back.  The flood's records count up one per record, so a record's seq
    # minus its count is the same for all of them (taken from the first
    # attach, which saw the console from the boot's start).
    def offsets(lines):
        return {e["seq"] - int(m.group(1)) for e in lines
                if e.get("seq") is not None
                for m in [re.search(r"ringside-flood (\d+)", e["text"])] if m}
    first = offsets(e for e in events(read_jsonl(out1), "line")
                    if e["console"] == "ok")
    second = offsets(ok)
    tap.check(len(first) == 1 and second == first,
              "each line the restarted attach showed is its own record's "
              "text (seq - count: %s, the first attach's %s)" %
              (sorted(second)[:5], sorted(first)))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def journal_entries(export):
    """@export through systemd-journal-remote, read back with journalctl."""
    jfile = os.path.join(tmp, "remote-%d.journal" % time.time_ns())
    with open(export, "rb") as f:
        r = subprocess.run([JOURNAL_REMOTE, "--output=" + jfile, "-"],
                           stdin=f, capture_output=True, text=True,
                           timeout=60)
    tap.check(r.returncode == 0 and os.path.exists(jfile),
              "systemd-journal-remote takes the export stream", r.stderr)
    r = subprocess.run(["journalctl", "--file", jfile, "-o", "json",
                        "--no-pager"], capture_output=True, text=True,
                       timeout=60)
    return [json.loads(x) for x in r.stdout.splitlines() if x.strip()]


def remote():
    port = free_port()
    keep = os.path.join(tmp, "remote.jsonl")
    export = os.path.join(tmp, "remote.export")
    define(NAME, "tick", "ringside.ticks=6 ringside.tick_ms=200",
           "tcp:127.0.0.1:%d" % port)
    libvirtd.virsh("start", "--paused", NAME)
    out = os.path.join(tmp, "remote-attach.jsonl")
    att = attach(out, "--resume", "--boots", "1", "--events-socket",
                 "tcp:127.0.0.1:%d" % port, "--keep-events", keep,
                 "--rotate-size", "8K", "--rotate-count", "2",
                 "--journal", export)
    rc = finish(att, 120)
    evs = read_jsonl(out)
    tap.check(rc == 0, "attach over TCP follows a boot to its clean end",
              "rc %s; %s" % (rc, att.stderr.read()[-2000:]))
    att_msg = (events(evs, "attached") or [{"msg": ""}])[0]["msg"]
    tap.check("event socket" in att_msg, "it reads the device's event socket",
              att_msg)
    lines = events(evs, "line")
    judged = [e for e in lines if e.get("verdict")]
    tap.check(lines and len(judged) == len(lines) and
              any(e["verdict"] == "ok" for e in lines) and
              all("vt" in e for e in lines),
              "per-line verdicts over TCP: %d lines, all judged by the device" %
              len(lines), lines[:3])
    files = rotated_files(keep)
    tap.check(len(files) == 3 and
              all(os.path.getsize(p) <= 8192 + 4096 for p in files),
              "kept files bounded: %s" % [os.path.getsize(p) for p in files],
              files)
    heads = [open(p).readline() for p in files]
    tap.check(all('"ev":"rotated"' in h for h in heads),
              "each rotated file begins with the run's start", heads)
    ents = journal_entries(export)
    line_ents = [e for e in ents if e.get("RINGSIDE_EVENT") == "line"]
    tap.check(len(line_ents) == len(lines),
              "one journal entry per line (%d, %d lines)" %
              (len(line_ents), len(lines)))
    ok = [e for e in line_ents if e.get("RINGSIDE_VERDICT") == "ok"]
    user = [e for e in line_ents if e.get("RINGSIDE_VERDICT") == "user"]
    tap.check(ok and all(e.get("SYSLOG_IDENTIFIER") == "ringside" and
                     e.get("RINGSIDE_DOMAIN") == NAME and
                     e.get("RINGSIDE_BOOT") == "1" and
                     "RINGSIDE_VT_NS" in e and "RINGSIDE_SEQ" in e and
                     e.get("PRIORITY") in "0123456" for e in ok),
              "ok lines: domain, boot, verdict, vt, seq, PRIORITY",
              json.dumps(ok[:1]))
    tick = [e for e in ok if "ringside-init: tick 3" in e.get("MESSAGE", "")]
    tap.check(len(tick) == 1, "the journal's MESSAGE is the console text",
              [e.get("MESSAGE") for e in ok[:5]])
    tap.check(not user or all(e.get("PRIORITY") == "6" and "RINGSIDE_SEQ" not in e
                          for e in user),
              "user-space lines (%d): info, no seq" % len(user))


def fake_stream():
    """A schema 2 stream: ok, corrupt and user lines and a missing record."""
    recs = ['{"v":2,"ev":"start","dev":"ringside-serial","iobase":1016,'
            '"irq":4,"pace":"off"}']
    idx = 0
    lines = [("<6>[    1.000000] hello ok\r\n", "ok", 7, None),
             ("<3>[    1.100000] broken line\r\n", "corrupt", 8, 5),
             ("ringside-init: from user space\r\n", "user", None, None)]
    for text, verdict, seq, at in lines:
        text = text.split(">", 1)[1] if text.startswith("<") else text
        first = idx
        for b in text.encode():
            recs.append('{"v":2,"ev":"tx","i":%d,"vt":%d,"ht":%d,"cpu":1,'
                        '"b":%d}' % (idx, 1000000 + idx, time.time_ns(), b))
            idx += 1
        rec = ('{"v":2,"ev":"line","verdict":"%s","first":%d,"last":%d,'
               '"vt":%d,"len":%d' % (verdict, first, idx - 1,
                                    1000000 + idx - 1, idx - first))
        if seq is not None:
            rec += ',"seq":%d' % seq
        if at is not None:
            rec += ',"at":%d,"want":101,"got":120' % at
        recs.append(rec + "}")
    recs.append('{"v":2,"ev":"record","verdict":"missing","seq":9,'
                '"count":1,"level":5}')
    return "".join(r + "\n" for r in recs).encode()


def journal():
    path = os.path.join(tmp, "fake.sock")
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(1)

    def serve():
        c, _ = srv.accept()
        c.sendall(fake_stream())
        time.sleep(60)
        c.close()
    threading.Thread(target=serve, daemon=True).start()
    export = os.path.join(tmp, "fake.export")
    define(NAME, "tick", "ringside.ticks=2 ringside.tick_ms=200",
           "unix:/var/lib/libvirt/qemu/%s.ringside-events.sock" % NAME)
    libvirtd.virsh("start", "--paused", NAME)
    out = os.path.join(tmp, "fake-attach.jsonl")
    att = attach(out, "--resume", "--boots", "1", "--events-socket",
                 "unix:" + path, "--journal", export)
    rc = finish(att, 120)
    tap.check(rc in (0, 1), "attach follows a served stream to the boot's end",
              "rc %s; %s" % (rc, att.stderr.read()[-2000:]))
    ents = journal_entries(export)
    by = {e.get("RINGSIDE_VERDICT"): e for e in ents}
    want = {
        "ok": {"MESSAGE": "[    1.000000] hello ok", "PRIORITY": "6",
               "RINGSIDE_SEQ": "7", "RINGSIDE_CPU": "1",
               "RINGSIDE_EVENT": "line"},
        "corrupt": {"MESSAGE": "[    1.100000] broken line",
                    "PRIORITY": "4", "RINGSIDE_SEQ": "8",
                    "RINGSIDE_EVENT": "line"},
        "user": {"MESSAGE": "ringside-init: from user space",
                 "PRIORITY": "6", "RINGSIDE_EVENT": "line"},
        "missing": {"PRIORITY": "5", "RINGSIDE_SEQ": "9",
                    "RINGSIDE_LEVEL": "5", "RINGSIDE_EVENT": "record"},
    }
    for verdict, fields in want.items():
        e = by.get(verdict, {})
        bad = {k: (v, e.get(k)) for k, v in fields.items() if e.get(k) != v}
        common = (e.get("SYSLOG_IDENTIFIER") == "ringside" and
                  e.get("RINGSIDE_DOMAIN") == NAME and
                  e.get("RINGSIDE_BOOT") == "1")
        tap.check(e and not bad and common,
                  "journal entry for the %s line: %s" %
                  (verdict, ", ".join("%s=%s" % kv for kv in fields.items())),
                  json.dumps(bad or e))
    srv.close()


def main():
    why = libvirtd.unavailable()
    if why:
        print("1..0 # SKIP " + why)
        return 0
    if mode != "rotate" and not os.path.exists(JOURNAL_REMOTE):
        print("1..0 # SKIP no %s (package systemd-journal-remote)" %
              JOURNAL_REMOTE)
        return 0
    try:
        libvirtd.start()
        FORK.append(libvirtd.stage_fork())
        libvirtd.virsh("destroy", NAME, check=False)
        libvirtd.virsh("undefine", NAME, check=False)
        {"rotate": rotate, "remote": remote, "journal": journal}[mode]()
    finally:
        libvirtd.stop([NAME])
        if not tap.any_failed():
            shutil.rmtree(tmp, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
