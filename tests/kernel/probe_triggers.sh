#!/usr/bin/env bash
# probe_triggers - a probe's actions ('=> stop', '=> start', '=> stack',
# '=> snapshot', each with ':N') and the flight recorder ('record --flight
# SIZE'), end to
# end in the test VM against ktrack_test_probe_target, whose "bench N"
# calls ktrack_tpt_bench(i, 0x1234) for i = 0..N-1 and "sleep MS" calls
# ktrack_tpt_sleep(MS) once: exact counts of what is kept, the trigger
# records that mark each action, and bad input refused with nothing armed.
#
#   tests/vm/run --kernel all -- tests/kernel/run-all 'probe_triggers'
#
# Output: TAP.  Leaves the guest as it found it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
K=$root/build/user/bin/ktrackctl
rel=$(uname -r)
TPT=$root/build/modules/$rel/tests/kmod/ktrack_test_probe_target/ktrack_test_probe_target.ko
PROC=/proc/ktrack_test_probe
KL=/sys/kernel/debug/kprobes/list
T=$(mktemp -d /tmp/probe-triggers.XXXXXX)
# shellcheck source=lib/tap.sh
. "$(dirname "$0")/lib/tap.sh"

cleanup() {
	rmmod ktrack_test_probe_target 2>/dev/null
	"$K" unload >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug
if ! "$K" load >/dev/null || ! insmod "$TPT"; then
	echo "1..1"
	notok "load ktrack and the probe target"
	exit 1
fi
B='p:b ktrack_tpt_bench i=$arg1:u32'

# counts FILE: "b=N x=N stop=N start=N stacks=N lost=N first=I last=I gaps=N"
# from report --json (b's i values: first, last, and missing steps).
counts() {
	"$K" report --json "$1" | python3 -c '
import json, sys
c = {"b": 0, "x": 0, "stop": 0, "start": 0, "stack": 0, "stacks": 0, "lost": 0}
iv = []
nth = []
for l in sys.stdin:
    e = json.loads(l)
    ev = e.get("event")
    f = e.get("fields", {})
    if ev == "b":
        c["b"] += 1
        iv.append(f["i"])
    elif ev == "stack":
        c["stacks"] += 1
        ips = f.get("ips") or [""]
        if not str(ips[0]).startswith("ktrack_tpt_bench"):
            c["stacks"] += 1000  # a stack that does not start at the probed function
    elif ev in ("x", "on", "off"):
        c["x"] += 1
    elif ev == "trigger":
        c[f["action"]] = c.get(f["action"], 0) + 1
        nth.append("%s%d" % (f["action"], f["nth"]))
    elif ev == "lost":
        c["lost"] += f["count"]
gaps = sum(1 for a, b in zip(iv, iv[1:]) if b != a + 1)
print(" ".join("%s=%d" % kv for kv in c.items()),
      "first=%s last=%s gaps=%d nth=%s" % (iv[0] if iv else "-", iv[-1] if iv else "-", gaps, ",".join(nth)))
'
}
# run_record NAME ARGS...: ktrackctl record -o $T/NAME.ktr ARGS in the
# background, until it says it records; $rec is its pid.
run_record() {
	local name=$1
	shift
	"$K" record -o "$T/$name.ktr" "$@" >"$T/$name.out" 2>&1 &
	rec=$!
	wait_line "$T/$name.out" "^recording to"
}
# ended_by_itself PID SECONDS: the record exits on its own in time.
ended_by_itself() {
	local _i
	for _i in $(seq $(($2 * 10))); do
		kill -0 "$1" 2>/dev/null || { wait "$1"; return $?; }
		sleep 0.1
	done
	kill -INT "$1" 2>/dev/null
	wait "$1"
	return 124
}

# ---- => stop: the hit that stops is the last; record ends by itself ---------
if run_record stop "$B" 'p:x ktrack_tpt_sleep ms=$arg1:u32 => stop'; then
	echo "bench 300" >"$PROC"
	echo "sleep 1" >"$PROC"
	echo "bench 200" >"$PROC"
	ended_by_itself $rec 30
	rc=$?
	c=$(counts "$T/stop.ktr")
	if [ $rc = 0 ] && grep -q "stop' action ended the recording" "$T/stop.out"; then
		ok "record ends by itself when '=> stop' fires, and says so"
	else
		notok "record ends by itself when '=> stop' fires, and says so (exit $rc)" "$(cat "$T/stop.out")"
	fi
	case "$c" in
	"b=300 x=1 stop=1 start=0 stack=0 stacks=0 lost=0 first=0 last=299 gaps=0 nth=stop1")
		ok "=> stop: the 300 calls before it kept, the 200 after it not recorded, one trigger record" ;;
	*) notok "=> stop: the 300 calls before it kept, the 200 after it not recorded, one trigger record" "$c" ;;
	esac
	if "$K" report "$T/stop.ktr" | grep -q "trigger: .*action=stop"; then
		ok "the text report shows the trigger record"
	else
		notok "the text report shows the trigger record" "$("$K" report "$T/stop.ktr" | tail -5)"
	fi
