#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# build-initramfs.sh - build ringside's test initramfs, cached outside the repo.
#
# Compiles guest-kernel/initramfs/init.c as a static binary and packs
# $CACHE/initramfs/initramfs.cpio.gz (gzip, newc) holding:
#   /init            the static init
#   /lib/modules/KVER/test_printk_panic.ko
#                    for every $CACHE/modules/KVER/test_printk_panic.ko
#                    (scripts/build-test-module.sh), which init's
#                    panic-test case loads
#   /dev /proc /sys  mount points (init mounts devtmpfs, proc, sysfs, and
#                    debugfs on /sys/kernel/debug, which sysfs provides)
#   /dev/console     char 5:1, which the kernel opens for init's stdio
#                    before init runs (later hidden by devtmpfs)
# The archive is written by this script itself (newc is a simple text-header
# format), so no root, mknod or cpio tool is needed, and it is reproducible:
# fixed owners (0:0) and mtimes (0).
#
# Skipped when init.c, this script, the compiler and the test modules are
# unchanged.
#
# Environment:
#   RINGSIDE_CACHE  cache dir (default ~/.cache/ringside)
#   CC              C compiler (default cc; run through ccache if installed)
#
# Output: one timing line, then the path of the archive, on stdout; a failure
# ends with one line "build-initramfs: error: ..." on stderr.

set -euo pipefail

prog=build-initramfs
# die, RINGSIDE_ROOT, RINGSIDE_CACHE and CCACHE_DIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
trap 'die "unexpected failure (line $LINENO: $BASH_COMMAND)"' ERR

top=$RINGSIDE_ROOT
src=$top/guest-kernel/initramfs/init.c
cache=$RINGSIDE_CACHE
out=$cache/initramfs
archive=$out/initramfs.cpio.gz
stamp=$out/.stamp

cc=${CC:-cc}
cflags=(-static -Os -s -Wall -Wextra)

[ -r "$src" ] || die "missing $src"
command -v "$cc" >/dev/null 2>&1 || die "C compiler '$cc' not found (apt-get install build-essential)"
command -v gzip >/dev/null 2>&1 || die "gzip not found (apt-get install gzip)"
ccache=()
if command -v ccache >/dev/null 2>&1; then
	ccache=(ccache)
fi

mkdir -p "$out"
exec 9>"$cache/.build-initramfs.lock"
flock 9 || die "cannot lock $cache/.build-initramfs.lock"

now() { date +%s; }
t_all=$(now)

# Test modules, one per kernel release: $cache/modules/KVER/NAME.ko.
mod_files=()
for ko in "$cache"/modules/*/test_printk_panic.ko; do
	[ -f "$ko" ] && mod_files+=("$ko")
done
# The KVER of a module's path.
mod_kver() {
	local d=${1%/*}
	echo "${d##*/}"
}

key=$({
	sha256sum <"$src"
	sha256sum <"${BASH_SOURCE[0]}"
	echo "$cc ${cflags[*]}"
	"$cc" --version 2>&1 | head -n 1
	for ko in ${mod_files[@]+"${mod_files[@]}"}; do
		mod_kver "$ko"
		sha256sum <"$ko"
	done
} | sha256sum | cut -d' ' -f1)

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ] && [ -f "$archive" ]; then
	echo "$prog: compile 0s (cached), pack 0s (cached), total $(($(now) - t_all))s"
	echo "$archive"
	exit 0
fi
rm -f "$stamp"

# ---- compile ---------------------------------------------------------------
t0=$(now)
log=$out/compile.log
if ! "${ccache[@]}" "$cc" "${cflags[@]}" -o "$out/init.tmp" "$src" >"$log" 2>&1; then
	cat "$log" >&2
	if ! echo 'int main(void){return 0;}' | "$cc" -static -x c -o /dev/null - >/dev/null 2>&1; then
		die "'$cc -static' cannot link: install the static C library (apt-get install libc6-dev)"
	fi
	die "compiling $src failed (log: $log)"
fi
mv -f "$out/init.tmp" "$out/init"
t_compile=$(($(now) - t0))

# ---- pack ------------------------------------------------------------------
# newc entry: "070701", 13 eight-digit hex fields (ino mode uid gid nlink
# mtime filesize devmajor devminor rdevmajor rdevminor namesize check), the
# NUL-terminated name, padding to 4 bytes, the data, padding to 4 bytes.
t0=$(now)
ino=0
cpio_pad() {
	local n=$(((4 - $1 % 4) % 4))
	[ "$n" -eq 0 ] || head -c "$n" /dev/zero
}
# cpio_entry NAME MODE NLINK SIZE RDEVMAJOR RDEVMINOR [DATAFILE]
cpio_entry() {
	local name=$1 mode=$2 nlink=$3 size=$4 rmaj=$5 rmin=$6 data=${7:-}
	local namesize=$((${#name} + 1))
	ino=$((ino + 1))
	printf '070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X' \
		"$ino" "$mode" 0 0 "$nlink" 0 "$size" 0 0 "$rmaj" "$rmin" "$namesize" 0
	printf '%s\0' "$name"
	cpio_pad $((110 + namesize))
	if [ -n "$data" ]; then
		cat "$data"
		cpio_pad "$size"
	fi
}
cpio_dir() { cpio_entry "$1" $((0040000 | 0755)) 2 0 0 0; }
cpio_chr() { cpio_entry "$1" $((0020000 | $2)) 1 0 "$3" "$4"; }
cpio_file() {
	local size
	size=$(stat -c %s "$2")
	cpio_entry "$1" $((0100000 | $3)) 1 "$size" 0 0 "$2"
}

{
	cpio_dir dev
	cpio_chr dev/console 0600 5 1
	cpio_dir proc
	cpio_dir sys
	cpio_file init "$out/init" 0755
	if [ ${#mod_files[@]} -gt 0 ]; then
		cpio_dir lib
		cpio_dir lib/modules
		for ko in "${mod_files[@]}"; do
			kver=$(mod_kver "$ko")
			cpio_dir "lib/modules/$kver"
			cpio_file "lib/modules/$kver/test_printk_panic.ko" "$ko" 0644
		done
	fi
	cpio_entry 'TRAILER!!!' 0 1 0 0 0
} | gzip -9n >"$archive.tmp"
mv -f "$archive.tmp" "$archive"
echo "$key" >"$stamp"
t_pack=$(($(now) - t0))

echo "$prog: compile ${t_compile}s, pack ${t_pack}s, total $(($(now) - t_all))s"
echo "$archive"
