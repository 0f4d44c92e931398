#!/usr/bin/env bash
# Run a boot test on the fork's second base (TAP):
#   on-base.sh BASE TEST [ARGS...]
# with $RINGSIDE_QEMU naming that base's build, which ringside run and
# the other commands then boot; skipped when that build is not there.
set -euo pipefail
cache=${RINGSIDE_CACHE:-$HOME/.cache/ringside}
qemu=$cache/qemu-$1/build/qemu-system-x86_64
if [ ! -x "$qemu" ]; then
    echo "1..0 # SKIP no QEMU $1 build (scripts/build-qemu.sh --base $1)"
    exit 0
fi
echo "# on QEMU $1: $qemu"
shift
export RINGSIDE_QEMU=$qemu
exec "$@"
