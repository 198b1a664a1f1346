# tests/kernel/lib/probe_target.sh - the set-up of the in-VM shell tests that
# drive ktrack_test_probe_target (sourced after lib/tap.sh; kept out of
# tests/kernel/*.sh so run-all does not take it for a test):
#   pt_setup NAME   sets K (ktrackctl), TPT (the module), PROC (its command
#                   file), T (a scratch directory), loads ktrack and the
#                   module (or ends the test with one failure), and on exit
#                   unloads both and removes T.
#   same NAME EXPECTED ACTUAL   ok when equal, else both in the diagnostics.
#   fields FILE PROBE KEY...    "v1 v2 ..." per record of PROBE, in order
#                   (report --json).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
K=$root/build/user/bin/ktrackctl
TPT=$root/build/modules/$(uname -r)/tests/kmod/ktrack_test_probe_target/ktrack_test_probe_target.ko
PROC=/proc/ktrack_test_probe

pt_cleanup() {
	rmmod ktrack_test_probe_target 2>/dev/null
	"$K" unload >/dev/null 2>&1
	rm -rf "$T"
}

pt_setup() {
	T=$(mktemp -d "/tmp/$1.XXXXXX")
	trap pt_cleanup EXIT
	mountpoint -q /sys/kernel/debug || mount -t debugfs nodev /sys/kernel/debug
	mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
	if ! "$K" load >/dev/null || ! insmod "$TPT"; then
		echo "1..1"
		notok "load ktrack and the probe target"
		exit 1
	fi
}

# same NAME EXPECTED ACTUAL
same() {
	if [ "$2" = "$3" ]; then ok "$1"; else notok "$1" "$(printf 'want:\n%s\ngot:\n%s' "$2" "$3")"; fi
}
# fields FILE PROBE KEY...: "v1 v2 ..." per record of PROBE, in order
fields() {
	local f=$1 p=$2
	shift 2
	"$K" report --json "$f" | python3 -c '
import json, sys
p, keys = sys.argv[1], sys.argv[2:]
for l in sys.stdin:
    e = json.loads(l)
    if e.get("event") != p:
        continue
    f = e.get("fields", {})
    print(" ".join(str(f.get(k)) for k in keys))
' "$p" "$@"
}
