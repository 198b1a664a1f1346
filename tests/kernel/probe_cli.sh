#!/usr/bin/env bash
# probe_cli - 'ktrackctl probe add|list|del' on named sessions and the
# one-shot 'ktrackctl trace SPEC...' (anonymous and -s NAME), in the test
# VM, against the test module ktrack_test_probe_target: what the user sees
# (mechanism, hits, misses, state, decoded fields, sentences for errors) and
# that every probe a command added is gone when it ends (kprobes/list).
#
#   tests/vm/run --kernel all -- tests/kernel/run-all 'probe_cli'
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
T=$(mktemp -d /tmp/probe-cli.XXXXXX)

# shellcheck source=lib/tap.sh
. "$(dirname "$0")/lib/tap.sh"
# field FILE NAME COLUMN: column COLUMN of the 'probe list' row of probe NAME,
# counted from the STATE column (0 = state, 1 = hits, 2 = misses).  The
# mechanism before it may have several words.
field() {
	awk -v p="$2" -v c="$3" '$2 == p {
		for (i = 4; i <= NF; i++) if ($i ~ /^(armed|pending|disarmed)$/) break
		print $(i + c) }' "$1"
}
# grep_or_show REGEX FILE [MORE...]: FILE has a line matching REGEX; else
# shows FILE and MORE.
grep_or_show() {
	grep -Eq -- "$1" "$2" && return 0
	shift
	cat "$@"
	return 1
}
kprobes_on() { grep -c "$1" "$KL" 2>/dev/null; }
# ftrace_on NAME: call sites of NAME that ftrace has enabled (ftrace_ops)
ftrace_on() { grep -c "^$1" /sys/kernel/tracing/enabled_functions 2>/dev/null; }
# ftrace_refs NAME: how many ftrace_ops call NAME's call sites (the "(N)")
ftrace_refs() {
	awk -v f="$1" '$1 == f { for (i = 2; i <= NF; i++) if ($i ~ /^\([0-9]+\)$/) { gsub(/[()]/, "", $i); n += $i; break } }
		END { print n + 0 }' /sys/kernel/tracing/enabled_functions
}

