#!/usr/bin/env python3
"""ringside-qemu's AppArmor rules against Debian's own profiles (TAP).

This machine's kernel cannot enforce AppArmor, so the rules are checked
the way apparmor_parser checks a profile before loading it (-Q: parse
and compile, load nothing).  The profiles are Debian's: apparmor's
abstractions and tunables as installed, and libvirt-daemon-system's
profiles from its .deb (apt-get download; not installed, so no libvirtd
is started here).  Into a copy of /etc/apparmor.d:
  - libvirt's profiles and the empty local files its postinst makes;
  - ringside-qemu's files from the package scripts/build-debs.sh built,
    and its postinst run on that root (DPKG_ROOT);
  - a domain's profile as virt-aa-helper writes it from TEMPLATE.qemu,
    with the paths of a ringside domain in its .files.
Then: the domain profile, libvirtd's and virt-aa-helper's compile; the
compiled domain profile holds ringside's rules (and without the
postinst's include it does not, so the check can fail); the postrm takes
the include out again.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import tap  # noqa: E402

cache = os.environ.get("RINGSIDE_CACHE", os.path.expanduser("~/.cache/ringside"))
UUID = "6b1e0c2a-5d8e-4f1a-9c3b-7e2f4a9d1c00"
LINE = "include <abstractions/ringside-qemu>"


def run(*cmd, **kw):
    return subprocess.run(list(cmd), capture_output=True, text=True, **kw)


def parse(base, profile):
    """apparmor_parser -Q on @profile with @base as /etc/apparmor.d."""
    return run("apparmor_parser", "-Q", "-K", "-b", base, "-I", base, profile)


def expanded(base, profile):
    """The profile with every include expanded (apparmor_parser -p)."""
    return run("apparmor_parser", "-p", "-b", base, "-I", base, profile).stdout


def main():
    if not shutil.which("apparmor_parser"):
        print("1..0 # SKIP apparmor_parser not installed (package apparmor)")
        return 0
    debs = glob.glob(os.path.join(cache, "debs", "ringside-qemu_*.deb"))
    if not debs:
        print("1..0 # SKIP no ringside-qemu package (scripts/build-debs.sh)")
        return 0
    work = tempfile.mkdtemp(prefix="ringside-apparmor-")
    try:
        dl = os.path.join(cache, "apparmor-check")
        os.makedirs(dl, exist_ok=True)
        if not glob.glob(os.path.join(dl, "libvirt-daemon-system_*.deb")):
            r = run("apt-get", "download", "libvirt-daemon-system", cwd=dl)
            if not tap.check(r.returncode == 0,
                             "apt-get download libvirt-daemon-system",
                             r.stderr):
                return tap.done()
        lv = sorted(glob.glob(os.path.join(dl, "libvirt-daemon-system_*.deb")))[-1]
        root = os.path.join(work, "root")
        base = os.path.join(root, "etc", "apparmor.d")
        shutil.copytree("/etc/apparmor.d", base, symlinks=True)
        for deb in (lv, debs[0]):
            r = run("dpkg-deb", "-x", deb, root)
            assert r.returncode == 0, r.stderr
        # libvirt-daemon-system's postinst: empty local files.
        for f in ("abstractions/libvirt-qemu", "abstractions/libvirt-lxc",
                  "usr.sbin.libvirtd", "usr.lib.libvirt.virt-aa-helper"):
            p = os.path.join(base, "local", f)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            open(p, "a").close()
        ctl = os.path.join(work, "ctl")
        run("dpkg-deb", "-e", debs[0], ctl)

        # A domain's profile as virt-aa-helper writes it, first without
        # ringside's include (the control), then with it.
        dom = os.path.join(base, "libvirt", "libvirt-" + UUID)
        files = dom + ".files"
        with open(files, "w") as f:
            for path, perm in (
                    ("/var/lib/libvirt/qemu/domain-1-guest1/{,**}", "rwk"),
                    ("/var/lib/libvirt/boot/ringside-bzImage", "r"),
                    ("/var/lib/libvirt/boot/ringside-initramfs.cpio.gz", "r"),
                    ("/var/lib/libvirt/qemu/ram/1-guest1/{,**}", "rwk"),
                    ("/var/log/libvirt/**/guest1.log", "w")):
                f.write('  "%s" %s,\n' % (path, perm))
        tmpl = open(os.path.join(base, "libvirt", "TEMPLATE.qemu")).read()
        with open(dom, "w") as f:
            f.write(tmpl.replace("LIBVIRT_TEMPLATE", "libvirt-" + UUID)
                    .replace("#include <abstractions/libvirt-qemu>",
                             "#include <abstractions/libvirt-qemu>\n"
                             "  #include <libvirt/libvirt-%s.files>" % UUID))
        before = expanded(base, dom)
        tap.check("/usr/lib/ringside/qemu/qemu-system-x86_64" not in before
                  and "/usr/bin/qemu-system-x86_64" in before,
                  "control: libvirt's own profile allows the distribution's "
                  "QEMU, not ringside's fork",
                  before[-1500:])

        env = dict(os.environ, DPKG_ROOT=root)
        r = run(os.path.join(ctl, "postinst"), "configure", env=env)
        local = open(os.path.join(base, "local", "abstractions",
                                  "libvirt-qemu")).read()
        tap.check(r.returncode == 0 and local.splitlines().count(LINE) == 1,
                  "postinst: one include line in local/abstractions/"
                  "libvirt-qemu", r.stderr + local)
        r = run(os.path.join(ctl, "postinst"), "configure", env=env)
        local = open(os.path.join(base, "local", "abstractions",
                                  "libvirt-qemu")).read()
        tap.check(local.splitlines().count(LINE) == 1,
                  "postinst again (an upgrade): still one line", local)

        for name, prof in (("the domain's profile (TEMPLATE.qemu, "
                            "libvirt-qemu, ringside-qemu)", dom),
                           ("libvirtd's", os.path.join(base, "usr.sbin.libvirtd")),
                           ("virt-aa-helper's", os.path.join(
                               base, "usr.lib.libvirt.virt-aa-helper"))):
            r = parse(base, prof)
            tap.check(r.returncode == 0, "apparmor_parser -Q: %s compiles"
                      % name, r.stderr)
        after = expanded(base, dom)
        want = ["/usr/bin/ringside rmix",
                "/usr/lib/ringside/qemu/qemu-system-x86_64 rmix",
                "/var/lib/libvirt/qemu/*.ringside-events.jsonl rw",
                "/var/lib/libvirt/qemu/*.ringside-events.sock rw"]
        tap.check(all(w in after for w in want),
                  "the domain's profile holds ringside's rules: the drop-in, "
                  "the fork, the events file and socket",
                  "missing: %r" % [w for w in want if w not in after])

        r = run(os.path.join(ctl, "postrm"), "purge", env=env)
        local = open(os.path.join(base, "local", "abstractions",
                                  "libvirt-qemu")).read()
        tap.check(r.returncode == 0 and LINE not in local and
                  parse(base, dom).returncode == 0,
                  "postrm: the include taken out, the profile still compiles",
                  r.stderr + local)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
