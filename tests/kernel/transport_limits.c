// SPDX-License-Identifier: GPL-2.0
/*
 * The module's limits (issue 14): max_sessions (EMFILE beyond it, for
 * open() and SESSION_CREATE), max_pages_per_session (E2BIG at
 * SET_CONFIG, START and mmap when the rings of every CPU would exceed it)
 * and max_total_pages (ENOSPC at START and mmap when every session's
 * rings together would).
 */
#include "kselftest_harness.h"
#include "transport_lib.h"

#define LIM_SESSIONS	3
#define LIM_PAGES	40

FIXTURE(lim) {
	int ncpu;
};

FIXTURE_SETUP(lim)
{
	char params[96];
	int fd;

	tp_unload();
	snprintf(params, sizeof(params), "max_sessions=%d max_pages_per_session=%d",
		 LIM_SESSIONS, LIM_PAGES);
	ASSERT_EQ(0, kt_insmod(kt_module_path("kmod/ktrack.ko"), params));
	fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	self->ncpu = tp_nr_cpus(fd);
	close(fd);
	ASSERT_LT(0, self->ncpu);
}

FIXTURE_TEARDOWN(lim)
{
	struct ktrack_session_req r = { .size = sizeof(r), .flags = KTRACK_SESSION_F_ALL };
	int fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);

	/* A named session pins the module: none may outlive a failed case. */
	if (fd >= 0) {
		ioctl(fd, KTRACK_IOC_SESSION_DESTROY, &r);
		close(fd);
	}
	tp_unload();
}

static int lim_req(int fd, unsigned long cmd, const char *name)
{
	struct ktrack_session_req r = { .size = sizeof(r) };

	snprintf(r.name, sizeof(r.name), "%s", name);
	return ioctl(fd, cmd, &r) ? -errno : 0;
}

TEST_F(lim, sessions_beyond_the_limit_get_emfile)
{
	int fds[LIM_SESSIONS], i, fd;

	for (i = 0; i < LIM_SESSIONS; i++) {
		fds[i] = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fds[i]) TH_LOG("open %d: %s", i, strerror(errno));
	}
	EXPECT_EQ(-1, open("/dev/ktrack", O_RDWR | O_CLOEXEC));
	EXPECT_EQ(EMFILE, errno);
	/* A named session is one more: refused too, and the fd stays usable. */
	EXPECT_EQ(-EMFILE, lim_req(fds[0], KTRACK_IOC_SESSION_CREATE, "lim"));
	EXPECT_EQ(0, tp_config(fds[0], 1, KTRACK_MODE_DISCARD));
	/* A closed one frees its slot. */
	close(fds[LIM_SESSIONS - 1]);
	fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	EXPECT_LE(0, fd) TH_LOG("open after close: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
	for (i = 0; i < LIM_SESSIONS - 1; i++)
		close(fds[i]);
}

TEST_F(lim, pages_beyond_the_limit_get_e2big)
{
	__u32 good = 1;
	void *m;
	int fd;

	while ((2 * good + 1) * self->ncpu <= LIM_PAGES)
		good *= 2;
	ASSERT_GE(LIM_PAGES, (good + 1) * self->ncpu) TH_LOG("%d CPUs: limit too low", self->ncpu);
	fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	/* The default (256 pages per CPU) is over: START and mmap refuse. */
	EXPECT_EQ(-1, ioctl(fd, KTRACK_IOC_START));
	EXPECT_EQ(E2BIG, errno);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ(-E2BIG, tp_config(fd, 2 * good, KTRACK_MODE_DISCARD));
	EXPECT_EQ(0, tp_config(fd, good, KTRACK_MODE_DISCARD));
	EXPECT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	EXPECT_EQ(6, write(fd, "fits!", 6));
	EXPECT_EQ(0, ioctl(fd, KTRACK_IOC_STOP));
	close(fd);
}

static int lim_set_param(const char *name, unsigned long v)
{
	char path[128], buf[32];
	int fd, n, ret;

	snprintf(path, sizeof(path), "/sys/module/ktrack/parameters/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%lu", v);
	ret = write(fd, buf, n) == n ? 0 : -errno;
	close(fd);
	return ret;
}

/*
 * The budget of all sessions together: one session of 'good' pages per
 * CPU fits, a second of the same does not (START and mmap: ENOSPC, and it
 * stays usable), a small one still fits, and the pages come back when a
 * session's rings go (close, or SET_CONFIG of a stopped session).
 */
TEST_F(lim, pages_of_all_sessions_beyond_the_budget_get_enospc)
{
	unsigned long one, budget;
	__u32 good = 1;
	int a, b, c;
	void *m;

	while ((2 * good + 1) * self->ncpu <= LIM_PAGES)
		good *= 2;
	one = (unsigned long)(good + 1) * self->ncpu;
	budget = one * 3 / 2;
	ASSERT_LE(2UL * self->ncpu, budget - one);
	ASSERT_EQ(0, lim_set_param("max_total_pages", budget));
	a = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	b = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, tp_config(a, good, KTRACK_MODE_DISCARD));
	ASSERT_EQ(0, tp_config(b, good, KTRACK_MODE_DISCARD));
	ASSERT_EQ(0, ioctl(a, KTRACK_IOC_START));
	EXPECT_EQ(-1, ioctl(b, KTRACK_IOC_START));
	EXPECT_EQ(ENOSPC, errno);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, b, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(ENOSPC, errno);
	/* refused, and still usable: a smaller buffer fits beside 'a' */
	EXPECT_EQ(0, tp_config(b, 1, KTRACK_MODE_DISCARD));
	EXPECT_EQ(0, ioctl(b, KTRACK_IOC_START));
	EXPECT_EQ(6, write(b, "fits!", 6));
	/* a stopped session reconfigured gives its pages back first */
	EXPECT_EQ(0, ioctl(b, KTRACK_IOC_STOP));
	EXPECT_EQ(0, tp_config(b, 2, KTRACK_MODE_DISCARD));
	/* closing 'a' gives its pages back: 'good' fits again */
	EXPECT_EQ(0, ioctl(a, KTRACK_IOC_STOP));
	close(a);
	c = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, c);
	EXPECT_EQ(0, tp_config(c, good, KTRACK_MODE_DISCARD));
	EXPECT_EQ(0, ioctl(c, KTRACK_IOC_START)) TH_LOG("after close: %s", strerror(errno));
	close(c);
	close(b);
	/* every page came back: a budget of exactly one such session fits it */
	ASSERT_EQ(0, lim_set_param("max_total_pages", one));
	c = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, c);
	EXPECT_EQ(0, tp_config(c, good, KTRACK_MODE_DISCARD));
	EXPECT_EQ(0, ioctl(c, KTRACK_IOC_START)) TH_LOG("a page leaked: %s", strerror(errno));
	close(c);
	EXPECT_EQ(0, lim_set_param("max_total_pages", 0));
}

TEST_F(lim, limits_are_visible_in_sysfs)
{
	char buf[32] = "";
	int fd = open("/sys/module/ktrack/parameters/max_sessions", O_RDONLY);

	ASSERT_LE(0, fd);
	ASSERT_LT(0, read(fd, buf, sizeof(buf) - 1));
	close(fd);
	EXPECT_EQ(LIM_SESSIONS, atoi(buf));
}

TEST_HARNESS_MAIN
