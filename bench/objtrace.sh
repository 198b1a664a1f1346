#!/usr/bin/env bash
# Object tracker cost per function entry on a hot path (the test module's
# ktrack_test_obj_hot(), called N times in a loop), in ONE VM boot per
# kernel: no hook, the bare ftrace hook (empty callback), ftrace's function
# tracer on the same function, and ktrack objtrace hooking that function
# with 0, 1, 100 and 10,000 tracked objects (the argument is not tracked:
# the lookup misses), plus the hit path (the argument is tracked; a record
# per call).  The tracked-object rows run once with the kernel's glob path
# and once with the address-given set.  Prints numbers only.
#   bench/objtrace.sh [--kernel 6.1|6.12|all] [CALLS]
set -euo pipefail
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
in_vm_or_boot "$@"
P=/sys/module/ktrack_test_objtrace/parameters

insmod "$mods/kmod/ktrack.ko"
insmod "$mods/tests/kmod/ktrack_test_objtrace/ktrack_test_objtrace.ko"
trap 'rmmod ktrack_test_objtrace 2>/dev/null; rmmod ktrack 2>/dev/null' EXIT

# Best (lowest) of 5 runs, in ns per call with 2 decimals.
measure() {
	local best= ps i
	for i in 1 2 3 4 5; do
		echo "$calls" >$P/hot
		ps=$(cat $P/bench_ps)
		if [ -z "$best" ] || [ "$ps" -lt "$best" ]; then best=$ps; fi
	done
	awk -v p="$best" 'BEGIN { printf "%.2f", p / 1000 }'
}
export -f measure
export P calls

row() { printf "%-44s %10s ns/call\n" "$1" "$2"; }

echo "== objtrace hot-path cost, kernel $rel, $(nproc) CPUs, $calls calls per run (best of 5)"
base=$(measure)
row "no hook" "$base"
echo 1 >$P/bare_hook
row "bare ftrace hook (empty callback)" "$(measure)"
echo 0 >$P/bare_hook
echo ktrack_test_obj_hot >$T/set_ftrace_filter
echo function >$T/current_tracer
row "ftrace function tracer" "$(measure)"
echo nop >$T/current_tracer
echo >$T/set_ftrace_filter
echo >$T/trace

array=$(cat $P/array)
hot=$(cat $P/hot_obj)
# The same function hooked two ways: the kernel's glob path (first 6
# arguments checked), and by address as userspace resolves it
# (KTRACK_OBJF_FUNC_ADDRS, here with --module: its own ftrace_ops).
for mode in glob addr; do
	for n in 0 1 100 10000; do
		from=()
		if [ "$n" = 0 ]; then
			# Something must feed the table: an allocator that never runs here.
			from=(--from 'r:ktrack_test_obj_alloc $retval')
		fi
		for ((i = 0; i < n; i++)); do
			from+=(--from "$(printf '0x%x' $((array + i * 64)))")
		done
		sel=()
		[ "$mode" = addr ] && sel=(--module ktrack_test_objtrace)
		out=$(mktemp)
		"$ctl" objtrace "${from[@]}" "${sel[@]}" --functions ktrack_test_obj_hot --no-free \
			--max-objects 10000 -- bash -c 'measure > '"$out" >/dev/null 2>&1
		row "objtrace ($mode), $n tracked, miss" "$(cat "$out")"
		rm -f "$out"
	done
done
out=$(mktemp)
"$ctl" objtrace --from "$(printf '0x%x' "$hot")" --watch +4:u16 --functions ktrack_test_obj_hot --no-free \
	-- bash -c 'measure > '"$out" >/dev/null 2>&1
row "objtrace, 1 tracked, hit (one record each)" "$(cat "$out")"
out2=$(mktemp)
"$ctl" objtrace --from "$(printf '0x%x' "$hot")" --watch +4:u16 --functions ktrack_test_obj_hot --no-free \
	--changes-only -- bash -c 'measure > '"$out2" >/dev/null 2>&1
row "objtrace, 1 tracked, hit, changes-only" "$(cat "$out2")"
rm -f "$out" "$out2"
