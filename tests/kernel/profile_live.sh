#!/usr/bin/env bash
# profile_live - 'ktrackctl profile --live': functions counted and timed in
# the kernel (KTRACK_PROBE_F_PROFILE), end to end in the test VM against
# ktrack_test_probe_target, whose "bench N" calls ktrack_tpt_bench() N
# times and "sleep MS" calls ktrack_tpt_sleep(MS) once: exact hit counts,
# times that bracket the sleeps, the session's pid filter, no record
# written, nothing left armed, and bad input refused with nothing armed.
#
#   tests/vm/run --kernel all -- tests/kernel/run-all 'profile_live'
#
# Output: TAP.  Leaves the guest as it found it.
set -u
# shellcheck source=lib/tap.sh
. "$(dirname "$0")/lib/tap.sh"
# shellcheck source=lib/probe_target.sh
. "$(dirname "$0")/lib/probe_target.sh"
KL=/sys/kernel/debug/kprobes/list
pt_setup profile-live
M=ktrack_test_probe_target

# row FILE FUNC: "hits timed total_ns max_ns" of FUNC in profile --json
# output, "none" when it has no row.
row() {
	python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("func") == sys.argv[2]:
        print(e["hits"], e["timed"], e["total_ns"], e["max_ns"])
        break
else:
    print("none")
' "$1" "$2"
}
# probes left in the kernel: kprobes (6.1's f) or ftrace hooks (6.12's fprobe)
armed() {
	cat "$KL" /sys/kernel/tracing/enabled_functions 2>/dev/null | grep -c "ktrack_tpt\|vfs_read"
}

# ---- exact counts and times, MOD:GLOB, run under -- COMMAND ------------------
if "$K" profile --live "$M:ktrack_tpt_*" --json -- sh -c \
	"echo 'bench 5000' > $PROC; echo 'sleep 30' > $PROC; echo 'sleep 30' > $PROC" \
	>"$T/a.json" 2>"$T/a.err"; then
	ok "profile --live MOD:GLOB -- COMMAND runs and ends with the command"
else
	notok "profile --live MOD:GLOB -- COMMAND runs and ends with the command" "$(cat "$T/a.err")"
fi
read -r bh bt btot bmax <<<"$(row "$T/a.json" ktrack_tpt_bench)"
if [ "$bh" = 5000 ] && [ "$bt" = 5000 ] && [ "$btot" -gt 0 ] && [ "$bmax" -le "$btot" ]; then
	ok "ktrack_tpt_bench: 5000 calls, each timed"
else
	notok "ktrack_tpt_bench: 5000 calls, each timed" "$(cat "$T/a.json")"
fi
read -r sh st stot smax <<<"$(row "$T/a.json" ktrack_tpt_sleep)"
if [ "$sh" = 2 ] && [ "$st" = 2 ] && [ "$smax" -ge 30000000 ] && [ "$stot" -ge 60000000 ] &&
	[ "$stot" -lt 5000000000 ]; then
	ok "ktrack_tpt_sleep: 2 calls of at least 30 ms each, under 5 s in all"
else
	notok "ktrack_tpt_sleep: 2 calls of at least 30 ms each" "$sh $st $stot $smax"
fi
if [ "$(row "$T/a.json" ktrack_tpt_add)" = none ]; then
	ok "a matched function never called has no row"
else
	notok "a matched function never called has no row" "$(cat "$T/a.json")"
fi
if grep -q "probe profile0 (id [0-9]*): .*armed, [0-9]* functions" "$T/a.err"; then
	ok "stderr names the profiling probe and its functions"
else
	notok "stderr names the profiling probe and its functions" "$(cat "$T/a.err")"
fi
check "nothing left armed after the profile" test "$(armed)" = 0

# ---- the text table -----------------------------------------------------------
"$K" profile --live "$M:ktrack_tpt_bench" -- sh -c "echo 'bench 700' > $PROC" >"$T/t.txt" 2>"$T/t.err"
if grep -Eq "^ +Function +Hit +Time +Avg +Max" "$T/t.txt" &&
	grep -Eq "^ +ktrack_tpt_bench +700 +[0-9.]+ us" "$T/t.txt" && ! grep -q Self "$T/t.txt"; then
	ok "text table: Function/Hit/Time/Avg/Max, 700 calls of ktrack_tpt_bench"
