#!/usr/bin/env bash
# make check-stress: the stress suite (tests/stress) at full length, plus
# the capture start/stop stress at 200 iterations, on 6.1, 6.12 and the
# debug kernel (built once by scripts/debug-kernel.sh).  Ends with
# "N passed, N failed, N skipped".
#
#   KTRACK_STRESS_KERNELS="6.1 6.12 debug"   where to run
#   KTRACK_STRESS_SCALE=10     churn cycles x100 / x10 (see each program)
#   KTRACK_FUZZ_CALLS          fuzzer calls (1,000,000; 100,000 on debug)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
logs=$root/build/check-stress
mkdir -p "$logs"
pass=0 fail=0 skip=0

for k in ${KTRACK_STRESS_KERNELS:-6.1 6.12 debug}; do
	calls=${KTRACK_FUZZ_CALLS:-1000000}
	if [ "$k" = debug ]; then
		calls=${KTRACK_FUZZ_CALLS:-100000}
		kdir=$("$root/scripts/debug-kernel.sh" --kdir) &&
			make -s -C "$root" modules KDIR="$kdir" >"$logs/build-debug.log" 2>&1 ||
			{ echo "the debug kernel or its modules did not build"; fail=$((fail + 1)); continue; }
	fi
	printf '\n=== stress suite on %s\n' "$k"
	start=$(date +%s)
	# The stress suite under single-threaded TCG: it patches kfree() and
	# other hot functions thousands of times, which multi-threaded TCG
	# emulates wrongly (tests/vm/run, KTRACK_VM_TCG_THREAD).  The capture
	# start/stop stress arms probes on a function the other vCPU is calling
	# and waits for each arm: far slower in turns, so it keeps multi.
	# On the Debian kernels with their own memory debugging on, as make
	# check's short form (tests/vm/run --memdebug); the debug kernel has KASAN.
	memdebug=--memdebug
	[ "$k" = debug ] && memdebug=
	# shellcheck disable=SC2086 # $memdebug: no word or one
	KTRACK_VM_TCG_THREAD=single KTRACK_STRESS_SCALE=${KTRACK_STRESS_SCALE:-10} KTRACK_FUZZ_CALLS=$calls \
		KTRACK_TEST_TIMEOUT=7200 KTRACK_SUITE=stress \
		"$root/tests/vm/run" --kernel "$k" $memdebug --timeout 14000 -- "$root/tests/kernel/run-all" \
		2>&1 | tee "$logs/$k.log" | grep -vE '^#  +(RUN|OK) |^# +OK '
	a=${PIPESTATUS[0]}
	KTRACK_VM_TCG_THREAD=multi KTRACK_STRESS_ITERS=200 KTRACK_TEST_TIMEOUT=7200 \
		"$root/tests/vm/run" --kernel "$k" --timeout 14000 -- "$root/tests/kernel/run-all" capture_stopstart \
		2>&1 | tee -a "$logs/$k.log" | grep -vE '^#  +(RUN|OK) |^# +OK '
	rc=$((a | PIPESTATUS[0]))
	p=$(grep -cE '^ok [0-9]+' "$logs/$k.log") s=$(grep -cE '^ok [0-9]+.*# *SKIP' "$logs/$k.log")
	f=$(grep -cE '^not ok' "$logs/$k.log")
	if ((rc != 0 && f == 0)); then f=1; fi
	pass=$((pass + p - s)) fail=$((fail + f)) skip=$((skip + s))
	echo "stress on $k: $((p - s)) passed, $f failed, $s skipped in $(($(date +%s) - start)) s"
done
echo "$pass passed, $fail failed, $skip skipped"
((fail == 0))
