#!/usr/bin/env bash
# Run QEMU's own device fuzzer (generic-fuzz, built by build-qemu-fuzz.sh)
# against ringside-serial: a pc (or q35) machine with 512 MiB of RAM and the
# device on its I/O ports (the UART at 0x3f8 and the level 1 window at
# 0x4f0), ring=auto so that it scans guest RAM for the note and reads the
# ring it names, pace=line so that its transmitter runs on timers.
# generic-fuzz writes the device's ports, steps the virtual clock, and
# fills every guest-RAM read the device makes with fuzzer-chosen patterns
# (its DMA patterns), so the note, the page tables and the ring the device
# reads are the fuzzer's.  It starts from generated seeds
# (tests/fuzz/gen-seeds.py qemu): console bytes, the scratch-register
# knock, and a ring announced through the level 1 window with a
# VMCOREINFO note as the DMA pattern.  Not part of CI.
#
# Prints the matched memory regions, then execs, exec/s and coverage
# (libFuzzer's cov: edges and ft: features, over QEMU's instrumented hw/
# code) and whether anything was found.  The corpus grows across runs in
# $RINGSIDE_CACHE/fuzz/qemu-<machine>/; a finding's reproducer is written
# there as crash-*.
#
# Usage: fuzz-qemu.sh [-m pc|q35] [-t SECONDS] [-j JOBS]   (default pc, 600, 1)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$RINGSIDE_ROOT/tests/fuzz/fuzz-lib.sh"

machine=pc secs=600 jobs=1
while getopts "m:t:j:" o; do
    case $o in
    m) machine=$OPTARG ;;
    t) secs=$OPTARG ;;
    j) jobs=$OPTARG ;;
    *) die "usage: fuzz-qemu.sh [-m pc|q35] [-t SECONDS] [-j JOBS]" ;;
    esac
done
case $machine in pc | q35) ;; *) die "machine $machine: pc or q35" ;; esac
bin=$RINGSIDE_CACHE/qemu/build-fuzz/qemu-fuzz-x86_64
[ -x "$bin" ] || die "no $bin: run scripts/build-qemu-fuzz.sh first"

work=$RINGSIDE_CACHE/fuzz/qemu-$machine
mkdir -p "$work/corpus"
fuzz_seeds "$RINGSIDE_ROOT" "$work/seeds" qemu
# generic-fuzz adds -machine accel=qtest and -m 512M itself
export QEMU_FUZZ_ARGS="-machine $machine -nodefaults -L /usr/share/seabios \
-L /usr/share/qemu -chardev null,id=con -chardev null,id=ev \
-device ringside-serial,chardev=con,events=ev,ring=auto,pace=line"
export QEMU_FUZZ_OBJECTS='ringside*'
echo "QEMU_FUZZ_ARGS=$QEMU_FUZZ_ARGS"
echo "QEMU_FUZZ_OBJECTS=$QEMU_FUZZ_OBJECTS"

cd "$work"
"$bin" --fuzz-target=generic-fuzz -runs=0 2>&1 | sed -n 's/^  \* /matched: /p'
log=$work/fuzz.log
t0=$(date +%s)
set +e
if [ "$jobs" -gt 1 ]; then
    # libFuzzer's workers, each with its own log; the corpus is shared
    nice -n 10 "$bin" --fuzz-target=generic-fuzz -max_total_time="$secs" \
        -print_final_stats=1 -artifact_prefix="$work/" -jobs="$jobs" \
        -workers="$jobs" corpus seeds >"$log" 2>&1
else
    nice -n 10 "$bin" --fuzz-target=generic-fuzz -max_total_time="$secs" \
        -print_final_stats=1 -artifact_prefix="$work/" corpus seeds \
        >"$log" 2>&1
fi
rc=$?
set -e
echo "generic-fuzz ($machine): $(fuzz_figures "$log") in $(($(date +%s) - t0)) s," \
    "corpus $(find corpus -type f | wc -l)"
if compgen -G "$work/crash-*" >/dev/null || [ "$rc" -ne 0 ]; then
    echo "FINDING (exit $rc):"
    fuzz_finding "$log" | sed 's/^/    /'
    ls "$work"/crash-* 2>/dev/null
    exit 1
fi
echo "no finding"
