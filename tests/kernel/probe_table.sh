#!/usr/bin/env bash
# probe_table - the differential table tests/probe_table/ftrace_probe_defs.tsv
# (issue 12): every row's ktrack spec goes through one
# 'ktrackctl probe compile --batch' (one kallsyms and BTF load) and its
# verdict ('ok' or the caret's offset) must be the table's; on 6.12 every
# row's ftrace definition is also written to /sys/kernel/tracing/dynamic_events
# and ftrace's verdict (the caret from error_log) must be the table's ftrace
# column, so the table cannot drift from the real ftrace.  On other kernels
# the ftrace column is not run (and not reported).
#
#   tests/vm/run --kernel all -- tests/kernel/run-all 'probe_table'
#
# Output: TAP, one line per row and check.  Leaves the guest as it found it
# (no dynamic event stays).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib/tap.sh"
K=$root/build/user/bin/ktrackctl
TABLE=$root/tests/probe_table/ftrace_probe_defs.tsv
TR=/sys/kernel/tracing
T=$(mktemp -d /tmp/probe-table.XXXXXX)
rel=$(uname -r)

cleanup() {
	[ -w "$TR/dynamic_events" ] && echo >"$TR/dynamic_events" 2>/dev/null
	[ -w "$TR/error_log" ] && echo >"$TR/error_log" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
mountpoint -q $TR || mount -t tracefs nodev $TR

# The rows: ftrace, fverdict, ktrack, kverdict, needs, why.
defs=() fverd=() specs=() kverd=()
while IFS=$'\t' read -r f fv k kv needs why; do
	case $f in '#'* | '') continue ;; esac
	defs+=("$f") fverd+=("$fv") specs+=("$k") kverd+=("$kv")
done <"$TABLE"
if ((${#defs[@]} < 150)); then
	notok "the table has at least 150 rows (${#defs[@]})"
	echo "1..$n"
	exit 1
fi

# --- ktrack: one batch over every row with a ktrack spec ---------------------
: >"$T/specs"
rows=()
for i in "${!specs[@]}"; do
	[ "${specs[$i]}" = - ] && continue
	printf '%s\n' "${specs[$i]}" >>"$T/specs"
	rows+=("$i")
done
if ! "$K" probe compile --batch "$T/specs" >"$T/verdicts" 2>"$T/batch.err"; then
	notok "ktrackctl probe compile --batch runs" "$(cat "$T/batch.err")"
fi
mapfile -t got <"$T/verdicts"
if ((${#got[@]} != ${#rows[@]})); then
	notok "one verdict per spec (${#got[@]} verdicts for ${#rows[@]} specs)" "$(head -5 "$T/batch.err")"
fi
for j in "${!rows[@]}"; do
	i=${rows[$j]}
	line=${got[$j]:-}
	case $line in
	ok\ *) v=ok ;;
	error\ *) v=error@$(cut -d' ' -f2 <<<"$line") ;;
	*) v="?" ;;
	esac
	if [ "$v" = "${kverd[$i]}" ]; then
		ok "ktrack: ${specs[$i]} -> $v"
	else
		notok "ktrack: ${specs[$i]} -> ${kverd[$i]} (got $v)" "$line"
	fi
done

# --- ftrace (6.12 only): the table's ftrace column is the real ftrace's -------
# Under KASAN (the debug kernel) kernel stacks are twice Debian's 16 KiB, and
# ftrace's $stackN limit (THREAD_SIZE / 8) with them: those rows say Debian's.
kasan=
grep -qm1 ' __asan_load8$' /proc/kallsyms && kasan=1
# 6.12's own parser leaks its argument array on '$arg0' (trace_probe.c,
# traceprobe_expand_meta_args(): "return ERR_PTR(-EINVAL)" without the
# kfree(new_argv) of its other error paths): 8 bytes a write, which
# kmemleak reports at the end of the debug lane.  There, that row's ftrace
# half is not run; ktrack's verdict for it is checked above all the same.
kmemleak=
[ -e /sys/kernel/debug/kmemleak ] && kmemleak=1
case $rel in
6.12.*)
	if [ ! -w "$TR/dynamic_events" ] || [ ! -w "$TR/error_log" ]; then
		notok "6.12 has $TR/dynamic_events and error_log"
	else
		for i in "${!defs[@]}"; do
			d=${defs[$i]}
			[ "$d" = - ] && continue
			if [ -n "$kasan" ] && [[ $d =~ \$stack2[0-9]{3} ]]; then
				skip "ftrace: $d -> ${fverd[$i]}" "KASAN doubles the kernel stack, and ftrace's \$stackN limit"
				continue
			fi
			if [ -n "$kmemleak" ] && [[ $d =~ \$arg0([^0-9]|$) ]]; then
				skip "ftrace: $d -> ${fverd[$i]}" "6.12's kprobe_events parser leaks 8 bytes on \$arg0, which kmemleak reports"
				continue
			fi
			echo >"$TR/error_log"
			# '>' truncates: the events of the previous row go first
			if printf '%s' "$d" 2>/dev/null >"$TR/dynamic_events"; then
				v=ok
			else
				# "  Command: DEF" then the caret line: 11 + POS spaces and '^'
				caret=$(tail -n 1 "$TR/error_log")
				if [[ $caret == *^ ]]; then v=error@$((${#caret} - 12)); else v="error@?"; fi
			fi
			if [ "$v" = "${fverd[$i]}" ]; then
				ok "ftrace: $d -> $v"
			else
				notok "ftrace: $d -> ${fverd[$i]} (got $v)" "$(cat "$TR/error_log")"
			fi
		done
		echo >"$TR/dynamic_events"
	fi
	;;
esac

echo "1..$n"
exit $fail
