#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# build-kernel.sh - build ringside's guest kernel, cached outside the repo.
#
# Usage: build-kernel.sh [--kernel-version V] [--baseline | --prefix N]
#   --kernel-version V
#               which series: guest-kernel/V/ (patches/series and
#               config/ringside.config) against Debian's linux-source-V.
#               Default $RINGSIDE_KVER, else 6.1.  Each version has its own
#               trees and outputs: for 6.1 the names below, for any other
#               version the same names with -V appended ($CACHE/linux-6.12,
#               $CACHE/kernel-6.12/, ...).
#   (none)      the project kernel: every patch of the series, installed in
#               $CACHE/kernel/.
#   --baseline  the unpatched project kernel, for comparison: only the
#               patches the series marks "baseline" (the test module), same
#               config; tree $CACHE/linux-baseline, installed in
#               $CACHE/kernel-baseline/.
#   --prefix N  check that the first N patches build: tree
#               $CACHE/linux-series, nothing installed.
#   With --baseline and --prefix, options of the config fragment that the
#   tree's Kconfig does not define (they come with later patches) are left
#   out instead of failing the build.
#
# Stages (each skipped when its inputs are unchanged):
#   unpack  /usr/src/linux-source-V.tar.xz -> the tree, made a git
#           repository with one base commit, then the patches applied with
#           `git am`.  When only patches change, the tree is kept: it is
#           reset to the last commit whose patches are still wanted and the
#           rest applied, so make rebuilds only what those patches touch.
#           A fresh tree is unpacked when the tarball changes.
#   config  `make tinyconfig`, then guest-kernel/V/config/ringside.config
#           merged on top (merge_config.sh -m + allnoconfig, so symbols the
#           fragment does not mention stay off, as in tinyconfig).  Fails if
#           any option of the fragment did not end up in .config.  Redone when
#           the fragment or the patches change.
#   make    `make all` (vmlinux, bzImage, modules), incremental; ccache is
#           used when installed (CCACHE_DIR=$CACHE/ccache).
#   install bzImage, vmlinux, System.map and config copied to the output dir
#           (only when their content changed, so mtimes stay meaningful).
#
# Environment:
#   RINGSIDE_CACHE          cache dir (default ~/.cache/ringside)
#   RINGSIDE_KVER           the series' kernel version (default 6.1)
#   RINGSIDE_KERNEL_TARBALL kernel source tarball
#                           (default /usr/src/linux-source-V.tar.xz)
#   RINGSIDE_VERBOSE=1      stream build output instead of logging it only
#   JOBS                    parallel make jobs (default: nproc)
#
# Output: one timing line, then the path of bzImage, on stdout.  Progress and
# errors go to stderr; a failure ends with one line "build-kernel: error: ...".

set -euo pipefail

prog=build-kernel
# die, RINGSIDE_ROOT, RINGSIDE_CACHE and CCACHE_DIR
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
trap 'die "unexpected failure (line $LINENO: $BASH_COMMAND)"' ERR

# Bump when the way the tree is prepared changes, to force a fresh unpack.
TREE_FORMAT=2

usage="usage: $0 [--kernel-version V] [--baseline | --prefix N]"
mode=project
upto=
kver=${RINGSIDE_KVER:-6.1}
while [ $# -gt 0 ]; do
	case $1 in
	--kernel-version)
		[ $# -ge 2 ] || die "$usage"
		kver=$2
		shift 2
		;;
	--baseline)
		[ "$mode" = project ] || die "$usage"
		mode=baseline
		shift
		;;
	--prefix)
		[ "$mode" = project ] || die "$usage"
		mode=prefix
		upto=${2:-}
		[[ $upto =~ ^[1-9][0-9]*$ ]] || die "--prefix needs a patch count (1 or more)"
		shift 2
		;;
	*) die "$usage" ;;
	esac
done
[[ $kver =~ ^[0-9]+\.[0-9]+$ ]] || die "bad kernel version '$kver' (want e.g. 6.1 or 6.12)"

top=$RINGSIDE_ROOT
gk=$top/guest-kernel/$kver
series=$gk/patches/series
fragment=$gk/config/ringside.config
[ -d "$gk" ] || die "no series for $kver: $gk does not exist"

