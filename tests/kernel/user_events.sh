#!/usr/bin/env bash
# user_events - typed user events (include/ktrack/ktrack_user.h) end to end
# in the test VM, with build/user/bin/user_event_sample, which registers
# "sample/req u32 id; char[] path" and writes (id = i, path =
# "/srv/file-i") for i = 0..N-1 while the event is enabled: exact records
# and fields for a probe added before the program registers (typed fields,
# PENDING, then armed) and after (every field by default), filters, hist,
# nothing written while no session wants the event, the status byte, and
# U specs refused with a sentence.
#
#   tests/vm/run --kernel all -- tests/kernel/run-all 'user_events'
#
# Output: TAP.  Leaves the guest as it found it.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/tap.sh
. "$here/lib/tap.sh"
# shellcheck source=lib/probe_target.sh
. "$here/lib/probe_target.sh"
pt_setup user-events
S=$root/build/user/bin/user_event_sample

# ---- a probe before the program: typed fields, armed at registration -------
"$K" record -o "$T/a.ktr" "U:req sample/req \$id:u32 \$path:string" -- "$S" 200 0 5000 >"$T/a.out" 2>&1
same "record 'U sample/req \$id:u32 \$path:string' -- sample 200: exit 0" 0 $?
same "200 records, id = 0..199 in order, path = /srv/file-ID" \
	"$(seq 0 199 | awk '{print $1, "/srv/file-" $1}')" "$(fields "$T/a.ktr" req id path)"
if grep -q "200 requests, 200 events written" "$T/a.out"; then ok "the program saw the event enabled"; else
	notok "the program saw the event enabled" "$(cat "$T/a.out")"
fi

# ---- with the program registered first: every field by default -------------
# (writes between the probe's arming and the session's start are counted
# idle, not recorded: the records are the calls from some early one on)
"$S" 100 20 20000 >"$T/b.prog" 2>&1 &
prog=$!
wait_line "$T/b.prog" "registered sample/req"
"$K" record -o "$T/b.ktr" "U sample/req" -d 6s >"$T/b.out" 2>&1
same "record 'U sample/req' (registered): exit 0" 0 $?
wait $prog
same "the program exits 0" 0 $?
got=$(fields "$T/b.ktr" req id path)
first=$(head -1 <<<"$got" | cut -d' ' -f1)
if [ -n "$first" ] && [ "$got" = "$(seq "$first" 99 | awk '{print $1, "/srv/file-" $1}')" ]; then
	ok "both fields by default: ids $first..99 in order, each with its path"
else
	notok "both fields by default: ids K..99 in order, each with its path" "$got $(cat "$T/b.out")"
fi
# every write is accounted for: hits = 100, the ones before START idle
if grep -q "probe req: 100 hits, ${first:-x} while not recording" "$T/b.out" ||
	{ [ "${first:-x}" = 0 ] && grep -q "probe req: 100 hits" "$T/b.out"; }; then
	ok "100 hits: $first before the session started (idle), the rest recorded"
else
	notok "100 hits: the ones before the session started idle, the rest recorded" "$(cat "$T/b.out")"
fi

# ---- a filter on a field ---------------------------------------------------
"$K" record -o "$T/c.ktr" "U:late sample/req \$id:u32 if id >= 90" -- "$S" 100 0 5000 >"$T/c.out" 2>&1
same "filter id >= 90: ids 90..99" "$(seq 90 99)" "$(fields "$T/c.ktr" late id)"

# ---- hist over a user event's field ----------------------------------------
"$K" hist "$T/a.ktr" -e 'sample/req' -f id -k none --json >"$T/h.json" 2>"$T/h.err"
same "hist -e sample/req -f id: 200 values, max 199" "200 199" "$(python3 -c '
import json, sys
for l in open(sys.argv[1]):
    g = json.loads(l)
    if "count" in g:
        print(g["count"], g["max"])
' "$T/h.json" | head -1)"

# ---- nothing is written while no session wants the event -------------------
"$S" 20 0 0 >"$T/d.out" 2>&1
if grep -q "20 requests, 0 events written" "$T/d.out"; then ok "no session: the program writes nothing"; else
	notok "no session: the program writes nothing" "$(cat "$T/d.out")"
fi

# ---- specs refused with a sentence -----------------------------------------
"$K" record -o "$T/e.ktr" "U nosuch/event" -- true >"$T/e.out" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "not registered" "$T/e.out"; then ok "an unregistered event without typed fields: exit 2 with a sentence"; else
	notok "an unregistered event without typed fields: exit 2 with a sentence" "rc=$rc $(cat "$T/e.out")"
fi
"$K" record -o "$T/f.ktr" "U bad/na-me" -- true >"$T/f.out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "SYSTEM/" "$T/f.out"; then ok "a bad event name: exit 1 with a sentence"; else
	notok "a bad event name: exit 1 with a sentence" "rc=$rc $(cat "$T/f.out")"
fi
"$K" record -o "$T/g.ktr" "U sample/req \$id" -- true >"$T/g.out" 2>&1
rc=$?
if [ $rc = 2 ] && grep -q "give it one" "$T/g.out"; then ok "an untyped field of an unregistered event: exit 2 with a sentence"; else
	notok "an untyped field of an unregistered event: exit 2 with a sentence" "rc=$rc $(cat "$T/g.out")"
fi
echo "1..$n"
