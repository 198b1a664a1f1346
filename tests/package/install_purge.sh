#!/usr/bin/env bash
# install_purge - the Debian packages as a new user meets them (issue 19):
# in a guest whose root is writable (tests/vm/run --writable-root), install
# ktrack-dkms and ktrackctl from build/deb (make deb), let DKMS build
# ktrack.ko for the running kernel, load the installed module with the
# installed ktrackctl (with an option from /etc/modprobe.d), record and
# report; upgrade to the next Debian revision (DKMS rebuilds; the idle old
# module is unloaded); purge with the module loaded, and find nothing left
# behind.
#
#   make deb
#   KTRACK_SUITE=package tests/vm/run --writable-root --kernel 6.12 -- tests/kernel/run-all
#
# The guest sees one kernel, as a machine that runs it would: the other
# kernels' /lib/modules trees are removed (in the overlay only), so DKMS
# builds for this one.  Output: TAP.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$root/tests/kernel/lib/tap.sh"
rel=$(uname -r)
debs=${KTRACK_DEB_DIR:-$root/build/deb}
T=$(mktemp -d /tmp/package.XXXXXX)
export DEBIAN_FRONTEND=noninteractive

finish() {
	echo "1..$n"
	((fail)) && [ -n "${KTRACK_VM_OUT:-}" ] && cp -r "$T" "$KTRACK_VM_OUT/package"
	exit "$fail"
}
note() { echo "# $(date +%T) $*"; }
# dkms_installed: DKMS says ktrack is built and installed for this kernel.
dkms_installed() { dkms status -m ktrack -v "$upstream" -k "$rel" | grep -q ': installed'; }

if ! touch /usr/.ktrack-writable 2>/dev/null; then
	notok "the root is writable (run this in 'tests/vm/run --writable-root')"
	finish
fi
rm -f /usr/.ktrack-writable
dkms_deb=$(ls "$debs"/ktrack-dkms_*_all.deb 2>/dev/null | head -n1)
ctl_deb=$(ls "$debs"/ktrackctl_*_amd64.deb 2>/dev/null | head -n1)
if [ -z "$dkms_deb" ] || [ -z "$ctl_deb" ]; then
	notok "make deb built the packages in $debs"
	finish
fi
version=$(dpkg-deb -f "$ctl_deb" Version)
upstream=${version%-*}

for d in /lib/modules/*; do
	[ "$(basename "$d")" = "$rel" ] || rm -rf "$d"
done
# man-db's trigger would reindex every manual page under emulation.
rm -f /var/lib/man-db/auto-update

# depmod's indexes belong to the kernel (its package ships them; DKMS runs
# depmod): a guest whose /lib/modules/RELEASE holds only the headers' links
# (6.1 here) gets them made at the first DKMS build, so make them first.
depmod "$rel" 2>/dev/null || true

# What the packages may touch, listed before and after.
snapshot() {
	find /usr/bin /usr/sbin /usr/src /usr/share/man/man1 /usr/share/bash-completion /usr/share/doc \
		/etc /lib/udev/rules.d /lib/modules /var/lib/dkms -xdev 2>/dev/null |
		grep -vE '^/etc/(ld\.so\.cache|mtab)$' | sort
}
snapshot >"$T/before"
dpkg-query -W -f='${Package} ${Version} ${Status}\n' >"$T/dpkg-before"

note "dpkg -i (DKMS builds under emulation: minutes)"
start=$(date +%s)
if dpkg -i "$dkms_deb" "$ctl_deb" >"$T/install.log" 2>&1; then
	ok "dpkg -i ktrack-dkms ktrackctl ($version; DKMS built ktrack.ko in $(($(date +%s) - start)) s)"
else
	notok "dpkg -i ktrack-dkms ktrackctl" "$(tail -n 20 "$T/install.log")"
	cat /var/lib/dkms/ktrack/*/build/make.log 2>/dev/null | tail -n 20 | sed 's/^/# /'
	finish
fi
check "dkms status: ktrack $upstream installed for $rel" dkms_installed
check "ktrackctl is /usr/bin/ktrackctl" bash -c '[ "$(command -v ktrackctl)" = /usr/bin/ktrackctl ]'
check "ktrackctl --version is the package's upstream version $upstream" \
	bash -c "[ \"\$(ktrackctl --version)\" = 'ktrackctl $upstream' ]"
