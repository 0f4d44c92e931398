#!/usr/bin/env bash
# Build the ring decoder's libFuzzer target with clang and fuzz it for a
# bounded time (TAP).  The corpus lives in the build directory, so runs
# build on each other.  Usage: run-fuzz.sh SRCDIR WORKDIR SECONDS
set -uo pipefail
src=$1 work=$2 secs=$3
mkdir -p "$work/corpus"
echo "1..1"
if ! command -v clang >/dev/null; then
    echo "Bail out! clang not installed (scripts/install-deps.sh test)"
    exit 1
fi
clang -std=c99 -g -O1 -fsanitize=fuzzer,address,undefined \
    -fno-sanitize-recover=all -I"$src/hw/char" "$src/tests/fuzz/fuzz-ring.c" \
    "$src/hw/char/ringside-ring.c" "$src/hw/char/ringside-vmci.c" \
    -o "$work/fuzz-ring" 2>"$work/build.log" || {
    sed 's/^/# /' "$work/build.log"
    echo "not ok 1 - fuzz target builds"
    exit 1
}
cd "$work"
if ./fuzz-ring -max_total_time="$secs" -max_len=4096 -print_final_stats=1 \
    corpus >fuzz.log 2>&1; then
    grep -E 'stat::number_of_executed_units|stat::average_exec_per_sec' fuzz.log |
        sed 's/^/# /'
    echo "ok 1 - no crash in ${secs}s of fuzzing"
else
    grep -A30 -E 'ERROR|==[0-9]+==' fuzz.log | head -60 | sed 's/^/# /'
    echo "not ok 1 - fuzzer found a crash (reproducer in $work)"
    exit 1
fi
