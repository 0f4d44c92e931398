#!/usr/bin/env python3
"""ringside qemu as syzkaller's QEMU (TAP).

syzkaller's vm/qemu starts QEMU itself, from a binary path ("qemu") and
extra arguments ("qemu_args") in its configuration, and reads the console
from QEMU's stdout and stderr, one pipe.  This test builds that command
line the way vm/qemu's buildQemuArgs() does for linux/amd64 (the
monitor on a TCP socket, -serial stdio, -no-reboot, -name VM-N,
virtio-rng, e1000 on user networking with ssh forwarded, -initrd,
-kernel and syzkaller's kernel command line; no -hda, as vm/qemu does for
an empty image), with
the two settings a syzkaller configuration needs for ringside: "qemu" is
the drop-in wrapper and "qemu_args" adds "-ringside out=DIR/vm{{INDEX}}".

1. Deterministic boots (qemu_args "-accel tcg -icount ...", the RTC on
   the virtual clock, syzkaller's default of one vCPU): the project kernel boots to its sysrq panic, and
   syzkaller's panic=1 with -no-reboot ends QEMU.  Plain QEMU twice (the
   fork's own isa-serial; the two must agree, or the comparison says
   nothing), then the wrapper: its stdout+stderr must be byte-identical
   to plain QEMU's, its exit status the same; the run's directory holds
   the device's events and command line, and runs.jsonl a judged, clean
   run whose line count is the console's.
2. syzkaller's default qemu_args ("-enable-kvm -cpu host,migratable=off")
   where KVM works, two vCPUs: the same checks except byte identity
   (KVM's timing is not reproducible).
"""
import glob
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "lib"))
import tap  # noqa: E402

cache = os.environ.get("RINGSIDE_CACHE", os.path.expanduser("~/.cache/ringside"))
ringside = os.environ["RINGSIDE_BIN"]
QEMU = os.path.join(cache, "qemu", "build", "qemu-system-x86_64")
KERNEL = os.path.join(cache, "kernel", "bzImage")
# Debian's own kernel (fetch-stock-kernel.sh): it knows nothing of
# ringside-serial, so it boots the same on either UART.
STOCK = os.path.join(cache, "stock", "vmlinuz")
INITRD = os.path.join(cache, "initramfs", "initramfs.cpio.gz")

# vm/qemu: linuxCmdline, then linux/amd64's own, then the config's cmdline.
SYZ_CMDLINE = [
    "earlyprintk=serial", "oops=panic", "nmi_watchdog=panic",
    "panic_on_warn=1", "panic=1", "ftrace_dump_on_oops=orig_cpu",
    "vsyscall=native", "net.ifnames=0", "biosdevname=0",
    "root=/dev/sda", "console=ttyS0", "kvm-intel.nested=1",
    "kvm-intel.unrestricted_guest=1", "kvm-intel.vmm_exclusive=1",
    "kvm-intel.fasteoi=1", "kvm-intel.ept=1", "kvm-intel.flexpriority=1",
    "kvm-intel.vpid=1", "kvm-intel.emulate_invalid_guest_state=1",
    "kvm-intel.eptad=1", "kvm-intel.enable_shadow_vmcs=1",
    "kvm-intel.pml=1", "kvm-intel.enable_apicv=1",
]
# Under -icount the guest's TSC counts virtual ns.
DETERMINISTIC = ("-accel tcg -icount shift=5,sleep=off "
                 "-rtc base=2026-01-01T00:00:00,clock=vm")
KVM_DEFAULT = "-enable-kvm -cpu host,migratable=off"
TRIES = 3


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def syz_args(qemu_args, index, image, cmdline, out=None, cpu=1,
             kernel=KERNEL):
    """buildQemuArgs() for linux/amd64, image and initrd set, snapshot on."""
    args = ["-m", "512", "-smp", str(cpu),
            "-chardev", "socket,id=SOCKSYZ,server=on,wait=off,"
            "host=localhost,port=%d" % free_port(),
            "-mon", "chardev=SOCKSYZ,mode=control",
            "-display", "none", "-serial", "stdio", "-no-reboot",
            "-name", "VM-%d" % index, "-device", "virtio-rng-pci"]
    extra = qemu_args + ("" if out is None else " -ringside out=" + out)
    args += [a.replace("{{INDEX}}", str(index))
             for a in extra.split(" ") if a]
    args += ["-device", "e1000,netdev=net0",
             "-netdev", "user,id=net0,restrict=on,"
             "hostfwd=tcp:127.0.0.1:%d-:22" % free_port(),
             ] + (["-hda", image, "-snapshot"] if image else []) + [
             "-initrd", INITRD,
             "-kernel", kernel,
             "-append", " ".join(SYZ_CMDLINE + [cmdline])]
    return args


def boot(binary, args, timeout=300):
    """Run as vm/qemu does: stdout and stderr into one pipe."""
    r = subprocess.run([binary] + args, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                       timeout=timeout)
    return r.returncode, r.stdout


def run_record(out):
    """The runs.jsonl lines and run directories under @out."""
    path = os.path.join(out, "runs.jsonl")
    runs = [json.loads(l) for l in open(path)] if os.path.exists(path) else []
    return runs, sorted(glob.glob(os.path.join(out, "run-*")))


