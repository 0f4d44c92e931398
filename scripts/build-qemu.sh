#!/usr/bin/env bash
# Build ringside's QEMU fork: Debian bookworm's QEMU 7.2 source package with
# Debian's patches, plus ringside's hw/char/ and tests/qtest/ files and the
# wiring patch in qemu-fork/.  Everything lives in $RINGSIDE_CACHE/qemu; a
# second run recompiles only what changed.
#
# Output: $RINGSIDE_CACHE/qemu/build/qemu-system-x86_64 and the project's
# qtests in $RINGSIDE_CACHE/qemu/build/tests/qtest/.
#
# --sanitize builds the same tree with ASan and UBSan into
# $RINGSIDE_CACHE/qemu/build-sanitize instead (for the qtests: the device
# reads guest-controlled memory).
#
# --prepare only fetches, unpacks and grafts the source tree, and prints
# its path (for builds with their own configuration, build-qemu-fuzz.sh).
# --configure-args prints the configure arguments, one per line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

QDIR=$RINGSIDE_CACHE/qemu
DL=$QDIR/dl
SRC=$QDIR/src
BUILD=$QDIR/build
SANITIZE=0 PREPARE=0 PRINT_ARGS=0
case "${1:-}" in
--sanitize) SANITIZE=1; BUILD=$QDIR/build-sanitize ;;
--prepare) PREPARE=1 ;;
--configure-args) PRINT_ARGS=1 ;;
"") ;;
*) die "usage: build-qemu.sh [--sanitize|--prepare|--configure-args]" ;;
esac
WIRING=$RINGSIDE_ROOT/qemu-fork/wiring.patch
QTESTS=(ringside-serial-test ringside-verify-test ringside-ext-test
    ringside-migrate-test)
FIRMWARE_DIRS=(/usr/share/seabios /usr/share/qemu /usr/lib/ipxe/qemu)
# QEMU's default devices and the features other tools' command lines use
# (user networking, 9p, vhost, seccomp for libvirt's -sandbox): the fork is
# also a drop-in for them (ringside qemu).
CONFIGURE_ARGS=(--target-list=x86_64-softmmu --disable-docs --disable-user
    --disable-tools --disable-werror --without-default-features
    --enable-tcg --enable-kvm --disable-install-blobs
    --enable-slirp --enable-virtfs --enable-attr --enable-cap-ng
    --enable-vhost-user --enable-vhost-kernel --enable-vhost-net
    --enable-seccomp --enable-linux-aio
    "--firmwarepath=$(IFS=:; echo "${FIRMWARE_DIRS[*]}")")
# QEMU's configure names the compiler itself, so meson does not add ccache
# on its own; ask for it, or a fresh unpack would recompile everything.
if command -v ccache >/dev/null; then
    CONFIGURE_ARGS+=("--cc=ccache cc" "--cxx=ccache c++")
fi
if [ "$SANITIZE" = 1 ]; then
    CONFIGURE_ARGS+=(--enable-sanitizers)
fi
if [ "$PRINT_ARGS" = 1 ]; then
    printf '%s\n' "${CONFIGURE_ARGS[@]}"
    exit 0
fi

# apt-get source needs deb-src lines; derive them from the deb lines the
# machine already uses, so the same archive (or snapshot) serves both.
ensure_deb_src() {
    if apt-get indextargets --format '$(CREATED_BY)' 2>/dev/null |
        grep -qx 'Sources'; then
        return
    fi
    [ "$(id -u)" -eq 0 ] || die "no deb-src entries and not root to add them"
    local out=/etc/apt/sources.list.d/ringside-deb-src.sources
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sed 's/^Types:.*$/Types: deb-src/' \
            /etc/apt/sources.list.d/debian.sources >"$out"
    elif [ -f /etc/apt/sources.list ]; then
        grep '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' \
            >/etc/apt/sources.list.d/ringside-deb-src.list
    else
        die "cannot find Debian's apt sources to derive deb-src entries from"
    fi
    apt-get update -qq
}

