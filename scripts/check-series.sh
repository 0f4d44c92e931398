#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# check-series.sh - check that each prefix of guest-kernel/V/patches/series
# builds, as a series sent upstream must (bisection lands on every patch).
#
# Usage: check-series.sh [--kernel-version V]   (default $RINGSIDE_KVER, else
# 6.1; see build-kernel.sh)
#
# Builds patches 1..N for N = all .. 1 in one tree ($RINGSIDE_CACHE/
# linux-series[-V], build-kernel.sh --prefix N), dropping one patch at a time,
# so each step rebuilds only what that patch touched.  Backwards, because
# the whole series is what the project kernel's build left in ccache, and
# a walk that starts where the last one ended moves no patch twice.
#
# Then every patch must pass the tree's own scripts/checkpatch.pl --strict
# with no error, warning or check.
#
# Output: one line per prefix; exit 1 at the first prefix that fails.
# Once every prefix has built, nothing is rebuilt until the series, a
# patch, the config fragment, the tarball or the build script changes.

set -euo pipefail
prog=check-series
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

kver=${RINGSIDE_KVER:-6.1}
case "${1:-}" in
'') ;;
--kernel-version)
	[ $# -eq 2 ] || die "usage: $0 [--kernel-version V]"
	kver=$2
	;;
*) die "usage: $0 [--kernel-version V]" ;;
esac
[[ $kver =~ ^[0-9]+\.[0-9]+$ ]] || die "bad kernel version '$kver'"
gk=$RINGSIDE_ROOT/guest-kernel/$kver
[ -d "$gk" ] || die "no series for $kver: $gk does not exist"
tarball=${RINGSIDE_KERNEL_TARBALL:-/usr/src/linux-source-$kver.tar.xz}
n=$(sed -e 's/#.*//' "$gk/patches/series" | awk 'NF' | wc -l)
[ "$n" -ge 1 ] || die "the series is empty"

# 6.1 keeps the names it always had (build-kernel.sh does the same).
sfx=$([ "$kver" = 6.1 ] || echo "-$kver")
stamp=$RINGSIDE_CACHE/linux-series$sfx.checked
key="$(content_hash "$gk/patches/series" "$gk"/patches/*.patch \
	"$gk/config/ringside.config" "$RINGSIDE_ROOT/scripts/build-kernel.sh") $(stat -L -c '%n %s %Y' "$tarball" 2>/dev/null)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
	echo "$prog: $kver: every prefix of the $n patches builds (checked before; nothing has changed since)"
	exit 0
fi
for ((i = n; i >= 1; i--)); do
	"$RINGSIDE_ROOT/scripts/build-kernel.sh" --kernel-version "$kver" --prefix "$i" ||
		die "$kver: patches 1-$i of $n do not build"
done
# checkpatch.pl from the tree the walk used, run inside it (it reads the
# tree's MAINTAINERS, spelling and const-struct lists).
tree=$RINGSIDE_CACHE/linux-series$sfx
bad=0
for p in $(sed -e 's/#.*//' "$gk/patches/series" | awk 'NF { print $1 }'); do
	if out=$(cd "$tree" && perl scripts/checkpatch.pl --strict --quiet --showfile \
		"$gk/patches/$p" 2>/dev/null); then
		echo "$prog: $kver: $p: checkpatch --strict clean"
	else
		printf '%s\n' "$out" >&2
		echo "$prog: $kver: $p: checkpatch --strict found problems" >&2
		bad=1
	fi
done
[ $bad = 0 ] || die "$kver: checkpatch --strict is not clean on every patch"
printf '%s\n' "$key" >"$stamp"
