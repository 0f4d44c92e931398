#!/usr/bin/env python3
"""CLI test (TAP): ringside dmesg, run, report, fuzz, replay, libvirt-xml and qemu on bad input exit non-zero with one clear
line, never a crash or a hang."""
import os
import struct
import subprocess
import sys
import tempfile

ringside = os.environ["RINGSIDE_BIN"]
d = tempfile.mkdtemp(prefix="ringside-errors-")


def f(name, data):
    path = os.path.join(d, name)
    with open(path, "wb") as out:
        out.write(data)
    return path


def elf(phdrs, body=b""):
    """An x86_64 ELF core file with the given (type, offset, paddr, filesz)."""
    phoff = 64
    hdr = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    hdr += struct.pack("<HHIQQQIHHHHHH", 4, 62, 1, 0, phoff, 0, 0, 64, 56,
                       len(phdrs), 0, 0, 0)
    ph = b"".join(struct.pack("<IIQQQQQQ", t, 0, off, 0, pa, sz, sz, 0)
                  for t, off, pa, sz in phdrs)
    return hdr + ph + body


# A whole [scenario] of one vCPU, as ringside fuzz saves it.
SCENARIO = (b"[scenario]\ntest=panic-task\nsmp=1\nstorm=0\nstorm_ms=0\n"
            b"storm_len=1\nstorm_level=0\nstorm_gap_us=0\nwarns=0\n"
            b"pending=0\nstress_ms=0\n")
# Here, where the tests run: a file named like one of /init's cases.
f("poweroff", b"not a case file")

