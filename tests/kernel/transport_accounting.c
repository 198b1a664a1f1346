// SPDX-License-Identifier: GPL-2.0
/*
 * Exact accounting of the per-CPU rings with ktrack_test_emit: every
 * sequence number arrives once and in order per (CPU, context) with a
 * large buffer (mmap and read() readers); with a tiny buffer in discard
 * and overwrite mode, received + lost = produced exactly and every gap is
 * where a LOST record says.
 */
/*
 * The harness's fixture wrapper keeps 'child' across a setjmp; with our
 * inlined helpers gcc -Wextra flags it although it is never used after
 * the longjmp.
 */
#pragma GCC diagnostic ignored "-Wclobbered"
#include <fcntl.h>
#include <sched.h>

#include "kselftest_harness.h"
#include "transport_lib.h"

#define ALL_CTX		0xf	/* task, softirq, hardirq, NMI (when possible) */
#define TASK_ONLY	0x1
#define PAYLOAD		32

FIXTURE(acct) {
	int fd;
	struct tp_reader rd;
	struct tp_check chk;
	struct tp_produced prod;
};

FIXTURE_SETUP(acct)
{
	ASSERT_EQ(0, tp_load());
	self->fd = -1;
	memset(&self->chk, 0, sizeof(self->chk));
}

static int offline_cpu = -1;	/* put back online by the teardown */
static int cpu_set_online(int cpu, int on);

FIXTURE_TEARDOWN(acct)
{
	if (offline_cpu >= 0 && !cpu_set_online(offline_cpu, 1))
		offline_cpu = -1;
	if (self->fd >= 0)
		close(self->fd);
	tp_unload();
}

static void check_all_arrived(struct __test_metadata *_metadata, struct tp_check *c,
			      struct tp_produced *p, int ncpu)
{
	int cpu, ctx;

	EXPECT_EQ(0, c->errors) TH_LOG("%s", c->first_error);
	EXPECT_EQ(0, c->lost);
	EXPECT_EQ(p->total, c->received);
	for (cpu = 0; cpu < ncpu; cpu++)
		for (ctx = 0; ctx < TP_NCTX; ctx++)
			EXPECT_EQ(p->n[cpu][ctx], c->next[cpu][ctx])
				TH_LOG("cpu %d ctx %d", cpu, ctx);
	/* Every context the helper can drive under this kernel did run. */
	EXPECT_LT(0, c->ctx_seen[KTRACK_RECF_CTX_TASK]);
	EXPECT_LT(0, c->ctx_seen[KTRACK_RECF_CTX_SOFTIRQ]);
	EXPECT_LT(0, c->ctx_seen[KTRACK_RECF_CTX_HARDIRQ]);
}

TEST_F(acct, large_buffer_mmap_every_seq_once_in_order)
{
	struct ktrack_cpu_stats cs[TP_MAX_CPUS];
	int cpu, ncpu;

	self->fd = tp_open(2048, KTRACK_MODE_DISCARD);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, tp_map(&self->rd, self->fd, 2048));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_START));
	self->chk.run = 1;
	ASSERT_EQ(0, tp_run(1, 5000, ALL_CTX, PAYLOAD, &self->prod));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_STOP));
	ASSERT_LE(0, tp_drain(&self->rd, &self->chk));
	ncpu = self->rd.ncpu;
	ASSERT_LT(1, ncpu) TH_LOG("run the VM with --smp 2 or more");
	check_all_arrived(_metadata, &self->chk, &self->prod, ncpu);
	ASSERT_EQ(0, tp_stats(self->fd, cs, ncpu, NULL));
	for (cpu = 0; cpu < ncpu; cpu++) {
		__u64 p = tp_produced_on(&self->prod, cpu);

		EXPECT_EQ(p, cs[cpu].written);
		EXPECT_EQ(0, cs[cpu].lost_full + cs[cpu].lost_too_big + cs[cpu].overwritten);
		EXPECT_EQ(p * (sizeof(struct ktrack_rec_hdr) + PAYLOAD), cs[cpu].bytes);
	}
	tp_unmap(&self->rd);
}

TEST_F(acct, large_buffer_read_every_seq_once_in_order)
{
	self->fd = tp_open(2048, KTRACK_MODE_DISCARD);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_START));
	self->chk.run = 2;
	ASSERT_EQ(0, tp_run(2, 5000, ALL_CTX, PAYLOAD, &self->prod));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_STOP));
	/* Stopped: read() drains, then returns 0 (end of stream). */
	ASSERT_LE(0, tp_read_all(self->fd, &self->chk));
	check_all_arrived(_metadata, &self->chk, &self->prod, tp_nr_cpus(self->fd));
}

