#!/usr/bin/env python3
"""Benchmark: what a newcomer's first run costs to build, side by side.

QEMU: the same grafted source tree configured twice, with QEMU's default
devices (the build before qemu-fork/devices-x86_64.mak) and with
ringside's device set, each built cold into a new directory without ccache
(the same targets build-qemu.sh builds), one after the other.  Prints
ninja steps, devices, configure and compile seconds and the binary's size.

--first-run also times './scripts/main.sh' against an empty cache
(RINGSIDE_CACHE in a temporary directory, ccache empty; the Debian
packages and the collector build in build/ are kept), and prints the stage
times build-all.sh reported.

Usage: build_cost.py [--first-run] [--skip-qemu] [--keep DIR]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ["qemu-system-x86_64"] + [
    "tests/qtest/ringside-%s-test" % t
    for t in ("serial", "verify", "ext", "migrate")]
DEVICE_ARGS = ("--without-default-devices", "--with-devices-x86_64=ringside")


def configure_args():
    out = subprocess.run([os.path.join(root, "scripts", "build-qemu.sh"),
                          "--configure-args"], capture_output=True,
                         text=True, check=True).stdout
    return [a for a in out.splitlines()
            if a and not a.startswith(("--cc=", "--cxx="))]


def build_qemu(src, bdir, args):
    env = dict(os.environ, CCACHE_DISABLE="1")
    os.makedirs(bdir)
    t0 = time.monotonic()
    subprocess.run([os.path.join(src, "configure")] + args, cwd=bdir,
                   env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.STDOUT)
    t1 = time.monotonic()
    p = subprocess.run(["ninja", "-C", bdir] + TARGETS, env=env, check=True,
                       capture_output=True, text=True)
    t2 = time.monotonic()
    steps = re.findall(r"^\[(\d+)/(\d+)\]", p.stdout, re.M)
    mak = open(os.path.join(bdir, "x86_64-softmmu-config-devices.mak")).read()
    return {
        "steps": int(steps[-1][1]) if steps else 0,
        "devices": len(re.findall(r"^CONFIG_\w+=y", mak, re.M)),
        "configure": t1 - t0,
        "compile": t2 - t1,
        "size": os.path.getsize(os.path.join(bdir, "qemu-system-x86_64")),
    }


def qemu_table(tmp):
    src = subprocess.run([os.path.join(root, "scripts", "build-qemu.sh"),
                          "--prepare"], capture_output=True, text=True,
                         check=True).stdout.strip().splitlines()[-1]
    args = configure_args()
    before = [a for a in args if a not in DEVICE_ARGS]
    rows = []
    for label, a in (("QEMU's default devices (before)", before),
                     ("ringside's devices (now)", args)):
        print("building: %s ..." % label, file=sys.stderr, flush=True)
        r = build_qemu(src, os.path.join(tmp, "qemu-%d" % len(rows)), a)
        rows.append((label, r))
    print("QEMU fork, cold, no ccache, -j%d (qemu-system-x86_64 and the "
          "4 qtests):" % os.cpu_count())
    print("| build | devices (CONFIG_*=y) | ninja steps | configure | "
          "compile | qemu-system-x86_64 |")
    print("|---|---|---|---|---|---|")
    for label, r in rows:
        print("| %s | %d | %d | %.1f s | %.1f s | %.1f MB |" % (
            label, r["devices"], r["steps"], r["configure"], r["compile"],
            r["size"] / 1e6))
    b, a = rows[0][1], rows[1][1]
    print("now / before: steps %.2fx, compile %.2fx" % (
        a["steps"] / b["steps"], a["compile"] / b["compile"]))


def first_run(tmp):
    cache = os.path.join(tmp, "cache")
    env = dict(os.environ, RINGSIDE_CACHE=cache,
               CCACHE_DIR=os.path.join(cache, "ccache"))
    print("running: ./scripts/main.sh with an empty cache ...",
          file=sys.stderr, flush=True)
    t0 = time.monotonic()
    p = subprocess.run([os.path.join(root, "scripts", "main.sh")], env=env,
                       capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit("main.sh failed:\n" + p.stderr[-3000:])
    summary = [l for l in p.stdout.splitlines() + p.stderr.splitlines()
               if re.match(r"build-(all|qemu|kernel|initramfs)(\.sh)?: "
                           r"(deps|fetch|unpack|compile) ", l)]
    verdict = p.stdout.strip().splitlines()[-1]
    print("first run, empty cache (packages installed): ./scripts/main.sh "
          "%d min %02d s (target 12 min: %s)" % (
              wall // 60, wall % 60, "met" if wall < 720 else "missed"))
    for l in summary:
        print("  " + l)
    print("  " + verdict[:160])


def main():
    keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv \
        else None
    tmp = keep or tempfile.mkdtemp(prefix="ringside-build-cost-")
    try:
        if "--skip-qemu" not in sys.argv:
            qemu_table(tmp)
        if "--first-run" in sys.argv:
            first_run(tmp)
    finally:
        if not keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
