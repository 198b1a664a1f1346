#!/usr/bin/env bash
# packaging/install.sh: the part of 'make install' that is not ktrackctl
# itself (CMake installs the tool, its man page and its bash completion).
# debian/rules runs 'make install' too, so a package and a hand install
# lay out the same files:
#
#   PREFIX/src/ktrack-VERSION/      ktrack.ko's sources and dkms.conf (DKMS)
#   UDEVDIR/60-ktrack.rules         /dev/ktrack's owner (group ktrack) and mode
#   SYSCONFDIR/modules-load.d/ktrack.conf, modprobe.d/ktrack.conf
#                                   examples, every line commented
#
# Usage: install.sh ROOT DESTDIR PREFIX SYSCONFDIR UDEVDIR VERSION
set -euo pipefail
root=$1 destdir=$2 prefix=$3 sysconfdir=$4 udevdir=$5 version=$6

src=$destdir$prefix/src/ktrack-$version
rm -rf "$src"
install -d "$src/kmod" "$src/include/uapi" "$src/include/ktrack"
# Only the module's own sources: kmod/ is one module; include/ holds the UAPI
# header it shares with ktrackctl and the in-kernel API it exports to other
# modules (include/ktrack/).
(cd "$root/kmod" && install -m 0644 Kbuild ./*.c ./*.h "$src/kmod/")
install -m 0644 "$root/include/uapi/ktrack.h" "$src/include/uapi/"
install -m 0644 "$root"/include/ktrack/*.h "$src/include/ktrack/"
sed "s/#MODULE_VERSION#/$version/" "$root/packaging/dkms.conf" >"$src/dkms.conf"
chmod 0644 "$src/dkms.conf"

install -D -m 0644 "$root/packaging/ktrack.rules" "$destdir$udevdir/60-ktrack.rules"
install -D -m 0644 "$root/packaging/modules-load.conf" "$destdir$sysconfdir/modules-load.d/ktrack.conf"
install -D -m 0644 "$root/packaging/modprobe.conf" "$destdir$sysconfdir/modprobe.d/ktrack.conf"
# The udev rule's group (the package makes it in its postinst): on the
# system itself only, when root installs there.
if [ -z "$destdir" ] && [ "$(id -u)" = 0 ] && ! getent group ktrack >/dev/null; then
	groupadd --system ktrack
fi
