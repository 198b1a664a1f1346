# tests/kernel/lib/tap.sh - TAP helpers for the in-VM shell tests (sourced;
# kept out of tests/kernel/*.sh so run-all does not take it for a test).
#   ok NAME | notok NAME [OUTPUT] | check NAME COMMAND...
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
