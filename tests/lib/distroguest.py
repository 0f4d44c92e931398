"""A real distribution guest: Debian bookworm's user space with systemd
(scripts/build-distro-initramfs.sh) booted with rdinit=/sbin/init under
`ringside run`, its console ttyS0 carrying systemd's status, getty's
automatic root login, journald's forwarding (when switched on), a shell
loop writing to /dev/console and a service systemd restarts; it ends in a
panic or a poweroff.  For each boot: how it ended, the device's verdicts,
each judged line against the ring the guest left in its RAM, and the
ring against the console.

Used by tests/boot/test_distro.py (TAP) and bench/distro_table.py (the
table in docs/distro-guests.md)."""
import json
import os
import re
import shutil
import subprocess
import time

import kernelmatrix as km

cache = km.cache
INITRD = os.path.join(cache, "distro", "initramfs.cpio.gz")
KERNELS = ["project", "6.1", "6.12"]
ENDS = {"panic": "sysrq-panic", "poweroff": "poweroff"}
# The kernel's default console loglevel; nothing in the guest changes it.
CONSOLE_LOGLEVEL = 7
# journald's forwarded line: its own "[    s.us] " stamp, then IDENT[PID]: .
FORWARDED = re.compile(rb"^\[ *[0-9]+\.[0-9]{6}\] [^ \[]+\[[0-9]+\]: ")
FLAKY = b"ringside-flaky: attempt "
FLAKY_STATUS = re.compile(rb"^\[FAILED\] Failed to start ringside-f.* fails twice\.$")
ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
# The flaky service's own lines, which only journald's forwarding brings.
FORWARDED_FLAKY = re.compile(rb"^\[ *[0-9]+\.[0-9]{6}\] ringside-flaky\[[0-9]+\]: "
                             rb"ringside-flaky: attempt ([0-9]+) (?:fails on purpose|succeeds)$")


# What systemd (and glibc, and shell scripts) need of a kernel, after
# systemd's README: a kernel without them cannot boot this guest at all.
SYSTEMD_NEEDS = ["CONFIG_MULTIUSER", "CONFIG_FUTEX", "CONFIG_EPOLL", "CONFIG_SIGNALFD",
                 "CONFIG_TIMERFD", "CONFIG_EVENTFD", "CONFIG_INOTIFY_USER",
                 "CONFIG_FHANDLE", "CONFIG_SHMEM", "CONFIG_TMPFS", "CONFIG_NET",
                 "CONFIG_UNIX", "CONFIG_CGROUPS", "CONFIG_BINFMT_SCRIPT",
                 "CONFIG_DEVTMPFS", "CONFIG_PROC_FS", "CONFIG_PROC_SYSCTL",
                 "CONFIG_SYSFS"]


def kernels():
    """[(name, path)] of the kernels the distro guest boots on."""
    ks = dict(km.kernels())
    return [(n, ks[n]) for n in KERNELS]


def missing_config(name, kernel):
    """The options of SYSTEMD_NEEDS the kernel's config lacks ([] when its
    config is not found: then it is booted and judged)."""
    if name == "project":
        config = os.path.join(os.path.dirname(kernel), "config")
    else:
        config = os.path.join(cache, "stock", "config-" + km.kernel_release(kernel))
    try:
        have = set(line.split("=")[0] for line in open(config)
                   if re.match(r"^CONFIG_[A-Z0-9_]+=[ym]$", line))
    except OSError:
        return []
    return [c for c in SYSTEMD_NEEDS if c not in have]


def append(forward, end):
    return ("rdinit=/sbin/init systemd.show_status=1 "
            "systemd.journald.forward_to_console=%d ringside.end=%s"
            % (forward, end))


