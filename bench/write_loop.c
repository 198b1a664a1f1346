// SPDX-License-Identifier: GPL-2.0
/*
 * write_loop - the user's path to a probed vfs_write(): N one-byte
 * write(2) calls to a file (/dev/null by default), timed by the program
 * itself, so that neither its start nor a tracer's set-up is counted.
 *
 *   write_loop N OUT [FILE]   writes the mean ns per call (2 decimals) to OUT
 *
 * OUT, not stdout: under 'ktrackctl record -- write_loop' or 'trace-cmd
 * record write_loop' stdout is shared with the tracer.  Numbers only
 * (bench/userpath.sh makes the rows).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *path = argc > 3 ? argv[3] : "/dev/null";
	long n = argc > 2 ? atol(argv[1]) : 0;
	double t0, t1;
	FILE *out;
	char c = 'x';
	int fd;
	long i;

	if (n <= 0) {
		fprintf(stderr, "usage: write_loop N OUT [FILE]\n");
		return 2;
	}
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	/* Fault in the loop and the file's paths before timing. */
	for (i = 0; i < 1000; i++)
		if (write(fd, &c, 1) != 1)
			return 1;
	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (write(fd, &c, 1) != 1) {
			perror("write");
			return 1;
		}
	t1 = now_ns();
	out = fopen(argv[2], "w");
	if (!out) {
		perror(argv[2]);
		return 1;
	}
	fprintf(out, "%.2f\n", (t1 - t0) / n);
	return fclose(out) ? 1 : 0;
}
