#!/usr/bin/env bash
# Decoding the same events as trace-cmd, on the host.  One VM boot records
# the same work twice: 'dd bs=1' writing N bytes to /dev/null with vfs_write
# probed and two arguments fetched, once by 'ktrackctl record' (p probe) and
# once by 'trace-cmd record' (kprobe event, same arguments).  Then, on the
# host, each file is decoded by its own tool to /dev/null, and the CPU time
# (user + sys, best of 3) gives events per second: 'trace-cmd report'
# against 'ktrackctl report' (text), 'report --json' and 'hist -f c -k comm'
# (a histogram of the count argument per task).  Each tool counts its own
# events (either may lose some while recording).  A third recording, with
# 'record --compress zstd', gives that file's size.  Numbers only.
#   bench/decode_vs_tracecmd.sh [--kernel 6.1|6.12] [WRITES]   (6.12, 1000000)
#   KTRACK_DECODE_FROM=build/vm/runs/RUN ...   decodes that run's files again
#                                              (relative to the repository)
set -euo pipefail
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"

if [ "${1:-}" = --in-vm ]; then
	n=$2
	ctl=$build/bin/ktrackctl
	T=/sys/kernel/tracing
	mountpoint -q $T || mount -t tracefs nodev $T
	"$ctl" load >/dev/null
	dd_cmd=(dd if=/dev/zero of=/dev/null bs=1 count="$n")
	# shellcheck disable=SC2016 # $arg1 is the probe's, not the shell's
	"$ctl" record -q -o "$KTRACK_VM_OUT/k.ktrack" 'p:bw vfs_write f=$arg1 c=$arg3' -- "${dd_cmd[@]}" 2>/dev/null
	# shellcheck disable=SC2016
	"$ctl" record -q --compress zstd -o "$KTRACK_VM_OUT/kz.ktrack" 'p:bw vfs_write f=$arg1 c=$arg3' -- \
		"${dd_cmd[@]}" 2>/dev/null
	# shellcheck disable=SC2016
	echo 'p:kbw vfs_write f=$arg1 c=$arg3' >$T/kprobe_events
	(cd "$KTRACK_VM_OUT" && trace-cmd record -q -b 8192 -e kprobes/kbw -o "$KTRACK_VM_OUT/t.dat" \
		"${dd_cmd[@]}" >/dev/null 2>&1)
	echo >$T/kprobe_events
	"$ctl" unload >/dev/null 2>&1 || true
	exit 0
fi

kernel=6.12
if [ "${1:-}" = --kernel ]; then
	kernel=$2
	shift 2
fi
n=${1:-1000000}
if ! command -v trace-cmd >/dev/null; then
	echo "trace-cmd is not installed (scripts/setup.sh installs it): nothing to compare"
	exit 0
fi
if [ -n "${KTRACK_DECODE_FROM:-}" ]; then # a run directory of an earlier recording
	dir=$KTRACK_DECODE_FROM
	[ "${dir#/}" != "$dir" ] || dir=$root/$dir
	what="the recording in $dir"
else
	what="$kernel's recording of $n one-byte writes"
	make -s -C "$root" modules user >/dev/null 2>&1 || {
		echo "the build failed: run 'make modules user'"
		exit 1
	}
	log=$(mktemp)
	trap 'rm -f "$log"' EXIT
	"$root/tests/vm/run" --kernel "$kernel" --timeout 1800 -- "$root/bench/$(basename "$0")" --in-vm "$n" >"$log" 2>&1 || {
		echo "the recording in the VM failed:"
		tail -20 "$log"
		exit 1
	}
	# tests/vm/run names the run directory relative to the repository, or
	# absolute when it lies outside
	dir=$(sed -n 's/.*(log: \([^)]*\)).*/\1/p' "$log" | tail -1)
	[ -n "$dir" ] && [ "${dir#/}" = "$dir" ] && dir=$root/$dir
fi
k=$dir/k.ktrack t=$dir/t.dat
if ! [ -s "$k" ] || ! [ -s "$t" ]; then
	echo "the recording in the VM left no files (see ${dir:-the VM log})"
	exit 1
fi

# cpu seconds (user + sys) of the best of 3 runs, or "failed"
cpu_of() {
	local t
	t=$(best_of_3 "$@")
	if [ "$t" = failed ]; then
		echo failed
	else
		awk -v t="$t" 'BEGIN { split(t, a, " "); c = a[2] + a[3]; print (c > 0 ? c : 0.001) }'
	fi
}
kev=$("$build/bin/ktrackctl" report "$k" | grep -c ' bw: ' || true)
tev=$(trace-cmd report -i "$t" 2>/dev/null | grep -c ' kbw: ' || true)
echo "== decoding on the host, $what (vfs_write, 2 args): ktrack $kev events ($(stat -c %s "$k") bytes), trace-cmd $tev events ($(stat -c %s "$t") bytes)"
if [ -s "$dir/kz.ktrack" ]; then
	kzev=$("$build/bin/ktrackctl" report "$dir/kz.ktrack" | grep -c ' bw: ' || true)
	echo "ktrack --compress zstd: $kzev events, $(stat -c %s "$dir/kz.ktrack") bytes"
fi
tc=$(cpu_of trace-cmd report -i "$t")
if [ "$tc" = failed ]; then
	echo "trace-cmd report failed on $t"
	exit 1
fi
rate_t=$(awk -v e="$tev" -v c="$tc" 'BEGIN { print e / c }')
printf '%-28s cpu %7.3f s %7.2f M events/s %8s\n' "trace-cmd report" "$tc" \
	"$(awk -v r="$rate_t" 'BEGIN { print r / 1e6 }')" "1.00x"
for cmd in "report" "report --json" "hist -f c -k comm"; do
	# shellcheck disable=SC2086
	c=$(cpu_of "$build/bin/ktrackctl" $cmd "$k")
	if [ "$c" = failed ]; then
		printf '%-28s failed\n' "ktrackctl $cmd"
		continue
	fi
	awk -v name="ktrackctl $cmd" -v c="$c" -v e="$kev" -v rt="$rate_t" 'BEGIN {
		printf "%-28s cpu %7.3f s %7.2f M events/s %7.2fx\n", name, c, e / c / 1e6, (rt > 0 ? (e / c) / rt : 0) }'
done
echo "# x: events per CPU second over trace-cmd report's (each tool decoding its own file of the same work)"
