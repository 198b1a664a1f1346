// SPDX-License-Identifier: GPL-2.0
/*
 * Races between a file's session changing and the paths that use it.
 *
 * mmap() vs SESSION_ATTACH on one fd: ATTACH checked that the fd's session
 * was pristine (never mapped) without s->mmap_lock, so an mmap() between
 * that check and the swap mapped the anonymous session that the swap then
 * tore down: both calls succeeded and the mapping never saw a record.
 *
 * read() vs SET_CONFIG (review finding #2, second half): SET_CONFIG frees
 * and reallocates the rings of a stopped session while another fd on the
 * same named session reads them.
 */
#include "kselftest_harness.h"
#include "transport_lib.h"

static int rq(int fd, unsigned long cmd, const char *name)
{
	struct ktrack_session_req r = { .size = sizeof(r) };

	snprintf(r.name, sizeof(r.name), "%s", name);
	return ioctl(fd, cmd, &r) ? -errno : 0;
}

FIXTURE(race) {
	int owner;
	int ncpu;
	long page;
};

FIXTURE_SETUP(race)
{
	ASSERT_EQ(0, tp_load());
	self->page = sysconf(_SC_PAGESIZE);
	self->owner = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->owner);
	ASSERT_EQ(0, rq(self->owner, KTRACK_IOC_SESSION_CREATE, "race"));
	ASSERT_EQ(0, tp_config(self->owner, 4, KTRACK_MODE_DISCARD));
	self->ncpu = tp_nr_cpus(self->owner);
	ASSERT_LT(0, self->ncpu);
}

FIXTURE_TEARDOWN(race)
{
	rq(self->owner, KTRACK_IOC_SESSION_DESTROY, "race");
	close(self->owner);
	tp_unload();
}

struct map_arg {
	int fd;
	size_t len;
	volatile int go;
	void *map;
	int err;
};

static void *map_fn(void *a)
{
	struct map_arg *m = a;

	while (!m->go)
		;
	m->map = mmap(NULL, m->len, PROT_READ, MAP_SHARED, m->fd, 0);
	m->err = m->map == MAP_FAILED ? errno : 0;
	return NULL;
}

/* Sum of the data_head of every CPU's control page in the mapping. */
static __u64 heads(const void *map, int ncpu, long page)
{
	__u64 sum = 0;
	int cpu;

	for (cpu = 0; cpu < ncpu; cpu++)
		sum += __atomic_load_n(&((const struct ktrack_ring_ctrl *)
					 ((const char *)map + (size_t)cpu * 5 * page))->data_head,
				       __ATOMIC_ACQUIRE);
	return sum;
}

TEST_F(race, mmap_and_attach_on_one_fd)
{
	int i, both = 0;

	ASSERT_EQ(0, ioctl(self->owner, KTRACK_IOC_START));
	for (i = 0; i < 300; i++) {
		/* 5 pages per CPU: "race" (4 + 1) or the fresh session (256 + 1) */
		struct map_arg m = { .fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC),
				     .len = (size_t)self->ncpu * 5 * self->page };
		pthread_t th;
		int ret;

		ASSERT_LE(0, m.fd);
		ASSERT_EQ(0, pthread_create(&th, NULL, map_fn, &m));
		m.go = 1;
		ret = rq(m.fd, KTRACK_IOC_SESSION_ATTACH, "race");
		ASSERT_EQ(0, pthread_join(th, NULL));
		/* Mapped first: EBUSY.  Attached first: mmap maps "race" or ENODEV. */
		EXPECT_TRUE(ret == 0 || ret == -EBUSY) TH_LOG("attach: %d", ret);
		EXPECT_TRUE(m.err == 0 || (ret == 0 && m.err == ENODEV))
			TH_LOG("mmap: %s (attach %d)", strerror(m.err), ret);
		if (!ret && !m.err) {
			__u64 before = heads(m.map, self->ncpu, self->page);

			both++;
			ASSERT_EQ(2, write(self->owner, "x", 2));
			EXPECT_LT(before, heads(m.map, self->ncpu, self->page))
				TH_LOG("iteration %d: the mapping is not the attached session's", i);
		}
		if (!m.err)
			munmap(m.map, m.len);
		close(m.fd);
		if (_metadata->exit_code)
			break;
	}
	TH_LOG("%d of %d iterations had both succeed", both, i);
	ASSERT_EQ(0, ioctl(self->owner, KTRACK_IOC_STOP));
}

struct reader_arg {
	int fd;
	volatile int stop;
	unsigned long reads, bytes;
	int err;
};

static void *reader_fn(void *a)
{
	static __u8 buf[1 << 16];
	struct reader_arg *r = a;

	while (!r->stop) {
		ssize_t n = read(r->fd, buf, sizeof(buf));

		r->reads++;
		if (n > 0)
			r->bytes += n;
		else if (n < 0 && errno != EAGAIN && !r->err)
			r->err = errno;
	}
	return NULL;
}

TEST_F(race, read_during_set_config)
{
	struct reader_arg r = { .fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC | O_NONBLOCK) };
	pthread_t th;
	int i;

	ASSERT_LE(0, r.fd);
	ASSERT_EQ(0, rq(r.fd, KTRACK_IOC_SESSION_ATTACH, "race"));
	ASSERT_EQ(0, pthread_create(&th, NULL, reader_fn, &r));
	for (i = 0; i < 60; i++) {
		ASSERT_EQ(0, ioctl(self->owner, KTRACK_IOC_START));
		ASSERT_EQ(8, write(self->owner, "marker!", 8));
		ASSERT_EQ(0, ioctl(self->owner, KTRACK_IOC_STOP));
		/* new rings under the reader: buf_pages and mode flip */
		EXPECT_EQ(0, tp_config(self->owner, (i & 1) ? 1 : 16,
				       (i & 2) ? KTRACK_MODE_OVERWRITE : KTRACK_MODE_DISCARD));
	}
	r.stop = 1;
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, r.err) TH_LOG("read(): %s", strerror(r.err));
	EXPECT_LT(0, r.reads);
	TH_LOG("%lu reads, %lu bytes", r.reads, r.bytes);
	close(r.fd);
}

TEST_HARNESS_MAIN
