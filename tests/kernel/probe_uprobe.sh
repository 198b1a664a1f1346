#!/usr/bin/env bash
# probe_uprobe - u and ur probes (uprobes on a user program) end to end in
# the test VM, against build/tests/targets/uprobe_target, which calls
# kt_target_fn(i, "kt-uprobe-str") for i = 0..N-1 (returning 2i + 1) and
# then kt_target_sleep(MS) once: exact counts and values at entry and
# return, $duration bracketing the sleep, ftrace's uprobe event on the same
# instruction as the oracle (same boot, same runs), -- COMMAND and -p
# limiting records to a process tree, a binary unlinked or replaced while
# armed, and bad input refused with a sentence and nothing armed.
#
#   tests/vm/run --kernel all -- tests/kernel/run-all 'probe_uprobe'
#
# Output: TAP.  Leaves the guest as it found it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/tap.sh
. "$here/lib/tap.sh"
# shellcheck source=lib/probe_target.sh
. "$here/lib/probe_target.sh"
pt_setup probe-uprobe
TGT=$root/build/tests/targets/uprobe_target
TR=/sys/kernel/tracing

# ---- entry: every call, its arguments, a user string ----------------------
"$K" record -o "$T/a.ktr" "u:tf $TGT:kt_target_fn i=\$arg1:s64 s=+0(\$arg2):string" \
	"ur:tr $TGT:kt_target_fn r=\$retval:s64 i=\$arg1:s64" -- "$TGT" 1000 >"$T/a.out" 2>&1
rc=$?
same "record -- TARGET 1000: exit 0" 0 "$rc"
same "u: 1000 entries of kt_target_fn, i = 0..999 in order, s read from user memory" \
	"$(seq 0 999 | sed 's/$/ kt-uprobe-str/')" "$(fields "$T/a.ktr" tf i s)"
same "ur: 1000 returns, r = 2i + 1 with i the entry's argument" \
	"$(seq 0 999 | awk '{print 2*$1+1, $1}')" "$(fields "$T/a.ktr" tr r i)"
if grep -q "0 lost" "$T/a.out" || ! grep -q "lost" "$T/a.out"; then ok "no record lost"; else
	notok "no record lost" "$(cat "$T/a.out")"
fi

# ---- a string in a page the process never touched: read as ftrace does ------
# (the handler may fault user pages in: a non-faulting read would fail here)
printf 'kt-mapped-str' >"$T/mapped.txt"
KT_TARGET_MAPFILE="$T/mapped.txt" "$K" record -o "$T/m.ktr" "u:tm $TGT:kt_target_fn s=+0(\$arg2):string" \
	-- "$TGT" 3 >"$T/m.out" 2>&1
same "u: a string in a mapped page not yet faulted in is read (3 of 3)" \
	"$(printf 'kt-mapped-str\nkt-mapped-str\nkt-mapped-str')" "$(fields "$T/m.ktr" tm s)"

# ---- ur: $duration brackets a known sleep ---------------------------------
"$K" record -o "$T/d.ktr" "ur:ts $TGT:kt_target_sleep ms=\$retval:s64 d=\$duration:u64" \
	-- "$TGT" 0 50 >"$T/d.out" 2>&1
d=$(fields "$T/d.ktr" ts ms d)
if [ "$(wc -l <<<"$d")" = 1 ] && awk '{ exit !($1 == 50 && $2 >= 50000000 && $2 < 5000000000) }' <<<"$d"; then
	ok "ur \$duration of a 50 ms sleep: between 50 ms and 5 s ($d)"
else
	notok "ur \$duration of a 50 ms sleep: between 50 ms and 5 s" "$d $(cat "$T/d.out")"
fi

# ---- text output names the probe and the user function ---------------------
"$K" trace "u:tx $TGT:kt_target_fn i=\$arg1" -- "$TGT" 3 >"$T/x.txt" 2>"$T/x.err"
same "trace: 3 lines of tx" 3 "$(grep -c ' tx: ' "$T/x.txt")"
if grep -q 'kt_target_fn' "$T/x.txt"; then ok "trace: the user function is named"; else
	notok "trace: the user function is named" "$(cat "$T/x.txt")"
fi

