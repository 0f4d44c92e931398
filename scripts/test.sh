#!/usr/bin/env bash
# Run every test: unit tests, the qtest suite inside the QEMU fork, and the
# boot tests on the project's guest kernel.  Builds what is missing first.
# Extra arguments go to 'meson test' (e.g. --suite unit).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
"$RINGSIDE_ROOT/scripts/build-all.sh" test
cd "$RINGSIDE_ROOT"
exec meson test -C build --print-errorlogs "$@"
