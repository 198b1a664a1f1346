#!/usr/bin/env bash
# tests/browser/reports.sh DIR SHOTS [LABEL] - the HTML report in a real
# browser, on real recordings: DIR holds what tests/kernel/report_html.sh
# kept from a guest (calls.ktr, lost.ktr, objects.ktr, objects.json,
# kernel).  Each is exported with this ktrackctl (export --format html),
# opened in Debian's chromium through playwright-core
# (tests/browser/report_check.mjs) and checked against the text views
# (hist --json, report --objects --json); screenshots of every view go to
# SHOTS, named LABEL-....png.  Output: TAP; exit 1 on any failure.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
K=${KTRACKCTL:-$root/build/user/bin/ktrackctl}
dir=$1 shots=$2 label=${3:-$(cat "$1/kernel" 2>/dev/null || echo report)}
mkdir -p "$shots"
work=$(mktemp -d /tmp/ktrack-browser-XXXXXX)
trap 'rm -rf "$work"' EXIT
fail=0
run() { # run NAME ARGS...: one report_check.mjs run, its TAP renumbered into ours
	local name=$1 out rc
	shift
	out=$(node "$here/report_check.mjs" "$@" 2>&1)
	rc=$?
	sed -E "s/^(not ok|ok) [0-9]+ - /\1 - $name: /; /^1\.\.[0-9]+$/d" <<<"$out"
	if ((rc != 0)); then
		fail=1
		# Died before its TAP (node too old, chromium missing...): say so.
		grep -q '^not ok' <<<"$out" || { echo "not ok - $name: report_check.mjs exited with status $rc"; sed 's/^/# /' <<<"$out" | tail -n 5; }
	fi
}
# step NAME COMMAND...: a preparation step; its failure is a failing case.
step() {
	local name=$1 out
	shift
	if ! out=$("$@" 2>&1); then
		echo "not ok - $label: $name"
		sed 's/^/# /' <<<"$out" | tail -n 5
		fail=1
	fi
}
for f in calls lost objects; do
	if [ ! -s "$dir/$f.ktr" ]; then
		echo "not ok - $label: $dir/$f.ktr is missing (did tests/kernel/report_html.sh run?)"
		fail=1
	fi
done
((fail)) && exit 1

step "export calls.ktr to HTML" "$K" export --format html -o "$work/calls.html" "$dir/calls.ktr"
step "hist -k func of calls.ktr" "$K" hist "$dir/calls.ktr" -k func --json -o "$work/hist-func.json"
step "hist -k probe of calls.ktr" "$K" hist "$dir/calls.ktr" -k probe --json -o "$work/hist-probe.json"
run "$label stacks" --report "$work/calls.html" --hist-func "$work/hist-func.json" \
	--hist-probe "$work/hist-probe.json" --flame stacks --frame vfs_read --frame ksys_read \
	--shots "$shots" --name "$label-stacks"
run "$label calls" --report "$work/calls.html" --flame calls --frame vfs_read --frame ksys_write \
	--shots "$shots" --name "$label-calls"

step "export lost.ktr to HTML" "$K" export --format html -o "$work/lost.html" "$dir/lost.ktr"
run "$label lost" --report "$work/lost.html" --expect-lost --shots "$shots" --name "$label-lost"

step "export objects.ktr to HTML" "$K" export --format html -o "$work/objects.html" "$dir/objects.ktr"
lives=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["lives"]))' "$dir/objects.json")
run "$label objects" --report "$work/objects.html" --expect-objects "$lives" --shots "$shots" \
	--name "$label-objects"
exit $fail
