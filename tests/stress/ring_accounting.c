// SPDX-License-Identifier: GPL-2.0
/*
 * ring_accounting - ring accounting torture (issue 14, review test 2).
 *
 * Every CPU writes at full rate through tests/kmod/ktrack_test_emit from
 * task context, softirq (a pinned timer), hardirq (a self-IPI: irq_work)
 * and NMI (an NMI IPI through the local APIC, the mechanism of the
 * kernel's NMI backtrace, which needs no PMU and works under QEMU TCG),
 * while a slow read() consumer drains with pauses, in discard and
 * overwrite mode with 1- and 4-page rings.  Every record carries a
 * sequence number per (run, CPU, context).  Checked, per CPU and exactly:
 *   received + lost (LOST records, in-stream) = produced (the helper's count)
 *   produced = written + lost_full + lost_too_big   (GET_STATS)
 *   written  = read + overwritten                   (drained: unread = 0)
 * and per (CPU, context) sequence numbers only grow, never repeat and
 * never pass what was produced; every context really ran.
 *
 * Prints TAP.  KTRACK_STRESS_SCALE=1 (default: seconds, for make check)
 * to 10 (long form): records per context and CPU = 5000 * scale, and
 * scale rounds of the four configurations.  Run in the VM as root:
 *   tests/vm/run --kernel 6.12 -- build/tests/stress/ring_accounting
 */
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>

#include "transport_lib.h"

#define PAYLOAD		32
#define ALL_CTX		0xf

static int tap_n, tap_failed;

static void tap(bool pass, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", pass ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!pass)
		tap_failed++;
}

struct per_cpu {
	__u64 recv[TP_MAX_CPUS], lost[TP_MAX_CPUS];
};

/* Parse one read() buffer: the shared checker plus per-CPU tallies. */
static int consume(const __u8 *buf, ssize_t got, struct tp_check *c, struct per_cpu *pc)
{
	ssize_t off = 0;

	while (off < got) {
		const struct ktrack_rec_hdr *h = (const void *)(buf + off);

		if (h->len < sizeof(*h) || off + h->len > got || h->type == KTRACK_REC_PAD ||
		    h->cpu >= TP_MAX_CPUS) {
			tp_fail(c, "read(): bad record at %zd (len %u type %u)", off, h->len, h->type);
			return -1;
		}
		if (h->type == KTRACK_REC_LOST)
			pc->lost[h->cpu] += ((const struct ktrack_rec_lost *)(h + 1))->count;
		else if (h->type == KTRACK_REC_TEST_SEQ &&
			 ((const struct ktrack_rec_test_seq *)(h + 1))->run == c->run)
			pc->recv[h->cpu]++;
		tp_check_rec(c, -1, h);
		off += h->len;
	}
	return 0;
}

/* Read until empty (EAGAIN) or end of stream. */
static int drain(int fd, struct tp_check *c, struct per_cpu *pc)
{
	static __u8 buf[1 << 20];

	for (;;) {
		ssize_t got = read(fd, buf, sizeof(buf));

		if (got < 0 && errno == EAGAIN)
			return 0;
		if (got < 0)
			return -errno;
		if (got == 0)
			return 0;
		if (consume(buf, got, c, pc))
			return -1;
	}
}

struct slow {
	int fd;
	struct tp_check *c;
	struct per_cpu *pc;
	volatile int stop;
	int err;
	unsigned long reads;
};

/* A slow consumer: one small read(), then a pause. */
static void *slow_fn(void *a)
{
	static __u8 buf[8192];
	struct slow *s = a;

	while (!s->stop) {
		ssize_t got = read(s->fd, buf, sizeof(buf));

		if (got > 0 && consume(buf, got, s->c, s->pc)) {
			s->err = EIO;
			break;
		}
		if (got < 0 && errno != EAGAIN) {
			s->err = errno;
			break;
		}
		s->reads++;
		usleep(2000);
	}
	return NULL;
}

