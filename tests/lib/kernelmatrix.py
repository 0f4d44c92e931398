"""The kernel matrix: every kernel ringside is tried on (the project kernel
and each Debian bookworm flavour that scripts/fetch-stock-kernel.sh --matrix
fetches) booted with /init's distro case, a realistic boot whose user space
writes to the console between kernel records, paced and unpaced.  For each
boot: how it ended, the device's verdicts at both levels, the overruns,
and whether `ringside dmesg` of the guest's RAM equals the guest's own
/dev/kmsg readout, which /init copies to a second UART (run --oracle).

Used by tests/boot/test_matrix.py (TAP) and bench/kernel_matrix.py (the
docs/guest-kernel.md's table)."""
import json
import os
import re
import shutil
import subprocess
import time

cache = os.environ.get("RINGSIDE_CACHE", os.path.expanduser("~/.cache/ringside"))
STOCK_FLAVOURS = ["6.1", "6.1-cloud", "6.1-rt", "6.12", "6.12-cloud", "6.12-rt"]
PACES = ["line", "off"]
# Line verdicts that are not problems; every other one with a count is.
QUIET_LINES = ("ok", "user")


def kernels():
    """[(name, path)]: the project kernel, then each stock flavour (its path
    under stock/matrix/, which may not exist if it was never fetched)."""
    ks = [("project", os.path.join(cache, "kernel", "bzImage"))]
    for f in STOCK_FLAVOURS:
        ks.append((f, os.path.join(cache, "stock", "matrix", f)))
    return ks


def kernel_release(path):
    """6.1.0-57-cloud-amd64 for stock/matrix/6.1-cloud; "" if not a link."""
    try:
        return os.path.basename(os.readlink(path)).replace("vmlinuz-", "")
    except OSError:
        return ""


def kmsg_escape(data):
    """The text as /dev/kmsg prints it: control bytes, bytes >= 0x7f and
    '\\' as \\xNN (the kernel's msg_add_ext_text() rule)."""
    return "".join("\\x%02x" % b if b < 0x20 or b >= 0x7f or b == 0x5c
                   else chr(b) for b in data)


def parse_oracle(path):
    """The records /init copied to the second UART: a dict with "records"
    ({seq: record}), "complete" (the end line was there and its count
    matches), "lost" (overwritten before /init read them) and "error"."""
    res = {"records": {}, "complete": False, "lost": 0, "error": ""}
    try:
        data = open(path, "rb").read().decode("ascii")
    except (OSError, UnicodeDecodeError) as e:
        # /dev/kmsg escapes every byte outside printable ASCII.
        res["error"] = "unreadable oracle: %s" % e
        return res
    lines = data.split("\n")
    if "ringside-kmsg-begin" not in lines:
        res["error"] = "no ringside-kmsg-begin in %d bytes" % len(data)
        return res
    rec = None
    for line in lines[lines.index("ringside-kmsg-begin") + 1:]:
        if line == "ringside-kmsg-lost":
            res["lost"] += 1
        elif line.startswith("ringside-kmsg-end "):
            n = line.split()[1]
            res["complete"] = n == str(len(res["records"]))
            if not res["complete"]:
                res["error"] = "end line says %s records, %d read" % (n, len(res["records"]))
            return res
        elif line.startswith(" ") and rec is not None:
            key, _, val = line[1:].partition("=")
            rec["dict"][key] = val
        else:
            m = re.match(r"^([0-9]+),([0-9]+),([0-9]+),[^,;]*((?:,[^;]*)?);(.*)$", line)
            if not m:
                res["error"] = "malformed oracle line %r" % line[:200]
                return res
            extra = dict(kv.partition("=")[::2] for kv in m.group(4).split(",") if kv)
            prio = int(m.group(1))
            rec = {"seq": int(m.group(2)), "level": prio & 7, "facility": prio >> 3,
                   "usec": int(m.group(3)), "text": m.group(5), "dict": {}}
            if "caller" in extra:
                rec["caller"] = extra["caller"]
            res["records"][rec["seq"]] = rec
    res["error"] = res["error"] or "no ringside-kmsg-end: the copy was cut short"
    return res


