/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the stress programs in tests/stress: the scale knob, TAP
 * lines, a watchdog that turns a hang into a failure with the stuck
 * thread's kernel stack, and the allocation-counter check.
 */
#ifndef KTRACK_STRESS_LIB_H
#define KTRACK_STRESS_LIB_H

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ktrack_test.h"

/* $KTRACK_STRESS_SCALE: 1 (make check, seconds) .. 10 (make check-stress). */
static inline int st_scale(void)
{
	const char *s = getenv("KTRACK_STRESS_SCALE");
	int v = s ? atoi(s) : 1;

	return v > 0 ? v : 1;
}

static int st_nr_tests;
static int st_failed;

static inline void st_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline void st_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++st_nr_tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		st_failed++;
}

/*
 * Watchdog: a thread calls st_alive() as it makes progress; one that does
 * not for 'stall' seconds fails the program, with its kernel stack.
 */
#define ST_MAX_THREADS 64
static atomic_ulong st_beats[ST_MAX_THREADS];
static pid_t st_tids[ST_MAX_THREADS];
static const char *st_what[ST_MAX_THREADS];
static atomic_int st_nr_watched;
static int st_stall = 60;

static inline int st_watch(const char *what)
{
	int i = atomic_fetch_add(&st_nr_watched, 1);

	st_tids[i] = (pid_t)syscall(SYS_gettid);
	st_what[i] = what;
	return i;
}

static inline void st_alive(int i)
{
	atomic_fetch_add(&st_beats[i], 1);
}

static inline void st_unwatch(int i)
{
	st_tids[i] = 0;
}

static inline void st_print_stack(pid_t tid)
{
	char path[64], buf[4096];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stack", tid);
	f = fopen(path, "r");
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	printf("# kernel stack of %d:\n%s", tid, buf);
}

static inline void *st_watchdog_fn(void *arg)
{
	unsigned long last[ST_MAX_THREADS] = { 0 };
	int still[ST_MAX_THREADS] = { 0 };

	(void)arg;
	for (;;) {
		int i, n = atomic_load(&st_nr_watched);

		sleep(1);
		for (i = 0; i < n; i++) {
			unsigned long b = atomic_load(&st_beats[i]);

			if (!st_tids[i])
				continue;
			still[i] = b == last[i] ? still[i] + 1 : 0;
			last[i] = b;
			if (still[i] >= st_stall) {
				printf("not ok %d - no hang: %s made no progress for %d s\n",
				       ++st_nr_tests, st_what[i], still[i]);
				st_print_stack(st_tids[i]);
				fflush(stdout);
				_exit(1);
			}
		}
	}
	return NULL;
}

static inline void st_start_watchdog(int stall_seconds)
{
	pthread_t t;

	st_stall = stall_seconds;
	pthread_create(&t, NULL, st_watchdog_fn, NULL);
	pthread_detach(t);
}

/*
 * The body of a reader thread, watched as "the reader": wait in poll() for
 * 'fd' (at most 'poll_ms'), read() it into 'buf' and hand each chunk to
 * 'got', until 'end' says that read()'s result (0 or -1 and errno) ends it.
 */
static inline void st_reader(int fd, char *buf, size_t size, int poll_ms,
			     void (*got)(const char *buf, ssize_t n), int (*end)(ssize_t n))
{
	int w = st_watch("the reader");

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		st_alive(w);
		poll(&p, 1, poll_ms);
		n = read(fd, buf, size);
		if (n > 0)
			got(buf, n);
		else if (end(n))
			break;
	}
	st_unwatch(w);
}

/* /sys/kernel/debug/ktrack/allocations: 1 when every counter is 0. */
static inline int st_allocations_zero(char *text, size_t len)
{
	FILE *f = fopen("/sys/kernel/debug/ktrack/allocations", "r");
	size_t n;
	char *p;

	if (!f) {
		snprintf(text, len, "cannot read /sys/kernel/debug/ktrack/allocations\n");
		return 0;
	}
	n = fread(text, 1, len - 1, f);
	text[n] = 0;
	fclose(f);
	for (p = text; *p; ) {
		char *sp = strchr(p, ' '), *nl = strchr(p, '\n');

		if (!nl)
			nl = p + strlen(p);
		if (sp && sp < nl && strtol(sp + 1, NULL, 10) != 0)
			return 0;
		p = *nl ? nl + 1 : nl;
	}
	return n > 0;
}

#endif
