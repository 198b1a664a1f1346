#!/usr/bin/env bash
# scripts/debug-kernel.sh - build (once) the debug kernel of make check-debug
# and print its release.
#
# Debian's linux-source-6.12 with Debian's own 6.12 config, its modules
# turned off, and tests/debug/debug.config merged over it (KASAN, KFENCE,
# lockdep, PROVE_RCU, DEBUG_ATOMIC_SLEEP, kmemleak, DEBUG_OBJECTS, UBSAN,
# fault injection; 9p over virtio built in).  The result is cached under
# build/cache/debug-kernel/KEY, KEY being a hash of the source package
# version, the fragment, Debian's config and $recipe (bump it when the
# build steps below change); $KTRACK_DEBUG_CACHE moves it (a directory
# outside the clone lets a fresh clone on the same machine skip the build,
# which takes 50-85 minutes on 2 cores), and installed like the Debian kernels:
# build/cache/kernels/RELEASE/{boot,lib/modules}, plus a line
# "debug RELEASE" in build/cache/debug-kernel.list for tests/vm/run.
# ktrack's modules build against it with KDIR=$(scripts/debug-kernel.sh --kdir).
#
#   scripts/debug-kernel.sh            build if needed, print the release
#   scripts/debug-kernel.sh --kdir     build if needed, print the build tree
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${KTRACK_CACHE:-$root/build/cache}
frag=$root/tests/debug/debug.config
die() { echo "debug-kernel: $*" >&2; exit 1; }
recipe=2

[ -f "$cache/kernels.list" ] || "$root/scripts/setup.sh" >&2
tarball=$(ls /usr/src/linux-source-6.12.tar.xz 2>/dev/null) || die "linux-source-6.12 is not installed (make setup)"
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
rel612=$(awk '$1 == "6.12" {print $2}' "$cache/kernels.list")
debcfg=/usr/src/linux-headers-$rel612/.config
[ -f "$debcfg" ] || die "Debian's 6.12 config $debcfg is missing (make setup)"
key=$( (echo "$srcver $recipe"; cat "$frag" "$debcfg") | sha256sum | cut -c1-12)
dir=${KTRACK_DEBUG_CACHE:-$cache/debug-kernel}/$key
src=$dir/src

if [ ! -f "$dir/release" ]; then
	for tool in flex bison bc pahole; do
		command -v $tool >/dev/null || die "$tool is missing (make setup)"
	done
	start=$(date +%s)
	# An interrupted build resumes: the tree is configured once
	# ($dir/configured) and make picks up where it stopped.
	if [ ! -f "$dir/configured" ]; then
		rm -rf "$dir"
		mkdir -p "$src"
		echo "debug-kernel: extracting linux-source $srcver into ${dir#"$root"/}" >&2
		tar -xaf "$tarball" -C "$src" --strip-components=1
		# Debian's config, without its modules: =m becomes "not set".
		sed -E 's/^(CONFIG_[A-Za-z0-9_]+)=m$/# \1 is not set/' "$debcfg" >"$src/.config"
		(cd "$src" && scripts/kconfig/merge_config.sh -m .config "$frag" >/dev/null &&
			make -s olddefconfig)
		# Every line of the fragment must have taken effect.
		missing=0
		while IFS= read -r line; do
			case $line in
			CONFIG_*=*) grep -qxF "$line" "$src/.config" || { echo "debug-kernel: not applied: $line" >&2; missing=1; } ;;
			"# CONFIG_"*" is not set") grep -qxF "$line" "$src/.config" || ! grep -q "^${line:2:-11}=" "$src/.config" ||
				{ echo "debug-kernel: not applied: $line" >&2; missing=1; } ;;
			esac
		done <"$frag"
		((missing == 0)) || die "the fragment does not apply to this source; fix tests/debug/debug.config"
		for opt in KPROBES KRETPROBES FPROBE DYNAMIC_FTRACE_WITH_ARGS DEBUG_INFO_BTF KASAN PROVE_LOCKING; do
			grep -q "^CONFIG_$opt=y" "$src/.config" || die "CONFIG_$opt is not set in the debug config"
		done
		touch "$dir/configured"
	else
		echo "debug-kernel: resuming the build in ${dir#"$root"/}" >&2
	fi
	echo "debug-kernel: building with make -j$(nproc) (about an hour on 2 cores)" >&2
	(cd "$src" && nice -n 19 make -s -j"$(nproc)" all) >"$dir/build.log" 2>&1 ||
		{ tail -n 30 "$dir/build.log" >&2; die "the build failed (log: $dir/build.log)"; }
	cat "$src/include/config/kernel.release" >"$dir/release.new"
	mv "$dir/release.new" "$dir/release"
	echo "debug-kernel: built $(cat "$dir/release") in $(($(date +%s) - start)) s" >&2
fi
rel=$(cat "$dir/release")
# Installed into this work tree's cache (each clone has its own).
inst=$cache/kernels/$rel
if [ ! -f "$inst/boot/vmlinuz-$rel" ]; then
	rm -rf "$inst"
	mkdir -p "$inst/boot"
	cp "$src/arch/x86/boot/bzImage" "$inst/boot/vmlinuz-$rel"
	(cd "$src" && make -s INSTALL_MOD_PATH="$inst" modules_install) >>"$dir/build.log" 2>&1
	ln -sfn "$src" "$inst/lib/modules/$rel/build"
fi
# 'source' as Debian's packages have it (the samples' walk-throughs read it);
# outside the block above, so that an install from before it gets it too.
[ -e "$inst/lib/modules/$rel/source" ] || ln -sfn "$src" "$inst/lib/modules/$rel/source"
echo "debug $rel" >"$cache/debug-kernel.list"
if [ "${1:-}" = --kdir ]; then echo "$src"; else echo "$rel"; fi