def _raw_bytes_json(line):
    """ringside dmesg --json writes a byte that is not valid UTF-8 as
    \\u00XX, the same as the character U+00XX written as UTF-8: keep them
    apart (as a lone surrogate that surrogateescape turns back into the
    byte) before json.loads."""
    def esc(m):
        s = m.group(0)
        if re.match(r"\\u00[89a-fA-F][0-9a-fA-F]$", s):
            return "\\udc" + s[4:]
        return s
    return json.loads(re.sub(r"\\(u[0-9a-fA-F]{4}|.)", esc, line))


def ringside_records(ringside, ram):
    """{seq: record} of `ringside dmesg --json` on the RAM file, in the
    oracle's shape; (records, stderr, exit status)."""
    p = subprocess.run([ringside, "dmesg", "--json", ram], capture_output=True,
                       timeout=120)
    recs = {}
    for line in p.stdout.decode("utf-8", "surrogateescape").split("\n"):
        if not line:
            continue
        j = _raw_bytes_json(line)
        text = j["text"].encode("utf-8", "surrogateescape")
        rec = {"seq": j["seq"], "level": j["level"], "facility": j["facility"],
               "usec": j["ts_nsec"] // 1000, "text": kmsg_escape(text),
               "caller": j.get("caller"), "dict": {}, "raw": text}
        for key, name in (("subsystem", "SUBSYSTEM"), ("device", "DEVICE")):
            if key in j:
                rec["dict"][name] = kmsg_escape(j[key].encode("utf-8", "surrogateescape"))
        recs[rec["seq"]] = rec
    return recs, p.stderr.decode("utf-8", "replace"), p.returncode


def compare(oracle, ours):
    """Every record of the oracle must be in ours, equal in seq, level,
    facility, time stamp, text and dictionary (and caller, where the kernel
    prints it); ours must hold no record the oracle's seq range lacks.
    Returns (equal, total, first difference or "")."""
    recs = oracle["records"]
    if not recs:
        return 0, 0, oracle["error"] or "empty oracle"
    equal, diff = 0, ""
    for seq in sorted(recs):
        a, b = recs[seq], ours.get(seq)
        if b is None:
            diff = diff or "seq %d: not in ringside dmesg: %r" % (seq, a)
            continue
        fields = ["level", "facility", "usec", "text", "dict"]
        if "caller" in a:
            fields.append("caller")
        bad = [f for f in fields if a[f] != b[f]]
        if bad:
            diff = diff or "seq %d differs in %s:\n guest:    %r\n ringside: %r" % (
                seq, ",".join(bad), a, b)
        else:
            equal += 1
    lo, hi = min(recs), max(recs)
    extra = [s for s in ours if lo <= s <= hi and s not in recs]
    if extra and not oracle["lost"]:
        diff = diff or "ringside dmesg has records the guest did not read: %r" % extra[:5]
    if not oracle["complete"]:
        diff = diff or oracle["error"]
    return equal, len(recs) + (len(extra) if not oracle["lost"] else 0), diff


