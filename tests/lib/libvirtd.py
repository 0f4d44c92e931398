"""Debian's libvirt daemons for the tests, as Debian's packages set them up.

/etc/libvirt/qemu.conf stays as libvirt-daemon-system installs it: QEMU
runs as libvirt-qemu with dynamic ownership, and its log and the serial
ports' <log> files go through virtlogd.  Under systemd the units are
started; otherwise virtlogd and libvirtd run as their units would run
them, with /etc/default's arguments (less --timeout, which relies on
socket activation).  A daemon that already ran is left running at the
end.

Without systemd, each daemon runs under a reaper (this file run as a
program): libvirtd's QEMUs daemonize, so when one exits its zombie goes to
the nearest subreaper, else to PID 1.  systemd reaps at once; a
container's init may not, and libvirt then waits seconds for each exited
capability probe and domain (kill(pid, 0) still finds the zombie).

Where udev does not run, /dev/kvm is given the group and mode Debian's udev
rule (50-udev-default.rules) gives it, root:kvm 0660: left root-only,
libvirt finds KVM usable for root but not for libvirt-qemu and probes the
emulator's capabilities again at every domain definition.

libvirt-qemu cannot reach root's build cache, so stage_fork() copies the
fork where it can; libvirt-xml copies the kernel and initramfs into
/var/lib/libvirt/boot itself.
"""
import ctypes
import grp
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

URI = "qemu:///system"
CONF = "/etc/libvirt/qemu.conf"
DAEMONS = {  # name: (pidfile, /etc/default variable)
    "virtlogd": ("/run/virtlogd.pid", "VIRTLOGD_ARGS"),
    "libvirtd": ("/run/libvirtd.pid", "LIBVIRTD_ARGS"),
}
# Set while the tests' start() started a daemon that stop() should end.
OURS = "/run/ringside-test-libvirtd.ours"
STAGE = "/var/lib/libvirt/ringside-test"


def _systemd():
    return os.path.isdir("/run/systemd/system")


def _alive(pidfile):
    """The pid in @pidfile if that process runs (a zombie does not)."""
    try:
        pid = int(open(pidfile).read().split()[0])
        stat = open("/proc/%d/stat" % pid).read()
        return None if stat.rsplit(")", 1)[1].split()[0] == "Z" else pid
    except (OSError, ValueError, IndexError):
        return None


def unavailable():
    """Why the tests cannot run libvirt here, or None."""
    if os.geteuid() != 0:
        return "needs root to run libvirtd"
    for prog in ("libvirtd", "virtlogd", "virsh"):
        if not shutil.which(prog):
            return "%s is not installed" % prog
    if not os.path.exists(CONF) or subprocess.run(
            ["id", "libvirt-qemu"], capture_output=True).returncode:
        return "libvirt-daemon-system is not installed"
    return None


def virsh(*args, check=True, timeout=60):
    r = subprocess.run(["virsh", "-q", "-c", URI] + list(args),
                       capture_output=True, text=True, timeout=timeout)
    if check and r.returncode:
        raise RuntimeError("virsh %s: %s" % (" ".join(args),
                                             r.stderr.strip()))
    return r


def _args(var):
    """The daemon's arguments from /etc/default, as its unit reads them."""
    name = "libvirtd" if var == "LIBVIRTD_ARGS" else "virtlogd"
    r = subprocess.run(["sh", "-c", '[ -r /etc/default/%s ] && '
                        '. /etc/default/%s; printf %%s "$%s"' %
                        (name, name, var)], capture_output=True, text=True)
    args = shlex.split(r.stdout)
    while "--timeout" in args:
        i = args.index("--timeout")
        del args[i:i + 2]
    return args


def _start_daemon(name):
    pidfile, var = DAEMONS[name]
    if _alive(pidfile):
        return
    if _systemd():
        subprocess.run(["systemctl", "start", name + ".service"], check=True)
    else:
        subprocess.Popen([sys.executable, os.path.abspath(__file__),
                          shutil.which(name), "-d"] + _args(var),
                         start_new_session=True, stdin=subprocess.DEVNULL)
        deadline = time.time() + 30
        while not _alive(pidfile) and time.time() < deadline:
            time.sleep(0.1)


def _kvm_as_udev_sets_it():
    try:
        st = os.stat("/dev/kvm")
        kvm = grp.getgrnam("kvm").gr_gid
    except (OSError, KeyError):
        return
    if st.st_gid != kvm:
        os.chown("/dev/kvm", 0, kvm)
        os.chmod("/dev/kvm", 0o660)


def start(timeout=30):
    """Have virtlogd and libvirtd running, and wait until libvirtd answers."""
    _kvm_as_udev_sets_it()
    if not os.path.exists(OURS) and not _alive(DAEMONS["libvirtd"][0]):
        # No daemon ran before the tests: the ones started are theirs.
        open(OURS, "w").write("%d\n" % os.getpid())
    for name in ("virtlogd", "libvirtd"):
        _start_daemon(name)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if virsh("uri", check=False, timeout=10).returncode == 0:
            return
        time.sleep(0.2)
    raise RuntimeError("libvirtd did not answer in %d s" % timeout)


def _stop_daemon(name):
    pid = _alive(DAEMONS[name][0])
    if not pid:
        return
    if _systemd():
        subprocess.run(["systemctl", "stop", name + ".service"])
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.time() + 30
    while _alive(DAEMONS[name][0]) == pid and time.time() < deadline:
        time.sleep(0.1)
    if _alive(DAEMONS[name][0]) == pid:
        os.kill(pid, signal.SIGKILL)


def kill():
    """Stop libvirtd only; its running QEMUs go on without it."""
    _stop_daemon("libvirtd")


def stop(domains=()):
    """Destroy and undefine @domains; stop the daemons the tests started."""
    for d in domains:
        virsh("destroy", d, check=False)
        virsh("undefine", d, check=False)
    if os.path.exists(OURS):
        _stop_daemon("libvirtd")
        _stop_daemon("virtlogd")
        os.unlink(OURS)
    else:
        start()


def stage_fork():
    """The fork the tests use, copied where libvirt-qemu can run it."""
    cache = os.environ.get("RINGSIDE_CACHE",
                           os.path.expanduser("~/.cache/ringside"))
    fork = os.environ.get("RINGSIDE_QEMU") or os.path.join(
        cache, "qemu", "build", "qemu-system-x86_64")
    os.makedirs(STAGE, mode=0o755, exist_ok=True)
    os.chmod(STAGE, 0o755)
    dest = os.path.join(STAGE, "qemu-system-x86_64")
    subprocess.run(["install", "-C", "-m", "0755", fork, dest], check=True)
    return dest


def _reap(argv):
    """Run @argv (a daemon that forks away) and reap what comes to us."""
    PR_SET_CHILD_SUBREAPER = 36
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0,
                                            0)
    subprocess.run(argv, check=True)
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return 0


if __name__ == "__main__":
    sys.exit(_reap(sys.argv[1:]))
