#!/usr/bin/env bash
# group_access - ktrack without root (issue 19, docs/ACCESS.md): loaded with
# group_access=1, /dev/ktrack is mode 0660 (the packaged udev rule gives it
# to group ktrack; here gid 4242 stands in for it), and a member of that
# group without any capability may record the sessions root shares
# ('session create NAME --group'), write markers into them and write user
# events, naming addresses from the symbols root saved in
# /run/ktrack/kallsyms; it may not reach a session root does not share, map
# or start its own, arm probes or the object tracker, nor create,
# configure, start, stop or destroy sessions; its files are capped by
# max_group_files and are not among max_sessions; its user events are
# capped per file.  Without the parameter it cannot open the device at all.
#   tests/vm/run --kernel all -- tests/kernel/run-all group_access
# Output: TAP.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
K=$root/build/user/bin/ktrackctl
S=$root/build/user/bin/user_event_sample
G=$root/build/tests/targets/group_member
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
P=/sys/module/ktrack/parameters
same() { if [ "$2" = "$3" ]; then ok "$1"; else notok "$1" "want: $2
got:  $3"; fi; }
cleanup() {
	"$K" session destroy --all >/dev/null 2>&1
	"$K" unload >/dev/null 2>&1
	rm -rf "$dir" /run/ktrack
}
trap cleanup EXIT

"$K" session destroy --all >/dev/null 2>&1
"$K" unload >/dev/null 2>&1
"$K" load --param group_access=1 >/dev/null || { echo "Bail out! cannot load ktrack with group_access=1"; exit 1; }
check "group_access=1 creates /dev/ktrack with mode 0660" test "$(stat -c %a /dev/ktrack)" = 660
# What the packaged udev rule does (GROUP="ktrack").
chgrp $gid /dev/ktrack
check "a member is not root and has no capability" member grep -q '^CapEff:[[:space:]]*0*$' /proc/self/status
check "doctor: group access on, the device not in group ktrack (here gid $gid)" \
	bash -c "'$K' doctor 2>&1 | grep -q 'group access is on (group_access=1) but /dev/ktrack is mode 660, group $gid'"

# ---- root shares a session: probe hits with a symbol, a user event ----------
out=$("$K" session create grp --group --buffer-pages 64 2>&1)
if grep -q "session 'grp' created, shared with the ktrack group" <<<"$out"; then ok "root shares a session: session create grp --group"; else
	notok "root shares a session: session create grp --group" "$out"
	echo "Bail out! session create --group"
	exit 1
fi
check "root's symbols for the group: /run/ktrack/kallsyms, mode 640, group 4242" \
	test "$(stat -c '%a %g' /run/ktrack/kallsyms 2>&1)" = "640 $gid"
"$K" probe add -s grp "p:gsync __x64_sys_sync caller=\$stack0:symbol" >/dev/null || { echo "Bail out! probe add"; exit 1; }
"$K" probe add -s grp "U:req sample/req \$id:u32 \$path:string" >/dev/null || { echo "Bail out! probe add U"; exit 1; }
"$K" session start grp >/dev/null || { echo "Bail out! session start"; exit 1; }
# and one it does not share, with a U probe on the same user event
"$K" session create priv >/dev/null && "$K" probe add -s priv "U:preq sample/req \$id:u32" >/dev/null &&
	"$K" session start priv >/dev/null || { echo "Bail out! session priv"; exit 1; }

# ---- allowed ------------------------------------------------------------------
"${member[@]}" "$K" record -s grp -o "$dir/member.ktr" 2>"$dir/rec.err" &
rec=$!
if wait_line "$dir/rec.err" '^recording to '; then
	ok "a member records the session root shares"
else
	notok "a member records the session root shares" "$(cat "$dir/rec.err")"
fi
for _ in 1 2 3; do sync; done
if out=$(member "$K" marker -s grp "from the group" 2>&1); then ok "a member writes a marker into it"; else
	notok "a member writes a marker into it" "$out"
fi
out=$(member "$S" 20 0 5000 2>&1)
if grep -q "20 requests, 20 events written" <<<"$out"; then ok "a member's program writes user events (root armed U sample/req)"; else
	notok "a member's program writes user events (root armed U sample/req)" "$out"
fi
sleep 1
kill -INT "$rec" 2>/dev/null
wait "$rec"
same "the member's record exits 0" 0 $?
# (the program's exit unregistered the event: its U probes are pending again, their counts kept)
uhits() { "$K" probe list -s "$1" | awk -v p="$2" '$2 == p' | grep -oE '(armed|pending|disarmed) +[0-9]+' | grep -oE '[0-9]+$'; }
same "the shared session's U probe counted the member's 20 user events" 20 "$(uhits grp req)"
same "a member's user events never reach a session root does not share (U probe in priv: 0 hits)" 0 "$(uhits priv preq)"
rep=$(member "$K" report "$dir/member.ktr" 2>&1)
hits=$(grep -c ': gsync: ' <<<"$rep")
if [ "$hits" -ge 3 ]; then ok "the member's file has root's probe hits ($hits sync calls)"; else
	notok "the member's file has root's probe hits ($hits)" "$rep"
fi
if grep ': gsync: ' <<<"$rep" | grep -Eq 'caller=[A-Za-z_][A-Za-z0-9_.]*\+0x'; then
	ok "the member names kernel addresses (root's symbols): $(grep -m1 -o 'caller=[^ ]*' <<<"$rep")"
else
	notok "the member names kernel addresses (root's symbols)" "$(grep -m3 ': gsync: ' <<<"$rep")"
fi
check "the member's file has its marker" grep -q 'marker: text="from the group"' <<<"$rep"
same "the member's file has its 20 user events" 20 "$(grep -c ': req: ' <<<"$rep")"
sl=$(member "$K" session list 2>&1)
check "a member lists the sessions" grep -q grp <<<"$sl"

# ---- refused, each with a sentence that says what to do -------------------------
refused() { # refused NAME REGEX CMD...: a non-zero exit and the sentence
	local name=$1 re=$2 out rc
	shift 2
	out=$(member "$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && grep -Eq -- "$re" <<<"$out"; then ok "$name"; else
		notok "$name (exit $rc)" "$out"
	fi
}
NOTSHARED="session 'priv' is not shared with the ktrack group; root shares a session with 'sudo ktrackctl session create priv --group'"
NEEDROOT='needs root \(CAP_PERFMON or CAP_SYS_ADMIN\): run it with sudo'
refused "a member cannot record a session root does not share" "$NOTSHARED" "$K" record -s priv -o "$dir/x.ktr" -d 1s
refused "a member cannot mark a session root does not share" "$NOTSHARED" "$K" marker -s priv "no"
refused "a member cannot arm a probe in root's shared session" "$NEEDROOT" "$K" probe add -s grp 'p:x vfs_read'
refused "a member cannot arm a probe of its own" "$NEEDROOT" "$K" trace -d 1s 'p:x vfs_read'
refused "a member cannot create a session" "$NEEDROOT" "$K" session create mine
refused "a member cannot stop root's shared session" "$NEEDROOT" "$K" session stop grp
refused "a member cannot destroy root's shared session" "$NEEDROOT" "$K" session destroy grp
refused "a member cannot run the object tracker" "$NEEDROOT" "$K" objtrace --from 'r:alloc_inode $retval' --functions 'iput' -- true
same "a member cannot map its own session's rings (EACCES)" ok-EACCES "ok-$(member "$G" mmap)"
same "a member cannot start its own session (EPERM)" ok-EPERM "ok-$(member "$G" start)"
same "a member cannot configure its own session (EPERM)" ok-EPERM "ok-$(member "$G" config)"
same "a member's read of a fresh file (no shared 'default') is EACCES" ok-EACCES "ok-$(member "$G" read)"
check "root's sessions are still there, armed and running" \
	bash -c "'$K' session list | grep -q 'grp .*running' && '$K' session list | grep -q 'priv .*running' && '$K' probe list -s grp | grep -q gsync"

refused "a member's output where it may not write: said of the file, not of root" \
	"cannot create /root/m.ktr: you may not write or read there" "$K" record -s grp -o /root/m.ktr -d 1s
# A shared session stays shared: members may hold it mapped (stopped first:
# SET_CONFIG is EBUSY while running).
"$K" session stop grp >/dev/null
same "root cannot take the sharing back (SET_CONFIG without GROUP: EINVAL)" ok-EINVAL "ok-$("$G" unshare grp)"

# ---- limits -----------------------------------------------------------------
# user events: at most 16 per member file
out=$(member "$G" uevents 20)
same "a member's file registers at most 16 user events, then ENOSPC" "registered 16
ENOSPC" "$out"
# files: max_group_files, and not among max_sessions
echo 3 >$P/max_group_files
"${member[@]}" "$G" hold 3 30 >"$dir/hold.out" &
holder=$!
wait_line "$dir/hold.out" '^held' || true
same "a member holds max_group_files (3) files" "held 3" "$(head -1 "$dir/hold.out")"
refused "the next member file is refused with the limit named" 'max_group_files' "$K" session list
old_max=$(cat $P/max_sessions)
nsess=$("$K" session list | grep -c 'running\|idle\|stopped')
# (root's ktrackctl needs its file's session and the new one)
echo $((nsess + 2)) >$P/max_sessions
if out=$("$K" session create extra 2>&1); then
	ok "root still creates a session: member files are not among max_sessions ($((nsess + 2)))"
else
	notok "root still creates a session: member files are not among max_sessions" "$out"
fi
echo "$old_max" >$P/max_sessions
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

# ---- off (the default): no open at all, even with the mode opened up ----------
"$K" session destroy --all >/dev/null 2>&1
"$K" unload >/dev/null
"$K" load >/dev/null || { echo "Bail out! cannot reload ktrack"; exit 1; }
check "without group_access, /dev/ktrack is 0600" test "$(stat -c %a /dev/ktrack)" = 600
check "doctor: group access off" bash -c "'$K' doctor 2>&1 | grep -q 'group access: off (root only)'"
chmod 0666 /dev/ktrack
refused "without group_access, a non-root user cannot open /dev/ktrack at all" "$NEEDROOT" "$K" session list
echo "1..$n"
exit $fail
