#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# build-kernel.sh - build ringside's guest kernel, cached outside the repo.
#
# Stages (each skipped when its inputs are unchanged):
#   unpack  /usr/src/linux-source-6.1.tar.xz -> $CACHE/linux, made a git
#           repository with one base commit, then every patch listed in
#           guest-kernel/patches/series applied with `git am`.
#           Redone (fresh tree) when the tarball, the series or any patch
#           changes.  The tree is disposable.
#   config  `make tinyconfig`, then guest-kernel/config/ringside.config
#           merged on top (merge_config.sh -m + allnoconfig, so symbols the
#           fragment does not mention stay off, as in tinyconfig).  Fails if
#           any option of the fragment did not end up in .config.  Redone when
#           the fragment changes (in the same tree) or the tree was unpacked.
#   make    `make all` (vmlinux, bzImage, modules), incremental; ccache is
#           used when installed (CCACHE_DIR=$CACHE/ccache).
#   install bzImage, vmlinux, System.map and config copied to $CACHE/kernel/
#           (only when their content changed, so mtimes stay meaningful).
#
# Environment:
#   RINGSIDE_CACHE          cache dir (default ~/.cache/ringside)
#   RINGSIDE_KERNEL_TARBALL kernel source tarball
#                           (default /usr/src/linux-source-6.1.tar.xz)
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
TREE_FORMAT=1

top=$RINGSIDE_ROOT
gk=$top/guest-kernel
series=$gk/patches/series
fragment=$gk/config/ringside.config

