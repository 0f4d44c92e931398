"""A real libvirt daemon for the tests, started by hand (no systemd).

Debian's libvirt-daemon runs QEMU as libvirt-qemu, which cannot reach the
fork, kernel and initramfs under root's cache; the tests' daemon runs it
as root, and with stdio_handler = "file" needs no virtlogd.  The settings
go into /etc/libvirt/qemu.conf between marker lines (the original is kept
as qemu.conf.ringside-orig and put back by stop()).
"""
import os
import shutil
import signal
import subprocess
import time

CONF = "/etc/libvirt/qemu.conf"
SAVED = CONF + ".ringside-orig"
PIDFILE = "/run/ringside-test-libvirtd.pid"
SYSTEM_PIDFILE = "/run/libvirtd.pid"
URI = "qemu:///system"
SETTINGS = 'user = "root"\ngroup = "root"\nstdio_handler = "file"\n'
BEGIN, END = "# ringside tests: begin\n", "# ringside tests: end\n"


def _alive(pidfile):
    """The pid in @pidfile if that process runs (a zombie does not)."""
    try:
        pid = int(open(pidfile).read().split()[0])
        stat = open("/proc/%d/stat" % pid).read()
        return None if stat.rsplit(")", 1)[1].split()[0] == "Z" else pid
    except (OSError, ValueError, IndexError):
        return None


def unavailable():
    """Why the tests cannot have their own daemon here, or None."""
    if os.geteuid() != 0:
        return "needs root to run libvirtd"
    if not shutil.which("libvirtd") or not shutil.which("virsh"):
        return "libvirt-daemon / libvirt-clients not installed"
    if _alive(SYSTEM_PIDFILE) and not _alive(PIDFILE):
        return "another libvirtd runs here; the tests restart their own"
    return None


def _configure():
    os.makedirs("/var/log/libvirt/qemu", exist_ok=True)
    os.makedirs("/var/lib/libvirt/qemu", exist_ok=True)
    text = open(CONF).read() if os.path.exists(CONF) else ""
    if BEGIN in text:
        return
    if os.path.exists(CONF) and not os.path.exists(SAVED):
        shutil.copy2(CONF, SAVED)
    with open(CONF, "a") as f:
        f.write("\n" + BEGIN + SETTINGS + END)
    # The daemon's QEMU driver wants its user even when told to use root.
    if subprocess.run(["id", "libvirt-qemu"], capture_output=True).returncode:
        subprocess.run(["groupadd", "--system", "libvirt-qemu"])
        subprocess.run(["useradd", "--system", "--gid", "libvirt-qemu",
                        "--no-create-home", "--home-dir", "/var/lib/libvirt",
                        "--shell", "/usr/sbin/nologin", "libvirt-qemu"],
                       check=True)


def virsh(*args, check=True, timeout=60):
    r = subprocess.run(["virsh", "-q", "-c", URI] + list(args),
                       capture_output=True, text=True, timeout=timeout)
    if check and r.returncode:
        raise RuntimeError("virsh %s: %s" % (" ".join(args),
                                             r.stderr.strip()))
    return r


def start(timeout=30):
    """Start the daemon (if ours is not running) and wait until it answers."""
    _configure()
    if not _alive(PIDFILE):
        subprocess.run(["libvirtd", "-d", "-p", PIDFILE], check=True)
    deadline = time.time() + timeout
    while time.time() < deadline:
        if virsh("uri", check=False, timeout=10).returncode == 0:
            return
        time.sleep(0.2)
    raise RuntimeError("libvirtd did not answer in %d s" % timeout)


def kill():
    """Stop the daemon only; its running QEMUs go on without it."""
    pid = _alive(PIDFILE)
    if not pid:
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.time() + 30
    while _alive(PIDFILE) == pid and time.time() < deadline:
        time.sleep(0.1)
    if _alive(PIDFILE) == pid:
        os.kill(pid, signal.SIGKILL)


def stop(domains=()):
    """Destroy and undefine @domains, stop the daemon, restore qemu.conf."""
    for d in domains:
        virsh("destroy", d, check=False)
        virsh("undefine", d, check=False)
    kill()
    if os.path.exists(SAVED):
        shutil.move(SAVED, CONF)
    elif os.path.exists(CONF):
        text = open(CONF).read()
        if BEGIN in text:
            head, rest = text.split(BEGIN, 1)
            open(CONF, "w").write(head.rstrip("\n") + "\n" +
                                  rest.split(END, 1)[-1])
