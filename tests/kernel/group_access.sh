#!/usr/bin/env bash
# group_access - ktrack without root (issue 19): the module parameter
# group_access=1 makes /dev/ktrack mode 0660 (the udev rule gives it to
# group ktrack; here a test gid stands in for it), and a member of that
# group, without CAP_PERFMON, may read a session root armed, list sessions
# and write markers, but may not arm probes or the object tracker, nor
# create, configure, start, stop or destroy sessions.  Without the
# parameter the same user cannot open the device at all, whatever its mode.
#   tests/vm/run --kernel all -- tests/kernel/run-all group_access
# Output: TAP.
root=$(cd "$(dirname "$0")/../.." && pwd)
K=$root/build/user/bin/ktrackctl
gid=4242
dir=$(mktemp -d /tmp/ktrack-group-XXXXXX)
chmod 0777 "$dir"
# shellcheck source=lib/tap.sh
. "$(dirname "$0")/lib/tap.sh"
# member CMD...: run as uid/gid 4242, no supplementary groups, no capabilities
# (an array, not a function: a background function would be a subshell that
# ignores the SIGINT meant for ktrackctl).
member=(setpriv --reuid=$gid --regid=$gid --clear-groups --inh-caps=-all --)
member() { "${member[@]}" "$@"; }
cleanup() {
	"$K" session destroy grp >/dev/null 2>&1
	"$K" unload >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
echo "1..15"

"$K" unload >/dev/null 2>&1
"$K" load --param group_access=1 >/dev/null || { echo "Bail out! cannot load ktrack with group_access=1"; exit 1; }
check "group_access=1 creates /dev/ktrack with mode 0660" test "$(stat -c %a /dev/ktrack)" = 660
# What the packaged udev rule does (GROUP="ktrack").
chgrp $gid /dev/ktrack
check "a member is not root and has no capability" member grep -q '^CapEff:[[:space:]]*0*$' /proc/self/status

# Root arms a named session: sync(2) calls are its records.
"$K" session create grp --buffer-pages 64 >/dev/null || { echo "Bail out! session create"; exit 1; }
"$K" probe add -s grp 'p:gsync __x64_sys_sync' >/dev/null || { echo "Bail out! probe add"; exit 1; }
"$K" session start grp >/dev/null || { echo "Bail out! session start"; exit 1; }

# Allowed.
"${member[@]}" "$K" record -s grp -o "$dir/member.ktr" 2>"$dir/rec.err" &
rec=$!
if wait_line "$dir/rec.err" '^recording to '; then
	ok "a member records the session root armed"
else
	notok "a member records the session root armed" "$(cat "$dir/rec.err")"
fi
for _ in 1 2 3; do sync; done
if out=$(member "$K" marker -s grp "from the group" 2>&1); then ok "a member writes a marker"; else
	notok "a member writes a marker" "$out"
fi
sleep 1
kill -INT "$rec" 2>/dev/null
wait "$rec"
rep=$("$K" report "$dir/member.ktr" 2>&1)
hits=$(grep -c ': gsync: ' <<<"$rep")
if [ "$hits" -ge 3 ]; then ok "the member's file has root's probe hits ($hits sync calls)"; else
	notok "the member's file has root's probe hits ($hits)" "$rep"
fi
check "the member's file has its marker" grep -q 'marker: text="from the group"' <<<"$rep"
sl=$(member "$K" session list 2>&1)
check "a member lists the sessions" grep -q grp <<<"$sl"

# Refused, each with a sentence that says what to do.
refused() { # refused NAME CMD...: EPERM from the kernel, said as such
	local name=$1 out rc
	shift
	out=$(member "$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && grep -q 'needs root (CAP_PERFMON or CAP_SYS_ADMIN)' <<<"$out"; then ok "$name"; else
		notok "$name (exit $rc)" "$out"
	fi
}
refused "a member cannot arm a probe in root's session" "$K" probe add -s grp 'p:x vfs_read'
refused "a member cannot arm a probe of its own" "$K" trace -d 1s 'p:x vfs_read'
refused "a member cannot create a session" "$K" session create mine
refused "a member cannot stop root's session" "$K" session stop grp
refused "a member cannot destroy root's session" "$K" session destroy grp
refused "a member cannot run the object tracker" "$K" objtrace --from 'r:alloc_inode $retval' --functions 'iput' -- true
check "root's session is still there, armed" bash -c "'$K' session list | grep -q grp && '$K' probe list -s grp | grep -q gsync"

# Off (the default): no open at all, even with the mode opened up.
"$K" session destroy grp >/dev/null 2>&1
"$K" unload >/dev/null
"$K" load >/dev/null || { echo "Bail out! cannot reload ktrack"; exit 1; }
chmod 0666 /dev/ktrack
refused "without group_access, a non-root user cannot open /dev/ktrack at all" "$K" session list
exit $fail
