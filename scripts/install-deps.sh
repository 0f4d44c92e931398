#!/usr/bin/env bash
# Install the Debian packages ringside needs to build and test, if missing.
# Usage: install-deps.sh [build|test]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

build_pkgs=(build-essential pkg-config ninja-build meson ccache bc python3
    dpkg-dev libglib2.0-dev libjson-glib-dev libpixman-1-dev zlib1g-dev libfdt-dev
    libslirp-dev libattr1-dev libcap-ng-dev libseccomp-dev libaio-dev
    libvirt-dev libvirt-glib-1.0-dev libxml2-dev
    flex bison libelf-dev libssl-dev cpio gzip xz-utils
    linux-source-6.1 seabios qemu-system-data ipxe-qemu)
test_pkgs=(linux-source-6.12 clang libclang-rt-14-dev crash makedumpfile chromium
    libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients
    libvirt-daemon-system virtinst qemu-system-x86
    slurmctld slurmd slurm-client munge systemd-journal-remote
    debootstrap apparmor)

want=("${build_pkgs[@]}")
[ "${1:-build}" = test ] && want+=("${test_pkgs[@]}")

missing=()
for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
        missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

[ "$(id -u)" -eq 0 ] ||
    die "missing packages (${missing[*]}); run as root or install them"
echo "install-deps: installing ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
