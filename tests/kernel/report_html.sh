#!/usr/bin/env bash
# report_html - real recordings for the HTML report (issue 20), kept in the
# VM's results share for the browser test that runs on the host afterwards
# (tests/browser/reports.sh, from make check):
#   calls.ktr    entry/exit pairs of ksys_read/vfs_read/ksys_write/vfs_write
#                (nested calls) and vfs_read kernel stacks, while dd copies
#                a known number of blocks;
#   lost.ktr     the test emitter overrunning a one-page buffer (records
#                are lost on purpose) between two markers;
#   objects.ktr  objtrace lives of the inodes a mkdir allocates;
#   fields.ktr   probes with typed fetched fields (s32, ustring, s64
#                $retval, a trace event's fields) for the CTF export's
#                check (tests/interop/ctf_check.py).
# Each is exported here too (export --format html): the page must embed the
# same counts as hist --json.
#   tests/vm/run --kernel all -- tests/kernel/run-all report_html
# Output: TAP, and "# report recordings: DIR" for the host.
root=$(cd "$(dirname "$0")/../.." && pwd)
K=$root/build/user/bin/ktrackctl
rel=$(uname -r)
emit_ko=$root/build/modules/$rel/tests/kmod/ktrack_test_emit/ktrack_test_emit.ko
ctl=/sys/kernel/debug/ktrack_test_emit/ctl
dir=$(mktemp -d /tmp/ktrack-report-XXXXXX)
blocks=2000
# shellcheck source=lib/tap.sh
. "$(dirname "$0")/lib/tap.sh"
cleanup() {
	"$K" session destroy rpcalls >/dev/null 2>&1
	"$K" session destroy rplost >/dev/null 2>&1
	grep -q '^ktrack_test_emit ' /proc/modules && rmmod ktrack_test_emit
	"$K" unload >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
echo "1..12"

"$K" load >/dev/null || { echo "Bail out! cannot load ktrack"; exit 1; }
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug

# The page's data, parsed back: "python3 -c CHECK PAGE [ARGS]" with 'd' the
# embedded object.
embedded='import json, re, sys
page = open(sys.argv[1]).read()
m = re.search(r"<script id=\"ktrack-data\" type=\"application/json\">(.*?)</script>", page, re.S)
d = json.loads(m.group(1))
'

# 1. Nested calls and stacks.
"$K" session create rpcalls --buffer-pages 256 >/dev/null || { echo "Bail out! session create"; exit 1; }
"$K" probe add -s rpcalls 'f:io ksys_read,vfs_read,ksys_write,vfs_write%both' >/dev/null ||
	{ echo "Bail out! f probe"; exit 1; }
"$K" probe add -s rpcalls --stack 8 'p:rd vfs_read' >/dev/null || { echo "Bail out! p probe"; exit 1; }
"$K" record -s rpcalls -c dd -o "$dir/calls.ktr" 2>"$dir/calls.err" &
rec=$!
wait_line "$dir/calls.err" '^recording to '
dd if=/dev/zero of=/dev/null bs=512 count=$blocks 2>/dev/null
kill -INT "$rec"
wait "$rec"
check "recorded dd's calls and stacks" test -s "$dir/calls.ktr"
"$K" session destroy rpcalls >/dev/null 2>&1

# 2. Records lost on purpose.
if insmod "$emit_ko"; then
	"$K" session create rplost --buffer-pages 1 >/dev/null || { echo "Bail out! session create"; exit 1; }
	"$K" record -s rplost -o "$dir/lost.ktr" 2>"$dir/lost.err" &
	rec=$!
	wait_line "$dir/lost.err" '^recording to '
	"$K" marker -s rplost "overrun begins" >/dev/null 2>&1
	echo "run 7 20000 1 64" >"$ctl"
	"$K" marker -s rplost "overrun ends" >/dev/null 2>&1
	kill -INT "$rec"
	wait "$rec"
	rmmod ktrack_test_emit
	check "recorded an overrun buffer" test -s "$dir/lost.ktr"
	"$K" session destroy rplost >/dev/null 2>&1
else
	notok "load ktrack_test_emit"
fi

# 3. Object lives.
mkdir -p /tmp/ktrack-report-dir
out=$("$K" objtrace --from 'r:alloc_inode $retval' --watch 'inode->i_mode:u16' --functions '*' \
	-o "$dir/objects.ktr" -- sh -c 'mkdir /tmp/ktrack-report-dir/new && ls /tmp/ktrack-report-dir/new' 2>&1)
if [ -s "$dir/objects.ktr" ]; then ok "recorded inode lives with objtrace"; else
	notok "recorded inode lives with objtrace" "$out"
fi
rm -rf /tmp/ktrack-report-dir

# 4. Typed fields.
"$K" record -o "$dir/fields.ktr" 'p:opn do_sys_openat2 dfd=$arg1:s32 name=$arg2:ustring' \
	'r:rv vfs_read ret=$retval:s64' 'e:fork sched/sched_process_fork' -- \
	sh -c 'cat /etc/hostname /nonexistent; true' >/dev/null 2>"$dir/fields.err"
check "recorded typed fields (openat names, read returns, forks)" \
	grep -q '"name":"/etc/hostname"' <("$K" report --json "$dir/fields.ktr")

# Each page embeds what the text views print.
"$K" export --format html -o "$dir/calls.html" "$dir/calls.ktr"
check "the calls page has dd's functions, stacks and call graph" python3 -c "$embedded"'
n = int(sys.argv[2])
funcs = {g["key"]: g["count"] for g in d["hist"]["func"]}
assert funcs.get("vfs_read", 0) >= n and funcs.get("vfs_write", 0) >= n, funcs
names = set(d["strings"])
assert {"ksys_read", "vfs_read", "ksys_write", "vfs_write"} <= names, names
assert d["flame"]["stacks"]["v"] >= n, d["flame"]["stacks"]["v"]
assert d["flame"]["calls"]["k"] >= 2 * n, d["flame"]["calls"]["k"]
assert d["header"]["unmatched_entries"] <= 2, d["header"]
assert d["header"]["kernel"] == sys.argv[3], d["header"]["kernel"]
' "$dir/calls.html" "$blocks" "$rel"
"$K" hist "$dir/calls.ktr" -k func --json >"$dir/calls.hist-func.json"
check "the page's histograms are hist --json's" python3 -c "$embedded"'
want = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{\"key\"")]
assert want == d["hist"]["func"], (want, d["hist"]["func"])
' "$dir/calls.html" "$dir/calls.hist-func.json"
"$K" hist "$dir/calls.ktr" -k probe --json >"$dir/calls.hist-probe.json"