cases = [
    ("missing file", ["/nonexistent/guest.ram"], 1, "No such file"),
    ("empty file", [f("empty", b"")], 1, "not a non-empty regular file"),
    ("directory", [d], 1, "not a non-empty regular file"),
    ("RAM of zeros: not Linux", [f("zeros", bytes(4 << 20))], 1,
     "no VMCOREINFO note"),
    ("random bytes", [f("random", os.urandom(1 << 20))], 1, "no VMCOREINFO note"),
    ("32-bit ELF", [f("elf32", b"\x7fELF" + bytes([1, 1]) + bytes(58))], 1,
     "not a 64-bit little-endian ELF"),
    ("ELF that is not a core", [f("exec", elf([])[:16] + struct.pack("<HH", 2, 62) + elf([])[20:])],
     1, "not an x86_64 core dump"),
    ("program headers past the end", [f("phtrunc", elf([(1, 0, 0, 8)] * 3)[:100])], 1,
     "program headers lie outside the file"),
    ("segment past the end (truncated dump)",
     [f("segtrunc", elf([(1, 120, 0, 1 << 30)]))], 1, "runs past the end"),
    ("core without memory", [f("nomem", elf([(4, 120, 0, 0)]))], 1,
     "holds no guest memory"),
    ("ELF dump of a non-Linux guest", [f("zeroelf", elf([(1, 120, 0, 1 << 20)], bytes(1 << 20)))],
     1, "no VMCOREINFO note"),
    ("kdump-compressed dump", [f("kdump", b"KDUMP   " + bytes(4096))], 1,
     "kdump-compressed"),
    ("raw image, bad base", ["--raw-base", "0xzz", f("raw", bytes(4096))], 2,
     "not a number"),
    ("raw image wrapping 2^64", ["--raw-base", "0xffffffffffffff00", f("raw2", bytes(4096))],
     1, "passes 2^64"),
    ("unknown option", ["--bogus"], 2, "Unknown option"),
    ("no file", [], 2, "expected one FILE"),
]
cases = [(w, ["dmesg"] + a, rc, m) for w, a, rc, m in cases] + [
    ("run: missing kernel", ["run", "--kernel", "/nonexistent/bzImage"], 1,
     "guest kernel /nonexistent/bzImage not found"),
    ("run: missing QEMU build", ["run", "--qemu", "/nonexistent/qemu"], 1,
     "QEMU fork binary /nonexistent/qemu not found"),
    ("run: unknown case", ["run", "--case", "nope"], 1, "unknown case"),
    ("run: bad option", ["run", "--smp", "many"], 2, "Cannot parse integer"),
    ("run: out of range, naming that option alone",
     ["run", "--smp", "0"], 1, "run: --smp must be 1..64\n"),
    ("run: a case's name, though a file of that name is here",
     ["run", "--case", "poweroff", "--kernel", "/nonexistent/bzImage"], 1,
     "guest kernel /nonexistent/bzImage not found"),
    ("run: case file with a memory that is not a number", ["run", "--case",
     f("mem.case", SCENARIO + b"[origin]\nmemory=lots\n")], 1,
     "memory=lots"),
    ("unknown command", ["frobnicate"], 2, "unknown command"),
    ("report: missing file", ["report", "/nonexistent/events.jsonl"], 2,
     "No such file"),
    ("report: empty stream", ["report", f("empty.jsonl", b"")], 2,
     "empty event stream"),
    ("report: not JSON", ["report", f("junk.jsonl", b"{\"v\":2,\"ev\":\"start\"}\nnope\n")],
     2, "not JSON"),
    ("report: malformed verdict", ["report", f("badline.jsonl",
     b'{"v":2,"ev":"start"}\n{"v":2,"ev":"line","verdict":"ok","first":5,"last":1,"vt":0,"len":0}\n')],
     2, "malformed \"line\""),
    ("report: old schema", ["report", f("v1.jsonl", b'{"v":1,"ev":"start"}\n')], 2,
     "schema version 1"),
    ("report: no file", ["report"], 2, "expected one EVENTS.jsonl"),
    ("attach: no domain", ["attach"], 2, "give --domain NAME or --all"),
    ("attach: both", ["attach", "--all", "-d", "x"], 2,
     "give --domain NAME or --all"),
    ("attach: --output alone", ["attach", "-d", "x", "-o", "/tmp"], 2,
     "--output is for --all"),
    ("attach: bad output", ["attach", "--all", "-o", "/nonexistent/dir"], 1,
     "/nonexistent/dir is not a directory"),
    ("attach: no daemon", ["attach", "-c",
     "qemu+unix:///system?socket=/nonexistent/sock", "-d", "x"], 1,
     "cannot connect to qemu+unix:///system?socket=/nonexistent/sock"),
    ("attach: missing domain", ["attach", "-c", "test:///default", "-d",
     "nope"], 1, "no domain \"nope\" on test:///default"),
    ("attach: not ringside", ["attach", "-c", "test:///default", "-d",
     "test"], 1, "domain test is not a ringside domain"),
    ("attach: bad rotate size", ["attach", "-d", "x", "--rotate-size",
     "12Q"], 2, "--rotate-size 12Q: expected a size"),
    ("attach: tiny rotate size", ["attach", "-d", "x", "--rotate-size",
     "100"], 2, "attach: --rotate-size must be at least 4096\n"),
    ("attach: bad events socket", ["attach", "-d", "x", "--events-socket",
     "/tmp/x.sock"], 2, "--events-socket takes unix:PATH or tcp:HOST:PORT"),
    ("attach: events socket with --all", ["attach", "--all",
     "--events-socket", "unix:/x"], 2, "are for one --domain"),
    ("libvirt-xml: bad events socket", ["libvirt-xml", "--new", "x",
     "--events", "tcp:nohost"], 1, "expected a file, unix:PATH or "
     "tcp:HOST:PORT"),
    ("libvirt-xml: nothing", ["libvirt-xml"], 2, "give exactly one of"),
    ("libvirt-xml: missing file", ["libvirt-xml", "/nonexistent.xml"], 1,
     "No such file"),
    ("libvirt-xml: not XML", ["libvirt-xml", f("junk.xml", b"<dom")], 1,
     "not XML"),
    ("libvirt-xml: not a domain", ["libvirt-xml", f("net.xml",
     b"<network><name>n</name></network>")], 1, "not a libvirt domain"),
    ("libvirt-xml: nameless", ["libvirt-xml", f("noname.xml",
     b"<domain type='qemu'/>")], 1, "cannot name the events file"),
    ("libvirt-xml: bad pace", ["libvirt-xml", "--pace", "fast", "-"], 2,
     "--pace must be line or off"),
    ("fuzz: bad shard", ["fuzz", "--shard", "2/2"], 2, "--shard wants I/N"),
    ("fuzz: shard not a number", ["fuzz", "--shard", "a/b"], 2,
     "--shard wants I/N"),
    ("fuzz: unknown test", ["fuzz", "--tests", "panic-task,nope"], 2,
     "unknown case \"nope\""),
    ("fuzz: zero cases", ["fuzz", "--cases", "0"], 2,
     "fuzz: --cases must be at least 1\n"),
    ("fuzz: too many jobs", ["fuzz", "--jobs", "65"], 2,
     "fuzz: --jobs must be 1..64\n"),
    ("fuzz: minimize a missing case file", ["fuzz", "--minimize",
     "/nonexistent.case", "--kernel", f("k", b"x"), "--qemu", "/bin/true",
     "--initrd", f("i", b"x"), "-o", d + "/min"], 2, "not a case file"),
    ("run: case file out of range", ["run", "--case", f("big.case",
     b"[scenario]\ntest=panic-task\nsmp=9\nstorm=0\nstorm_ms=0\n"
     b"storm_len=1\nstorm_level=0\nstorm_gap_us=0\nwarns=0\npending=0\n"
     b"stress_ms=0\n")], 1, "smp out of range"),
    ("run: case file missing a key", ["run", "--case", f("short.case",
     b"[scenario]\ntest=panic-task\nsmp=1\n")], 1, "[scenario] storm"),
    ("run: case file of an unknown test", ["run", "--case", f("t.case",
     b"[scenario]\ntest=reboot\nsmp=1\nstorm=0\nstorm_ms=0\n"
     b"storm_len=1\nstorm_level=0\nstorm_gap_us=0\nwarns=0\npending=0\n"
     b"stress_ms=0\n")], 1, "test out of range"),
    ("qemu: no QEMU line", ["qemu"], 2, "expected -- and a QEMU command line"),
    ("qemu: a console it cannot take", ["qemu", "--", "-M", "microvm",
     "-serial", "udp::4555"],
     2, "-serial udp::4555: not a console"),
    ("qemu: unknown -ringside setting", ["qemu", "--", "-ringside",
     "color=red"], 2, "no setting \"color\""),
    ("qemu: bad -ringside keep", ["qemu", "--", "-ringside", "keep=x"], 2,
     "keep= expects a number"),
    ("qemu: bad pace", ["qemu", "--pace", "fast", "--", "-m", "1"], 2,
     "--pace expects off or line"),
    ("qemu: output directory not makeable", ["qemu", "-o",
     f("plainfile", b"x") + "/out", "--", "-serial", "stdio"], 2,
     "cannot make the output directory"),
    ("qemu: fork missing", ["qemu", "--qemu", "/nonexistent/qemu", "--",
     "-nodefaults"], 127, "cannot run /nonexistent/qemu"),
    ("replay: no case", ["replay"], 2, "expected one case file"),
    ("replay: two vCPUs", ["replay", f("smp2.case",
     b"[scenario]\ntest=panic-task\nsmp=2\nstorm=0\nstorm_ms=0\n"
     b"storm_len=1\nstorm_level=0\nstorm_gap_us=0\nwarns=0\npending=0\n"
     b"stress_ms=0\n")], 2, "supports one"),
    ("replay: case file with a memory out of range", ["replay",
     f("mem1.case", SCENARIO + b"[origin]\nmemory=32\n")], 2,
     "memory=32"),
    ("replay: not a key file", ["replay", f("junk.case", b"\x00\x01junk")], 2,
     "not a case file"),
]

print("1..%d" % len(cases))
failed = 0
for i, (what, args, want_rc, want_msg) in enumerate(cases, 1):
    try:
        p = subprocess.run([ringside] + args, capture_output=True,
                           text=True, timeout=30, cwd=d)
        ok = (p.returncode == want_rc and want_msg in p.stderr and
              len(p.stderr.strip().split("\n")) == 1 and not p.stdout)
        detail = "rc %d, stderr %r" % (p.returncode, p.stderr)
    except subprocess.TimeoutExpired:
        ok, detail = False, "hung"
    print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
    if not ok:
        failed += 1
        print("# " + detail)
sys.exit(1 if failed else 0)
