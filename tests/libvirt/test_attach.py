#!/usr/bin/env python3
"""ringside attach and libvirt-xml against a real libvirt daemon (TAP).

The daemon is Debian's libvirtd, started here by hand.  Domains boot the
project's guest kernel under the fork (direct kernel boot, TCG, no disks),
with ringside-serial put in by 'ringside libvirt-xml'.

  single (default): one domain followed through a boot that ends in a
    panic, a destroy, a restart, and a daemon restart while it runs.
  all: 'attach --all' follows two ringside domains, one already running
    when it starts, into one JSON Lines file each, and leaves a domain
    without ringside-serial alone.
"""
import glob
import json
import os
import pty
import pwd
import re
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import tap  # noqa: E402
import libvirtd  # noqa: E402

ringside = os.environ["RINGSIDE_BIN"]
mode = sys.argv[1] if len(sys.argv) > 1 else "single"
tmp = tempfile.mkdtemp(prefix="ringside-libvirt-test-")
FORK = []  # the fork staged where libvirt-qemu can run it


def xml_new(name, case, append=None):
    cmd = [ringside, "libvirt-xml", "--qemu", FORK[0], "--new", name,
           "--case", case]
    if append:
        cmd += ["--append", append]
    return subprocess.run(cmd, capture_output=True, text=True,
                          check=True).stdout


def define(xml):
    path = os.path.join(tmp, "domain.xml")
    open(path, "w").write(xml)
    libvirtd.virsh("define", path)


def read_jsonl(path):
    out = []
    if os.path.exists(path):
        for line in open(path):
            if line.endswith("\n"):
                out.append(json.loads(line))
    return out


