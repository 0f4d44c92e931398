#!/usr/bin/env bash
# Build QEMU's device fuzzer (qemu-fuzz-x86_64, with the generic-fuzz
# target) from the same ringside fork source tree build-qemu.sh prepares,
# with clang, libFuzzer, ASan and UBSan, into its own build directory
# $RINGSIDE_CACHE/qemu/build-fuzz.  Like build-qemu.sh it is incremental
# (a second run recompiles only what changed) and uses ccache.
#
# Not part of CI: scripts/fuzz-qemu.sh runs the result against
# ringside-serial.  The source tree is shared with build-qemu.sh, so do not
# run both at once.
#
# Output: $RINGSIDE_CACHE/qemu/build-fuzz/qemu-fuzz-x86_64
set -euo pipefail
. "$(dirname "$0")/lib.sh"

QDIR=$RINGSIDE_CACHE/qemu
BUILD=$QDIR/build-fuzz
[ $# -eq 0 ] || die "usage: build-qemu-fuzz.sh"
command -v clang >/dev/null && command -v clang++ >/dev/null ||
    die "clang not installed (scripts/install-deps.sh test)"

# fetch, unpack and graft exactly as the main build does
prep=$("$RINGSIDE_ROOT/scripts/build-qemu.sh" --prepare)
sed '$d' <<<"$prep"             # its stage times
SRC=$(tail -n1 <<<"$prep")
[ -f "$SRC/configure" ] || die "build-qemu.sh --prepare gave no source tree"

# --enable-fuzzing instruments hw/ for libFuzzer (coverage is limited to
# device code by QEMU's scripts/oss-fuzz/instrumentation-filter-template);
# ASan and UBSan turn a silent out-of-bounds access into a finding.
cc=clang cxx=clang++
if command -v ccache >/dev/null; then
    cc="ccache clang" cxx="ccache clang++"
fi
CONFIGURE_ARGS=(--target-list=x86_64-softmmu --disable-docs --disable-user
    --disable-tools --disable-werror --without-default-features
    --enable-tcg --disable-install-blobs
    --enable-fuzzing --enable-sanitizers "--cc=$cc" "--cxx=$cxx")

stage_begin configure
cfg_stamp=$(printf '%s\n' "$(cat "$SRC/.ringside-stamp")" \
    "${CONFIGURE_ARGS[@]}" | sha256sum | cut -c1-16)
if [ "$(cat "$BUILD/.ringside-configured" 2>/dev/null)" != "$cfg_stamp" ]; then
    rm -rf "$BUILD"
    mkdir -p "$BUILD"
    (cd "$BUILD" && "$SRC/configure" "${CONFIGURE_ARGS[@]}" >configure.log 2>&1) ||
        die "QEMU configure failed, see $BUILD/configure.log"
    echo "$cfg_stamp" >"$BUILD/.ringside-configured"
    stage_end
else
    stage_end cached
fi

stage_begin compile
ninja -C "$BUILD" qemu-fuzz-x86_64 >"$BUILD/ninja.log" 2>&1 || {
    grep -E 'error:|FAILED' "$BUILD/ninja.log" | head -20 >&2
    die "QEMU fuzz build failed, see $BUILD/ninja.log"
}
stage_end "$(grep -c '^\[' "$BUILD/ninja.log" || true) steps"

stage_summary
echo "$BUILD/qemu-fuzz-x86_64"