static void one(__u32 run, __u32 mode, __u32 pages, __u32 count)
{
	static struct tp_check c;
	static struct tp_produced prod;
	static struct per_cpu pc;
	struct ktrack_cpu_stats cs[TP_MAX_CPUS];
	const char *m = mode == KTRACK_MODE_DISCARD ? "discard" : "overwrite";
	struct slow s = { .c = &c, .pc = &pc };
	bool eq_prod = true, eq_stats = true, eq_read = true, seq_ok = true;
	__u64 lost = 0, sum_read = 0;
	char why[160] = "";
	int fd, cpu, ctx, ncpu, ret;
	pthread_t th;

	memset(&c, 0, sizeof(c));
	memset(&pc, 0, sizeof(pc));
	c.run = run;
	fd = tp_open(pages, mode);
	if (fd < 0 || fcntl(fd, F_SETFL, O_NONBLOCK) || ioctl(fd, KTRACK_IOC_START)) {
		tap(false, "run %u %s %u pages: session setup: %s", run, m, pages, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	ncpu = tp_nr_cpus(fd);
	s.fd = fd;
	pthread_create(&th, NULL, slow_fn, &s);
	ret = tp_run(run, count, ALL_CTX, PAYLOAD, &prod);
	s.stop = 1;
	pthread_join(th, NULL);
	ioctl(fd, KTRACK_IOC_STOP);
	if (!ret)
		ret = drain(fd, &c, &pc);
	/* Drained: the last LOST records have room now. */
	if (!ret && ioctl(fd, KTRACK_IOC_FLUSH))
		ret = -errno;
	if (!ret)
		ret = drain(fd, &c, &pc);
	if (!ret)
		ret = tp_stats(fd, cs, ncpu, NULL);
	close(fd);
	if (ret || s.err || ncpu <= 0 || ncpu > TP_MAX_CPUS) {
		tap(false, "run %u %s %u pages: emit/read/stats failed (%d, reader %s)", run, m,
		    pages, ret, strerror(s.err));
		return;
	}
	for (cpu = 0; cpu < ncpu; cpu++) {
		__u64 p = 0;

		for (ctx = 0; ctx < TP_NCTX; ctx++) {
			p += prod.n[cpu][ctx];
			if (c.next[cpu][ctx] > prod.n[cpu][ctx])
				seq_ok = false;
		}
		lost += pc.lost[cpu];
		sum_read += cs[cpu].read;
		if (pc.recv[cpu] + pc.lost[cpu] != p && eq_prod) {
			eq_prod = false;
			snprintf(why, sizeof(why), "cpu %d: received %llu + lost %llu != produced %llu",
				 cpu, (unsigned long long)pc.recv[cpu],
				 (unsigned long long)pc.lost[cpu], (unsigned long long)p);
		}
		if (cs[cpu].written + cs[cpu].lost_full + cs[cpu].lost_too_big != p && eq_stats) {
			eq_stats = false;
			snprintf(why, sizeof(why), "cpu %d: written %llu + lost %llu != produced %llu",
				 cpu, (unsigned long long)cs[cpu].written,
				 (unsigned long long)(cs[cpu].lost_full + cs[cpu].lost_too_big),
				 (unsigned long long)p);
		}
		if (cs[cpu].written != cs[cpu].read + cs[cpu].overwritten && eq_read) {
			eq_read = false;
			snprintf(why, sizeof(why), "cpu %d: written %llu != read %llu + overwritten %llu",
				 cpu, (unsigned long long)cs[cpu].written,
				 (unsigned long long)cs[cpu].read,
				 (unsigned long long)cs[cpu].overwritten);
		}
	}
	tap(!c.errors && seq_ok, "run %u %s %u pages: sequence numbers grow per (cpu, context)%s%s",
	    run, m, pages, c.errors ? ": " : "", c.errors ? c.first_error : "");
	tap(eq_prod, "run %u %s %u pages: per CPU received + lost = produced (%llu + %llu = %llu) %s",
	    run, m, pages, (unsigned long long)c.received, (unsigned long long)lost,
	    (unsigned long long)prod.total, eq_prod ? "" : why);
	tap(eq_stats && eq_read && sum_read == c.received,
	    "run %u %s %u pages: per CPU produced = written + lost, written = read + overwritten %s",
	    run, m, pages, eq_stats && eq_read ? "" : why);
	/*
	 * Every context produced (the emitter's own counts): what was received
	 * from each may be nothing in overwrite mode, where a 1-page ring
	 * keeps only the newest records (the accounting above covers them).
	 */
	{
		unsigned long long made[TP_NCTX] = { 0 };
		int cpu, ctx;

		for (cpu = 0; cpu < TP_MAX_CPUS; cpu++)
			for (ctx = 0; ctx < TP_NCTX; ctx++)
				made[ctx] += prod.n[cpu][ctx];
		tap(made[KTRACK_RECF_CTX_TASK] && made[KTRACK_RECF_CTX_SOFTIRQ] &&
		    made[KTRACK_RECF_CTX_HARDIRQ] && made[KTRACK_RECF_CTX_NMI] && prod.nmi_supported,
		    "run %u %s %u pages: produced from task %llu, softirq %llu, hardirq %llu, nmi %llu (received %llu, %llu, %llu, %llu); %lu slow reads",
		    run, m, pages, made[0], made[1], made[2], made[3],
		    (unsigned long long)c.ctx_seen[0], (unsigned long long)c.ctx_seen[1],
		    (unsigned long long)c.ctx_seen[2], (unsigned long long)c.ctx_seen[3], s.reads);
	}
}

int main(void)
{
	static const struct { __u32 mode, pages; } cfgs[] = {
		{ KTRACK_MODE_DISCARD, 1 }, { KTRACK_MODE_OVERWRITE, 1 },
		{ KTRACK_MODE_DISCARD, 4 }, { KTRACK_MODE_OVERWRITE, 4 },
	};
	const char *e = getenv("KTRACK_STRESS_SCALE");
	int scale = e ? atoi(e) : 1, round, i, ntests;
	__u32 run = 100;

	if (scale < 1 || scale > 10) {
		fprintf(stderr, "KTRACK_STRESS_SCALE must be 1..10\n");
		return 2;
	}
	ntests = scale * 4 * 4;
	printf("TAP version 13\n1..%d\n# ring accounting torture, scale %d\n", ntests, scale);
	fflush(stdout);
	if (tp_load()) {
		for (i = 0; i < ntests; i++)
			tap(false, "load ktrack.ko and ktrack_test_emit.ko");
		return 1;
	}
	for (round = 0; round < scale; round++)
		for (i = 0; i < 4; i++)
			one(run++, cfgs[i].mode, cfgs[i].pages, 5000 * scale);
	tp_unload();
	printf("# %d of %d failed\n", tap_failed, tap_n);
	return tap_failed ? 1 : 0;
}
