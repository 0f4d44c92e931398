#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# on-libvirt.sh - run the libvirt tests against the libvirt of another
# suite, libvirt 11.3 from bookworm-backports by default, beside the
# machine's own libvirt (bookworm's 9.0), which stays installed and
# untouched.
#
#   tests/libvirt/on-libvirt.sh [--suite SUITE] [TEST.py MODE]...
#
# SUITE: bookworm-backports (default) or bookworm, the control: the same
# tree with bookworm's libvirt shows what the tree itself changes.  With no
# tests named: test_attach.py single, test_attach.py all and test_stream.py
# rotate, as meson runs them, each a TAP stream.
#
# That libvirt lives in a bookworm tree of its own,
# $RINGSIDE_CACHE/libvirt-SUITE/root: debootstrap's minbase, then
# libvirt-daemon-system and libvirt-clients from SUITE, the bookworm
# libraries the ringside program and the QEMU fork load (read off the
# host's binaries) and the firmware packages.  Built once, kept until the
# list changes.  Each test runs chrooted into it, in a mount namespace of its
# own holding the repository, the build and the cache at the paths they
# have outside, and /dev, /proc and /sys: libvirtd, its virtlogd and
# its libvirt-qemu user start there as the tests start them on the host,
# and ringside (built on the host) talks to them through that libvirt0.
#
# Needs root (else a TAP skip) and, the first time, the archive.  test.sh
# runs test_attach.py single on 11.3 (meson test libvirt-11-attach); the
# rest on demand (docs/libvirt.md has the results).
#
# Environment: RINGSIDE_CACHE; RINGSIDE_BIN, the ringside program (default
# $RINGSIDE_ROOT/build/collector/ringside; its build directory is bound in);
# RINGSIDE_DEBIAN_MIRROR (default: the mirror apt uses for bookworm).

set -euo pipefail

prog=on-libvirt
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"

ringside=${RINGSIDE_BIN:-$RINGSIDE_ROOT/build/collector/ringside}
build=$(dirname "$(dirname "$ringside")")
fork=$RINGSIDE_CACHE/qemu/build/qemu-system-x86_64
suite=bookworm-backports
if [ "${1:-}" = --suite ]; then
    suite=${2:?--suite needs bookworm-backports or bookworm}
    shift 2
fi
case $suite in
bookworm-backports | bookworm) ;;
*) die "--suite must be bookworm-backports or bookworm, not $suite" ;;
esac
dir=$RINGSIDE_CACHE/libvirt-$suite
root=$dir/root
# installed as an operator would: apt install -t SUITE ...
want="libvirt-daemon-system libvirt-clients"

if [ "$(id -u)" -ne 0 ]; then
    echo "1..0 # SKIP needs root to run libvirtd"
    exit 0
fi
[ -x "$ringside" ] || die "$ringside not built (./scripts/test.sh builds it)"
[ -x "$fork" ] || die "$fork not built (scripts/build-qemu.sh)"
command -v debootstrap >/dev/null || die "debootstrap not found"
if pgrep -x libvirtd >/dev/null || pgrep -x virtqemud >/dev/null; then
    die "a libvirt daemon runs on the host; stop it first (both would" \
        "manage the same cgroups and /dev/kvm)"
fi

# The packages holding the shared libraries a binary loads, on the host.
lib_packages() {
    ldd "$@" | awk '/=> \// { print $3 }' | sort -u | while read -r f; do
        # usrmerge: dpkg may know the file under /lib or /usr/lib
        dpkg -S "$f" 2>/dev/null || dpkg -S "/usr${f#/usr}" 2>/dev/null ||
            dpkg -S "${f#/usr}" 2>/dev/null || die "no package owns $f"
    done | cut -d: -f1 | sort -u | grep -vx 'libvirt0' | tr '\n' ' '
}

# and the firmware the fork loads from where Debian puts it (libvirt-xml
# gives it -L for each)
packages="python3 procps seabios ipxe-qemu qemu-system-data"
packages+=" $(lib_packages "$ringside" "$fork")"
key=$(echo "$want $packages" | sha256sum | cut -c1-16)

if [ "$(cat "$dir/key" 2>/dev/null)" != "$key" ]; then
    m=$(debian_mirror)
    echo "# $prog: building $root from $m" >&2
    [ -d "$root" ] && unmount_under "$root"
    rm -rf --one-file-system "$root" "$dir/key"
    mkdir -p "$dir" "$RINGSIDE_CACHE/libvirt-debs"
    debootstrap --variant=minbase --cache-dir="$RINGSIDE_CACHE/libvirt-debs" \
        bookworm "$root" \
        "$m" >"$dir/debootstrap.log" 2>&1 ||
        { tail -n 20 "$dir/debootstrap.log" >&2; die "debootstrap failed"; }
    cat >"$root/etc/apt/sources.list" <<EOF
deb $m bookworm main
deb $m bookworm-backports main
EOF
    # Packages' maintainer scripts must not start daemons in the tree.
    printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
    chmod +x "$root/usr/sbin/policy-rc.d"
    # shellcheck disable=SC2086
    unshare -m sh -ec "
        mount --bind /proc '$root/proc'
        chroot '$root' apt-get update -qq
        export DEBIAN_FRONTEND=noninteractive
        chroot '$root' apt-get install -y -qq --no-install-recommends $packages
        chroot '$root' apt-get install -y -qq --no-install-recommends \
            -t $suite $want
        chroot '$root' apt-get clean" >"$dir/apt.log" 2>&1 ||
        { tail -n 20 "$dir/apt.log" >&2; die "installing libvirt failed"; }
    echo "$key" >"$dir/key"
fi
version=$(chroot "$root" dpkg-query -W -f="\${Version}" libvirt-daemon)
echo "# libvirt $version in $root"

[ $# -gt 0 ] || set -- test_attach.py single test_attach.py all \
    test_stream.py rotate
# Bind mounts in a private namespace: they go with the last process in it.
rc=0
while [ $# -ge 2 ]; do
    echo "# $1 $2 on libvirt $version"
    # The tree's root a mount of its own: libvirt makes QEMU's mount
    # namespace by turning / into a slave, which only a mount point can be.
    unshare -m --propagation private sh -ec "
        mount --bind '$root' '$root'
        for d in proc sys; do mount --rbind /\$d '$root/'\$d; done
        # /dev as a container has it: devtmpfs, and a devpts of its own
        # that /dev/ptmx opens (this machine stacks two on the host's)
        mount -t devtmpfs devtmpfs '$root/dev'
        mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts \
            '$root/dev/pts'
        mount --bind '$root/dev/pts/ptmx' '$root/dev/ptmx'
        mount -t tmpfs -o mode=1777 shm '$root/dev/shm'
        mount -t tmpfs tmpfs '$root/run'
        mkdir '$root/run/lock'
        mount -t tmpfs tmpfs '$root/tmp'
        for d in '$RINGSIDE_ROOT' '$build' '$RINGSIDE_CACHE'; do
            mkdir -p '$root'\$d
            mount --bind \$d '$root'\$d
        done
        exec chroot '$root' env RINGSIDE_CACHE='$RINGSIDE_CACHE' \
            RINGSIDE_BIN='$ringside' python3 \
            '$RINGSIDE_ROOT/tests/libvirt/$1' '$2'" || rc=1
    shift 2
done
exit $rc
