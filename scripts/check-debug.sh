#!/usr/bin/env bash
# make check-debug: the reliability lane on the debug kernel.
#
# Builds (once, cached) the debug kernel (scripts/debug-kernel.sh: Debian's
# 6.12 with KASAN, KFENCE, lockdep, PROVE_RCU, DEBUG_ATOMIC_SLEEP,
# kmemleak, DEBUG_OBJECTS, UBSAN), builds ktrack's modules against it
# (W=1), boots it and runs, in two guests at once: the whole in-VM suite
# and a kmemleak scan (single-threaded TCG); the stress suite (fuzzer at
# 100,000 calls) and a kmemleak scan (single-threaded), then
# capture_stopstart and a kmemleak scan with multi-threaded TCG, as make
# check does (scripts/check.sh says why), then a second in-VM suite guest
# that shares the suite's remaining programs with the first.  Any splat fails the lane
# (tests/vm/run).  Ends with "N passed, N failed, N skipped".
#
#   KTRACK_STRESS_SCALE=N   stress length (1 by default here; 10 in check-stress)
#   KTRACK_TESTS="glob..."  only the tests whose names match
#   KTRACK_LANE_STRESS=0    leave the stress suite out
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
# lane LOG THREAD [guest-lane args...]: one guest; its counts go to LOG.counts.
lane() {
	local log=$1 thread=$2 rc counts lp lf ls
	shift 2
	KTRACK_VM_TCG_THREAD=$thread "$root/tests/vm/run" --kernel debug --timeout 14000 -- \
		"$root/tests/debug/guest-lane" "$@" >"$log" 2>&1
	rc=$?
	counts=$(grep -E '^kernel .*: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$log" | tail -n1 |
		sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped/\1 \2 \3/')
	read -r lp lf ls <<<"${counts:-0 1 0}"
	if ((rc != 0 && lf == 0)); then lf=1; fi
	echo "$lp $lf $ls" >"$log.counts"
	# The log's TAP, without the harness's per-test chatter.
	grep -vE '^#  +(RUN|OK) |^# +OK |^#  +[A-Za-z_.]+: Test' "$log"
}
capture=1 stress=1
if [ -n "${KTRACK_TESTS:-}" ]; then
	capture=0
	for pat in $KTRACK_TESTS; do [[ capture_stopstart == $pat ]] && capture=1; done
fi
[ "${KTRACK_LANE_STRESS:-1}" = 0 ] && stress=0
# Two guests at once, one per host core (each single-threaded TCG guest
# keeps one core busy).  One runs the in-VM suite; the other the stress
# suite, then capture_stopstart under multi-threaded TCG, then joins the
# in-VM suite: the two suite guests share its programs, each taking the
# next one no guest has claimed (run-all's KTRACK_CLAIMS, in a directory
# both guests mount: vm/run's KTRACK_VM_SHARE).  Each guest ends with its
# own kmemleak scan.  With one suite guest, the other core sat idle for
# the last two of the lane's three hours.
rm -rf "$logs"/vm*.log "$logs"/vm*.log.counts "$logs/claims"
mkdir -p "$logs/claims"
# shellcheck disable=SC2086
KTRACK_LANE_STRESS=0 KTRACK_EXCLUDE=capture_stopstart KTRACK_CLAIMS=$logs/claims KTRACK_VM_SHARE=$logs/claims \
	lane "$logs/vm.log" single ${KTRACK_TESTS:-} >"$logs/vm.tap" &
pid_suite=$!
(
	# shellcheck disable=SC2086
	((stress)) && KTRACK_LANE_SUITE=0 lane "$logs/vm-stress.log" single ${KTRACK_TESTS:-}
	((capture)) && KTRACK_LANE_STRESS=0 lane "$logs/vm-capture.log" multi capture_stopstart
	# shellcheck disable=SC2086
	KTRACK_LANE_STRESS=0 KTRACK_EXCLUDE=capture_stopstart KTRACK_CLAIMS=$logs/claims KTRACK_VM_SHARE=$logs/claims \
		lane "$logs/vm-suite2.log" single ${KTRACK_TESTS:-}
) >"$logs/vm-stress.tap" &
pid_stress=$!
wait "$pid_suite" "$pid_stress"
cat "$logs/vm.tap" "$logs/vm-stress.tap"
p=0 f=0 s=0
for c in "$logs"/vm*.log.counts; do
	[ -e "$c" ] || continue
	read -r lp lf ls <"$c"
	p=$((p + lp)) f=$((f + lf)) s=$((s + ls))
done
[ -e "$logs/vm.log.counts" ] || f=$((f + 1))
t2=$(date +%s)
echo "debug lane: kernel build/cache $((t1 - t0)) s, guest run $((t2 - t1)) s"
echo "$p passed, $f failed, $s skipped"
((f == 0))
