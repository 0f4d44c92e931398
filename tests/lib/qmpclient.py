"""QMP for the tests and benchmarks through QEMU's own client, qemu.qmp
(python/qemu/qmp in the fork's source tree, in the cache)."""
import os
import sys
import warnings


def _qemu_python():
    cache = os.environ.get("RINGSIDE_CACHE",
                           os.path.expanduser("~/.cache/ringside"))
    for tree in ("qemu", "qemu-10.0"):
        path = os.path.join(cache, tree, "src", "python")
        if os.path.isdir(os.path.join(path, "qemu", "qmp")):
            return path
    sys.exit("qmpclient: no QEMU source tree in %s (scripts/build-qemu.sh "
             "unpacks one)" % cache)


sys.path.insert(0, _qemu_python())
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from qemu.qmp.legacy import QEMUMonitorProtocol  # noqa: E402


class Qmp:
    """One QMP connection.  Qmp(path) connects to a QEMU listening on
    @path; Qmp(path, listen=True) listens there for QEMU to connect (then
    accept()).  cmd() returns QMP's whole answer ("return" or "error").
    Each raises OSError when QEMU is not there or went away."""

    def __init__(self, path, listen=False):
        with warnings.catch_warnings():
            # legacy.py's asyncio.get_event_loop() outside a running loop
            warnings.simplefilter("ignore", DeprecationWarning)
            self.m = QEMUMonitorProtocol(path, server=listen)
        if not listen:
            self._call("connect", self.m.connect)

    @staticmethod
    def _call(what, fn, *args):
        try:
            return fn(*args)
        except OSError:
            raise
        except Exception as e:      # qemu.qmp's own errors
            raise OSError("QMP %s: %s" % (what, e or type(e).__name__))

    def accept(self, timeout=60):
        self._call("accept", self.m.accept, timeout)

    def cmd(self, name, **args):
        return self._call(name, self.m.cmd, name, args or None)

    def close(self):
        self.m.close()
