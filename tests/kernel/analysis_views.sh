#!/usr/bin/env bash
# analysis_views - record real ktrack records in the guest and check every
# analysis view on the file and live: the transport's test emitter fills a
# one-page buffer (so records are lost), user markers mark the timeline.
#   tests/vm/run --kernel all -- tests/kernel/run-all 'analysis*'
# Output: TAP.  (Views over probe records - functions in hist, profile,
# graph, stack, report, export - are checked by analysis_probes.sh.)
root=$(cd "$(dirname "$0")/../.." && pwd)
K=$root/build/user/bin/ktrackctl
rel=$(uname -r)
emit_ko=$root/build/modules/$rel/tests/kmod/ktrack_test_emit/ktrack_test_emit.ko
ctl=/sys/kernel/debug/ktrack_test_emit/ctl
dir=$(mktemp -d /tmp/ktrack-analysis-XXXXXX)
f=$dir/trace.ktr
# shellcheck source=lib/tap.sh
. "$(dirname "$0")/lib/tap.sh"
cleanup() {
	"$K" session destroy antest >/dev/null 2>&1
	grep -q '^ktrack_test_emit ' /proc/modules && rmmod ktrack_test_emit
	"$K" unload >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
echo "1..12"

"$K" load >/dev/null || { echo "Bail out! cannot load ktrack"; exit 1; }
insmod "$emit_ko" || { echo "Bail out! cannot load ktrack_test_emit"; exit 1; }
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug

# A one-page-per-CPU session: the emitter overruns it, so LOST records appear.
"$K" session create antest --buffer-pages 1 >/dev/null || { echo "Bail out! session create"; exit 1; }
# Stopped once the work is done (not after a fixed time: under KASAN and
# lockdep the emitter alone can outlast one).
"$K" record -s antest -o "$f" 2>"$f.err" &
rec=$!
wait_line "$f.err" '^recording to '
"$K" marker -s antest "analysis begins" >/dev/null 2>&1
echo "run 7 20000 1 64" >"$ctl"
"$K" marker -s antest "analysis ends" >/dev/null 2>&1
kill -INT "$rec"
wait "$rec"
check "record wrote a file" test -s "$f"

h=$("$K" hist "$f" -f seq -k cpu 2>&1)
check "hist of the seq field per CPU" grep -q '^@\[0\]: seq' <<<"$h"
check "hist shows the lost records" grep -Eq '^lost [0-9]+ records? on CPU [0-9]+ between [0-9.]+ and [0-9.]+' <<<"$h"
hj=$("$K" hist "$f" -f seq --json -k none 2>&1)
check "hist --json parses" python3 -c 'import json,sys; [json.loads(l) for l in sys.stdin]' <<<"$hj"

g=$("$K" graph "$f" 2>&1)
check "graph shows the markers" grep -q '/\* marker: analysis begins \*/' <<<"$g"
check "graph shows where records were lost" grep -Eq '^ +[0-9]+\) =+ lost [0-9]+ records? on CPU' <<<"$g"

t=$("$K" top "$f" --once 2>&1)
check "top counts the window and its losses" grep -Eq 'hits [0-9]+ .* lost [1-9][0-9]*' <<<"$t"

"$K" export "$f" -o "$dir/trace.json"
check "export is valid trace-event JSON with lost counters" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
assert any(e["ph"] == "C" and e["name"].startswith("lost records CPU") for e in ev), "no lost counter"
assert any(e["ph"] == "i" and e["name"] == "analysis begins" for e in ev), "no marker instant"
assert any(e["ph"] == "M" and e["args"]["name"].startswith("CPU ") for e in ev), "no CPU track"
' "$dir/trace.json"

s=$("$K" stack "$f" 2>&1)
check "stack says there are no stacks (no probe captured one)" grep -q 'no stack records' <<<"$s"
check "profile of a file without probes runs" "$K" profile "$f"

# Live: top on the running named session, stopped by -n.
( sleep 1; echo "run 8 2000 1 64" >"$ctl" ) &
lt=$(timeout 30 "$K" top -s antest -n 2 -i 1s 2>&1)
wait
check "live top prints windows" test "$(grep -c '^ktrack top' <<<"$lt")" -ge 1
check "views refuse FILE and -s together (exit 1)" bash -c "'$K' hist '$f' -s antest >/dev/null 2>&1; test \$? -eq 1"
exit $fail
