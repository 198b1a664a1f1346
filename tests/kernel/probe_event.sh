#!/usr/bin/env bash
# probe_event - e probes: a trace event's own fields by name ($FIELD), read
# from the record its TP_fast_assign filled (through a kernel perf event),
# checked against ftrace's own event in the same boot:
#   - syscalls/sys_enter_openat: a task opens a marker file N times; the e
#     probe (filtered on the task's pid) sees the same openat calls as
#     ftrace's event filtered on common_pid, with the same dfd and flags,
#     and the path read through the $filename user pointer (:ustring);
#   - sched/sched_switch: every switch into that task, counted by the e
#     probe and by ftrace over the same window, with the same pids and the
#     task's comm (a char[16] field read in place);
#   - sched/sched_process_exec: a __data_loc string (filename);
#   - bad input refused with a sentence: no such event, no such field (the
#     fields listed), a type wider than the field, :string on a number,
#     registers and $argN.
#
#   tests/vm/run --kernel all -- tests/kernel/run-all 'probe_event'
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
K=$root/build/user/bin/ktrackctl
TR=/sys/kernel/tracing
T=$(mktemp -d /tmp/probe-event.XXXXXX)
N=20

# shellcheck source=lib/tap.sh
. "$(dirname "$0")/lib/tap.sh"