stage_begin fetch
if ! compgen -G "$DL/qemu_*.dsc" >/dev/null; then
    ensure_deb_src
    mkdir -p "$DL.tmp"
    (cd "$DL.tmp" && apt-get source --download-only -qq qemu) ||
        die "apt-get source qemu failed"
    rm -rf "$DL" && mv "$DL.tmp" "$DL"
    stage_end
else
    stage_end cached
fi
DSC=$(compgen -G "$DL/qemu_*.dsc" | head -n1)

# The tree is disposable: a new source package or wiring patch unpacks it
# afresh.  The build directory survives; ccache makes that rebuild cheap.
stage_begin unpack
stamp=$(content_hash "$DSC" "$WIRING")
if [ "$(cat "$SRC/.ringside-stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$SRC" "$SRC.tmp"
    dpkg-source --no-check -x "$DSC" "$SRC.tmp" >/dev/null ||
        die "dpkg-source could not unpack $DSC"
    patch -s -d "$SRC.tmp" -p1 <"$WIRING" ||
        die "qemu-fork/wiring.patch does not apply to $(basename "$DSC")"
    cp "$SRC.tmp/hw/char/trace-events" "$SRC.tmp/hw/char/trace-events.qemu"
    echo "$stamp" >"$SRC.tmp/.ringside-stamp"
    mv "$SRC.tmp" "$SRC"
    stage_end
else
    stage_end cached
fi

stage_begin graft
changed=0
grafted=()
for f in "$RINGSIDE_ROOT"/hw/char/*.[ch] "$RINGSIDE_ROOT"/tests/qtest/*.[ch]; do
    rel=${f#"$RINGSIDE_ROOT"/}
    grafted+=("$rel")
    install_if_changed "$f" "$SRC/$rel" && changed=$((changed + 1))
done
# A file grafted before and since renamed or removed here leaves the tree
# too: a stale copy would go on being included or linked.
if [ -f "$SRC/.ringside-grafted" ]; then
    while read -r rel; do
        if [ ! -e "$RINGSIDE_ROOT/$rel" ] && [ -e "$SRC/$rel" ]; then
            rm -f "$SRC/$rel"
            changed=$((changed + 1))
        fi
    done <"$SRC/.ringside-grafted"
fi
printf '%s\n' "${grafted[@]}" >"$SRC/.ringside-grafted"
cat "$SRC/hw/char/trace-events.qemu" "$RINGSIDE_ROOT/hw/char/trace-events" \
    >"$QDIR/trace-events.new"
install_if_changed "$QDIR/trace-events.new" "$SRC/hw/char/trace-events" &&
    changed=$((changed + 1))
stage_end "$changed changed"
if [ "$PREPARE" = 1 ]; then
    stage_summary
    echo "$SRC"
    exit 0
fi

stage_begin configure
cfg_stamp=$(printf '%s\n' "$stamp" "${CONFIGURE_ARGS[@]}" |
    sha256sum | cut -c1-16)
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
targets=(qemu-system-x86_64)
for t in "${QTESTS[@]}"; do
    targets+=("tests/qtest/$t")
done
: >"$BUILD/ninja.log"
ninja -C "$BUILD" "${targets[@]}" 2>&1 |
    show_progress "${0##*/}: compile" 0 "$BUILD/ninja.log" || {
    grep -E 'error:|FAILED' "$BUILD/ninja.log" | head -20 >&2
    die "QEMU build failed, see $BUILD/ninja.log"
}
stage_end "$(grep -c '^\[' "$BUILD/ninja.log" || true) steps"

# A binary run from the build tree looks for its data files under
# qemu-bundle/<path>; point those paths at Debian's firmware packages.
for d in "${FIRMWARE_DIRS[@]}"; do
    [ -d "$d" ] || die "firmware directory $d is missing (install-deps.sh)"
    mkdir -p "$BUILD/qemu-bundle$(dirname "$d")"
    ln -sfn "$d" "$BUILD/qemu-bundle$d"
done

stage_summary
echo "$BUILD/qemu-system-x86_64"