TEST_F(acct, nmi_context_records)
{
	self->fd = tp_open(256, KTRACK_MODE_DISCARD);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_START));
	self->chk.run = 3;
	ASSERT_EQ(0, tp_run(3, 200, 1 << KTRACK_RECF_CTX_NMI, PAYLOAD, &self->prod));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_STOP));
	/* NMI IPIs need no PMU: every x86 machine, QEMU TCG included, has them. */
	ASSERT_TRUE(self->prod.nmi_supported);
	ASSERT_LT(0, self->prod.total) TH_LOG("no NMI record was produced");
	ASSERT_LE(0, tp_read_all(self->fd, &self->chk));
	EXPECT_EQ(0, self->chk.errors) TH_LOG("%s", self->chk.first_error);
	EXPECT_EQ(self->prod.total, self->chk.received);
	EXPECT_EQ(self->prod.total, self->chk.ctx_seen[KTRACK_RECF_CTX_NMI]);
}

/* Tiny buffer, reader running concurrently, one context: exact gaps. */
static void tiny(struct __test_metadata *_metadata, FIXTURE_DATA(acct) *self, __u32 mode,
		 __u32 mask, bool exact, __u32 run)
{
	struct ktrack_cpu_stats cs[TP_MAX_CPUS];
	struct tp_bg bg = { .r = &self->rd, .c = &self->chk };
	__u64 written = 0, lost = 0;
	int cpu, ctx;

	self->fd = tp_open(1, mode);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, tp_map(&self->rd, self->fd, 1));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_START));
	self->chk.run = run;
	self->chk.exact_gaps = exact;
	ASSERT_EQ(0, pthread_create(&bg.th, NULL, tp_bg_fn, &bg));
	ASSERT_EQ(0, tp_run(run, 20000, mask, PAYLOAD, &self->prod));
	bg.stop = 1;
	pthread_join(bg.th, NULL);
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_STOP));
	ASSERT_LE(0, tp_drain(&self->rd, &self->chk));
	/* The last LOST record needs room: drained now, flush writes it. */
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_FLUSH));
	ASSERT_LE(0, tp_drain(&self->rd, &self->chk));
	EXPECT_EQ(0, self->chk.errors) TH_LOG("%s", self->chk.first_error);
	EXPECT_EQ(self->prod.total, self->chk.received + self->chk.lost)
		TH_LOG("received %llu lost %llu", (unsigned long long)self->chk.received,
		       (unsigned long long)self->chk.lost);
	EXPECT_LT(0, self->chk.lost) TH_LOG("a 1-page buffer must overflow");
	EXPECT_LT(0, self->chk.received);
	if (exact) {
		/* The tail of each stream: nothing after the last marker. */
		for (cpu = 0; cpu < self->rd.ncpu; cpu++)
			for (ctx = 0; ctx < TP_NCTX; ctx++)
				EXPECT_EQ(self->prod.n[cpu][ctx],
					  self->chk.next[cpu][ctx] + (ctx ? 0 : self->chk.pending_lost[cpu]));
	}
	ASSERT_EQ(0, tp_stats(self->fd, cs, self->rd.ncpu, NULL));
	for (cpu = 0; cpu < self->rd.ncpu; cpu++) {
		written += cs[cpu].written;
		lost += cs[cpu].lost_full + cs[cpu].lost_too_big;
	}
	if (mode == KTRACK_MODE_DISCARD) {
		EXPECT_EQ(self->prod.total, written + lost);
		EXPECT_EQ(lost, self->chk.lost);
	} else {
		EXPECT_EQ(self->prod.total, written + lost);
	}
	tp_unmap(&self->rd);
}

TEST_F(acct, tiny_discard_gaps_where_markers_say)
{
	tiny(_metadata, self, KTRACK_MODE_DISCARD, TASK_ONLY, true, 10);
}

TEST_F(acct, tiny_overwrite_gaps_where_markers_say)
{
	tiny(_metadata, self, KTRACK_MODE_OVERWRITE, TASK_ONLY, true, 11);
}

TEST_F(acct, tiny_discard_all_contexts_received_plus_lost)
{
	tiny(_metadata, self, KTRACK_MODE_DISCARD, ALL_CTX, false, 12);
}

TEST_F(acct, tiny_overwrite_all_contexts_received_plus_lost)
{
	tiny(_metadata, self, KTRACK_MODE_OVERWRITE, ALL_CTX, false, 13);
}

TEST_F(acct, tiny_overwrite_read_keeps_newest)
{
	struct tp_check *c = &self->chk;
	int cpu;

	self->fd = tp_open(1, KTRACK_MODE_OVERWRITE);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_START));
	c->run = 14;
	c->exact_gaps = true;
	ASSERT_EQ(0, tp_run(14, 3000, TASK_ONLY, PAYLOAD, &self->prod));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_STOP));
	ASSERT_LE(0, tp_read_all(self->fd, c));
	EXPECT_EQ(0, c->errors) TH_LOG("%s", c->first_error);
	EXPECT_EQ(self->prod.total, c->received + c->lost);
	EXPECT_LT(0, c->lost);
	/* Flight recorder: the newest records survive, up to the last one. */
	for (cpu = 0; cpu < tp_nr_cpus(self->fd); cpu++)
		EXPECT_EQ(self->prod.n[cpu][0], c->next[cpu][0]);
}

