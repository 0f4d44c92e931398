"""The kernels the project kernel is compared with, as the benchmarks find
them in the cache (scripts/prepare-comparison.sh builds them), and the
shared bits of the benchmarks' command lines."""
import glob
import os
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
cache = os.environ.get("RINGSIDE_CACHE", os.path.expanduser("~/.cache/ringside"))
ringside = os.environ.get("RINGSIDE_BIN", os.path.join(root, "build", "collector", "ringside"))


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def kernels():
    """{name: kernel image} for patched and baseline (the project's builds),
    ringside-6.12 (the 6.12 series' build), and stock, rt, stock-6.12 and
    rt-6.12 (Debian's, where the test module was built for them)."""
    found = {}
    for name, path in (("patched", os.path.join(cache, "kernel", "bzImage")),
                       ("baseline", os.path.join(cache, "kernel-baseline", "bzImage"))):
        if os.path.exists(path):
            found[name] = path
    # The 6.12 series' kernel (build-kernel.sh --kernel-version 6.12).
    path = os.path.join(cache, "kernel-6.12", "bzImage")
    if os.path.exists(path):
        found["ringside-6.12"] = path
    for name, pattern in (("stock", "vmlinuz-6.1.0-*[0-9]-amd64"),
                          ("rt", "vmlinuz-6.1.0-*-rt-amd64"),
                          ("stock-6.12", "vmlinuz-6.12.*+deb12-amd64"),
                          ("rt-6.12", "vmlinuz-6.12.*+deb12-rt-amd64")):
        for path in sorted(glob.glob(os.path.join(cache, "stock", pattern))):
            kver = os.path.basename(path)[len("vmlinuz-"):]
            if os.path.exists(os.path.join(cache, "modules", kver,
                                           "test_printk_panic.ko")):
                found[name] = path
    return found
