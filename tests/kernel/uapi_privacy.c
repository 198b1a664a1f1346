// SPDX-License-Identifier: GPL-2.0
/*
 * What reaches userspace and who may arm what.
 *
 * Padding: every reply and every record is poisoned beforehand (0xa5), so
 * a byte the kernel did not write shows: each __pad field, and the bytes
 * after the NUL of each fixed-size string, must read zero (KMSAN is not in
 * Debian's kernels; this is the test the issue asks for instead).
 *
 * Privilege: an fd opened by root and handed to a process without
 * CAP_SYS_ADMIN and CAP_PERFMON (here: a child that dropped to nobody)
 * cannot arm a probe or the object tracker through it (EPERM), while it
 * can still read what the session records (as with perf: the fd is the
 * grant to read).
 */
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "ktrack_test.h"
#include "probe_common.h"
#include <uapi/ktrack.h>

#define POISON 0xa5

/* Bytes after the NUL of a fixed-size string: all zero? */
static int tail_zero(const char *s, size_t size)
{
	size_t n = strnlen(s, size), i;

	for (i = n; i < size; i++)
		if (s[i])
			return 0;
	return 1;
}

FIXTURE(privacy) {
	int fd;
};

FIXTURE_SETUP(privacy)
{
	ASSERT_EQ(0, pt_load_all());
	self->fd = open("/dev/ktrack", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(privacy)
{
	struct ktrack_session_req q = { .size = sizeof(q), .flags = KTRACK_SESSION_F_ALL };

	ioctl(self->fd, KTRACK_IOC_SESSION_DESTROY, &q);
	close(self->fd);
	pt_unload_all();
}

TEST_F(privacy, version_reply_has_no_stale_bytes)
{
	struct ktrack_version v;
	unsigned int i;

	memset(&v, POISON, sizeof(v));
	v.size = sizeof(v);
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_VERSION, &v));
	for (i = 0; i < sizeof(v.__pad); i++)
		EXPECT_EQ(0, v.__pad[i]);
	EXPECT_TRUE(tail_zero(v.module_version, sizeof(v.module_version)));
	EXPECT_TRUE(tail_zero(v.kernel_release, sizeof(v.kernel_release)));
}

TEST_F(privacy, stats_and_config_replies_have_no_stale_bytes)
{
	struct ktrack_cpu_stats cs[64];
	struct ktrack_stats st;
	struct ktrack_config c;
	int i;

	memset(&c, POISON, sizeof(c));
	c.size = sizeof(c);
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_GET_CONFIG, &c));
	EXPECT_EQ(0, c.flags);
	for (i = c.nr_pids; i < KTRACK_MAX_PID_FILTER; i++)
		EXPECT_EQ(0, c.pids[i]);

	/* Input fields must be zero (reserved): poison only what is output. */
	memset(&st, 0, sizeof(st));
	memset(cs, POISON, sizeof(cs));
	st.size = sizeof(st);
	st.nr_cpus = 64;
	st.cpus_ptr = (unsigned long)cs;
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_GET_STATS, &st));
	EXPECT_EQ(0, st.cpu_stats_size);	/* an input, returned as given */
}

TEST_F(privacy, session_and_probe_lists_have_no_stale_bytes)
{
	struct ktrack_session_req q = { .size = sizeof(q), .name = "privacy" };
	struct ktrack_session_info si[8];
	struct ktrack_session_list sl = { .size = sizeof(sl), .count = 8,
					  .entries_ptr = (unsigned long)si };
	struct ktrack_probe_info pi[4];
	struct ktrack_probe_list pl = { .size = sizeof(pl), .count = 4,
					.entries_ptr = (unsigned long)pi, .entry_size = sizeof(pi[0]) };
	struct ktrack_probe_add a;
	size_t len = 0;
	char msg[4096];
	void *blob;
	unsigned int i;

	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_SESSION_CREATE, &q));
	memset(si, POISON, sizeof(si));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_SESSION_LIST, &sl));
	ASSERT_LE(1, sl.count);
	for (i = 0; i < sl.count && i < 8; i++)
		EXPECT_TRUE(tail_zero(si[i].name, sizeof(si[i].name))) TH_LOG("session %u's name", i);

	blob = pt_compile("p:priv vfs_read n=$arg3:u64", NULL, &len, msg, sizeof(msg));
	ASSERT_NE(NULL, blob) TH_LOG("%s", msg);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.desc_size = len;
	a.desc_ptr = (unsigned long)blob;
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_PROBE_ADD, &a));
	EXPECT_EQ(0, a.__pad);
	free(blob);

	memset(pi, POISON, sizeof(pi));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_PROBE_LIST, &pl));
	ASSERT_EQ(1, pl.count);
	EXPECT_EQ(0, pi[0].__pad);
	EXPECT_TRUE(tail_zero(pi[0].name, sizeof(pi[0].name)));
	EXPECT_TRUE(tail_zero(pi[0].target, sizeof(pi[0].target)));
}

