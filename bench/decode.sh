#!/usr/bin/env bash
# Host-side decode throughput (records/s) of a generated recorded file, to
# text and to JSON: the library loop (ktrack_decode_bench) and the whole
# 'ktrackctl report' command writing to /dev/null.  Prints numbers only.
#   bench/decode.sh [RECORDS]
set -euo pipefail
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
host_bench_setup ktrack_decode_bench
n=${1:-3000000}
echo "== decode benchmark: $n records (1/3 test_seq 32 B, 1/3 marker, 1/3 probe), 4 CPUs"
"$build/bin/ktrack_decode_bench" "$n" "$file"
size=$(stat -c %s "$file")
for fmt in text json; do
	args=()
	[ $fmt = json ] && args=(--json)
	# wall and CPU (user+sys) seconds of the whole command writing to /dev/null
	t=$( { /usr/bin/time -f "%e %U %S" "$build/bin/ktrackctl" report "${args[@]}" "$file" >/dev/null; } 2>&1 | tail -1)
	awk -v n="$n" -v t="$t" -v f="$fmt" -v b="$size" \
		'BEGIN { split(t, a, " "); w = a[1]; c = a[2] + a[3]; if (w <= 0) w = 0.001; if (c <= 0) c = 0.001;
		  printf "report %-15s %9d records: wall %6.3f s %6.2f M rec/s | cpu %6.3f s %6.2f M rec/s %6.1f MB/s in\n",
		  "(" f ")", n, w, n / w / 1e6, c, n / c / 1e6, b / c / 1e6 }'
done
