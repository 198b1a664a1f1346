#!/usr/bin/env bash
# Per-hit cost of a dynamic probe, in ONE VM boot per kernel, all on the
# same target: ktrack_tpt_bench(int, long) of the test module
# ktrack_test_probe_target, called N times in a tight loop ("bench N" on
# /proc/ktrack_test_probe; the module stores the mean time per call).
# Compared: no probe; ktrack p (two fetched args), r ($retval + $duration)
# and f (fprobe on 6.12, kprobes on 6.1); ftrace's dynamic events p (the
# same two args), r ($retval), and on 6.12 fprobe events f (the two args)
# and f%return ($retval); bpftrace kprobe:/kretprobe: (both args summed
# into maps / the return value summed: bpftrace keeps no per-hit record).
# ktrack records go to a running named session in overwrite mode, like
# ftrace's ring buffer, so no reader competes for the CPUs.
# ns/hit = (ns per call with the probe) - (ns per call without); the ratio
# is ns/hit divided by ftrace's of the same kind (p: kprobe event, r:
# kretprobe event, f and fr: fprobe event, entry and return; 6.1 has no
# fprobe events, so f rows there have no ratio).  Also every traceable
# function: ktrack 'f *' (one ftrace_ops, entries) against ftrace's
# function tracer, per hit and the time to attach and detach all of them.
# Numbers only.
#   bench/probes.sh [--kernel 6.1|6.12|all] [CALLS]
set -euo pipefail
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
in_vm_or_boot "$@"
# shellcheck source=lib/probe_rows.sh
. "$(dirname "$0")/lib/probe_rows.sh"
bench_cmd=bench
fn=ktrack_tpt_bench
S=bench
bpf_pid=

mountpoint -q $T || mount -t tracefs nodev $T
mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug
"$ctl" load >/dev/null
insmod "$mods/tests/kmod/ktrack_test_probe_target/ktrack_test_probe_target.ko"
cleanup() {
	[ -n "$bpf_pid" ] && kill -INT "$bpf_pid" 2>/dev/null && wait "$bpf_pid" 2>/dev/null
	for e in kprobes fprobes; do
		if [ -e $T/events/$e/enable ]; then echo 0 >$T/events/$e/enable; fi
	done
	echo >$T/dynamic_events
	"$ctl" session destroy $S >/dev/null 2>&1
	rmmod ktrack_test_probe_target 2>/dev/null
	"$ctl" unload >/dev/null 2>&1
}
trap cleanup EXIT

ftrace_probe() { # ftrace_probe NAME KIND DEFINITION (dynamic_events syntax)
	local group=kprobes
	case $3 in f:*) group=fprobes ;; esac
	if ! echo "$3" >>$T/dynamic_events 2>/dev/null; then
		row "$1" "$2" "unavailable: dynamic_events refused '$3'"
		return
	fi
	if ! echo 1 >$T/events/$group/enable; then
		row "$1" "$2" "unavailable: events/$group/enable refused"
		echo >$T/dynamic_events
		return
	fi
	echo 1 >$T/tracing_on
	row "$1" "$2" "$(measure)"
	echo 0 >$T/events/$group/enable
	echo >$T/dynamic_events
	echo >$T/trace
}

"$ctl" session create $S --buffer-pages 256 --mode overwrite >/dev/null
"$ctl" session start $S >/dev/null

echo "== probe cost per hit, kernel $rel, $(nproc) CPUs, target $fn(int, long), $calls calls per run (best of 5)"
measure >/dev/null # warm up
base=$(measure)

ktrack_probe "ktrack p (a=\$arg1 b=\$arg2)" p "p:bp $fn a=\$arg1 b=\$arg2"
ktrack_probe "ktrack r (\$retval \$duration)" r "r:br $fn ret=\$retval lat=\$duration"
ktrack_probe "ktrack f (entry, a b)" f "f:bf $fn a=\$arg1 b=\$arg2"
ktrack_probe "ktrack f %return (\$retval)" fr "f:bfr $fn%return ret=\$retval"
ftrace_probe "ftrace kprobe event p (a b)" p "p:kt_bench_p $fn a=\$arg1 b=\$arg2"
ftrace_probe "ftrace kretprobe event r (\$retval)" r "r:kt_bench_r $fn ret=\$retval"
if grep -q 'f\[:' $T/README 2>/dev/null; then
	ftrace_probe "ftrace fprobe event f (a b)" f "f:kt_bench_f $fn a=\$arg1 b=\$arg2"
	ftrace_probe "ftrace fprobe event f%return (\$retval)" fr "f:kt_bench_fr $fn%return ret=\$retval"
else
	row "ftrace fprobe event f (a b)" f "unavailable: this kernel has no fprobe events"
	row "ftrace fprobe event f%return (\$retval)" fr "unavailable: this kernel has no fprobe events"
fi
# Every traceable function: ktrack's f over a kernel glob (one ftrace_ops)
# against ftrace's function tracer; the target's hit is one of them all.
ms() { echo $(($(date +%s%N) / 1000000)); }
t0=$(ms)
"$ctl" probe add -s $S 'f:ball *' >/dev/null
t1=$(ms)
"$ctl" probe del -s $S --all >/dev/null
t2=$(ms)
echo function >$T/current_tracer
t3=$(ms)
echo nop >$T/current_tracer
t4=$(ms)
echo >$T/trace
attach_all="ktrack f * add $((t1 - t0)) ms, del $((t2 - t1)) ms; ftrace function tracer on $((t3 - t2)) ms, off $((t4 - t3)) ms"
ktrack_probe "ktrack f * (every function, entry)" fa "f:ball *"
echo function >$T/current_tracer
echo 1 >$T/tracing_on
row "ftrace function tracer (every function)" fa "$(measure)"
echo nop >$T/current_tracer
echo >$T/trace
bpftrace_probe "bpftrace kprobe: (sum arg0, arg1)" p \
	"kprobe:$fn { @n = count(); @a = sum(arg0); @b = sum(arg1); }"
bpftrace_probe "bpftrace kretprobe: (sum retval)" r "kretprobe:$fn { @n = count(); @r = sum(retval); }"

# each row against ftrace's of its kind
declare -A ftrace_row=([p]="ftrace kprobe event p (a b)" [r]="ftrace kretprobe event r (\$retval)"
	[f]="ftrace fprobe event f (a b)" [fr]="ftrace fprobe event f%return (\$retval)"
	[fa]="ftrace function tracer (every function)")
ref_of() { echo "${hit[${ftrace_row[$2]}]:-}"; }
print_rows ns/call "x ftrace" ref_of
for k in "ktrack f (entry, a b)" "ktrack f %return (\$retval)" "ktrack f * (every function, entry)"; do
	echo "# $k: mechanism ${mech[$k]:-?}"
done
echo "# x ftrace: ns/hit over ftrace's ns/hit of the same kind (p: kprobe event, r: kretprobe"
echo "#   event, f and f%return: fprobe event, f *: the function tracer; '-': the kernel has no"
echo "#   such ftrace event)"
echo "# attaching every traceable function ($(wc -l <$T/available_filter_functions)): $attach_all"