if [ -s "$dir/lost.ktr" ]; then
	"$K" export --format html -o "$dir/lost.html" "$dir/lost.ktr"
	check "the overrun page counts every lost record on the timeline" python3 -c "$embedded"'
t = d["timeline"]
assert d["header"]["lost"] > 0, d["header"]
assert sum(l["count"] for l in t["lost"]) == d["header"]["lost"], t["lost"][:5]
# The markers share the overrun buffer: either may be lost too; the page
# has exactly those report has.
marks = [m["text"] for m in t["markers"]]
assert set(marks) <= {"overrun begins", "overrun ends"}, marks
assert len(marks) == int(sys.argv[2]), (marks, sys.argv[2])
' "$dir/lost.html" "$("$K" report "$dir/lost.ktr" -e marker | grep -c ': marker: ')"
	tl=$("$K" top "$dir/lost.ktr" --once --json 2>&1)
	check "the page's lost total is the views' (top --json)" python3 -c "$embedded"'
lost = sum(v for v in (json.loads(l).get("lost", 0) for l in sys.stdin if l.startswith("{")) if isinstance(v, int))
assert lost == d["header"]["lost"], (lost, d["header"]["lost"])
' "$dir/lost.html" <<<"$tl"
else
	notok "the overrun page (no recording)"
	notok "the page's lost total (no recording)"
fi

"$K" export --format html -o "$dir/objects.html" "$dir/objects.ktr"
"$K" report --objects --json "$dir/objects.ktr" >"$dir/objects.json"
check "the objects page has report --objects' lives" python3 -c "$embedded"'
want = json.load(open(sys.argv[2]))
assert d["objects"] == want, "differs"
assert len(want["lives"]) >= 1
' "$dir/objects.html" "$dir/objects.json"
check "a life on the objects page went through a hooked function" python3 -c "$embedded"'
assert any(l["hits"] for l in d["objects"]["lives"]), d["objects"]["lives"][:3]
' "$dir/objects.html"

# Live: a page from a capture of its own (--probe, -d), no file between.
(for _ in $(seq 40); do dd if=/dev/zero of=/dev/null bs=512 count=100 2>/dev/null; sleep 0.05; done) &
work=$!
"$K" export --format html -o "$dir/live.html" --probe 'f:lv vfs_read%both' -d 3s 2>"$dir/live.err"
wait "$work"
check "a live capture exported as a page has vfs_read's latencies" python3 -c "$embedded"'
funcs = {g["key"]: g["count"] for g in d["hist"]["func"]}
assert funcs.get("vfs_read", 0) > 0, funcs
assert d["header"]["probes"] == ["f:lv vfs_read%both"], d["header"]["probes"]
' "$dir/live.html"

# The recordings go to the host's browser test.
if [ -n "${KTRACK_VM_OUT:-}" ]; then
	keep=$KTRACK_VM_OUT/report
	mkdir -p "$keep"
	cp "$dir"/*.ktr "$dir"/*.json "$keep"/ && echo "$rel" >"$keep/kernel"
	check "kept the recordings for the browser test" test -s "$keep/calls.ktr"
	echo "# report recordings: $keep"
else
	skip "kept the recordings for the browser test" "not in a tests/vm/run guest"
fi
exit $fail
