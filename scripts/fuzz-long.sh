#!/usr/bin/env bash
# Long runs of the device library's libFuzzer targets (tests/fuzz/): each
# target runs a fixed number of inputs, nice'd, JOBS at a time, from its
# generated seeds and its corpus in $RINGSIDE_CACHE/fuzz/corpus/<target>/
# (which keeps growing across runs, and which the bounded test-suite run
# does not share), inputs up to 2 KiB (the bounded run: 4 KiB; shorter
# programs run faster and reach the same states).  Prints per target: execs, exec/s, coverage (libFuzzer's cov:
# edges and ft: features of its last status line), the corpus size, the
# most guest-memory reads one call made, and whether anything was found.
#
# Usage: fuzz-long.sh [-f] [-n EXECS] [-t SECONDS] [-j JOBS] [TARGET...]
#   EXECS default 10000000 (-t: stop after SECONDS, whichever is first),
#   JOBS default 2, TARGETs default all (ring, match, l1, state).  -f: fuzz
#   with targets built without ASan and UBSan (about 2.5 times the exec/s;
#   a crash, a broken assertion or the read bound still stop them), then
#   run every input of the corpus once through the sanitized build.  A run
#   interrupted (SIGINT) still prints its figures.  Exit status 1 if any
#   target found something; its reproducer is
#   $RINGSIDE_CACHE/fuzz/<target>-crash-* (replay it with
#   $RINGSIDE_CACHE/fuzz/fuzz-<target> FILE).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$RINGSIDE_ROOT/tests/fuzz/fuzz-lib.sh"

execs=10000000 jobs=2 secs=0 fast=
while getopts "fn:t:j:" o; do
    case $o in
    f) fast=1 ;;
    n) execs=$OPTARG ;;
    t) secs=$OPTARG ;;
    j) jobs=$OPTARG ;;
    *) die "usage: fuzz-long.sh [-f] [-n EXECS] [-t SECONDS] [-j JOBS] [TARGET...]" ;;
    esac
done
shift $((OPTIND - 1))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${FUZZ_TARGETS[@]}")
for t in "${targets[@]}"; do
    [ -n "${FUZZ_LIBS[$t]:-}" ] || die "no fuzz target $t (${FUZZ_TARGETS[*]})"
done
command -v clang >/dev/null || die "clang not installed (scripts/install-deps.sh test)"

work=$RINGSIDE_CACHE/fuzz
bin=$work
mkdir -p "$work"
[ -z "$fast" ] || { bin=$work/fast; mkdir -p "$bin"; }
for t in "${targets[@]}"; do
    fuzz_build "$RINGSIDE_ROOT" "$work" "$t" -O2 ||
        die "fuzz-$t does not build, see $work/build-$t.log"
    if [ -n "$fast" ]; then
        FUZZ_SANITIZERS= fuzz_build "$RINGSIDE_ROOT" "$bin" "$t" -O2 ||
            die "fuzz-$t does not build unsanitized, see $bin/build-$t.log"
    fi
    fuzz_seeds "$RINGSIDE_ROOT" "$work/seeds/$t" "$t"
    mkdir -p "$work/corpus/$t"
done

run() {
    local t=$1 t0 rc=0
    t0=$(date +%s)
    rm -f "$work/replay-$t.log"
    (cd "$work" && FUZZ_READ_STATS=1 exec nice -n 10 "$bin/fuzz-$t" \
        -runs="$execs" -max_total_time="$secs" -max_len=2048 \
        -print_final_stats=1 -interrupted_exit_code=72 \
        -artifact_prefix="$work/$t-" "corpus/$t" "seeds/$t" \
        >"fuzz-$t.log" 2>&1) || rc=$?
    echo "$(($(date +%s) - t0))" >"$work/fuzz-$t.secs"
    if [ -n "$fast" ] && { [ "$rc" -eq 0 ] || [ "$rc" -eq 72 ]; }; then
        # every input kept, once, under ASan and UBSan
        (cd "$work" && FUZZ_READ_STATS=1 exec nice -n 10 "./fuzz-$t" \
            -runs=0 -artifact_prefix="$work/$t-" "corpus/$t" \
            >"replay-$t.log" 2>&1) || rc=1
    fi
    return "$rc"
}

limit=""
[ "$secs" -eq 0 ] || limit=" (at most $secs s)"
echo "fuzzing ${targets[*]}, $execs inputs each$limit, $jobs at a time;" \
    "logs in $work"
declare -A pid=() rc=()
running=()
for t in "${targets[@]}"; do
    if [ ${#running[@]} -ge "$jobs" ]; then
        wait "${pid[${running[0]}]}" && rc[${running[0]}]=0 || rc[${running[0]}]=$?
        running=("${running[@]:1}")
    fi
    run "$t" &
    pid[$t]=$!
    running+=("$t")
done
for t in "${running[@]}"; do
    wait "${pid[$t]}" && rc[$t]=0 || rc[$t]=$?
done

status=0
for t in "${targets[@]}"; do
    log=$work/fuzz-$t.log
    reads=$(sed -n 's/^stat::max_reads_per_call: //p' "$log" | tail -n1)
    refused=$(sed -n 's/^stat::max_refused_per_call: //p' "$log" | tail -n1)
    line="fuzz-$t: $(fuzz_figures "$log") in $(cat "$work/fuzz-$t.secs") s,"
    line+=" corpus $(find "$work/corpus/$t" -type f | wc -l),"
    [ -z "$reads" ] || line+=" max reads per call $reads,"
    [ -z "$refused" ] || line+=" max refused $refused,"
    if [ -n "$fast" ] && [ -f "$work/replay-$t.log" ]; then
        n=$(sed -n 's/^INFO: seed corpus: files: \([0-9]*\).*/\1/p' \
            "$work/replay-$t.log" | tail -n1)
        line+=" unsanitized; the corpus (${n:-?} inputs) replayed under ASan/UBSan,"
        ! fuzz_finding "$work/replay-$t.log" | grep -q . ||
            log=$work/replay-$t.log
    fi
    line=${line%,}
    if [ "${rc[$t]}" -eq 0 ]; then
        echo "$line: no finding"
    elif [ "${rc[$t]}" -eq 72 ]; then
        echo "$line: interrupted, no finding"
    else
        echo "$line: FINDING"
        fuzz_finding "$log" | sed 's/^/    /'
        status=1
    fi
done
exit "$status"
