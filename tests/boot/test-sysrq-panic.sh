#!/usr/bin/env bash
# Boot test (TAP): the project's kernel panics through sysrq under the QEMU
# fork; the panic must reach the console through ringside-serial, and the
# device's event stream (with tx-events) must agree byte for byte with what
# the console got.
set -uo pipefail
ringside=${RINGSIDE_BIN:?RINGSIDE_BIN must name the ringside binary}
out=$(mktemp -d /tmp/ringside-boot-XXXXXX)
trap 'rm -rf "$out"' EXIT

n=0 failed=0
check() {   # check DESCRIPTION COMMAND...
    local what=$1
    shift
    n=$((n + 1))
    if "$@"; then
        echo "ok $n - $what"
    else
        echo "not ok $n - $what"
        failed=$((failed + 1))
    fi
}

echo "1..6"
"$ringside" run --case sysrq-panic --smp 2 --tx-events --out "$out/run" \
    >"$out/stdout" 2>"$out/stderr"
rc=$?
sed 's/^/# /' "$out/stderr"
tail -n 3 "$out/stdout" | sed 's/^/# /'

check "ringside run exits 0" test "$rc" -eq 0
check "summary says the guest panicked" \
    grep -Eq '^ringside: case=sysrq-panic ended=panic bytes=[1-9]' "$out/stdout"
check "panic line on the wire, stamped with virtual time and vCPU" \
    grep -Eq '^ *[0-9]+\.[0-9]{6} cpu[0-9]+ *[ +]\| \[ *[0-9]+\.[0-9]{6}\](\[ *[TC][0-9]+\])? .*Kernel panic - not syncing: sysrq triggered crash' \
    "$out/stdout"
check "/init announced its case in the kernel log" \
    grep -Eq '\| \[ *[0-9]+\.[0-9]{6}\](\[ *[TC][0-9]+\])? .*ringside-init: case sysrq-panic' \
    "$out/stdout"

# Independent of the collector: decode the event stream here and compare it
# with the console chardev's file, which QEMU's UART code wrote.
verify() {
    python3 - "$out/run/events.jsonl" "$out/run/console.log" <<'PY'
import json, sys
wire, vts, cpus, idx, paced, wired, tx = bytearray(), [], set(), [], False, [], {}
with open(sys.argv[1]) as f:
    for line in f:
        e = json.loads(line)
        assert e["v"] == 3, e
        if e["ev"] == "start":
            paced = e.get("pace") == "line"
        elif e["ev"] == "tx":
            idx.append(e["i"])
            vts.append(e["vt"])
            cpus.add(e["cpu"])
            tx[e["i"]] = e
            if not paced and not e.get("loop"):
                wire.append(e["b"])
        elif e["ev"] == "wire":
            wired.append(e["wt"])
            if not e.get("refused"):
                wire.append(tx[e["i"]]["b"])
console = open(sys.argv[2], "rb").read()
problems = []
if bytes(wire) != console:
    problems.append("events (%d bytes) != console.log (%d bytes)" % (len(wire), len(console)))
if idx != list(range(len(idx))):
    problems.append("byte indexes are not 0..n-1")
for name, ts in (("write", vts), ("wire", wired)):
    if any(b < a for a, b in zip(ts, ts[1:])):
        problems.append(name + " times go backwards")
if paced and len(wired) < 1000:
    problems.append("paced, but only %d wire events" % len(wired))
if -1 in cpus:
    problems.append("a byte not written by a vCPU")
for p in problems:
    print("# " + p)
sys.exit(1 if problems else 0)
PY
}
check "event stream == console bytes, indexes dense, times monotonic (paced)" verify
check "console bytes present" test -s "$out/run/console.log"
[ "$failed" -eq 0 ] || { sed 's/^/# stdout: /' "$out/stdout" | tail -n 40; }
exit $((failed > 0))
