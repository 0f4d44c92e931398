#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# build-distro-initramfs.sh - a real distribution guest for the tests: Debian
# bookworm's user space with systemd, from Debian's archive, as an initramfs
# booted with rdinit=/sbin/init.  Cached outside the repo.
#
# Stages (each skipped when its inputs are unchanged):
#   debootstrap  `debootstrap --variant=minbase --include=systemd-sysv,...`
#                from the mirror apt uses for bookworm (RINGSIDE_DEBIAN_MIRROR
#                overrides it), without docs, man pages or locales; packed as
#                $CACHE/distro/base.cpio.gz and the tree removed.  Keyed on
#                the suite, the packages, what is left out and debootstrap's
#                version, not on this whole script: a change to the guest's
#                units repacks only the overlay.  Needs root.
#   overlay      the guest's configuration, written by this script:
#                  - systemd's status on the console (the kernel command line
#                    says systemd.show_status=1);
#                  - serial-getty@ttyS0 logging root in automatically; root's
#                    login shell says so on the console and leaves
#                    /run/ringside-login;
#                  - journald forwarding to /dev/ttyS0 up to info
#                    (ForwardToConsole=yes; systemd.journald.forward_to_console=0
#                    on the command line turns it off);
#                  - ringside-chatter.service: a shell loop writing a few
#                    lines to /dev/console;
#                  - ringside-flaky.service: fails twice, restarted by
#                    systemd, then succeeds;
#                  - ringside-end.service: once root has logged in and both
#                    services are done, panics the guest (echo c >
#                    /proc/sysrq-trigger) or powers it off (systemctl
#                    poweroff), as ringside.end=panic|poweroff says; without
#                    it, as ringside run's case says (ringside.case=).
#                Packed as $CACHE/distro/overlay.cpio.gz.
#   join         base + overlay, two gzip'd newc archives one after the other
#                (the kernel unpacks each in turn, the later one's files
#                replacing the earlier one's), as
#                $CACHE/distro/initramfs.cpio.gz.
#
# Environment:
#   RINGSIDE_CACHE          cache dir (default ~/.cache/ringside)
#   RINGSIDE_DEBIAN_MIRROR  Debian mirror (default: the one apt uses for
#                           bookworm main, else http://deb.debian.org/debian)
#
# Output: one timing line, then the path of the archive, on stdout; a failure
# ends with one line "build-distro-initramfs: error: ..." on stderr.

set -euo pipefail

prog=build-distro-initramfs
# die, debian_mirror, unmount_under, RINGSIDE_ROOT, RINGSIDE_CACHE
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
trap 'die "unexpected failure (line $LINENO: $BASH_COMMAND)"' ERR

suite=bookworm
include=systemd-sysv,udev,util-linux,procps
out=$RINGSIDE_CACHE/distro
base=$out/base.cpio.gz
overlay=$out/overlay.cpio.gz
archive=$out/initramfs.cpio.gz
log=$out/debootstrap.log

