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

# Stage timing: stage_begin NAME; ...; stage_end [note]
declare -a _stage_report=()
stage_begin() {
    _stage_name=$1
    _stage_t0=$(date +%s.%N)
}
stage_end() {
    local t1
    t1=$(date +%s.%N)
    _stage_report+=("$(printf '%s %.1fs%s' "$_stage_name" \
        "$(echo "$t1 - $_stage_t0" | bc)" "${1:+ ($1)}")")
}
stage_summary() {
    local out="" r
    for r in "${_stage_report[@]}"; do
        out+="${out:+, }$r"
    done
    echo "${0##*/}: $out"
}

# Copy SRC to DST only when the content differs, so that an unchanged file
# keeps its timestamp and ninja/make rebuild nothing for it.
install_if_changed() {
    local src=$1 dst=$2
    if ! cmp -s "$src" "$dst"; then
        mkdir -p "$(dirname "$dst")"
        cp "$src" "$dst.tmp.$$" && mv "$dst.tmp.$$" "$dst"
        return 0
    fi
    return 1
}

# Hash of the named files' contents (and their names), for cache stamps.
content_hash() {
    local f
    for f in "$@"; do
        printf '%s\n' "${f#"$RINGSIDE_ROOT"/}"
        cat "$f"
    done | sha256sum | cut -c1-16
}
