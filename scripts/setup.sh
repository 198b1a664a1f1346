#!/usr/bin/env bash
# Set up a Debian 12 machine to build and test ktrack (idempotent).
#
#  1. apt packages (only when one is missing: a second run downloads nothing);
#  2. for each target kernel (6.1 and 6.12, resolved from the installed
#     header packages, never hard-coded), the image .deb is unpacked into
#     build/cache/kernels/RELEASE (apt-get download + dpkg-deb -x: nothing is
#     installed on the host, and no initramfs hook runs);
#  3. kselftest_harness.h and checkpatch.pl are extracted from linux-source.
#
# Writes build/cache/kernels.list: "SHORT RELEASE" per line (e.g. "6.12 6.12.117+deb12-amd64").
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${KTRACK_CACHE:-$root/build/cache}
mkdir -p "$cache"

say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

packages=(
	build-essential gcc-12 g++ cmake pkg-config git kmod
	libkmod-dev libcli11-dev libfmt-dev libgtest-dev libbpf-dev libelf-dev libtraceevent-dev libtracefs-dev liblz4-dev libzstd-dev
	qemu-system-x86 busybox-static cpio xz-utils zstd sparse
	clang-format perl python3 time # time: the benchmarks' CPU figures
	trace-cmd # samples/trace_events walk-through
	bpftrace # bench/probes.sh compares with bpftrace kprobe:
	linux-headers-amd64 linux-headers-6.12-amd64 linux-source-6.12
	flex bison bc libssl-dev pahole # the debug kernel (make check-debug)
	debhelper dh-dkms dkms lintian fakeroot # make deb, and the package lane of make check
	chromium # the HTML report's browser test (tests/browser)
	babeltrace2 python3-bt2 # the CTF export's consumer (tests/interop)
)
# Node.js for the browser test's driver (playwright-core): Debian's, unless
# the machine has one.
command -v node >/dev/null && command -v npm >/dev/null || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if ((${#missing[@]})); then
	[ "$(id -u)" = 0 ] || die "missing packages (${missing[*]}); run 'sudo make setup' or install them with apt-get"
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	# The 6.12 header package depends on its image package: keep the host's
	# initramfs hooks from running (they are slow and serve no purpose here).
	export INITRD=No
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Resolve "linux-headers-amd64 -> linux-headers-6.1.0-NN-amd64" from dpkg.
release_of() {
	dpkg-query -W -f='${Depends}\n' "$1" |
		tr ',' '\n' | sed -n 's/^ *linux-headers-\([^ ]*\).*/\1/p' | head -n1
}

: >"$cache/kernels.list.new"
for pair in "6.1:linux-headers-amd64" "6.12:linux-headers-6.12-amd64"; do
	short=${pair%%:*}
	rel=$(release_of "${pair#*:}")
	[ -n "$rel" ] || die "cannot resolve the kernel release behind ${pair#*:}"
	[ -d "/lib/modules/$rel/build" ] || die "headers for $rel are not at /lib/modules/$rel/build"
	dest="$cache/kernels/$rel"
	if [ ! -f "$dest/.done" ]; then
		say "fetching the $rel kernel image (.deb, unpacked under $dest)"
		tmp=$(mktemp -d "$cache/dl.XXXXXX")
		(cd "$tmp" && apt-get download -q "linux-image-$rel" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
		deb=$(ls "$tmp"/linux-image-*.deb 2>/dev/null | head -n1)
		[ -n "$deb" ] || die "apt-get download linux-image-$rel failed (run apt-get update?)"
		rm -rf "$dest" && mkdir -p "$dest"
		dpkg-deb -x "$deb" "$dest"
		rm -rf "$tmp"
		[ -f "$dest/boot/vmlinuz-$rel" ] || die "no vmlinuz in linux-image-$rel"
		/sbin/depmod -b "$dest" "$rel"
		touch "$dest/.done"
	fi
	echo "$short $rel" >>"$cache/kernels.list.new"
done
mv "$cache/kernels.list.new" "$cache/kernels.list"

# kselftest harness + checkpatch from linux-source-6.12 (extracted, never committed).
src="$cache/linux-src"
if [ ! -f "$src/.done" ]; then
	tarball=$(ls /usr/src/linux-source-6.12*.tar.xz 2>/dev/null | head -n1)
	[ -n "$tarball" ] || die "linux-source-6.12 tarball not found in /usr/src"
	say "extracting kselftest_harness.h and checkpatch.pl from $(basename "$tarball")"
	rm -rf "$src" && mkdir -p "$src"
	top=$(basename "$tarball" .tar.xz)
	tar -xJf "$tarball" -C "$src" --strip-components=1 \
		"$top/tools/testing/selftests/kselftest_harness.h" \
		"$top/tools/testing/selftests/kselftest.h" \
		"$top/scripts/checkpatch.pl" \
		"$top/scripts/spelling.txt" \
		"$top/scripts/const_structs.checkpatch"
	touch "$src/.done"
fi

# The browser test's npm packages, pinned by tests/browser/package-lock.json
# (npm ci: exactly those versions; again only when the lock file changed).
# playwright-core 1.65 needs Node.js 20 or later (Debian 12's nodejs is 18).
# Only make check's browser lane needs them: a failure here is a warning
# (that lane then fails and says why), never a reason to stop a build.
warn() { printf 'setup: warning: %s\n' "$*" >&2; }
browser=$root/tests/browser
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if ((node_major < 20)); then
	warn "the HTML report's browser test needs Node.js >= 20 (playwright-core 1.65); this machine has $(node --version 2>/dev/null || echo none): install Node.js 20 (e.g. nodesource's nodejs package)"
elif [ ! -f "$browser/node_modules/.package-lock.json" ] ||
	[ "$browser/package-lock.json" -nt "$browser/node_modules/.package-lock.json" ]; then
	say "installing the browser test's npm packages (npm ci in tests/browser)"
	(cd "$browser" && npm ci --no-audit --no-fund --loglevel=error) ||
		warn "npm ci in tests/browser failed (is the npm registry reachable?): make check's browser lane will fail"
fi

say "ready: $(tr '\n' ' ' <"$cache/kernels.list")"