cache=$RINGSIDE_CACHE
tarball=${RINGSIDE_KERNEL_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
tree=$cache/linux
out=$cache/kernel
logs=$cache/log
jobs=${JOBS:-$(nproc)}
verbose=${RINGSIDE_VERBOSE:-0}

[ -r "$tarball" ] ||
	die "kernel source $tarball not found: run 'apt-get install linux-source-6.1' (or set RINGSIDE_KERNEL_TARBALL)"
[ -r "$series" ] || die "missing $series"
[ -r "$fragment" ] || die "missing $fragment"

missing=()
for tool in make gcc ld flex bison bc tar xz git sha256sum flock perl; do
	command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
[ ${#missing[@]} -eq 0 ] ||
	die "missing build tools: ${missing[*]} (apt-get install build-essential flex bison bc xz-utils git perl libelf-dev libssl-dev)"

mkdir -p "$cache" "$out" "$logs"
exec 9>"$cache/.build-kernel.lock"
flock 9 || die "cannot lock $cache/.build-kernel.lock"

# Same make variables for every invocation, so Kbuild never sees a changed
# command line between runs.  LOCALVERSION= (set, empty) keeps
# scripts/setlocalversion from appending "+" because the tree is a git repo.
kmake=(make -C "$tree" LOCALVERSION= KBUILD_BUILD_USER=ringside KBUILD_BUILD_HOST=ringside)
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
# and blank lines are ignored; the first word of a line is the patch file.
patches=()
while IFS= read -r line || [ -n "$line" ]; do
	line=${line%%#*}
	read -r name _ <<<"$line" || true
	[ -n "${name:-}" ] || continue
	case $name in
	/* | *..*) die "series: patch name '$name' must be a plain file name in guest-kernel/patches/" ;;
	esac
	[ -f "$gk/patches/$name" ] || die "series names $name but guest-kernel/patches/$name does not exist"
	patches+=("$name")
done <"$series"

# Inputs of the tree: tarball identity, preparation format, series, patches.
tree_key=$({
	echo "format $TREE_FORMAT"
	stat -L -c 'tarball %n %s %Y' "$tarball"
	for p in "${patches[@]}"; do
		echo "patch $p $(sha256sum <"$gk/patches/$p")"
	done
} | sha256sum | cut -d' ' -f1)
config_key=$({
	echo "tree $tree_key"
	sha256sum <"$fragment"
} | sha256sum | cut -d' ' -f1)

tree_stamp=$tree/.ringside-tree
config_stamp=$tree/.ringside-config

now() { date +%s; }
t_all=$(now)

# ---- unpack + patch --------------------------------------------------------
t0=$(now)
if [ -f "$tree_stamp" ] && [ "$(cat "$tree_stamp")" = "$tree_key" ] &&
	[ -f "$tree/Makefile" ]; then
	unpack_note=" (cached)"
else
	unpack_note=""
	: >"$logs/kernel-unpack.log"
	new=$cache/linux.new
	rm -rf "$new"
	mkdir -p "$new"
	echo "$prog: unpacking $tarball (log: $logs/kernel-unpack.log)" >&2
	run_logged unpack tar -xJf "$tarball" -C "$new" --strip-components=1
	[ -f "$new/Makefile" ] || die "unpack: $tarball does not look like a Linux source tarball"

	# One base commit with fixed identity and date, so it is reproducible.
	export GIT_AUTHOR_NAME=ringside GIT_AUTHOR_EMAIL=ringside@localhost
	export GIT_COMMITTER_NAME=ringside GIT_COMMITTER_EMAIL=ringside@localhost
	export GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z"
	git_t=(git -C "$new" -c gc.auto=0 -c core.autocrlf=false -c commit.gpgsign=false)
	run_logged unpack "${git_t[@]}" init -q
	# -f: Debian's top-level .gitignore ignores everything ("/*").
	run_logged unpack "${git_t[@]}" add -A -f .
	run_logged unpack "${git_t[@]}" commit -q --no-verify -m "linux-source-6.1 ($(basename "$tarball"))"
	unset GIT_AUTHOR_DATE GIT_COMMITTER_DATE

	for p in "${patches[@]}"; do
		echo "$prog: applying $p" >>"$logs/kernel-unpack.log"
		if ! "${git_t[@]}" am -q --no-gpg-sign --committer-date-is-author-date \
			"$gk/patches/$p" >>"$logs/kernel-unpack.log" 2>&1; then
			"${git_t[@]}" am --abort >/dev/null 2>&1 || true
			tail -n 20 "$logs/kernel-unpack.log" >&2
			die "patch $p does not apply to linux-source-6.1 (log: $logs/kernel-unpack.log; tree left in $new)"
		fi
	done

	rm -rf "$tree"
	mv "$new" "$tree"
	echo "$tree_key" >"$tree_stamp"
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

	# Every option the fragment asks for must have survived Kconfig.
	dropped=()
	while IFS= read -r line; do
		if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
			sym=${BASH_REMATCH[1]} want=${BASH_REMATCH[2]}
		elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set ]]; then
			sym=${BASH_REMATCH[1]} want=n
		else
			continue
		fi
		got=$(sed -n -e "s/^$sym=//p" -e "s/^# $sym is not set\$/n/p" "$tree/.config")
		[ -n "$got" ] || got=n
		[ "$want" = "$got" ] || dropped+=("$sym (wanted $want, got $got)")
	done <"$fragment"
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
run_logged make "${kmake[@]}" -j"$jobs" all
t_make=$(($(now) - t0))

# ---- install ---------------------------------------------------------------
install_if_changed() {
	local src=$1 dst=$2
	[ -f "$src" ] || die "build did not produce $src"
	if ! cmp -s "$src" "$dst"; then
		cp "$src" "$dst.tmp"
		mv -f "$dst.tmp" "$dst"
	fi
}
install_if_changed "$tree/arch/x86/boot/bzImage" "$out/bzImage"
install_if_changed "$tree/vmlinux" "$out/vmlinux"
install_if_changed "$tree/System.map" "$out/System.map"
install_if_changed "$tree/.config" "$out/config"

echo "$prog: unpack ${t_unpack}s${unpack_note}, config ${t_config}s${config_note}, make ${t_make}s, total $(($(now) - t_all))s"
echo "$out/bzImage"
