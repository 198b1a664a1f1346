#!/usr/bin/env bash
# File size of the same events recorded by ktrack and by trace-cmd, in ONE
# VM boot per kernel.  The work: 'dd bs=1' writing N bytes to /dev/null with
# vfs_write probed and two arguments fetched (the file and the count):
# 'ktrackctl record' with a p probe, 'trace-cmd record' with a kprobe event
# of the same two arguments, each running the same dd as its command.  Both
# record every CPU, so each file's events are counted by its own report and
# compared per event; then the fixed part, a capture of nothing but a few
# events (the demo's kind of file).  Numbers only.
#   bench/filesize.sh [--kernel 6.1|6.12|all] [WRITES]
set -euo pipefail
# shellcheck source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"
in_vm_or_boot "$@"
n=$calls
mountpoint -q $T || mount -t tracefs nodev $T
out=$(mktemp -d)
cleanup() {
	[ -e $T/events/kprobes/enable ] && echo 0 >$T/events/kprobes/enable
	echo >$T/kprobe_events
	"$ctl" unload >/dev/null 2>&1
	rm -rf "$out"
}
trap cleanup EXIT
"$ctl" load >/dev/null
if ! command -v trace-cmd >/dev/null; then
	echo "trace-cmd is not installed (scripts/setup.sh installs it): nothing to compare"
	exit 0
fi

# size EVENTS FILE: one row
row() {
	local size
	size=$(stat -c %s "$3")
	printf '%-34s %9d events %11d bytes %7.1f bytes/event\n' "$1" "$2" "$size" \
		"$(awk -v s="$size" -v e="$2" 'BEGIN { print e ? s / e : 0 }')"
	echo "$size $2" >"$out/$4"
}
ratio() { # ratio A B: bytes/event of A over B's
	read -r sa ea <"$out/$1"
	read -r sb eb <"$out/$2"
	awk -v sa="$sa" -v ea="$ea" -v sb="$sb" -v eb="$eb" 'BEGIN { if (ea && eb && sb) printf "%.2f", (sa / ea) / (sb / eb); else print "-" }'
}

dd_cmd=(dd if=/dev/zero of=/dev/null bs=1 count="$n")
echo "== file size, kernel $rel: vfs_write with 2 args, $n one-byte writes by dd (plus the rest of the system)"
"$ctl" record -q -o "$out/k.ktrack" 'p:bw vfs_write f=$arg1 c=$arg3' -- "${dd_cmd[@]}" 2>/dev/null
kev=$("$ctl" report "$out/k.ktrack" | grep -c ' bw: ' || true)
"$ctl" record -q --compress zstd -o "$out/kz.ktrack" 'p:bw vfs_write f=$arg1 c=$arg3' -- "${dd_cmd[@]}" 2>/dev/null
kzev=$("$ctl" report "$out/kz.ktrack" | grep -c ' bw: ' || true)
"$ctl" record -q --no-compress -o "$out/ku.ktrack" 'p:bw vfs_write f=$arg1 c=$arg3' -- "${dd_cmd[@]}" 2>/dev/null
kuev=$("$ctl" report "$out/ku.ktrack" | grep -c ' bw: ' || true)
echo 'p:kbw vfs_write f=$arg1 c=$arg3' >$T/kprobe_events
(cd "$out" && trace-cmd record -q -e kprobes/kbw -o "$out/t.dat" "${dd_cmd[@]}" >/dev/null 2>&1)
echo >$T/kprobe_events
tev=$(trace-cmd report -i "$out/t.dat" 2>/dev/null | grep -c ' kbw: ' || true)
row "ktrack record (p, 2 args)" "$kev" "$out/k.ktrack" k
row "ktrack record --compress zstd" "$kzev" "$out/kz.ktrack" kz
row "ktrack record --no-compress" "$kuev" "$out/ku.ktrack" ku
row "trace-cmd record (kprobe, 2 args)" "$tev" "$out/t.dat" t
echo "ktrack / trace-cmd, bytes per event: $(ratio k t)x (--compress zstd: $(ratio kz t)x, --no-compress: $(ratio ku t)x)"

# A small capture: 20 events.  What is left is each format's fixed part.
"$ctl" record -q -o "$out/ks.ktrack" --count 20 'p:bw vfs_write f=$arg1 c=$arg3' -- "${dd_cmd[@]:0:4}" count=20 2>/dev/null
kev=$("$ctl" report "$out/ks.ktrack" | grep -c ' bw: ' || true)
echo 'p:kbw vfs_write f=$arg1 c=$arg3' >$T/kprobe_events
(cd "$out" && trace-cmd record -q -e kprobes/kbw -o "$out/ts.dat" "${dd_cmd[@]:0:4}" count=20 >/dev/null 2>&1)
echo >$T/kprobe_events
tev=$(trace-cmd report -i "$out/ts.dat" 2>/dev/null | grep -c ' kbw: ' || true)
row "ktrack record, a small capture" "$kev" "$out/ks.ktrack" ks
row "trace-cmd record, a small capture" "$tev" "$out/ts.dat" ts
