// SPDX-License-Identifier: GPL-2.0
/*
 * uprobe_target - the user program the u/ur probe tests (probe_uprobe.sh)
 * probe: known functions called a known number of times with known
 * arguments.  Built by 'make kernel-tests' into build/tests/targets/ (not
 * tests/kernel/, whose programs run-all runs as tests).
 *
 *   uprobe_target N [SLEEP_MS [WAIT_MS [time]]]
 *
 * waits WAIT_MS (so that a tracer can attach to its pid), calls
 * kt_target_fn(i, "kt-uprobe-str") for i = 0..N-1 (it returns 2i + 1),
 * then kt_target_sleep(SLEEP_MS) once (it sleeps that long and returns
 * SLEEP_MS).  With "time", prints the mean time of one call of the loop
 * in picoseconds (bench/uprobes.sh).  With $KT_TARGET_MAPFILE, the string
 * is that file's text, mapped and never touched by the program (so not in
 * its page tables when a probe reads it).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

/* noinline and used: one real call each time, at a symbol of its own */
__attribute__((noinline, used)) long kt_target_fn(long i, const char *s)
{
	__asm__ volatile("" : : "r"(s) : "memory");
	return 2 * i + 1;
}

__attribute__((noinline, used)) long kt_target_sleep(long ms)
{
	__asm__ volatile("" : : : "memory");
	sleep_ms(ms);
	return ms;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	long ms = argc > 2 ? atol(argv[2]) : 0;
	long wait = argc > 3 ? atol(argv[3]) : 0;
	int timed = argc > 4 && !strcmp(argv[4], "time");
	struct timespec t0, t1;
	const char *str = "kt-uprobe-str", *map = getenv("KT_TARGET_MAPFILE");
	long i, sum = 0;

	if (map) {
		int fd = open(map, O_RDONLY);
		void *p = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);

		if (p == MAP_FAILED)
			return 2;
		str = p;
	}
	if (wait)
		sleep_ms(wait);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < n; i++)
		sum += kt_target_fn(i, str);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (timed && n > 0)
		printf("%lld\n", ((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec)) * 1000 / n);
	kt_target_sleep(ms);
	return sum == n * n ? 0 : 1;
}