/* Every record of a stream: __pad fields and string tails are zero. */
static int check_records(struct __test_metadata *_metadata, const char *buf, ssize_t n, int *kinds)
{
	ssize_t off = 0;
	int bad = 0;

	while (off + (ssize_t)sizeof(struct ktrack_rec_hdr) <= n) {
		const struct ktrack_rec_hdr *h = (const void *)(buf + off);
		const char *p = (const char *)(h + 1);
		size_t plen = h->len - sizeof(*h);

		if (h->len < sizeof(*h) || off + h->len > n)
			break;
		switch (h->type) {
		case KTRACK_REC_PROBE: {
			const struct ktrack_rec_probe *r = (const void *)p;

			kinds[0]++;
			if (r->__pad) {
				bad++;
				TH_LOG("probe record: __pad %#x", r->__pad);
			}
			break;
		}
		case KTRACK_REC_MARKER: {
			size_t sl = strnlen(p, plen), i;

			kinds[1]++;
			for (i = sl; i < plen; i++)
				if (p[i]) {
					bad++;
					TH_LOG("marker: byte %zu after the text is %#x", i, p[i] & 0xff);
				}
			break;
		}
		case KTRACK_REC_LOST: {
			const struct ktrack_rec_lost *r = (const void *)p;

			kinds[2]++;
			if (r->__pad) {
				bad++;
				TH_LOG("lost record: __pad %#x", r->__pad);
			}
			break;
		}
		case KTRACK_REC_MODULE: {
			const struct ktrack_rec_module *r = (const void *)p;

			kinds[3]++;
			if (!tail_zero(r->name, sizeof(r->name))) {
				bad++;
				TH_LOG("module record: name tail");
			}
			break;
		}
		}
		off += h->len;
	}
	return bad;
}

TEST_F(privacy, records_have_no_stale_bytes)
{
	struct ktrack_config c = { .size = sizeof(c), .buf_pages = 1 };
	static char buf[1 << 18];
	int kinds[4] = { 0 }, i, bad = 0;
	ssize_t n;

	cpu_set_t one;
	int f;

	/* One CPU, so the markers after the drain follow the gap in its ring. */
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_SET_CONFIG, &c));
	ASSERT_LT(0, pt_add(self->fd, "p:priv vfs_read n=$arg3:u64", NULL));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_START));
	f = open("/proc/self/stat", O_RDONLY);
	ASSERT_LT(0, read(f, buf, 4096));	/* a probe record */
	close(f);
	/* Markers of every length mod 8, enough to overflow one page, a
	 * drain, then more: a LOST record stands for the gap.
	 */
	for (i = 0; i < 400; i++)
		(void)!write(self->fd, "abcdefghijklmnop", 1 + i % 16);
	memset(buf, POISON, sizeof(buf));
	n = read(self->fd, buf, sizeof(buf));
	ASSERT_LT(0, n);
	bad += check_records(_metadata, buf, n, kinds);
	for (i = 0; i < 8; i++)
		(void)!write(self->fd, "abcdefghijklmnop", 1 + i % 16);
	kt_rmmod(PT_MODULE);	/* a module record */
	ASSERT_EQ(0, kt_insmod(kt_module_path(PT_MODULE_PATH), NULL));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_STOP));
	memset(buf, POISON, sizeof(buf));
	while ((n = read(self->fd, buf, sizeof(buf))) > 0) {
		bad += check_records(_metadata, buf, n, kinds);
		memset(buf, POISON, sizeof(buf));
	}
	EXPECT_EQ(0, bad);
	EXPECT_LT(0, kinds[0]) TH_LOG("no probe record seen");
	EXPECT_LT(0, kinds[1]) TH_LOG("no marker seen");
	EXPECT_LT(0, kinds[2]) TH_LOG("no LOST record seen");
}

