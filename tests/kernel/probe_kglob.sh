#!/usr/bin/env bash
# probe_kglob - f over every traceable function (issue 16, 'f *'): a glob
# naming more than 1,024 functions goes to the kernel, which attaches it
# through one ftrace_ops (mechanism "ftrace_ops").
#   - 'probe add f:all *' arms every function ftrace lists (enabled_functions
#     holds them all) and 'probe del' leaves none; the times of both are
#     printed beside ftrace's function tracer on and off in this boot (a
#     diagnostic: bench/probes.sh is where costs are judged).
#   - 'record -p PID f:all * a=$arg1' records a shell's write to the target
#     module: its four glob functions exactly once per call with their
#     arguments, vfs_write, only that pid, nothing lost.
#   - 'f:one NAME' (entry only) goes to ftrace_ops too, and records its
#     hits with their arguments; 'NAME%return' stays an fprobe or kprobes.
#   - one small glob at entry ('f:few ktrack_tpt_glob_*') goes to the kernel
#     unmatched too: the 4 functions enabled, hit, followed when the module
#     loads again, recorded with their arguments; a glob that matches nothing
#     is refused in words; --graph still matches it in ktrackctl.
#   - Refused with a sentence: %return and profile over such a glob (exits
#     hook each function), two patterns together past 1,024, --graph.
#
#   tests/vm/run --kernel all -- tests/kernel/run-all 'probe_kglob'
#
# Output: TAP.  Leaves the guest as it found it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib/tap.sh"
K=$root/build/user/bin/ktrackctl
rel=$(uname -r)
TPT=$root/build/modules/$rel/tests/kmod/ktrack_test_probe_target/ktrack_test_probe_target.ko
PROC=/proc/ktrack_test_probe
TR=/sys/kernel/tracing
T=$(mktemp -d /tmp/probe-kglob.XXXXXX)

