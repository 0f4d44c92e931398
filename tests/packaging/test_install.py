#!/usr/bin/env python3
"""ringside's Debian packages, installed as an operator would (TAP).

scripts/build-debs.sh builds them (and lintian reads them); then, in a
fresh directory with a fresh HOME and an empty RINGSIDE_CACHE, so that
nothing the developer built can be found:
  - apt-get install ./ringside*.deb installs the three packages and what
    they depend on from the archive;
  - ringside run boots the installed guest kernel and initramfs under the
    installed fork (the paths it runs are checked) and the run is clean;
  - the installed drop-in, /usr/lib/ringside/bin/qemu-system-x86_64, runs
    a plain QEMU command line with ringside-serial as the console: the
    guest's console is on its stdout and the run's verdicts in OUT;
  - lintian reports no error on ringside's packages.
The packages are purged at the end, so the machine is as it was.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import tap  # noqa: E402

ROOT = os.path.join(HERE, "..", "..")
cache = os.environ.get("RINGSIDE_CACHE", os.path.expanduser("~/.cache/ringside"))
PACKAGES = ["ringside", "ringside-qemu", "ringside-guest"]
DROPIN = "/usr/lib/ringside/bin/qemu-system-x86_64"
GUEST = "/usr/lib/ringside/guest"


def purge():
    subprocess.run(["apt-get", "purge", "-y", "-qq"] + PACKAGES,
                   capture_output=True,
                   env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def main():
    if os.geteuid() != 0:
        print("1..0 # SKIP installing packages needs root")
        return 0
    if any(subprocess.run(["dpkg-query", "-W", "-f=${Status}", p],
                          capture_output=True, text=True).stdout
           .endswith("ok installed") for p in PACKAGES):
        print("1..0 # SKIP ringside's packages are installed here already; "
              "the test would remove them")
        return 0
    b = subprocess.run([os.path.join(ROOT, "scripts", "build-debs.sh")],
                       capture_output=True, text=True)
    if not tap.check(b.returncode == 0, "build-debs.sh builds the packages",
                     b.stdout[-1500:] + b.stderr[-1500:]):
        return tap.done()
    debs = os.path.join(cache, "debs")
    lint = open(os.path.join(debs, "lintian.txt")).read().splitlines()
    errors = [l for l in lint if l.startswith("E: ") and
              l.split(":")[1].strip() in PACKAGES]
    tap.check(not errors, "lintian: no error on ringside's packages "
              "(%d tags in all)" % len(lint), "\n".join(errors))

    work = tempfile.mkdtemp(prefix="ringside-install-")
    home = os.path.join(work, "home")
    empty = os.path.join(work, "no-cache")
    os.makedirs(home)
    os.makedirs(empty)
    for p in PACKAGES:
        deb = [f for f in os.listdir(debs)
               if f.startswith(p + "_") and f.endswith(".deb")]
        shutil.copy(os.path.join(debs, deb[0]), work)
    env = dict(os.environ, HOME=home, RINGSIDE_CACHE=empty,
               DEBIAN_FRONTEND="noninteractive")
    env.pop("RINGSIDE_QEMU", None)
    try:
        r = subprocess.run("apt-get install -y -qq ./*.deb", shell=True,
                           cwd=work, env=env, capture_output=True, text=True)
        if not tap.check(r.returncode == 0 and os.path.exists(DROPIN),
                         "apt-get install ./*.deb in a fresh directory",
                         r.stdout[-1500:] + r.stderr[-1500:]):
            return tap.done()

        r = subprocess.run(["ringside", "run", "--case", "poweroff",
                            "--print-qemu"], cwd=work, env=env,
                           capture_output=True, text=True)
        tap.check(r.returncode == 0 and
                  r.stdout.lstrip("'").startswith("/usr/lib/ringside/qemu/") and
                  GUEST + "/bzImage" in r.stdout and
                  GUEST + "/initramfs.cpio.gz" in r.stdout,
                  "ringside run: the installed fork, kernel and initramfs",
                  r.stdout + r.stderr)
        r = subprocess.run(["ringside", "run", "--case", "poweroff", "-o",
                            os.path.join(work, "run")], cwd=work, env=env,
                           capture_output=True, text=True, timeout=300)
        tap.check(r.returncode == 0 and "verdict: clean" in r.stdout,
                  "ringside run from the packages: a clean run",
                  r.stdout[-1500:] + r.stderr[-1500:])

        out = os.path.join(work, "dropin")
        r = subprocess.run(
            [DROPIN, "-m", "256", "-display", "none", "-serial", "stdio",
             "-no-reboot", "-kernel", GUEST + "/bzImage", "-initrd",
             GUEST + "/initramfs.cpio.gz", "-append",
             "console=ttyS0 panic=-1 ringside.case=poweroff",
             "-ringside", "out=" + out], cwd=work, env=env,
            stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
        runs = os.path.join(out, "runs.jsonl")
        for _ in range(100):
            if os.path.exists(runs):
                break
            time.sleep(0.1)
        run = json.loads(open(runs).read().splitlines()[0]) \
            if os.path.exists(runs) else {}
        tap.check(r.returncode == 0 and b"reboot: Power down" in r.stdout and
                  run.get("judged") and run.get("clean") and
                  run.get("lines") == r.stdout.count(b"\n"),
                  "the installed drop-in: console on stdout, the run judged "
                  "clean in OUT/runs.jsonl",
                  r.stdout[-800:].decode(errors="replace") + "\n" +
                  r.stderr[-800:].decode(errors="replace") + json.dumps(run))
    finally:
        purge()
        shutil.rmtree(work, ignore_errors=True)
    tap.check(not os.path.exists(DROPIN), "the packages purged")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
