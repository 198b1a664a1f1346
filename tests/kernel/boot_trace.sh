#!/usr/bin/env bash
# boot_trace - tracing from load: module parameters probes=, session=,
# flight= (kmod/boot_trace.c).  Runs only in a guest whose own initramfs
# loaded ktrack.ko with
#   probes="p:bootread vfs_read;f:bootf ksys_read,ksys_write%both" session=early flight=4M
# before the system started (tests/vm/run with KTRACK_VM_EARLY, a lane of
# make check; the double quotes reach the kernel, which splits at spaces
# outside them):
#   KTRACK_VM_EARLY="probes='\"p:bootread vfs_read;f:bootf ksys_read,ksys_write%both\"' session=early flight=4M" \
#     tests/vm/run --kernel all -- tests/kernel/run-all boot_trace
# Checks: the session holds records from before this test (and the shell
# that runs it) started, record -s saves them and goes on; then bad
# parameters fail the load with a sentence and leave nothing armed.
# Output: TAP.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
K=$root/build/user/bin/ktrackctl
KO=$root/build/modules/$(uname -r)/kmod/ktrack.ko
KL=/sys/kernel/debug/kprobes/list
EF=/sys/kernel/tracing/enabled_functions
T=$(mktemp -d /tmp/boot-trace.XXXXXX)
# shellcheck source=lib/tap.sh
. "$(dirname "$0")/lib/tap.sh"
trap 'rm -rf "$T"' EXIT
for f in "$KL" "$EF"; do
	[ -r "$f" ] || { echo "1..1"; notok "debugfs and tracefs are mounted ($f)"; exit 1; }
done

check "the initramfs loaded ktrack with session=early" grep -qx early /sys/module/ktrack/parameters/session
if dmesg | grep -q "ktrack: session early records from load: 2 probes, overwrite (flight recorder)"; then
	ok "the kernel log says the session records from load, as a flight recorder"
else
	notok "the kernel log says the session records from load" "$(dmesg | grep ktrack)"
fi
"$K" session list >"$T/list" 2>&1
if grep -Eq "^early +[0-9]+ +running +0 +2 " "$T/list"; then
	ok "session list: early, running, no file, 2 probes"
else
	notok "session list: early, running, no file, 2 probes" "$(cat "$T/list")"
fi
"$K" probe list -s early >"$T/probes" 2>&1
if grep -q "bootread" "$T/probes" && grep -q "bootf" "$T/probes" && ! grep -qi "pending\|disarmed" "$T/probes"; then
	ok "probe list: bootread and bootf armed"
else
	notok "probe list: bootread and bootf armed" "$(cat "$T/probes")"
fi

# record -s early: what the session held since load, then what comes after;
# a marker at this point, in the session's own clock, splits the two
"$K" marker -s early "boot_trace starts" >/dev/null
"$K" record -s early -o "$T/early.ktr" -d 3s >"$T/rec.out" 2>&1 &
rec=$!
wait_line "$T/rec.out" "^recording to" || true
cat /etc/hostname >/dev/null
wait $rec
rc=$?
"$K" report --json "$T/early.ktr" >"$T/early.json" 2>"$T/report.err"
read -r first nread nf ncat start <<<"$(python3 -c '
import json, sys
ts, n, nf, ncat, mark = [], 0, 0, 0, None
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e.get("event") == "marker" and mark is None:
        mark = e["ts"]
    if e.get("event") == "bootread":
        n += 1
        ts.append(e["ts"])
        ncat += e.get("comm") == "cat"
    elif e.get("event") == "bootf":
        nf += 1
# the first read and the marker: both in the clock of the session
print(min(ts) if ts else -1, n, nf, ncat, mark if mark is not None else -1)
' "$T/early.json" 2>&1)"
if [ $rc = 0 ] && [ "${nread:-0}" -gt 0 ] && [ "$start" -gt 0 ] && [ "$first" -ge 0 ] &&
	[ $((start - first)) -gt 1000000000 ]; then
	ok "record -s early saves vfs_read hits from over 1 s before this test's marker"

