// SPDX-License-Identifier: GPL-2.0
/*
 * wakeup_target - the known disturbance of the wake-up latency test
 * (latency_wakeup.sh).  Built by 'make kernel-tests' into
 * build/tests/targets/.
 *
 *   wakeup_target SPIN_MS
 *
 * Forks a normal (SCHED_OTHER) child "kt_sleeper" pinned to CPU 0 that
 * sleeps 10 ms at a time; the parent, "kt_spinner", pins itself to CPU 0,
 * becomes SCHED_FIFO 50 (kernel prio 49), sleeps 20 ms five times (RT
 * wake-ups), then spins SPIN_MS on CPU 0: the sleeper's timer wakes it
 * meanwhile, and it waits for the spin to end.  Then the parent sleeps
 * 100 ms, ends the child and prints
 *   sleeper PID spinner PID spun_us N
 * (N: the spin's length on CLOCK_MONOTONIC).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static int pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

int main(int argc, char **argv)
{
	long spin_ms = argc > 1 ? atol(argv[1]) : 200;
	struct sched_param sp = { .sched_priority = 50 };
	uint64_t start, end;
	pid_t child;
	int i;

	if (pin_cpu0()) {
		perror("sched_setaffinity");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		prctl(PR_SET_NAME, "kt_sleeper");
		for (;;)
			sleep_ms(10);
	}
	prctl(PR_SET_NAME, "kt_spinner");
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		perror("sched_setscheduler");
		kill(child, SIGKILL);
		return 1;
	}
	/* the child runs a few rounds first, asleep when the spin begins */
	for (i = 0; i < 5; i++)
		sleep_ms(20);
	start = now_ns();
	do
		end = now_ns();
	while (end - start < (uint64_t)spin_ms * 1000000ull);
	sleep_ms(100);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	printf("sleeper %d spinner %d spun_us %llu\n", (int)child, (int)getpid(),
	       (unsigned long long)((end - start) / 1000));
	return 0;
}
