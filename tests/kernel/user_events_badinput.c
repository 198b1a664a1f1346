// SPDX-License-Identifier: GPL-2.0
/*
 * Typed user events at the ioctl and write(2) level (uapi/ktrack.h, "User
 * events"): descriptions checked field by field, ids shared by equal
 * descriptions, the status page set while a U probe is armed, payloads
 * checked against the fields (short, long, locations out of bounds, strings
 * without their NUL), ids the file does not hold, registration floods, and
 * records carrying what was written.  Each refusal changes nothing.
 */
#include <sys/mman.h>
#include <sys/uio.h>

#include "kselftest_harness.h"
#include "probe_common.h"

static int reg(int fd, const char *format, struct ktrack_uevent_reg *out)
{
	struct ktrack_uevent_reg r = { .size = sizeof(r) };

	r.format_ptr = (unsigned long)format;
	if (ioctl(fd, KTRACK_IOC_UEVENT_REG, &r) < 0)
		return -errno;
	if (out)
		*out = r;
	return 0;
}

static int query(int fd, const char *name, char *buf, uint32_t len, struct ktrack_uevent_query *out)
{
	struct ktrack_uevent_query q = { .size = sizeof(q) };
	int ret = 0;

	snprintf(q.name, sizeof(q.name), "%s", name);
	q.format_ptr = (unsigned long)buf;
	q.format_len = len;
	if (ioctl(fd, KTRACK_IOC_UEVENT_QUERY, &q) < 0)
		ret = -errno;
	if (out)
		*out = q;
	return ret;
}

/* write(id + payload): returns bytes or -errno */
static ssize_t emit(int fd, uint32_t id, const void *payload, size_t len)
{
	char buf[8192];
	ssize_t n;

	memcpy(buf, &id, 4);
	memcpy(buf + 4, payload, len);
	n = write(fd, buf, 4 + len);
	return n < 0 ? -errno : n;
}

/* "kt/ok u32 a; char[8] s; char[] d": 16 fixed bytes, then d's string */
struct ok_payload {
	uint32_t a;
	char s[8];
	uint32_t d;
	char data[32];
} __attribute__((packed));

static size_t ok_fill(struct ok_payload *p, uint32_t a, const char *s, const char *d)
{
	size_t n = strlen(d) + 1;

	memset(p, 0, sizeof(*p));
	p->a = a;
	snprintf(p->s, sizeof(p->s), "%s", s);
	p->d = (n << 16) | 16;
	memcpy(p->data, d, n);
	return 16 + n;
}

FIXTURE(uev) {
	int fd;
	struct ktrack_uevent_reg ok;
};

FIXTURE_SETUP(uev)
{
	ASSERT_EQ(0, pt_load_all());
	self->fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	ASSERT_GE(self->fd, 0);
	ASSERT_EQ(0, reg(self->fd, "kt/ok u32 a; char[8] s; char[] d", &self->ok));
}

FIXTURE_TEARDOWN(uev)
{
	close(self->fd);
	pt_unload_all();
}

