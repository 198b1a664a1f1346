#!/usr/bin/env bash
# probe_modinit - a driver traced from the moment it loads (issue 15):
# 'f:drv MOD:*%both' on a module that is not loaded is pending, arms at
# MODULE_STATE_COMING (before init runs), and 'record ... -- insmod MOD.ko'
# records every call of the init path, named (init functions included,
# though they leave kallsyms at LIVE) with exact counts and paired
# entries/exits; the command's status is record's.  Also: the probe re-arms
# at the next load, a failing init disarms it, '-- false' exits 1,
# '-- /nonexistent' 127, and bad specs are refused with a sentence.
#
#   tests/vm/run --kernel all -- tests/kernel/run-all 'probe_modinit'
#
# Output: TAP.  Leaves the guest as it found it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib/tap.sh"
K=$root/build/user/bin/ktrackctl
rel=$(uname -r)
MOD=ktrack_test_modinit
KO=$root/build/modules/$rel/tests/kmod/$MOD/$MOD.ko
T=$(mktemp -d /tmp/probe-modinit.XXXXXX)

cleanup() {
	((fail)) && [ -n "${KTRACK_VM_OUT:-}" ] && cp -r "$T" "$KTRACK_VM_OUT/probe_modinit"
	rmmod $MOD 2>/dev/null
	"$K" session destroy --all >/dev/null 2>&1
	"$K" unload >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
rmmod $MOD 2>/dev/null

if ! "$K" load >/dev/null; then
	notok "ktrack loads"
	echo "1..$n"
	exit 1
fi

# counts FILE: "name entries exits" per function of the module, from the
# report's JSON lines (the init function may be named init_module: same
# address).
counts() {
	"$K" report "$1" --json 2>/dev/null | python3 -c '
import json, sys, collections
c = collections.Counter()
for l in sys.stdin:
    r = json.loads(l)
    if r.get("probe_event") not in ("entry", "exit"):
        continue
    name = r["ip"].split("+")[0].split(" ")[0]
    name = "ktrack_tmi_init" if name == "init_module" else name
    c[(name, r["probe_event"])] += 1
for n in sorted({k[0] for k in c}):
    print(n, c[(n, "entry")], c[(n, "exit")])
'
}

# --- record -- insmod: the init path, from its first call -------------------
# --clock mono: insmod may move CPU inside init, and the local clock is per
# CPU (unsynchronized under QEMU TCG), so the profile below needs a global clock.
"$K" record --clock mono -o "$T/a.ktr" "f:drv $MOD:*%both" -- insmod "$KO" >"$T/a.out" 2>"$T/a.err"
rc=$?
check "record -- insmod exits with insmod's status (0)" test "$rc" = 0
check "the module is loaded" test -d /sys/module/$MOD
check "the probe was pending before the load" grep -q 'pending' "$T/a.err"
counts "$T/a.ktr" >"$T/a.counts"
check "init, its init-text callee and the core functions are named, with exact entry/exit counts" \
	diff -u - "$T/a.counts" <<'X'
ktrack_tmi_init 1 1
ktrack_tmi_leaf 4 4
ktrack_tmi_setup 1 1
ktrack_tmi_step 5 5
X
"$K" report "$T/a.ktr" >"$T/a.report" 2>&1
check "the text report names the init function and its module" \
	grep -qE 'drv: \((ktrack_tmi_init|init_module)\+0x[0-9a-f]+ \['"$MOD"'\]\)' "$T/a.report"
"$K" profile "$T/a.ktr" --json >"$T/a.profile" 2>&1
check "profile pairs every call with a duration" python3 -c '
import json, sys
want = {"ktrack_tmi_init": 1, "init_module": 1, "ktrack_tmi_setup": 1, "ktrack_tmi_step": 5, "ktrack_tmi_leaf": 4}
seen = {}
for l in open(sys.argv[1]):
    l = l.strip()
    if not l.startswith("{"):
        continue
    r = json.loads(l)
    if "func" not in r:
        continue  # summary lines: {"lost": ...}, {"calls_untimed_clock_skew": N}
    f = r["func"].split("+")[0].split(" ")[0]
    if f in want:
        assert r["hits"] == want[f] and r["timed"] == want[f] and r["total_ns"] > 0, r
        seen[f] = 1
assert len(seen) == 4, seen
' "$T/a.profile"
"$K" graph "$T/a.ktr" >"$T/a.graph" 2>&1
check "graph nests the init-text callee under init" grep -q 'ktrack_tmi_setup' "$T/a.graph"

# --- a pending probe on a named session re-arms at every load ---------------
rmmod $MOD
"$K" probe add -s mi "f:drv $MOD:ktrack_tmi_*%both" >"$T/b.add" 2>&1
check "probe add on a module that is not loaded: pending" grep -q pending "$T/b.add"
"$K" record -s mi -o "$T/b.ktr" -- sh -c "insmod '$KO' && cat /proc/$MOD >/dev/null && rmmod $MOD && insmod '$KO'" \
	>"$T/b.out" 2>"$T/b.err"
check "record -s -- sh exits 0" test $? = 0
counts "$T/b.ktr" >"$T/b.counts"
check "two loads, both recorded; the core function still probed after LIVE" diff -u - "$T/b.counts" <<'X'
ktrack_tmi_init 2 2
ktrack_tmi_leaf 9 9
ktrack_tmi_setup 2 2
ktrack_tmi_show 1 1
ktrack_tmi_step 10 10
X
"$K" probe list -s mi >"$T/b.list" 2>&1
check "the probe is armed on the loaded module, armed 2 times" python3 -c '
import sys
t = open(sys.argv[1]).read()
assert " armed" in t, t
' "$T/b.list"
rmmod $MOD
"$K" probe list -s mi >"$T/b.list2" 2>&1
check "after rmmod the probe waits again (not armed)" bash -c "! grep -qw armed '$T/b.list2'"

# a failing init: recorded, then disarmed at GOING; the next load re-arms
"$K" record -s mi -o "$T/c.ktr" -- insmod "$KO" fail=1 >"$T/c.out" 2>"$T/c.err"
rc=$?
check "record -- insmod (failing init) exits with insmod's status (1)" test "$rc" = 1
counts "$T/c.ktr" >"$T/c.counts"
check "the failing init's calls are recorded" grep -qx 'ktrack_tmi_leaf 4 4' "$T/c.counts"
check "the module is not loaded" test ! -d /sys/module/$MOD
"$K" record -s mi -o "$T/d.ktr" -- insmod "$KO" >"$T/d.out" 2>"$T/d.err"
counts "$T/d.ktr" >"$T/d.counts"
check "the next load is recorded again" grep -qx 'ktrack_tmi_step 5 5' "$T/d.counts"
"$K" session destroy mi >/dev/null 2>&1

# --- a loaded module: f MOD:GLOB resolves against it now --------------------
"$K" record -o "$T/e.ktr" "f:lv $MOD:ktrack_tmi_leaf,ktrack_tmi_sh*" -- cat /proc/$MOD >"$T/e.out" 2>"$T/e.err"
check "f MOD:GLOB on a loaded module arms at once" grep -q 'armed' "$T/e.err"
counts "$T/e.ktr" >"$T/e.counts"
check "... and records its core functions" diff -u - "$T/e.counts" <<'X'
ktrack_tmi_leaf 1 0
ktrack_tmi_show 1 0
X
rmmod $MOD

# --- the command's status and errors -------------------------------------------
"$K" record -q -o "$T/f.ktr" 'f:x vfs_read' -- false >/dev/null 2>&1
check "record -- false exits 1" test $? = 1
expect_fail "record -- /nonexistent exits 127 with a sentence" 127 'command not found' \
	"$K" record -o "$T/g.ktr" 'f:x vfs_read' -- /nonexistent
echo 'echo hi' >"$T/noexec"
chmod 644 "$T/noexec"
expect_fail "record -- a file without x permission exits 126 with a sentence" 126 'permission denied' \
	"$K" record -o "$T/g.ktr" 'f:x vfs_read' -- "$T/noexec"
expect_fail "trace -- /nonexistent exits 127" 127 'command not found' "$K" trace 'f:x vfs_read' -- /nonexistent
check "nothing is left armed (no session has a probe)" bash -c "! '$K' session list 2>/dev/null | grep -q ' x '"
"$K" trace -q -d 1s -- sleep 30 >/dev/null 2>"$T/h.err"
rc=$?
check "trace -d 1s -- sleep 30: -d ends first, sleep gets SIGTERM (143)" test "$rc" = 143

# --- bad input --------------------------------------------------------------------
long=$(printf 'a%.0s' $(seq 200))
expect_fail "a glob over the length limit is refused" 1 'glob is too long' \
	"$K" record -o "$T/z.ktr" "f:x $MOD:$long" -- true
expect_fail "a bad module name is refused" 1 'bad character in the module name' \
	"$K" record -o "$T/z.ktr" 'f:x bad.mod:*' -- true
expect_fail "two modules in one f probe are refused" 1 'one module per f probe' \
	"$K" record -o "$T/z.ktr" "f:x $MOD:a,other:b" -- true
insmod "$KO"
expect_fail "a glob matching nothing in a loaded module is refused" 2 'no traceable function of module' \
	"$K" record -o "$T/z.ktr" "f:x $MOD:nothing_*" -- true
rmmod $MOD

echo "1..$n"
exit $fail
