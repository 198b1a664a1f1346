// SPDX-License-Identifier: GPL-2.0
/*
 * latency_target - helpers of the latency tracers' tests (latency_timer.sh,
 * latency_noise.sh).  Built by 'make kernel-tests' into build/tests/targets/.
 *
 *   latency_target req KIND PERIOD_NS RUNTIME_NS TOLERANCE_NS CPUS0 RESERVED0 [HOLD_S]
 *	KTRACK_IOC_LATENCY_START on a fresh /dev/ktrack fd with these fields
 *	(CPUS0: cpus[0] in hex); prints "ok" or "errno NAME".  With HOLD_S
 *	and success, prints "started", keeps the fd (the tracer) open HOLD_S
 *	seconds, then closes it: the tracer stops with it.
 *   latency_target spin CPU MS
 *	Pins itself to CPU as SCHED_FIFO 50 and busy-loops MS ms: a
 *	high-priority thread that takes the CPU.  Prints "spun_us N".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "../../../include/uapi/ktrack.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int req(int argc, char **argv)
{
	struct ktrack_latency_req r;
	int fd;

	if (argc < 8)
		return 2;
	memset(&r, 0, sizeof(r));
	r.size = sizeof(r);
	r.kind = (uint32_t)strtoul(argv[2], NULL, 0);
	r.period_ns = strtoull(argv[3], NULL, 0);
	r.runtime_ns = strtoull(argv[4], NULL, 0);
	r.tolerance_ns = strtoull(argv[5], NULL, 0);
	r.cpus[0] = strtoull(argv[6], NULL, 16);
	r.reserved[0] = strtoull(argv[7], NULL, 0);
	fd = open("/dev/ktrack", O_RDWR);
	if (fd < 0) {
		printf("open /dev/ktrack: %s\n", strerror(errno));
		return 1;
	}
	if (ioctl(fd, KTRACK_IOC_LATENCY_START, &r) != 0) {
		printf("errno %s\n", strerrorname_np(errno));
		return 0;
	}
	if (argc < 9) {
		printf("ok\n");
		return 0;
	}
	printf("started\n");
	fflush(stdout);
	sleep((unsigned int)atoi(argv[8]));
	close(fd);
	return 0;
}

static int spin(int argc, char **argv)
{
	struct sched_param sp = { .sched_priority = 50 };
	uint64_t t0, ms;
	cpu_set_t set;

	if (argc < 4)
		return 2;
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[2]), &set);
	ms = strtoull(argv[3], NULL, 0);
	if (sched_setaffinity(0, sizeof(set), &set) || sched_setscheduler(0, SCHED_FIFO, &sp)) {
		perror("latency_target spin");
		return 1;
	}
	t0 = now_ns();
	while (now_ns() - t0 < ms * 1000000ULL)
		;
	printf("spun_us %llu\n", (unsigned long long)((now_ns() - t0) / 1000));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "req"))
		return req(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "spin"))
		return spin(argc, argv);
	fprintf(stderr, "usage: latency_target req KIND PERIOD_NS RUNTIME_NS TOLERANCE_NS CPUS0 RESERVED0 [HOLD_S]\n"
			"       latency_target spin CPU MS\n");
	return 2;
}
