// SPDX-License-Identifier: GPL-2.0
/*
 * wakeup_target - the known disturbance of the wake-up latency test
 * (latency_wakeup.sh).  Built by 'make kernel-tests' into
 * build/tests/targets/.
 *
 *   wakeup_target SPIN_MS
 *
 * Forks a normal (SCHED_OTHER) child "kt_sleeper" pinned to CPU 0 that
 * blocks reading a pipe, again and again; the parent, "kt_spinner", pins
 * itself to CPU 0, becomes SCHED_FIFO 50 (kernel prio 49), then five times
 * writes a byte and sleeps 20 ms (the sleeper's quick wake-ups, and the
 * spinner's RT ones), then writes a byte and at once spins SPIN_MS on CPU
 * 0: the sleeper is woken just before the spin and waits for all of it
 * (no timer phase, and every other task woken on CPU 0 during the spin
 * waits less).  Then the parent sleeps 100 ms, ends the child and prints
 *   sleeper PID spinner PID spun_us N
 * (N: the spin's length on CLOCK_MONOTONIC).  The child dies with its
 * parent (PR_SET_PDEATHSIG).
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
	int pfd[2];
	pid_t child;
	char b = 0;
	int i;

	if (pin_cpu0()) {
		perror("sched_setaffinity");
		return 1;
	}
	if (pipe(pfd)) {
		perror("pipe");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		prctl(PR_SET_NAME, "kt_sleeper");
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[1]);
		while (read(pfd[0], &b, 1) == 1)
			;
		_exit(0);
	}
	close(pfd[0]);
	prctl(PR_SET_NAME, "kt_spinner");
	if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
		perror("sched_setscheduler");
		kill(child, SIGKILL);
		return 1;
	}
	/* the child runs a few rounds first, blocked in read() when the spin begins */
	for (i = 0; i < 5; i++) {
		if (write(pfd[1], &b, 1) != 1)
			perror("write");
		sleep_ms(20);
	}
	if (write(pfd[1], &b, 1) != 1)
		perror("write");
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
