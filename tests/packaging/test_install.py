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
  - lintian reports no error on ringside's packages;
  - under the tests' libvirtd, a domain for the packaged guest whose
    <emulator> is the drop-in, with no QEMU passthrough (no
    qemu:commandline, no qemu:override): it starts, libvirt does not mark
    it tainted, and ringside attach follows a clean boot from its events.
The packages are purged at the end, so the machine is as it was.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import libvirtd  # noqa: E402
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


def libvirt_dropin(work, env):
    why = libvirtd.unavailable()
    if why:
        tap.check(True, "# SKIP the drop-in under libvirt: " + why)
        return
    name = "ringside-pkg-dropin"
    r = subprocess.run(["ringside", "libvirt-xml", "--new", name, "--case",
                        "poweroff"], cwd=work, env=env, capture_output=True,
                       text=True)
    # ringside's addition is the emulator alone: no passthrough.
    xml = re.sub(r"<qemu:(commandline|override)>.*?</qemu:\1>", "",
                 r.stdout, flags=re.S)
    xml = re.sub(r"<emulator>[^<]*</emulator>",
                 "<emulator>%s</emulator>" % DROPIN, xml)
    path = os.path.join(work, name + ".xml")
    open(path, "w").write(xml)
    log = "/var/log/libvirt/qemu/%s.log" % name
    events = "/var/lib/libvirt/qemu/%s.ringside-events.jsonl" % name
    try:
        libvirtd.start()
        for f in (log, events):
            if os.path.exists(f):
                os.unlink(f)
        d = libvirtd.virsh("define", path, check=False)
        if not tap.check(r.returncode == 0 and d.returncode == 0 and
                         "qemu:" not in xml, "libvirt defines the drop-in "
                         "domain (emulator %s, no passthrough)" % DROPIN,
                         r.stderr + d.stderr + xml[-800:]):
            return
        att = subprocess.Popen(["ringside", "attach", "-d", name, "--resume",
                                "--boots", "1"], cwd=work, env=env,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
        time.sleep(1)
        st = libvirtd.virsh("start", "--paused", name, check=False)
        try:
            out, _ = att.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            att.kill()
            out, _ = att.communicate()
        text = open(log).read() if os.path.exists(log) else ""
        tap.check(st.returncode == 0 and att.returncode == 0 and
                  "verdict: clean" in out,
                  "ringside attach: the drop-in domain's boot followed, "
                  "clean", st.stderr + out[-1500:] + text[-800:])
        taints = sorted(set(re.findall(r"is tainted: (\S+)", text)))
        # Those the passthrough a libvirt-xml domain uses would add.
        tap.check(text and "custom-argv" not in taints and
                  "custom-device" not in taints,
                  "libvirt ran the drop-in, no custom-argv or custom-device "
                  "taint (%s)" % log, text[-1500:])
        # What it does say: high-privileges is this harness's QEMU as
        # root, custom-monitor attach's QMP commands.
        print("# libvirt's taints of the drop-in domain: %s" %
              (", ".join(taints) or "none"))
    finally:
        libvirtd.stop([name])


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
        libvirt_dropin(work, env)
    finally:
        purge()
        shutil.rmtree(work, ignore_errors=True)
    tap.check(not os.path.exists(DROPIN), "the packages purged")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
