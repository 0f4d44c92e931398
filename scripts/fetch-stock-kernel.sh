#!/usr/bin/env bash
# Fetch Debian bookworm's stock kernels into $RINGSIDE_CACHE/stock/, for
# tests that run ringside on unmodified distribution kernels.  Only the
# vmlinuz and its config are kept (as vmlinuz-ABI and config-ABI); the
# modules are not: the initramfs's /init is static and the 8250 console is
# built in.
#
#   fetch-stock-kernel.sh           the 6.1 kernel linux-image-amd64 depends
#                                   on; stock/vmlinuz points at it.  Prints
#                                   its path.
#   fetch-stock-kernel.sh --dbg     the same, and its debug vmlinux
#                                   (stock/vmlinux-dbg), which crash needs
#                                   to read a dump: the reference the tests
#                                   compare ringside dmesg with.
#   fetch-stock-kernel.sh --rt      Debian's PREEMPT_RT 6.1 kernel instead
#                                   (linux-image-rt-amd64's); prints its path.
#   fetch-stock-kernel.sh --flavour NAME
#                                   one kernel of the matrix (below); prints
#                                   its path.
#   fetch-stock-kernel.sh --matrix  every flavour of the matrix; prints
#                                   "NAME PATH" for each.
#
# The matrix is every amd64 flavour bookworm has, each as its meta package
# names it: 6.1, 6.1-cloud, 6.1-rt (linux-image-{,cloud-,rt-}amd64) and
# 6.12, 6.12-cloud, 6.12-rt (linux-image-6.12-{,cloud-,rt-}amd64, from
# bookworm's security and backports updates).  stock/matrix/NAME points at
# each flavour's vmlinuz, so tests find them without asking apt.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$RINGSIDE_CACHE/stock
flavours=(6.1 6.1-cloud 6.1-rt 6.12 6.12-cloud 6.12-rt)

# The meta package of a flavour: 6.1-cloud -> linux-image-cloud-amd64.
meta_of() {
    local series=${1%%-*} variant=
    [ "$1" = "$series" ] || variant=${1#*-}-
    case $series in
    6.1) echo "linux-image-${variant}amd64" ;;
    6.12) echo "linux-image-6.12-${variant}amd64" ;;
    *) die "unknown flavour $1 (known: ${flavours[*]})" ;;
    esac
}

# The versioned packages meta packages depend on, one "META PACKAGE" line
# each, e.g. "linux-image-cloud-amd64 linux-image-6.1.0-57-cloud-amd64" or
# "linux-image-6.12-rt-amd64 linux-image-6.12.118+deb12-rt-amd64".  One
# apt-cache call for all: each costs most of a second.
depends() {
    apt-cache depends "$@" 2>/dev/null | awk '
        /^[^ ]/ { meta = $1 }
        /^ *Depends: linux-image-6\.[0-9][^ ]*-amd64$/ && !done[meta]++ {
            print meta, $2
        }'
}
# resolve META...: fill pkg_of[META], updating apt's lists once if needed.
declare -A pkg_of=()
resolve() {
    local meta pkg
    while read -r meta pkg; do
        pkg_of[$meta]=$pkg
    done < <(depends "$@")
    for meta in "$@"; do
        if [ -z "${pkg_of[$meta]:-}" ]; then
            apt-get update -qq
            while read -r meta pkg; do
                pkg_of[$meta]=$pkg
            done < <(depends "$@")
            break
        fi
    done
    for meta in "$@"; do
        [ -n "${pkg_of[$meta]:-}" ] || die "cannot tell which kernel $meta depends on"
    done
}

# The console and /init need these built in; Debian's cloud flavour drops
# many drivers, so check rather than assume.
needed=(CONFIG_SERIAL_8250 CONFIG_SERIAL_8250_CONSOLE CONFIG_DEVTMPFS
        CONFIG_BLK_DEV_INITRD CONFIG_RD_GZIP CONFIG_PRINTK CONFIG_MAGIC_SYSRQ)
check_config() {
    local c
    for c in "${needed[@]}"; do
        grep -qx "$c=y" "$1" || die "${1##*/} lacks $c=y: /init cannot run on it"
    done
}