def console_lines(rec, caller):
    """The lines the console prints for a record (record_print_text()):
    the time stamp, the caller with CONFIG_PRINTK_CALLER, on each line."""
    prefix = "[%5d.%06d]" % (rec["usec"] // 10**6, rec["usec"] % 10**6)
    if caller:
        prefix += "[%6s]" % rec["caller"]
    return [prefix.encode() + b" " + t for t in rec["raw"].split(b"\n")]


def kernel_lines(recs, caller):
    """Every console line the records print."""
    kernel = set()
    for rec in recs.values():
        kernel.update(console_lines(rec, caller))
    return kernel


def wire_user_lines(wire, kernel):
    """How many console lines are user space's, counted independently of
    the device: a line that is no record's console line.  Empty lines
    count too."""
    return sum(1 for line in wire.replace(b"\r", b"").split(b"\n")[:-1]
               if line not in kernel)


def guest_written(console, events_path):
    """What the guest wrote to the UART: the console log with the bytes its
    own transmit FIFO resets discarded put back where they were written
    (each "cleared" event names a byte and its value).  Bytes lost
    otherwise (overrun, refused, looped back) stay out, as on the console.
    Also, for each problem line holding such bytes, its text as written
    (without the line end): [(verdict, text)]."""
    cleared, offwire, lines = {}, set(), []
    with open(events_path, "rb") as f:
        for raw in f:
            try:
                e = json.loads(raw)
            except ValueError:
                continue
            ev = e.get("ev")
            if ev == "cleared":
                cleared[e["i"]] = e["b"]
            elif ev in ("overrun", "loop") or (ev == "wire" and e.get("refused")):
                offwire.add(e["i"])
            elif ev == "line" and e.get("verdict") not in QUIET_LINES:
                lines.append(e)
    out, pos, k, i = bytearray(), {}, 0, 0
    last_cleared = max(cleared) if cleared else -1
    while k < len(console) or i <= last_cleared:
        if i in cleared:
            pos[i] = len(out)
            out.append(cleared[i])
        elif i not in offwire:
            if k == len(console):
                break
            pos[i] = len(out)
            out.append(console[k])
            k += 1
        i += 1
    cut = []
    for e in lines:
        if any(e["first"] <= c <= e["last"] for c in cleared) and \
                e["first"] in pos and e["last"] in pos:
            text = bytes(out[pos[e["first"]]:pos[e["last"]] + 1])
            cut.append((e["verdict"], text.rstrip(b"\r\n")))
    return bytes(out), cut


def summary_fields(line):
    """key=value words of run's summary line."""
    return dict(w.split("=", 1) for w in line.split() if "=" in w)


def console_log_lines(out):
    """The guest's console as text lines, without the CRs the 8250 driver
    sends; OSError if the run left no console.log."""
    with open(os.path.join(out, "console.log"), "rb") as f:
        return f.read().decode("utf-8", "replace").replace("\r", "").split("\n")


def stale_int3(out):
    """The emulator's fault, not the kernel's: an "Oops: int3" whose Code:
    line holds no int3 (0xcc) just before the trapping RIP.  x86 patches
    kernel text (static keys, alternatives) through a temporary int3 and
    syncs every CPU before it takes the int3 away; a CPU that traps on it
    after that ran code already replaced, which real CPUs do not, but
    multi-threaded TCG now and then does on a loaded host.  Returns what
    shows it, or None."""
    try:
        lines = console_log_lines(out)
    except OSError:
        return None
    for i, line in enumerate(lines):
        if "Oops: int3" not in line:
            continue
        for code in lines[i:i + 40]:
            m = re.search(r"Code: ((?:[0-9a-f]{2} )+)<([0-9a-f]{2})>", code)
            if m:
                before = m.group(1).split()[-1]
                if before != "cc":
                    return ("%s, the byte before RIP is %s, not the int3 "
                            "(cc)" % (line.strip(), before))
                return None
    return None


def boot(ringside, name, kernel, pace, out, timeout=120):
    """One boot of the matrix, booted once more if the emulator crashed the
    guest (stale_int3()); a dict describing it (see row()), whose "retried"
    says why it was booted again."""
    b = boot_once(ringside, name, kernel, pace, out, timeout)
    why = stale_int3(out) if b["ended"] != "poweroff" else None
    if why:
        shutil.rmtree(out, ignore_errors=True)
        b = boot_once(ringside, name, kernel, pace, out, timeout)
    b["retried"] = why
    return b


def read_run(ringside, out, b):
    """Fill in @b's ended, verdict, l1 and report from the run in @out (its
    summary line in b["summary"]); return the summary's fields and the
    console's bytes."""
    s = summary_fields(b["summary"])
    b["ended"] = s.get("ended", "?")
    b["verdict"] = s.get("verdict", "?")
    b["l1"] = s.get("l1")
    rep = subprocess.run([ringside, "report", "--json", os.path.join(out, "events.jsonl")],
                         capture_output=True, text=True)
    try:
        b["report"] = json.loads(rep.stdout)
    except ValueError:
        b["report"] = {}
    try:
        console = open(os.path.join(out, "console.log"), "rb").read()
    except OSError:
        console = b""
    return s, console


def boot_once(ringside, name, kernel, pace, out, timeout=120):
    """One boot of the matrix; a dict describing it (see row())."""
    oracle_path = os.path.join(out, "oracle.txt")
    t0 = time.time()
    r = subprocess.run([ringside, "run", "-q", "--out", out, "--kernel", kernel,
                        "--case", "distro", "--pace", pace, "--smp", "2",
                        "--memory", "256", "--timeout", str(timeout),
                        "--oracle", oracle_path, "--append", "printk.devkmsg=on"],
                       capture_output=True, text=True, errors="replace")
    b = {"kernel": name, "release": kernel_release(kernel), "pace": pace,
         "rc": r.returncode, "wall": time.time() - t0,
         "summary": (r.stdout.strip().split("\n") or [""])[-1],
         "stderr": r.stderr.strip()}
    s, console = read_run(ringside, out, b)
    b["overrun"] = int(s.get("overrun", "0"))
    # Whether run judged the boot's timing faithful on this host, if it says.
    b["faithful"] = s.get("faithful", "-")
    # The distro case ran to its end: its prompt and last records are on the wire.
    b["distro"] = (b"guest login: " in console and
                   b"systemd-shutdown[1]: Powering off." in console and
                   b"case distro failed" not in console)
    oracle = parse_oracle(oracle_path)
    ours, err, drc = ringside_records(ringside, os.path.join(out, "guest.ram"))
    b["dmesg_rc"] = drc
    b["equal"], b["total"], b["diff"] = compare(oracle, ours)
    if drc and not b["diff"]:
        b["diff"] = "ringside dmesg exit %d: %s" % (drc, err.strip())
    b["lost"] = oracle["lost"]
    caller = any("caller" in r for r in oracle["records"].values())
    kernel = kernel_lines(ours, caller)
    try:
        written, cut = guest_written(console, os.path.join(out, "events.jsonl"))
    except (OSError, KeyError, TypeError) as e:
        written, cut = console, [("unreadable events", str(e).encode())]
    # User space's lines, counted on what the guest wrote: a kernel line
    # the guest's own FIFO reset cut is still the kernel's.
    b["wire_user"] = wire_user_lines(written, kernel)
    # Those lines, each a record's console line as written, or not.
    b["fifo_cut"] = [(v, t, t in kernel) for v, t in cut]
    return b


def describe_out(out):
    """What a run left in its out dir, and the room left on its disk: the
    first things to know when a boot's files are missing."""
    try:
        files = ", ".join("%s %d" % (f, os.path.getsize(os.path.join(out, f)))
                          for f in sorted(os.listdir(out)))
    except OSError as e:
        files = str(e)
    try:
        st = os.statvfs(os.path.dirname(os.path.abspath(out)))
        free = "%d MiB free" % (st.f_bavail * st.f_frsize >> 20)
    except OSError as e:
        free = str(e)
    return "out dir: %s; %s" % (files, free)


def console_tail(out, n=8):
    """Why a boot that should have powered off did not: the console's lines
    that name a panic, an oops or a BUG (the first 6), and its last n."""
    try:
        lines = console_log_lines(out)
    except OSError as e:
        return str(e)
    marks = [line for line in lines
             if any(k in line for k in ("Kernel panic", "BUG:", "Oops", "RIP:"))]
    return "console: %s\n...\n%s" % ("\n".join(marks[:6]) or "no panic line",
                                    "\n".join(lines[-n:]))


def counts(section):
    """'ok 177, user 26' from a {verdict: count} map: the non-zero ones."""
    return ", ".join("%s %d" % kv for kv in section.items() if kv[1]) or "-"


def row(b):
    """The table's cells for one boot."""
    rep = b["report"]
    l0 = counts(rep.get("lines", {}))
    if rep.get("fifo_reset_lines"):
        l0 += " (%d cut by the guest's FIFO reset)" % rep["fifo_reset_lines"]
    recs = counts(rep.get("records", {}))
    l0 += "; records: " + recs if recs != "-" else ""
    if "l1" in rep:
        l1 = counts(rep["l1"]["brackets"]) + "; records: " + counts(rep["l1"]["records"])
    else:
        l1 = "-"
    agree = "%d/%d equal" % (b["equal"], b["total"])
    if b["diff"] or b["dmesg_rc"]:
        agree += " (DIFFERENT)"
    return [b["kernel"] + (" (%s)" % b["release"] if b["release"] else ""), b["pace"],
            b["ended"], b["verdict"] + ("" if b["l1"] is None else ", l1 " + b["l1"]),
            l0, l1, str(b["overrun"]), agree, b["faithful"], "%.1f" % b["wall"]]


HEADER = ["kernel", "pace", "ended", "verdict", "level 0 (lines; records)",
          "level 1 (brackets; records)", "overruns", "ringside dmesg vs /dev/kmsg",
          "faithful", "wall s"]


def markdown(rows):
    out = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)
