#!/usr/bin/env bash
# Fetch Debian bookworm's stock 6.1 kernel (the package linux-image-amd64
# depends on) into $RINGSIDE_CACHE/stock/, for tests that compare ringside
# on an unmodified distribution kernel.  Prints the path of its vmlinuz.
# With --dbg, also its debug vmlinux (stock/vmlinux-dbg), which crash needs
# to read a dump: the reference the tests compare ringside dmesg with.
# With --rt, Debian's PREEMPT_RT 6.1 kernel instead (linux-image-rt-amd64's),
# as stock/vmlinuz-ABI only.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$RINGSIDE_CACHE/stock
meta=linux-image-amd64
[ "${1:-}" != --rt ] || meta=linux-image-rt-amd64
depends() {
    apt-cache depends "$meta" 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-image-6\.1[^ ]*-amd64\)$/\1/p' | head -n1
}
pkg=$(depends)
if [ -z "$pkg" ]; then
    apt-get update -qq
    pkg=$(depends)
fi
[ -n "$pkg" ] || die "cannot tell which kernel $meta depends on"
abi=${pkg#linux-image-}
if [ ! -f "$out/vmlinuz-$abi" ]; then
    tmp=$(mktemp -d)
    chmod 777 "$tmp"   # apt-get download writes as the _apt user
    trap 'rm -rf "$tmp"' EXIT
    (cd "$tmp" && apt-get download -qq "$pkg") ||
        die "apt-get download $pkg failed"
    dpkg-deb -x "$tmp"/*.deb "$tmp/x"
    mkdir -p "$out"
    cp "$tmp/x/boot/vmlinuz-$abi" "$out/vmlinuz-$abi.tmp"
    mv "$out/vmlinuz-$abi.tmp" "$out/vmlinuz-$abi"
fi
if [ "${1:-}" = --rt ]; then
    echo "$out/vmlinuz-$abi"
    exit 0
fi
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