check "ktrackctl status finds the DKMS build in /lib/modules/$rel/updates/dkms/" \
	bash -c "cd / && ktrackctl status | grep -qF 'module file: /lib/modules/$rel/updates/dkms/ktrack.ko'"
check "the man page is installed and names ktrackctl" \
	bash -c "zcat /usr/share/man/man1/ktrackctl.1.gz | grep -q '^\.TH KTRACKCTL 1'"
check "bash completion completes ktrackctl" \
	bash -c '. /usr/share/bash-completion/completions/ktrackctl && complete -p ktrackctl'
check "the udev rule for /dev/ktrack is installed" grep -q 'KERNEL=="ktrack"' /lib/udev/rules.d/60-ktrack.rules
for f in /etc/modules-load.d/ktrack.conf /etc/modprobe.d/ktrack.conf; do
	check "$f is an example with every line commented" \
		bash -c "[ -f $f ] && ! grep -vE '^[[:space:]]*(#|\$)' $f"
done

# The installed tool loads the DKMS-built module (libkmod's lookup: nothing
# in the build tree is used), with the options of /etc/modprobe.d.
echo 'options ktrack max_sessions=7' >>/etc/modprobe.d/ktrack.conf
if out=$(cd / && ktrackctl load 2>&1); then ok "ktrackctl load"; else notok "ktrackctl load" "$out"; fi
check "the options line of /etc/modprobe.d/ktrack.conf applied (max_sessions=7)" \
	bash -c '[ "$(cat /sys/module/ktrack/parameters/max_sessions)" = 7 ]'
check "ktrackctl version: tool and module $upstream agree, no note" \
	bash -c "ktrackctl version 2>&1 | grep -q '^module    $upstream ' && ! ktrackctl version 2>&1 | grep -q note:"

# Record and report, as the README's first session does: a program of a
# name of its own calls sync(2), and the report shows its calls.  (The
# guest runs multi-threaded TCG for DKMS's sake, which mis-emulates code
# patching of a function the other vCPU is running (tests/vm/run): the
# probe is on one nothing else in the guest calls.)
cp "$(command -v sync)" "$T/ktrack-syncer"
# syncs_recorded WHAT DIR AS...: 'AS ktrackctl record -o DIR/p.ktrack -d 4s
# RECORD...' (the array) while ktrack-syncer calls sync(2) 3 times, then
# 'AS ktrackctl report' shows the 3 calls.  AS: nothing for root.
syncs_recorded() {
	local what=$1 dir=$2 rec rc
	shift 2
	(cd / && "$@" ktrackctl record -o "$dir/p.ktrack" -d 4s "${RECORD[@]}" 2>"$dir/record.err") &
	rec=$!
	if wait_line "$dir/record.err" '^recording to '; then
		ok "$what: record began"
		for _ in 1 2 3; do "$T/ktrack-syncer"; done
	else
		notok "$what: record began" "$(cat "$dir/record.err")"
	fi
	wait "$rec"
	rc=$?
	check "$what: record exits 0" bash -c "exit $rc"
	(cd / && "$@" ktrackctl report "$dir/p.ktrack") >"$dir/report.txt" 2>&1
	check "$what: report shows ktrack-syncer's 3 sync(2) calls" \
		bash -c "[ \$(grep 'ktrack-syncer' '$dir/report.txt' | grep -c __x64_sys_sync) = 3 ]"
}
RECORD=('p:s __x64_sys_sync')
syncs_recorded "root" "$T"
# The same as a member of group ktrack, without root (docs/ACCESS.md): the
# package made the group; the module is reloaded with group_access=1; the
# udev rule gives the device to the group (no udevd in the guest: done by
# hand, as the rule would); root shares a session, the member records it.
check "the ktrack group exists (the udev rule's GROUP)" getent group ktrack
check "the udev rule gives /dev/ktrack to group ktrack, 0660 with group_access=1" \
	bash -c "grep -q 'GROUP=\"ktrack\"' /lib/udev/rules.d/60-ktrack.rules && grep -q 'ENV{DEVMODE}==\"0660\", MODE=\"0660\"' /lib/udev/rules.d/60-ktrack.rules"
