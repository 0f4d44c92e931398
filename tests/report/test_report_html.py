#!/usr/bin/env python3
"""Report test (TAP): ringside report --html on two shards of a small fuzz.

- Two shards of one seed merge into one table that counts every case once,
  also when a directory is given twice.
- The page is self-contained (no http(s) or protocol-relative reference,
  no external script, style or font), has the latency histogram and the
  timeline, and escapes what it takes from the input files.
- A missing directory and a malformed results.jsonl exit 2 with one line.
- Headless Chromium renders the page to a PNG that is not blank (skipped
  when Chromium is not installed).

Needs RINGSIDE_BIN, and the QEMU fork, kernel and initramfs that ringside
fuzz uses.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

ringside = os.environ["RINGSIDE_BIN"]
N = 12
results = []
t_start = time.monotonic()


def check(what, ok, detail=""):
    results.append(bool(ok))
    print("%s %d - %s" % ("ok" if ok else "not ok", len(results), what))
    if not ok and detail:
        for line in str(detail).rstrip().split("\n")[-20:]:
            print("# " + line)
    sys.stdout.flush()


def skip(what, why):
    results.append(True)
    print("ok %d - %s # SKIP %s" % (len(results), what, why))


def report(*args):
    return subprocess.run([ringside, "report"] + list(args),
                          capture_output=True, text=True, timeout=120)


def table_total(stdout):
    """Cases counted by the text table: every kernel's total row."""
    n = 0
    for m in re.finditer(r"^\s*total\s+(\d+)\s+(\d+)\s*$", stdout, re.M):
        n += int(m.group(1)) + int(m.group(2))
    return n


