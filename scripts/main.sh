#!/usr/bin/env bash
# The main job: build what is missing, boot the project's guest kernel under
# the QEMU fork with ringside-serial as its console, drive the default panic
# path, and print the timestamped transcript and the verdict.
# Extra arguments go to 'ringside run' (see 'build/collector/ringside run
# --help'), e.g. --case poweroff or --accel kvm:tcg.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
"$RINGSIDE_ROOT/scripts/build-all.sh" build
exec "$RINGSIDE_ROOT/build/collector/ringside" run "$@"