/*
 * The stats equations of ktrack.h hold exactly once read() drained a ring
 * (review finding #13): 'read' counts records of 'written' only (not the
 * LOST markers, which stand for records never written) and 'overwritten'
 * counts records, not the counts of the LOST records it reclaimed.
 */
static void equations(struct __test_metadata *_metadata, FIXTURE_DATA(acct) *self, __u32 mode,
		      __u32 run)
{
	struct ktrack_cpu_stats cs[TP_MAX_CPUS];
	int cpu, ncpu;

	self->fd = tp_open(1, mode);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_START));
	self->chk.run = run;
	ASSERT_EQ(0, tp_run(run, 3000, ALL_CTX, PAYLOAD, &self->prod));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_STOP));
	ASSERT_LE(0, tp_read_all(self->fd, &self->chk));
	/* Drained: the pending LOST records now have room. */
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_FLUSH));
	ASSERT_LE(0, tp_read_all(self->fd, &self->chk));
	EXPECT_EQ(0, self->chk.errors) TH_LOG("%s", self->chk.first_error);
	EXPECT_EQ(self->prod.total, self->chk.received + self->chk.lost);
	ncpu = tp_nr_cpus(self->fd);
	ASSERT_EQ(0, tp_stats(self->fd, cs, ncpu, NULL));
	for (cpu = 0; cpu < ncpu; cpu++) {
		__u64 p = tp_produced_on(&self->prod, cpu);

		EXPECT_EQ(p, cs[cpu].written + cs[cpu].lost_full + cs[cpu].lost_too_big)
			TH_LOG("cpu %d: produced = written + lost", cpu);
		EXPECT_EQ(cs[cpu].written, cs[cpu].read + cs[cpu].overwritten)
			TH_LOG("cpu %d: written %llu read %llu overwritten %llu", cpu,
			       (unsigned long long)cs[cpu].written, (unsigned long long)cs[cpu].read,
			       (unsigned long long)cs[cpu].overwritten);
	}
}

TEST_F(acct, stats_equations_discard)
{
	equations(_metadata, self, KTRACK_MODE_DISCARD, 20);
}

TEST_F(acct, stats_equations_overwrite)
{
	equations(_metadata, self, KTRACK_MODE_OVERWRITE, 21);
}

/*
 * A mapper that stores a data_tail beyond data_head (the control page is
 * writable) must not wedge the ring nor make read() return uncommitted
 * bytes (review finding #13d).  Such a tail means "all consumed" (the
 * mapper's own loss), and the next read() stores a sane tail again.
 * Before the fix every later record was lost for good.
 */
TEST_F(acct, mapper_tail_past_head_does_not_wedge)
{
	struct ktrack_cpu_stats cs[TP_MAX_CPUS];
	struct tp_check first = { .run = 22 };
	int cpu;

	self->fd = tp_open(4, KTRACK_MODE_DISCARD);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, tp_map(&self->rd, self->fd, 4));
	for (cpu = 0; cpu < self->rd.ncpu; cpu++)
		self->rd.rings[cpu].ctrl->data_tail = 1ULL << 40;
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_START));
	ASSERT_EQ(0, tp_run(22, 100, TASK_ONLY, PAYLOAD, &self->prod));
	/* Running, non-blocking: returns what is readable (nothing) and repairs the tail. */
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	ASSERT_LE(0, tp_read_all(self->fd, &first));
	EXPECT_EQ(0, first.received) TH_LOG("read() returned bytes past the mapper's tail");
	self->chk.run = 25;
	ASSERT_EQ(0, tp_run(25, 100, TASK_ONLY, PAYLOAD, &self->prod));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_STOP));
	ASSERT_LE(0, tp_read_all(self->fd, &self->chk));
	EXPECT_EQ(0, self->chk.errors) TH_LOG("%s", self->chk.first_error);
	EXPECT_EQ(self->prod.total, self->chk.received);
	ASSERT_EQ(0, tp_stats(self->fd, cs, self->rd.ncpu, NULL));
	for (cpu = 0; cpu < self->rd.ncpu; cpu++)
		EXPECT_EQ(0, cs[cpu].lost_full) TH_LOG("cpu %d wedged", cpu);
	tp_unmap(&self->rd);
}

/*
 * A mapper's data_tail that is no record boundary (review 2026-11-27,
 * S1-1): read() loaded the header at the tail before checking it, so a
 * tail 2 bytes before the end of a 1-page data area read past it (an
 * oops on the vmalloc guard page).  It is EIO, as docs/UAPI.md says, and
 * a sane tail reads again afterwards.
 */
