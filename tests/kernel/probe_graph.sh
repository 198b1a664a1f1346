#!/usr/bin/env bash
# probe_graph - graph scoping ('record --graph FUNC --depth N', ftrace's
# set_graph_function over ktrack's f probes), end to end in the test VM
# against ktrack_test_probe_target, whose "graph" command calls
# ktrack_gr_child(100) (-> ktrack_gr_grand(200)) outside the root, then
# ktrack_gr_root(1) -> ktrack_gr_child(2) -> ktrack_gr_grand(4) (returning
# 5, 6, 7): only the calls under the root are recorded, with their
# arguments at entry and return values at exit, the depth limit cuts
# exactly, 'graph' prints the tree, the default function set is the root's
# static callees, and bad input is refused with nothing armed.
#
#   tests/vm/run --kernel all -- tests/kernel/run-all 'probe_graph'
#
# Output: TAP.  Leaves the guest as it found it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/tap.sh
. "$here/lib/tap.sh"
# shellcheck source=lib/probe_target.sh
. "$here/lib/probe_target.sh"
pt_setup probe-graph
M=ktrack_test_probe_target
KL=/sys/kernel/debug/kprobes/list
armed() {
	cat "$KL" /sys/kernel/tracing/enabled_functions 2>/dev/null | grep -c "ktrack_gr_\|vfs_read"
}
S='f:t ktrack_gr_child,ktrack_gr_grand%both x=$arg1:s32 r=$retval:s32'

# calls FILE: the records of probes graph_root and t (or PROBE...), one
# line each: "PROBE EDGE FUNC [x=N|r=N]" (x at entries, r at exits).
calls() {
	local f=$1
	shift
	"$K" report --json "$f" | python3 -c '
import json, sys
want = sys.argv[1:] or ["graph_root", "t"]
for l in sys.stdin:
    e = json.loads(l)
    ev = e.get("event")
    if ev not in want:
        continue
    edge = e.get("probe_event")
    fn = e.get("ip", "").split("+")[0]
    f = e.get("fields", {})
    val = ""
    if ev in ("t", "a", "b"):  # the specs given (the generated probes are checked apart)
        if edge == "entry" and "x" in f:
            val = " x=%d" % f["x"]
        elif edge == "exit" and "r" in f:
            val = " r=%d" % f["r"]
    print("%s %s %s%s" % (ev, edge, fn, val))
' "$@"
}
# rec NAME ARGS...: record -o $T/NAME.ktr ARGS -- the probe target's "graph"
rec() {
	local name=$1
	shift
	"$K" record -o "$T/$name.ktr" "$@" -- sh -c "echo graph >$PROC" >"$T/$name.out" 2>&1
}
# same NAME EXPECTED ACTUAL: a case that compares two texts
same() {
	if [ "$2" = "$3" ]; then ok "$1"; else notok "$1" "$(printf 'want:\n%s\ngot:\n%s' "$2" "$3")"; fi
}

# ---- the subtree only, arguments at entry, return values at exit ------------
rec a --graph ktrack_gr_root --depth 4 "$S"
rc=$?
want='graph_root entry ktrack_gr_root
t entry ktrack_gr_child x=2
t entry ktrack_gr_grand x=4
t exit ktrack_gr_grand r=5
t exit ktrack_gr_child r=6
graph_root exit ktrack_gr_root'
same "--depth 4: the calls under ktrack_gr_root only, x at entry and r at exit (exit $rc)" "$want" "$(calls "$T/a.ktr")"
# the same functions called outside the root were hit, and filtered
if grep -q "^probe t: 8 hits, 4 filtered out" "$T/a.out"; then
	ok "child(100) and grand(200) outside the root: hit, filtered out"
else
	notok "child(100) and grand(200) outside the root: hit, filtered out" "$(cat "$T/a.out")"
fi
# without --graph the same spec records all of them (the scope is what cuts)
rec all "$S"
same "without --graph: 8 records, the calls outside the root included" 8 "$(calls "$T/all.ktr" | grep -c '^t ')"

# ---- ktrackctl graph shows the tree ----------------------------------------
"$K" graph "$T/a.ktr" >"$T/a.graph" 2>&1
tree=$(grep -o ' *ktrack_gr_[a-z]*() {\| *ktrack_gr_[a-z]*();\| *} /\* ktrack_gr_[a-z]* \*/' "$T/a.graph")
want='  ktrack_gr_root() {
    ktrack_gr_child() {
      ktrack_gr_grand();
    } /* ktrack_gr_child */
  } /* ktrack_gr_root */'
same "graph FILE: root, child, grand nested (and nothing else)" "$want" "$tree"