def png_pixels(path):
    """Decode an 8-bit, non-interlaced PNG: (width, height, rows of bytes,
    bytes per pixel)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    w, h, depth, ctype, _, _, interlace = hdr
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(ctype)
    if depth != 8 or channels is None or interlace:
        raise ValueError("PNG depth %d type %d interlace %d not handled"
                         % (depth, ctype, interlace))
    raw = zlib.decompress(idat)
    bpp, stride = channels, w * channels
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, rows, bpp


print("1..%d" % N)
tmp = tempfile.mkdtemp(prefix="ringside-report-")
dirs = [os.path.join(tmp, "d1"), os.path.join(tmp, "d2")]

# Shards one after the other: two QEMUs at a time is what the machine has.
for i, d in enumerate(dirs):
    t0 = time.monotonic()
    r = subprocess.run([ringside, "fuzz", "--cases", "6", "--cold", "0",
                        "--seed", "3", "--jobs", "2", "--timeout", "15",
                        "--wire-events",
                        "--shard", "%d/2" % i, "-o", d],
                       capture_output=True, text=True, timeout=300)
    check("fuzz shard %d/2 ran (%.0f s)" % (i, time.monotonic() - t0),
          r.returncode == 0 and os.path.exists(os.path.join(d, "results.jsonl")),
          r.stdout + r.stderr)

html = os.path.join(tmp, "out.html")
r = report("--html", html, *dirs)
check("report --html D1 D2 exits 0 and its table counts the 6 cases",
      r.returncode == 0 and table_total(r.stdout) == 6 and
      re.search(r"^cases: 6 \(6 snapshot, 0 cold\)", r.stdout, re.M) and
      os.path.exists(html),
      "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr))

r2 = report("--html", os.path.join(tmp, "twice.html"), dirs[0], dirs[1], dirs[0])
check("a directory given twice is counted once",
      r2.returncode == 0 and table_total(r2.stdout) == 6 and
      "duplicate entr" in r2.stdout, r2.stdout + r2.stderr)

page = open(html, encoding="utf-8").read() if os.path.exists(html) else ""
external = [p for p in ("http://", "https://", 'src="//', "src='//", "<link",
                        "<script src", "@import", "@font-face", "url(")
            if p in page]
check("the page references nothing outside itself (%d KB)" % (len(page) // 1024),
      page and not external, "found: %s" % external)
check("the page has the latency histogram and the timeline, under 2 MB",
      '<svg class="hist"' in page and '<svg class="timeline"' in page and
      "ring records" in page and re.search(r'<rect class="v\d+" x=', page)
      and len(page) < 2 << 20)

check("the page plots the rate over time and tables each resident "
      "case's overhead parts",
      "Speed: the rate over time" in page and 'aria-label="cases per '
      'minute over the run"' in page and "total overhead" in page and
      "of which RAM" in page)

run0 = os.path.join(dirs[0], "runs", "0")
r = report("--html", os.path.join(tmp, "t.html"), "--timeline", run0, *dirs)
r2 = report("--html", os.path.join(tmp, "t2.html"), "--timeline", tmp, *dirs)
t_page = open(os.path.join(tmp, "t.html"), encoding="utf-8").read() \
    if r.returncode == 0 else ""
check("--timeline draws the run asked for; one without events.jsonl exits 2",
      r.returncode == 0 and run0 in t_page and "vCPU 0" in t_page and
      r2.returncode == 2 and "events.jsonl" in r2.stderr,
      r.stderr + r2.stderr)

# A directory whose results carry markup: it must come out as text.
evil = os.path.join(tmp, "evil")
os.makedirs(evil)
with open(os.path.join(evil, "results.jsonl"), "w") as f:
    f.write('{"index":0,"seed":1,"mode":"snapshot","shard":"0/1",'
            '"kernel":"/k/<i>bz</i>","kernel_sha256":"00&11","smp":1,'
            '"test":"<script>alert(1)</script>","words":"a=\\"<b>\\"",'
            '"class":"error","error":"<img src=x onerror=alert(2)>",'
            '"case":"cases/<u>.case"}\n')
r = report("--html", os.path.join(tmp, "evil.html"), evil)
evil_page = open(os.path.join(tmp, "evil.html"), encoding="utf-8").read() \
    if r.returncode == 0 else ""
check("strings from the input files are HTML-escaped",
      r.returncode == 0 and "&lt;script&gt;alert(1)" in evil_page and
      "<script" not in evil_page and "<img" not in evil_page and
      "<u>" not in evil_page and "<i>bz" not in evil_page,
      r.stdout + r.stderr)

r = report("--html", os.path.join(tmp, "x.html"), "/nonexistent")
err = r.stderr.strip().split("\n")
check("a missing directory exits 2 with one line",
      r.returncode == 2 and len(err) == 1 and "/nonexistent" in err[0] and
      not os.path.exists(os.path.join(tmp, "x.html")), r.stderr)

bad = os.path.join(tmp, "bad")
os.makedirs(bad)
with open(os.path.join(bad, "results.jsonl"), "w") as f:
    f.write('{"index":0,"seed":3,"mode":"snapshot","kernel":"/k/bzImage",'
            '"kernel_sha256":"ab","smp":1,"class":"clean"}\n'
            '{"index":1,"seed":3,"mode"\n')
r = report("--html", os.path.join(tmp, "y.html"), bad)
err = r.stderr.strip().split("\n")
check("a malformed results.jsonl line exits 2 naming file:line",
      r.returncode == 2 and len(err) == 1 and "results.jsonl:2:" in err[0],
      r.stderr)

chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if not chromium:
    skip("headless Chromium renders the page", "chromium not installed")
else:
    png = os.path.join(tmp, "out.png")
    try:
        c = subprocess.run([chromium, "--headless", "--no-sandbox",
                            "--disable-gpu", "--hide-scrollbars",
                            "--user-data-dir=" + os.path.join(tmp, "chromium"),
                            "--screenshot=" + png, "--window-size=1280,2000",
                            "file://" + html],
                           capture_output=True, text=True, timeout=60)
        detail = c.stderr
    except subprocess.TimeoutExpired as e:
        detail = "chromium timed out: %s" % e
    colours, top = 0, 1.0
    if os.path.exists(png):
        try:
            w, h, rows, bpp = png_pixels(png)
            counts = {}
            for row in rows[::4]:
                for x in range(0, w * bpp, bpp * 2):
                    px = row[x:x + bpp]
                    counts[px] = counts.get(px, 0) + 1
            colours = len(counts)
            top = max(counts.values()) / sum(counts.values())
            detail = "%dx%d, %d colours, commonest %.0f%%" % (w, h, colours,
                                                               top * 100)
        except Exception as e:     # a PNG we cannot read fails the test
            detail = "cannot decode %s: %s" % (png, e)
    check("headless Chromium renders the page to a PNG that is not blank",
          colours > 20 and top < 0.97, detail)

print("# %.0f s" % (time.monotonic() - t_start))
if all(results) and len(results) == N:
    shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(0)
print("# kept %s" % tmp)
sys.exit(1)