def check_run(tag, out, console):
    runs, dirs = run_record(out)
    if not tap.check(len(runs) == 1 and len(dirs) == 1,
                     "%s: one run directory and one runs.jsonl line" % tag,
                     "runs %r dirs %r" % (runs, dirs)):
        return
    run, d = runs[0], dirs[0]
    cmd = open(os.path.join(d, "qemu-command")).read()
    tap.check(os.path.getsize(os.path.join(d, "events.jsonl")) > 0 and
              "'x-serial0-type=ringside-serial'" in cmd and
              "'-serial' 'stdio'" in cmd,
              "%s: the run's events and command line kept" % tag, cmd)
    lines = console.count(b"\n")
    tap.check(run.get("judged") and run.get("clean") and
              run.get("device_summary") and run.get("lines") == lines,
              "%s: judged clean, %d lines as on the console" % (tag, lines),
              json.dumps(run))
    tap.check(os.path.exists(os.path.join(d, "report.json")),
              "%s: report.json written" % tag)


def main():
    for p in (QEMU, KERNEL, INITRD, STOCK):
        if not os.path.exists(p):
            print("1..0 # SKIP %s not built" % p)
            return 0
    work = tempfile.mkdtemp(prefix="ringside-dropin-")
    # An empty image: vm/qemu then leaves out -hda and -snapshot, as for
    # a kernel that needs no disk.  (A disk makes SeaBIOS's reads, and so
    # the boot's timing, depend on the host: no two boots would agree.)
    image = None
    # syzkaller's "qemu": as the ringside-qemu package installs it, a link
    # to ringside named qemu-system-x86_64 (the fork: the one built here).
    wrapper = os.path.join(work, "qemu-system-x86_64")
    os.symlink(ringside, wrapper)
    cmdline = "ringside.case=sysrq-panic tsc_early_khz=1000000"

    def det(index, out=None):
        return syz_args(DETERMINISTIC, index, image, cmdline, out,
                        kernel=STOCK)

    # icount makes a boot repeatable, not certain: a host under load can
    # still move a timer by an instruction.  So each comparison is tried
    # up to three times; a difference never makes two runs equal.
    for attempt in range(TRIES):
        plain = [boot(QEMU, det(3)) for _ in range(2)]
        if plain[0] == plain[1]:
            break
    tap.check(plain[0] == plain[1] and b"Kernel panic" in plain[0][1],
              "plain QEMU: two deterministic boots of Debian's kernel to the "
              "panic agree (%d bytes, exit %d; try %d)" % (
                  len(plain[0][1]), plain[0][0], attempt + 1),
              plain[0][1][-2000:].decode(errors="replace"))
    # The wrapper on the same line: the board makes ttyS0 a ringside-serial
    # where it would make its isa-serial, so the guest sees the machine
    # plain QEMU gives it.
    for attempt in range(TRIES):
        out = os.path.join(work, "out%d" % attempt)
        rc, console = boot(wrapper, det(3, out + "/vm{{INDEX}}"))
        prc, pconsole = plain[0] if attempt == 0 else boot(QEMU, det(3))
        if console == pconsole:
            break
    if not tap.check(console == pconsole and rc == prc and
                     b"Kernel panic" in console,
                     "ringside qemu: stdout+stderr byte-identical to plain "
                     "QEMU's on syzkaller's literal line (%d bytes), exit %d; "
                     "try %d" % (len(console), rc, attempt + 1),
                     "plain %d bytes exit %d; ringside %d bytes exit %d\n"
                     "ringside ends:\n%s" % (
                         len(pconsole), prc, len(console), rc,
                         console[-1500:].decode(errors="replace"))):
        for i, (x, y) in enumerate(zip(console, pconsole)):
            if x != y:
                print("#   first difference at byte %d: %r vs %r" %
                      (i, console[max(0, i - 60):i + 60],
                       pconsole[max(0, i - 60):i + 60]))
                break
    # ringside's verdicts are written once QEMU has gone.
    for _ in range(100):
        if os.path.exists(os.path.join(out, "vm3", "runs.jsonl")):
            break
        time.sleep(0.1)
    check_run("tcg", os.path.join(out, "vm3"), console)

    # syzkaller's own qemu_args, on the project kernel, where KVM boots
    # plain QEMU (nested KVM can fail -cpu host: then both fail alike).
    kargs = syz_args(KVM_DEFAULT, 0, image, "ringside.case=sysrq-panic",
                     cpu=2)
    try:
        krc, kconsole = boot(QEMU, kargs, timeout=30) \
            if os.access("/dev/kvm", os.R_OK | os.W_OK) else (None, b"")
    except subprocess.TimeoutExpired:
        krc, kconsole = None, b""
    if krc != 0 or b"Kernel panic" not in kconsole:
        tap.check(True, "# SKIP syzkaller's default qemu_args: plain QEMU "
                  "does not boot with KVM here")
    else:
        kout = os.path.join(work, "kvm")
        krc, kconsole = boot(wrapper, syz_args(KVM_DEFAULT, 0, image,
                                               "ringside.case=sysrq-panic",
                                               kout + "/vm{{INDEX}}", cpu=2))
        tap.check(krc == 0 and b"Kernel panic" in kconsole,
                  "kvm, syzkaller's default qemu_args: boots to the panic "
                  "and QEMU exits 0", kconsole[-1500:].decode(errors="replace"))
        for _ in range(100):
            if os.path.exists(os.path.join(kout, "vm0", "runs.jsonl")):
                break
            time.sleep(0.1)
        check_run("kvm", os.path.join(kout, "vm0"), kconsole)
    subprocess.run(["rm", "-rf", work])
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
