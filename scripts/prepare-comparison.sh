#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# prepare-comparison.sh - build the kernels the project kernel is compared
# with (bench/panic_table.py, bench/flush_cost.py), all cached:
#   baseline  the project kernel without the series but the test module
#             (build-kernel.sh --baseline)
#   stock     Debian's linux-image-amd64 6.1 kernel, and
#   rt        Debian's linux-image-rt-amd64 6.1 kernel, each with the test
#             module built out of tree against its headers package
#             (build-test-module.sh), which the initramfs then carries.
# Needs the project kernel's tree for the module's source (build-all.sh
# first).  Root, for the headers packages.
#
# prepare-comparison.sh --set 6.12: the kernels of panic_table.py --set
# 6.12 instead: the 6.12 series' kernel (build-kernel.sh --kernel-version
# 6.12), and Debian's 6.12 generic and 6.12-rt kernels with the module
# built from that tree's lib/test_printk_panic.c.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
s=$RINGSIDE_ROOT/scripts

if [ "${1:-}" = --set ] && [ "${2:-}" = 6.12 ]; then
    stage_begin ringside-6.12
    "$s/build-kernel.sh" --kernel-version 6.12 >/dev/null
    stage_end
    src=$RINGSIDE_CACHE/linux-6.12/lib/test_printk_panic.c
    for flavour in 6.12 6.12-rt; do
        stage_begin "$flavour"
        vmlinuz=$("$s/fetch-stock-kernel.sh" --flavour "$flavour")
        kver=${vmlinuz##*/vmlinuz-}
        "$s/build-test-module.sh" "$src" "$kver" >/dev/null
        stage_end "$kver"
    done
    stage_begin initramfs
    "$s/build-initramfs.sh" >/dev/null
    stage_end
    stage_summary
    exit 0
fi
[ $# -eq 0 ] || die "usage: $0 [--set 6.12]"

src=$RINGSIDE_CACHE/linux/lib/test_printk_panic.c
[ -r "$src" ] || die "no $src: build the project kernel first (scripts/build-all.sh)"

stage_begin baseline
"$s/build-kernel.sh" --baseline >/dev/null
stage_end
for flavour in stock rt; do
    stage_begin "$flavour"
    vmlinuz=$("$s/fetch-stock-kernel.sh" $([ $flavour = rt ] && echo --rt))
    kver=${vmlinuz##*/vmlinuz-}
    "$s/build-test-module.sh" "$src" "$kver" >/dev/null
    stage_end "$kver"
done
stage_begin initramfs
"$s/build-initramfs.sh" >/dev/null
stage_end
stage_summary