cleanup() {
	"$K" session destroy --all >/dev/null 2>&1
	rmmod ktrack_test_probe_target 2>/dev/null
	"$K" unload >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
if ! "$K" load >/dev/null || ! insmod "$TPT"; then
	echo "Bail out! cannot load ktrack.ko and the probe target module"
	exit 1
fi
if "$K" version | grep -q '^features .*\bfprobe\b'; then fmech=fprobe; else fmech='kprobe+kretprobe (ftrace)'; fi

# --- probe add / list / del on a named session ------------------------------
check "session create cli1" "$K" session create cli1
"$K" probe add -s cli1 'p:pa ktrack_tpt_glob_one x=$arg1:s32' >"$T/add.out" 2>&1
check "probe add says name, session, mechanism and state (p at a function's entry: ftrace_ops)" \
	grep -Eq "^probe pa \(id [0-9]+\) added to session 'cli1': ftrace_ops, armed$" "$T/add.out"
# by address, p stays a kprobe
addr=$(awk '$3 == "ktrack_tpt_glob_one" { print $1; exit }' /proc/kallsyms)
"$K" probe add -s cli1 "p:pk 0x$addr" >"$T/addk.out" 2>&1
check "p by address is a kprobe" grep -Eq "^probe pk \(id [0-9]+\) added to session 'cli1': kprobe, armed$" "$T/addk.out"
"$K" probe add -s cli1 'r2:pr ktrack_tpt_block ret=$retval' >/dev/null 2>&1
"$K" probe add -s cli1 'f:pf ktrack_tpt_glob_*%both' >"$T/addf.out" 2>&1
check "f probe add says which mechanism is in use ($fmech)" \
	grep -Fq "added to session 'cli1': $fmech, armed" "$T/addf.out"
"$K" probe add -s cli1 'p:pm ktrack_test_nosuchmod:some_fn' >"$T/addm.out" 2>&1
check "a probe on a module that is not loaded is pending, and says so" \
	grep -q "module ktrack_test_nosuchmod is not loaded: the probe arms when it loads" "$T/addm.out"
"$K" session list >"$T/sessions.out" 2>&1
check "session list counts the 5 probes of cli1" \
	awk '$1 == "cli1" && $5 == 5 { f = 1 } END { if (!f) { system("cat '"$T/sessions.out"'"); exit 1 } }' "$T/sessions.out"

echo "call 3" >$PROC
# Five callers of ktrack_tpt_block() and MAXACTIVE 2: three misses.
for _ in 1 2 3 4 5; do echo block >$PROC & done
for _ in $(seq 200); do grep -q "inside 5" $PROC && break; sleep 0.05; done
echo release >$PROC
wait
echo rearm >$PROC
"$K" probe list -s cli1 >"$T/list.out" 2>&1
check "probe list has the header" grep -Eq '^ID +NAME +K +MECHANISM +STATE +HITS +MISSES' "$T/list.out"
check "probe list: pa is a p on ftrace_ops, armed, 3 hits, 0 misses" \
	test "$(awk '$2 == "pa" { print $3, $4 }' "$T/list.out") $(field "$T/list.out" pa 0) $(field "$T/list.out" pa 1) $(field "$T/list.out" pa 2)" = "p ftrace_ops armed 3 0"
check "probe list: pk is a kprobe, armed, 3 hits, 0 misses" \
	test "$(awk '$2 == "pk" { print $3, $4 }' "$T/list.out") $(field "$T/list.out" pk 0) $(field "$T/list.out" pk 1) $(field "$T/list.out" pk 2)" = "p kprobe armed 3 0"
check "probe list: pr is a kretprobe with 2 hits and 3 misses (MAXACTIVE 2, 5 callers)" \
	test "$(awk '$2 == "pr" { print $4 }' "$T/list.out") $(field "$T/list.out" pr 1) $(field "$T/list.out" pr 2)" = "kretprobe 2 3"
check "probe list: pf is $fmech with 24 hits over 4 functions" \
	test "$(grep -E '^[0-9]+ +pf +f ' "$T/list.out" | grep -F " $fmech " | grep -Ec ' armed +24 +0 .*ktrack_tpt_glob_[a-z]+ \(\+3 more\)$')" = 1
check "probe list: pm is pending with no hits" test "$(field "$T/list.out" pm 0) $(field "$T/list.out" pm 1)" = "pending 0"

expect_fail "probe add of an existing name is refused with a sentence (exit 2)" 2 \
	"cannot add probe 'pa': a probe with that name already exists in this session" \
	"$K" probe add -s cli1 'p:pa ktrack_tpt_glob_two'
expect_fail "probe add of a malformed spec shows the message and caret (exit 1)" 1 \
	'function arguments are \$arg1\.\.\$arg6' "$K" probe add -s cli1 'p ktrack_tpt_add +8($arg9):u32'
expect_fail "probe add of an unknown symbol says so (exit 1 or 2)" 1 "symbol not found" \
	"$K" probe add -s cli1 'p nosuch_function_xyz'
expect_fail "probe del of an unknown name says where to look (exit 2)" 2 \
	"no probe named 'nosuch' in session 'cli1': see 'ktrackctl probe list -s cli1'" \
	"$K" probe del -s cli1 nosuch
expect_fail "probe del without a name or --all is a usage error (exit 1)" 1 "name one probe to delete, or pass --all" \
	"$K" probe del -s cli1
expect_fail "probe del with a name and --all is a usage error (exit 1)" 1 "name one probe to delete, or pass --all" \
	"$K" probe del -s cli1 pa --all
expect_fail "probe list of an unknown session says so" 2 "no session named 'nosuch'" "$K" probe list -s nosuch

before=$(kprobes_on ktrack_tpt_glob_one)
"$K" probe del -s cli1 pk >/dev/null 2>&1
check "the kprobe of pk is unregistered" test "$(kprobes_on ktrack_tpt_glob_one)" -lt "$before"
before=$(ftrace_refs ktrack_tpt_glob_one)
"$K" probe del -s cli1 pa >"$T/del.out" 2>&1
check "probe del NAME deletes that probe" grep -q "^deleted probe pa$" "$T/del.out"
"$K" probe list -s cli1 >"$T/list2.out" 2>&1
check "probe list no longer shows it, and still shows the others" \
	bash -c "! grep -Eq '^[0-9]+ +pa ' '$T/list2.out' && grep -Eq '^[0-9]+ +pr ' '$T/list2.out'"
check "its ftrace_ops no longer calls ktrack_tpt_glob_one" test "$(ftrace_refs ktrack_tpt_glob_one)" -lt "$before"
"$K" probe del -s cli1 --all >"$T/delall.out" 2>&1
check "probe del --all deletes the rest" grep -q "^deleted every probe of session 'cli1'$" "$T/delall.out"
"$K" probe list -s cli1 >"$T/list-empty.out" 2>&1
check "probe list then says the session has none" grep -q "^no probes in session 'cli1'$" "$T/list-empty.out"
check "no ktrack kprobe or ftrace call site is left on the target module" \
	test "$(kprobes_on 'ktrack_tpt_')" = 0 -a "$(ftrace_on 'ktrack_tpt_')" = 0

# --- symbols: non-unique names, MOD:SYM ------------------------------------
dup=$(awk '$2 ~ /^[tT]$/ && NF == 3 { print $3 }' /proc/kallsyms | sort | uniq -d | head -1)
if [ -n "$dup" ]; then
	expect_fail "a non-unique symbol ($dup) is refused with advice (exit 1)" 1 \
		"$dup is not unique \([0-9]+ definitions\): write MOD:$dup or probe by address" \
		"$K" probe add -s cli1 "p $dup"
else
	skip "a non-unique symbol is refused with advice" "this kernel has no duplicated text symbol"
fi
"$K" probe add -s cli1 'p:pmod ktrack_test_probe_target:ktrack_tpt_glob_three' >/dev/null 2>&1
echo "call 2" >$PROC
"$K" probe list -s cli1 >"$T/listm.out" 2>&1
check "MOD:SYM probes the module's function (2 hits, target shown with its module)" \
	grep -Eq '^[0-9]+ +pmod +p +kprobe +armed +2 +0 .*ktrack_test_probe_target:ktrack_tpt_glob_three(\+0)?$' "$T/listm.out"
"$K" probe del -s cli1 pmod >/dev/null 2>&1

# --- trace SPEC...: one-shot on an anonymous session ------------------------
"$K" trace 'p:tg ktrack_tpt_glob_two x=$arg1:s32' 'r:tr ktrack_tpt_glob_two ret=$retval:s32' \
	>"$T/trace.out" 2>"$T/trace.err" &
tp=$!
# The armed line means recording has begun: no sleep after it, and no wait
# for the output before the stop (the stop delivers every record).
wait_line "$T/trace.err" '^probe tr '
echo "call 2" >$PROC
check "trace says which probes it attached, with their mechanism" \
	bash -c "grep -Eq '^probe tg \(id [0-9]+\): ftrace_ops, armed$' '$T/trace.err' && grep -Eq '^probe tr \(id [0-9]+\): kretprobe, armed$' '$T/trace.err'"
check "trace attached them while running (ftrace call site, kretprobe)" \
	test "$(ftrace_on ktrack_tpt_glob_two)" -ge 1 -a "$(kprobes_on ktrack_tpt_glob_two)" -ge 1
kill -INT $tp
wait $tp
rc=$?
check "trace ends on SIGINT with status 0" test "$rc" = 0
check "trace decoded both entry records with the argument" test "$(grep -Ec ' tg: .*x=20' "$T/trace.out")" = 2
check "trace decoded both return records with \$retval" test "$(grep -Ec ' tr: .*ret=22' "$T/trace.out")" = 2
check "trace removed its probes when it ended" test "$(kprobes_on ktrack_tpt_glob_two)" = 0

# --- trace -s NAME SPEC...: the named session keeps only its own probes -----
check "session create cli2" "$K" session create cli2
"$K" probe add -s cli2 'p:keep ktrack_tpt_glob_three' >/dev/null 2>&1
"$K" trace -s cli2 'p:tn ktrack_tpt_glob_four x=$arg1:s32' >"$T/trace2.out" 2>"$T/trace2.err" &
tp=$!
wait_line "$T/trace2.err" '^probe tn '
"$K" probe list -s cli2 >"$T/list3.out" 2>&1
echo "call 1" >$PROC
kill -INT $tp
wait $tp
rc=$?
check "trace -s shows its probe in the session while it runs" grep -Eq '^[0-9]+ +tn +p +ftrace_ops +armed ' "$T/list3.out"
check "trace -s decoded its probe and the session's probe" \
	bash -c "grep -Eq ' tn: .*x=40' '$T/trace2.out' && grep -Eq ' keep: ' '$T/trace2.out'"
"$K" probe list -s cli2 >"$T/list4.out" 2>&1
check "trace -s removed its own probe on SIGINT (exit $rc)" \
	bash -c "test $rc = 0 && ! grep -Eq '^[0-9]+ +tn ' '$T/list4.out' && test \$(grep -c ktrack_tpt_glob_four /sys/kernel/tracing/enabled_functions) = 0"
check "trace -s left the session's own probe in place" grep -Eq '^[0-9]+ +keep +p +ftrace_ops +armed ' "$T/list4.out"

# --- BTF: argument and member names, $$args (vmlinux BTF) ---------------------
if [ -r /sys/kernel/btf/vmlinux ]; then
	"$K" trace 'p:vr vfs_read file->f_pos count if count == 12345' \
		'p:va vfs_read $$args if count == 12345' >"$T/btf.out" 2>"$T/btf.err" &
	tp=$!
	wait_line "$T/btf.err" '^probe va '
	# One read of 12345 bytes, right after the armed line, then the stop.
	dd if=/proc/self/stat of=/dev/null bs=12345 count=1 2>/dev/null
	kill -INT $tp
	wait $tp
	check "BTF names: 'p vfs_read file->f_pos count' records f_pos=0 count=12345" \
		grep_or_show ' vr: .*f_pos=0 count=12345' "$T/btf.out" "$T/btf.err"
	check "\$\$args records every vfs_read() argument by name" \
		grep_or_show ' va: .*file=0x[0-9a-f]+ buf=.* count=12345 pos=0x[0-9a-f]+$' "$T/btf.out" "$T/btf.err"
	# A tracepoint's arguments by the names of its prototype, as ftrace's tprobe.
	"$K" trace 't:fk sched/sched_process_fork ppid=parent->pid cpid=child->pid' >"$T/tp.out" 2>"$T/tp.err" &
	tp=$!
	wait_line "$T/tp.err" '^probe fk '
	bash -c 'echo $$ >"$0"; /bin/true & echo $! >>"$0"; wait' "$T/tp.pids"
	kill -INT $tp
	wait $tp
	check "t probe: the prototype's names (parent, child) fetch the fork's two pids" \
		grep_or_show " fk: .*ppid=$(sed -n 1p "$T/tp.pids") cpid=$(sed -n 2p "$T/tp.pids")\$" "$T/tp.out" "$T/tp.err"
else
	skip "BTF names: 'p vfs_read file->f_pos count'" "no /sys/kernel/btf/vmlinux"
	skip "\$\$args records every vfs_read() argument by name" "no /sys/kernel/btf/vmlinux"
	skip "t probe: the prototype's names (parent, child) fetch the fork's two pids" "no /sys/kernel/btf/vmlinux"
fi

# A failing spec after a good one: the command fails and adds nothing.
expect_fail "trace -s with one bad spec fails with the spec error" 1 "symbol not found" \
	"$K" trace -s cli2 -d 1s 'p:tok ktrack_tpt_glob_one' 'p:tbad nosuch_function_xyz'
check "... and leaves no probe of it in the session" \
	bash -c "! '$K' probe list -s cli2 | grep -Eq '^[0-9]+ +(tok|tbad) '"
expect_fail "trace -s with an argument that is not a spec is a usage error" 1 "is not understood" \
	"$K" trace -s cli2 -d 1s 'p:tok2 ktrack_tpt_glob_one' 'bogus'
check "... and leaves no probe of it in the session either" \
	bash -c "! '$K' probe list -s cli2 | grep -Eq '^[0-9]+ +tok2 '"

# --- a module loaded after the capture began ----------------------------------
# A pending probe arms when its module loads mid-capture, and its records
# arrive.  (How they are named, by the module-load records of the stream, is
# module_events.sh's.)
rmmod ktrack_test_probe_target
"$K" record -o "$T/late.ktrack" 'p:late ktrack_test_probe_target:ktrack_tpt_glob_one' \
	>"$T/late.out" 2>"$T/late.err" &
rp=$!
wait_line "$T/late.err" '^recording to '
insmod "$TPT"
echo "call 2" >$PROC
kill -INT $rp
wait $rp
"$K" report "$T/late.ktrack" >"$T/late.txt" 2>&1
check "a module loaded mid-capture: its probe's records arrive (2)" \
	test "$(grep -c ' late: ' "$T/late.txt")" = 2

echo "1..$n"
exit $fail
