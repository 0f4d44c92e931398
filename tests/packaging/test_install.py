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
  - under Debian's libvirtd with its default qemu.conf (QEMU as
    libvirt-qemu, logs through virtlogd), two domains whose <emulator> is
    the drop-in, with no QEMU passthrough: the one ringside libvirt-xml
    --new prints, and one virt-install --print-xml writes that
    libvirt-xml adds ringside to.  Each starts; ringside attach follows a
    clean boot from its events; libvirt marks neither custom-argv,
    custom-device nor high-privileges; virt-aa-helper makes its AppArmor
    profile; and serial0's <log> file holds the boot.
The packages are purged at the end, so the machine is as it was.
"""
import glob
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
VIRT_AA_HELPER = "/usr/lib/libvirt/virt-aa-helper"


def purge():
    subprocess.run(["apt-get", "purge", "-y", "-qq"] + PACKAGES,
                   capture_output=True,
                   env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"))


def boot_followed(name, work, env):
    """Start @name paused; attach --resume follows one boot: its output."""
    att = subprocess.Popen(["ringside", "attach", "-d", name, "--resume",
                            "--boots", "1"], cwd=work, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    time.sleep(1)
    st = libvirtd.virsh("start", "--paused", name, check=False)
    try:
        out, _ = att.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        att.kill()
        out, _ = att.communicate()
    return st.returncode == 0 and att.returncode == 0, st.stderr + out


def aa_helper_accepts(name):
    """virt-aa-helper, in a dry run, makes @name's AppArmor profile."""
    xml = libvirtd.virsh("dumpxml", "--inactive", name).stdout
    uuid = re.search(r"<uuid>([^<]+)</uuid>", xml).group(1)
    r = subprocess.run([VIRT_AA_HELPER, "-d", "-c", "-u", "libvirt-" + uuid],
                       input=xml, capture_output=True, text=True)
    return r.returncode == 0, r.stderr[-1200:]


def taints(name):
    log = "/var/log/libvirt/qemu/%s.log" % name
    text = open(log).read() if os.path.exists(log) else ""
    return sorted(set(re.findall(r"is tainted: (\S+)", text))), text


def libvirt_checks(name, work, env, what):
    ok, out = boot_followed(name, work, env)
    tap.check(ok and "verdict: clean" in out,
              "ringside attach: %s's boot followed, clean" % what, out[-1500:])
    found, text = taints(name)
    # custom-argv and custom-device would be the passthrough's,
    # high-privileges a QEMU run as root, custom-monitor attach's QMP.
    tap.check(text and not set(found) & {"custom-argv", "custom-device",
                                         "high-privileges"},
              "%s: libvirt ran the drop-in as libvirt-qemu, no passthrough "
              "taint (taints: %s)" % (what, ", ".join(found) or "none"),
              text[-1500:])
    ok, err = aa_helper_accepts(name)
    tap.check(ok, "%s: virt-aa-helper makes its AppArmor profile (dry run)"
              % what, err)


def libvirt_new(work, env):
    """ringside libvirt-xml --new, used as printed."""
    name = "ringside-pkg-new"
    r = subprocess.run(["ringside", "libvirt-xml", "--new", name, "--case",
                        "poweroff"], cwd=work, env=env, capture_output=True,
                       text=True)
    path = os.path.join(work, name + ".xml")
    open(path, "w").write(r.stdout)
    d = libvirtd.virsh("define", path, check=False)
    if not tap.check(r.returncode == 0 and d.returncode == 0 and
                     "<emulator>%s</emulator>" % DROPIN in r.stdout and
                     "qemu:" not in r.stdout and not r.stderr,
                     "libvirt-xml --new: the drop-in as emulator, no "
                     "passthrough, kernel in /var/lib/libvirt/boot; defined",
                     r.stderr + d.stderr + r.stdout[-1200:]):
        return None
    libvirt_checks(name, work, env, "libvirt-xml --new")
    log = "/var/log/libvirt/qemu/%s-serial0.log" % name
    text = open(log, errors="replace").read() if os.path.exists(log) else ""
    tap.check("reboot: Power down" in text,
              "libvirt's <log> of serial0 holds the boot (%s)" % log,
              text[-600:])
    return re.search(r"<cmdline>([^<]*)</cmdline>", r.stdout).group(1)


def libvirt_virtinst(work, env, cmdline):
    """A domain virt-install writes, with ringside added by libvirt-xml."""
    name = "ringside-pkg-virtinst"
    boot = "/var/lib/libvirt/boot/"
    shutil.copy(GUEST + "/bzImage", boot + name + "-vmlinuz")
    shutil.copy(GUEST + "/initramfs.cpio.gz", boot + name + "-initrd")
    vi = subprocess.run(
        ["virt-install", "--connect", libvirtd.URI, "--print-xml", "--name",
         name, "--memory", "256", "--vcpus", "2", "--virt-type", "qemu",
         "--osinfo", "linux2020", "--boot",
         "kernel=%s,initrd=%s,kernel_args=\"%s\"" %
         (boot + name + "-vmlinuz", boot + name + "-initrd", cmdline),
         "--disk", "none", "--network", "none", "--graphics", "none"],
        cwd=work, env=env, capture_output=True, text=True)
    r = subprocess.run(["ringside", "libvirt-xml", "-"], input=vi.stdout,
                       cwd=work, env=env, capture_output=True, text=True)
    path = os.path.join(work, name + ".xml")
    open(path, "w").write(r.stdout)
    d = libvirtd.virsh("define", path, check=False)
    if not tap.check(vi.returncode == 0 and r.returncode == 0 and
                     d.returncode == 0 and
                     "<emulator>%s</emulator>" % DROPIN in r.stdout and
                     "qemu:" not in r.stdout,
                     "virt-install --print-xml's domain, ringside added by "
                     "libvirt-xml, defined",
                     vi.stderr + r.stderr + d.stderr + r.stdout[-1200:]):
        return
    libvirt_checks(name, work, env, "virt-install's domain")


def libvirt_flow(work, env):
    why = libvirtd.unavailable()
    if why:
        tap.check(True, "# SKIP the drop-in under libvirt: " + why)
        return
    names = ["ringside-pkg-new", "ringside-pkg-virtinst"]
    try:
        libvirtd.start()
        for n in names:
            libvirtd.virsh("destroy", n, check=False)
            libvirtd.virsh("undefine", n, check=False)
            for f in ("/var/log/libvirt/qemu/%s.log" % n,
                      "/var/lib/libvirt/qemu/%s.ringside-events.jsonl" % n):
                if os.path.exists(f):
                    os.unlink(f)
        cmdline = libvirt_new(work, env)
        if cmdline:
            libvirt_virtinst(work, env, cmdline)
    finally:
        libvirtd.stop(names)
        for n in names:
            for f in glob.glob("/var/lib/libvirt/boot/%s*" % n):
                os.unlink(f)


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
        libvirt_flow(work, env)
    finally:
        purge()
        shutil.rmtree(work, ignore_errors=True)
    tap.check(not os.path.exists(DROPIN), "the packages purged")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