def wait_for(path, pred, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred(read_jsonl(path)):
            return True
        time.sleep(0.2)
    tap.check(False, "within %d s: %s" % (timeout, what),
              "\n".join(json.dumps(e) for e in read_jsonl(path)[-10:]))
    return False


def events(evs, ev, boot=None):
    return [e for e in evs if e["ev"] == ev and
            (boot is None or e["boot"] == boot)]


def ticks(evs, boot):
    got = []
    for e in events(evs, "line", boot):
        m = re.search(r"ringside-init: tick (\d+)$", e["text"])
        if m:
            got.append((int(m.group(1)), e))
    return got


def virsh_console(name, until, timeout):
    """What 'virsh console' shows (it wants a terminal: give it a pty)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp("virsh", ["virsh", "-c", libvirtd.URI, "console", name])
    buf = b""
    deadline = time.time() + timeout
    while time.time() < deadline and until.encode() not in buf:
        if select.select([fd], [], [], 0.5)[0]:
            try:
                data = os.read(fd, 65536)
            except OSError:
                break
            if not data:
                break
            buf += data
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(fd)
    return buf.decode(errors="replace")


def attach_waiting(out, name, *args):
    """attach --json to @out, once it waits for the shut-off domain."""
    att = subprocess.Popen([ringside, "attach", "-d", name, "--json"] +
                           list(args), stdout=open(out, "w"),
                           stderr=subprocess.PIPE, text=True)
    if wait_for(out, lambda e: events(e, "waiting"), 30,
                "attach %s waits for the shut-off domain" % " ".join(args)):
        return att
    att.kill()
    return None


def finish(proc, timeout):
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return "hung"


def boot_checks(evs, boot, why, reason):
    """A boot's end: judged clean, and every line judged by the device."""
    end = events(evs, "boot-end", boot)
    if not tap.check(len(end) == 1, "boot %d (%s) ended once" % (boot, why),
                     end):
        return None
    end = end[0]
    rep = end["report"]
    lines = events(evs, "line", boot)
    tap.check(end["reason"] == reason,
              "boot %d ended as libvirt said: %s" % (boot, reason), end["reason"])
    tap.check(end["clean"] and rep["problems"] == 0 and
              all(e["verdict"] == "ok" for e in lines) and len(lines) > 100,
              "boot %d: the device judged all %d console lines ok" %
              (boot, len(lines)), json.dumps(rep)[:600])
    tap.check(rep["lines"]["ok"] == len(lines),
              "boot %d: one line event per line the device judged" % boot,
              "%s vs %d" % (rep["lines"], len(lines)))
    return end


def single():
    name = "ringside-test-one"
    out = os.path.join(tmp, "attach.jsonl")

    # libvirt-xml: what it adds, that doing it twice changes nothing,
    # that libvirt takes it.
    plain = ("<domain type='qemu'><name>plain</name><memory>65536</memory>"
             "<os><type>hvm</type></os><devices/></domain>")
    r = subprocess.run([ringside, "libvirt-xml", "--qemu", FORK[0], "-"],
                       input=plain, capture_output=True, text=True)
    again = subprocess.run([ringside, "libvirt-xml", "--qemu", FORK[0], "-"],
                           input=r.stdout, capture_output=True, text=True)
    tap.check(r.returncode == 0 and "value=\"ringside-serial\"" in r.stdout and
              "<serial type=\"pty\">" in r.stdout and
              "path=/var/lib/libvirt/qemu/plain.ringside-events.jsonl" in r.stdout
              and again.stdout == r.stdout,
              "libvirt-xml adds serial0, the override and the events file, "
              "and is idempotent", r.stdout + r.stderr + again.stdout)
    # The drop-in as the emulator takes the passthrough out again.
    dropin = "/usr/lib/ringside/bin/qemu-system-x86_64"
    d = subprocess.run([ringside, "libvirt-xml", "--qemu", dropin, "-"],
                       input=r.stdout, capture_output=True, text=True)
    d2 = subprocess.run([ringside, "libvirt-xml", "--qemu", dropin, "-"],
                        input=d.stdout, capture_output=True, text=True)
    tap.check(d.returncode == 0 and "<emulator>%s</emulator>" % dropin in
              d.stdout and "qemu:" not in d.stdout.replace("xmlns:qemu", "")
              and "<serial type=\"pty\">" in d.stdout and
              "<vmcoreinfo state=\"on\"/>" in d.stdout and
              d2.stdout == d.stdout,
              "libvirt-xml --qemu DROP-IN: the passthrough taken out, the "
              "rest kept, idempotent", d.stdout + d.stderr)
    bad = subprocess.run([ringside, "libvirt-xml", "-"], input="<vm/>",
                         capture_output=True, text=True)
    tap.check(bad.returncode == 1 and "not a libvirt domain" in bad.stderr,
              "libvirt-xml refuses XML that is not a domain", bad.stderr)

    # attach: a domain that does not exist, one that is not ringside.
    r = subprocess.run([ringside, "attach", "-d", "no-such-domain"],
                       capture_output=True, text=True, timeout=30)
    tap.check(r.returncode == 1 and "no domain \"no-such-domain\"" in r.stderr,
              "attach: a missing domain is a clear error", r.stderr)
    plain_xml = re.sub(r"<qemu:override>.*</qemu:override>", "",
                       xml_new("ringside-test-plain", "hang"), flags=re.S)
    define(plain_xml)
    r = subprocess.run([ringside, "attach", "-d", "ringside-test-plain"],
                       capture_output=True, text=True, timeout=30)
    tap.check(r.returncode == 1 and "not a ringside domain" in r.stderr,
              "attach: a domain without ringside-serial is a clear error",
              r.stderr)
    # ... until libvirt-xml makes the addition to the defined domain.
    r = subprocess.run([ringside, "libvirt-xml", "--qemu", FORK[0], "-d",
                        "ringside-test-plain", "--define"],
                       capture_output=True, text=True)
    live = libvirtd.virsh("dumpxml", "ringside-test-plain").stdout
    tap.check(r.returncode == 0 and "value='ringside-serial'" in live and
              "ringside-test-plain.ringside-events.jsonl" in live,
              "libvirt-xml --domain --define makes the addition in place",
              r.stderr + live[-600:])
    att = attach_waiting(os.path.join(tmp, "plain.jsonl"),
                         "ringside-test-plain")
    tap.check(att is not None, "attach takes the domain now")
    if att:
        att.terminate()
        finish(att, 30)

    # 'virsh console' still works on a ringside domain's serial0.
    define(xml_new(name, "tick", "ringside.ticks=3 ringside.tick_ms=300"))
    # Paused until the console is open, so it sees the whole boot.
    libvirtd.virsh("start", "--paused", name)
    t = threading.Timer(1.0, libvirtd.virsh, ("resume", name))
    t.start()
    seen = virsh_console(name, "sysrq triggered crash", 120)
    t.join()
    tap.check("Linux version" in seen and "ringside-init: tick 3" in seen and
              "Kernel panic - not syncing: sysrq triggered crash" in seen,
              "virsh console shows the boot, the ticks and the panic",
              seen[-800:])
    # Debian's default qemu.conf: QEMU as libvirt-qemu, and the serial
    # port's <log> written by virtlogd beside the console.
    uid = ""
    try:
        pid = int(open("/run/libvirt/qemu/%s.pid" % name).read())
        uid = [ln.split()[1] for ln in open("/proc/%d/status" % pid)
               if ln.startswith("Uid:")][0]
    except (OSError, ValueError, IndexError):
        pass
    tap.check(uid == str(pwd.getpwnam("libvirt-qemu").pw_uid),
              "QEMU runs as libvirt-qemu (uid %s)" % uid)
    log = "/var/log/libvirt/qemu/%s-serial0.log" % name
    text = open(log, errors="replace").read() if os.path.exists(log) else ""
    tap.check("Linux version" in text and "sysrq triggered crash" in text,
              "libvirt's <log> of serial0 holds the boot and the panic (%s)"
              % log, text[-500:])
    libvirtd.virsh("destroy", name, check=False)
    libvirtd.virsh("undefine", name)

    # Boot 1: ticks, then the guest panics by itself.
    define(xml_new(name, "tick", "ringside.ticks=6 ringside.tick_ms=300"))
    att = attach_waiting(out, name, "--boots", "3", "--resume")
    if not att:
        return
    # Paused: attach --resume lets it run once the console is open.
    libvirtd.virsh("start", "--paused", name)
    if not wait_for(out, lambda e: events(e, "boot-end", 1), 120,
                    "boot 1 ends in a panic"):
        return
    evs = read_jsonl(out)
    boot_checks(evs, 1, "panic", "shutdown")
    lines = events(evs, "line", 1)
    panic = [e for e in lines if "Kernel panic - not syncing: sysrq" in
             e["text"]]
    tap.check(any("Linux version" in e["text"] for e in lines) and
              len(panic) == 1 and panic[0]["console"] == "ok",
              "boot 1: the boot and the panic line came through libvirt's "
              "console", json.dumps(panic))
    tap.check(events(evs, "resumed") and
              all(e["console"] == "ok" for e in lines),
              "boot 1: started paused and resumed by attach, every judged line "
              "was on the libvirt console stream",
              [e for e in lines if e["console"] != "ok"][:3])
    end = events(evs, "boot-end", 1)[0]
    ring = end.get("ring") or {}
    tap.check(ring.get("found") and ring.get("records", 0) > 100 and
              ring.get("lost") == 0 and "/pc.ram" in ring.get("file", ""),
              "boot 1: the guest's ring scraped from its shared RAM file "
              "(%s records)" % ring.get("records"), ring)

    # Boot 2: runs until destroyed.  Boot 3: restarted, then the daemon
    # restarts under it.
    # A new definition needs the old one's uuid, or none defined.
    libvirtd.virsh("undefine", name)
    define(xml_new(name, "tick", "ringside.tick_ms=300"))
    libvirtd.virsh("start", name)
    if not wait_for(out, lambda e: len(ticks(e, 2)) >= 3, 120,
                    "boot 2 ticks"):
        return
    libvirtd.virsh("destroy", name)
    if not wait_for(out, lambda e: events(e, "boot-end", 2), 60,
                    "boot 2 ends when destroyed"):
        return
    boot_checks(read_jsonl(out), 2, "destroy", "destroyed")
    libvirtd.virsh("start", name)
    if not wait_for(out, lambda e: len(ticks(e, 3)) >= 3, 120,
                    "capture resumes in boot 3 after the restart"):
        return
    libvirtd.kill()
    time.sleep(3)
    libvirtd.start()
    if not wait_for(out, lambda e: events(e, "reconnected") and
                    any(t[1]["console"] == "ok" for t in ticks(e, 3)
                        if t[1] is not None and
                        e.index(t[1]) > e.index(events(e, "reconnected")[0])),
                    60, "ticks on the console again after the daemon "
                    "restart"):
        return
    libvirtd.virsh("destroy", name)
    rc = finish(att, 60)
    evs = read_jsonl(out)
    tap.check(rc == 0, "attach exits 0 after its 3 boots, all clean",
              "%s %s" % (rc, att.stderr.read()))
    boot_checks(evs, 3, "restart", "destroyed")
    tap.check(events(evs, "disconnected") and events(evs, "reconnected"),
              "attach said it lost the daemon and reconnected")
    nums = [t for t, _ in ticks(evs, 3)]
    tap.check(nums == list(range(1, len(nums) + 1)) and len(nums) >= 6,
              "boot 3: every tick judged, none lost across the daemon restart "
              "(%d ticks)" % len(nums), nums)
    away = [e for _, e in ticks(evs, 3) if e["console"] != "ok"]
    tap.check(all(e["console"] == "not-attached" for e in away),
              "boot 3: ticks sent while the daemon was away are marked "
              "not-attached (%d), none missed" % len(away), away[:3])

    # Without the event file (as from another host): console lines, the
    # device's counters over QMP, and the scraped ring against the console.
    out = os.path.join(tmp, "no-events.jsonl")
    libvirtd.virsh("undefine", name)
    define(xml_new(name, "storm-panic",
                   "ringside.storm=1 ringside.storm_ms=1000"))
    att = attach_waiting(out, name, "--boots", "1", "--no-events")
    if not att:
        return
    libvirtd.virsh("start", name)
    rc = finish(att, 120)
    evs = read_jsonl(out)
    lines = events(evs, "line", 1)
    end = (events(evs, "boot-end", 1) or [{}])[0]
    tap.check(rc == 0 and end.get("clean") and len(lines) > 100 and
              all("verdict" not in e for e in lines) and
              any("Kernel panic - not syncing" in e["text"] for e in lines),
              "--no-events: the console's lines, the panic among them, and a "
              "clean end", "%s %s" % (rc, json.dumps(end)[:600]))
    tap.check(end.get("counters", {}).get("ok", 0) > 100 and
              all(end["counters"].get(v, 0) == 0 for v in
              ("corrupt", "torn", "missing", "unmatched")),
              "--no-events: the device's verdict counters read over QMP",
              end.get("counters"))
    tap.check((end.get("ring") or {}).get("found") and
              end.get("ring_checked", 0) > 100 and end.get("ring_absent") == 0,
              "--no-events: every ring record at a console level (%s) was on "
              "the console stream" % end.get("ring_checked"),
              json.dumps(end)[:800])


def follow_all():
    names = ["ringside-test-a", "ringside-test-b"]
    outdir = os.path.join(tmp, "all")
    os.makedirs(outdir)
    for nm in names:
        define(xml_new(nm, "tick", "ringside.ticks=12 ringside.tick_ms=500"))
    define(re.sub(r"<qemu:override>.*</qemu:override>", "",
                  xml_new("ringside-test-plain", "tick",
                          "ringside.ticks=2 ringside.tick_ms=300"),
                  flags=re.S))
    # One already runs when attach starts; the other starts after.  A
    # start takes seconds under libvirt: the first is let run only once
    # the others are up, so that it is still running when attach looks.
    libvirtd.virsh("start", "--paused", names[0])
    libvirtd.virsh("start", "ringside-test-plain")
    libvirtd.virsh("resume", names[0])
    time.sleep(1)
    att = subprocess.Popen([ringside, "attach", "--all", "-o", outdir],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    paths = [os.path.join(outdir, nm + ".jsonl") for nm in names]
    if not wait_for(paths[0], lambda e: events(e, "attached"), 30,
                    "attach --all picks up the running domain"):
        att.kill()
        return
    libvirtd.virsh("start", names[1])
    ok = all(wait_for(p, lambda e: events(e, "boot-end"), 120,
                      "%s ends in a panic" % os.path.basename(p))
             for p in paths)
    att.send_signal(signal.SIGTERM)
    rc = finish(att, 30)
    tap.check(rc == 0, "attach --all stops cleanly on SIGTERM", rc)
    if not ok:
        return
    # Other ringside domains defined on this host get files too.
    files = [os.path.basename(p) for p in glob.glob(outdir + "/*")]
    tap.check(all(nm + ".jsonl" in files for nm in names) and
              "ringside-test-plain.jsonl" not in files,
              "one JSON Lines file per ringside domain, none for the other",
              files)
    for nm, p in zip(names, paths):
        evs = read_jsonl(p)
        tap.check(all(e["domain"] == nm for e in evs),
                  "%s: its file holds only its own records" % nm)
        end = boot_checks(evs, 1, nm, "shutdown")
        lines = events(evs, "line", 1)
        tap.check(any("Kernel panic - not syncing: sysrq" in e["text"] and
                  e["console"] == "ok" for e in lines) and
                  [t for t, _ in ticks(evs, 1)] == list(range(1, 13)),
                  "%s: all 12 ticks and the panic line, the panic through "
                  "libvirt's console" % nm)
        if nm == names[0] and end:
            tap.check(end["console"]["not-attached"] + end["console"]["ok"] ==
                      len(lines) and end["console"]["missed"] == 0,
                      "%s: lines before attach started are judged too, marked "
                      "not-attached (%d)" % (nm, end["console"]["not-attached"]),
                      end["console"])


def main():
    why = libvirtd.unavailable()
    if why:
        print("1..0 # SKIP " + why)
        return 0
    domains = ["ringside-test-one", "ringside-test-plain", "ringside-test-a",
               "ringside-test-b"]
    try:
        libvirtd.start()
        FORK.append(libvirtd.stage_fork())
        for d in domains:
            libvirtd.virsh("destroy", d, check=False)
            libvirtd.virsh("undefine", d, check=False)
        single() if mode == "single" else follow_all()
    finally:
        libvirtd.stop(domains)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
