#!/usr/bin/env bash
# probe_modtp - t probes on the tracepoints of modules: 't MOD:SUBSYS/EVENT'
# before the module loads is pending, arms at insmod and records the exact
# arguments of ktrack_test_probe_target's ktrack_tpt events ("tp N"), is
# disarmed at rmmod and armed again at the next insmod, with exact hit
# counts; e probes on the same events, named before the module loads (typed
# fields found by name in the module's layout at load, a filter on one, a
# misfit and a missing field refused in the kernel log), follow the module
# the same way, and do not keep rmmod from unloading it; on a module rebuilt
# with another event layout (tests/kmod/ktrack_test_probe_target_v2) fields
# by name are found again and fields by offset are refused; a module unloaded
# while its tracepoint fires leaves no handler (the
# kernel WARNs on a going module's tracepoint with a probe left: the run
# fails on it); a Debian module's tracepoints (9pnet's 9p/9p_client_req and
# 9p_client_res, without MOD:); unknown tracepoints get the closest names.
#
#   tests/vm/run --kernel all -- tests/kernel/run-all 'probe_modtp'
#
# Output: TAP.  Leaves the guest as it found it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
K=$root/build/user/bin/ktrackctl
rel=$(uname -r)
MOD=ktrack_test_probe_target
TPT=$root/build/modules/$rel/tests/kmod/$MOD/$MOD.ko
PROC=/proc/ktrack_test_probe
T=$(mktemp -d /tmp/probe-modtp.XXXXXX)

# shellcheck source=lib/tap.sh
. "$(dirname "$0")/lib/tap.sh"
# state_hits NAME: "STATE HITS" of probe NAME in session mt's 'probe list'.
state_hits() {
	"$K" probe list -s mt | awk -v p="$1" '$2 == p {
		for (i = 4; i <= NF; i++) if ($i ~ /^(armed|pending|disarmed)$/) break
		print $i, $(i + 1) }'
}
# is_state NAME "STATE HITS": quotes the list when it is not.
is_state() {
	local got
	got=$(state_hits "$1")
	[ "$got" = "$2" ] && return 0
	echo "probe $1: '$got', want '$2'"
	"$K" probe list -s mt
	return 1
}
# mark_log NAME / log_since NAME: the kernel log from a marker on (never
# dmesg -C: other tests read what came before, e.g. the first unsigned
# module's taint message).
mark_log() { echo "probe_modtp: mark $1 $$" >/dev/kmsg; }
log_since() { dmesg | sed -n "/probe_modtp: mark $1 $$/,\$p"; }
grep_or_show() {
	grep -Eq -- "$1" "$2" && return 0
	shift
	cat "$@"
	return 1
}

