#!/usr/bin/env bash
# make deb: build the packages ktrack-dkms and ktrackctl with Debian's own
# tooling (dpkg-buildpackage, debhelper, dh-dkms) from a copy of the files
# git tracks, then check them with lintian.  The .deb files land in
# build/deb/ (KTRACK_DEB_OUT=DIR: there instead).
#
#   packaging/make-deb.sh VERSION     (make deb passes CMake's project version)
#
# VERSION must be the tool's, the module's and the changelog's upstream
# version: ktrackctl compares them, and so does this script.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${KTRACK_DEB_OUT:-$root/build/deb}
cmake_v=${1:?usage: make-deb.sh VERSION}
die() { echo "make deb: $*" >&2; exit 1; }

missing=()
for p in debhelper dh-dkms dpkg-dev lintian fakeroot cmake pkg-config libkmod-dev libbpf-dev \
	libelf-dev libtraceevent-dev libfmt-dev libcli11-dev liblz4-dev libzstd-dev; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
((${#missing[@]} == 0)) || die "missing packages: ${missing[*]} (run 'sudo make setup')"

# One version everywhere: CMake's (ktrackctl --version), the module's
# MODULE_VERSION and the changelog's upstream part.
mod_v=$(sed -n 's/^#define KTRACK_MODULE_VERSION "\(.*\)"/\1/p' "$root/kmod/ktrack_main.c")
deb_v=$(dpkg-parsechangelog -l "$root/debian/changelog" -S Version)
[ "$cmake_v" = "$mod_v" ] || die "CMakeLists.txt says $cmake_v, kmod/ktrack_main.c says $mod_v: make them agree"
[ "${deb_v%-*}" = "$cmake_v" ] || die "the package version $deb_v is not $cmake_v-REVISION"

rm -rf "$out"
mkdir -p "$out/src"
(cd "$root" && git ls-files -co --exclude-standard -z | cpio -0 -pdm --quiet "$out/src")
echo "make deb: building ktrack $deb_v in $out/src"
(cd "$out/src" && dpkg-buildpackage -b -us -uc --no-sign -j"$(nproc)") >"$out/build.log" 2>&1 ||
	{ tail -30 "$out/build.log" >&2; die "dpkg-buildpackage failed (the whole log: $out/build.log)"; }
changes=$(ls "$out"/ktrack_*.changes)
# Lintian: no error or warning; each override is explained in
# debian/*.lintian-overrides.
lintian --fail-on error,warning "$changes" | tee "$out/lintian.log"
ls -l "$out"/*.deb | awk '{print "make deb: " $NF " (" $5 " bytes)"}'
