#!/usr/bin/env bash
# Analysis throughput (records/s, single thread, streaming in bounded
# memory) on a generated realistic trace file: mixed record types (nested
# entry/exit probe hits, tracepoint hits, stacks, markers, lost-record
# gaps) on 4 CPUs.  Times the library loops (ktrack_analysis_bench) and the
# whole ktrackctl commands writing to /dev/null.  Prints numbers only.
#   bench/analysis.sh [RECORDS]            (default 20000000)
#   TRACE_DAT=trace.dat bench/analysis.sh  also times 'trace-cmd report' on
#                                          an ftrace recording (when installed)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KTRACK_BUILD:-$root/build/user}
n=${1:-20000000}
if [ ! -x "$build/bin/ktrack_analysis_bench" ] || [ ! -x "$build/bin/ktrackctl" ]; then
	cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$build" -j 2 --target ktrack_analysis_bench ktrackctl >/dev/null
fi
file=$(mktemp /tmp/ktrack-analysis-XXXXXX.ktr)
trap 'rm -f "$file"' EXIT
echo "== analysis benchmark: $n records, 4 CPUs"
"$build/bin/ktrack_analysis_bench" gen "$file" "$n" 4
echo "file: $(( $(stat -c %s "$file") / 1048576 )) MiB"
"$build/bin/ktrack_analysis_bench" run "$file"
echo "== whole commands (ktrackctl ... > /dev/null)"
for view in "hist" "profile" "graph" "stack --folded" "top --once" "export"; do
	# shellcheck disable=SC2086
	t=$( { /usr/bin/time -f "%e %U %S %M" "$build/bin/ktrackctl" $view "$file" >/dev/null; } 2>&1 | tail -1)
	awk -v n="$n" -v t="$t" -v v="$view" \
		'BEGIN { split(t, a, " "); w = a[1]; c = a[2] + a[3]; if (w <= 0) w = 0.001; if (c <= 0) c = 0.001;
		  printf "ktrackctl %-16s %10d rec | wall %7.3f s %6.2f M rec/s | cpu %7.3f s %6.2f M rec/s | max RSS %d MiB\n",
		  v, n, w, n / w / 1e6, c, n / c / 1e6, a[4] / 1024 }'
done
if [ -n "${TRACE_DAT:-}" ]; then
	if command -v trace-cmd >/dev/null; then
		events=$(trace-cmd report -i "$TRACE_DAT" 2>/dev/null | grep -c ': ' || true)
		t=$( { /usr/bin/time -f "%e %U %S" trace-cmd report -i "$TRACE_DAT" >/dev/null 2>&1; } 2>&1 | tail -1)
		awk -v n="$events" -v t="$t" 'BEGIN { split(t, a, " "); w = a[1]; c = a[2] + a[3];
		  if (w <= 0) w = 0.001; if (c <= 0) c = 0.001;
		  printf "trace-cmd report       %10d ev  | wall %7.3f s %6.2f M ev/s  | cpu %7.3f s %6.2f M ev/s\n",
		  n, w, n / w / 1e6, c, n / c / 1e6 }'
	else
		echo "trace-cmd is not installed: apt-get install trace-cmd to compare"
	fi
else
	echo "trace-cmd report: not timed (set TRACE_DAT=FILE, an ftrace recording made in the VM)"
fi
