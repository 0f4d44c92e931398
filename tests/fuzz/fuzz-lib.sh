# Shared by tests/fuzz/run-fuzz.sh (bounded, in the test suite) and
# scripts/fuzz-long.sh (long runs): the libFuzzer targets, how each is
# built, its seeds, and what its log says.  Sourced, not run.
# shellcheck shell=bash

# target name -> the library files it links (hw/char/rslib-*.c).  A
# file marked "+" is only read through: the ring decoder under the matcher
# and level 1, which fuzz-ring covers.  It keeps its edge counters but not
# libFuzzer's comparison tracing, which took more than half of those
# targets' time; the file under test keeps both.
declare -A FUZZ_LIBS=(
    [ring]="ring vmci"
    [match]="+events +ring +vmci match"
    [l1]="+events +ring +vmci l1"
    [state]="+events +ring +vmci match l1"
)
FUZZ_TARGETS=(ring match l1 state)

# fuzz_build SRC OUTDIR TARGET [extra cflags...]: OUTDIR/fuzz-TARGET, with
# the compiler's messages in OUTDIR/build-TARGET.log.  With ASan and UBSan,
# unless FUZZ_SANITIZERS is set empty (libFuzzer alone: faster, for long
# runs whose corpus is then replayed under them).
fuzz_build() {
    local src=$1 out=$2 t=$3 l files=() objs=()
    local san=${FUZZ_SANITIZERS-address,undefined}
    shift 3
    local cflags=(-std=c99 -g -O1 -fsanitize=fuzzer${san:+,$san}
        ${san:+-fno-sanitize-recover=all} "$@" -I"$src/hw/char"
        -I"$src/tests/fuzz")
    : >"$out/build-$t.log"
    for l in ${FUZZ_LIBS[$t]}; do
        if [ "${l#+}" != "$l" ]; then
            l=${l#+}
            clang "${cflags[@]}" -fno-sanitize-coverage=trace-cmp -c \
                "$src/hw/char/rslib-$l.c" -o "$out/$t-$l.o" \
                >>"$out/build-$t.log" 2>&1 || return 1
            objs+=("$out/$t-$l.o")
        else
            files+=("$src/hw/char/rslib-$l.c")
        fi
    done
    clang "${cflags[@]}" "$src/tests/fuzz/fuzz-$t.c" "${files[@]}" \
        "${objs[@]}" -o "$out/fuzz-$t" >>"$out/build-$t.log" 2>&1
}

# fuzz_seeds SRC DIR TARGET: the generated seed corpus, afresh.
fuzz_seeds() {
    rm -rf "$2"
    python3 "$1/tests/fuzz/gen-seeds.py" "$3" "$2"
}

# fuzz_figures LOG: "N execs, X exec/s, cov C ft F" from a libFuzzer log
# run with -print_final_stats=1 (cov and ft of its last status line).
fuzz_figures() {
    local log=$1 execs rate cov ft
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n1)
    cov=$(grep -oE ' cov: [0-9]+' "$log" | tail -n1 | grep -oE '[0-9]+')
    ft=$(grep -oE ' ft: [0-9]+' "$log" | tail -n1 | grep -oE '[0-9]+')
    echo "${execs:-?} execs, ${rate:-?} exec/s, cov ${cov:-?} ft ${ft:-?}"
}

# fuzz_finding LOG: the start of the report of what libFuzzer found.
fuzz_finding() {
    grep -A30 -E 'ERROR|==[0-9]+==|runtime error' "$1" | head -60
}