else
	notok "text table: Function/Hit/Time/Avg/Max, 700 calls" "$(cat "$T/t.txt" "$T/t.err")"
fi

# ---- -d and the session's pid filter ----------------------------------------
"$K" profile --live "$M:ktrack_tpt_bench" -p 1 -d 2s --json >"$T/p.json" 2>"$T/p.err" &
prof=$!
wait_line "$T/p.err" "^profiling in the kernel"
echo "bench 100" >"$PROC"
wait $prof
rc=$?
if [ $rc = 0 ] && [ "$(row "$T/p.json" ktrack_tpt_bench)" = none ]; then
	ok "-p 1: calls by another task are not counted; -d ends the profile"
else
	notok "-p 1: calls by another task are not counted (exit $rc)" "$(cat "$T/p.json" "$T/p.err")"
fi
"$K" profile --live "$M:ktrack_tpt_bench" -p $$ -d 2s --json >"$T/q.json" 2>"$T/q.err" &
prof=$!
wait_line "$T/q.err" "^profiling in the kernel"
echo "bench 100" >"$PROC"
wait $prof
read -r qh _ <<<"$(row "$T/q.json" ktrack_tpt_bench)"
if [ "$qh" = 100 ]; then ok "-p of the calling shell: its 100 calls counted"; else
	notok "-p of the calling shell: its 100 calls counted" "$(cat "$T/q.json" "$T/q.err")"
fi

# ---- a vmlinux function, Ctrl-C ends it -----------------------------------------
"$K" profile --live vfs_read --json >"$T/v.json" 2>"$T/v.err" &
prof=$!
wait_line "$T/v.err" "^profiling in the kernel"
dd if=/dev/zero of=/dev/null bs=1 count=2000 2>/dev/null
kill -INT $prof
wait $prof
rc=$?
read -r vh vt _ <<<"$(row "$T/v.json" vfs_read)"
if [ $rc = 0 ] && [ "${vh:-0}" -ge 2000 ] && [ "${vt:-0}" -ge 1990 ]; then
	ok "vfs_read: at least dd's 2000 reads, timed; Ctrl-C ends the profile"
else
	notok "vfs_read: at least dd's 2000 reads (exit $rc)" "$(cat "$T/v.json" "$T/v.err")"
fi

# ---- no record: the session's rings stay empty -----------------------------------
# (the profile's probe writes nothing; checked by the kernel test
# probe_desc's profile case, which drains the session)

# ---- bad input: clear errors, nothing armed --------------------------------------
expect_fail "--live '' is a usage error" 1 "function glob" "$K" profile --live ''
expect_fail "--live with a space is a usage error" 1 "one function glob" "$K" profile --live 'vfs_read x'
expect_fail "--live with a FILE is a usage error" 1 "no FILE" "$K" profile --live vfs_read "$T/a.json"
expect_fail "--live --sort self is a usage error" 1 "self time" "$K" profile --live vfs_read --sort self -d 1s
expect_fail "--live --callers is a usage error" 1 "recording" "$K" profile --live vfs_read --callers -d 1s
expect_fail "'-- COMMAND' without --live is a usage error" 1 "goes with --live" "$K" profile "$T/a.json" -- true
expect_fail "an unknown function: a sentence, exit 1" 1 "nosuch_function_xyz.*not a function" \
	"$K" profile --live nosuch_function_xyz -d 1s
check "nothing armed after the refusals" test "$(armed)" = 0
# ktrack's own allocation counters: no session, probe or ring outlives a profile
if awk '$2 != 0 { bad = 1 } END { exit bad }' /sys/kernel/debug/ktrack/allocations; then
	ok "no session, probe or ring left behind (allocation counters at zero)"
else
	notok "no session, probe or ring left behind" "$(cat /sys/kernel/debug/ktrack/allocations)"
fi

rmmod ktrack_test_probe_target
check "ktrack unloads after the profiles" "$K" unload
echo "1..$n"
exit $fail
