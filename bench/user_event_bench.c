// SPDX-License-Identifier: GPL-2.0
/*
 * user_event_bench - the cost of one event write as a program pays it,
 * timed by the program over N calls (ns per call, 2 decimals, on stdout):
 *
 *   user_event_bench N check     ktrack_user_event_enabled() only (the
 *                                disabled path: no syscall)
 *   user_event_bench N write     the enabled path: test, then one write of
 *                                the id and a 16-byte payload (u32, u64,
 *                                char[4]), whether or not it is enabled
 *   user_event_bench N marker P  one write of a 16-byte text to P
 *                                (trace_marker), ftrace's user events' peer
 *
 * The event is "bench/ev u32 a; u64 b; char[4] c".  Numbers only
 * (bench/user_events.sh makes the rows).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ktrack/ktrack_user.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

struct ev_payload {
	uint32_t a;
	uint64_t b;
	char c[4];
} __attribute__((packed));

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000, i, hits = 0;
	const char *mode = argc > 2 ? argv[2] : "check";
	char buf[4 + sizeof(struct ev_payload)];
	struct ktrack_user_event ev;
	struct ev_payload p = { 0, 0, "abc" };
	double t0, t1;

	if (!strcmp(mode, "marker")) {
		int fd = open(argc > 3 ? argv[3] : "/sys/kernel/tracing/trace_marker", O_WRONLY);

		if (fd < 0) {
			perror("open trace_marker");
			return 1;
		}
		/* (with tracing off, each write enters the kernel and fails) */
		t0 = now_ns();
		for (i = 0; i < n; i++)
			hits += write(fd, "bench 0123456789", 16) == 16;
		t1 = now_ns();
		printf("%.2f\n", (t1 - t0) / n);
		return 0;
	}
	ev = ktrack_user_event_register("bench/ev u32 a; u64 b; char[4] c");
	if (ev.error) {
		fprintf(stderr, "register: %s\n", ktrack_user_strerror(ev.error));
		return 1;
	}
	memcpy(buf, &ev.id, 4);
	if (!strcmp(mode, "check")) {
		t0 = now_ns();
		for (i = 0; i < n; i++)
			hits += ktrack_user_event_enabled(&ev);
		t1 = now_ns();
		printf("%.2f\n", (t1 - t0) / n);
		return hits < 0;
	}
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		(void)ktrack_user_event_enabled(&ev);
		p.a = i;
		memcpy(buf + 4, &p, sizeof(p));
		if (write(ev.fd, buf, sizeof(buf)) != sizeof(buf))
			return 1;
	}
	t1 = now_ns();
	printf("%.2f\n", (t1 - t0) / n);
	return hits < 0;
}