# dpkg leaves these out of every package it unpacks; debootstrap's first
# stage extracts without dpkg, so the same paths are also removed after it.
nodoc='path-exclude=/usr/share/doc/*
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-exclude=/usr/share/lintian/*'
trim=(usr/share/doc usr/share/man usr/share/info usr/share/locale
	usr/share/lintian var/cache/apt var/lib/apt/lists var/log)

for tool in gzip cpio sha256sum flock; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool not found (scripts/install-deps.sh installs it)"
done

mkdir -p "$out"
exec 9>"$RINGSIDE_CACHE/.build-distro-initramfs.lock"
flock 9 || die "cannot lock $RINGSIDE_CACHE/.build-distro-initramfs.lock"

now() { date +%s; }
t_all=$(now)

debootstrap_version() {
	dpkg-query -W -f='${Version}' debootstrap 2>/dev/null || echo none
}
base_key=$({
	echo "$suite --variant=minbase --include=$include $(dpkg --print-architecture)"
	echo "$nodoc"
	echo "${trim[*]}"
	debootstrap_version
} | sha256sum | cut -c1-16)
overlay_key=$(sha256sum <"${BASH_SOURCE[0]}" | cut -c1-16)

# ---- debootstrap -----------------------------------------------------------
t0=$(now)
if [ -f "$base" ] && [ "$(cat "$base.key" 2>/dev/null)" = "$base_key" ]; then
	base_note=" (cached)"
else
	base_note=""
	t_pack=0
	[ "$(id -u)" -eq 0 ] || die "debootstrap needs root (or a cached $base)"
	command -v debootstrap >/dev/null 2>&1 ||
		die "debootstrap not found (scripts/install-deps.sh test installs it)"
	root=$out/rootfs.tmp
	# A failed run can leave debootstrap's /proc and /sys mounted in it.
	if [ -d "$root" ]; then
		unmount_under "$root"
		rm -rf --one-file-system "$root"
	fi
	rm -f "$base.key"
	mkdir -p "$root/etc/dpkg/dpkg.cfg.d" "$out/debs"
	echo "$nodoc" >"$root/etc/dpkg/dpkg.cfg.d/01-ringside-nodoc"
	m=$(debian_mirror)
	echo "$prog: debootstrap $suite from $m (log: $log)" >&2
	if ! debootstrap --variant=minbase --include="$include" \
		--cache-dir="$out/debs" "$suite" "$root" "$m" >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		die "debootstrap failed (log: $log)"
	fi
	for p in "${trim[@]}"; do
		find "$root/$p" -mindepth 1 -delete 2>/dev/null || true
	done
	# The build host's, copied in by debootstrap.
	rm -f "$root/etc/resolv.conf" "$root/etc/hostname"
	# The kernel opens it for init's stdio before anything mounts /dev.
	[ -c "$root/dev/console" ] || mknod -m 600 "$root/dev/console" c 5 1
	t_pack=$(now)
	(cd "$root" && find . -xdev -mindepth 1 | LC_ALL=C sort |
		cpio --quiet -o -H newc) | gzip -6n >"$base.tmp"
	mv -f "$base.tmp" "$base"
	echo "$base_key" >"$base.key"
	rm -rf --one-file-system "$root"
	t_pack=$(($(now) - t_pack))
fi
t_base=$(($(now) - t0))

# ---- overlay ---------------------------------------------------------------
t0=$(now)
if [ -f "$overlay" ] && [ "$(cat "$overlay.key" 2>/dev/null)" = "$overlay_key" ]; then
	overlay_note=" (cached)"
else
	overlay_note=""
	st=$out/overlay.tmp
	rm -rf "$st"
	mkdir -p "$st"
	# put PATH MODE: stdin to $st/PATH.
	put() {
		mkdir -p "$(dirname "$st/$1")"
		cat >"$st/$1"
		chmod "$2" "$st/$1"
	}
	echo ringside | put etc/hostname 644
	printf '127.0.0.1\tlocalhost\n127.0.1.1\tringside\n' | put etc/hosts 644
	# Set, so that this is no first boot: systemd-firstboot would prompt.
	echo ringside-distro | md5sum | cut -c1-32 | put etc/machine-id 444

	put etc/systemd/journald.conf.d/ringside.conf 644 <<-'EOF'
	[Journal]
	Storage=volatile
	ForwardToConsole=yes
	TTYPath=/dev/ttyS0
	MaxLevelConsole=info
	EOF
	put etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf 644 <<-'EOF'
	[Service]
	ExecStart=
	ExecStart=-/sbin/agetty --autologin root --keep-baud 115200,57600,38400,9600 - $TERM
	EOF
	mkdir -m 700 "$st/root"
	put root/.profile 644 <<-'EOF'
	# ~/.profile: executed by Bourne-compatible login shells.
	if [ "$BASH" ]; then
	  if [ -f ~/.bashrc ]; then
	    . ~/.bashrc
	  fi
	fi
	mesg n 2> /dev/null || true
	# ringside-end waits for this.
	if [ "$(tty)" = /dev/ttyS0 ]; then
	  echo "ringside-distro: root logged in on /dev/ttyS0"
	  : >/run/ringside-login
	fi
	EOF

	put usr/local/sbin/ringside-chatter 755 <<-'EOF'
	#!/bin/sh
	# User space writing to the console directly, between services.
	for i in 1 2 3 4 5; do
	    echo "ringside-chatter: line $i of 5 from a shell loop" >/dev/console
	    sleep 0.3
	done
	EOF
	put usr/local/sbin/ringside-flaky 755 <<-'EOF'
	#!/bin/sh
	# Fails on its first two attempts; systemd restarts it.
	n=$(($(cat /run/ringside-flaky 2>/dev/null || echo 0) + 1))
	echo $n >/run/ringside-flaky
	if [ $n -lt 3 ]; then
	    echo "ringside-flaky: attempt $n fails on purpose"
	    exit 1
	fi
	echo "ringside-flaky: attempt $n succeeds"
	EOF
	put usr/local/sbin/ringside-end 755 <<-'EOF'
	#!/bin/sh
	# End the run once root has logged in on ttyS0 and the two services
	# are done (120 s at most): ringside.end=panic|poweroff, else as
	# ringside run's case says.
	end= case_end=poweroff
	for w in $(cat /proc/cmdline); do
	    case $w in
	    ringside.end=*) end=${w#*=} ;;
	    ringside.case=*panic*) case_end=panic ;;
	    esac
	done
	end=${end:-$case_end}
	i=0
	while [ $i -lt 240 ]; do
	    # is-active of several units succeeds if any one is active
	    [ -e /run/ringside-login ] &&
	        systemctl -q is-active ringside-chatter.service &&
	        systemctl -q is-active ringside-flaky.service &&
	        break
	    sleep 0.5
	    i=$((i + 1))
	done
	[ -e /run/ringside-login ] || seen=" no login after 120 s,"
	# journald forwards a line to the console as it takes it in; --sync
	# returns once it has taken in all sent so far, so the services' last
	# lines are on the console before the end begins, however late a
	# loaded host let journald run.
	journalctl --sync 2>/dev/null || true
	unit=ringside-flaky.service
	echo "ringside-end:${seen-} $unit $(systemctl is-active $unit) after" \
	    "$(systemctl show -P NRestarts $unit) restarts; $end in 2 s" >/dev/console
	sleep 2
	case $end in
	panic) echo c >/proc/sysrq-trigger ;;
	*) systemctl --no-block poweroff ;;
	esac
	EOF

	unit() {
		put "etc/systemd/system/$1" 644
		mkdir -p "$st/etc/systemd/system/multi-user.target.wants"
		ln -s "../$1" "$st/etc/systemd/system/multi-user.target.wants/$1"
	}
	unit ringside-chatter.service <<-'EOF'
	[Unit]
	Description=ringside: a shell loop

	[Service]
	Type=oneshot
	RemainAfterExit=yes
	ExecStart=/usr/local/sbin/ringside-chatter
	EOF
	unit ringside-flaky.service <<-'EOF'
	[Unit]
	Description=ringside: fails twice

	[Service]
	Type=oneshot
	RemainAfterExit=yes
	ExecStart=/usr/local/sbin/ringside-flaky
	Restart=on-failure
	RestartSec=1
	EOF
	unit ringside-end.service <<-'EOF'
	[Unit]
	Description=ringside: the run's end
	After=ringside-chatter.service ringside-flaky.service

	[Service]
	ExecStart=/usr/local/sbin/ringside-end
	EOF
	ln -s /dev/null "$st/etc/systemd/system/systemd-firstboot.service"
	mkdir -p "$st/etc/systemd/system/getty.target.wants"
	ln -s /lib/systemd/system/serial-getty@.service \
		"$st/etc/systemd/system/getty.target.wants/serial-getty@ttyS0.service"

	# Parents first; only the paths written here (the base's directories
	# keep their modes, but for these, all 0755 as in the base).
	(cd "$st" && find . -mindepth 1 | LC_ALL=C sort |
		cpio --quiet -o -H newc -R 0:0) | gzip -9n >"$overlay.tmp"
	mv -f "$overlay.tmp" "$overlay"
	echo "$overlay_key" >"$overlay.key"
	rm -rf "$st"
fi

# ---- join ------------------------------------------------------------------
key="$base_key $overlay_key"
if [ ! -f "$archive" ] || [ "$(cat "$archive.key" 2>/dev/null)" != "$key" ]; then
	cat "$base" "$overlay" >"$archive.tmp"
	mv -f "$archive.tmp" "$archive"
	echo "$key" >"$archive.key"
fi
t_overlay=$(($(now) - t0))

echo "$prog: debootstrap $((t_base - ${t_pack:-0}))s$base_note, pack ${t_pack:-0}s$base_note, overlay ${t_overlay}s$overlay_note, total $(($(now) - t_all))s, $(($(stat -c %s "$archive") >> 20)) MiB"
echo "$archive"
