#!/bin/sh
# drive.sh [N] - the driver's userspace client: N requests (default 40),
# one write() each, then wait until the driver has completed them all.
# Mostly short commands; every 8th request is a longer status report.
n=${1:-40}
dev=/dev/ktrack_demo_drv
i=1
while [ "$i" -le "$n" ]; do
	if [ $((i % 8)) -eq 0 ]; then
		msg="request $i: status report, temperatures 41 42 40 39, fans 1200 1180 rpm, all ok"
	else
		msg="request $i: ping"
	fi
	# printf writes its output with one write(): one request.
	printf '%s' "$msg" >"$dev" || exit 1
	i=$((i + 1))
done
# read() blocks until every queued request is done, then reports.
cat "$dev"
