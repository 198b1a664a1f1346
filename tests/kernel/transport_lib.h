/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the transport tests (transport_*.c): load ktrack.ko and the
 * ktrack_test_emit helper, session set-up, an mmap ring reader (the
 * consumer protocol of include/uapi/ktrack.h, both modes), a read()
 * reader, and a checker for KTRACK_REC_TEST_SEQ streams.
 */
#ifndef KTRACK_TRANSPORT_LIB_H
#define KTRACK_TRANSPORT_LIB_H

#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "ktrack_test.h"
#include <uapi/ktrack.h>

#define TP_MAX_CPUS	64
#define TP_NCTX		4
#define TP_EMIT_CTL	"/sys/kernel/debug/ktrack_test_emit/ctl"

static inline int tp_load(void)
{
	int ret;

	if (kt_module_loaded("ktrack_test_emit"))
		kt_rmmod("ktrack_test_emit");
	if (kt_module_loaded("ktrack"))
		kt_rmmod("ktrack");
	ret = kt_insmod(kt_module_path("kmod/ktrack.ko"), NULL);
	if (ret)
		return ret;
	return kt_insmod(kt_module_path("tests/kmod/ktrack_test_emit/ktrack_test_emit.ko"), NULL);
}

static inline void tp_unload(void)
{
	kt_rmmod("ktrack_test_emit");
	kt_rmmod("ktrack");
}

static inline int tp_config(int fd, __u32 pages, __u32 mode)
{
	struct ktrack_config c = { .size = sizeof(c), .buf_pages = pages, .mode = mode };

	return ioctl(fd, KTRACK_IOC_SET_CONFIG, &c) ? -errno : 0;
}

