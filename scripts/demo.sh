#!/usr/bin/env bash
# The main job, run inside the VM by 'make demo': load ktrack, check the
# machine, and run a live session, printing what a user would see.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ctl=${KTRACK_CTL:-$root/build/user/bin/ktrackctl}
mods=$root/build/modules/$(uname -r)
step() { printf '\n$ %s\n' "$*"; }
run() {
	step "$*"
	local c=$1
	shift
	[ "$c" = ktrackctl ] && c=$ctl
	"$c" "$@"
}

run ktrackctl load
run ktrackctl version
step "ktrackctl doctor"
"$ctl" doctor || true

# A named session outlives the commands that use it.
run ktrackctl session create demo --buffer-pages 64
# until_line FILE REGEX: wait (30 s at most) for a line, e.g. the one record
# prints once recording has begun, then show what was printed.
until_line() {
	for _ in $(seq 300); do
		grep -Eq -- "$2" "$1" && break
		sleep 0.1
	done
	cat "$1"
}
step "ktrackctl record -s demo -o /tmp/demo.ktrack -d 3s &"
"$ctl" record -s demo -o /tmp/demo.ktrack -d 3s 2>/tmp/demo.err &
recorder=$!
until_line /tmp/demo.err '^recording to '
# A program annotates the kernel timeline, and a driver emits records
# through ktrack's exported API (here the test helper, from every context).
run ktrackctl marker -s demo "hello from the demo"
run insmod "$mods/tests/kmod/ktrack_test_emit/ktrack_test_emit.ko"
step "echo 'run 1 2 7 32' > /sys/kernel/debug/ktrack_test_emit/ctl"
echo 'run 1 2 7 32' >/sys/kernel/debug/ktrack_test_emit/ctl
cat /sys/kernel/debug/ktrack_test_emit/ctl
wait "$recorder"
tail -n +2 /tmp/demo.err
run ktrackctl report /tmp/demo.ktrack
run ktrackctl stats -s demo
run ktrackctl session destroy demo

# Dynamic probes: a return probe with its return value and latency, live;
# then one fprobe (6.12) or kprobe+kretprobe pair (6.1) over two functions,
# recorded to a file and analysed.
step "ktrackctl trace -d 3s -c cat 'r:vfsread vfs_read ret=\$retval:s64 lat=\$duration' &"
"$ctl" trace -d 3s -c cat 'r:vfsread vfs_read ret=$retval:s64 lat=$duration' 2>/tmp/trace.err &
tracer=$!
until_line /tmp/trace.err '^tracing '
cat /etc/hostname >/dev/null
wait "$tracer"
tail -n +3 /tmp/trace.err
step "ktrackctl record -o /tmp/vfs.ktrack -d 3s 'f:vfs vfs_read,vfs_write%both' &"
"$ctl" record -o /tmp/vfs.ktrack -d 3s 'f:vfs vfs_read,vfs_write%both' 2>/tmp/vfs.err &
recorder=$!
until_line /tmp/vfs.err '^recording to '
ls -R /usr/share/doc >/dev/null
wait "$recorder"
tail -n +3 /tmp/vfs.err
run ktrackctl profile /tmp/vfs.ktrack
run ktrackctl hist /tmp/vfs.ktrack
run rmmod ktrack_test_emit
run ktrackctl unload
