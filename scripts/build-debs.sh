#!/usr/bin/env bash
# Build ringside's Debian packages from this tree, for operators who install
# rather than build:
#   ringside        the ringside program, its man page and the docs
#   ringside-qemu   the QEMU fork in /usr/lib/ringside/qemu/, beside the
#                   distribution's QEMU, and the drop-in
#                   /usr/lib/ringside/bin/qemu-system-x86_64 (ringside qemu)
#   ringside-guest  the patched 6.1 guest kernel and the initramfs that
#                   ringside run boots, in /usr/lib/ringside/guest/
#   linux-image-*   the patched guest kernels as the kernel's own
#                   make bindeb-pkg makes them, for guest images
# Builds what is missing first (build-all.sh), then the packages with
# dpkg-deb into $RINGSIDE_CACHE/debs/, and runs lintian on them; its
# output is printed and kept in $RINGSIDE_CACHE/debs/lintian.txt.
#
# Usage: build-debs.sh [--kernels "6.1 6.12"] [--no-lintian]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
prog=build-debs

kernels="6.1"
lintian=1
while [ $# -gt 0 ]; do
    case $1 in
    --kernels) kernels=$2; shift ;;
    --no-lintian) lintian=0 ;;
    *) die "usage: build-debs.sh [--kernels \"6.1 6.12\"] [--no-lintian]" ;;
    esac
    shift
done

for v in $kernels; do
    [ -d "$RINGSIDE_ROOT/guest-kernel/$v" ] || die "no guest kernel series $v"
done

stage_begin deps
"$RINGSIDE_ROOT/scripts/install-deps.sh" build
missing=()
for p in fakeroot lintian help2man rsync kmod; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
        missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    [ "$(id -u)" -eq 0 ] || die "missing packages (${missing[*]}); run as root"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends "${missing[@]}" >/dev/null
fi
stage_end

stage_begin build
"$RINGSIDE_ROOT/scripts/build-all.sh" build >/dev/null
for v in $kernels; do
    [ "$v" = 6.1 ] ||
        "$RINGSIDE_ROOT/scripts/build-kernel.sh" --kernel-version "$v" >/dev/null
done
stage_end

