#!/usr/bin/env bash
# Long runs of the migration-stream fuzzer (tests/fuzz/migrate_fuzz.py):
# JOBS processes, each with its own QEMUs and generator seed, nice'd, until
# STREAMS streams are tried in all (or SECONDS pass).  Against the ASan/UBSan
# fork when it is built (scripts/build-qemu.sh --sanitize), else the plain
# one.  Prints streams tried, streams per second, the distinct paths reached
# over all jobs (load outcomes by message) and every finding, whose stream
# is in $RINGSIDE_CACHE/fuzz/migrate/ (replay: migrate_fuzz.py --seed K
# --only N).  Interrupted (SIGINT, SIGTERM), it still prints the figures of
# what ran.  Exit status 1 if anything was found.
#
# Usage: fuzz-migrate.sh [-n STREAMS] [-t SECONDS] [-j JOBS] [-s FIRST_SEED]
#                        [-b 7.2|10.0]
#   (default 100000 streams, no time limit, 2 jobs, seeds from 1, the fork
#   on 7.2)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

streams=100000 secs=0 jobs=2 seed0=1 base=7.2
while getopts "n:t:j:s:b:" o; do
    case $o in
    n) streams=$OPTARG ;;
    t) secs=$OPTARG ;;
    j) jobs=$OPTARG ;;
    s) seed0=$OPTARG ;;
    b) base=$OPTARG ;;
    *) die "usage: fuzz-migrate.sh [-n STREAMS] [-t SECONDS] [-j JOBS] [-s SEED] [-b 7.2|10.0]" ;;
    esac
done
[[ $streams =~ ^[0-9]+$ && $secs =~ ^[0-9]+$ && $jobs =~ ^[1-9][0-9]*$ &&
   $seed0 =~ ^[0-9]+$ ]] || die "STREAMS, SECONDS, JOBS and SEED are numbers"
[[ $base == 7.2 || $base == 10.0 ]] || die "-b takes 7.2 or 10.0, not $base"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
per=$(( (streams + jobs - 1) / jobs ))
pids=()
for j in $(seq 0 $((jobs - 1))); do
    args=(--seed $((seed0 + j)) --json --base "$base")
    if [ "$secs" -gt 0 ]; then args+=(--seconds "$secs"); else args+=(--streams "$per"); fi
    nice python3 "$RINGSIDE_ROOT/tests/fuzz/migrate_fuzz.py" "${args[@]}" \
        >"$out/$j.out" 2>"$out/$j.err" &
    pids+=($!)
done
# interrupted, each job stops and still prints its figures
trap 'kill -TERM "${pids[@]}" 2>/dev/null || true' INT TERM
for p in "${pids[@]}"; do
    while kill -0 "$p" 2>/dev/null; do wait "$p" || true; done
done
trap - INT TERM
python3 - "$out" "$jobs" <<'PY'
import json, os, sys
d, jobs = sys.argv[1], int(sys.argv[2])
total = secs = findings = 0
paths = {}
for j in range(jobs):
    text = open(os.path.join(d, "%d.out" % j)).read()
    summ = [json.loads(l) for l in text.splitlines() if l.startswith("{")]
    if not summ:
        print("job %d printed no summary:\n%s%s" % (
            j, text, open(os.path.join(d, "%d.err" % j)).read()[-2000:]))
        findings += 1
        continue
    s = summ[-1]
    total += s["streams"]
    secs = max(secs, s["seconds"])
    findings += s["findings"]
    for k, n in s["path_list"]:
        paths[tuple(k)] = paths.get(tuple(k), 0) + n
    for l in text.splitlines():
        if l.startswith("# FINDING"):
            print(l[2:])
print("%d streams in %.0f s over %d jobs: %.1f streams/s, %d distinct "
      "paths, %d findings" % (total, secs, jobs, total / secs if secs else 0,
                              len(paths), findings))
for k, n in sorted(paths.items(), key=lambda kv: -kv[1]):
    print("  %7d  %s" % (n, " | ".join(k)))
sys.exit(1 if findings else 0)
PY