cache=$RINGSIDE_CACHE
tarball=${RINGSIDE_KERNEL_TARBALL:-/usr/src/linux-source-$kver.tar.xz}
# 6.1 keeps the names it always had, so existing caches stay valid.
sfx=$([ "$kver" = 6.1 ] || echo "-$kver")
case $mode in
project) tree=$cache/linux$sfx out=$cache/kernel$sfx ;;
baseline) tree=$cache/linux-baseline$sfx out=$cache/kernel-baseline$sfx ;;
prefix) tree=$cache/linux-series$sfx out= ;;
esac
logs=$cache/log
jobs=${JOBS:-$(nproc)}
verbose=${RINGSIDE_VERBOSE:-0}

[ -r "$tarball" ] ||
	die "kernel source $tarball not found: run 'apt-get install linux-source-$kver' (or set RINGSIDE_KERNEL_TARBALL)"
[ -r "$series" ] || die "missing $series"
[ -r "$fragment" ] || die "missing $fragment"

missing=()
for tool in make gcc ld flex bison bc tar xz git sha256sum flock perl; do
	command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
[ ${#missing[@]} -eq 0 ] ||
	die "missing build tools: ${missing[*]} (apt-get install build-essential flex bison bc xz-utils git perl libelf-dev libssl-dev)"

mkdir -p "$cache" "$logs" ${out:+"$out"}
exec 9>"$tree.lock"
flock 9 || die "cannot lock $tree.lock"
# Each tree logs apart, so builds of different trees can run side by side.
logs=$logs/$(basename "$tree")
mkdir -p "$logs"

# Same make variables for every invocation, so Kbuild never sees a changed
# command line between runs.  LOCALVERSION= (set, empty) keeps
# scripts/setlocalversion from appending "+" because the tree is a git repo.
# KBUILD_BUILD_VERSION=1 (the "#1" of uname -v) is the revision
# build-debs.sh gives make bindeb-pkg, so packaging relinks nothing.
kmake=(make -C "$tree" LOCALVERSION= KBUILD_BUILD_USER=ringside KBUILD_BUILD_HOST=ringside
	KBUILD_BUILD_VERSION=1)
if command -v ccache >/dev/null 2>&1; then
	kmake+=(CC="ccache gcc")
	ccache_note="ccache"
else
	kmake+=(CC=gcc)
	ccache_note="no ccache"
fi

# run_logged STAGE CMD...: run CMD with output in $logs/kernel-STAGE.log
# (and on stderr if verbose); on failure show the log's tail and die.
run_logged() {
	local stage=$1 log=$logs/kernel-$1.log
	shift
	local rc=0
	if [ "$verbose" = 1 ]; then
		"$@" 2>&1 | tee -a "$log" >&2 || rc=$?
	else
		"$@" >>"$log" 2>&1 || rc=$?
	fi
	if [ $rc -ne 0 ]; then
		tail -n 40 "$log" >&2
		die "$stage failed: $* (exit $rc; full log: $log)"
	fi
}

# Patches named by the series file, in order: comments (# to end of line)
# and blank lines are ignored; the first word of a line is the patch file,
# and the word "baseline" after it puts the patch in the baseline kernel too.
patches=()
all=0
while IFS= read -r line || [ -n "$line" ]; do
	line=${line%%#*}
	read -r name tags <<<"$line" || true
	[ -n "${name:-}" ] || continue
	case $name in
	/* | *..*) die "series: patch name '$name' must be a plain file name in guest-kernel/$kver/patches/" ;;
	esac
	[ -f "$gk/patches/$name" ] || die "series names $name but guest-kernel/$kver/patches/$name does not exist"
	all=$((all + 1))
	case $mode in
	baseline) [[ " $tags " == *" baseline "* ]] || continue ;;
	prefix) [ "$all" -le "$upto" ] || continue ;;
	esac
	patches+=("$name")
done <"$series"
[ "$mode" != prefix ] || [ "$upto" -le "$all" ] ||
	die "--prefix $upto: the series has $all patches"

# Inputs of the tree: the base (tarball identity, preparation format), then
# one line per patch, in order.  The stamp holds the same lines for what the
# tree has now.
base_key="format $TREE_FORMAT $(stat -L -c 'tarball %n %s %Y' "$tarball")"
want=()
for p in "${patches[@]}"; do
	want+=("patch $p $(sha256sum <"$gk/patches/$p" | cut -d' ' -f1)")
done
tree_key=$(printf '%s\n' "$base_key" "${want[@]}")
config_key=$({
	echo "$mode"
	echo "$tree_key"
	sha256sum <"$fragment"
} | sha256sum | cut -d' ' -f1)

tree_stamp=$tree/.ringside-tree
config_stamp=$tree/.ringside-config

now() { date +%s; }
t_all=$(now)

# ---- unpack + patch --------------------------------------------------------
# git with a fixed identity, so that the commits are reproducible.
export GIT_AUTHOR_NAME=ringside GIT_AUTHOR_EMAIL=ringside@localhost
export GIT_COMMITTER_NAME=ringside GIT_COMMITTER_EMAIL=ringside@localhost
git_in() {
	local dir=$1
	shift
	git -C "$dir" -c gc.auto=0 -c core.autocrlf=false -c commit.gpgsign=false "$@"
}

# apply_patches DIR FIRST: git am the wanted patches from index FIRST on.
apply_patches() {
	local dir=$1 i
	for ((i = $2; i < ${#patches[@]}; i++)); do
		echo "$prog: applying ${patches[i]}" >>"$logs/kernel-unpack.log"
		if ! git_in "$dir" am -q --no-gpg-sign --committer-date-is-author-date \
			"$gk/patches/${patches[i]}" >>"$logs/kernel-unpack.log" 2>&1; then
			git_in "$dir" am --abort >/dev/null 2>&1 || true
			tail -n 20 "$logs/kernel-unpack.log" >&2
			die "patch ${patches[i]} does not apply to linux-source-$kver (log: $logs/kernel-unpack.log; tree left in $dir)"
		fi
	done
}

t0=$(now)
have=()
if [ -f "$tree_stamp" ] && [ -f "$tree/Makefile" ]; then
	mapfile -t have <"$tree_stamp"
fi
# How many of the wanted patches the tree has already, in order.
keep=0
if [ ${#have[@]} -gt 0 ] && [ "${have[0]}" = "$base_key" ] &&
	[ "$(git_in "$tree" rev-list --count HEAD 2>/dev/null)" = "${#have[@]}" ]; then
	while [ $keep -lt ${#want[@]} ] && [ $((keep + 1)) -lt ${#have[@]} ] &&
		[ "${have[keep + 1]}" = "${want[keep]}" ]; do
		keep=$((keep + 1))
	done
	reuse=1
else
	reuse=0
fi

if [ $reuse = 1 ] && [ $keep -eq ${#want[@]} ] && [ ${#have[@]} -eq $((keep + 1)) ]; then
	unpack_note=" (cached)"
elif [ $reuse = 1 ]; then
	drop=$((${#have[@]} - 1 - keep))
	unpack_note=" (kept $keep patches, reverted $drop, applied $((${#want[@]} - keep)))"
	: >"$logs/kernel-unpack.log"
	# Half-done work leaves no stamp: the next run then unpacks afresh.
	rm -f "$tree_stamp"
	git_in "$tree" am --abort >/dev/null 2>&1 || true
	run_logged unpack git_in "$tree" reset -q --hard "HEAD~$drop"
	apply_patches "$tree" "$keep"
	printf '%s\n' "$tree_key" >"$tree_stamp"
else
	unpack_note=""
	: >"$logs/kernel-unpack.log"
	new=$tree.new
	rm -rf "$new"
	mkdir -p "$new"
	echo "$prog: unpacking $tarball (log: $logs/kernel-unpack.log)" >&2
	run_logged unpack tar -xJf "$tarball" -C "$new" --strip-components=1
	[ -f "$new/Makefile" ] || die "unpack: $tarball does not look like a Linux source tarball"

	export GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z"
	run_logged unpack git_in "$new" init -q
	# -f: Debian's top-level .gitignore ignores everything ("/*").
	run_logged unpack git_in "$new" add -A -f .
	run_logged unpack git_in "$new" commit -q --no-verify -m "linux-source-$kver ($(basename "$tarball"))"
	unset GIT_AUTHOR_DATE GIT_COMMITTER_DATE

	apply_patches "$new" 0
	rm -rf "$tree"
	mv "$new" "$tree"
	printf '%s\n' "$tree_key" >"$tree_stamp"
fi
t_unpack=$(($(now) - t0))

# ---- config ----------------------------------------------------------------
t0=$(now)
if [ -f "$config_stamp" ] && [ "$(cat "$config_stamp")" = "$config_key" ] &&
	[ -f "$tree/.config" ]; then
	config_note=" (cached)"
else
	config_note=""
	: >"$logs/kernel-config.log"
	rm -f "$config_stamp"
	echo "$prog: configuring (tinyconfig + $(basename "$fragment"); log: $logs/kernel-config.log)" >&2
	run_logged config "${kmake[@]}" tinyconfig
	run_logged config env -C "$tree" KCONFIG_CONFIG=.config \
		scripts/kconfig/merge_config.sh -m .config "$fragment"
	cp "$tree/.config" "$tree/.ringside-merged.config"
	run_logged config "${kmake[@]}" KCONFIG_ALLCONFIG=.ringside-merged.config allnoconfig

	# Every option the fragment asks for must have survived Kconfig, but
	# for the baseline and a prefix those the tree does not define.
	defined=" "
	if [ "$mode" != project ]; then
		defined+=$(grep -rhoE --include='Kconfig*' '^[[:space:]]*(menu)?config [A-Za-z0-9_]+' "$tree" |
			awk '{ printf "CONFIG_%s ", $2 }')
	fi
	dropped=()
	skipped=()
	while IFS= read -r line; do
		if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
			sym=${BASH_REMATCH[1]} wanted=${BASH_REMATCH[2]}
		elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set ]]; then
			sym=${BASH_REMATCH[1]} wanted=n
		else
			continue
		fi
		if [ "$mode" != project ] && [[ $defined != *" $sym "* ]]; then
			skipped+=("$sym")
			continue
		fi
		got=$(sed -n -e "s/^$sym=//p" -e "s/^# $sym is not set\$/n/p" "$tree/.config")
		[ -n "$got" ] || got=n
		[ "$wanted" = "$got" ] || dropped+=("$sym (wanted $wanted, got $got)")
	done <"$fragment"
	[ ${#skipped[@]} -eq 0 ] ||
		echo "$prog: not in this tree, left out: ${skipped[*]}" >&2
	if [ ${#dropped[@]} -ne 0 ]; then
		printf '%s\n' "${dropped[@]}" >>"$logs/kernel-config.log"
		die "config: $(basename "$fragment") options dropped by Kconfig (unmet dependencies?): ${dropped[*]}"
	fi
	echo "$config_key" >"$config_stamp"
fi
t_config=$(($(now) - t0))

# ---- make ------------------------------------------------------------------
t0=$(now)
: >"$logs/kernel-make.log"
echo "$prog: make -j$jobs ($ccache_note; log: $logs/kernel-make.log)" >&2
# Progress counts Kbuild's step lines against the last full build of this
# tree, or a count measured for each series' config on a fresh tree.
steps=0
if [ -z "$config_note" ]; then
	steps=$(cat "$tree/.ringside-steps" 2>/dev/null ||
		case $kver in 6.1) echo 1280 ;; *) echo 1360 ;; esac)
fi
if [ "$verbose" = 1 ]; then
	run_logged make "${kmake[@]}" -j"$jobs" all
else
	"${kmake[@]}" -j"$jobs" all 2>&1 |
		show_progress "$prog: make" "$steps" "$logs/kernel-make.log" || {
		tail -n 40 "$logs/kernel-make.log" >&2
		die "make failed (full log: $logs/kernel-make.log)"
	}
	if [ -z "$config_note" ]; then
		grep -cE "$KBUILD_STEP_RE" "$logs/kernel-make.log" \
			>"$tree/.ringside-steps" || true
	fi
fi
t_make=$(($(now) - t0))

# ---- install ---------------------------------------------------------------
summary="unpack ${t_unpack}s${unpack_note}, config ${t_config}s${config_note}, make ${t_make}s, total $(($(now) - t_all))s"
if [ "$mode" = prefix ]; then
	echo "$prog: patches 1-$upto of $all build; $summary"
	exit 0
fi
for f in arch/x86/boot/bzImage vmlinux System.map .config; do
	[ -f "$tree/$f" ] || die "build did not produce $tree/$f"
done
install_changed "$tree/arch/x86/boot/bzImage" "$out/bzImage" >/dev/null
install_changed "$tree/vmlinux" "$out/vmlinux" 755 >/dev/null
install_changed "$tree/System.map" "$out/System.map" >/dev/null
install_changed "$tree/.config" "$out/config" >/dev/null

echo "$prog: $summary"
echo "$out/bzImage"
