#!/usr/bin/env python3
"""The library in hw/char/rslib-* stays QEMU- and GLib-free (TAP).

Each rslib-*.c and each rslib-*.h on its own is compiled as C99 with
warnings as errors and hw/char/ as the only include directory, so a QEMU
macro (MIN, QEMU_BUILD_BUG_ON) or a GLib call fails to build.  The
compiler's list of included headers (-H) is then checked: what a library
file includes is another rslib-*.h or a header of the C99 standard
library, nothing else (no <glib.h> by a system path, no POSIX header).
Before that, the check is shown to catch a library file that includes
QEMU's osdep.h or a POSIX header.

Usage: test_rslib_standalone.py SRCDIR CC [CC-ARGS...]
"""
import glob
import os
import subprocess
import sys
import tempfile

C99_HEADERS = {
    "assert.h", "complex.h", "ctype.h", "errno.h", "fenv.h", "float.h",
    "inttypes.h", "iso646.h", "limits.h", "locale.h", "math.h", "setjmp.h",
    "signal.h", "stdarg.h", "stdbool.h", "stddef.h", "stdint.h", "stdio.h",
    "stdlib.h", "string.h", "tgmath.h", "time.h", "wchar.h", "wctype.h",
}
CFLAGS = ["-std=c99", "-pedantic", "-Wall", "-Wextra", "-Werror"]


def is_lib(path, incdir):
    path = os.path.realpath(path)
    return (os.path.dirname(path) == os.path.realpath(incdir) and
            os.path.basename(path).startswith("rslib-"))


def check(cc, src, incdir):
    """None if src builds alone and includes only what it may, else why."""
    cmd = cc + CFLAGS + ["-I", incdir, "-H", "-fsyntax-only"]
    if src.endswith(".h"):
        cmd += ["-x", "c", "-"]
        p = subprocess.run(cmd, input='#include "%s"\n' % os.path.basename(src),
                           capture_output=True, text=True)
    else:
        p = subprocess.run(cmd + [src], capture_output=True, text=True)
    if p.returncode != 0:
        errs = [l for l in p.stderr.splitlines() if "error" in l]
        return "does not build alone: " + " | ".join(errs[:3])
    # -H: one line per header, dots for its depth; a header's includer is
    # the last one listed one level up (level 0: the file compiled).
    stack = [src]
    for line in p.stderr.splitlines():
        dots, _, hdr = line.partition(" ")
        if not dots or set(dots) != {"."}:
            continue
        depth = len(dots)
        del stack[depth:]
        parent = stack[-1]
        stack.append(hdr)
        if parent != src and not is_lib(parent, incdir):
            continue
        if is_lib(hdr, incdir):
            continue
        if (os.path.basename(hdr) in C99_HEADERS and
                os.path.dirname(os.path.realpath(hdr)) !=
                os.path.realpath(incdir)):
            continue
        return "%s includes %s" % (os.path.basename(parent), hdr)
    return None


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: test_rslib_standalone.py SRCDIR CC [CC-ARGS...]")
    srcdir, cc = sys.argv[1], sys.argv[2:]
    incdir = os.path.join(srcdir, "hw", "char")
    files = sorted(glob.glob(os.path.join(incdir, "rslib-*.[ch]")))
    if not files:
        sys.exit("test_rslib_standalone.py: error: no rslib-*.[ch] in %s"
                 % incdir)
    bad_includes = ['#include "qemu/osdep.h"\n', "#include <unistd.h>\n"]
    print("1..%d" % (len(bad_includes) + len(files)))
    n = 0
    fail = 0
    # The check must be able to fail: a library file with a foreign
    # include, compiled from a copy of hw/char/ so the tree stays as is.
    ring = os.path.join(incdir, "rslib-ring.c")
    for inc in bad_includes:
        n += 1
        with tempfile.TemporaryDirectory() as tmp:
            for f in files:
                with open(f) as i, open(os.path.join(tmp, os.path.basename(f)),
                                        "w") as o:
                    o.write(i.read())
            with open(ring) as i:
                text = i.read()
            bad = os.path.join(tmp, "rslib-ring.c")
            with open(bad, "w") as o:
                o.write(inc + text)
            why = check(cc, bad, tmp)
        if why:
            print("ok %d - a library file with %s is refused (%s)"
                  % (n, inc.strip(), why[:120]))
        else:
            print("not ok %d - a library file with %s passes the check"
                  % (n, inc.strip()))
            fail = 1
    for f in files:
        n += 1
        name = os.path.relpath(f, srcdir)
        why = check(cc, f, incdir)
        if why:
            print("not ok %d - %s: %s" % (n, name, why))
            fail = 1
        else:
            print("ok %d - %s builds as C99 alone, with C headers only"
                  % (n, name))
    return fail


if __name__ == "__main__":
    sys.exit(main())