cleanup() {
	((fail)) && [ -n "${KTRACK_VM_OUT:-}" ] && cp -r "$T" "$KTRACK_VM_OUT/probe_kglob"
	echo nop >"$TR/current_tracer" 2>/dev/null
	"$K" session destroy --all >/dev/null 2>&1
	rmmod ktrack_test_probe_target 2>/dev/null
	"$K" unload >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

if ! "$K" load >/dev/null || ! insmod "$TPT"; then
	notok "ktrack and the probe target load"
	echo "1..$n"
	exit 1
fi

ms() { echo $(($(date +%s%N) / 1000000)); }
nfuncs=$(wc -l <"$TR/available_filter_functions")
before=$(wc -l <"$TR/enabled_functions")

# --- add and del over every function ----------------------------------------
# ftrace's function tracer first: what it enables is what f * must enable
t4=$(ms)
echo function >"$TR/current_tracer"
t5=$(ms)
ftrace_enabled=$(($(wc -l <"$TR/enabled_functions") - before))
t5b=$(ms)
echo nop >"$TR/current_tracer"
t6=$(ms)
echo >"$TR/trace"
check "session create kg" "$K" session create kg
t0=$(ms)
"$K" probe add -s kg 'f:all *' >"$T/add.out" 2>&1
st=$?
t1=$(ms)
check "probe add 'f:all *' succeeds" test "$st" -eq 0
check "it says the kernel glob mechanism, armed" \
	grep -q "ftrace_ops, armed" "$T/add.out"
enabled=$(($(wc -l <"$TR/enabled_functions") - before))
check "it enables what the function tracer enables ($enabled, $ftrace_enabled; $nfuncs listed)" \
	test "$enabled" -eq "$ftrace_enabled" -a "$enabled" -ge $((nfuncs * 95 / 100))
"$K" probe list -s kg >"$T/list.out" 2>&1
check "probe list shows it" grep -q "ftrace_ops" "$T/list.out"
t2=$(ms)
check "probe del" "$K" probe del -s kg all
t3=$(ms)
check "nothing of it stays enabled" test "$(wc -l <"$TR/enabled_functions")" -eq "$before"
echo "# f * over $nfuncs functions: ktrack add $((t1 - t0)) ms, del $((t3 - t2)) ms;" \
	"ftrace function tracer on $((t5 - t4)) ms, off $((t6 - t5b)) ms"

# a glob over more than 1,024 functions that is not "*": ftrace matches it
"$K" probe add -s kg 'f:most *_*' >"$T/add2.out" 2>&1
check "probe add 'f:most *_*' goes to the kernel glob" grep -q "ftrace_ops, armed" "$T/add2.out"
check "it enables ktrack_tpt_glob_one" grep -q '^ktrack_tpt_glob_one' "$TR/enabled_functions"
check "and no function without '_'" test -z "$(awk '$1 !~ /_/' "$TR/enabled_functions")"
check "session destroy kg takes it off" "$K" session destroy kg
check "nothing of it stays enabled" test "$(wc -l <"$TR/enabled_functions")" -eq "$before"

# --- record one shell's write, every function ---------------------------------
# The shell waits for "go", writes, says so on "wrote", and waits for
# "end": the recording stops before the shell's exit, whose thousands of
# functions (more on the debug kernel) are not the test's.  4 MiB per CPU
# lost 196k records of that exit on the debug kernel (2026-11-29).
mkfifo "$T/go" "$T/wrote" "$T/end"
bash -c 'read -r _ <"$1"; echo "call 3" >"$2"; echo wrote >"$3"; read -r _ <"$4"' _ \
	"$T/go" "$PROC" "$T/wrote" "$T/end" &
cpid=$!
rec=("$K" record -o "$T/all.ktr" -p "$cpid" --buffer-pages 4096 'f:all * a=$arg1:s32 x=+0($arg1):u64')
"${rec[@]}" 2>"$T/rec.err" &
rpid=$!
if wait_line "$T/rec.err" "recording to"; then
	echo go >"$T/go"
	read -r _ <"$T/wrote"
	kill -INT "$rpid"
	wait "$rpid"
	check "record over every function ends cleanly" test $? -eq 0
else
	notok "record over every function starts"
	cat "$T/rec.err" >&2
	echo go >"$T/go"
	read -r _ <"$T/wrote"
	kill -INT "$rpid" 2>/dev/null
	wait "$rpid"
fi
echo end >"$T/end"
wait "$cpid"
rm -f "$T/go" "$T/wrote" "$T/end"
"$K" report "$T/all.ktr" --json >"$T/all.json" 2>"$T/report.err"
check "report reads it" test -s "$T/all.json"
# The deref fetch reads through copy_from_kernel_nofault(), traced on 6.12:
# the handler's own call is no hit (it counts as missed).
grep -q '^copy_from_kernel_nofault\b' "$TR/available_filter_functions" &&
	echo "# copy_from_kernel_nofault is traceable here"
check "the shell's write: each glob function 3 times with its argument, vfs_write, only its pid, none lost, no hit of the handler's own calls" \
	python3 - "$T/all.json" "$cpid" <<'PY'
import collections, json, sys
want = {"ktrack_tpt_glob_one": 10, "ktrack_tpt_glob_two": 20,
        "ktrack_tpt_glob_three": 30, "ktrack_tpt_glob_four": 40}
seen = collections.Counter()
funcs = set()
lost = 0
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["event"] == "lost":
        lost += e["fields"]["count"]
        continue
    if e.get("probe_event") != "entry":
        continue
    assert e["pid"] == int(sys.argv[2]), e
    name = e["ip"].split("+")[0].split(" ")[0]
    funcs.add(name)
    if name in want:
        assert e["fields"]["a"] == want[name], e
        seen[name] += 1
assert lost == 0, lost
assert all(seen[f] == 3 for f in want), seen
assert "vfs_write" in funcs, sorted(funcs)[:50]
assert "copy_from_kernel_nofault" not in funcs, "a hit of the handler's own fetch"
assert not any(f.startswith("kt_") or f.startswith("ktrack_session") or f.startswith("ktrack_ring")
               for f in funcs), [f for f in funcs if f.startswith("kt")]
print("# %d functions seen" % len(funcs))
PY

# --- one function by name, at entry: ftrace_ops as well -----------------------
# ktrackctl sends it as a kernel glob (ftrace matches the name); with an
# exit it stays an fprobe (6.12) or kprobes (6.1).
"$K" record -o "$T/one.ktr" 'f:one ktrack_tpt_glob_two v=$arg1:s32' \
	'f:oneret ktrack_tpt_glob_three%return r=$retval:s32' -- sh -c "echo 'call 3' >$PROC" 2>"$T/one.err"
check "record 'f:one NAME' (entry) ends cleanly" test $? -eq 0
check "it says ftrace_ops for the entry probe" grep -q "probe one (id [0-9]*): ftrace_ops, armed" "$T/one.err"
check "and fprobe or kprobes for the %return one" \
	grep -Eq "probe oneret \(id [0-9]*\): (fprobe|kprobe\+kretprobe \(ftrace\)), armed" "$T/one.err"
"$K" report "$T/one.ktr" --json >"$T/one.json" 2>/dev/null
check "ktrack_tpt_glob_two 3 times with its argument (20), nothing lost; its sibling's 3 exits" \
	python3 - "$T/one.json" <<'PY'
import json, sys
ent = ext = lost = 0
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["event"] == "lost":
        lost += e["fields"]["count"]
    elif e["event"] == "one":
        assert e["probe_event"] == "entry" and e["ip"].startswith("ktrack_tpt_glob_two"), e
        assert e["fields"]["v"] == 20, e
        ent += 1
    elif e["event"] == "oneret" and e.get("probe_event") == "exit":
        ext += 1
assert (ent, ext, lost) == (3, 3, 0), (ent, ext, lost)
PY
check "nothing of them stays enabled" test "$(wc -l <"$TR/enabled_functions")" -eq "$before"

# --- one small glob at entry: the kernel matches it too ------------------------
# ktrackctl no longer lists available_filter_functions for it (that took
# longer than attaching): ftrace's filter matches the glob, over the
# kernel and the modules, those that load later included.
glob_funcs() { awk '$1 ~ /^ktrack_tpt_glob_/ { print $1 }' "$1" | sort; }
hits_of() { "$K" probe list -s kg2 | awk -v p="$1" '$2 == p { print $6 }'; }
check "session create kg2" "$K" session create kg2 --mode overwrite
check "session start kg2" "$K" session start kg2
"$K" probe add -s kg2 'f:few ktrack_tpt_glob_* v=$arg1:s32' >"$T/few.out" 2>&1
check "probe add 'f:few ktrack_tpt_glob_*' (4 functions) goes to the kernel glob" \
	grep -q "ftrace_ops, armed" "$T/few.out"
# (and ktrack's anchor: the filter is never empty, kmod/probe_ftrace.c)
extra=$(($(wc -l <"$TR/enabled_functions") - before))
check "it enables the functions ftrace lists for the glob and the anchor, only those ($extra)" \
	test "$(glob_funcs "$TR/enabled_functions")" = "$(glob_funcs "$TR/available_filter_functions")" \
	-a "$extra" -eq 5
echo 'call 3' >"$PROC"
check "3 calls of the 4 functions: 12 hits ($(hits_of few))" test "$(hits_of few)" = 12
rmmod ktrack_test_probe_target
check "the module gone, none of its functions stays enabled" \
	test -z "$(glob_funcs "$TR/enabled_functions")"
insmod "$TPT"
check "loaded again, the glob follows it: its 4 functions enabled" \
	test "$(glob_funcs "$TR/enabled_functions" | wc -l)" -eq 4
echo 'call 3' >"$PROC"
check "and hit: 24 hits ($(hits_of few))" test "$(hits_of few)" = 24
"$K" record -o "$T/few.ktr" 'f:few2 ktrack_tpt_glob_* v=$arg1:s32' -- sh -c "echo 'call 3' >$PROC" 2>"$T/fewrec.err"
rc=$?
check "record over the glob ends cleanly (exit $rc)" test "$rc" -eq 0
check "through ftrace_ops" grep -q "probe few2 (id [0-9]*): ftrace_ops, armed" "$T/fewrec.err"
"$K" report "$T/few.ktr" --json >"$T/few.json" 2>/dev/null
check "it records each function 3 times with its argument" python3 - "$T/few.json" <<'PY'
import collections, json, sys
want = {"ktrack_tpt_glob_one": 10, "ktrack_tpt_glob_two": 20,
        "ktrack_tpt_glob_three": 30, "ktrack_tpt_glob_four": 40}
seen = collections.Counter()
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["event"] != "few2":
        continue
    name = e["ip"].split("+")[0].split(" ")[0]
    assert e["fields"]["v"] == want[name], e
    seen[name] += 1
assert all(seen[f] == 3 for f in want), seen
PY
expect_fail "a glob that matches nothing: the kernel's ENOENT, said in words" 1 \
	"no traceable function matches 'ktrack_nomatch_\*'" "$K" probe add -s kg2 'f:none ktrack_nomatch_*'
check "and no probe 'none' is left" test -z "$(hits_of none)"
# A refused probe changes nothing, not even the session 'probe add' creates
# when -s is not given; a 'default' that was there stays.
"$K" session destroy default >/dev/null 2>&1
expect_fail "without -s, the same refusal" 1 \
	"no traceable function matches 'ktrack_nomatch_\*'" "$K" probe add 'f:none ktrack_nomatch_*'
"$K" session list >"$T/sl1.txt" 2>&1
check "and it leaves no 'default' session behind" bash -c "! grep -qw default '$T/sl1.txt'"
check "probe add without -s creates 'default'" "$K" probe add 'f:one1 ktrack_tpt_glob_one'
expect_fail "a refusal then" 1 "no traceable function matches" "$K" probe add 'f:none ktrack_nomatch_*'
"$K" probe list >"$T/pl1.txt" 2>&1
check "keeps 'default' and its probe" grep -qw one1 "$T/pl1.txt"
check "session destroy default" "$K" session destroy default
# 'default' created empty by hand is not this command's to take back
check "session create default" "$K" session create default
expect_fail "a refusal on an empty 'default' made by hand" 1 "no traceable function matches" \
	"$K" probe add 'f:none ktrack_nomatch_*'
"$K" session list >"$T/sl2.txt" 2>&1
check "keeps it" grep -qw default "$T/sl2.txt"
check "session destroy default (2)" "$K" session destroy default
check "session destroy kg2" "$K" session destroy kg2
check "nothing of it stays enabled" test "$(wc -l <"$TR/enabled_functions")" -eq "$before"
# scoped to a graph, exits are hooked per function: the glob is matched here
"$K" record -o "$T/g.ktr" --graph ktrack_gr_root --depth 4 'f:g ktrack_gr_* x=$arg1:s32' \
	-- sh -c "echo graph >$PROC" >"$T/g.out" 2>&1
rc=$?
check "record --graph with an entry-only glob ends cleanly ($(tail -c 200 "$T/g.out" | tr '\n' ' '))" \
	test "$rc" -eq 0
"$K" report "$T/g.ktr" >"$T/g.txt" 2>&1
check "it records ktrack_gr_grand under the root" grep -q "ktrack_gr_grand" "$T/g.txt"

# --- refusals ----------------------------------------------------------------
expect_fail "f * with %return is refused" 1 "exits \\(%return or %both\\) hook each function" \
	"$K" trace -d 1s 'f:allx *%return'
expect_fail "two patterns past 1,024 are refused" 1 "give one glob" \
	"$K" trace -d 1s 'f:two *,vfs_read'
expect_fail "profile --live over every function is refused" 1 "exits \\(%return or %both\\) hook each function" \
	"$K" profile --live '*' -d 1s
expect_fail "--graph over every function is refused" 1 "names more than 1024 functions" \
	"$K" trace -d 1s --graph vfs_read 'f:all *'
check "nothing is left enabled in ftrace" test "$(wc -l <"$TR/enabled_functions")" -eq "$before"

echo "1..$n"
