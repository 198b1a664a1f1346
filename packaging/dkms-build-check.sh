#!/usr/bin/env bash
# packaging/dkms-build-check.sh: DKMS builds ktrack.ko from the ktrack-dkms
# package (build/deb, made by 'make deb') for every target kernel, on this
# machine, in a private DKMS tree under build/deb/dkms-check: nothing is
# added to or installed in the system's DKMS (as root, DKMS may create its
# signing key /var/lib/dkms/mok.key at its first build, as any build does).
# make check runs it; the install in a guest is 'make check-package'.
# Prints TAP.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
deb=$(ls "$root"/build/deb/ktrack-dkms_*_all.deb 2>/dev/null | head -n1)
work=$root/build/deb/dkms-check
. "$root/tests/kernel/lib/tap.sh"
if [ -z "$deb" ]; then
	notok "build/deb holds ktrack-dkms (run make deb)"
	echo "1..$n"
	exit 1
fi
rm -rf "$work"
mkdir -p "$work/tree"
dpkg-deb -x "$deb" "$work/pkg"
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$work"/pkg/usr/src/ktrack-*/dkms.conf)
while read -r short rel; do
	if dkms build -m ktrack -v "$version" -k "$rel" --sourcetree "$work/pkg/usr/src" \
		--dkmstree "$work/tree" >"$work/build-$rel.log" 2>&1; then
		ko=$work/tree/ktrack/$version/$rel/x86_64/module/ktrack.ko
		[ -f "$ko" ] || ko=$ko.xz
		if [ -f "$ko" ] && modinfo -F vermagic "$ko" | grep -q "^$rel "; then
			ok "dkms builds ktrack $version for $short ($rel)"
		else
			notok "dkms built no ktrack.ko for $rel ($ko)"
		fi
	else
		notok "dkms build for $short ($rel)"
		tail -n 20 "$work/tree/ktrack/$version/build/make.log" 2>/dev/null | sed 's/^/# /'
		tail -n 5 "$work/build-$rel.log" | sed 's/^/# /'
	fi
done <"$root/build/cache/kernels.list"
echo "1..$n"
exit "$fail"
