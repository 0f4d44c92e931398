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
set -euo pipefail
. "$(dirname "$0")/lib.sh"
s=$RINGSIDE_ROOT/scripts

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