TEST_F(uev, descriptions_are_checked_field_by_field)
{
	static const char *const bad[] = {
		"", " ", "/x u32 a", "x/ u32 a", "x//y u32 a", "x/y/z u32 a", "x-y u32 a",
		"x u31 a", "x u32", "x u32 a b", "x u32 1a", "x u32 a-b", "x u32 a; u32 a",
		"x char[0] a", "x char[01] a", "x char[257] a", "x char[ 4] a", "x char[4 a",
		"x char a", "x char[-1] a", "x u32 a;; u32 b", "x ; u32 a", "x int a",
		"x u32 abcdefghijklmnopqrstuvwxyz",
	};
	struct ktrack_uevent_reg r = { .size = sizeof(r) };
	char big[2048], many[1024];
	unsigned int i;
	size_t n;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = reg(self->fd, bad[i], NULL);

		if (ret != -EINVAL)
			fprintf(stderr, "# description %u: %d\n", i, ret);
		EXPECT_EQ(-EINVAL, ret);
	}
	/* 33 fields */
	n = snprintf(many, sizeof(many), "x");
	for (i = 0; i < 33; i++)
		n += snprintf(many + n, sizeof(many) - n, "%su8 f%u", i ? "; " : " ", i);
	EXPECT_EQ(-E2BIG, reg(self->fd, many, NULL));
	/* longer than KTRACK_UEVENT_FORMAT_MAX, unterminated within it */
	memset(big, 'a', sizeof(big));
	big[sizeof(big) - 1] = 0;
	EXPECT_EQ(-E2BIG, reg(self->fd, big, NULL));
	/* 17 x char[256]: fixed part beyond the largest payload */
	n = snprintf(many, sizeof(many), "x");
	for (i = 0; i < 17; i++)
		n += snprintf(many + n, sizeof(many) - n, "%schar[256] f%u", i ? "; " : " ", i);
	EXPECT_EQ(-E2BIG, reg(self->fd, many, NULL));
	/* the struct itself */
	r.format_ptr = 0;
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_UEVENT_REG, &r));
	EXPECT_EQ(EFAULT, errno);
	r.format_ptr = (unsigned long)"x u32 a";
	r.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_UEVENT_REG, &r));
	EXPECT_EQ(EINVAL, errno);
	r.flags = 0;
	r.size = 8;
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_UEVENT_REG, &r));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_UEVENT_REG, NULL));
	EXPECT_EQ(EFAULT, errno);
	/* nothing of it was registered */
	EXPECT_EQ(-ENOENT, query(self->fd, "x", many, sizeof(many), NULL));
}

TEST_F(uev, equal_descriptions_share_an_id_and_the_kernel_canonicalizes)
{
	struct ktrack_uevent_reg r2 = { 0 };
	struct ktrack_uevent_query q;
	char buf[256];
	int fd2 = open("/dev/ktrack", O_RDWR | O_CLOEXEC);

	ASSERT_GE(fd2, 0);
	EXPECT_EQ(16, self->ok.fixed_size);
	EXPECT_EQ(0, reg(fd2, "  kt/ok   u32 a ;char[8]   s;  char[] d ; ", &r2));
	EXPECT_EQ(self->ok.id, r2.id);
	EXPECT_EQ(0, reg(self->fd, "kt/ok u32 a; char[8] s; char[] d", &r2));
	EXPECT_EQ(self->ok.id, r2.id);
	EXPECT_EQ(-EEXIST, reg(fd2, "kt/ok u64 a", NULL));
	ASSERT_EQ(0, query(fd2, "kt/ok", buf, sizeof(buf), &q));
	EXPECT_STREQ("kt/ok u32 a; char[8] s; char[] d", buf);
	EXPECT_EQ(strlen(buf) + 1, q.format_len);
	EXPECT_EQ(self->ok.id, q.id);
	EXPECT_EQ(0, q.enabled);
	/* too small: ENOSPC and the bytes needed */
	EXPECT_EQ(-ENOSPC, query(fd2, "kt/ok", buf, 4, &q));
	EXPECT_EQ(strlen("kt/ok u32 a; char[8] s; char[] d") + 1, q.format_len);
	/* by id */
	memset(&q, 0, sizeof(q));
	q.size = sizeof(q);
	q.id = self->ok.id;
	q.format_ptr = (unsigned long)buf;
	q.format_len = sizeof(buf);
	EXPECT_EQ(0, ioctl(fd2, KTRACK_IOC_UEVENT_QUERY, &q));
	EXPECT_STREQ("kt/ok", q.name);
	EXPECT_EQ(-ENOENT, query(fd2, "kt/none", buf, sizeof(buf), NULL));
	/* the event lives while one holder is open */
	close(self->fd);
	EXPECT_EQ(0, query(fd2, "kt/ok", buf, sizeof(buf), NULL));
	close(fd2);
	self->fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	ASSERT_GE(self->fd, 0);
	EXPECT_EQ(-ENOENT, query(self->fd, "kt/ok", buf, sizeof(buf), NULL));
	/* and UNREG lets go of it too */
	ASSERT_EQ(0, reg(self->fd, "kt/ok u32 a; char[8] s; char[] d", &self->ok));
	{
		struct ktrack_uevent_unreg u = { .size = sizeof(u), .id = self->ok.id };

		EXPECT_EQ(0, ioctl(self->fd, KTRACK_IOC_UEVENT_UNREG, &u));
		EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_UEVENT_UNREG, &u));
		EXPECT_EQ(ENOENT, errno);
		u.id = 100000;
		EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_UEVENT_UNREG, &u));
		EXPECT_EQ(ENOENT, errno);
	}
	EXPECT_EQ(-ENOENT, query(self->fd, "kt/ok", buf, sizeof(buf), NULL));
}