else
	notok "record with '=> stop' starts" "$(cat "$T/stop.out")"
fi

# ---- stop:2 and start:1 windows; a start keeps record running ----------------
if run_record win "$B" 'p:off ktrack_tpt_sleep => stop:2' 'p:on ktrack_tpt_glob_one => start:1'; then
	echo "bench 10" >"$PROC"	# kept
	echo "sleep 1" >"$PROC"	# stop #1
	echo "bench 20" >"$PROC"	# paused
	echo "call 1" >"$PROC"	# start #1 (glob_one)
	echo "bench 30" >"$PROC"	# kept
	echo "sleep 1" >"$PROC"	# stop #2
	echo "bench 40" >"$PROC"	# paused
	echo "call 1" >"$PROC"	# start: used up, still paused
	echo "sleep 1" >"$PROC"	# stop: used up (and paused)
	echo "bench 50" >"$PROC"	# paused
	sleep 0.5
	if kill -0 $rec 2>/dev/null; then ok "with a '=> start' probe, record goes on after a stop"; else
		notok "with a '=> start' probe, record goes on after a stop" "$(cat "$T/win.out")"
	fi
	kill -INT $rec
	wait $rec
	c=$(counts "$T/win.ktr")
	# b: 0..9 then 0..29 (one gap where i restarts); off/on records: stop 1,
	# start 1, stop 2 (the hits that act are recorded)
	case "$c" in
	"b=40 x=3 stop=2 start=1 stack=0 stacks=0 lost=0 first=0 last=29 gaps=1 nth=stop1,start1,stop2")
		ok "stop:2/start:1: exactly the two windows kept, three trigger records in order" ;;
	*) notok "stop:2/start:1: exactly the two windows kept, three trigger records in order" "$c" ;;
	esac
else
	notok "record with stop/start windows starts" "$(cat "$T/win.out")"
fi

# ---- => stack:3 --------------------------------------------------------------
if run_record stk 'p:b ktrack_tpt_bench i=$arg1:u32 if i < 5 => stack:3'; then
	echo "bench 10" >"$PROC"
	kill -INT $rec
	wait $rec
	c=$(counts "$T/stk.ktr")
	case "$c" in
	"b=5 x=0 stop=0 start=0 stack=0 stacks=3 lost=0 first=0 last=4 gaps=0 nth=")
		ok "=> stack:3: the first 3 passing hits carry their stack, starting at the probed function; the next 2 none" ;;
	*) notok "=> stack:3: the first 3 passing hits carry their stack, the next 2 none" "$c" ;;
	esac
else
	notok "record with '=> stack' starts" "$(cat "$T/stk.out")"
fi

