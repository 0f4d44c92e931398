#!/usr/bin/env bash
# Run every test: unit tests, the qtest suite inside the QEMU fork, and the
# boot tests on the project's guest kernel.  Builds what is missing first.
# Extra arguments go to 'meson test' (e.g. --suite unit).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
"$RINGSIDE_ROOT/scripts/build-all.sh" test
cd "$RINGSIDE_ROOT"
rc=0
meson test -C build --print-errorlogs "$@" || rc=$?
# One plain summary line, counted from meson's own log.
python3 - build/meson-logs/testlog.json <<'PY'
import json, sys
res = [json.loads(l)["result"] for l in open(sys.argv[1]) if l.strip()]
ok = sum(r in ("OK", "EXPECTEDFAIL") for r in res)
skip = sum(r == "SKIP" for r in res)
print("%d passed, %d failed, %d skipped" % (ok, len(res) - ok - skip, skip))
PY
exit $rc