cleanup() {
	[ -n "${writer:-}" ] && kill "$writer" 2>/dev/null
	"$K" session destroy --all >/dev/null 2>&1
	rmmod $MOD 2>/dev/null
	"$K" unload >/dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT

mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
rmmod $MOD 2>/dev/null
if ! "$K" load >/dev/null; then
	echo "Bail out! cannot load ktrack.ko"
	exit 1
fi
if ! "$K" version | grep -q '^features .*\btracepoint\b'; then
	echo "1..0 # SKIP no t probes on this kernel"
	exit 0
fi

# --- pending, armed, disarmed, re-armed, with exact values ------------------
check "session create mt" "$K" session create mt
"$K" trace -s mt "t:th $MOD:ktrack_tpt/ktrack_tpt_hit seq=\$arg1:s32 magic=\$arg2:x64" \
	"t:td $MOD:ktrack_tpt/ktrack_tpt_done count=\$arg1:u32 sum=\$arg2:s64" \
	"e:eh $MOD:ktrack_tpt/ktrack_tpt_hit seq=\$seq:s32 magic=\$magic:x64" \
	"e:ed $MOD:ktrack_tpt/ktrack_tpt_done count=\$count:u32 sum=\$sum:s64 if count > 4" \
	"e:ebad $MOD:ktrack_tpt/ktrack_tpt_hit s=\$seq:u64" \
	"e:enone $MOD:ktrack_tpt/ktrack_tpt_hit s=\$nosuch:u32" >"$T/tr.out" 2>"$T/tr.err" &
tr=$!
wait_line "$T/tr.err" '^tracing'
check "t MOD:SUBSYS/EVENT before insmod: the probe is pending, and says so" \
	grep_or_show "^probe th \\(id [0-9]+\\): tracepoint, pending" "$T/tr.err"
check "... probe list: th pending with 0 hits" is_state th "pending 0"
check "e MOD:SUBSYS/EVENT with typed fields before insmod: pending too" is_state eh "pending 0"
mark_log insmod1
insmod "$TPT"
check "insmod: th is armed, 0 hits" is_state th "armed 0"
check "... eh is armed, its fields found by name in the module's layout" is_state eh "armed 0"
check "... a field typed wider than it is (int as u64) keeps ebad pending" is_state ebad "pending 0"
log_since insmod1 >"$T/dmesg"
check "... and the kernel log says why" \
	grep_or_show "probe ebad: field 'seq' of ktrack_tpt/ktrack_tpt_hit is int \\(4 bytes\\)" "$T/dmesg"
check "... a field the event lacks keeps enone pending, and says so" \
	grep_or_show "probe enone: event ktrack_tpt/ktrack_tpt_hit has no field 'nosuch'" "$T/dmesg"
echo "tp 5" >$PROC
check "tp 5: th has 5 hits" is_state th "armed 5"
check "... td has 1 hit" is_state td "armed 1"
check "... eh has 5 hits" is_state eh "armed 5"
check "rmmod succeeds with e probes armed on the module's events" rmmod $MOD
check "rmmod: th is disarmed, its 5 hits kept" is_state th "disarmed 5"
check "... eh too" is_state eh "disarmed 5"
check "... no event of the module is left in tracefs" test ! -e /sys/kernel/tracing/events/ktrack_tpt
insmod "$TPT"
check "second insmod: th is armed again" is_state th "armed 5"
check "... eh too" is_state eh "armed 5"
echo "tp 3" >$PROC
echo "tp 1" >$PROC
check "tp 3, tp 1: th has 9 hits" is_state th "armed 9"
check "... td has 3" is_state td "armed 3"
check "... eh has 9" is_state eh "armed 9"
check "... ed has 3 hits, 2 of them filtered out (count > 4 only for tp 5)" \
	bash -c "[ \"\$('$K' probe list -s mt | awk '\$2 == \"ed\" { for (i = 4; i <= NF; i++) if (\$i == \"armed\") print \$(i + 1), \$(i + 3) }')\" = '3 2' ]"
kill -INT $tr
wait $tr
check "trace exits 0" test $? = 0
seqs=$(sed -nE 's/.* th: .*seq=(-?[0-9]+) magic=(0x[0-9a-f]+)$/\1 \2/p' "$T/tr.out" | tr '\n' ' ')
want="0 0x1122334455667788 1 0x1122334455667788 2 0x1122334455667788 3 0x1122334455667788 4 0x1122334455667788 0 0x1122334455667788 1 0x1122334455667788 2 0x1122334455667788 0 0x1122334455667788 "
check "th recorded seq 0..4, 0..2, 0, magic 0x1122334455667788 each (9 records)" \
	bash -c "[ '$seqs' = '$want' ] || { echo 'got: $seqs'; head -20 '$T/tr.out' '$T/tr.err'; exit 1; }"
eseqs=$(sed -nE 's/.* eh: .*seq=(-?[0-9]+) magic=(0x[0-9a-f]+)$/\1 \2/p' "$T/tr.out" | tr '\n' ' ')
check "eh recorded the same 9 (seq, magic) from the event's own record" \
	bash -c "[ '$eseqs' = '$want' ] || { echo 'got: $eseqs'; exit 1; }"
dones=$(sed -nE 's/.* td: .*count=([0-9]+) sum=(-?[0-9]+)$/\1 \2/p' "$T/tr.out" | tr '\n' ' ')
check "td recorded count=5 sum=10, count=3 sum=3, count=1 sum=0" \
	bash -c "[ '$dones' = '5 10 3 3 1 0 ' ] || { echo 'got: $dones'; exit 1; }"
edones=$(sed -nE 's/.* ed: .*count=([0-9]+) sum=(-?[0-9]+)$/\1 \2/p' "$T/tr.out" | tr '\n' ' ')
check "ed recorded only count=5 sum=10 (its filter, on a field named before load)" \
	bash -c "[ '$edones' = '5 10 ' ] || { echo 'got: $edones'; exit 1; }"

# --- a rebuilt module: fields by name are found again, by offset refused -------
TPT2=$root/build/modules/$rel/tests/kmod/${MOD}_v2/$MOD.ko
rmmod $MOD
"$K" trace -s mt "e:vname $MOD:ktrack_tpt/ktrack_tpt_hit seq=\$seq:s32 magic=\$magic:x64" \
	>"$T/v.out" 2>"$T/v.err" &
tr=$!
wait_line "$T/v.err" '^tracing'
insmod "$TPT"
"$K" probe add -s mt 'e:voff ktrack_tpt/ktrack_tpt_hit $seq $magic' >/dev/null
check "e by name (added before load) and e by offset (from the format) armed" \
	bash -c "[ \"\$('$K' probe list -s mt | grep -cE ' (vname|voff) .* armed ')\" = 2 ]"
echo "tp 1" >$PROC
rmmod $MOD
mark_log v2
insmod "$TPT2"
check "the module rebuilt with ktrack_tpt_hit laid out anew: vname is armed again" is_state vname "armed 1"
check "... voff, whose offsets are stale, is not" is_state voff "disarmed 1"
log_since v2 >"$T/dmesg"
check "... and the kernel log says why" \
	grep_or_show "probe voff: the fields of ktrack_tpt/ktrack_tpt_hit moved since the probe was added" "$T/dmesg"
echo "tp 2" >$PROC
check "tp 2 on the rebuilt module: vname has 3 hits" is_state vname "armed 3"
kill -INT $tr
wait $tr
vseqs=$(sed -nE 's/.* vname: .*seq=(-?[0-9]+) magic=(0x[0-9a-f]+)$/\1 \2/p' "$T/v.out" | tr '\n' ' ')
check "... and read seq and magic at their new offsets (0, then 0 and 1)" \
	bash -c "[ '$vseqs' = '0 0x1122334455667788 0 0x1122334455667788 1 0x1122334455667788 ' ] || { echo 'got: $vseqs'; cat '$T/v.err'; exit 1; }"
"$K" probe del -s mt voff >/dev/null
rmmod $MOD
insmod "$TPT"

# --- without MOD: the module's tracepoint is found among loaded modules ------
"$K" trace -d 30s 't:nm ktrack_tpt/ktrack_tpt_done n=$arg1:u32' >"$T/nm.out" 2>"$T/nm.err" &
tr=$!
wait_line "$T/nm.err" '^tracing'
check "t SUBSYS/EVENT of a loaded module (no MOD:) arms" grep_or_show '^probe nm .*armed' "$T/nm.err"
echo "tp 7" >$PROC
kill -INT $tr
wait $tr
check "... and records its argument (n=7)" grep_or_show ' nm: .* n=7$' "$T/nm.out" "$T/nm.err"
check "... named by the module's __tracepoint_ symbol (the snapshot's)" \
	grep_or_show ' nm: \(__tracepoint_ktrack_tpt_done' "$T/nm.out" "$T/nm.err"

# --- unloaded while it fires ---------------------------------------------------
"$K" probe add -s mt "t:busy $MOD:ktrack_tpt/ktrack_tpt_hit" >/dev/null
# an e probe without MOD:, on the loaded module's event (fields from its format)
"$K" probe add -s mt 'e:ebusy ktrack_tpt/ktrack_tpt_hit $seq $magic' >/dev/null
(while echo "tp 1000" >$PROC; do :; done) 2>/dev/null &
writer=$!
for _ in $(seq 100); do
	h=$(state_hits busy)
	[ "${h#* }" -gt 0 ] 2>/dev/null && break
	sleep 0.05
done
check "busy fires while the module is unloaded under it" rmmod $MOD
wait $writer
writer=
h=$(state_hits busy)
check "... busy is disarmed, with hits ($h)" bash -c "[ '${h% *}' = disarmed ] && [ '${h#* }' -gt 0 ]"
check "... and no handler stays: tracepoint list of ktrack is clean" \
	bash -c "! grep -q ktrack_tpt /sys/kernel/tracing/available_events"
h=$(state_hits ebusy)
check "... the e probe without MOD: on its event is disarmed too, with hits ($h)" \
	bash -c "[ '${h% *}' = disarmed ] && [ '${h#* }' -gt 0 ]"
insmod "$TPT"
check "... insmod again arms it" bash -c "[ \"\$('$K' probe list -s mt | awk '\$2 == \"busy\"' | grep -c armed)\" = 1 ]"
check "... and the e probe, by the module it went with" \
	bash -c "[ \"\$('$K' probe list -s mt | awk '\$2 == \"ebusy\"' | grep -c armed)\" = 1 ]"
"$K" probe del -s mt busy >/dev/null
"$K" probe del -s mt ebusy >/dev/null

# --- a Debian module: 9pnet ------------------------------------------------------
if [ -d /sys/module/9pnet ] && [ -e /sys/kernel/tracing/events/9p/9p_client_req ]; then
	"$K" trace 't:req 9p/9p_client_req type=$arg2:s8 tag=$arg3:s32' 't:res 9pnet:9p/9p_client_res' \
		>"$T/9p.out" 2>"$T/9p.err" &
	tr=$!
	wait_line "$T/9p.err" '^tracing'
	cat "$root/README.md" >/dev/null
	ls "$root/kmod" >/dev/null
	kill -INT $tr 2>/dev/null
	wait $tr
	check "9pnet's 9p/9p_client_req: records with the request type and tag" \
		grep_or_show ' req: .*type=[0-9]+ tag=-?[0-9]+$' "$T/9p.out" "$T/9p.err"
	check "9pnet:9p/9p_client_res: records" grep_or_show ' res: ' "$T/9p.out" "$T/9p.err"
else
	skip "9pnet's 9p/9p_client_req" "9pnet is not a loaded module here"
	skip "9pnet:9p/9p_client_res" "9pnet is not a loaded module here"
fi

# --- bad input -------------------------------------------------------------------
expect_fail "an unknown tracepoint is refused with the closest names" 1 \
	"no such tracepoint: ktrack_tpt/ktrack_tpt_hitt .*did you mean ktrack_tpt/ktrack_tpt_hit" \
	"$K" trace -d 1s 't ktrack_tpt/ktrack_tpt_hitt'
expect_fail "... also without SUBSYS/" 1 "did you mean .*ktrack_tpt/ktrack_tpt_done" \
	"$K" trace -d 1s 't ktrack_tpt_dome'
expect_fail "MOD: of a loaded module without that tracepoint is refused" 1 \
	"module $MOD has no tracepoint ktrack_tpt/nosuch" \
	"$K" trace -d 1s "t $MOD:ktrack_tpt/nosuch"
check "... and nothing was added to the kernel" bash -c "[ \"\$('$K' probe list -s mt | grep -c nosuch)\" = 0 ]"

echo "1..$n"
exit $fail