/* A child that dropped to nobody, with an fd root opened. */
static int as_nobody(int fd, int (*fn)(int fd))
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (setgid(65534) || setuid(65534))
			_exit(99);
		_exit(fn(fd));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void *nobody_blob;
static size_t nobody_len;

static int nobody_probe_add(int fd)
{
	struct ktrack_probe_add a = { .size = sizeof(a), .desc_size = nobody_len,
				      .desc_ptr = (unsigned long)nobody_blob };

	return ioctl(fd, KTRACK_IOC_PROBE_ADD, &a) < 0 && errno == EPERM ? 0 : 1;
}

static int nobody_objtrace(int fd)
{
	static char funcs[] = "vfs_read";
	struct ktrack_obj_config c = { .size = sizeof(c), .max_objects = 16, .nr_args = 1,
				       .functions_ptr = (unsigned long)funcs,
				       .functions_len = sizeof(funcs) - 1 };
	struct ktrack_obj_addr t = { .size = sizeof(t), .addr = 0xffff888000001000ULL };

	if (!(ioctl(fd, KTRACK_IOC_OBJ_CONFIG, &c) < 0 && errno == EPERM))
		return 1;
	if (!(ioctl(fd, KTRACK_IOC_OBJ_ENABLE) < 0 && errno == EPERM))
		return 2;
	return ioctl(fd, KTRACK_IOC_OBJ_TRACK, &t) < 0 && errno == EPERM ? 0 : 3;
}

static int nobody_sessions(int fd)
{
	struct ktrack_session_req q = { .size = sizeof(q), .name = "priv" };
	struct ktrack_session_req all = { .size = sizeof(all), .flags = KTRACK_SESSION_F_ALL };

	if (!(ioctl(fd, KTRACK_IOC_SESSION_CREATE, &q) < 0 && errno == EPERM))
		return 1;
	if (!(ioctl(fd, KTRACK_IOC_SESSION_ATTACH, &q) < 0 && errno == EPERM))
		return 2;
	return ioctl(fd, KTRACK_IOC_SESSION_DESTROY, &all) < 0 && errno == EPERM ? 0 : 3;
}

static int nobody_reads(int fd)
{
	char buf[65536];

	/* The session runs: reading what it recorded is the fd's grant. */
	return read(fd, buf, sizeof(buf)) >= 0 || errno == EAGAIN ? 0 : 1;
}

TEST_F(privacy, a_handed_over_fd_cannot_arm_without_privilege)
{
	char msg[4096];

	nobody_blob = pt_compile("p:nobody vfs_read", NULL, &nobody_len, msg, sizeof(msg));
	ASSERT_NE(NULL, nobody_blob) TH_LOG("%s", msg);
	EXPECT_EQ(0, as_nobody(self->fd, nobody_probe_add)) TH_LOG("PROBE_ADD was not refused with EPERM");
	EXPECT_EQ(0, as_nobody(self->fd, nobody_objtrace)) TH_LOG("objtrace was not refused with EPERM");
	/* Named sessions: none made, reached or ended (review S3-4) */
	{
		int other = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
		struct ktrack_session_req q = { .size = sizeof(q), .name = "priv" };

		ASSERT_LE(0, other);
		ASSERT_EQ(0, ioctl(other, KTRACK_IOC_SESSION_CREATE, &q));
		EXPECT_EQ(0, as_nobody(self->fd, nobody_sessions)) TH_LOG("a session ioctl was not refused with EPERM");
		EXPECT_EQ(0, ioctl(self->fd, KTRACK_IOC_SESSION_DESTROY, &q)) TH_LOG("'priv' was gone: %s", strerror(errno));
		close(other);
	}
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_START));
	EXPECT_EQ(0, as_nobody(self->fd, nobody_reads));
	/* Root can still arm through the same fd. */
	{
		struct ktrack_probe_add a = { .size = sizeof(a), .desc_size = nobody_len,
					      .desc_ptr = (unsigned long)nobody_blob };

		EXPECT_EQ(0, ioctl(self->fd, KTRACK_IOC_PROBE_ADD, &a)) TH_LOG("%s", strerror(errno));
	}
	free(nobody_blob);
}

TEST_HARNESS_MAIN
