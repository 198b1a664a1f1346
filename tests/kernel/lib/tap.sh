# tests/kernel/lib/tap.sh - TAP helpers for the in-VM shell tests (sourced;
# kept out of tests/kernel/*.sh so run-all does not take it for a test).
#   ok NAME | notok NAME [OUTPUT] | skip NAME REASON | check NAME COMMAND...
#   expect_fail NAME RC REGEX COMMAND... | wait_line FILE REGEX
# $n counts the cases, $fail becomes 1 on the first failure: end a test
# with 'exit $fail'.
n=0
fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() {
	n=$((n + 1))
	fail=1
	echo "not ok $n - $1"
	[ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/# /' | head -20
	return 0
}
skip() { n=$((n + 1)); echo "ok $n - $1 # SKIP $2"; }
# check NAME COMMAND... : passes when COMMAND succeeds; else quotes its output.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$name"; else notok "$name" "$out"; fi
}
# wait_line FILE REGEX: until FILE has a line matching REGEX (30 s); e.g.
# the "recording to FILE" line after which a background record records.
wait_line() {
	local _i
	for _i in $(seq 300); do
		grep -Eq -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# expect_fail NAME RC REGEX COMMAND...: COMMAND exits with RC and its output
# matches REGEX (an error that says what to fix).
expect_fail() {
	local name=$1 want=$2 re=$3 out rc
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" = "$want" ] && grep -Eq -- "$re" <<<"$out"; then ok "$name"; else
		notok "$name (exit $rc, want $want)" "$out"
	fi
}
