#!/usr/bin/env bash
# latency_noise - 'ktrackctl latency noise' (osnoise-like: a per-CPU
# spinning thread in ktrack.ko, ktrack_osnoise events recorded with an e
# probe) end to end in the test VM, against known disturbances on CPU 1:
# ktrack_test_latency.ko disables IRQs there for IRQOFF ms, COUNT times (a
# function-call IPI: no irq, softirq, NMI or thread seen, so hw noise), and
# a SCHED_FIFO 50 busy loop (latency_target spin) takes the CPU for SPIN ms
# (thread noise).  The figures must bracket them; bad inputs; one noise
# tracer at a time; the file's close stops it.
#
#   tests/vm/run --kernel all -- tests/kernel/run-all 'latency_noise'
#
# Output: TAP.  Leaves the guest as it found it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/tap.sh
. "$here/lib/tap.sh"
# shellcheck source=lib/latency_tracer.sh
. "$here/lib/latency_tracer.sh"
lt_setup latency-noise
IRQOFF=30
COUNT=5
SPIN=300

# ---- undisturbed, as a new user runs it ------------------------------------
"$K" latency noise --runtime 100 -d 2s --json >"$T/a.json" 2>"$T/a.err"
rc=$?
if [ $rc = 0 ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/a.json"; then
	ok "latency noise --runtime 100 -d 2s --json: one JSON object"
else
	notok "latency noise --runtime 100 -d 2s --json (exit $rc)" "$(cat "$T/a.json" "$T/a.err")"
fi
# Brackets: 2 s of 200 ms periods (100 ms spun each): at least 1 period per
# CPU, at most 2 s / 200 ms + 2; the runtime of a period about 100 ms; the
# noise within the runtime; the sources within the noise they explain.
check_json "every online CPU, 1..12 periods each of ~100 ms, noise <= runtime, %avail in 0..100" "$T/a.json" \
	's["tracer"] == "osnoise" and s["runtime_us"] == 100000 and s["period_us"] == 200000 and s["tolerance_ns"] == 5000' \
	'sorted(c["cpu"] for c in s["cpus"]) == list(range('"$(nproc)"'))' \
	'all(1 <= c["periods"] <= 12 for c in s["cpus"])' \
	'all(c["runtime_us"] >= 100000 * c["periods"] and c["runtime_us"] < 150000 * c["periods"] for c in s["cpus"])' \
	'all(0 <= c["noise_us"] <= c["runtime_us"] and 0 <= c["available_pct"] <= 100 for c in s["cpus"])' \
	'all(c["max_single_us"] <= c["noise_us"] for c in s["cpus"])'

"$K" latency noise --runtime 100 --cpus 0 -d 1s >"$T/t.txt" 2>&1
if grep -q '^# tracer: osnoise (runtime 100000 us of each 200000 us period, tolerance 5000 ns)' "$T/t.txt" &&
	grep -Eq '^ +0 +[1-9]' "$T/t.txt" && ! grep -Eq '^ +1 +[0-9]' "$T/t.txt"; then
	ok "text output: one line for CPU 0 (--cpus 0)"
else
	notok "text output" "$(cat "$T/t.txt")"
fi
sed 's/^/# /' "$T/t.txt"

# ---- IRQs off on CPU 1 for IRQOFF ms, COUNT times ----------------------------
# runtime = period: the thread samples all the time (but for the microseconds
# it takes to emit a period's event), so every window falls in a sample.
"$K" latency noise --runtime 200 --period 200 --cpus 1 -d 0 --json >"$T/b.json" 2>"$T/b.err" &
bg=$!
lt_irqoff_windows "$T/b.err" '^measuring noise on CPU 1'
if [ $rc = 0 ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/b.json"; then
	ok "latency noise --cpus 1 under $COUNT IRQs-off windows of $IRQOFF ms (the longest ${inj} us)"
else
	notok "latency noise --cpus 1 under the IRQs-off windows (exit $rc)" "$(cat "$T/b.json" "$T/b.err")"
fi
# Lower bounds: the thread reads the clock just before a window and just
# after it (nothing runs on the CPU meanwhile): one gap >= the window (1 ms
# for the two clocks).  The window shows as hw noise: no handler sees the
# IPI, and what runs when IRQs come back (the local timer, softirqs) is
# taken out of the gap, not put in.  Unless the thread was switched out
# for the whole of every window (it takes the CPU all the time: no), at
# least one window is hw noise.  Upper: 250 ms of slack for the host.
check_json "CPU 1: max single noise brackets the IRQs-off window (>= window - 1 ms, < window + 250 ms)" "$T/b.json" \
	'inj >= '$((IRQOFF * 1000 - 1000)) \
	'cpu(1)["max_single_us"] >= inj - 1000 and cpu(1)["max_single_us"] < inj + 250000'
check_json "CPU 1: the windows are hw noise (not irq/softirq/nmi/thread): hw >= one window, hw time <= noise" "$T/b.json" \
	'cpu(1)["hw"]["us"] >= inj - 1000 and cpu(1)["hw"]["count"] >= 1' \
	'cpu(1)["hw"]["us"] <= cpu(1)["noise_us"]'

# ---- a SCHED_FIFO busy loop on CPU 1 for SPIN ms: thread noise ---------------
"$K" latency noise --runtime 200 --period 200 --cpus 1 -d 0 --json >"$T/c.json" 2>"$T/c.err" &
bg=$!
spun=
if wait_line "$T/c.err" '^measuring noise on CPU 1'; then
	sleep 0.5
	spun=$("$L" spin 1 $SPIN | awk '/^spun_us/ { print $2 }')
	sleep 0.5
fi
kill -INT $bg
wait $bg
rc=$?
bg=
inj=${spun:-0}
if [ $rc = 0 ] && [ -n "$spun" ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/c.json"; then
	ok "latency noise --cpus 1 while a FIFO 50 task spins ${spun} us there"
else
	notok "latency noise --cpus 1 under the FIFO spin (exit $rc)" "$(cat "$T/c.json" "$T/c.err")"
fi
# The FIFO task preempts the noise thread (SCHED_OTHER) before its clock
# starts and gives the CPU back after it stops: the thread is switched out
# for the whole spin, one switch-out, one gap: both >= the spin (1 ms for
# the clocks).  Upper: the spin plus 250 ms.
check_json "CPU 1: thread noise >= the spin, max single noise brackets it (>= spin - 1 ms, < spin + 250 ms)" "$T/c.json" \
	'inj >= '$((SPIN * 1000)) \
	'cpu(1)["thread"]["us"] >= inj - 1000 and cpu(1)["thread"]["count"] >= 1' \
	'cpu(1)["max_single_us"] >= inj - 1000 and cpu(1)["max_single_us"] < inj + 250000'

# ---- bad input ---------------------------------------------------------------
expect_fail "--runtime 300 (over the default 200 ms period): says to give a longer --period" 1 \
	'--runtime 300 ms must be .* at most the period' "$K" latency noise --runtime 300 -d 1s
expect_fail "--period 0" 1 'period 0 ms is outside' "$K" latency noise --period 0 -d 1s
req_case() {
	local name=$1 want=$2
	shift 2
	local got
	got=$("$L" req "$@" 2>&1)
	if [ "$got" = "$want" ]; then ok "$name: $want"; else notok "$name: want '$want'" "$got"; fi
}
# latency_target req KIND PERIOD_NS RUNTIME_NS TOLERANCE_NS CPUS0 RESERVED0
req_case "START noise, runtime > period" "errno EINVAL" 2 100000000 200000000 5000 0 0
req_case "START noise, runtime 0" "errno EINVAL" 2 100000000 0 5000 0 0
req_case "START noise, tolerance = period" "errno EINVAL" 2 100000000 50000000 100000000 0 0
req_case "START noise, period 2 s" "errno EINVAL" 2 2000000000 50000000 5000 0 0
req_case "START noise, reserved[0] = 7" "errno EINVAL" 2 100000000 50000000 5000 0 7
req_case "START noise, CPU 40 (offline)" "errno EINVAL" 2 100000000 50000000 5000 10000000000 0
req_case "START noise on CPU 0, closed at once" "ok" 2 100000000 50000000 5000 1 0

# ---- one at a time; the file's close stops it ---------------------------------
# held until killed below (600 s: 30 s ran out on the debug kernel before
# the rmmod check)
"$L" req 2 100000000 50000000 5000 0 0 600 >"$T/hold.out" 2>&1 &
bg=$!
if wait_line "$T/hold.out" '^started'; then
	nt=$(grep -l '^ktrack_noise/' /proc/[0-9]*/comm 2>/dev/null | wc -l)
	if [ "$nt" = "$(nproc)" ]; then ok "a started noise tracer runs a ktrack_noise/N thread per online CPU ($nt)"; else
		notok "ktrack_noise threads while held: $nt, want $(nproc)"
	fi
	req_case "a second noise START while one runs" "errno EBUSY" 2 100000000 50000000 5000 0 0
	req_case "a timer START meanwhile (one of each kind)" "ok" 1 1000000 0 0 0 0
	expect_fail "ktrackctl latency noise while one runs: says so" 2 'already running' "$K" latency noise -d 1s
	kill -KILL $bg
	wait $bg 2>/dev/null
	bg=
	sleep 0.5
	nt=$(grep -l '^ktrack_noise/' /proc/[0-9]*/comm 2>/dev/null | wc -l)
	if [ "$nt" = 0 ]; then ok "the holder killed (its file closed): no ktrack_noise thread left"; else
		notok "ktrack_noise threads after the close: $nt"
	fi
	req_case "noise START after the holder's close" "ok" 2 100000000 50000000 5000 0 0
else
	notok "hold a noise tracer" "$(cat "$T/hold.out")"
	kill -KILL $bg 2>/dev/null
fi

echo "1..$n"
exit $fail