def line_texts(console, events):
    """[(line event, its bytes)]: a line's first..last are byte indexes of
    the stream; the console got every byte but those a loop, overrun,
    cleared or refused wire event names."""
    gone = set()
    for e in events:
        ev = e.get("ev")
        if ev in ("loop", "overrun", "cleared") or (ev == "wire" and e.get("refused")):
            gone.add(e["i"])
    lines = [e for e in events if e.get("ev") == "line"]
    top = max([e["last"] for e in lines] + list(gone) + [-1])
    pos, k = {}, 0
    for i in range(top + 1):
        if i in gone:
            continue
        pos[i] = k
        k += 1
    out = []
    for e in lines:
        a, b = pos.get(e["first"]), pos.get(e["last"])
        text = console[a:b + 1] if a is not None and b is not None else None
        out.append((e, text))
    return out


def pick_caller(recs, console):
    """Whether the console prints the caller field (CONFIG_PRINTK_CALLER):
    the format under which more of the ring's lines are on the wire."""
    def found(caller):
        return sum(1 for r in list(recs.values())[:50]
                   if km.console_lines(r, caller)[0] + b"\n" in console)
    return found(True) > found(False)


def boot(ringside, name, kernel, forward, end, pace, out, timeout=300):
    """One boot, booted once more if the emulator crashed the guest
    (km.stale_int3()); a dict describing it, whose "retried" says why."""
    b = boot_once(ringside, name, kernel, forward, end, pace, out, timeout)
    why = km.stale_int3(out) if b["ended"] != end else None
    if why:
        shutil.rmtree(out, ignore_errors=True)
        b = boot_once(ringside, name, kernel, forward, end, pace, out, timeout)
    b["retried"] = why
    return b


def boot_once(ringside, name, kernel, forward, end, pace, out, timeout=300):
    t0 = time.time()
    r = subprocess.run([ringside, "run", "-q", "--out", out, "--kernel", kernel,
                        "--initrd", INITRD, "--case", ENDS[end], "--pace", pace,
                        "--smp", "2", "--memory", "512", "--timeout", str(timeout),
                        "--append", append(forward, end)],
                       capture_output=True, text=True, errors="replace")
    b = {"kernel": name, "release": km.kernel_release(kernel), "pace": pace,
         "forward": forward, "end": end, "rc": r.returncode,
         "wall": time.time() - t0,
         "summary": (r.stdout.strip().split("\n") or [""])[-1],
         "stderr": r.stderr.strip()}
    analyze(ringside, out, b)
    return b


