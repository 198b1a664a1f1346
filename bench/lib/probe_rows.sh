# bench/lib/probe_rows.sh - the rows of the probe benchmarks (sourced by
# bench/probes.sh, bench/events.sh and bench/uprobes.sh - which brings its
# own measure - after lib/common.sh): each row is one
# way of probing the test module's target, measured by "$bench_cmd N" on
# /proc/ktrack_test_probe, which stores the mean ns per call in
# parameters/bench_ps.  Sets P; uses calls, ctl, S (the session) and base.
# bpftrace_probe adds a bpftrace row; print_rows prints the table.
P=/sys/module/ktrack_test_probe_target/parameters
rows=()
declare -A hit mech

# Best (lowest) of 5 runs, ns per call with 2 decimals.
measure() {
	local best= ps i
	for i in 1 2 3 4 5; do
		echo "$bench_cmd $calls" >/proc/ktrack_test_probe
		ps=$(cat $P/bench_ps)
		if [ -z "$best" ] || [ "$ps" -lt "$best" ]; then best=$ps; fi
	done
	awk -v p="$best" 'BEGIN { printf "%.2f", p / 1000 }'
}

# row NAME KIND NS_PER_CALL|"unavailable: why"
row() {
	rows+=("$1|$2|$3")
	case $3 in
	unavailable*) ;;
	*) hit[$1]=$(awk -v a="$3" -v b="$base" 'BEGIN { printf "%.2f", a - b }') ;;
	esac
}

ktrack_probe() { # ktrack_probe NAME KIND SPEC
	local out
	out=$("$ctl" probe add -s $S "$3")
	row "$1" "$2" "$(measure)"
	# The probe must really have fired once per call, or the figure is wrong.
	out=$("$ctl" probe list -s $S)
	# Columns: ID NAME K MECHANISM (one or more words) STATE HITS ...
	awk -v want="$((calls * 5))" 'NR > 1 {
		for (i = 4; i <= NF; i++) if ($i ~ /^(armed|pending|disarmed)$/) break
		if ($(i + 1) < want) bad = 1
	} END { exit bad }' <<<"$out" ||
		rows[-1]="${rows[-1]%|*}|unavailable: fewer hits than calls: $out"
	mech[$1]=$(awk 'NR == 2 { m = $4
		for (i = 5; i <= NF && $i !~ /^(armed|pending|disarmed)$/; i++) m = m " " $i
		print m }' <<<"$out")
	"$ctl" probe del -s $S --all >/dev/null
}


# bpftrace_probe NAME KIND PROGRAM: a row for a bpftrace program running
# in the background (its pid in bpf_pid, for the caller's cleanup), which
# must count every call in @n (checked from the maps it prints on exit).
bpftrace_probe() {
	local log i why
	if ! command -v bpftrace >/dev/null; then
		row "$1" "$2" "unavailable: bpftrace is not installed (scripts/setup.sh installs it)"
		return
	fi
	log=$(mktemp)
	bpftrace -e "$3" >"$log" 2>&1 &
	bpf_pid=$!
	for ((i = 0; i < 600; i++)); do
		grep -q '^Attaching' "$log" && break
		kill -0 $bpf_pid 2>/dev/null || break
		sleep 0.1
	done
	# "Attaching N probes..." is printed just before attaching: give it a moment.
	sleep 1
	if ! kill -0 $bpf_pid 2>/dev/null; then
		wait $bpf_pid 2>/dev/null || true
		bpf_pid=
		why=$(grep -v '^Attaching' "$log" | head -2 | tr '\n' ' ')
		row "$1" "$2" "unavailable: ${why:-bpftrace exited without output}"
		rm -f "$log"
		return
	fi
	row "$1" "$2" "$(measure)"
	kill -INT $bpf_pid
	wait $bpf_pid 2>/dev/null || true
	bpf_pid=
	# The maps it prints on exit prove it counted the calls.
	grep -q "^@n: $((calls * 5))\$" "$log" ||
		rows[-1]="${rows[-1]%|*}|unavailable: bpftrace did not count every call: $(tr '\n' ' ' <"$log" | head -c 200)"
	rm -f "$log"
}

# print_rows UNIT RATIO REF_FN: the table, no-probe row first; "REF_FN NAME
# KIND" prints the ns/hit the row's ratio divides by ("" for no ratio).
print_rows() {
	local r name rest kind val ref ratio
	printf '%-40s %12s %10s %12s\n' "mechanism" "$1" "ns/hit" "$2"
	printf '%-40s %12s %10s %12s\n' "no probe" "$base" "-" "-"
	for r in "${rows[@]}"; do
		name=${r%%|*}
		rest=${r#*|}
		kind=${rest%%|*}
		val=${rest#*|}
		case $val in
		unavailable*)
			printf '%-40s %s\n' "$name" "$val"
			continue
			;;
		esac
		ref=$("$3" "$name" "$kind")
		ratio=$(awk -v h="${hit[$name]}" -v r="$ref" 'BEGIN { if (r > 0) printf "%.2f", h / r; else print "-" }')
		printf '%-40s %12s %10s %12s\n' "$name" "$val" "${hit[$name]}" "$ratio"
	done
}