# ---- ftrace's uprobe event on the same instruction: the same count ----------
off=$(python3 - "$TGT" <<'PY'
import subprocess, sys
out = subprocess.run(["readelf", "-sW", sys.argv[1]], capture_output=True, text=True).stdout
addr = [int(l.split()[1], 16) for l in out.splitlines() if l.strip().endswith(" kt_target_fn")][0]
ph = subprocess.run(["readelf", "-lW", sys.argv[1]], capture_output=True, text=True).stdout
for l in ph.splitlines():
    w = l.split()
    if w and w[0] == "LOAD":
        o, v, fs = int(w[1], 16), int(w[2], 16), int(w[4], 16)
        if v <= addr < v + fs:
            print(hex(addr - v + o))
PY
)
echo "p:ktu/oracle $TGT:$off" >"$TR/uprobe_events" 2>"$T/o.err"
echo 1 >"$TR/events/ktu/oracle/enable"
echo >"$TR/trace"
"$K" record -o "$T/o.ktr" "u:tf $TGT:kt_target_fn" -- "$TGT" 500 >"$T/o.out" 2>&1
echo 0 >"$TR/events/ktu/oracle/enable"
ft=$(grep -c 'oracle:' "$TR/trace")
echo "-:ktu/oracle" >>"$TR/uprobe_events"
same "ftrace's uprobe event at $off and u at kt_target_fn: 500 hits each" "500 500" \
	"$ft $(fields "$T/o.ktr" tf | wc -l)"

# ---- -- COMMAND: only its process tree ------------------------------------
# The command waits for $T/go1; meanwhile another process makes 300 calls
# while recording runs.
"$K" record -o "$T/c.ktr" "u:tf $TGT:kt_target_fn" \
	-- sh -c "while [ ! -e $T/go1 ]; do sleep 0.05; done; $TGT 70; $TGT 30" >"$T/c.out" 2>&1 &
rec=$!
wait_line "$T/c.out" "recording to"
"$TGT" 300
touch "$T/go1"
wait $rec
same "-- COMMAND: the 100 calls of its two children, not the 300 of another process" 100 \
	"$(fields "$T/c.ktr" tf | wc -l)"

# ---- -p PID: that process (and what it starts) only ------------------------
sh -c "while [ ! -e $T/go2 ]; do sleep 0.05; done; exec $TGT 50" &
pid=$!
"$K" record -o "$T/p.ktr" -p "$pid" "u:tf $TGT:kt_target_fn" >"$T/p.out" 2>&1 &
rec=$!
wait_line "$T/p.out" "recording to"
"$TGT" 200
touch "$T/go2"
wait $pid
kill -INT $rec
wait $rec
same "-p PID: its 50 calls, not the 200 of another process" 50 "$(fields "$T/p.ktr" tf | wc -l)"

# ---- a binary unlinked, or replaced, while armed ---------------------------
cp "$TGT" "$T/t2"
"$K" record -o "$T/u.ktr" "u:tu $T/t2:kt_target_fn i=\$arg1" "ur:tv $T/t2:kt_target_sleep d=\$duration" \
	-- sh -c "$T/t2 5 300 & sleep 0.1; rm $T/t2; wait" >"$T/u.out" 2>&1
same "unlinked while armed: its running process still hits (5 entries, 1 return)" "5 1" \
	"$(fields "$T/u.ktr" tu | wc -l) $(fields "$T/u.ktr" tv | wc -l)"
cp "$TGT" "$T/t3"
"$K" record -o "$T/r.ktr" "u:tw $T/t3:kt_target_fn" \
	-- sh -c "$T/t3 4 200 & sleep 0.1; cp $TGT $T/t3.new; mv $T/t3.new $T/t3; $T/t3 6; wait" >"$T/r.out" 2>&1
same "replaced while armed: the old file's process hits (4), the new file's does not" 4 \
	"$(fields "$T/r.ktr" tw | wc -l)"

# ---- bad input: a sentence, nothing armed ----------------------------------
expect_fail "a missing file: exit 2, says so" 2 "does not exist|No such file|not found" \
	"$K" probe add "u:m1 /nonexistent/bin:main"
expect_fail "a relative path: a usage error" 1 "absolute" "$K" probe add "u:m2 bin/true:main"
expect_fail "an unknown symbol: says which" 2 "kt_no_such_fn" "$K" probe add "u:m3 $TGT:kt_no_such_fn"
expect_fail "\$retval on u: refused" 1 "retval" "$K" probe add "u:m4 $TGT:kt_target_fn r=\$retval"
expect_fail "a kernel stack action on u: refused" 1 "stack" "$K" probe add "u:m5 $TGT:kt_target_fn => stack"
expect_fail "not an ELF file: says so" 2 "ELF" "$K" probe add "u:m6 /etc/hostname:main"
echo "1..$n"
exit $fail
