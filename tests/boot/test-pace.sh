#!/usr/bin/env bash
# Boot test (TAP): the project kernel boots to a clean poweroff with the
# transmitter paced at 115200 baud and unpaced; the console says the same
# thing both ways (time stamps aside), and the paced wire is never faster
# than the line.  Prints both boot times.  Then Debian's stock kernel boots
# paced on an idle host and with every host core kept busy: the same
# verdicts and no overrun either way, and its TSC calibrated early; run
# calls the busy boot, and one with more vCPUs than host cores, unfaithful.
set -uo pipefail
ringside=${RINGSIDE_BIN:?RINGSIDE_BIN must name the ringside binary}
out=$(mktemp -d /tmp/ringside-pace-XXXXXX)
# RINGSIDE_KEEP=1 keeps both runs' output for a look after a failure.
[ "${RINGSIDE_KEEP:-0}" = 1 ] || trap 'rm -rf "$out"' EXIT
n=0 failed=0
check() {
    local what=$1
    shift
    n=$((n + 1))
    if "$@"; then echo "ok $n - $what"; else echo "not ok $n - $what"; failed=$((failed + 1)); fi
}
echo "1..11"
for p in off line; do
    "$ringside" run --case poweroff --pace "$p" --out "$out/$p" >"$out/$p.txt" 2>"$out/$p.err"
    echo $? >"$out/$p.rc"
    tail -n 1 "$out/$p.txt" | sed 's/^/# /'
done
check "unpaced boot powers off" test "$(cat "$out/off.rc")" -eq 0
check "paced boot powers off" test "$(cat "$out/line.rc")" -eq 0
# The console must say the same thing paced and unpaced, time stamps aside,
# with two kinds of difference the guest itself causes: lines the kernel
# words by how long things took (TSC and delay-loop calibration, the local
# APIC timer and IO-APIC timer checks that a slow TCG host can fail; and the
# order of concurrent initcalls' lines, so lines compare as multisets), and bytes
# the paced transmitter lost because the driver wrote to a full FIFO (its
# LSR wait timed out), which the device counts as overruns.
same_text() {
    python3 - "$out/off.txt" "$out/line.txt" <<'PY'
import re, sys
from collections import Counter
# Searched anywhere in a line: an overrun can eat its stamp and newline
# and join it to its neighbour.
TIMING = re.compile(r"(tsc: |Calibrating delay|calibrate_delay|smpboot: Total of|APIC timer disabled|Clockevents: could not switch|lapic is not functional|Could not switch to high resolution|Probably due to long platform interrupts|hrtimer: interrupt took"
    # check_timer()'s fallbacks, taken when the timer seemed not to tick
    r"|TIMER: vector|MP-BIOS bug|8254 timer not connected|trying to set up|8259A"
    r"|\(found apic|\.{5,} ?(works|failed))")
def text(path):
    lines = []
    for l in open(path, errors="replace").read().split("\n"):
        m = re.match(r"^ *[0-9.]+ cpu[0-9]+ *[ +]\| (.*)$", l)
        if not m:
            continue
        # A lost newline joins two records: split at each stamp.
        for part in re.split(r"(?=\[ *[0-9]+\.[0-9]{6}\])", m.group(1)):
            t = re.sub(r"^\[ *[0-9]+\.[0-9]{6}\](\[ *[TC][0-9]+\])? ?", "",
                       part)
            if part:
                lines.append(t)
    return lines
def overruns(path):
    m = re.search(r" overrun=([0-9]+)", open(path).read())
    return int(m.group(1)) if m else 0
def key(s):
    # Compared without the characters of a time stamp, whose remains an
    # overrun can leave anywhere in a line.
    return re.sub(r"[][ .0-9TC]", "", s)
off, line = text(sys.argv[1]), text(sys.argv[2])
# Identical lines cancel as multisets: concurrent initcalls print in an
# order that timing decides.
same = Counter(off) & Counter(line)
def rest(lines):
    left, out = Counter(same), []
    for l in lines:
        if left[l]:
            left[l] -= 1
        else:
            out.append(l)
    return out
only_off, only_line = rest(off), rest(line)
# What is left of the paced console must be what is left of the unpaced one
# with characters removed, no more than the overruns the device counted.
# Compared as multisets of characters: a damaged line loses its stamp and
# newline and joins its neighbour, and lines of concurrent initcalls come
# in either order, so the damaged lines do not pair up one to one.  Lines
# worded by timing may be in either run alone.
a = "".join(key(l) for l in only_off)
b = "".join(key(l) for l in only_line if not TIMING.search(l))
timing = sum(len(key(l)) for l in only_off if TIMING.search(l))
extra = Counter(b) - Counter(a)
lost = max(0, len(a) - len(b) - timing)
budget = overruns(sys.argv[2])
print("# %d lines compared, %d differ; %d characters missing from the paced "
      "console, %d overruns counted by the device" %
      (len(off), len(only_off) + len(only_line), lost, budget))
if extra:
    print("# characters only the paced console has: %r" % "".join(extra.elements()))
if extra or lost > budget:
    for l in [l for l in only_off if not TIMING.search(l)][:10]:
        print("# only unpaced: %r" % l)
    for l in [l for l in only_line if not TIMING.search(l)][:10]:
        print("# only paced: %r" % l)
sys.exit(0 if not extra and lost <= budget and len(off) > 100 else 1)
PY
}
check "same console text paced and unpaced (but for timing words and counted overruns)" same_text
# 10 bits a character at 115200 baud: the paced run's guest time must cover it.
line_rate() {
    python3 - "$out/line.txt" "$out/off.txt" <<'PY'
import re, sys
def summary(path):
    last = open(path).read().strip().split("\n")[-1]
    return {k: v for k, v in re.findall(r"(\S+)=(\S+)", last)}
paced, unpaced = summary(sys.argv[1]), summary(sys.argv[2])
wire_s = int(paced["bytes"]) * 10 / 115200
g_paced = float(paced["guest-time"].rstrip("s"))
g_unpaced = float(unpaced["guest-time"].rstrip("s"))
print("# boot to poweroff: unpaced %.3f s, paced %.3f s guest time; the line "
      "needs %.3f s for %s bytes" % (g_unpaced, g_paced, wire_s, paced["bytes"]))
sys.exit(0 if g_paced >= wire_s and g_unpaced < g_paced else 1)
PY
}
check "paced guest time covers bytes x 10 / 115200 s" line_rate
# A run's timing is not real hardware's with more vCPUs than host cores.
fi_smp=$(( $(nproc) + 1 ))
"$ringside" run -q --case poweroff --pace off --smp "$fi_smp" --out "$out/smp" \
    >"$out/smp.txt" 2>"$out/smp.err"
