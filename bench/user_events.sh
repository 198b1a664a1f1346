#!/usr/bin/env bash
# The cost of writing a typed user event (include/ktrack/ktrack_user.h) as
# a program pays it, against writing the same 16 bytes to ftrace's
# trace_marker, in ONE VM boot per kernel (Debian's kernels build no
# user_events, whose writes trace_marker's stand for).  Each row is the
# best of 5 runs of build/user/bin/user_event_bench over CALLS calls, ns
# per call:
#   disabled   ktrack: the enable test only (no session wants the event:
#              the program makes no syscall); trace_marker: tracing off
#              (the write still enters the kernel)
#   enabled    ktrack: one write of id + payload, a U probe armed in a
#              running named session (overwrite mode, nobody reading, the
#              payload's three fields fetched); trace_marker: tracing on,
#              the text into ftrace's ring (nobody reading)
# The ratio is ktrack's over trace_marker's of the same row.  Numbers only.
#   bench/user_events.sh [--kernel 6.1|6.12|all] [CALLS]
set -euo pipefail
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
in_vm_or_boot "$@"
B=$build/bin/user_event_bench
S=uebench

best() { # best MODE [ARGS]: lowest ns per call of 5 runs
	local b= v i
	for i in 1 2 3 4 5; do
		v=$("$B" "$calls" "$@")
		if [ -z "$b" ] || awk -v a="$v" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$v; fi
	done
	echo "$b"
}

mountpoint -q $T || mount -t tracefs nodev $T
"$ctl" load >/dev/null
cleanup() {
	"$ctl" session destroy $S >/dev/null 2>&1
	echo 1 >$T/tracing_on
	echo >$T/trace
	"$ctl" unload >/dev/null 2>&1
}
trap cleanup EXIT

echo "== user event write cost, kernel $rel, $(nproc) CPUs, $calls calls per run (best of 5), ns per call"
"$B" 1000 check >/dev/null # warm up
echo 0 >$T/tracing_on
m_off=$(best marker $T/trace_marker)
echo 1 >$T/tracing_on
m_on=$(best marker $T/trace_marker)
echo >$T/trace
u_off=$(best check)
"$ctl" session create $S --buffer-pages 256 --mode overwrite >/dev/null
"$ctl" probe add -s $S 'U:bev bench/ev $a:u32 $b:u64 $c:string' >/dev/null
"$ctl" session start $S >/dev/null
u_on=$(best write)
"$ctl" session stop $S >/dev/null
printf '%-12s %14s %14s %8s\n' row ktrack trace_marker ratio
for r in disabled enabled; do
	if [ $r = disabled ]; then k=$u_off; m=$m_off; else k=$u_on; m=$m_on; fi
	printf '%-12s %14s %14s %8s\n' $r "$k" "$m" "$(awk -v a="$k" -v b="$m" 'BEGIN { printf "%.3fx", a / b }')"
done
echo "# disabled: ktrack's enable test (one load, no syscall) against a trace_marker write with tracing off"
echo "# enabled: ktrack's write(id + payload) recorded by a U probe against a trace_marker write recorded by ftrace"
