#!/usr/bin/env bash
# The user's path, in ONE VM boot per kernel: a program's one-byte write(2)s
# to /dev/null with the kernel's own vfs_write() probed (bench/write_loop.c
# times N calls itself), the way issue 16 measured it from outside.  Beside
# bench/probes.sh (a test-module function called in a kernel loop), this adds
# what users pay on top: the syscall's entry and exit around each hit, a
# real kernel function, and a reader that writes the records to a file.
# Rows, each against ftrace doing the same work:
#   nobody reading: ktrack p (two args) into a running named session in
#     overwrite mode, against ftrace's kprobe event (the same two args) into
#     its ring buffer;
#   a reader writing a file: 'ktrackctl record -o FILE SPEC -- write_loop'
#     against 'trace-cmd record -e kprobes/EVENT -o FILE write_loop', each
#     with its default buffer; a round in which a tool kept fewer events than
#     calls is listed under the table and its row's ratio starred (a lost
#     event costs less: the figure is a floor);
#   exits: ktrack r ($retval $duration) against ftrace's kretprobe event
#     ($retval); ktrack f (two args) and f%return ($retval) against ftrace's
#     fprobe events (6.12; 6.1 has none).
# Each row is measured once per round and the rounds are interleaved (5 by
# default, each starting one row later), so a slow stretch of the emulator
# hits every row alike; a row's figure is its median.  ns/hit = the row's
# median ns per call - the no-probe median; x ftrace = ns/hit over the ns/hit
# of ftrace's row of the same kind.  Numbers only: nothing asserts on time.
# Under single-threaded TCG (KTRACK_VM_TCG_THREAD=single) the reader's work
# on the other vCPU counts in the writer's time: the reader rows then give
# recording's whole CPU cost.  KTRACK_VM_QEMU_ARGS='-icount shift=0' (6.12)
# makes every figure an instruction count, which host load cannot move.
#   bench/userpath.sh [--kernel 6.1|6.12|all] [CALLS]     (100000 calls)
#   KTRACK_BENCH_ROUNDS=N                                  (5 rounds; odd)
set -euo pipefail
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
case ${1:-} in
--in-vm) ;;
*) [[ ${!#:-} =~ ^[0-9]+$ ]] || set -- "$@" 100000 ;;
esac
in_vm_or_boot "$@"

loop=$build/bin/write_loop
rounds=${KTRACK_BENCH_ROUNDS:-5}
if ! [[ $rounds =~ ^[0-9]+$ ]] || ((rounds % 2 == 0)); then
	echo "KTRACK_BENCH_ROUNDS must be odd (a median of its rounds), not '$rounds'" >&2
	exit 2
fi
S=ubench
out=/tmp/userpath
rm -rf $out
mkdir -p $out
# shellcheck disable=SC2016 # the probes' $argN, not the shell's
args='a=$arg1 b=$arg3' # the file and the count, registers on both kernels

mountpoint -q $T || mount -t tracefs nodev $T
fprobe_events=0
grep -q 'f\[:' $T/README 2>/dev/null && fprobe_events=1
"$ctl" load >/dev/null
cleanup() {
	set +e
	for e in kprobes fprobes; do
		if [ -e $T/events/$e/enable ]; then echo 0 >$T/events/$e/enable; fi
	done
	echo >$T/dynamic_events
	"$ctl" session destroy $S >/dev/null 2>&1
	"$ctl" unload >/dev/null 2>&1
}
trap cleanup EXIT
"$ctl" session create $S --buffer-pages 256 --mode overwrite >/dev/null
"$ctl" session start $S >/dev/null

# run_loop [TRACER ARGS... --]: one timed run of the loop (under the
# tracer's command, when given), its ns per call on stdout, or "failed: ..."
# The tracer's and the loop's own output go to $out/run.log.
run_loop() {
	rm -f $out/ns
	if ! "$@" "$loop" "$calls" $out/ns >$out/run.log 2>&1 || ! [ -s $out/ns ]; then
		echo "failed: ${*:-the loop} did not run: $(tail -c 300 $out/run.log | tr '\n' ' ')"
		return
	fi
	cat $out/ns
}

# ---- the rows: "measure_KIND" prints ns per call (one run) ----------------
m_base() { run_loop; }

# ktrack_nobody SPEC: the probe in the named session, nobody reading
ktrack_nobody() {
	local v hits
	"$ctl" probe add -s $S "$1" >/dev/null
	v=$(run_loop)
	hits=$("$ctl" probe list -s $S | awk 'NR == 2 {
		for (i = 4; i <= NF; i++) if ($i ~ /^(armed|pending|disarmed)$/) break
		print $(i + 1) }')
	"$ctl" probe del -s $S --all >/dev/null
	# the probe must have fired at each call, or the figure is wrong
	if [ "${hits:-0}" -lt "$calls" ]; then v="failed: $hits hits for $calls calls"; fi
	echo "$v"
}

# ftrace_event DEFINITION: defines the dynamic event, or says why not
ftrace_event() {
	if [ -n "$(cat $T/dynamic_events)" ]; then
		echo "failed: dynamic_events not empty: $(cat $T/dynamic_events)"
	elif ! echo "$1" >>$T/dynamic_events; then
		echo "failed: dynamic_events refused '$1'"
	fi
}

# ftrace_nobody GROUP/EVENT DEFINITION: the event (only it) enabled, nobody reading
ftrace_nobody() {
	local v n
	v=$(ftrace_event "$2")
	[ -z "$v" ] || { echo "$v"; return; }
	echo >$T/trace
	echo 1 >$T/events/"$1"/enable
	echo 1 >$T/tracing_on
	v=$(run_loop)
	echo 0 >$T/events/"$1"/enable
	# every event is in the buffer or was overwritten
	n=$(cat $T/per_cpu/cpu*/stats | awk '/^(entries|overrun):/ { n += $2 } END { print n + 0 }')
	echo >$T/dynamic_events
	echo >$T/trace
	if [ "$n" -lt "$calls" ]; then v="failed: $n events for $calls calls"; fi
	echo "$v"
}

m_kt_p() { ktrack_nobody "p:up vfs_write $args"; }
m_ft_p() { ftrace_nobody kprobes/kt_up "p:kt_up vfs_write $args"; }
m_kt_r() { ktrack_nobody 'r:ur vfs_write ret=$retval lat=$duration'; }
m_ft_r() { ftrace_nobody kprobes/kt_ur 'r:kt_ur vfs_write ret=$retval'; }
m_kt_f() { ktrack_nobody "f:uf vfs_write $args"; }
m_ft_f() { ftrace_nobody fprobes/kt_uf "f:kt_uf vfs_write $args"; }
m_kt_fr() { ktrack_nobody 'f:ufr vfs_write%return ret=$retval'; }
m_ft_fr() { ftrace_nobody fprobes/kt_ufr 'f:kt_ufr vfs_write%return ret=$retval'; }

# With a reader writing a file (tmpfs, as the loop's output), each tool
# with its defaults (ktrack compresses its chunks with LZ4, trace-cmd writes
# pages as they are).  A round in which a tool kept fewer events than calls
# or lost any is noted in $out/loss.KIND and its row's ratio starred: a lost
# event costs less than a kept one, so that row's figure is a floor.
m_kt_rec() {
	local v n lost
	rm -f $out/k.ktrack
	v=$(run_loop "$ctl" record -o $out/k.ktrack "p:up vfs_write $args" --)
	cp $out/run.log $out/k.log
	# "recorded N events (...), M lost, in ..."
	read -r n lost < <(sed -nE 's/^recorded ([0-9]+) events .*, ([0-9]+) lost, in .*/\1 \2/p' $out/k.log)
	if [[ $v != failed* ]] && { [ "${n:-0}" -lt "$calls" ] || [ "${lost:-1}" != 0 ]; }; then
		echo "kept ${n:-?}, lost ${lost:-?}" >>$out/loss.kt_rec
	fi
	echo "$v"
}
m_ft_rec() {
	local v n lost
	v=$(ftrace_event "p:kt_up vfs_write $args")
	[ -z "$v" ] || { echo "$v"; return; }
	rm -f $out/t.dat
	v=$(cd $out && run_loop trace-cmd record -e kprobes/kt_up -o $out/t.dat)
	cp $out/run.log $out/t.log
	echo >$T/dynamic_events
	# its closing statistics, per CPU: "overrun: N", "dropped events: N", "read events: N"
	n=$(awk '/^read events:/ { n += $3 } END { print n + 0 }' $out/t.log)
	lost=$(awk '/^overrun:|^dropped events:/ { n += $NF } END { print n + 0 }' $out/t.log)
	if ! grep -q '^read events:' $out/t.log; then
		n=$(trace-cmd report -i $out/t.dat 2>/dev/null | grep -c 'kt_up:' || true)
	fi
	echo "$n" >$out/t.count
	if [[ $v != failed* ]] && { [ "$n" -lt "$calls" ] || [ "$lost" != 0 ]; }; then
		echo "kept $n, lost $lost" >>$out/loss.ft_rec
	fi
	echo "$v"
}

names=(base kt_p ft_p kt_rec ft_rec kt_r ft_r kt_f kt_fr)
((fprobe_events)) && names+=(ft_f ft_fr)
command -v trace-cmd >/dev/null || names=("${names[@]/ft_rec/}")
declare -A title=(
	[base]="no probe"
	[kt_p]="ktrack p (a b), nobody reading"
	[ft_p]="ftrace kprobe event (a b), nobody reading"
	[kt_rec]="ktrack p (a b), record to a file"
	[ft_rec]="ftrace kprobe event (a b), trace-cmd record"
	[kt_r]="ktrack r (\$retval \$duration)"
	[ft_r]="ftrace kretprobe event (\$retval)"
	[kt_f]="ktrack f (a b)"
	[ft_f]="ftrace fprobe event (a b)"
	[kt_fr]="ktrack f%return (\$retval)"
	[ft_fr]="ftrace fprobe event %return (\$retval)"
)
# the ftrace row each ktrack row is divided by
declare -A peer=([kt_p]=ft_p [kt_rec]=ft_rec [kt_r]=ft_r [kt_f]=ft_f [kt_fr]=ft_fr)
declare -A vals

echo "== the user's path: $calls one-byte write(2)s to /dev/null, vfs_write probed, kernel $rel," \
	"$(nproc) CPUs, median of $rounds interleaved rounds"
run_loop >/dev/null # warm up
for ((r = 0; r < rounds; r++)); do
	n=${#names[@]}
	for ((i = 0; i < n; i++)); do
		k=${names[$(((i + r) % n))]}
		[ -n "$k" ] || continue
		v=$("m_$k")
		vals[$k]="${vals[$k]:-} $v"
	done
done

median() { tr ' ' '\n' | awk 'NF' | sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'; }
declare -A med
for k in "${names[@]}"; do
	[ -n "$k" ] || continue
	case ${vals[$k]} in
	*failed*) med[$k]=failed ;;
	*) med[$k]=$(median <<<"${vals[$k]}") ;;
	esac
done
base=${med[base]}
hit() { awk -v a="${med[$1]:-}" -v b="$base" 'BEGIN { printf "%.0f", a - b }'; }
printf '%-46s %10s %8s %8s\n' "row" "ns/call" "ns/hit" "x ftrace"
for k in base kt_p ft_p kt_rec ft_rec kt_r ft_r kt_f ft_f kt_fr ft_fr; do
	if [ -z "${med[$k]:-}" ]; then
		case $k in
		ft_f | ft_fr) printf '%-46s %s\n' "${title[$k]}" "unavailable: this kernel has no fprobe events" ;;
		ft_rec) printf '%-46s %s\n' "${title[$k]}" "unavailable: trace-cmd is not installed" ;;
		esac
		continue
	fi
	if [ "${med[$k]}" = failed ]; then
		printf '%-46s %s\n' "${title[$k]}" "$(tr ' ' '\n' <<<"${vals[$k]}" | grep -m1 failed) ${vals[$k]}"
		continue
	fi
	h=- x=-
	[ "$k" = base ] || h=$(hit "$k")
	p=${peer[$k]:-}
	if [ -n "$p" ] && [ -n "${med[$p]:-}" ] && [ "${med[$p]}" != failed ]; then
		x=$(awk -v a="$h" -v b="$(hit "$p")" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
	fi
	lossy=
	if [ -s $out/loss.$k ]; then
		x="$x*"
		lossy="# * $k lost events in $(wc -l <$out/loss.$k) of $rounds rounds (of $calls calls): $(paste -sd';' $out/loss.$k)"
	fi
	printf '%-46s %10s %8s %8s\n' "${title[$k]}" "${med[$k]}" "$h" "$x"
	echo "# $k rounds:${vals[$k]}"
	if [ -n "$lossy" ]; then echo "$lossy"; fi
done
# what each reader kept in the last round (each tool counts its own; every
# round was checked for no loss)
if [ -s $out/k.log ]; then
	echo "# ktrack record, last round: $(grep -m1 '^recorded' $out/k.log)"
fi
if [ -s $out/t.log ]; then
	echo "# trace-cmd record, last round: $(cat $out/t.count) events in $(du -k $out/t.dat | cut -f1) KiB," \
		"$(awk '/^overrun:|^dropped events:/ { n += $NF } END { print n + 0 }' $out/t.log) lost"
fi
echo "# *: a tool lost events in some round, so its figure is a floor (a lost event costs less)"
echo "# x ftrace: ns/hit over ftrace's ns/hit of the row below it (p: kprobe event with the same two"
echo "#   args; record: trace-cmd record of that event; r: the kretprobe event with \$retval, as issue 16"
echo "#   sets it, while ktrack's r also times \$duration; f, f%return: fprobe events, 6.12 only)"
