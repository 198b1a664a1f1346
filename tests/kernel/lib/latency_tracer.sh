# shellcheck shell=bash
# tests/kernel/lib/latency_tracer.sh - the set-up of latency_timer.sh and
# latency_noise.sh (sourced after lib/tap.sh; kept out of tests/kernel/*.sh
# so run-all does not take it for a test):
#   lt_setup NAME   sets root, K (ktrackctl), L (latency_target), KO (the
#                   disturbance module ktrack_test_latency), T (a scratch
#                   directory); loads ktrack, needs CPU 1 (or ends the test
#                   with one failure); on exit kills $bg, unloads the module
#                   and ktrack, and removes T.
#   check_json NAME FILE PYTHON-EXPR...   the summary 's' satisfies every
#                   expression (cpu(N): CPU N's entry; inj: the injected
#                   time in us, from $inj); prints the failing ones.
#   wait_done N     the test module completed N windows (60 s at most).
#   lt_irqoff_windows ERRFILE REGEX   once the tracer started as $bg says
#                   REGEX in ERRFILE, IRQs off on CPU 1 for $IRQOFF ms,
#                   $COUNT times (ktrack_test_latency), then SIGINT to it;
#                   sets rc (its exit status) and inj (the longest window
#                   as the module measured it, us).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
K=$root/build/user/bin/ktrackctl
L=$root/build/tests/targets/latency_target
KO=$root/build/modules/$(uname -r)/tests/kmod/ktrack_test_latency/ktrack_test_latency.ko

lt_cleanup() {
	[ -n "${bg:-}" ] && kill "$bg" 2>/dev/null
	wait 2>/dev/null
	grep -q '^ktrack_test_latency ' /proc/modules && rmmod ktrack_test_latency
	"$K" unload >/dev/null 2>&1
	rm -rf "$T"
}

lt_setup() {
	T=$(mktemp -d "/tmp/$1.XXXXXX")
	trap lt_cleanup EXIT
	if ! "$K" load >/dev/null || [ ! -x "$L" ] || [ ! -f "$KO" ]; then
		echo "1..1"
		notok "load ktrack (and find $L, $KO: make kernel-tests modules)"
		exit 1
	fi
	if [ "$(nproc)" -lt 2 ]; then
		echo "1..1"
		notok "the disturbances need CPU 1 (the VM has $(nproc) CPU)"
		exit 1
	fi
}

check_json() {
	local name=$1 file=$2
	shift 2
	local out
	if out=$(python3 - "$file" "${inj:-0}" "$@" <<'EOF2' 2>&1
import json, sys
s = json.load(open(sys.argv[1]))
inj = irqoff = int(sys.argv[2])
def cpu(n):
    for c in s["cpus"]:
        if c["cpu"] == n:
            return c
    return None
bad = [e for e in sys.argv[3:] if not eval(e)]
if bad:
    print("failed:", bad)
    print(json.dumps(s)[:1500])
    sys.exit(1)
EOF2
	); then ok "$name"; else notok "$name" "$out"; fi
}

wait_done() {
	local _i
	for _i in $(seq 600); do
		[ "$(cat /sys/module/ktrack_test_latency/parameters/done 2>/dev/null)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

lt_irqoff_windows() {
	if wait_line "$1" "$2"; then
		insmod "$KO" cpu=1 irqoff_ms="$IRQOFF" count="$COUNT" interval_ms=300
		wait_done "$COUNT" || notok "ktrack_test_latency did not complete $COUNT windows"
		sleep 0.5
	fi
	kill -INT "$bg"
	wait "$bg"
	rc=$?
	bg=
	inj=$(dmesg | grep -o 'irqs off on cpu 1 for [0-9]* us' | tail -"$COUNT" |
		awk '{ if ($7 > m) m = $7 } END { print m + 0 }')
	rmmod ktrack_test_latency
}
