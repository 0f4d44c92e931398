#!/usr/bin/env bash
# Build ringside's QEMU fork: a Debian QEMU source package with Debian's
# patches, plus ringside's hw/char/ and tests/qtest/ files and the wiring
# patch for that base in qemu-fork/BASE/.  Two bases, side by side:
#   7.2   bookworm's QEMU (the default), in $RINGSIDE_CACHE/qemu
#   10.0  trixie's QEMU 10.0 source, built on bookworm with meson from
#         bookworm-backports, in $RINGSIDE_CACHE/qemu-10.0
# --base 10.0 or $RINGSIDE_QEMU_BASE=10.0 picks the second.  A second run
# recompiles only what changed.
#
# Output: $QDIR/build/qemu-system-x86_64 and the project's qtests in
# $QDIR/build/tests/qtest/.
#
# --sanitize builds the same tree with ASan and UBSan into
# $QDIR/build-sanitize instead (for the qtests: the device reads
# guest-controlled memory).
#
# --prepare only fetches, unpacks and grafts the source tree, and prints
# its path (for builds with their own configuration, build-qemu-fuzz.sh).
# --configure-args prints the configure arguments, one per line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

BASE=${RINGSIDE_QEMU_BASE:-7.2}
SANITIZE=0 PREPARE=0 PRINT_ARGS=0
while [ $# -gt 0 ]; do
    case "$1" in
    --sanitize) SANITIZE=1 ;;
    --prepare) PREPARE=1 ;;
    --configure-args) PRINT_ARGS=1 ;;
    --base)
        [ $# -ge 2 ] || die "--base needs 7.2 or 10.0"
        BASE=$2
        shift ;;
    *) die "usage: build-qemu.sh [--base 7.2|10.0] [--sanitize|--prepare|--configure-args]" ;;
    esac
    shift
done
case "$BASE" in
7.2) QDIR=$RINGSIDE_CACHE/qemu ;;
10.0) QDIR=$RINGSIDE_CACHE/qemu-10.0 ;;
*) die "unknown QEMU base $BASE: 7.2 or 10.0" ;;
esac
DL=$QDIR/dl
SRC=$QDIR/src
BUILD=$QDIR/build
[ "$SANITIZE" = 1 ] && BUILD=$QDIR/build-sanitize
WIRING=$RINGSIDE_ROOT/qemu-fork/$BASE/wiring.patch
# The qtests: one list, which the wiring and tests/meson.build read too.
mapfile -t QTESTS <"$RINGSIDE_ROOT/tests/qtest/ringside-qtests"
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
if [ "$SANITIZE" = 1 ] && [ "$BASE" = 7.2 ]; then
    CONFIGURE_ARGS+=(--enable-sanitizers)
elif [ "$SANITIZE" = 1 ]; then
    # 9.2 split --enable-sanitizers into one option per sanitizer.
    CONFIGURE_ARGS+=(--enable-asan --enable-ubsan)
fi
# QEMU 10.0 wants meson 1.5 or later, from bookworm-backports (fetched
# below), run by Debian's python3 rather than whatever python3 is first on
# PATH.
MESON_DIR=$QDIR/meson
if [ "$BASE" = 10.0 ]; then
    CONFIGURE_ARGS+=(--python=/usr/bin/python3)
    export PYTHONPATH=$MESON_DIR/usr/lib/python3/dist-packages${PYTHONPATH:+:$PYTHONPATH}
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

# apt with a private list of sources and its own lists and cache, so that
# trixie's sources and bookworm-backports' meson never reach the machine's
# apt: apt-get source qemu there still means bookworm's 7.2.
private_apt() {
    local dir=$QDIR/apt
    APT=(-o "Dir::Etc::SourceList=$dir/sources.list"
        -o "Dir::Etc::SourceParts=$dir/parts" -o "Dir::State::Lists=$dir/lists"
        -o "Dir::Cache=$dir/cache" -o "APT::Sandbox::User=root")
    [ -f "$dir/lists/.updated" ] && return
    local mirror
    mirror=$(debian_mirror)
    [ -n "$mirror" ] || die "cannot find the machine's Debian archive URI"
    mkdir -p "$dir/parts" "$dir/lists/partial" "$dir/cache/archives/partial"
    printf '%s\n' "deb-src $mirror trixie main" \
        "deb $mirror bookworm-backports main" >"$dir/sources.list"
    apt-get "${APT[@]}" update -qq || die "apt-get update (trixie sources) failed"
    touch "$dir/lists/.updated"
}

stage_begin fetch
if ! compgen -G "$DL/qemu_*.dsc" >/dev/null; then
    mkdir -p "$DL.tmp"
    if [ "$BASE" = 7.2 ]; then
        ensure_deb_src
        (cd "$DL.tmp" && apt-get source --download-only -qq qemu) ||
            die "apt-get source qemu failed"
    else
        # bookworm-backports' qemu 10.0.2 source answers 404 for its .dsc
        # on the archive (2026-12-07); trixie's 10.0 is the same series.
        private_apt
        (cd "$DL.tmp" && apt-get "${APT[@]}" source --download-only -qq \
            qemu/trixie) || die "apt-get source qemu/trixie failed"
    fi
    rm -rf "$DL" && mv "$DL.tmp" "$DL"
    stage_end
else
    stage_end cached
fi
if [ "$BASE" = 10.0 ] && [ ! -d "$MESON_DIR/usr" ]; then
    private_apt
    rm -rf "$MESON_DIR.tmp" && mkdir -p "$MESON_DIR.tmp"
    (cd "$MESON_DIR.tmp" && apt-get "${APT[@]}" download -qq \
        meson/bookworm-backports && dpkg-deb -x meson_*.deb .) ||
        die "meson from bookworm-backports could not be fetched"
    rm -rf "$MESON_DIR" && mv "$MESON_DIR.tmp" "$MESON_DIR"
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
        die "qemu-fork/$BASE/wiring.patch does not apply to $(basename "$DSC")"
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
for f in "$RINGSIDE_ROOT"/hw/char/*.[ch] "$RINGSIDE_ROOT"/tests/qtest/*.[ch] \
    "$RINGSIDE_ROOT"/tests/qtest/ringside-qtests; do
    rel=${f#"$RINGSIDE_ROOT"/}
    grafted+=("$rel")
    [ -z "$(install_changed "$f" "$SRC/$rel")" ] || changed=$((changed + 1))
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
[ -z "$(install_changed "$QDIR/trace-events.new" \
    "$SRC/hw/char/trace-events")" ] || changed=$((changed + 1))
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
