#!/usr/bin/env bash
# Time to attach and detach an f probe over a glob of about a thousand
# functions (issue 16: "f over 1,000 functions: attach no slower than
# ftrace's f over the same glob"), in ONE VM boot per kernel: ktrack's whole
# 'ktrackctl probe add -s S f:NAME GLOB' and 'probe del' commands against
# ftrace doing the same from a shell (the glob into set_ftrace_filter, then
# the function tracer on; off, then the filter cleared) and to
# 'trace-cmd start -p function -l GLOB' / 'trace-cmd reset', in rounds that
# alternate which goes first.  ktrackctl is a process: its start-up, timed
# apart ('ktrackctl version'), is in its figures; the echos are builtins.
# Every traceable function ('f *' against the function tracer) is in
# bench/probes.sh.  Numbers only.
#   bench/attach.sh [--kernel 6.1|6.12|all] [GLOB]      (default 'in*')
set -euo pipefail
shopt -s inherit_errexit # a failed command inside $(...) fails the round
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
usage() {
	echo "usage: bench/attach.sh [--kernel 6.1|6.12|all] [GLOB]   (GLOB: letters, digits, _ * ?; 'in*')" >&2
	exit 2
}
kernel=all
case ${1:-} in
--in-vm) glob=${2:-in*} ;;
--kernel)
	[ $# -ge 2 ] || usage
	kernel=$2
	glob=${3:-in*}
	;;
*) glob=${1:-in*} ;;
esac
[[ $glob =~ ^[A-Za-z_0-9*?]+$ ]] || usage
if [ "${1:-}" != --in-vm ]; then
	make -s -C "$root" modules user >/dev/null
	exec "$root/tests/vm/run" --kernel "$kernel" -- "$root/bench/attach.sh" --in-vm "$glob"
fi
ctl=$build/bin/ktrackctl
T=/sys/kernel/tracing
S=attach
rounds=${KTRACK_BENCH_ROUNDS:-3}

mountpoint -q $T || mount -t tracefs nodev $T
"$ctl" load >/dev/null
cleanup() {
	set +e
	echo nop >$T/current_tracer
	echo >$T/set_ftrace_filter
	"$ctl" session destroy $S >/dev/null 2>&1
	"$ctl" unload >/dev/null 2>&1
}
trap cleanup EXIT
"$ctl" session create $S --buffer-pages 256 --mode overwrite >/dev/null
"$ctl" session start $S >/dev/null

ms() { echo $(($(date +%s%N) / 1000000)); }
# the glob as ftrace reads it: '*' and '?' only, anchored
re="^$(sed 's/?/./g; s/\*/.*/g' <<<"$glob")\$"
n=$(awk '{ print $1 }' $T/available_filter_functions | grep -c "$re" || true)
before=$(wc -l <$T/enabled_functions)
echo "== attach an f probe over '$glob' ($n functions listed), kernel $(uname -r), $rounds rounds"

# Each prints "... on|add A ms, off|del B ms (N enabled)"; the count of
# enabled functions is taken between the two timings, outside both.
ktrack_round() {
	local t0 t1 t2 t3 on
	t0=$(ms)
	"$ctl" probe add -s $S "f:bg $glob" >/dev/null
	t1=$(ms)
	on=$(($(wc -l <$T/enabled_functions) - before))
	t2=$(ms)
	"$ctl" probe del -s $S bg >/dev/null
	t3=$(ms)
	echo "ktrack add $((t1 - t0)) ms, del $((t3 - t2)) ms ($on enabled)"
}
ftrace_round() {
	local t0 t1 t2 t3 on
	t0=$(ms)
	echo "$glob" >$T/set_ftrace_filter
	echo function >$T/current_tracer
	t1=$(ms)
	on=$(($(wc -l <$T/enabled_functions) - before))
	t2=$(ms)
	echo nop >$T/current_tracer
	echo >$T/set_ftrace_filter
	t3=$(ms)
	echo >$T/trace
	echo "ftrace on $((t1 - t0)) ms, off $((t3 - t2)) ms ($on enabled)"
}
# trace-cmd, a process as ktrackctl is: 'start -p function -l GLOB', then
# 'reset' (which also clears the filter)
tracecmd_round() {
	local t0 t1 t2 t3 on
	command -v trace-cmd >/dev/null || { echo "trace-cmd: not installed"; return; }
	t0=$(ms)
	trace-cmd start -p function -l "$glob" >/dev/null 2>&1
	t1=$(ms)
	on=$(($(wc -l <$T/enabled_functions) - before))
	t2=$(ms)
	trace-cmd reset >/dev/null 2>&1
	t3=$(ms)
	echo "trace-cmd start $((t1 - t0)) ms, reset $((t3 - t2)) ms ($on enabled)"
}
for ((r = 1; r <= rounds; r++)); do
	if ((r % 2)); then
		a=$(ktrack_round)
		b=$(ftrace_round)
		c=$(tracecmd_round)
	else
		c=$(tracecmd_round)
		b=$(ftrace_round)
		a=$(ktrack_round)
	fi
	echo "round $r: $a; $b; $c"
done
t0=$(ms)
"$ctl" version >/dev/null
t1=$(ms)
echo "# ktrackctl's start-up alone ('ktrackctl version'): $((t1 - t0)) ms"
echo "# ktrack and trace-cmd: the whole commands; ftrace: set_ftrace_filter + current_tracer from the shell"
