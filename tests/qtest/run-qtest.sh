#!/usr/bin/env bash
# Run one of the project's qtests inside the QEMU fork's build tree (TAP).
# Usage: run-qtest.sh NAME [sanitize]   (e.g. ringside-serial-test)
# "sanitize" runs it in the ASan/UBSan build (scripts/build-qemu.sh
# --sanitize), where any report fails the test; that build is optional:
# without it the test is skipped.
set -euo pipefail
cache=${RINGSIDE_CACHE:-$HOME/.cache/ringside}
build=$cache/qemu/build
if [ "${2:-}" = sanitize ]; then
    build=$cache/qemu/build-sanitize
    if [ ! -x "$build/tests/qtest/$1" ]; then
        echo "1..0 # SKIP no sanitizer build (scripts/build-qemu.sh --sanitize)"
        exit 0
    fi
    # QEMU frees little at exit: leaks are not what this run looks for.
    export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
    export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
fi
bin=$build/tests/qtest/$1
if [ ! -x "$bin" ]; then
    echo "Bail out! $bin not built (run scripts/build-qemu.sh)"
    exit 1
fi
cd "$build"
QTEST_QEMU_BINARY=./qemu-system-x86_64 exec "./tests/qtest/$1" --tap
