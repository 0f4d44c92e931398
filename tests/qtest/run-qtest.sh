#!/usr/bin/env bash
# Run one of the project's qtests inside the QEMU fork's build tree (TAP).
# Usage: run-qtest.sh NAME [plain|sanitize] [7.2|10.0]
#   (e.g. run-qtest.sh ringside-serial-test sanitize 10.0)
# "sanitize" runs it in the ASan/UBSan build (scripts/build-qemu.sh
# --sanitize), where any report fails the test.  The second base, 10.0,
# is its own build (scripts/build-qemu.sh --base 10.0).  Builds other than
# the default base's plain one are optional: without them the test is
# skipped.
set -euo pipefail
cache=${RINGSIDE_CACHE:-$HOME/.cache/ringside}
qdir=$cache/qemu
base=${3:-7.2}
[ "$base" = 7.2 ] || qdir=$cache/qemu-$base
build=$qdir/build
if [ "${2:-plain}" = sanitize ]; then
    build=$qdir/build-sanitize
    # QEMU frees little at exit: leaks are not what this run looks for.
    export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
    export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
fi
if [ ! -x "$build/tests/qtest/$1" ] &&
    { [ "${2:-plain}" = sanitize ] || [ "$base" != 7.2 ]; }; then
    echo "1..0 # SKIP no build in $build (scripts/build-qemu.sh --base $base${2:+ --$2})"
    exit 0
fi
bin=$build/tests/qtest/$1
if [ ! -x "$bin" ]; then
    echo "Bail out! $bin not built (run scripts/build-qemu.sh)"
    exit 1
fi
cd "$build"
QTEST_QEMU_BINARY=./qemu-system-x86_64 exec "./tests/qtest/$1" --tap