# ---- the depth limit cuts exactly ------------------------------------------
rec d1 --graph ktrack_gr_root --depth 1 "$S"
want='graph_root entry ktrack_gr_root
t entry ktrack_gr_child x=2
t exit ktrack_gr_child r=6
graph_root exit ktrack_gr_root'
same "--depth 1: the child, not the grandchild" "$want" "$(calls "$T/d1.ktr")"
if grep -q "^probe t: 8 hits, 6 filtered out" "$T/d1.out"; then ok "--depth 1: the grandchild's 2 hits filtered"; else
	notok "--depth 1: the grandchild's 2 hits filtered" "$(cat "$T/d1.out")"
fi
rec d2 --graph ktrack_gr_root --depth 2 "$S"
same "--depth 2: child and grandchild" 4 "$(calls "$T/d2.ktr" t | wc -l)"

# ---- the depth counts every scoped call, recorded or not --------------------
# a's filter rejects the child, yet its entry still counts: the grandchild
# is at depth 2 (cut by --depth 1, kept by --depth 2)
A='f:a ktrack_gr_child%both x=$arg1:s32 if x == 0'
B='f:b ktrack_gr_grand%both x=$arg1:s32 r=$retval:s32'
rec fa --graph ktrack_gr_root --depth 1 "$A" "$B"
rec fb --graph ktrack_gr_root --depth 2 "$A" "$B"
if [ "$(calls "$T/fa.ktr" a b | wc -l)" = 0 ] && grep -q "^probe b: 4 hits, 4 filtered out" "$T/fa.out" &&
	[ "$(calls "$T/fb.ktr" a b)" = "$(printf 'b entry ktrack_gr_grand x=4\nb exit ktrack_gr_grand r=5')" ]; then
	ok "a filtered call still counts as depth (--depth 1 cuts the grandchild, --depth 2 keeps it)"
else
	notok "a filtered call still counts as depth" "$(cat "$T/fa.out" "$T/fb.out"; calls "$T/fb.ktr" a b)"
fi

# ---- trace --graph: the same, live ----------------------------------------------
"$K" trace --graph ktrack_gr_root --depth 4 "$S" -- sh -c "echo graph >$PROC" >"$T/tr.txt" 2>"$T/tr.err"
same "trace --graph: the 4 records under the root" 4 "$(grep -c ' t: ' "$T/tr.txt")"

# ---- a recursive root nests; its depth counts from the outermost call ------
# "deep 3": ktrack_deep_frame(2) -> (1) -> (0) -> ktrack_deep_leaf()
"$K" record -o "$T/r.ktr" --graph ktrack_deep_frame --depth 1 'f:t ktrack_deep_leaf%both' \
	-- sh -c "echo deep 3 >$PROC" >"$T/r.out" 2>&1
want='graph_root entry ktrack_deep_frame
graph_root entry ktrack_deep_frame
graph_root entry ktrack_deep_frame
t entry ktrack_deep_leaf
t exit ktrack_deep_leaf
graph_root exit ktrack_deep_frame
graph_root exit ktrack_deep_frame
graph_root exit ktrack_deep_frame'
same "a recursive root: 3 nested root calls, the leaf at depth 1" "$want" "$(calls "$T/r.ktr")"

# ---- no spec: the root's static callees (decoded from /proc/kcore) ---------
rec c1 --graph ktrack_gr_root --depth 1
if grep -q "^graph: 1 functions called from ktrack_gr_root (direct calls, to depth 1)" "$T/c1.out" &&
	grep -q "^graph: indirect calls .* 'f ext4_\*'" "$T/c1.out"; then
	ok "no spec, --depth 1: one callee found, indirect calls said"
else
	notok "no spec, --depth 1: one callee found, indirect calls said" "$(cat "$T/c1.out")"
fi
want='graph_root entry ktrack_gr_root
ktrack_gr_child entry ktrack_gr_child
ktrack_gr_child exit ktrack_gr_child
graph_root exit ktrack_gr_root'
same "no spec, --depth 1: ktrack_gr_child under the root only, a probe of its own" "$want" \
	"$(calls "$T/c1.ktr" graph_root ktrack_gr_child)"
# values: the return value at exit (6); the argument (2) where the module has BTF
"$K" report --json "$T/c1.ktr" | python3 -c '
import json, sys
ok = True
for l in sys.stdin:
    e = json.loads(l)
    if e.get("event") != "ktrack_gr_child":
        continue
    f = e.get("fields", {})
    v = lambda x: int(x, 0) if isinstance(x, str) else x
    if e.get("probe_event") == "exit":
        ok &= v(f.get("ret", -1)) == 6
    elif "x" in f:
        ok &= v(f["x"]) == 2
print("values-ok" if ok else "values-wrong")
' >"$T/c1.vals"
same "no spec: ktrack_gr_child's return value (6) at exit, its argument (2) where BTF names it" \
	values-ok "$(cat "$T/c1.vals")"
rec c2 --graph "$M:ktrack_gr_root" --depth 2
same "no spec, MOD:FUNC --depth 2: child and grandchild under the root only" 4 \
	"$(calls "$T/c2.ktr" ktrack_gr_child ktrack_gr_grand | wc -l)"
