#!/usr/bin/env bash
# Run one of the project's qtests inside the QEMU fork's build tree (TAP).
# Usage: run-qtest.sh NAME   (e.g. ringside-serial-test)
set -euo pipefail
build=${RINGSIDE_CACHE:-$HOME/.cache/ringside}/qemu/build
bin=$build/tests/qtest/$1
if [ ! -x "$bin" ]; then
    echo "Bail out! $bin not built (run scripts/build-qemu.sh)"
    exit 1
fi
cd "$build"
QTEST_QEMU_BINARY=./qemu-system-x86_64 exec "./tests/qtest/$1" --tap
