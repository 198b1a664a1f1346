#!/usr/bin/env bash
# make check-debug: the reliability lane on the debug kernel.
#
# Builds (once, cached) the debug kernel (scripts/debug-kernel.sh: Debian's
# 6.12 with KASAN, KFENCE, lockdep, PROVE_RCU, DEBUG_ATOMIC_SLEEP,
# kmemleak, DEBUG_OBJECTS, UBSAN), builds ktrack's modules against it
# (W=1), boots it and runs the whole in-VM suite, the stress suite (fuzzer
# at 100,000 calls) and a kmemleak scan in one guest.  Any splat fails the
# lane (tests/vm/run).  Ends with "N passed, N failed, N skipped".
#
#   KTRACK_STRESS_SCALE=N   stress length (1 by default here; 10 in check-stress)
#   KTRACK_TESTS="glob..."  only the tests whose names match
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
logs=$root/build/check-debug
mkdir -p "$logs"
t0=$(date +%s)

"$root/scripts/setup.sh" || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }
rel=$("$root/scripts/debug-kernel.sh") || { echo "the debug kernel did not build"; echo "0 passed, 1 failed"; exit 1; }
kdir=$("$root/scripts/debug-kernel.sh" --kdir)
t1=$(date +%s)
echo "debug kernel $rel ready in $((t1 - t0)) s"

if ! { make -C "$root" all && make -C "$root" modules KDIR="$kdir" W=1; } >"$logs/build.log" 2>&1; then
	tail -n 40 "$logs/build.log"
	echo "0 passed, 1 failed"
	exit 1
fi
if grep -E 'warning:' "$logs/build.log"; then
	echo "the modules build with warnings against the debug kernel"
	echo "0 passed, 1 failed"
	exit 1
fi

export KTRACK_STRESS_SCALE=${KTRACK_STRESS_SCALE:-1}
export KTRACK_FUZZ_CALLS=${KTRACK_FUZZ_CALLS:-100000}
export KTRACK_STRESS_ITERS=${KTRACK_STRESS_ITERS:-20}
# Everything runs several times slower under KASAN and lockdep: each test
# program's limit (run-all) and each harness test's (tests/kernel/
# kselftest_harness.h) grow.
export KTRACK_TEST_TIMEOUT=${KTRACK_TEST_TIMEOUT:-2400}
export KTRACK_TEST_TIMEOUT_SCALE=${KTRACK_TEST_TIMEOUT_SCALE:-30}
# shellcheck disable=SC2086
"$root/tests/vm/run" --kernel debug --timeout 14000 -- "$root/tests/debug/guest-lane" ${KTRACK_TESTS:-} 2>&1 |
	tee "$logs/vm.log" | grep -vE '^#  +(RUN|OK) |^# +OK |^#  +[A-Za-z_.]+: Test'
rc=${PIPESTATUS[0]}
t2=$(date +%s)
counts=$(grep -E '^kernel .*: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$logs/vm.log" | tail -n1 |
	sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/')
read -r p f s <<<"${counts:-0 1 0}"
if ((rc != 0 && f == 0)); then f=1; fi
echo "debug lane: kernel build/cache $((t1 - t0)) s, guest run $((t2 - t1)) s"
echo "$p passed, $f failed, $s skipped"
((f == 0))