sed 's/^/# /' "$out/smp.txt"
check "more vCPUs than host cores: not faithful" \
    grep -q " faithful=no([^ ]*smp:$fi_smp>cores:$(nproc)" "$out/smp.txt"

# Debian's stock kernel, paced, idle host and host cores kept busy.
stock=${RINGSIDE_CACHE:-$HOME/.cache/ringside}/stock/vmlinuz
if [ ! -f "$stock" ]; then
    for i in 6 7 8 9 10 11; do echo "ok $i # SKIP no stock kernel (scripts/fetch-stock-kernel.sh)"; done
    exit $((failed > 0))
fi
busy=()
for load in idle busy; do
    if [ $load = busy ]; then
        for _ in $(seq "$(nproc)"); do
            sh -c 'while :; do :; done' &
            busy+=($!)
        done
    fi
    "$ringside" run -q --kernel "$stock" --case poweroff --pace line \
        --out "$out/stock-$load" >"$out/stock-$load.txt" 2>"$out/stock-$load.err"
    echo $? >"$out/stock-$load.rc"
    sed 's/^/# /' "$out/stock-$load.txt"
done
for p in "${busy[@]}"; do kill "$p"; done
wait "${busy[@]}" 2>/dev/null
field() { grep -o " $2=[^ ]*" "$out/stock-$1.txt" | cut -d= -f2; }
check "stock kernel: paced boots power off, idle and busy" \
    test "$(cat "$out/stock-idle.rc")" -eq 0 -a "$(cat "$out/stock-busy.rc")" -eq 0
check "stock kernel: verdict clean on an idle host" test "$(field idle verdict)" = clean
check "stock kernel: same verdict with the host's cores busy" \
    test "$(field busy verdict)" = "$(field idle verdict)"
no_overrun() {
    local n
    n=$(grep -c '"ev":"overrun"' "$out/stock-idle/events.jsonl" "$out/stock-busy/events.jsonl" |
        awk -F: '{ s += $2 } END { print s }')
    echo "# overruns: $n (idle and busy)"
    [ "$n" -eq 0 ]
}
check "stock kernel: no overrun, idle or busy" no_overrun
# tsc_early_khz= made the kernel calibrate in setup_arch, to the rate given.
early_tsc() {
    local khz mhz
    khz=$(grep -ao 'tsc_early_khz=[0-9]*' "$out/stock-busy/console.log" | head -1 | cut -d= -f2)
    [ -n "$khz" ] || { echo "# no tsc_early_khz= on the command line"; return 1; }
    mhz=$(printf '%d.%03d' $((khz / 1000)) $((khz % 1000)))
    grep -aq "tsc: Detected $mhz MHz" "$out/stock-busy/console.log" ||
        { echo "# the kernel did not take tsc_early_khz=$khz"; return 1; }
    ! grep -aq "Unable to calibrate against PIT" "$out/stock-busy/console.log"
}
check "stock kernel: TSC calibrated early from tsc_early_khz=" early_tsc
# With every host core busy the vCPUs wait for one: run must say so.
check "busy host: run says the timing is not faithful (vCPUs waited)" \
    grep -q ' faithful=no([^ ]*vcpu-wait:[0-9]*%' "$out/stock-busy.txt"
exit $((failed > 0))
