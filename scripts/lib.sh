# Shared helpers for ringside's build scripts; sourced, not run.
# shellcheck shell=bash

RINGSIDE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RINGSIDE_CACHE=${RINGSIDE_CACHE:-$HOME/.cache/ringside}
export RINGSIDE_CACHE
export CCACHE_DIR=${CCACHE_DIR:-$RINGSIDE_CACHE/ccache}

# One line "NAME: error: ..." on stderr, NAME being $prog if the script
# sets it, else the script's file name; then exit 1.
die() {
    echo "${prog:-${0##*/}}: error: $*" >&2
    exit 1
}

# Stage timing: stage_begin NAME; ...; stage_end [note].  Bash's own
# clock, in microseconds ($EPOCHREALTIME, bash 5).
declare -a _stage_report=()
_usec() {
    local t=${EPOCHREALTIME/[.,]/}
    echo "$((10#$t))"
}
stage_begin() {
    _stage_name=$1
    _stage_t0=$(_usec)
}
stage_end() {
    local ds=$((($(_usec) - _stage_t0 + 50000) / 100000))
    _stage_report+=("$(printf '%s %d.%ds%s' "$_stage_name" $((ds / 10)) \
        $((ds % 10)) "${1:+ ($1)}")")
}
stage_summary() {
    local out="" r
    for r in "${_stage_report[@]}"; do
        out+="${out:+, }$r"
    done
    echo "${0##*/}: $out"
}

# install -C: an unchanged file keeps its timestamp, so ninja/make rebuild
# nothing for it; -v names the files it did copy.
install_changed() {
    install -C -v -D -m "${3:-644}" "$1" "$2"
}

# The Debian archive apt fetches bookworm's main component from, or
# $RINGSIDE_DEBIAN_MIRROR; deb.debian.org if apt names none.
debian_mirror() {
    if [ -n "${RINGSIDE_DEBIAN_MIRROR:-}" ]; then
        echo "$RINGSIDE_DEBIAN_MIRROR"
        return
    fi
    local uri
    # shellcheck disable=SC2016
    uri=$(apt-get indextargets --format '$(RELEASE) $(COMPONENT) $(REPO_URI)' \
        'Created-By: Packages' 2>/dev/null |
        awk '$1 == "bookworm" && $2 == "main" { print $3; exit }')
    echo "${uri:-http://deb.debian.org/debian}"
}

# Unmount, deepest first, whatever is mounted below DIR (a build tree a
# failed run left its /proc and /sys in).
unmount_under() {
    findmnt -rn -o TARGET | { grep "^$1/" || true; } | sort -r |
        xargs -r umount -l
}

# Hash of the named files' contents (and their names), for cache stamps.
content_hash() {
    local f
    for f in "$@"; do
        printf '%s\n' "${f#"$RINGSIDE_ROOT"/}"
        cat "$f"
    done | sha256sum | cut -c1-16
}

# A Kbuild step line ("  CC      kernel/printk/printk.o"), as counted by
# show_progress and by build-kernel.sh for its next estimate.
KBUILD_STEP_RE='^  (CC|AS|LD|AR|HOSTCC|OBJCOPY|GEN|UPD|VDSO|SYSMAP) '

# show_progress LABEL TOTAL LOG: append a build's output (stdin) to LOG and
# report on stderr how far it is: "LABEL: 412 of 1130 (36%), about 3 min
# left".  Steps are ninja's "[n/N]" lines, whose N wins over TOTAL, or
# Kbuild's "  CC  file" lines counted against TOTAL, an estimate (then the
# percentage stops at 99 until the build ends).  On a terminal the line is
# redrawn in place; elsewhere (CI logs) one line each 10%.
show_progress() {
    local tty=0
    [ -t 2 ] && tty=1
    awk -v label="$1" -v total="$2" -v logfile="$3" -v tty="$tty" \
        -v kbuild_re="$KBUILD_STEP_RE" '
    function now() { srand(); return srand() }
    function report(   pct, left, eta) {
        if (N <= 0)
            return
        pct = int(100 * n / N)
        if (pct > 99 && !exact)
            pct = 99
        if (!tty && pct < next_pct)
            return
        eta = ""
        if (n >= 20 && n < N && now() - t0 >= 10) {
            left = (now() - t0) * (N - n) / n
            if (left < 90)
                eta = sprintf(", about %d s left", left)
            else
                eta = sprintf(", about %d min left", int(left / 60 + 0.5))
        }
        if (tty)
            printf "\r%s: %d of %s%d (%d%%)%s\033[K", label, n, \
                (exact ? "" : "about "), N, pct, eta > "/dev/stderr"
        else
            printf "%s: %d of %s%d (%d%%)%s\n", label, n, \
                (exact ? "" : "about "), N, pct, eta > "/dev/stderr"
        next_pct = int(pct / 10) * 10 + 10
    }
    BEGIN { t0 = now(); N = total + 0; next_pct = 10 }
    {
        print >> logfile
        if ($0 ~ /^\[[0-9]+\/[0-9]+\]/) {
            split(substr($0, 2, index($0, "]") - 2), a, "/")
            n = a[1] + 0; N = a[2] + 0; exact = 1
        } else if ($0 ~ kbuild_re) {
            n++
            if (n > N)
                N = n
        } else {
            next
        }
        report()
    }
    END {
        if (tty && N > 0)
            printf "\r%s: %d steps\033[K\n", label, n > "/dev/stderr"
    }'
}
