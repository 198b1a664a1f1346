#!/usr/bin/env bash
# Analysis throughput (records/s, single thread, streaming in bounded
# memory) on a generated realistic trace file: mixed record types (nested
# entry/exit probe hits, tracepoint hits, stacks, markers, lost-record
# gaps) on 4 CPUs.  Times the library loops (ktrack_analysis_bench) and the
# whole ktrackctl commands writing to /dev/null.  Prints numbers only.
#   bench/analysis.sh [RECORDS]            (default 20000000)
#   TRACE_DAT=trace.dat bench/analysis.sh  times 'trace-cmd report' on that
#                                          ftrace recording; without it one is
#                                          made in the VM (function tracer, a
#                                          few seconds of 6.12) when the lane
#                                          is set up (KTRACK_BENCH_NO_VM=1: no)
# Against trace-cmd both tools decode the same number of events to text.
set -euo pipefail
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
n=${1:-20000000}
host_bench_setup ktrack_analysis_bench
echo "== analysis benchmark: $n records, 4 CPUs"
"$build/bin/ktrack_analysis_bench" gen "$file" "$n" 4
echo "file: $(( $(stat -c %s "$file") / 1048576 )) MiB"
"$build/bin/ktrack_analysis_bench" run "$file"
echo "== whole commands (ktrackctl ... > /dev/null, best of 3 by CPU time)"
for view in "hist" "profile" "graph" "stack --folded" "top --once" "export"; do
	# shellcheck disable=SC2086
	t=$(best_of_3 "$build/bin/ktrackctl" $view "$file")
	if [ "$t" = failed ]; then
		echo "ktrackctl $view: failed"
		continue
	fi
	awk -v n="$n" -v t="$t" -v v="$view" \
		'BEGIN { split(t, a, " "); w = a[1]; c = a[2] + a[3]; if (w <= 0) w = 0.001; if (c <= 0) c = 0.001;
		  printf "ktrackctl %-16s %10d rec | wall %7.3f s %6.2f M rec/s | cpu %7.3f s %6.2f M rec/s | max RSS %d MiB\n",
		  v, n, w, n / w / 1e6, c, n / c / 1e6, a[4] / 1024 }'
done
if [ -z "${TRACE_DAT:-}" ] && [ -z "${KTRACK_BENCH_NO_VM:-}" ] && command -v trace-cmd >/dev/null &&
	[ -s "$root/build/cache/kernels.list" ]; then
	tag=ftrace-bench-$$.dat
	echo "recording an ftrace trace.dat in the VM (function tracer, 5 s)..."
	if "$root/tests/vm/run" --kernel 6.12 --timeout 300 -- sh -c \
		"cd /tmp && timeout -s INT 60 trace-cmd record -q -p function -b 8192 -o \$KTRACK_VM_OUT/$tag -- sleep 5" \
		>/dev/null 2>&1; then
		TRACE_DAT=$(ls -d "$root"/build/vm/runs/*/"$tag" 2>/dev/null | head -1)
	fi
	[ -n "${TRACE_DAT:-}" ] || echo "trace-cmd report: the VM recording failed (see build/vm/runs/)"
fi
if [ -n "${TRACE_DAT:-}" ]; then
	if command -v trace-cmd >/dev/null; then
		events=$(trace-cmd report -i "$TRACE_DAT" 2>/dev/null | grep -c ': ' || true)
		echo "== text decoding, same number of events: trace-cmd report vs ktrackctl report ($events events)"
		t=$(best_of_3 trace-cmd report -i "$TRACE_DAT")
		[ "$t" != failed ] || t="0 0 0 0" # a failed decode shows as 0.001 s: see its own run
		tc=$(awk -v t="$t" 'BEGIN { split(t, a, " "); c = a[2] + a[3]; if (c <= 0) c = 0.001; print c }')
		awk -v n="$events" -v t="$t" 'BEGIN { split(t, a, " "); w = a[1]; c = a[2] + a[3];
		  if (w <= 0) w = 0.001; if (c <= 0) c = 0.001;
		  printf "trace-cmd report       %10d ev  | wall %7.3f s %6.2f M ev/s  | cpu %7.3f s %6.2f M ev/s\n",
		  n, w, n / w / 1e6, c, n / c / 1e6 }'
		same=$(mktemp /tmp/ktrack-analysis-same-XXXXXX.ktr)
		"$build/bin/ktrack_analysis_bench" gen "$same" "$events" 2 >/dev/null
		t=$(best_of_3 "$build/bin/ktrackctl" report "$same")
		rm -f "$same"
		awk -v n="$events" -v t="$t" -v tc="$tc" 'BEGIN { split(t, a, " "); w = a[1]; c = a[2] + a[3];
		  if (w <= 0) w = 0.001; if (c <= 0) c = 0.001;
		  printf "ktrackctl report       %10d rec | wall %7.3f s %6.2f M rec/s | cpu %7.3f s %6.2f M rec/s | %.1fx trace-cmd (cpu)\n",
		  n, w, n / w / 1e6, c, n / c / 1e6, tc / c }'
	else
		echo "trace-cmd is not installed: apt-get install trace-cmd to compare"
	fi
else
	echo "trace-cmd report: not timed (set TRACE_DAT=FILE, an ftrace recording, or set up the VM lane)"
fi