def analyze(ringside, out, b):
    """Fill in @b, a boot's summary, from what the run left in @out."""
    s, console = km.read_run(ringside, out, b)
    b["guest_time"] = s.get("guest-time", "?")
    events = []
    try:
        with open(os.path.join(out, "events.jsonl"), "rb") as f:
            for raw in f:
                try:
                    events.append(json.loads(raw))
                except ValueError:
                    pass
    except OSError:
        pass
    wire = console.replace(b"\r", b"")

    # The ring the guest left, formatted here as its console prints it.
    recs, err, drc = km.ringside_records(ringside, os.path.join(out, "guest.ram"))
    b["dmesg_rc"], b["dmesg_err"] = drc, err.strip()
    caller = pick_caller(recs, wire)
    kernel_lines = km.kernel_lines(recs, caller)
    b["records"] = len(recs)

    # Lines the guest's own FIFO reset cut (the 8250 resets it at a tty's
    # first open and last close): the kernel's loss, rightly judged, as
    # in the kernel matrix; each must be a record's line as written.
    try:
        written, cut = km.guest_written(console, os.path.join(out, "events.jsonl"))
    except (OSError, KeyError, TypeError) as e:
        written, cut = console, [("unreadable events", str(e).encode())]
    b["fifo_cut"] = [(v, t, t in kernel_lines) for v, t in cut]

    # What user space wrote (with those bytes back) without the ring's
    # lines, which can fall inside a user line; systemd's status without
    # its colours.
    user = written.replace(b"\r", b"")
    for line in kernel_lines:
        user = user.replace(line + b"\n", b"")
    ulines = [ANSI.sub(b"", w) for w in user.split(b"\n")]
    # agetty writes its prompt in pieces ("ringside", " login: ", ...),
    # and journald's forwarded lines may come between them.
    b["login"] = (b"login: root (automatic login)\n" in user and
                  b"ringside-distro: root logged in on /dev/ttyS0" in ulines)
    b["chatter"] = sum(1 for i in range(1, 6) if
                       b"ringside-chatter: line %d of 5 from a shell loop" % i in ulines)
    # systemd shortens "unit - description" to fit the console's width.
    b["flaky_failed"] = sum(1 for w in ulines if FLAKY_STATUS.match(w))
    # After the shell's prompt, on its line.
    m = re.search(rb"ringside-end: ringside-flaky.service (\S+) after (\S+) restarts; "
                  rb"(\S+) in 2 s\n", user)
    b["flaky_restarts"] = m and m.group(1) == b"active" and int(m.group(2))
    b["end_line"] = bool(m) and m.group(3) == b["end"].encode()
    # journald's forwarding: the flaky service's own lines reach the
    # console only through it.
    b["forwarded_flaky"] = sorted(set(
        int(m.group(1)) for m in map(FORWARDED_FLAKY.match, user.split(b"\n")) if m))
    b["flaky_any"] = FLAKY in user

    # Every line the device judged ok is a record's console line in the
    # ring, every line it called user space's is none; every other
    # verdict is listed.
    first = min(recs) if recs else 0
    b["ok_lines"] = b["user_lines"] = 0
    b["wrong_ok"], b["wrong_user"], b["flagged"] = [], [], []
    for e, text in line_texts(console, events):
        v = e.get("verdict")
        t = (text or b"").rstrip(b"\r\n")
        if v == "ok":
            b["ok_lines"] += 1
            # A record the ring has overwritten since cannot be checked.
            if t not in kernel_lines and not e.get("seq", first) < first:
                b["wrong_ok"].append(t)
        elif v == "user":
            b["user_lines"] += 1
            if t in kernel_lines:
                b["wrong_user"].append(t)
        else:
            b["flagged"].append((v, t))
    b["forwarded_lines"] = sum(1 for w in user.split(b"\n") if FORWARDED.match(w))

    # The oracle: every record of the ring at a level the console prints
    # is on the wire, each of its lines whole.
    b["due"] = b["shown"] = 0
    b["not_shown"] = []
    for seq in sorted(recs):
        rec = recs[seq]
        if rec["level"] >= CONSOLE_LOGLEVEL:
            continue
        b["due"] += 1
        if all(line + b"\n" in wire for line in km.console_lines(rec, caller)):
            b["shown"] += 1
        else:
            b["not_shown"].append(km.console_lines(rec, caller)[0])


def row(b):
    """The table's cells for one boot."""
    rep = b["report"]
    l0 = km.counts(rep.get("lines", {}))
    recs = km.counts(rep.get("records", {}))
    l0 += "; records: " + recs if recs != "-" else ""
    if "l1" in rep:
        l1 = (km.counts(rep["l1"]["brackets"]) + "; records: " +
              km.counts(rep["l1"]["records"]))
    else:
        l1 = "-"
    oracle = "%d/%d" % (b["shown"], b["due"])
    if b["wrong_ok"] or b["wrong_user"]:
        oracle += " (%d ok lines not a record's, %d user lines a record's)" % (
            len(b["wrong_ok"]), len(b["wrong_user"]))
    return [b["kernel"] + (" (%s)" % b["release"] if b["release"] else ""),
            b["pace"], "on" if b["forward"] else "off", b["ended"],
            b["verdict"] + ("" if b["l1"] is None else ", l1 " + b["l1"]),
            l0, l1, str(b["forwarded_lines"]), "yes" if b["login"] else "NO",
            oracle, b["guest_time"].rstrip("s"), "%.1f" % b["wall"]]


HEADER = ["kernel", "pace", "journald forwarding", "ended", "verdict",
          "level 0 (lines; records)", "level 1 (brackets; records)",
          "forwarded lines", "login", "ring records on the console",
          "guest s", "wall s"]


def markdown(rows):
    out = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)