# ---- --flight: the newest history, the rest counted ---------------------------
if run_record fl --flight 64K "$B" 'p:x ktrack_tpt_sleep => stop'; then
	grep -q "flight recorder: keeping the newest" "$T/fl.out" && ok "--flight says what it keeps" ||
		notok "--flight says what it keeps" "$(cat "$T/fl.out")"
	taskset -c 0 sh -c "echo 'bench 20000' >$PROC; echo 'sleep 1' >$PROC"
	ended_by_itself $rec 60
	rc=$?
	c=$(counts "$T/fl.ktr")
	read -r kept lost last gaps <<<"$(echo "$c" | sed -E 's/.*b=([0-9]+).*lost=([0-9]+) first=[0-9]+ last=([0-9]+) gaps=([0-9]+).*/\1 \2 \3 \4/')"
	if [ $rc = 0 ] && [ "${last:-}" = 19999 ] && [ "${gaps:-1}" = 0 ] && [ "$((kept + lost))" = 20000 ] &&
		[ "$kept" -gt 100 ] && [ "$kept" -lt 20000 ]; then
		ok "--flight 64K: the newest $kept of 20000 calls kept, up to the last, the $lost before counted lost"
	else
		notok "--flight 64K: the newest calls kept up to the last, kept + lost = 20000 (exit $rc)" "$c"
	fi
else
	notok "record --flight starts" "$(cat "$T/fl.out")"
fi

# ---- => snapshot: a copy of the history up to the hit, saved while recording goes on
if run_record snap --flight 1M "$B" 'p:x ktrack_tpt_sleep => snapshot:1'; then
	taskset -c 0 sh -c "echo 'bench 300' >$PROC; echo 'sleep 1' >$PROC; echo 'bench 200' >$PROC"
	if wait_line "$T/snap.out" "^snapshot 1 " && kill -0 $rec 2>/dev/null; then
		ok "the snapshot is saved while recording goes on"
	else
		notok "the snapshot is saved while recording goes on" "$(cat "$T/snap.out")"
	fi
	echo "sleep 1" >"$PROC"	# snapshot:1 is used up
	kill -INT $rec
	wait $rec
	c=$(counts "$T/snap.snap1.ktr")
	case "$c" in
	"b=300 x=1 stop=0 start=0 stack=0 stacks=0 lost=0 snapshot=1 first=0 last=299 gaps=0 nth=snapshot1")
		ok "=> snapshot: the copy holds exactly the 300 calls before the hit, the hit and its trigger record" ;;
	*) notok "=> snapshot: the copy holds exactly the 300 calls before the hit, the hit and its trigger record" "$c" ;;
	esac
	c=$(counts "$T/snap.ktr")
	case "$c" in
	"b=500 x=2 stop=0 start=0 stack=0 stacks=0 lost=0 snapshot=1 first=0 last=199 gaps=1 nth=snapshot1")
		ok "the recording went on: all 500 calls and both hits, one snapshot (':1')" ;;
	*) notok "the recording went on: all 500 calls and both hits, one snapshot (':1')" "$c" ;;
	esac
	grep -q "^1 snapshot saved$" "$T/snap.out" && ok "record says how many snapshots it saved" ||
		notok "record says how many snapshots it saved" "$(cat "$T/snap.out")"
else
	notok "record with '=> snapshot' starts" "$(cat "$T/snap.out")"
fi

# ---- => snapshot over an overwritten ring: kept + lost = produced -------------
if run_record snapo --flight 64K "$B" 'p:x ktrack_tpt_sleep => snapshot'; then
	taskset -c 0 sh -c "echo 'bench 20000' >$PROC; echo 'sleep 1' >$PROC"
	wait_line "$T/snapo.out" "^snapshot 1 "
	kill -INT $rec
	wait $rec
	c=$(counts "$T/snapo.snap1.ktr")
	read -r kept lost last gaps <<<"$(echo "$c" | sed -E 's/.*b=([0-9]+).*lost=([0-9]+) snapshot=1 first=[0-9]+ last=([0-9]+) gaps=([0-9]+).*/\1 \2 \3 \4/')"
	if [ "${last:-}" = 19999 ] && [ "${gaps:-1}" = 0 ] && [ "$((kept + lost))" = 20000 ] &&
		[ "$kept" -gt 100 ] && [ "$kept" -lt 20000 ]; then
		ok "snapshot of a 64K flight ring: the newest $kept of 20000 calls, the $lost before counted lost"
	else
		notok "snapshot of a 64K flight ring: the newest calls, kept + lost = 20000" "$c"
	fi
