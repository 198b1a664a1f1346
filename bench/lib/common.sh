# bench/lib/common.sh - what the benchmark scripts share (sourced; kept out
# of bench/*.sh so that bench/run does not take it for a benchmark).  Sets
# root (the repository) and build (the host build, $KTRACK_BUILD or
# build/user) when sourced.
#   in_vm_or_boot [--in-vm|--kernel K] [CALLS]: on the host, boots one VM per
#       kernel (tests/vm/run) that runs "THIS_SCRIPT --in-vm CALLS" and does
#       not return; inside the guest it sets calls (default 200000), rel,
#       ctl (ktrackctl), mods (this kernel's modules) and T (tracefs), and
#       returns: the script goes on.
#   best_of_3 COMMAND [ARGS]: "wall user sys maxrss" (s, s, s, KiB) of the
#       least-CPU of 3 runs, output discarded; "failed" if a run fails.
#   host_bench_setup TARGET: builds the host benchmark program TARGET (and
#       ktrackctl) into $build when missing, and names in $file a scratch
#       file removed when the script exits.

root=${root:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
build=${KTRACK_BUILD:-$root/build/user}

in_vm_or_boot() {
	local script kernel=all
	script=$root/bench/$(basename "$0")
	if [ "${1:-}" = --in-vm ]; then
		# shellcheck disable=SC2034 # for the script that sourced this file
		calls=${2:-200000}
		rel=$(uname -r)
		ctl=$build/bin/ktrackctl
		mods=$root/build/modules/$rel
		T=/sys/kernel/tracing
		return 0
	fi
	if [ "${1:-}" = --kernel ]; then
		kernel=$2
		shift 2
	fi
	make -s -C "$root" modules user >/dev/null
	exec "$root/tests/vm/run" --kernel "$kernel" -- "$script" --in-vm "${1:-200000}"
}

host_bench_setup() {
	local t missing=0
	for t in "$1" ktrackctl; do [ -x "$build/bin/$t" ] || missing=1; done
	if ((missing)); then
		cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
		cmake --build "$build" -j 2 --target "$1" ktrackctl >/dev/null
	fi
	file=$(mktemp "/tmp/$1-XXXXXX")
	# shellcheck disable=SC2064 # this file's name, now
	trap "rm -f '$file'" EXIT
}

best_of_3() {
	# The machine is shared, and the other tenants only ever add time.
	local best="" t tf
	tf=$(mktemp /tmp/ktrack-bench-time-XXXXXX)
	for _ in 1 2 3; do
		if ! /usr/bin/time -o "$tf" -f "%e %U %S %M" "$@" >/dev/null 2>&1; then
			rm -f "$tf"
			echo failed
			return
		fi
		t=$(tail -n 1 "$tf")
		best=$(printf '%s\n%s\n' "$best" "$t" | awk 'NF { c = $2 + $3; if (!seen || c < bc) { bc = c; b = $0; seen = 1 } } END { print b }')
	done
	rm -f "$tf"
	echo "$best"
}