# fetch PACKAGE: stock/vmlinuz-ABI and stock/config-ABI, unless cached.
fetch() {
    local pkg=$1 abi=${1#linux-image-} tmp
    [ ! -f "$out/vmlinuz-$abi" ] || return 0
    tmp=$(mktemp -d)
    chmod 777 "$tmp"   # apt-get download writes as the _apt user
    (cd "$tmp" && apt-get download -qq "$pkg") || {
        rm -rf "$tmp"
        die "apt-get download $pkg failed"
    }
    # /boot comes first in the package's data: tar stops reading there
    # (dpkg-deb then dies of SIGPIPE, which says nothing).
    { dpkg-deb --fsys-tarfile "$tmp"/*.deb 2>/dev/null || true; } |
        tar -x -C "$tmp" --occurrence=1 "./boot/vmlinuz-$abi" \
            "./boot/config-$abi" || {
        rm -rf "$tmp"
        die "no vmlinuz-$abi or config-$abi in $pkg"
    }
    check_config "$tmp/boot/config-$abi"
    mkdir -p "$out"
    mv "$tmp/boot/config-$abi" "$out/config-$abi"
    # Whole or not at all: the cache is keyed on the file's presence.
    mv "$tmp/boot/vmlinuz-$abi" "$out/vmlinuz-$abi.tmp"
    mv "$out/vmlinuz-$abi.tmp" "$out/vmlinuz-$abi"
    rm -rf "$tmp"
}

# fetch_flavour NAME: fetch it (resolved already), point stock/matrix/NAME
# at it, print the path.
fetch_flavour() {
    local pkg abi
    pkg=${pkg_of[$(meta_of "$1")]}
    abi=${pkg#linux-image-}
    fetch "$pkg"
    mkdir -p "$out/matrix"
    ln -sfn "../vmlinuz-$abi" "$out/matrix/$1"
    echo "$out/vmlinuz-$abi"
}
# resolve_flavours NAME...
resolve_flavours() {
    local f metas=()
    for f in "$@"; do
        metas+=("$(meta_of "$f")") || exit 1
    done
    resolve "${metas[@]}"
}

case ${1:-} in
--matrix)
    resolve_flavours "${flavours[@]}"
    for f in "${flavours[@]}"; do
        vmlinuz=$(fetch_flavour "$f")
        echo "$f $vmlinuz"
    done
    exit 0
    ;;
--flavour)
    [ -n "${2:-}" ] || die "--flavour needs a name (${flavours[*]})"
    resolve_flavours "$2"
    fetch_flavour "$2"
    exit 0
    ;;
--rt)
    resolve_flavours 6.1-rt
    fetch_flavour 6.1-rt
    exit 0
    ;;
--dbg | "") ;;
*) die "usage: fetch-stock-kernel.sh [--dbg | --rt | --flavour NAME | --matrix]" ;;
esac

resolve_flavours 6.1
vmlinuz=$(fetch_flavour 6.1)
abi=${vmlinuz##*/vmlinuz-}
pkg=linux-image-$abi
ln -sfn "vmlinuz-$abi" "$out/vmlinuz"

if [ "${1:-}" = --dbg ] && [ ! -f "$out/vmlinux-$abi-dbg" ]; then
    tmp=$(mktemp -d)
    chmod 777 "$tmp"
    trap 'rm -rf "$tmp"' EXIT
    (cd "$tmp" && apt-get download -qq "$pkg-dbg") ||
        die "apt-get download $pkg-dbg failed"
    # The package unpacks to 5 GiB; take only the vmlinux.
    dpkg-deb --fsys-tarfile "$tmp"/*.deb |
        tar -x -C "$tmp" "./usr/lib/debug/boot/vmlinux-$abi" ||
        die "no vmlinux-$abi in $pkg-dbg"
    mv "$tmp/usr/lib/debug/boot/vmlinux-$abi" "$out/vmlinux-$abi-dbg"
fi
if [ -f "$out/vmlinux-$abi-dbg" ]; then
    ln -sfn "vmlinux-$abi-dbg" "$out/vmlinux-dbg"
fi
echo "$out/vmlinuz-$abi"
