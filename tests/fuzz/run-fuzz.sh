#!/usr/bin/env bash
# Build the device library's libFuzzer targets (tests/fuzz/fuzz-*.c) with
# clang and fuzz each for a bounded time (TAP, one line per target).  Two
# run at a time (the build machine has 2 cores) and each gets SECONDS
# divided by the number of rounds, so the whole run takes about SECONDS.
# Each target starts from its generated seeds and from its corpus in
# WORKDIR, which grows across runs.  Usage: run-fuzz.sh SRCDIR WORKDIR SECONDS
set -uo pipefail
src=$1 work=$2 secs=$3
. "$src/tests/fuzz/fuzz-lib.sh"
n=${#FUZZ_TARGETS[@]}
per=$((secs / ((n + 1) / 2)))
[ "$per" -ge 1 ] || per=1
mkdir -p "$work"
echo "1..$n"
if ! command -v clang >/dev/null; then
    echo "Bail out! clang not installed (scripts/install-deps.sh test)"
    exit 1
fi

one() {
    local t=$1
    mkdir -p "$work/corpus/$t"
    fuzz_build "$src" "$work" "$t" || return 2
    fuzz_seeds "$src" "$work/seeds/$t" "$t" 2>>"$work/build-$t.log" || return 2
    (cd "$work" && exec "./fuzz-$t" -max_total_time="$per" -max_len=4096 \
        -print_final_stats=1 -artifact_prefix="$work/$t-" \
        "corpus/$t" "seeds/$t" >"fuzz-$t.log" 2>&1)
}

# two at a time; each one's status kept as it ends
declare -A rc=()
batch=()
finish() {
    local t
    for t in "${batch[@]}"; do
        wait "${pid[$t]}"
        rc[$t]=$?
    done
    batch=()
}
declare -A pid=()
for t in "${FUZZ_TARGETS[@]}"; do
    one "$t" &
    pid[$t]=$!
    batch+=("$t")
    [ "${#batch[@]}" -lt 2 ] || finish
done
finish
fail=0 i=0
for t in "${FUZZ_TARGETS[@]}"; do
    i=$((i + 1))
    if [ "${rc[$t]}" -eq 0 ]; then
        echo "ok $i - fuzz-$t: no finding in ${per}s ($(fuzz_figures "$work/fuzz-$t.log"))"
    elif [ "${rc[$t]}" -eq 2 ]; then
        sed 's/^/# /' "$work/build-$t.log"
        echo "not ok $i - fuzz-$t builds and has seeds"
        fail=1
    else
        fuzz_finding "$work/fuzz-$t.log" | sed 's/^/# /'
        echo "not ok $i - fuzz-$t found a crash (reproducer: $work/$t-*)"
        fail=1
    fi
done
exit "$fail"
