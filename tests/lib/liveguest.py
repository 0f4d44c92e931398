"""A guest started from 'ringside run --print-qemu', for tests and
benchmarks that need it to stay up: wait for console output, talk QMP,
dump its memory, stop it."""
import os
import shlex
import subprocess
import time

from qmpclient import Qmp


class LiveGuest:
    def __init__(self, ringside, out, case, *run_args):
        self.out = out
        cmd = subprocess.run([ringside, "run", "--print-qemu", "--case", case,
                              "--out", out] + list(run_args),
                             capture_output=True, text=True, check=True)
        self.ram = os.path.join(out, "guest.ram")
        self.console = os.path.join(out, "console.log")
        self.qemu = subprocess.Popen(
            shlex.split(cmd.stdout), stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(out, "qemu.log"), "w"))
        self._qmp = None

    def alive(self):
        return self.qemu.poll() is None

    def wait_ram(self, timeout=60):
        """Until QEMU has created the guest's RAM file."""
        deadline = time.time() + timeout
        while time.time() < deadline and self.alive():
            if os.path.exists(self.ram) and os.path.getsize(self.ram) >= 64 << 20:
                return True
            time.sleep(0.01)
        return False

    def console_lines(self):
        if not os.path.exists(self.console):
            return []
        data = open(self.console, "rb").read().decode("utf-8", "replace")
        return data.replace("\r", "").split("\n")

    def wait_line(self, line, timeout=120):
        """Until the console has @line; the console's lines then, or None."""
        deadline = time.time() + timeout
        while time.time() < deadline and self.alive():
            lines = self.console_lines()
            if line in lines:
                return lines
            time.sleep(0.2)
        return None

    def qmp(self):
        if not self._qmp:
            self._qmp = Qmp(os.path.join(self.out, "qmp.sock"))
        return self._qmp

    def dump(self, path, paging=False):
        return self.qmp().cmd("dump-guest-memory", paging=paging,
                              protocol="file:" + path)

    def qemu_log(self):
        return open(os.path.join(self.out, "qemu.log")).read()

    def stop(self):
        if self.alive():
            try:
                self.qmp().cmd("quit")
            except OSError:
                pass
            try:
                self.qemu.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.qemu.kill()
        self.qemu.wait()
