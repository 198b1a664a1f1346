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
	KTRACK_STRESS_SCALE=${KTRACK_STRESS_SCALE:-10} KTRACK_FUZZ_CALLS=$calls \
		KTRACK_STRESS_ITERS=200 KTRACK_TEST_TIMEOUT=7200 \
		"$root/tests/vm/run" --kernel "$k" --timeout 14000 -- bash -c \
		'KTRACK_SUITE=stress "$0"; a=$?; "$0" capture_stopstart; b=$?; exit $((a | b))' \
		"$root/tests/kernel/run-all" 2>&1 | tee "$logs/$k.log" | grep -vE '^#  +(RUN|OK) |^# +OK '
	rc=${PIPESTATUS[0]}
	p=$(grep -cE '^ok [0-9]+' "$logs/$k.log") s=$(grep -cE '^ok [0-9]+.*# *SKIP' "$logs/$k.log")
	f=$(grep -cE '^not ok' "$logs/$k.log")
	if ((rc != 0 && f == 0)); then f=1; fi
	pass=$((pass + p - s)) fail=$((fail + f)) skip=$((skip + s))
	echo "stress on $k: $((p - s)) passed, $f failed, $s skipped in $(($(date +%s) - start)) s"
done
echo "$pass passed, $fail failed, $skip skipped"
((fail == 0))
