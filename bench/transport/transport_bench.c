// SPDX-License-Identifier: GPL-2.0
/*
 * In-VM transport benchmark (run by bench/transport.sh through tests/vm/run):
 *  - ns per record written by ktrack_test_emit's tight loop (32-byte
 *    payload) into one running session (discard, overwrite) and with no
 *    session running (static key off);
 *  - the highest producer rate the mmap reader (poll + drain thread on
 *    another CPU) drains with zero loss, and the same for read(): the
 *    producer is paced (busy-wait gap between records) from fast to slow;
 *    the first rate without loss is reported.
 * Prints numbers; asserts nothing.
 */
#include <sched.h>

#include "transport_lib.h"

#define PAYLOAD	32
#define N_TIGHT	200000
#define N_PACED	100000

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Runs "bench N 32 GAP" on CPU 0; returns total ns or 0. */
static unsigned long long emit(unsigned int n, unsigned int gap)
{
	char cmd[64], out[256];
	unsigned long long ns = 0;

	pin(0);
	snprintf(cmd, sizeof(cmd), "bench %u %u %u", n, PAYLOAD, gap);
	if (tp_emit(cmd, out, sizeof(out)) || sscanf(out, "bench records %*u ns %llu", &ns) != 1)
		return 0;
	return ns;
}

static __u64 lost_of(int fd, int ncpu)
{
	struct ktrack_cpu_stats cs[TP_MAX_CPUS];
	__u64 lost = 0;
	int i;

	if (tp_stats(fd, cs, ncpu, NULL))
		return ~0ULL;
	for (i = 0; i < ncpu; i++)
		lost += cs[i].lost_full + cs[i].lost_too_big + cs[i].overwritten;
	return lost;
}

static void write_cost(void)
{
	unsigned long long ns;
	int fd;

	ns = emit(N_TIGHT * 5, 0);
	printf("write, no session running (static key off): %8.1f ns/record\n",
	       (double)ns / (N_TIGHT * 5));
	fd = tp_open(2048, KTRACK_MODE_DISCARD);
	ioctl(fd, KTRACK_IOC_START);
	ns = emit(N_TIGHT, 0);
	printf("write, 1 session, discard mode:              %8.1f ns/record (%d-byte payload)\n",
	       (double)ns / N_TIGHT, PAYLOAD);
	close(fd);
	fd = tp_open(64, KTRACK_MODE_OVERWRITE);
	ioctl(fd, KTRACK_IOC_START);
	ns = emit(N_TIGHT, 0);
	printf("write, 1 session, overwrite mode (lapping):  %8.1f ns/record\n",
	       (double)ns / N_TIGHT);
	close(fd);
}

struct reader {
	int fd;
	bool use_read;
	struct tp_reader r;
	struct tp_check c;
	volatile int stop;
};

static void *reader_fn(void *arg)
{
	struct reader *rd = arg;
	struct pollfd p = { .fd = rd->fd, .events = POLLIN };

	pin(1);
	if (rd->use_read) {
		/* Blocking read() until end of stream (stopped and drained). */
		static __u8 buf[1 << 20];
		ssize_t n, off;

		while ((n = read(rd->fd, buf, sizeof(buf))) > 0)
			for (off = 0; off < n; off += ((struct ktrack_rec_hdr *)(buf + off))->len)
				tp_check_rec(&rd->c, -1, buf + off);
		return NULL;
	}
	while (!rd->stop) {
		poll(&p, 1, 10);
		tp_drain(&rd->r, &rd->c);
	}
	tp_drain(&rd->r, &rd->c);
	return NULL;
}

static void drain_rate(bool use_read)
{
	static const unsigned int gaps[] = { 0, 250, 500, 1000, 2000, 4000, 8000, 16000 };
	double best = 0;
	bool at_top = false;
	size_t i;

	for (i = 0; i < sizeof(gaps) / sizeof(gaps[0]); i++) {
		struct ktrack_config c = { .size = sizeof(c), .buf_pages = 256,
					   .wakeup_percent = 25 };
		struct reader rd = { .use_read = use_read };
		unsigned long long ns;
		pthread_t th;
		double rate;
		__u64 lost;

		rd.fd = open("/dev/ktrack", O_RDWR);
		ioctl(rd.fd, KTRACK_IOC_SET_CONFIG, &c);
		if (!use_read && tp_map(&rd.r, rd.fd, 256))
			return;
		ioctl(rd.fd, KTRACK_IOC_START);
		pthread_create(&th, NULL, reader_fn, &rd);
		ns = emit(N_PACED, gaps[i]);
		ioctl(rd.fd, KTRACK_IOC_STOP);
		rd.stop = 1;
		pthread_join(th, NULL);
		lost = lost_of(rd.fd, use_read ? tp_nr_cpus(rd.fd) : rd.r.ncpu);
		rate = ns ? N_PACED * 1e9 / ns : 0;
		printf("  %-6s producer %10.0f rec/s (gap %5u ns): received %6llu lost %6llu\n",
		       use_read ? "read()" : "mmap", rate, gaps[i],
		       (unsigned long long)rd.c.received, (unsigned long long)lost);
		if (!use_read)
			tp_unmap(&rd.r);
		close(rd.fd);
		if (lost == 0 && rd.c.received == N_PACED) {
			best = rate;
			at_top = i == 0;
			break;
		}
	}
	printf("%s reader: max zero-loss rate %s%.0f records/s (%d-byte payload, 1 MiB/CPU)%s\n",
	       use_read ? "read()" : "mmap", at_top ? ">= " : "", best, PAYLOAD,
	       at_top ? ": kept up with the producer's top speed" : "");
}

int main(void)
{
	struct utsname u;

	uname(&u);
	if (tp_load()) {
		fprintf(stderr, "cannot load ktrack.ko and ktrack_test_emit.ko\n");
		return 1;
	}
	printf("== transport benchmark, kernel %s, %ld CPUs (QEMU TCG: absolute numbers are slow)\n",
	       u.release, sysconf(_SC_NPROCESSORS_ONLN));
	write_cost();
	drain_rate(false);
	drain_rate(true);
	tp_unload();
	return 0;
}
