#!/usr/bin/env bash
# Build (or reuse from the cache) everything a run needs: the collector in
# build/, the QEMU fork, the guest kernel and its initramfs.  Prints how
# long each stage took.  Usage: build-all.sh [build|test]
# With "test" and RINGSIDE_SANITIZE=1, also the ASan/UBSan QEMU build.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$RINGSIDE_ROOT"

stage_begin deps
"$RINGSIDE_ROOT/scripts/install-deps.sh" "${1:-build}"
stage_end

stage_begin collector
if [ ! -f build/build.ninja ]; then
    meson setup build >build-setup.log 2>&1 || {
        cat build-setup.log >&2
        die "meson setup failed"
    }
    rm -f build-setup.log
fi
ninja -C build >/dev/null || die "building the collector failed"
stage_end

# The same scripts as meson's run targets (ninja -C build qemu-fork ...),
# called directly: ninja would hold back their progress until they end.
for t in qemu-fork:build-qemu guest-kernel:build-kernel \
    guest-initramfs:build-initramfs; do
    stage_begin "${t%%:*}"
    log=build/${t%%:*}.log
    "$RINGSIDE_ROOT/scripts/${t#*:}.sh" >"$log" || die "${t%%:*} failed"
    cat "$log"
    stage_end
done
if [ "${1:-build}" = test ]; then
    # The 6.12 series' kernel (boot-panic-paths-6.12); main.sh boots 6.1.
    stage_begin guest-kernel-6.12
    "$RINGSIDE_ROOT/scripts/build-kernel.sh" --kernel-version 6.12 >/dev/null
    stage_end
    stage_begin stock-kernel
    "$RINGSIDE_ROOT/scripts/fetch-stock-kernel.sh" --dbg >/dev/null
    stage_end
    # The kernel matrix's five other flavours (boot-matrix): about 420 MB
    # of packages, of which the vmlinuz files kept are 66 MB.
    stage_begin stock-matrix
    "$RINGSIDE_ROOT/scripts/fetch-stock-kernel.sh" --matrix >/dev/null
    stage_end
    # Debian bookworm's user space with systemd for boot-distro
    # (debootstrap: about 40 MiB of packages, the initramfs 39 MiB).
    stage_begin distro-initramfs
    log=build/distro-initramfs.log
    "$RINGSIDE_ROOT/scripts/build-distro-initramfs.sh" >"$log" ||
        die "distro-initramfs failed"
    head -n 1 "$log"
    stage_end
    # The fork on its second base, QEMU 10.0 (the qtest-10.0 suite).
    stage_begin qemu-10.0
    "$RINGSIDE_ROOT/scripts/build-qemu.sh" --base 10.0 >/dev/null
    stage_end
    # The qtests' ASan/UBSan builds: CI sets RINGSIDE_SANITIZE=1; elsewhere
    # those tests skip unless they have been built.
    if [ "${RINGSIDE_SANITIZE:-0}" = 1 ]; then
        stage_begin qemu-sanitize
        "$RINGSIDE_ROOT/scripts/build-qemu.sh" --sanitize >/dev/null
        stage_end
        stage_begin qemu-10.0-sanitize
        "$RINGSIDE_ROOT/scripts/build-qemu.sh" --base 10.0 --sanitize \
            >/dev/null
        stage_end
    fi
fi
stage_summary