ftrace_off() {
	for e in syscalls/sys_enter_openat sched/sched_switch sched/sched_process_exec; do
		echo 0 >"$TR/events/$e/enable" 2>/dev/null
		echo 0 >"$TR/events/$e/filter" 2>/dev/null
	done
}
cleanup() {
	ftrace_off
	"$K" unload >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
if ! "$K" load >/dev/null; then
	echo "Bail out! cannot load ktrack.ko"
	exit 1
fi

# --- the workload: a task that, once released, opens a marker N times and
# sleeps between the opens (a switch away and back each time).  It says
# when it has started (bash's own start-up opens files and switches), then
# blocks opening the 'go' fifo: from then on it has no event until it is
# released, so both tracers, armed while it waits, see the same window.
marker=$T/ktrack-e-probe-marker
: >"$marker"
mkfifo "$T/go" "$T/never"
bash -c ': >"$3"; read -r _ <"$0"; exec 9<>"$1"
	for ((i = 0; i < '$N'; i++)); do : <"$2"; read -r -t 0.02 -u 9 _; done' \
	"$T/go" "$T/never" "$marker" "$T/ready" &
P=$!
for _ in $(seq 300); do [ -e "$T/ready" ] && break; sleep 0.1; done

"$K" record -o "$T/e.ktr" \
	"e:op syscalls/sys_enter_openat dfd=\$dfd:s32 path=\$filename:ustring flags=\$flags:u32 if pid == $P" \
	"e:sw sched/sched_switch prev=\$prev_pid next=\$next_pid comm=\$next_comm if next == $P" \
	>"$T/rec.log" 2>&1 &
R=$!
if wait_line "$T/rec.log" 'recording to'; then ok "record arms two e probes"; else
	notok "record arms two e probes" "$(cat "$T/rec.log")"
fi
# ftrace's own events, filtered on the task, as the oracle: enabled after
# ktrack records and disabled before it stops
ftrace_off
echo >"$TR/trace"
echo "common_pid == $P" >"$TR/events/syscalls/sys_enter_openat/filter"
echo "next_pid == $P" >"$TR/events/sched/sched_switch/filter"
echo 1 >"$TR/events/syscalls/sys_enter_openat/enable"
echo 1 >"$TR/events/sched/sched_switch/enable"
echo go >"$T/go"
wait "$P"
echo 0 >"$TR/events/syscalls/sys_enter_openat/enable"
echo 0 >"$TR/events/sched/sched_switch/enable"
kill -INT "$R"
wait "$R"
rc=$?
cp "$TR/trace" "$T/ftrace.txt"
if [ "$rc" = 0 ] && grep -q ' 0 lost' "$T/rec.log"; then ok "record ends cleanly, nothing lost"; else
	notok "record ends cleanly, nothing lost (exit $rc)" "$(cat "$T/rec.log")"
fi
"$K" report --json "$T/e.ktr" >"$T/e.json" 2>"$T/report.err"

check "openat: the e probe sees the ftrace event's calls, dfd and flags, and the path" \
	python3 - "$T/e.json" "$T/ftrace.txt" "$marker" "$N" <<'PY'
import json, re, sys
evs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ops = [e for e in evs if e.get("event") == "op"]
ft = [l for l in open(sys.argv[2]) if "sys_openat(" in l or "sys_enter_openat" in l]
def val(l, k):
    m = re.search(k + r": (?:0x)?([0-9a-f]+)", l)
    return int(m.group(1), 16) if m else None
mine = [(e["fields"]["dfd"] & 0xffffffff, e["fields"]["flags"]) for e in ops]
theirs = [(val(l, "dfd") & 0xffffffff, val(l, "flags")) for l in ft]
marked = [e for e in ops if e["fields"]["path"] == sys.argv[3]]
print(f"ktrack {len(ops)} openat ({len(marked)} of the marker), ftrace {len(ft)}")
assert len(marked) == int(sys.argv[4]), "the marker's opens"
assert mine == theirs, f"{mine[:4]} != {theirs[:4]}"
PY

check "sched_switch: the same switches into the task as ftrace's event, same pids and comm" \
	python3 - "$T/e.json" "$T/ftrace.txt" "$P" "$N" <<'PY'
import json, re, sys
evs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sw = [e["fields"] for e in evs if e.get("event") == "sw"]
ft = [l for l in open(sys.argv[2]) if "sched_switch:" in l]
theirs = []
for l in ft:
    m = re.search(r"prev_pid=(\d+) .* next_comm=(.*) next_pid=(\d+)", l)
    theirs.append((int(m.group(1)), int(m.group(3)), m.group(2)))
mine = [(f["prev"], f["next"], f["comm"]) for f in sw]
print(f"ktrack {len(mine)} switches, ftrace {len(theirs)}")
assert len(mine) >= int(sys.argv[4]), "a switch back after each sleep"
assert all(n == int(sys.argv[3]) for _, n, _ in mine)
assert mine == theirs, f"{mine[:3]} != {theirs[:3]}"
PY

# --- a __data_loc string ------------------------------------------------------
"$K" record -o "$T/x.ktr" 'e:ex sched/sched_process_exec file=$filename pid=$pid' \
	>"$T/x.log" 2>&1 &
R=$!
wait_line "$T/x.log" 'recording to'
/bin/true
kill -INT "$R"
wait "$R"
"$K" report --json "$T/x.ktr" >"$T/x.json" 2>&1
check "sched_process_exec: the __data_loc filename of an exec" \
	python3 - "$T/x.json" <<'PY'
import json, sys
files = [json.loads(l)["fields"]["file"] for l in open(sys.argv[1]) if l.strip()]
print(files[:5])
assert "/bin/true" in files
PY

# --- bad input ----------------------------------------------------------------
expect_fail "an event that does not exist is refused" 1 'no trace event sched/no_such_event' \
	"$K" probe compile 'e sched/no_such_event'
expect_fail "a field the event lacks is refused, with its fields" 1 "no field 'nope'.*prev_comm" \
	"$K" probe compile 'e sched/sched_switch x=$nope'
expect_fail "a type wider than its field is refused" 1 'does not fit' \
	"$K" probe compile 'e sched/sched_switch x=$prev_pid:u64'
expect_fail ":string on a number is refused" 1 'not a string' \
	"$K" probe compile 'e sched/sched_switch x=$prev_pid:string'
expect_fail "registers and \$argN are refused" 1 'e probes have no registers' \
	"$K" probe compile 'e sched/sched_switch x=%ax'
expect_fail "a module event whose module is not loaded is refused with the way out" 1 \
	"give 'a' a type" "$K" probe compile 'e nosuchmod:nosuch/event x=$a'
exit $fail
