# bench/lib/common.sh - what the benchmark scripts share (sourced; kept out
# of bench/*.sh so that bench/run does not take it for a benchmark).
#   in_vm_or_boot SCRIPT [--kernel K] [ARG]: on the host, boots one VM per
#       kernel (tests/vm/run) that runs "SCRIPT --in-vm ARG" and does not
#       return; inside the guest it returns and the script goes on.
#   host_bench_tools TARGET...: builds the host benchmark programs (and
#       ktrackctl) into $build when they are missing.
# Both expect $root (the repository) to be set.

in_vm_or_boot() {
	local script=$1 kernel=all
	shift
	[ "${1:-}" = --in-vm ] && return 0
	if [ "${1:-}" = --kernel ]; then
		kernel=$2
		shift 2
	fi
	make -s -C "$root" modules user >/dev/null
	exec "$root/tests/vm/run" --kernel "$kernel" -- "$script" --in-vm "${1:-200000}"
}

host_bench_tools() {
	local t missing=0
	for t in "$@" ktrackctl; do [ -x "$build/bin/$t" ] || missing=1; done
	((missing)) || return 0
	cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$build" -j 2 --target "$@" ktrackctl >/dev/null
}