version=$(sed -n "s/^  version: '\(.*\)',$/\1/p" "$RINGSIDE_ROOT/meson.build")
[ -n "$version" ] || die "no version in meson.build"
debver=$version-1
arch=$(dpkg --print-architecture)
out=$RINGSIDE_CACHE/debs
stage=$out/stage
rm -rf "$stage"
mkdir -p "$stage" "$out"
rm -f "$out"/*.deb

# The collector again, as the package ships it: optimised, no build paths.
stage_begin collector
mbuild=$out/meson
flags_stamp=$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --export=sh | sha256sum | cut -c1-16)
if [ "$(cat "$mbuild/.flags" 2>/dev/null)" != "$flags_stamp" ]; then
    rm -rf "$mbuild"
fi
if [ ! -f "$mbuild/build.ninja" ]; then
    # Debian's hardening flags, as debhelper would pass them.
    CFLAGS=$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get CFLAGS) \
    CPPFLAGS=$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get CPPFLAGS) \
    LDFLAGS=$(DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get LDFLAGS) \
    meson setup "$mbuild" "$RINGSIDE_ROOT" --buildtype=plain \
        -Dcache_dir=/nonexistent >"$out/meson-setup.log" 2>&1 ||
        die "meson setup failed (see $out/meson-setup.log)"
    echo "$flags_stamp" >"$mbuild/.flags"
fi
ninja -C "$mbuild" collector/ringside >/dev/null || die "building ringside failed"
stage_end

# Every package's /usr/share/doc/PKG: copyright and a changelog.
doc_files() {
    local pkg=$1 root=$2 doc
    doc=$root/usr/share/doc/$pkg
    mkdir -p "$doc"
    cat >"$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ringside
Source: https://github.com/ringside/ringside

Files: *
Copyright: 2026 The ringside authors
License: GPL-2+

License: GPL-2+
 This program is free software; you can redistribute it and/or modify
 it under the terms of the GNU General Public License as published by
 the Free Software Foundation; either version 2 of the License, or
 (at your option) any later version.
 .
 On Debian systems, the complete text of the GNU General Public License
 version 2 can be found in "/usr/share/common-licenses/GPL-2".
EOF
    if [ "$pkg" = ringside-qemu ] || [ "$pkg" = ringside-guest ]; then
        cat >>"$doc/copyright" <<EOF

Comment: This package holds a build of software that is not ringside's:
 ${3:-}
 Its sources are Debian's: ${4:-}, with ringside's
 hw/char/ files and qemu-fork/wiring.patch (or guest-kernel/) applied.
 Those are under the same GPL-2+ terms as above.
EOF
    fi
    printf '%s (%s) unstable; urgency=medium\n\n  * Built from the ringside tree at %s.\n\n -- ringside maintainers <ringside@example.org>  %s\n' \
        "$pkg" "$debver" \
        "$(git -C "$RINGSIDE_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
        "$(date -R -d @"${SOURCE_DATE_EPOCH:-$(git -C "$RINGSIDE_ROOT" log -1 --format=%ct 2>/dev/null || date +%s)}")" |
        gzip -9n >"$doc/changelog.Debian.gz"
}

# control PKG ROOT DEPENDS SUMMARY DESCRIPTION: DEBIAN/control and md5sums.
control() {
    local pkg=$1 root=$2 depends=$3 summary=$4 desc=$5 size
    mkdir -p "$root/DEBIAN"
    size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
    {
        echo "Package: $pkg"
        echo "Version: $debver"
        echo "Architecture: $arch"
        echo "Maintainer: ringside maintainers <ringside@example.org>"
        echo "Installed-Size: $size"
        [ -n "$depends" ] && echo "Depends: $depends"
        echo "Section: utils"
        echo "Priority: optional"
        echo "Homepage: https://github.com/ringside/ringside"
        echo "Description: $summary"
        echo "$desc" | fold -s -w 72 | sed 's/ *$//; s/^/ /'
    } >"$root/DEBIAN/control"
    (cd "$root" && find . -type f ! -path './DEBIAN/*' -printf '%P\0' |
        sort -z | xargs -0r md5sum >DEBIAN/md5sums)
}

# The shared libraries the ELF files under ROOT need, as Depends.
shlibs() {
    local root=$1; shift
    mkdir -p "$root/debian"
    : >"$root/debian/control"
    (cd "$root" && dpkg-shlibdeps -O "$@" 2>/dev/null) |
        sed -n 's/^shlibs:Depends=//p'
    rm -rf "$root/debian"
}

build_deb() {
    local root=$1
    find "$root" -type d -exec chmod 0755 {} +
    dpkg-deb --root-owner-group -Zxz --build "$root" "$out" >/dev/null
}

stage_begin packages
# ---- ringside ---------------------------------------------------------------
r=$stage/ringside
install -D -m0755 "$mbuild/collector/ringside" "$r/usr/bin/ringside"
strip --strip-unneeded --remove-section=.comment --remove-section=.note \
    "$r/usr/bin/ringside"
mkdir -p "$r/usr/share/man/man1"
help2man --no-info --version-string="$version" \
    --name="checks that what a guest kernel logged reached its console" \
    "$r/usr/bin/ringside" | gzip -9n >"$r/usr/share/man/man1/ringside.1.gz"
doc_files ringside "$r"
install -m0644 "$RINGSIDE_ROOT/README.md" "$r/usr/share/doc/ringside/"
mkdir -p "$r/usr/share/doc/ringside/docs"
install -m0644 "$RINGSIDE_ROOT"/docs/*.md "$RINGSIDE_ROOT"/docs/*.png \
    "$r/usr/share/doc/ringside/docs/"
control ringside "$r" "$(shlibs "$r" usr/bin/ringside)" \
    "checks that what a guest kernel logged reached its console" \
    "ringside reads a QEMU guest's printk ring from guest memory and, with \
the ringside-serial UART of the ringside-qemu package, judges every line \
of the guest's serial console against it: ok with its latency, corrupt, \
torn, duplicated, reordered or missing. It boots guests, fuzzes panic \
paths, follows libvirt domains and stands in for qemu-system-x86_64 in \
tools that start QEMU themselves."
build_deb "$r"

# ---- ringside-qemu ------------------------------------------------------------
r=$stage/ringside-qemu
qemu_src_ver=$(dpkg-query -W -f='${Version}' qemu-system-data 2>/dev/null || true)
install -D -m0755 "$RINGSIDE_CACHE/qemu/build/qemu-system-x86_64" \
    "$r/usr/lib/ringside/qemu/qemu-system-x86_64"
strip --strip-unneeded --remove-section=.comment --remove-section=.note \
    "$r/usr/lib/ringside/qemu/qemu-system-x86_64"
# The drop-in: ringside itself, which run by this name is "ringside qemu".
mkdir -p "$r/usr/lib/ringside/bin"
ln -s ../../../bin/ringside "$r/usr/lib/ringside/bin/qemu-system-x86_64"
# AppArmor: the rules libvirt's domains need to run the drop-in and the
# fork, included from libvirt's local abstraction by the postinst.
install -D -m0644 "$RINGSIDE_ROOT/packaging/apparmor/ringside-qemu" \
    "$r/etc/apparmor.d/abstractions/ringside-qemu"
mkdir -p "$r/DEBIAN"
echo /etc/apparmor.d/abstractions/ringside-qemu >"$r/DEBIAN/conffiles"
install -m0755 "$RINGSIDE_ROOT/packaging/ringside-qemu.postinst" "$r/DEBIAN/postinst"
install -m0755 "$RINGSIDE_ROOT/packaging/ringside-qemu.postrm" "$r/DEBIAN/postrm"
doc_files ringside-qemu "$r" "QEMU 7.2's qemu-system-x86_64 (GPL-2)" \
    "qemu $(dpkg-query -W -f='${Version}' qemu-system-data 2>/dev/null)"
control ringside-qemu "$r" \
    "$(shlibs "$r" usr/lib/ringside/qemu/qemu-system-x86_64), ringside (= $debver), seabios, ipxe-qemu, qemu-system-data" \
    "QEMU with the ringside-serial console UART" \
    "A build of QEMU's qemu-system-x86_64 with ringside-serial, a 16550A \
that timestamps every byte the guest transmits and checks the console \
against the guest's printk ring. It is installed beside the \
distribution's QEMU, in /usr/lib/ringside/qemu/, and uses Debian's \
firmware packages. /usr/lib/ringside/bin/qemu-system-x86_64 takes a \
plain QEMU command line and runs it with ringside-serial as ttyS0."
build_deb "$r"

# ---- ringside-guest -------------------------------------------------------------
r=$stage/ringside-guest
install -D -m0644 "$RINGSIDE_CACHE/kernel/bzImage" \
    "$r/usr/lib/ringside/guest/bzImage"
install -D -m0644 "$RINGSIDE_CACHE/initramfs/initramfs.cpio.gz" \
    "$r/usr/lib/ringside/guest/initramfs.cpio.gz"
kver=$(cat "$RINGSIDE_CACHE/linux/include/config/kernel.release")
doc_files ringside-guest "$r" "Linux $kver (GPL-2)" \
    "linux-source-6.1 $(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null)"
control ringside-guest "$r" "" \
    "guest kernel and initramfs that ringside run boots" \
    "Linux $kver with ringside's printk handshake and atomic 8250 console \
patches, and the small initramfs whose /init runs ringside's test cases \
(panics, floods, poweroff). ringside run boots them under ringside-qemu \
with no build. They are for guests only: nothing here is installed for \
the host to boot."
build_deb "$r"
stage_end

# ---- the guest kernels, as make bindeb-pkg packages them ----------------------
stage_begin bindeb-pkg
for v in $kernels; do
    sfx=$([ "$v" = 6.1 ] || echo "-$v")
    tree=$RINGSIDE_CACHE/linux$sfx
    rm -f "$RINGSIDE_CACHE"/linux-image-*"$sfx"*.deb 2>/dev/null || true
    # The same make variables as build-kernel.sh, so nothing rebuilds.
    kmake=(make -C "$tree" LOCALVERSION= KBUILD_BUILD_USER=ringside
        KBUILD_BUILD_HOST=ringside KBUILD_BUILD_VERSION=1)
    command -v ccache >/dev/null && kmake+=(CC="ccache gcc")
    rel=$(cat "$tree/include/config/kernel.release")
    # The package again only when the kernel it holds changed.
    kstamp=$(sha256sum "$tree/arch/x86/boot/bzImage" "$tree/.config" | sha256sum | cut -c1-16)
    if [ -f "$out/kernel-$v/linux-image-${rel}_$rel-1_$arch.deb" ] &&
        [ "$(cat "$out/kernel-$v/stamp" 2>/dev/null)" = "$kstamp" ]; then
        cp "$out/kernel-$v/linux-image-${rel}_$rel-1_$arch.deb" "$out/"
        continue
    fi
    (flock 9 && DEBEMAIL=ringside@example.org DEBFULLNAME="ringside maintainers" \
        KDEB_PKGVERSION="$rel-1" "${kmake[@]}" -j"$(nproc)" bindeb-pkg \
        >"$out/bindeb-pkg-$v.log" 2>&1) 9>"$tree.lock" ||
        die "make bindeb-pkg for $v failed (see $out/bindeb-pkg-$v.log)"
    mkdir -p "$out/kernel-$v"
    rm -f "$out/kernel-$v"/*.deb
    mv "$RINGSIDE_CACHE"/linux-image-"$rel"_*.deb "$out/kernel-$v/"
    echo "$kstamp" >"$out/kernel-$v/stamp"
    cp "$out/kernel-$v/linux-image-${rel}_$rel-1_$arch.deb" "$out/"
    rm -f "$RINGSIDE_CACHE"/linux-{headers,libc-dev}*"$rel"*.deb \
        "$RINGSIDE_CACHE"/linux-upstream_*.{buildinfo,changes} \
        "$RINGSIDE_CACHE"/linux-libc-dev_*.deb 2>/dev/null || true
done
stage_end

if [ "$lintian" = 1 ]; then
    stage_begin lintian
    # Every tag, informational ones too; the kernel's package is lintian's
    # verdict on make bindeb-pkg as much as on ringside.
    lintian -I --tag-display-limit 0 "$out"/*.deb 2>&1 |
        grep -v '^running with root' >"$out/lintian.txt" || true
    stage_end
    echo "lintian ($(grep -c . "$out/lintian.txt" || true) tags, $out/lintian.txt):"
    sed 's/^/  /' "$out/lintian.txt"
fi
stage_summary
ls -1 "$out"/*.deb