TEST_F(uev, payloads_are_checked_against_the_fields)
{
	struct ok_payload p;
	char huge[KTRACK_UEVENT_PAYLOAD_MAX + 8] = { 0 };
	uint32_t id = self->ok.id;
	void *volatile bad_ptr = (void *)8;
	size_t n;
	int other;

	n = ok_fill(&p, 1, "abc", "hello");
	EXPECT_EQ((ssize_t)(4 + n), emit(self->fd, id, &p, n));
	EXPECT_EQ(-EINVAL, emit(self->fd, id, &p, 15));		/* shorter than the fixed part */
	EXPECT_EQ(-EINVAL, emit(self->fd, id, &p, n - 1));	/* the string's NUL cut */
	EXPECT_EQ(-EINVAL, emit(self->fd, id, &p, n + 1));	/* a byte no field declares */
	p.d = (6 << 16) | 12;					/* inside the fixed part */
	EXPECT_EQ(-EINVAL, emit(self->fd, id, &p, n));
	p.d = (60 << 16) | 16;					/* past the end */
	EXPECT_EQ(-EINVAL, emit(self->fd, id, &p, n));
	p.d = (0 << 16) | 16;					/* empty: no NUL */
	EXPECT_EQ(-EINVAL, emit(self->fd, id, &p, n));
	n = ok_fill(&p, 1, "abc", "hello");
	memset(p.s, 'x', sizeof(p.s));				/* char[8] without its NUL */
	EXPECT_EQ(-EINVAL, emit(self->fd, id, &p, n));
	EXPECT_EQ(-E2BIG, emit(self->fd, id, huge, sizeof(huge)));
	EXPECT_EQ(-EINVAL, (ssize_t)(write(self->fd, &id, 3) < 0 ? -errno : 0));
	EXPECT_EQ(-ENOENT, emit(self->fd, id + 1, &p, n));	/* an id it does not hold */
	EXPECT_EQ(-ENOENT, emit(self->fd, 0xffffffff, &p, n));
	/* another file's event is not this file's to write */
	other = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	ASSERT_GE(other, 0);
	EXPECT_EQ(0, reg(other, "kt/other u8 b", NULL));
	n = ok_fill(&p, 1, "abc", "hello");
	EXPECT_EQ(-ENOENT, emit(other, id, &p, n));
	close(other);
	/* a bad pointer */
	EXPECT_EQ(-1, write(self->fd, bad_ptr, 20));
	EXPECT_EQ(EFAULT, errno);
}

TEST_F(uev, the_status_page_follows_the_probes_and_is_read_only)
{
	volatile uint8_t *st;
	void *rw;
	int sess, probe;

	st = mmap(NULL, KTRACK_UEVENT_STATUS_SIZE, PROT_READ, MAP_SHARED, self->fd,
		  (off_t)KTRACK_UEVENT_STATUS_OFFSET);
	ASSERT_NE(MAP_FAILED, (void *)st);
	rw = mmap(NULL, KTRACK_UEVENT_STATUS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		  (off_t)KTRACK_UEVENT_STATUS_OFFSET);
	EXPECT_EQ(MAP_FAILED, rw);
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 2 * KTRACK_UEVENT_STATUS_SIZE, PROT_READ, MAP_SHARED,
				   self->fd, (off_t)KTRACK_UEVENT_STATUS_OFFSET));
	EXPECT_EQ(-1, mprotect((void *)st, KTRACK_UEVENT_STATUS_SIZE, PROT_READ | PROT_WRITE));
	EXPECT_EQ(0, st[self->ok.id]);
	sess = pt_session();
	ASSERT_GE(sess, 0);
	probe = pt_add(sess, "U:p kt/ok $a", NULL);
	ASSERT_GT(probe, 0);
	EXPECT_EQ(1, st[self->ok.id]);
	{
		struct ktrack_probe_del d = { .size = sizeof(d), .id = probe };

		EXPECT_EQ(0, ioctl(sess, KTRACK_IOC_PROBE_DEL, &d));
	}
	EXPECT_EQ(0, st[self->ok.id]);
	/* a probe on an event nobody registered waits, and arms at registration */
	probe = pt_add(sess, "U:w kt/later $v:u64", NULL);
	ASSERT_GT(probe, 0);
	{
		struct ktrack_probe_info info;
		struct ktrack_uevent_reg r = { 0 };

		ASSERT_EQ(0, pt_info(sess, probe, &info));
		EXPECT_EQ(KTRACK_PROBE_ST_PENDING, info.state);
		ASSERT_EQ(0, reg(self->fd, "kt/later u64 v", &r));
		EXPECT_EQ(1, st[r.id]);
		ASSERT_EQ(0, pt_info(sess, probe, &info));
		EXPECT_EQ(KTRACK_PROBE_ST_ARMED, info.state);
		EXPECT_EQ(KTRACK_MECH_UEVENT, info.mechanism);
	}
	close(sess);
	munmap((void *)st, KTRACK_UEVENT_STATUS_SIZE);
}