else
	notok "record -s early saves hits from before this test began (exit $rc)" \
		"first=$first start=$start n=$nread $(cat "$T/rec.out" "$T/report.err")"
fi
if [ "${ncat:-0}" -gt 0 ] && [ "${nf:-0}" -gt 0 ]; then
	ok "and goes on: cat's read during the recording, and the f probe's entries and exits"
else
	notok "and goes on: cat's read during the recording, and the f probe's records" "cat=$ncat f=$nf"
fi

# ---- bad parameters: the load fails, with a sentence, and nothing stays armed
"$K" session destroy early >/dev/null 2>&1
check "ktrack unloads once the boot session is destroyed" "$K" unload
bad() {
	local name=$1 re=$2
	shift 2
	dmesg -C
	if insmod "$KO" "$@" 2>"$T/insmod.err"; then
		notok "$name: the load fails" "loaded"
		rmmod ktrack
		return
	fi
	if dmesg | grep -Eq "ktrack: $re" && ! grep -q "ktrack\|vfs_read" "$KL" 2>/dev/null &&
		! grep -q "ksys_read" "$EF" 2>/dev/null && [ ! -e /sys/module/ktrack ]; then
		ok "$name: the load fails, the log says why, nothing armed"
	else
		notok "$name: the load fails, the log says why, nothing armed" "$(dmesg | grep ktrack; cat "$KL")"
	fi
}
# (insmod passes its words as they are: the double quotes keep a probe's
# space inside the parameter, as modprobe's own quoting would)
bad "an unknown probe kind" "probes=: 'x:bad vfs_read': not p\|r\|f" 'probes="x:bad vfs_read"'
bad "fetch arguments" "probes=: 'p:a vfs_read \\\$arg1': not p\|r\|f" 'probes="p:a vfs_read $arg1"'
bad "a missing function after a good probe" "probes=: 'p:b no_such_fn_xyz': no such function" \
	'probes="p:a vfs_read;p:b no_such_fn_xyz"'
bad "a vmlinux glob" "probes=: 'f:g vfs_\*': not p\|r\|f" 'probes="f:g vfs_*"'
bad "an f probe armed, then a missing function" "probes=: 'p:b no_such_fn_xyz': no such function" \
	'probes="f:ok ksys_read%both;p:b no_such_fn_xyz"'
bad "a flight size that is not one" "flight=lots: not a size" "session=x" "flight=lots"
bad "a session name with a slash" "session=a/b: cannot create it" "session=a/b"

# ---- the other spellings: ',' for the space (as ftrace's kprobe_event=), and
# ktrackctl load --param, which quotes a value with spaces as modprobe does
if insmod "$KO" "probes=p:comma,vfs_read" "session=comma" && "$K" probe list -s comma 2>&1 | grep -q "comma"; then
	ok "probes=p:comma,vfs_read: ',' stands for the space"
else
	notok "probes=p:comma,vfs_read: ',' stands for the space" "$(dmesg | grep ktrack | tail -3)"
fi
"$K" session destroy comma >/dev/null 2>&1
rmmod ktrack 2>/dev/null
if "$K" load --param 'probes=p:late vfs_read;f:latef ksys_write%return' --param session=late >"$T/load.out" 2>&1 &&
	"$K" session list 2>&1 | grep -Eq "^late +[0-9]+ +running +0 +2 "; then
	ok "ktrackctl load --param 'probes=p:late vfs_read;...': the session runs with both probes"
else
	notok "ktrackctl load --param 'probes=...': the session runs with both probes" "$(cat "$T/load.out"; dmesg | grep ktrack | tail -3)"
fi
"$K" session destroy late >/dev/null 2>&1
check "and unloads once that session is destroyed" "$K" unload
check "ktrack loads again without parameters" "$K" load
check "and unloads" "$K" unload
echo "1..$n"
exit $fail
