#!/usr/bin/env bash
# The main job, run inside the VM by 'make demo': load ktrack, check the
# machine, and run a live session, printing what a user would see.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ctl=$root/build/user/bin/ktrackctl
step() { printf '\n$ %s\n' "$*"; }

step "ktrackctl load"
"$ctl" load
step "ktrackctl version"
"$ctl" version
step "ktrackctl doctor"
"$ctl" doctor || true

# ktrack's own TRACE_EVENTs, seen through ftrace.
step "echo 1 > /sys/kernel/tracing/events/ktrack/enable"
echo 1 >/sys/kernel/tracing/events/ktrack/enable
exec 3<>/dev/ktrack
exec 3>&-
echo 0 >/sys/kernel/tracing/events/ktrack/enable
step "grep ktrack_ /sys/kernel/tracing/trace"
grep ktrack_ /sys/kernel/tracing/trace

step "ktrackctl unload"
"$ctl" unload