TEST_F(uev, records_carry_what_was_written)
{
	static char buf[1 << 16];
	struct ktrack_rec_probe *r;
	struct ok_payload p;
	struct iovec iov[3];
	uint32_t id = self->ok.id;
	int sess, pa, pd, ps;
	size_t len, pos = 0, n;
	int i;

	sess = pt_session();
	ASSERT_GE(sess, 0);
	pa = pt_add(sess, "U:a kt/ok $a if a >= 3", NULL);
	pd = pt_add(sess, "U:d kt/ok $d", NULL);
	ps = pt_add(sess, "U:s kt/ok $s", NULL);
	ASSERT_GT(pa, 0);
	ASSERT_GT(pd, 0);
	ASSERT_GT(ps, 0);
	for (i = 0; i < 5; i++) {
		char d[32];

		snprintf(d, sizeof(d), "str-%d", i);
		n = ok_fill(&p, i, "s8", d);
		/* writev: id, the fixed part, the string, in three pieces */
		iov[0].iov_base = &id;
		iov[0].iov_len = 4;
		iov[1].iov_base = &p;
		iov[1].iov_len = 16;
		iov[2].iov_base = p.data;
		iov[2].iov_len = n - 16;
		EXPECT_EQ((ssize_t)(4 + n), writev(self->fd, iov, 3));
	}
	/* a refused payload records nothing */
	EXPECT_EQ(-EINVAL, emit(self->fd, id, &p, 15));
	len = pt_drain(sess, buf, sizeof(buf));
	EXPECT_EQ(2, pt_count(buf, len, pa, 0));	/* a = 3, 4 */
	EXPECT_EQ(5, pt_count(buf, len, pd, 0));
	EXPECT_EQ(5, pt_count(buf, len, ps, 0));
	for (i = 0; (r = pt_next(buf, len, &pos, pd, NULL)); i++) {
		char want[32];

		snprintf(want, sizeof(want), "str-%d", i);
		EXPECT_STREQ(want, pt_str(r, 0));
	}
	pos = 0;
	while ((r = pt_next(buf, len, &pos, ps, NULL)))
		EXPECT_STREQ("s8", pt_str(r, 0));
	pos = 0;
	for (i = 3; (r = pt_next(buf, len, &pos, pa, NULL)); i++)
		EXPECT_EQ(i, *(uint32_t *)r->data);
	close(sess);
}

TEST_F(uev, registration_floods_stop_at_the_limit_and_close_frees_all)
{
	char f[64], buf[256];
	int fd2 = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	int i, ok = 0, ret = 0;

	ASSERT_GE(fd2, 0);
	for (i = 0; i < KTRACK_UEVENT_MAX + 10; i++) {
		snprintf(f, sizeof(f), "flood/e%d u32 v", i);
		ret = reg(fd2, f, NULL);
		if (ret)
			break;
		ok++;
	}
	/* kt/ok holds one id */
	EXPECT_EQ(KTRACK_UEVENT_MAX - 1, ok);
	EXPECT_EQ(-ENOSPC, ret);
	close(fd2);
	EXPECT_EQ(-ENOENT, query(self->fd, "flood/e0", buf, sizeof(buf), NULL));
	EXPECT_EQ(0, reg(self->fd, "flood/e0 u32 v", NULL));
}

TEST_HARNESS_MAIN
