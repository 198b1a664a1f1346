// SPDX-License-Identifier: GPL-2.0
/*
 * ringbuf_reader - read records from /dev/ringbuf_sample and check that
 * every missing sequence number is accounted for by the lost counter.
 *
 *   sudo /tmp/ringbuf_reader [-n RECORDS] [-v] [DEVICE]
 *
 * (built with cc, see README.md).
 *
 * It waits with poll() (a 5 s timeout, so it never hangs), reads as many
 * records as one read() returns, and stops after RECORDS records.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ringbuf_sample.h"

int main(int argc, char **argv)
{
	const char *dev = "/dev/ringbuf_sample";
	unsigned long want = 100, got = 0, missing = 0, reads = 0;
	unsigned long long first_lost = 0, last_lost = 0, next_seq = 0;
	struct ringbuf_record recs[32];
	int verbose = 0, opt, fd;

	while ((opt = getopt(argc, argv, "n:v")) != -1) {
		if (opt == 'n')
			want = strtoul(optarg, NULL, 0);
		else if (opt == 'v')
			verbose = 1;
		else
			return fprintf(stderr, "usage: %s [-n RECORDS] [-v] [DEVICE]\n", argv[0]), 2;
	}
	if (optind < argc)
		dev = argv[optind];
	fd = open(dev, O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		fprintf(stderr, "cannot open %s: %s (is ringbuf_sample loaded?)\n", dev, strerror(errno));
		return 1;
	}
	while (got < want) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int i, r;

		r = poll(&p, 1, 5000);
		if (r == 0) {
			fprintf(stderr, "no record for 5 s: is the timer running?\n");
			return 1;
		}
		if (r < 0)
			return perror("poll"), 1;
		n = read(fd, recs, sizeof(recs));
		if (n < 0 && errno == EAGAIN)
			continue;	/* another reader was faster */
		if (n < 0)
			return perror("read"), 1;
		if (n % sizeof(recs[0])) {
			fprintf(stderr, "read returned %zd bytes: not whole records\n", n);
			return 1;
		}
		reads++;
		for (i = 0; i < n / (ssize_t)sizeof(recs[0]) && got < want; i++) {
			struct ringbuf_record *rec = &recs[i];

			if (got == 0) {
				first_lost = rec->lost;
			} else if (rec->seq != next_seq) {
				/* A gap: the records in it must have been counted as lost. */
				missing += rec->seq - next_seq;
				if (verbose)
					printf("gap: seq %llu..%llu missing\n", next_seq,
					       (unsigned long long)rec->seq - 1);
			}
			if (verbose)
				printf("seq %llu cpu %u lost %llu\n", (unsigned long long)rec->seq,
				       rec->cpu, (unsigned long long)rec->lost);
			next_seq = rec->seq + 1;
			last_lost = rec->lost;
			got++;
		}
	}
	close(fd);
	printf("read %lu records in %lu reads\n", got, reads);
	printf("%lu missing from the sequence, %llu counted lost by the driver meanwhile\n",
	       missing, last_lost - first_lost);
	if (missing != last_lost - first_lost) {
		printf("MISMATCH: the driver lost records without counting them\n");
		return 1;
	}
	printf("ok: every gap is accounted for\n");
	return 0;
}