else
	notok "record --flight 64K with '=> snapshot' starts" "$(cat "$T/snapo.out")"
fi

# ---- one snapshot held at a time: the others are counted missed ---------------
if run_record snapm --flight 1M 'p:b ktrack_tpt_bench i=$arg1:u32 if i < 3 => snapshot'; then
	echo "bench 10" >"$PROC"	# i = 0 takes it, 1 and 2 find it held
	wait_line "$T/snapm.out" "^snapshot 1 "
	echo "bench 10" >"$PROC"	# the slot is free again: i = 0 takes it
	wait_line "$T/snapm.out" "^snapshot 2 "
	kill -INT $rec
	wait $rec
	c=$(counts "$T/snapm.snap2.ktr")
	case "$c" in
	"b=4 x=0 stop=0 start=0 stack=0 stacks=0 lost=0 snapshot=2 first=0 last=0 gaps=1 nth=snapshot1,snapshot4")
		ok "the second snapshot holds the first run's 3 hits and the hit that took it (turn 4)" ;;
	*) notok "the second snapshot holds the first run's 3 hits and the hit that took it (turn 4)" "$c" ;;
	esac
	grep -q "^2 snapshots saved, 4 missed" "$T/snapm.out" && ok "record counts the 4 snapshots missed" ||
		notok "record counts the 4 snapshots missed" "$(cat "$T/snapm.out")"
else
	notok "record with a busy '=> snapshot' starts" "$(cat "$T/snapm.out")"
fi

# ---- bad input: clear errors, nothing armed ------------------------------------
before=$(cat "$KL" /sys/kernel/tracing/enabled_functions 2>/dev/null | grep -c ktrack_tpt)
expect_fail "an unknown action is refused with a caret" 1 "unknown action 'halt'" \
	"$K" record -o "$T/bad.ktr" -d 1s "$B => halt"
expect_fail "a zero count is refused" 1 "must be a count from 1" \
	"$K" record -o "$T/bad.ktr" -d 1s "$B => stop:0"
expect_fail "an action twice is refused" 1 "given twice" \
	"$K" record -o "$T/bad.ktr" -d 1s "$B => stack => stack:2"
expect_fail "'=>' without an action is refused" 1 "needs an action" \
	"$K" record -o "$T/bad.ktr" -d 1s "$B =>"
expect_fail "--flight 0 is refused" 1 "above zero" \
	"$K" record -o "$T/bad.ktr" -d 1s --flight 0 "$B"
expect_fail "--flight with --mode discard is refused" 1 "leave out --buffer-pages and --mode" \
	"$K" record -o "$T/bad.ktr" -d 1s --flight 1M --mode discard "$B"
expect_fail "--flight with a bad size is refused" 1 "expected a size" \
	"$K" record -o "$T/bad.ktr" -d 1s --flight 12Q "$B"
expect_fail "'=> snapshot' without --flight is refused" 1 "add --flight SIZE" \
	"$K" record -o "$T/bad.ktr" -d 1s "$B => snapshot"
expect_fail "'=> snapshot' with -o - is refused" 1 "give -o FILE" \
	"$K" record -o - -d 1s --flight 1M "$B => snapshot"
expect_fail "'=> snapshot' in trace is refused" 1 "use 'ktrackctl record --flight SIZE -o FILE'" \
	"$K" trace -d 1s "$B => snapshot"
"$K" session create snapd >/dev/null
expect_fail "'=> snapshot' on a discard-mode named session is refused by the kernel, with the fix" 2 \
	"needs a session in overwrite mode" "$K" probe add -s snapd "$B => snapshot"
"$K" session destroy snapd >/dev/null
after=$(cat "$KL" /sys/kernel/tracing/enabled_functions 2>/dev/null | grep -c ktrack_tpt)
[ "$before" = "$after" ] && ok "nothing left armed by the refusals" || notok "nothing left armed by the refusals" "$before -> $after"

echo "1..$n"
exit $fail
