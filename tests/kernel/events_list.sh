#!/usr/bin/env bash
# events_list - 'ktrackctl events [GLOB]' on the real kernel: what t and e
# may name, checked against tracefs and against what 'probe compile' takes:
#   - sched/sched_switch (also as sched:sched_switch): the tracepoint's BTF
#     arguments (prev, next) and the event's fields (prev_pid, next_comm),
#     the same fields, offsets and sizes as its tracefs format file; the
#     names it shows compile as t and e probes;
#   - syscalls/sys_enter_openat: fields only (filename), e only;
#   - a tracepoint without a trace event (if the kernel has one): arguments
#     only, and 't NAME' compiles;
#   - ktrack_test_probe_target's ktrack_tpt events: listed with the module's
#     name while it is loaded (also by MOD:*/*), gone after rmmod;
#   - --json parses (jq) and lists what -l lists; the whole listing works;
#   - a glob that matches nothing, a malformed one, a module that is not
#     loaded, and a user who is not root get a sentence.
#
#   tests/vm/run --kernel all -- tests/kernel/run-all 'events_list'
#
# Output: TAP.  Leaves the guest as it found it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
K=$root/build/user/bin/ktrackctl
rel=$(uname -r)
MOD=ktrack_test_probe_target
TPT=$root/build/modules/$rel/tests/kmod/$MOD/$MOD.ko
TR=/sys/kernel/tracing
T=$(mktemp -d /tmp/events-list.XXXXXX)
export LC_ALL=C

