#!/usr/bin/env bash
# stacktrace_cli - 'ktrackctl stacktrace', end to end in the test VM: the
# deepest stack of ktrack_test_probe_target's "deep N" path (JSON and the
# text table), every function hooked (no --filter), one tracer at a time,
# and bad input refused with nothing hooked.
#
#   tests/vm/run --kernel all -- tests/kernel/run-all 'stacktrace_cli'
#
# Output: TAP.  Leaves the guest as it found it.
set -u
# shellcheck source=lib/tap.sh
. "$(dirname "$0")/lib/tap.sh"
# shellcheck source=lib/probe_target.sh
. "$(dirname "$0")/lib/probe_target.sh"
EF=/sys/kernel/tracing/enabled_functions
pt_setup stacktrace-cli

# summary FILE: "func max nframes ndeep minsize sumsize depth0" of a JSON result
summary() {
	python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
fr = m["frames"]
deep = [f for f in fr if f["function"] == "ktrack_deep_frame"]
print(m["function"], m["max_bytes"], len(fr), len(deep),
      min([f["size"] for f in deep[1:]] or [0]), sum(f["size"] for f in fr),
      fr[0]["depth"] if fr else 0, fr[0]["function"] if fr else "-")
' "$1"
}

# ---- a known deep path, --filter, -- COMMAND --------------------------------------
if "$K" stacktrace --filter 'ktrack_deep_*' --json -- sh -c "echo 'deep 10' > $PROC" >"$T/a.json" 2>"$T/a.err"; then
	ok "stacktrace --filter -- COMMAND ends with the command"
else
	notok "stacktrace --filter -- COMMAND ends with the command" "$(cat "$T/a.err")"
fi
read -r fn max nfr ndeep minsz sum d0 f0 <<<"$(summary "$T/a.json" 2>&1)"
if [ "$fn" = ktrack_deep_leaf ] && [ "$f0" = ktrack_deep_leaf ] && [ "$ndeep" = 10 ] && [ "$max" -ge 5120 ]; then
	ok "the maximum is at ktrack_deep_leaf under exactly 10 ktrack_deep_frame frames, >= 5120 bytes"
else
	notok "the maximum is at ktrack_deep_leaf under 10 ktrack_deep_frame frames" "$(cat "$T/a.json")"
fi
if [ "${minsz:-0}" -ge 512 ] && [ "$sum" = "$d0" ]; then
	ok "each ktrack_deep_frame caller frame holds >= 512 bytes; frame sizes add up to the depth"
else
	notok "frame sizes: >= 512 each, adding up to the depth" "min=$minsz sum=$sum depth0=$d0"
fi
check "nothing left hooked after the run" bash -c "! grep -q 'ktrack_deep\|kt_stack_call' $EF"

# ---- the text table ---------------------------------------------------------------------
"$K" stacktrace --filter 'ktrack_deep_*' -- sh -c "echo 'deep 6' > $PROC" >"$T/t.txt" 2>"$T/t.err"
if grep -Eq "^deepest kernel stack: [0-9]+ bytes, at the entry of ktrack_deep_leaf, in sh-[0-9]+" "$T/t.txt" &&
	grep -Eq "^ +Depth +Size +Location" "$T/t.txt" &&
	[ "$(grep -Ec '^ +[0-9]+\) +[0-9]+ +[0-9]+ +ktrack_deep_frame\+0x[0-9a-f]+/0x[0-9a-f]+ \[ktrack_test_probe_target\]' "$T/t.txt")" = 6 ]; then
	ok "text: the summary line and 6 ktrack_deep_frame rows with depth, size and location"
else
	notok "text: the summary line and 6 ktrack_deep_frame rows" "$(cat "$T/t.txt" "$T/t.err")"
fi

# ---- every function hooked ----------------------------------------------------------------
start=$(date +%s)
if "$K" stacktrace --json -- sh -c "echo 'deep 10' > $PROC" >"$T/all.json" 2>"$T/all.err"; then
	read -r _ amax anfr _ <<<"$(summary "$T/all.json")"
	if [ "$amax" -ge 5120 ] && [ "$anfr" -ge 3 ]; then
		ok "every function hooked: a maximum of at least the deep path ($amax bytes, $(($(date +%s) - start)) s)"
	else
		notok "every function hooked: a maximum of at least the deep path" "$(cat "$T/all.json")"
	fi
else
	notok "stacktrace with every function hooked runs" "$(cat "$T/all.err")"
fi
check "nothing left hooked after hooking every function" bash -c "! grep -q 'kt_stack_call' $EF"

# ---- two globs -----------------------------------------------------------------------------
"$K" stacktrace --filter 'ktrack_deep_frame' --filter 'ktrack_deep_leaf' --json -- \
	sh -c "echo 'deep 3' > $PROC" >"$T/two.json" 2>"$T/two.err"
read -r tfn _ _ tdeep _ <<<"$(summary "$T/two.json" 2>&1)"
if [ "$tfn" = ktrack_deep_leaf ] && [ "$tdeep" = 3 ]; then
	ok "two --filter globs: both hooked (the maximum at the leaf under 3 frames)"
else
	notok "two --filter globs: both hooked" "$(cat "$T/two.json" "$T/two.err")"
fi
expect_fail "a '!' glob is refused (it could leave every function hooked)" 2 "matches no function|refus" \
	"$K" stacktrace --filter '!ktrack_deep_leaf' -d 1s

# ---- one at a time ---------------------------------------------------------------------------
"$K" stacktrace --filter ktrack_deep_leaf -d 20s >"$T/b1.txt" 2>"$T/b1.err" &
first=$!
wait_line "$T/b1.err" "^measuring kernel stacks"
check "while it runs, ftrace lists the hooked function" grep -q "ktrack_deep_leaf" $EF
expect_fail "a second stacktrace while one runs: a sentence, exit 2" 2 "already running" \
	"$K" stacktrace --filter ktrack_deep_leaf -d 1s
kill -INT $first
wait $first
check "Ctrl-C ends the first one cleanly" test $? = 0

# ---- bad input --------------------------------------------------------------------------------
expect_fail "--filter matching nothing: a sentence, exit 2" 2 "matches no function" \
	"$K" stacktrace --filter ktrack_no_such_fn_xyz -d 1s
expect_fail "--filter '' is a usage error" 1 "one glob" "$K" stacktrace --filter '' -d 1s
expect_fail "--filter with a space is a usage error" 1 "one glob" "$K" stacktrace --filter 'a b' -d 1s
expect_fail "--filter over 255 bytes is a usage error" 1 "bytes" \
	"$K" stacktrace --filter "$(printf 'x%.0s' $(seq 300))" -d 1s
expect_fail "-d that is not a duration is a usage error" 1 "duration" "$K" stacktrace -d soon
check "nothing hooked after the refusals" bash -c "! grep -q 'ktrack_deep\|kt_stack_call' $EF"

rmmod ktrack_test_probe_target
check "ktrack unloads after the stack tracer" "$K" unload
echo "1..$n"
exit $fail