kgid=$(getent group ktrack | cut -d: -f3)
mdir=$(mktemp -d /tmp/ktrack-member-XXXXXX) # $T is root's alone (0700)
chmod 0777 "$mdir"
ktrackctl unload >/dev/null 2>&1
if out=$(cd / && ktrackctl load --param group_access=1 2>&1) && chgrp ktrack /dev/ktrack &&
	[ "$(stat -c %a /dev/ktrack)" = 660 ]; then
	ok "ktrackctl load --param group_access=1: /dev/ktrack 0660, group ktrack"
else
	notok "ktrackctl load --param group_access=1: /dev/ktrack 0660, group ktrack" "$out $(ls -l /dev/ktrack)"
fi
(cd / && ktrackctl session create lab --group && ktrackctl probe add -s lab 'p:s __x64_sys_sync' &&
	ktrackctl session start lab) >"$T/lab.out" 2>&1
check "root shares session lab with the group" grep -q "shared with the ktrack group" "$T/lab.out"
RECORD=(-s lab)
syncs_recorded "a member of group ktrack, session lab" "$mdir" setpriv --reuid=4243 --regid="$kgid" --clear-groups --inh-caps=-all --
out=$(cd / && setpriv --reuid=4243 --regid="$kgid" --clear-groups --inh-caps=-all -- \
	ktrackctl probe add -s lab 'p:x vfs_read' 2>&1)
check "a member cannot arm a probe: it is told it needs root" grep -q 'needs root (CAP_PERFMON or CAP_SYS_ADMIN)' <<<"$out"
ktrackctl session destroy lab >/dev/null 2>&1

# Upgrade: the same files as the next Debian revision, the module loaded
# and idle.  dpkg runs the old prerm (which unloads the idle module; DKMS
# removes the old build) and the new postinst (DKMS builds again).
next=${upstream}-$((${version##*-} + 1))
for deb in "$dkms_deb" "$ctl_deb"; do
	dir=$T/repack.$(basename "$deb" .deb)
	dpkg-deb -R "$deb" "$dir"
	sed -i "s/^Version: .*/Version: $next/" "$dir/DEBIAN/control"
	dpkg-deb -b "$dir" "$T/$(basename "$deb" | sed "s/_${version}_/_${next}_/")" >/dev/null
done
note "upgrade (DKMS builds again)"
start=$(date +%s)
if dpkg -i "$T"/ktrack-dkms_"${next}"_all.deb "$T"/ktrackctl_"${next}"_amd64.deb >"$T/upgrade.log" 2>&1; then
	ok "upgrade to $next ($(($(date +%s) - start)) s)"
else
	notok "upgrade to $next" "$(tail -n 20 "$T/upgrade.log")"
fi
check "the upgrade rebuilt the module for $rel" grep -qF "Building initial module for $rel" "$T/upgrade.log"
for p in ktrack-dkms ktrackctl; do
	check "dpkg says $p $next is installed" \
		bash -c "[ \"\$(dpkg-query -W -f='\${Version} \${Status}' $p)\" = '$next install ok installed' ]"
done
check "dkms status after the upgrade: installed for $rel" dkms_installed
check "the upgrade unloaded the idle old module" bash -c '! [ -e /sys/module/ktrack ]'
check "the upgraded module loads" bash -c 'cd / && ktrackctl load'

# Purge with the module loaded: nothing of ktrack is left, in the kernel or
# on disk.  DKMS's own signing key (/var/lib/dkms/mok.*, made at its first
# build) belongs to dkms.
if dpkg --purge ktrackctl ktrack-dkms >"$T/purge.log" 2>&1; then ok "dpkg --purge"; else
	notok "dpkg --purge" "$(tail -n 20 "$T/purge.log")"
fi
check "purge unloaded the module" bash -c '! [ -e /sys/module/ktrack ]'
snapshot | grep -vE '^/var/lib/dkms(/mok\.(key|pub))?$' >"$T/after"
grep -vE '^/var/lib/dkms(/mok\.(key|pub))?$' "$T/before" >"$T/before.cmp"
check "purge leaves no file behind" diff "$T/before.cmp" "$T/after"
dpkg-query -W -f='${Package} ${Version} ${Status}\n' >"$T/dpkg-after"
check "dpkg's database is as before" diff "$T/dpkg-before" "$T/dpkg-after"
finish