# shellcheck source=lib/tap.sh
. "$(dirname "$0")/lib/tap.sh"
# grep_or_show REGEX FILE...: REGEX in the first FILE, else quote them all.
grep_or_show() {
	grep -Eq -- "$1" "$2" && return 0
	shift
	cat "$@"
	return 1
}
cleanup() {
	rmmod $MOD 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

mountpoint -q $TR || mount -t tracefs nodev $TR
rmmod $MOD 2>/dev/null

# --- sched/sched_switch ------------------------------------------------------------
check "events sched/sched_switch exits 0" bash -c "'$K' events sched/sched_switch >'$T/sw.out' 2>&1"
check "... names it, in the kernel" grep_or_show '^sched/sched_switch \(kernel\)$' "$T/sw.out"
check "... t args from BTF: prev" grep_or_show '^    \$arg[0-9]+ +struct task_struct \*prev$' "$T/sw.out"
check "... and next" grep_or_show '^    \$arg[0-9]+ +struct task_struct \*next$' "$T/sw.out"
check "... e fields: prev_pid (pid_t)" grep_or_show '^    \$prev_pid +pid_t +offset [0-9]+ +size 4$' "$T/sw.out"
check "... and next_comm (char[16])" grep_or_show '^    \$next_comm +char\[16\] +offset [0-9]+ +size 16$' "$T/sw.out"
check "sched:sched_switch (ftrace's spelling) lists the same" \
	bash -c "'$K' events sched:sched_switch | cmp - '$T/sw.out'"
# the fields as tracefs's format has them: "field:TYPE NAME;	offset:N;	size:N;"
sed -nE '/^$/,$ s/^\tfield:.*[ *]([a-zA-Z_0-9]+)(\[[0-9]+\])?;\toffset:([0-9]+);\tsize:([0-9]+);.*/\1 \3 \4/p' \
	$TR/events/sched/sched_switch/format >"$T/sw.want"
sed -nE 's/^    \$([a-zA-Z_0-9]+) .* offset ([0-9]+) +size ([0-9]+)$/\1 \2 \3/p' "$T/sw.out" >"$T/sw.got"
check "... every field with its offset and size, as in tracefs's format ($(wc -l <"$T/sw.want") fields)" \
	bash -c "[ -s '$T/sw.want' ] && diff '$T/sw.want' '$T/sw.got'"
check "... the names it shows compile: t sched/sched_switch prev next" \
	"$K" probe compile 't sched/sched_switch prev next'
check "... and e sched/sched_switch \$prev_pid \$next_comm" \
	"$K" probe compile 'e sched/sched_switch $prev_pid $next_comm'

# --- syscalls ----------------------------------------------------------------------
check "events syscalls/sys_enter_openat exits 0" \
	bash -c "'$K' events syscalls/sys_enter_openat >'$T/op.out' 2>&1"
check "... e fields: filename" grep_or_show '^    \$filename +const char \* +offset' "$T/op.out"
check "... no tracepoint of its own: e only" grep_or_show '^  t args: +no tracepoint of its own.*e only$' "$T/op.out"

# --- a tracepoint without a trace event --------------------------------------------
"$K" events -l >"$T/all.names" 2>"$T/all.err"
bare=$(grep -v / "$T/all.names" | while read -r n; do
	"$K" events "$n" 2>/dev/null | grep -q "^$n (kernel)$" && { echo "$n"; break; }
done)
if [ -n "$bare" ]; then
	"$K" events "$bare" >"$T/bare.out" 2>&1
	check "$bare (a tracepoint without a trace event): e fields: no trace event, t only" \
		grep_or_show '^  e fields: no trace event: t only$' "$T/bare.out"
	check "... and t $bare compiles" "$K" probe compile "t $bare"
else
	skip "a tracepoint without a trace event" "this kernel has none"
	skip "... t NAME compiles" "this kernel has none"
fi

# --- a module's events ---------------------------------------------------------------
check "insmod $MOD" insmod "$TPT"
"$K" events 'ktrack_tpt/*' >"$T/mod.out" 2>&1
check "ktrack_tpt/*: ktrack_tpt_hit, in the module" \
	grep_or_show "^ktrack_tpt/ktrack_tpt_hit \(module $MOD\)$" "$T/mod.out"
check "... with its fields seq (int) and magic (u64)" bash -c "grep -Eq '^    \\\$seq +int +offset 8 ' '$T/mod.out' &&
	grep -Eq '^    \\\$magic +u64 ' '$T/mod.out' || { cat '$T/mod.out'; exit 1; }"
if [ -e /sys/kernel/btf/$MOD ]; then
	check "... t args from the module's BTF" grep_or_show '^    \$arg1 +int seq$' "$T/mod.out"
else
	check "... t args: no BTF for the module, \$argN" \
		grep_or_show "^  t args: +unknown \\(module $MOD has no BTF" "$T/mod.out"
fi
"$K" events -l "$MOD:*/*" >"$T/mod.names" 2>&1
check "MOD:*/* lists the module's two events" \
	bash -c "[ \"\$(tr '\n' ' ' <'$T/mod.names')\" = 'ktrack_tpt/ktrack_tpt_done ktrack_tpt/ktrack_tpt_hit ' ] ||
	{ cat '$T/mod.names'; exit 1; }"
check "... also as MOD:SUBSYS:EVENT" bash -c "'$K' events -l '$MOD:ktrack_tpt:ktrack_tpt_hit' | grep -qx ktrack_tpt/ktrack_tpt_hit"
check "... and --json names the module" bash -c "'$K' events --json 'ktrack_tpt/ktrack_tpt_hit' |
	jq -e '.[0].module == \"$MOD\" and .[0].t and .[0].e and (.[0].fields | map(.name) == [\"seq\", \"magic\"])'"
check "rmmod $MOD" rmmod $MOD
expect_fail "after rmmod: ktrack_tpt/* matches nothing" 1 \
	"no tracepoint or trace event matches 'ktrack_tpt/\*'" "$K" events 'ktrack_tpt/*'
expect_fail "... and MOD:*/* says the module is not loaded" 1 \
	"module $MOD is not loaded: its tracepoints and events are listed while it is" "$K" events "$MOD:*/*"

# --- JSON, the whole listing ---------------------------------------------------------
check "--json 'sched/sched_switch' parses, with args prev/next and fields prev_pid/next_comm" \
	bash -c "'$K' events --json sched/sched_switch | jq -e 'length == 1 and .[0].name == \"sched/sched_switch\" and
	.[0].module == null and (.[0].args | map(.name) | index(\"prev\") and index(\"next\")) and
	(.[0].fields | map(.name) | index(\"prev_pid\") and index(\"next_comm\")) and
	(.[0].fields[] | select(.name == \"prev_pid\") | .type == \"pid_t\" and .size == 4)'"
t0=$(date +%s.%N)
check "the whole listing exits 0, with nothing on stderr" \
	bash -c "'$K' events >'$T/all.out' 2>'$T/all.err2' && [ ! -s '$T/all.err2' ] || { head '$T/all.err2'; exit 1; }"
echo "# the whole listing: $(wc -l <"$T/all.out") lines in $(echo "$(date +%s.%N) - $t0" | bc 2>/dev/null || echo '?') s"
check "... and -l too ($(wc -l <"$T/all.names") names)" bash -c "[ -s '$T/all.names' ] && [ ! -s '$T/all.err' ]"
check "--json of everything parses and lists what -l lists" \
	bash -c "'$K' events --json | jq -r '.[].name' | diff - '$T/all.names'"
check "... every tracefs event with an enable file is there" bash -c "cd $TR/events &&
	for d in */*/; do [ -e \"\$d/enable\" ] && echo \"\${d%/}\"; done | sort >'$T/tracefs.names';
	comm -23 '$T/tracefs.names' <(sort '$T/all.names') | head -5 | grep . && exit 1 || exit 0"

# --- bad input -------------------------------------------------------------------------
expect_fail "a misspelt event: exit 1, the closest names" 1 \
	"no tracepoint or trace event matches 'sched/sched_swich'.*did you mean sched/sched_switch" \
	"$K" events sched/sched_swich
expect_fail "a malformed glob: exit 1, how to write it" 1 "bad event glob 'a/b/c'" "$K" events a/b/c
# a copy that nobody may run (the tree need not be readable by others)
nb=$(mktemp /tmp/ktrackctl.XXXXXX)
cp "$K" "$nb" && chmod 755 "$nb"
expect_fail "not root: exit 2, run as root" 2 "run as root" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$nb" events sched/sched_switch
rm -f "$nb"

echo "1..$n"
exit $fail
