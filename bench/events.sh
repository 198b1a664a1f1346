#!/usr/bin/env bash
# Per-hit cost of t and e probes on a hot tracepoint, in ONE VM boot per
# kernel: the test module's trace event ktrack_tpt/ktrack_tpt_hit(int seq,
# u64 magic, ...) fired N times in a tight loop ("tpbench N" on
# /proc/ktrack_test_probe; the module stores the mean time per event).
# Compared: the tracepoint with nothing attached; ktrack t (its two
# arguments) and e (the event's two fields), recording into a running named
# session in overwrite mode with no reader; the plain trace event enabled in
# tracefs (ftrace's ring buffer, no reader: the same work as t, the fields
# copied once); ftrace's own eprobe and tracepoint probe on the same event
# with the same two values, where the kernel has them.
# ns/hit = (ns per event with the probe) - (ns per event with none); the
# ratio is ktrack's ns/hit over the ftrace row of the same kind (t: the
# tprobe, else the plain event; e: the eprobe, else the plain event).
#   bench/events.sh [--kernel 6.1|6.12|all] [CALLS]
set -euo pipefail
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
in_vm_or_boot "$@"
# shellcheck source=lib/probe_rows.sh
. "$(dirname "$0")/lib/probe_rows.sh"
bench_cmd=tpbench
ev=ktrack_tpt/ktrack_tpt_hit
S=bench

mountpoint -q $T || mount -t tracefs nodev $T
"$ctl" load >/dev/null
insmod "$mods/tests/kmod/ktrack_test_probe_target/ktrack_test_probe_target.ko"
cleanup() {
	echo 0 >$T/events/$ev/enable 2>/dev/null
	echo 0 >$T/tracing_on
	echo >$T/dynamic_events 2>/dev/null
	"$ctl" session destroy $S >/dev/null 2>&1
	rmmod ktrack_test_probe_target 2>/dev/null
	"$ctl" unload >/dev/null 2>&1
}
trap cleanup EXIT

# ftrace_row NAME KIND ENABLE_FILE: a row with ENABLE_FILE set to 1.
ftrace_row() {
	echo 1 >$T/tracing_on
	echo 1 >"$3"
	row "$1" "$2" "$(measure)"
	echo 0 >"$3"
	echo >$T/trace
}

# ftrace_dyn NAME KIND GROUP/EVENT DEFINITION: a dynamic event of ftrace's.
ftrace_dyn() {
	local err
	if ! err=$(echo "$4" 2>&1 >>$T/dynamic_events); then
		row "$1" "$2" "unavailable: dynamic_events refused '$4': $(tail -n 2 $T/error_log 2>/dev/null | tr '\n' ' ')$err"
		return
	fi
	ftrace_row "$1" "$2" "$T/events/$3/enable"
	echo "-:$3" >>$T/dynamic_events
}

"$ctl" session create $S --buffer-pages 256 --mode overwrite >/dev/null
"$ctl" session start $S >/dev/null

echo "== t/e probe cost per hit, kernel $rel, $(nproc) CPUs, event $ev, $calls events per run (best of 5)"
measure >/dev/null # warm up
base=$(measure)

ktrack_probe "ktrack t (seq=\$arg1 magic=\$arg2)" t "t:bt $ev seq=\$arg1:s32 magic=\$arg2:x64"
ktrack_probe "ktrack e (\$seq \$magic)" e "e:be $ev \$seq \$magic"
ftrace_row "ftrace trace event enabled" ev "$T/events/$ev/enable"
ftrace_dyn "ftrace eprobe (seq magic)" e eprobes/kt_bench_e \
	"e:eprobes/kt_bench_e ktrack_tpt.ktrack_tpt_hit seq=\$seq:s32 magic=\$magic:x64"
ftrace_dyn "ftrace tprobe (seq magic)" t tracepoints/kt_bench_t \
	"t:tracepoints/kt_bench_t ktrack_tpt_hit seq=\$arg1:s32 magic=\$arg2:x64"

ref_ev=${hit["ftrace trace event enabled"]:-}
ref_t=${hit["ftrace tprobe (seq magic)"]:-$ref_ev}
ref_e=${hit["ftrace eprobe (seq magic)"]:-$ref_ev}
# ktrack's rows against ftrace's of the same kind; ftrace's have no ratio
ref_of() {
	case $1 in
	ktrack*) if [ "$2" = e ]; then echo "$ref_e"; else echo "$ref_t"; fi ;;
	esac
}
print_rows ns/event "x ftrace" ref_of
echo "# x ftrace: ktrack's ns/hit over ftrace's of the same kind (t: tprobe, e: eprobe; the plain event where the kernel has neither)"
