#!/usr/bin/env bash
# The main job, run inside the VM by 'make demo': load ktrack, check the
# machine, and run a live session, printing what a user would see.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ctl=$root/build/user/bin/ktrackctl
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
step "ktrackctl record -s demo -o /tmp/demo.ktrack -d 3s &"
"$ctl" record -s demo -o /tmp/demo.ktrack -d 3s &
recorder=$!
sleep 1
# A program annotates the kernel timeline, and a driver emits records
# through ktrack's exported API (here the test helper, from every context).
run ktrackctl marker -s demo "hello from the demo"
run insmod "$mods/tests/kmod/ktrack_test_emit/ktrack_test_emit.ko"
step "echo 'run 1 2 7 32' > /sys/kernel/debug/ktrack_test_emit/ctl"
echo 'run 1 2 7 32' >/sys/kernel/debug/ktrack_test_emit/ctl
cat /sys/kernel/debug/ktrack_test_emit/ctl
wait "$recorder"
run ktrackctl report /tmp/demo.ktrack
run ktrackctl stats -s demo
run ktrackctl session destroy demo
run rmmod ktrack_test_emit
run ktrackctl unload