TEST_F(acct, mapper_misaligned_tail_is_eio)
{
	char text[103];	/* + the NUL the kernel adds: 128-byte records */
	__u64 head = 0, tail;
	cpu_set_t set;
	char buf[8192];
	int i;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	self->fd = tp_open(1, KTRACK_MODE_DISCARD);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, tp_map(&self->rd, self->fd, 1));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_START));
	/* 128-byte markers past the end of the data area, consumed as written */
	memset(text, 'm', sizeof(text));
	for (i = 0; i < 64 && head < 4096 + 512; i++) {
		ASSERT_EQ((ssize_t)sizeof(text), write(self->fd, text, sizeof(text)));
		head = __atomic_load_n(&self->rd.rings[0].ctrl->data_head, __ATOMIC_ACQUIRE);
		self->rd.rings[0].ctrl->data_tail = head;
	}
	ASSERT_LE(4096 + 512, head);
	ASSERT_GT(8192, head);
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_STOP));
	for (tail = 4089; tail < 4096; tail++) {
		self->rd.rings[0].ctrl->data_tail = tail;
		errno = 0;
		EXPECT_EQ(-1, read(self->fd, buf, sizeof(buf))) TH_LOG("tail %llu", tail);
		EXPECT_EQ(EIO, errno) TH_LOG("tail %llu", tail);
	}
	/* a boundary again: the last record reads */
	self->rd.rings[0].ctrl->data_tail = head - 128;
	EXPECT_EQ(128, read(self->fd, buf, sizeof(buf))) TH_LOG("%s", strerror(errno));
	/* read(2) of nothing is nothing (review S3-3), not EINVAL */
	EXPECT_EQ(0, read(self->fd, buf, 0));
	tp_unmap(&self->rd);
}

/*
 * A watermark at the buffer size (wakeup_percent 100) is reachable
 * (review finding #14): records never wrap, so a discard ring never holds
 * exactly its size unread, and poll() used to sleep for good.
 */
TEST_F(acct, full_watermark_still_wakes_poll)
{
	struct ktrack_config c = { .size = sizeof(c), .buf_pages = 1,
				   .mode = KTRACK_MODE_DISCARD, .wakeup_percent = 100 };
	struct pollfd p;

	self->fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_SET_CONFIG, &c));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_START));
	ASSERT_EQ(0, tp_run(23, 500, TASK_ONLY, PAYLOAD, &self->prod));
	/* Still running: only the watermark can make it readable. */
	p = (struct pollfd){ .fd = self->fd, .events = POLLIN };
	EXPECT_EQ(1, poll(&p, 1, 5000)) TH_LOG("a full ring did not reach the watermark");
	EXPECT_TRUE(p.revents & POLLIN);
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_STOP));
}

static int cpu_set_online(int cpu, int on)
{
	char path[96];
	int fd, ret;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, on ? "1" : "0", 1) == 1 ? 0 : -errno;
	close(fd);
	return ret;
}

/*
 * Losses pending on a CPU that went offline are reported by FLUSH (review
 * finding #13c): before the fix only online CPUs were flushed, so the last
 * LOST record of an offline CPU never came and produced != received + lost.
 */
TEST_F(acct, flush_reports_losses_of_an_offline_cpu)
{
	int last;

	self->fd = tp_open(1, KTRACK_MODE_DISCARD);
	ASSERT_LE(0, self->fd);
	last = tp_nr_cpus(self->fd) - 1;
	ASSERT_LT(0, last) TH_LOG("run the VM with --smp 2 or more");
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_START));
	self->chk.run = 24;
	self->chk.exact_gaps = true;
	ASSERT_EQ(0, tp_run(24, 2000, TASK_ONLY, PAYLOAD, &self->prod));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_STOP));
	/* Drain: room for the LOST records, then take the CPU away. */
	ASSERT_LE(0, tp_read_all(self->fd, &self->chk));
	ASSERT_EQ(0, cpu_set_online(last, 0));
	offline_cpu = last;
	EXPECT_EQ(0, ioctl(self->fd, KTRACK_IOC_FLUSH));
	EXPECT_LE(0, tp_read_all(self->fd, &self->chk));
	ASSERT_EQ(0, cpu_set_online(last, 1));
	offline_cpu = -1;
	EXPECT_EQ(0, self->chk.errors) TH_LOG("%s", self->chk.first_error);
	EXPECT_EQ(self->prod.total, self->chk.received + self->chk.lost)
		TH_LOG("received %llu lost %llu produced %llu",
		       (unsigned long long)self->chk.received, (unsigned long long)self->chk.lost,
		       (unsigned long long)self->prod.total);
}

TEST_HARNESS_MAIN