static inline int tp_open(__u32 pages, __u32 mode)
{
	int fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (tp_config(fd, pages, mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

static inline int tp_nr_cpus(int fd)
{
	struct ktrack_stats st = { .size = sizeof(st) };

	return ioctl(fd, KTRACK_IOC_GET_STATS, &st) ? -errno : (int)st.nr_cpus;
}

static inline int tp_stats(int fd, struct ktrack_cpu_stats *cs, int n, __u32 *state)
{
	struct ktrack_stats st = { .size = sizeof(st), .nr_cpus = n,
				   .cpus_ptr = (uintptr_t)cs };

	if (ioctl(fd, KTRACK_IOC_GET_STATS, &st))
		return -errno;
	if (state)
		*state = st.state;
	return 0;
}

/* produced[cpu][ctx] from the helper's result. */
struct tp_produced {
	int nmi_supported;
	__u64 n[TP_MAX_CPUS][TP_NCTX];
	__u64 total;
};

/* What was produced on 'cpu', every context. */
static inline __u64 tp_produced_on(const struct tp_produced *p, int cpu)
{
	__u64 n = 0;
	int ctx;

	for (ctx = 0; ctx < TP_NCTX; ctx++)
		n += p->n[cpu][ctx];
	return n;
}

static inline int tp_emit(const char *cmd, char *out, size_t len)
{
	int fd = open(TP_EMIT_CTL, O_RDWR);
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (write(fd, cmd, strlen(cmd)) < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	lseek(fd, 0, SEEK_SET);
	n = read(fd, out, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	out[n] = 0;
	return 0;
}

static inline int tp_run(__u32 run, __u32 count, __u32 mask, __u32 size, struct tp_produced *p)
{
	char cmd[128], out[4096], *line;
	unsigned long long t, s, h, m;
	int cpu, ret;

	snprintf(cmd, sizeof(cmd), "run %u %u %x %u", run, count, mask, size);
	ret = tp_emit(cmd, out, sizeof(out));
	if (ret)
		return ret;
	memset(p, 0, sizeof(*p));
	if (sscanf(out, "run %*u nmi_supported %d", &p->nmi_supported) != 1)
		return -EINVAL;
	for (line = strchr(out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		if (sscanf(line + 1, "cpu %d task %llu softirq %llu hardirq %llu nmi %llu",
			   &cpu, &t, &s, &h, &m) != 5 || cpu >= TP_MAX_CPUS)
			return -EINVAL;
		p->n[cpu][0] = t;
		p->n[cpu][1] = s;
		p->n[cpu][2] = h;
		p->n[cpu][3] = m;
		p->total += t + s + h + m;
	}
	return 0;
}

/* ---- stream checker --------------------------------------------------- */

struct tp_check {
	__u32 run;
	bool exact_gaps;	/* single context per CPU: gaps must match LOST */
	__u64 next[TP_MAX_CPUS][TP_NCTX];
	__u64 pending_lost[TP_MAX_CPUS];
	__u64 received, lost, markers, other;
	__u64 errors;
	char first_error[256];
	__u64 ctx_seen[TP_NCTX];
};

static inline void tp_fail(struct tp_check *c, const char *fmt, ...)
{
	va_list ap;

	if (!c->errors++) {
		va_start(ap, fmt);
		vsnprintf(c->first_error, sizeof(c->first_error), fmt, ap);
		va_end(ap);
	}
}

/* One record (hdr.len bytes) read from ring 'cpu' (-1: from read()). */
static inline void tp_check_rec(struct tp_check *c, int ring_cpu, const void *rec)
{
	const struct ktrack_rec_hdr *h = rec;
	int cpu = h->cpu;

	if (cpu >= TP_MAX_CPUS || (ring_cpu >= 0 && cpu != ring_cpu)) {
		tp_fail(c, "record of cpu %d on ring %d", cpu, ring_cpu);
		return;
	}
	if (h->type == KTRACK_REC_LOST) {
		const struct ktrack_rec_lost *l = (const void *)(h + 1);

		c->lost += l->count;
		c->pending_lost[cpu] += l->count;
		return;
	}
	if (h->type == KTRACK_REC_MARKER) {
		c->markers++;
		return;
	}
	if (h->type != KTRACK_REC_TEST_SEQ) {
		c->other++;
		return;
	}
	{
		const struct ktrack_rec_test_seq *t = (const void *)(h + 1);
		__u32 ctx = t->context;

		if (t->run != c->run)
			return;
		if (ctx >= TP_NCTX || (h->flags & KTRACK_RECF_CTX_MASK) != ctx) {
			tp_fail(c, "cpu %d: context %u in payload, flags %u in header", cpu, ctx,
				h->flags);
			return;
		}
		c->ctx_seen[ctx]++;
		c->received++;
		if (c->exact_gaps) {
			if (t->seq != c->next[cpu][ctx] + c->pending_lost[cpu])
				tp_fail(c, "cpu %d ctx %u: seq %llu after %llu with %llu lost marked",
					cpu, ctx, (unsigned long long)t->seq,
					(unsigned long long)c->next[cpu][ctx],
					(unsigned long long)c->pending_lost[cpu]);
			c->pending_lost[cpu] = 0;
		} else if (t->seq < c->next[cpu][ctx]) {
			tp_fail(c, "cpu %d ctx %u: seq %llu out of order (expected >= %llu)", cpu,
				ctx, (unsigned long long)t->seq,
				(unsigned long long)c->next[cpu][ctx]);
		}
		if (!c->exact_gaps && c->lost == 0 && t->seq != c->next[cpu][ctx])
			tp_fail(c, "cpu %d ctx %u: seq %llu, expected %llu (nothing lost)", cpu,
				ctx, (unsigned long long)t->seq,
				(unsigned long long)c->next[cpu][ctx]);
		c->next[cpu][ctx] = t->seq + 1;
	}
}

/* ---- mmap reader -------------------------------------------------------- */

struct tp_ring {
	struct ktrack_ring_ctrl *ctrl;
	const __u8 *data;
	size_t data_len;
	__u64 pos, index;
	__u8 scratch[65536];
};

struct tp_reader {
	int fd, ncpu;
	struct tp_ring *rings;
};

static inline int tp_map(struct tp_reader *r, int fd, __u32 pages)
{
	long page = sysconf(_SC_PAGESIZE);
	int c;

	r->fd = fd;
	r->ncpu = tp_nr_cpus(fd);
	if (r->ncpu <= 0)
		return -1;
	r->rings = calloc(r->ncpu, sizeof(*r->rings));
	for (c = 0; c < r->ncpu; c++) {
		off_t base = (off_t)c * (1 + pages) * page;
		struct tp_ring *g = &r->rings[c];

		g->ctrl = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, base);
		if (g->ctrl == MAP_FAILED)
			return -errno;
		g->data_len = (size_t)pages * page;
		g->data = mmap(NULL, g->data_len, PROT_READ, MAP_SHARED, fd, base + page);
		if (g->data == MAP_FAILED)
			return -errno;
		g->pos = __atomic_load_n(&g->ctrl->data_tail, __ATOMIC_ACQUIRE);
		g->index = g->ctrl->tail_index;
	}
	return 0;
}

static inline void tp_unmap(struct tp_reader *r)
{
	long page = sysconf(_SC_PAGESIZE);
	int c;

	for (c = 0; c < r->ncpu; c++) {
		munmap(r->rings[c].ctrl, page);
		munmap((void *)r->rings[c].data, r->rings[c].data_len);
	}
	free(r->rings);
}

static inline void tp_oldest(struct ktrack_ring_ctrl *ctrl, __u64 *pos, __u64 *idx)
{
	__u64 s;

	for (;;) {
		s = __atomic_load_n(&ctrl->overwrite_seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			continue;
		*pos = __atomic_load_n(&ctrl->oldest, __ATOMIC_RELAXED);
		*idx = __atomic_load_n(&ctrl->oldest_index, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&ctrl->overwrite_seq, __ATOMIC_RELAXED) == s)
			return;
	}
}

/* Drain ring 'cpu' into the checker; returns records or -1 on corruption. */
static inline long tp_drain_ring(struct tp_reader *r, int cpu, struct tp_check *c)
{
	struct tp_ring *g = &r->rings[cpu];
	bool ow = g->ctrl->mode == KTRACK_MODE_OVERWRITE;
	__u64 size = g->ctrl->data_size, op, oi;
	long n = 0;

	for (;;) {
		__u64 head = __atomic_load_n(&g->ctrl->data_head, __ATOMIC_ACQUIRE);
		__u64 off;
		__u16 len, type;

		if (ow) {
			tp_oldest(g->ctrl, &op, &oi);
			if (op > g->pos) {
				struct {
					struct ktrack_rec_hdr h;
					struct ktrack_rec_lost l;
				} lost = { .h = { .len = sizeof(lost), .type = KTRACK_REC_LOST,
						  .cpu = cpu },
					   .l = { .count = oi - g->index,
						  .reason = KTRACK_LOST_OVERWRITTEN } };

				if (oi != g->index)
					tp_check_rec(c, cpu, &lost);
				g->pos = op;
				g->index = oi;
				continue;
			}
		}
		if (g->pos == head)
			break;
		off = g->pos & (size - 1);
		memcpy(&len, g->data + off, 2);
		memcpy(&type, g->data + off + 2, 2);
		if (len < 8 || (len & 7) || off + len > size) {
			if (ow) {
				tp_oldest(g->ctrl, &op, &oi);
				if (op > g->pos)
					continue;
			}
			tp_fail(c, "cpu %d: bad record length %u at %llu", cpu, len,
				(unsigned long long)g->pos);
			return -1;
		}
		if (type != KTRACK_REC_PAD)
			memcpy(g->scratch, g->data + off, len);
		if (ow) {
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			tp_oldest(g->ctrl, &op, &oi);
			if (op > g->pos)
				continue;
		}
		if (type != KTRACK_REC_PAD) {
			tp_check_rec(c, cpu, g->scratch);
			/* A LOST record weighs its count (struct ktrack_ring_ctrl). */
			if (type == KTRACK_REC_LOST)
				g->index += ((struct ktrack_rec_lost *)(g->scratch +
					sizeof(struct ktrack_rec_hdr)))->count;
			else
				g->index++;
			n++;
		}
		g->pos += len;
		__atomic_store_n(&g->ctrl->tail_index, g->index, __ATOMIC_RELAXED);
		__atomic_store_n(&g->ctrl->data_tail, g->pos, __ATOMIC_RELEASE);
	}
	return n;
}

static inline long tp_drain(struct tp_reader *r, struct tp_check *c)
{
	long n = 0, k;
	int cpu;

	for (cpu = 0; cpu < r->ncpu; cpu++) {
		k = tp_drain_ring(r, cpu, c);
		if (k < 0)
			return k;
		n += k;
	}
	return n;
}

/* read() reader: drain everything available (fd must be O_NONBLOCK or stopped). */
static inline long tp_read_all(int fd, struct tp_check *c)
{
	static __u8 buf[1 << 20];
	long n = 0;

	for (;;) {
		ssize_t got = read(fd, buf, sizeof(buf));
		ssize_t off = 0;

		if (got < 0 && errno == EAGAIN)
			return n;
		if (got < 0)
			return -errno;
		if (got == 0)
			return n;
		while (off < got) {
			const struct ktrack_rec_hdr *h = (const void *)(buf + off);

			if (h->len < sizeof(*h) || off + h->len > got || h->type == KTRACK_REC_PAD) {
				tp_fail(c, "read(): bad record at %zd (len %u type %u)", off, h->len,
					h->type);
				return -1;
			}
			tp_check_rec(c, -1, h);
			off += h->len;
			n++;
		}
	}
}

/* A thread draining the mmap rings while records are produced. */
struct tp_bg {
	struct tp_reader *r;
	struct tp_check *c;
	volatile int stop;
	pthread_t th;
};

static inline void *tp_bg_fn(void *arg)
{
	struct tp_bg *b = arg;
	struct pollfd p = { .fd = b->r->fd, .events = POLLIN };

	while (!b->stop) {
		poll(&p, 1, 10);
		if (tp_drain(b->r, b->c) < 0)
			break;
	}
	return NULL;
}

#endif /* KTRACK_TRANSPORT_LIB_H */
