#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# build-test-module.sh - build a test kernel module out of tree, cached.
#
# Usage: build-test-module.sh SRC.c KVER [BUILD_DIR]
#
# Builds SRC.c (e.g. test_printk_panic.c) as the module test_printk_panic.ko
# against the kernel build tree BUILD_DIR (default
# /usr/src/linux-headers-KVER; when that is missing, the Debian package
# linux-headers-KVER is installed with apt-get) into
# $RINGSIDE_CACHE/modules/KVER/test_printk_panic.ko, which
# build-initramfs.sh packs as /lib/modules/KVER/test_printk_panic.ko.
# For the project's own kernel pass BUILD_DIR=$RINGSIDE_CACHE/linux.
#
# Skipped when the source, this script and the build tree's .config,
# autoconf.h and Module.symvers are unchanged.
#
# Output: the path of the .ko on stdout; a failure ends with one line
# "build-test-module: error: ..." on stderr.

set -euo pipefail

prog=build-test-module
# die, RINGSIDE_ROOT, RINGSIDE_CACHE
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
trap 'die "unexpected failure (line $LINENO: $BASH_COMMAND)"' ERR

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	die "usage: $0 SRC.c KVER [BUILD_DIR]"
fi
src=$1
kver=$2
kdir=${3:-/usr/src/linux-headers-$kver}
name=test_printk_panic

[ -r "$src" ] || die "cannot read $src"
case $kver in
*/* | '' | .*) die "bad kernel version '$kver'" ;;
esac

if [ ! -d "$kdir" ]; then
	[ $# -eq 2 ] || die "no kernel build tree $kdir"
	pkg=linux-headers-$kver
	[ "$(id -u)" -eq 0 ] || die "$kdir missing; install $pkg (needs root)"
	echo "$prog: installing $pkg" >&2
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y -qq "$pkg" >&2; then
		apt-get update -qq >&2 || die "apt-get update failed"
		apt-get install -y -qq "$pkg" >&2 || die "apt-get install $pkg failed"
	fi
	[ -d "$kdir" ] || die "$pkg installed but $kdir is missing"
fi
for f in .config Makefile Module.symvers include/generated/autoconf.h; do
	[ -e "$kdir/$f" ] || die "$kdir is not a prepared kernel build tree (no $f)"
done
grep -q '^CONFIG_MODULES=y' "$kdir/.config" || die "$kdir: kernel built without CONFIG_MODULES"

out=$RINGSIDE_CACHE/modules/$kver
ko=$out/$name.ko
stamp=$out/.stamp
work=$out/build
mkdir -p "$out"
exec 9>"$out/.lock"
flock 9 || die "cannot lock $out/.lock"

key=$({
	echo "$kver $kdir"
	sha256sum <"$src"
	sha256sum <"${BASH_SOURCE[0]}"
	cat "$kdir/.config" "$kdir/include/generated/autoconf.h" "$kdir/Module.symvers" |
		sha256sum
} | sha256sum | cut -d' ' -f1)

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ] && [ -f "$ko" ]; then
	echo "$prog: $kver: cached" >&2
	echo "$ko"
	exit 0
fi
rm -f "$stamp"

rm -rf "$work"
mkdir -p "$work"
cp "$src" "$work/$name.c"
echo "obj-m := $name.o" >"$work/Kbuild"
log=$out/build.log
if ! make -C "$kdir" M="$work" modules >"$log" 2>&1; then
	cat "$log" >&2
	die "building $name.ko for $kver failed (log: $log)"
fi
[ -f "$work/$name.ko" ] || die "no $name.ko after the build (log: $log)"
# The module must be for KVER, or the guest's /init will not find it.
vermagic=$(modinfo -F vermagic "$work/$name.ko" 2>/dev/null || true)
if [ -n "$vermagic" ] && [ "${vermagic%% *}" != "$kver" ]; then
	die "$kdir builds for '${vermagic%% *}', not $kver"
fi
cp "$work/$name.ko" "$ko.tmp"
mv -f "$ko.tmp" "$ko"
echo "$key" >"$stamp"
echo "$prog: $kver: built" >&2
echo "$ko"
