#!/usr/bin/env bash
# Per-hit cost of a user-space probe, in ONE VM boot per kernel, all on the
# same target: kt_target_fn(long, const char *) of
# build/tests/targets/uprobe_target, called N times in a loop that the
# program times itself ("uprobe_target N 0 0 time" prints ps per call).
# Compared: no probe; ktrack u (the long and the string) and ur ($retval,
# $duration); ftrace's uprobe events p (the same two, the string as
# ustring) and r ($retval); bpftrace uprobe: (the long summed, the string
# counted in a map) and uretprobe: (retval summed).  ktrack records go to a
# running named session in overwrite mode, like ftrace's ring buffer, so
# no reader competes for the CPUs.  ns/hit = (ns per call with the probe)
# - (ns per call without); the ratio is ns/hit over ftrace's of the same
# kind.  Numbers only.
#   bench/uprobes.sh [--kernel 6.1|6.12|all] [CALLS]
set -euo pipefail
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
in_vm_or_boot "$@"
# shellcheck source=lib/probe_rows.sh
. "$(dirname "$0")/lib/probe_rows.sh"
TGT=$root/build/tests/targets/uprobe_target
fn=kt_target_fn
S=ubench
bpf_pid=
calls=$((calls / 4)) # a uprobe hit costs microseconds in the emulated VM

# Best (lowest) of 5 runs of the target, ns per call with 2 decimals.
measure() {
	local best= ps i
	for i in 1 2 3 4 5; do
		ps=$("$TGT" "$calls" 0 0 time)
		if [ -z "$best" ] || [ "$ps" -lt "$best" ]; then best=$ps; fi
	done
	awk -v p="$best" 'BEGIN { printf "%.2f", p / 1000 }'
}

mountpoint -q $T || mount -t tracefs nodev $T
"$ctl" load >/dev/null
cleanup() {
	[ -n "$bpf_pid" ] && kill -INT "$bpf_pid" 2>/dev/null && wait "$bpf_pid" 2>/dev/null
	if [ -e $T/events/ktu/enable ]; then echo 0 >$T/events/ktu/enable; fi
	echo >$T/uprobe_events
	"$ctl" session destroy $S >/dev/null 2>&1
	"$ctl" unload >/dev/null 2>&1
}
trap cleanup EXIT

# The file offset of kt_target_fn, as ftrace's uprobe_events wants it.
off=$(python3 - "$TGT" <<'PY'
import subprocess, sys
sym = subprocess.run(["readelf", "-sW", sys.argv[1]], capture_output=True, text=True).stdout
addr = [int(l.split()[1], 16) for l in sym.splitlines() if l.strip().endswith(" kt_target_fn")][0]
for l in subprocess.run(["readelf", "-lW", sys.argv[1]], capture_output=True, text=True).stdout.splitlines():
    w = l.split()
    if w and w[0] == "LOAD" and int(w[2], 16) <= addr < int(w[2], 16) + int(w[4], 16):
        print(hex(addr - int(w[2], 16) + int(w[1], 16)))
PY
)

ftrace_uprobe() { # ftrace_uprobe NAME KIND DEFINITION (uprobe_events syntax)
	if ! echo "$3" >>$T/uprobe_events 2>/dev/null; then
		row "$1" "$2" "unavailable: uprobe_events refused '$3'"
		return
	fi
	echo 1 >$T/events/ktu/enable
	echo 1 >$T/tracing_on
	row "$1" "$2" "$(measure)"
	echo 0 >$T/events/ktu/enable
	echo >$T/uprobe_events
	echo >$T/trace
}

"$ctl" session create $S --buffer-pages 256 --mode overwrite >/dev/null
"$ctl" session start $S >/dev/null

echo "== uprobe cost per hit, kernel $rel, $(nproc) CPUs, target $fn(long, const char *), $calls calls per run (best of 5)"
measure >/dev/null # warm up
base=$(measure)

ktrack_probe "ktrack u (i=\$arg1 s=ustring)" u "u:bu $TGT:$fn i=\$arg1 s=+0(\$arg2):string"
ktrack_probe "ktrack ur (\$retval \$duration)" ur "ur:bur $TGT:$fn ret=\$retval lat=\$duration"
ftrace_uprobe "ftrace uprobe event p (i s)" u "p:ktu/bp $TGT:$off i=%di:u64 s=+0(%si):ustring"
ftrace_uprobe "ftrace uretprobe event r (\$retval)" ur "r:ktu/br $TGT:$off ret=\$retval"
bpftrace_probe "bpftrace uprobe: (sum i, count s)" u \
	"uprobe:$TGT:$fn { @n = count(); @i = sum(arg0); @s[str(arg1)] = count(); }"
bpftrace_probe "bpftrace uretprobe: (sum retval)" ur "uretprobe:$TGT:$fn { @n = count(); @r = sum(retval); }"

declare -A ftrace_row=([u]="ftrace uprobe event p (i s)" [ur]="ftrace uretprobe event r (\$retval)")
ref_of() { echo "${hit[${ftrace_row[$2]}]:-}"; }
print_rows ns/call "x ftrace" ref_of
echo "# x ftrace: ns/hit over ftrace's ns/hit of the same kind (u: uprobe event, ur: uretprobe event)"