check "no spec, --depth 2: two callees said" grep -q "^graph: 2 functions called from" "$T/c2.out"

# ---- a root entered while the session is paused keeps its scope -----------
# sp pauses the session at grand(200), outside the root; the root is then
# entered paused (its entry idle); st, an f probe and so scoped, resumes
# it at grand(4), inside that call: it fires only because the paused
# root's scope is open (ftrace's set_graph_function with tracing off).
# The calls' exits after it are recorded, the root's entry is not, and
# graph prints the root's exit as "entry not recorded".  (Entries at
# grand(4) depend on which of st and t runs first: left out.)
P1='p:sp ktrack_gr_grand x=$arg1:s32 if x == 200 => stop'
P2='f:st ktrack_gr_grand x=$arg1:s32 if x == 4 => start'
rec p --graph ktrack_gr_root --depth 4 "$S" "$P1" "$P2"
rc=$?
want='t exit ktrack_gr_grand r=5
t exit ktrack_gr_child r=6
graph_root exit ktrack_gr_root'
same "a root entered while paused: a scoped start under it resumes, the exits are recorded (exit $rc)" \
	"$want" "$(calls "$T/p.ktr" | grep -v ' entry ')"
check "graph: the paused root's exit, entry not recorded" \
	grep -q '} /\* ktrack_gr_root (entry not recorded) \*/' <("$K" graph "$T/p.ktr")

# ---- a kernel function: vfs_read's subtree under cat ------------------------
"$K" record -o "$T/v.ktr" --graph vfs_read --depth 2 -- cat /etc/hostname >"$T/v.out" 2>&1
rc=$?
"$K" report --json "$T/v.ktr" | python3 -c '
import json, sys
open_ = {}
roots = callees = outside = args = rets = 0
early = {}  # pid -> calls before the first root record of the task (none: inside all along)
for l in sys.stdin:
    e = json.loads(l)
    ev, pid, edge = e.get("event"), e.get("pid"), e.get("probe_event")
    if ev == "graph_root":
        roots += 1
        if pid not in open_:
            # the first root record of the task: an exit means it was in
            # vfs_read when recording began (its calls so far were inside)
            n = early.pop(pid, 0)
            if edge == "entry":
                outside += n
            open_[pid] = 1 if edge == "exit" else 0
        open_[pid] += 1 if edge == "entry" else -1
    elif edge in ("entry", "exit"):
        callees += 1
        if pid not in open_:
            early[pid] = early.get(pid, 0) + 1  # judged by the first root record
        elif open_[pid] <= 0:
            outside += 1
        f = e.get("fields", {})
        args += edge == "entry" and len(f) > 0
        rets += edge == "exit" and "ret" in f
print("roots>0=%s callees>0=%s outside=%d args>0=%s rets>0=%s" % (roots > 0, callees > 0, outside,
      args > 0, rets > 0))
' >"$T/v.sum"
if [ $rc = 0 ] && [ "$(cat "$T/v.sum")" = "roots>0=True callees>0=True outside=0 args>0=True rets>0=True" ] &&
	grep -q "^graph: [0-9]* functions called from vfs_read" "$T/v.out"; then
	ok "record --graph vfs_read --depth 2 -- cat: its callees, none while its task is outside vfs_read, with arguments and return values"
else
	notok "record --graph vfs_read --depth 2 -- cat (exit $rc)" "$(cat "$T/v.sum" "$T/v.out")"
fi

# ---- bad input: one sentence, nothing armed --------------------------------
expect_fail "--depth without --graph" 1 "--depth needs --graph" "$K" record -o "$T/x.ktr" --depth 2 "$S" -- true
expect_fail "--depth 0" 1 "--depth 0: give 1..64" "$K" record -o "$T/x.ktr" --graph ktrack_gr_root --depth 0 "$S" -- true
expect_fail "--depth 65" 1 "--depth 65: give 1..64" "$K" trace --graph ktrack_gr_root --depth 65 "$S" -- true
expect_fail "--graph with a glob" 1 "give one function" "$K" record -o "$T/x.ktr" --graph 'ktrack_gr_*' "$S" -- true
expect_fail "--graph on no function, with a spec" 1 "--graph nosuch_fn_xyz: .*not a function ftrace" \
	"$K" record -o "$T/x.ktr" --graph nosuch_fn_xyz "$S" -- true
expect_fail "--graph on no function, no spec" 1 "--graph nosuch_fn_xyz: no such function" \
	"$K" record -o "$T/x.ktr" --graph nosuch_fn_xyz -- true
check "nothing left armed" test "$(armed)" = 0
if awk '$2 != 0 { bad = 1 } END { exit bad }' /sys/kernel/debug/ktrack/allocations; then
	ok "no session, probe or ring left behind (allocation counters at zero)"
else
	notok "no session, probe or ring left behind" "$(cat /sys/kernel/debug/ktrack/allocations)"
fi
echo "1..$n"
exit $fail
