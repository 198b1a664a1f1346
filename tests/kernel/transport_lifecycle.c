// SPDX-License-Identifier: GPL-2.0
/*
 * Session and mapping lifecycle: close with a live mapping, a reader killed
 * in poll, fork / MADV_DOFORK / mremap of a mapping, rmmod while a session
 * exists, 100 open/start/stop/close cycles without leaks, capability check,
 * user markers, named sessions, the default session for read(), poll
 * wakeups, filters and the ktrack trace events.
 */
#pragma GCC diagnostic ignored "-Wclobbered"	/* see transport_accounting.c */
#include "kselftest_harness.h"
#include "transport_lib.h"

#include <linux/capability.h>
#include <sched.h>
#include <signal.h>

FIXTURE(life) {
	long page;
};

FIXTURE_SETUP(life)
{
	ASSERT_EQ(0, tp_load());
	self->page = sysconf(_SC_PAGESIZE);
}

FIXTURE_TEARDOWN(life)
{
	struct ktrack_session_req r = { .size = sizeof(r), .flags = KTRACK_SESSION_F_ALL };
	int fd = open("/dev/ktrack", O_RDWR);

	if (fd >= 0) {
		ioctl(fd, KTRACK_IOC_SESSION_DESTROY, &r);
		close(fd);
	}
	kt_tracefs_write("events/ktrack/enable", "0");
	kt_tracefs_write("trace", "");
	tp_unload();
}

static int refcnt(void)
{
	char buf[32] = "";
	int fd = open("/sys/module/ktrack/refcnt", O_RDONLY);

	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fd);
	return atoi(buf);
}

/* vmalloc areas of session buffers still allocated. */
static int ring_areas(void)
{
	char out[64];

	kt_run(out, sizeof(out), "grep -c ktrack_rings_alloc /proc/vmallocinfo");
	return atoi(out);
}

static int req(int fd, unsigned long cmd, const char *name, __u32 flags)
{
	struct ktrack_session_req r = { .size = sizeof(r), .flags = flags };

	strncpy(r.name, name, sizeof(r.name) - 1);
	return ioctl(fd, cmd, &r) ? -errno : 0;
}

/* First MARKER text found by read()ing 'fd' to the end (stopped session). */
static int read_marker(int fd, char *text, size_t len)
{
	static __u8 buf[1 << 16];
	ssize_t n, off;

	text[0] = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (off = 0; off < n; off += ((struct ktrack_rec_hdr *)(buf + off))->len) {
			struct ktrack_rec_hdr *h = (void *)(buf + off);

			if (h->type == KTRACK_REC_MARKER && !text[0])
				snprintf(text, len, "%s", (char *)(h + 1));
		}
	return n < 0 ? -errno : 0;
}

/* Markers go to the ring of the writer's CPU: write from CPU 0's. */
static void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Finds a MARKER 'text' in the data pages of a 4-page ring. */
static bool marker_in(const __u8 *data, __u64 head, const char *text)
{
	__u64 off = 0;

	while (off < head) {
		const struct ktrack_rec_hdr *h = (const void *)(data + off);

		if (h->len < 8)
			return false;
		if (h->type == KTRACK_REC_MARKER && !strcmp((const char *)(h + 1), text))
			return true;
		off += h->len;
	}
	return false;
}

TEST_F(life, close_with_live_mmap_then_rmmod)
{
	int fd = tp_open(4, KTRACK_MODE_DISCARD);
	struct ktrack_ring_ctrl *ctrl;
	__u8 *data;

	ASSERT_LE(0, fd);
	ctrl = mmap(NULL, self->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, ctrl);
	data = mmap(NULL, 4 * self->page, PROT_READ, MAP_SHARED, fd, self->page);
	ASSERT_NE(MAP_FAILED, data);
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	pin_cpu0();
	ASSERT_EQ(5, write(fd, "alive", 5));
	close(fd);	/* the mappings keep the session (frozen) */
	EXPECT_LT(0, ctrl->data_head);
	EXPECT_TRUE(marker_in(data, ctrl->data_head, "alive"));
	ASSERT_EQ(0, kt_rmmod("ktrack_test_emit"));
	EXPECT_EQ(-EAGAIN, kt_rmmod("ktrack"));	/* the mappings pin it */
	EXPECT_TRUE(kt_module_loaded("ktrack"));
	munmap(data, 4 * self->page);
	munmap(ctrl, self->page);
	EXPECT_EQ(0, kt_rmmod("ktrack"));
	EXPECT_EQ(0, ring_areas());
}

TEST_F(life, kill_reader_blocked_in_poll)
{
	int base = refcnt();
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = tp_open(4, KTRACK_MODE_DISCARD);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char c;

		if (fd < 0 || ioctl(fd, KTRACK_IOC_START))
			_exit(2);
		poll(&p, 1, -1);
		read(fd, &c, 1);	/* blocks too, if poll ever returned */
		_exit(3);
	}
	usleep(300000);
	EXPECT_EQ(base + 1, refcnt());	/* the child's session */
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(base, refcnt());
	EXPECT_EQ(0, ring_areas());
}

TEST_F(life, kill_reader_blocked_in_read)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = tp_open(4, KTRACK_MODE_DISCARD);
		char buf[4096];

		if (fd < 0 || ioctl(fd, KTRACK_IOC_START))
			_exit(2);
		read(fd, buf, sizeof(buf));
		_exit(3);
	}
	usleep(300000);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(0, kt_rmmod("ktrack_test_emit"));
	EXPECT_EQ(0, kt_rmmod("ktrack"));
}

TEST_F(life, fork_does_not_inherit_the_mapping)
{
	int fd = tp_open(4, KTRACK_MODE_DISCARD);
	volatile __u8 *data;
	int status;
	pid_t pid;

	ASSERT_LE(0, fd);
	data = mmap(NULL, 4 * self->page, PROT_READ, MAP_SHARED, fd, self->page);
	ASSERT_NE(MAP_FAILED, data);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		(void)data[0];	/* VM_DONTCOPY: not mapped here */
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
	EXPECT_EQ(0, data[0] & 0);
	munmap((void *)data, 4 * self->page);
	close(fd);
}

TEST_F(life, madv_dofork_mapping_outlives_session_safely)
{
	int fd = tp_open(4, KTRACK_MODE_DISCARD);
	struct ktrack_ring_ctrl *ctrl;
	__u8 *data;
	int pfd[2], status, rc;
	pid_t pid;
	char c;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pipe(pfd));
	ctrl = mmap(NULL, self->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	data = mmap(NULL, 4 * self->page, PROT_READ, MAP_SHARED, fd, self->page);
	ASSERT_NE(MAP_FAILED, ctrl);
	ASSERT_NE(MAP_FAILED, data);
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	pin_cpu0();
	ASSERT_EQ(6, write(fd, "shared", 6));
	rc = madvise(data, 4 * self->page, MADV_DOFORK);
	madvise(ctrl, self->page, MADV_DOFORK);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(fd);
		/* Wait until the parent closed and unmapped everything. */
		if (read(pfd[0], &c, 1) != 1)
			_exit(4);
		if (rc == 0)
			_exit(marker_in(data, ctrl->data_head, "shared") ? 0 : 5);
		_exit(0);
	}
	close(fd);
	munmap(data, 4 * self->page);
	munmap(ctrl, self->page);
	ASSERT_EQ(1, write(pfd[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("madvise %d", rc);
	EXPECT_EQ(0, kt_rmmod("ktrack_test_emit"));
	EXPECT_EQ(0, kt_rmmod("ktrack"));
}

TEST_F(life, mremap_moves_but_never_grows)
{
	int fd = tp_open(4, KTRACK_MODE_DISCARD);
	struct ktrack_ring_ctrl *ctrl;
	__u8 *data, *moved, *hole;

	ASSERT_LE(0, fd);
	ctrl = mmap(NULL, self->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	data = mmap(NULL, 4 * self->page, PROT_READ, MAP_SHARED, fd, self->page);
	ASSERT_NE(MAP_FAILED, data);
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	pin_cpu0();
	ASSERT_EQ(5, write(fd, "moved", 5));
	EXPECT_EQ(MAP_FAILED, mremap(data, 4 * self->page, 8 * self->page, MREMAP_MAYMOVE));
	hole = mmap(NULL, 4 * self->page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	moved = mremap(data, 4 * self->page, 4 * self->page, MREMAP_MAYMOVE | MREMAP_FIXED, hole);
	ASSERT_NE(MAP_FAILED, moved);
	EXPECT_TRUE(marker_in(moved, ctrl->data_head, "moved"));
	close(fd);
	munmap(moved, 4 * self->page);
	munmap(ctrl, self->page);
	EXPECT_EQ(0, kt_rmmod("ktrack_test_emit"));
	EXPECT_EQ(0, kt_rmmod("ktrack"));
}

TEST_F(life, rmmod_with_session_open_fails_cleanly_then_succeeds)
{
	int fd = tp_open(4, KTRACK_MODE_DISCARD);
	char text[64];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kt_rmmod("ktrack_test_emit"));
	EXPECT_EQ(-EAGAIN, kt_rmmod("ktrack"));
	EXPECT_TRUE(kt_module_loaded("ktrack"));
	/* The session is unharmed. */
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	ASSERT_EQ(2, write(fd, "ok", 2));
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_STOP));
	ASSERT_EQ(0, read_marker(fd, text, sizeof(text)));
	EXPECT_STREQ("ok", text);
	close(fd);
	EXPECT_EQ(0, kt_rmmod("ktrack"));
}

TEST_F(life, hundred_cycles_leave_no_leak)
{
	int base = refcnt(), i;

	ASSERT_LE(0, base);
	for (i = 0; i < 100; i++) {
		int fd = tp_open(i % 2 ? 1 : 4, i % 3 == 0 ? KTRACK_MODE_OVERWRITE : KTRACK_MODE_DISCARD);

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
		ASSERT_EQ(4, write(fd, "loop", 4));
		ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_STOP));
		close(fd);
	}
	EXPECT_EQ(base, refcnt());
	EXPECT_EQ(0, ring_areas());
	EXPECT_EQ(0, kt_rmmod("ktrack_test_emit"));
	EXPECT_EQ(0, kt_rmmod("ktrack"));
}

TEST_F(life, open_without_capabilities_is_refused)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
		struct __user_cap_data_struct d[2] = {};

		/* Still uid 0 (owner of the 0600 node), but no capability. */
		if (syscall(SYS_capset, &h, d))
			_exit(3);
		_exit(open("/dev/ktrack", O_RDWR) < 0 && errno == EPERM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(life, write_inserts_a_marker_record)
{
	int fd = tp_open(4, KTRACK_MODE_DISCARD);
	static __u8 buf[1 << 16];
	struct ktrack_rec_hdr *h;
	ssize_t n;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	ASSERT_EQ(12, write(fd, "hello marker", 12));
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_STOP));
	n = read(fd, buf, sizeof(buf));
	ASSERT_LE((ssize_t)sizeof(*h), n);
	h = (void *)buf;
	EXPECT_EQ(KTRACK_REC_MARKER, h->type);
	EXPECT_EQ(sizeof(*h) + 16, h->len);	/* 12 + NUL, 8-aligned */
	EXPECT_STREQ("hello marker", (char *)(h + 1));
	EXPECT_EQ(getpid(), h->pid);
	EXPECT_EQ(getpid(), h->tgid);
	EXPECT_EQ(KTRACK_RECF_CTX_TASK, h->flags & KTRACK_RECF_CTX_MASK);
	EXPECT_EQ(0, read(fd, buf, sizeof(buf)));	/* stopped + drained: EOF */
	close(fd);
}

TEST_F(life, named_session_survives_its_creator)
{
	struct ktrack_session_info info[4];
	struct ktrack_session_list l = { .size = sizeof(l), .count = 4,
					 .entries_ptr = (uintptr_t)info };
	struct ktrack_config c = { .size = sizeof(c) };
	int status, fd;
	char text[64];
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		int cfd = open("/dev/ktrack", O_RDWR);

		if (cfd < 0 || req(cfd, KTRACK_IOC_SESSION_CREATE, "keep", 0) ||
		    tp_config(cfd, 8, KTRACK_MODE_OVERWRITE) || ioctl(cfd, KTRACK_IOC_START) ||
		    write(cfd, "from child", 10) != 10)
			_exit(1);
		_exit(0);	/* exits with the session running */
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	fd = open("/dev/ktrack", O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_SESSION_LIST, &l));
	ASSERT_EQ(1, l.count);
	EXPECT_STREQ("keep", info[0].name);
	EXPECT_EQ(0, info[0].nr_fds);
	EXPECT_EQ(KTRACK_STATE_RUNNING, info[0].state);
	EXPECT_EQ(8, info[0].buf_pages);
	EXPECT_EQ(-EEXIST, req(fd, KTRACK_IOC_SESSION_CREATE, "keep", 0));
	ASSERT_EQ(0, req(fd, KTRACK_IOC_SESSION_ATTACH, "keep", 0));
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_GET_CONFIG, &c));
	EXPECT_EQ(8, c.buf_pages);
	EXPECT_EQ(KTRACK_MODE_OVERWRITE, c.mode);
	/* A named session pins the module. */
	close(fd);
	EXPECT_EQ(0, kt_rmmod("ktrack_test_emit"));
	EXPECT_EQ(-EAGAIN, kt_rmmod("ktrack"));
	fd = open("/dev/ktrack", O_RDWR);
	ASSERT_EQ(0, req(fd, KTRACK_IOC_SESSION_ATTACH, "keep", 0));
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_STOP));
	ASSERT_EQ(0, read_marker(fd, text, sizeof(text)));
	EXPECT_STREQ("from child", text);
	close(fd);
	fd = open("/dev/ktrack", O_RDWR);
	ASSERT_EQ(0, req(fd, KTRACK_IOC_SESSION_CREATE, "second", 0));
	close(fd);
	fd = open("/dev/ktrack", O_RDWR);
	EXPECT_EQ(0, req(fd, KTRACK_IOC_SESSION_DESTROY, "keep", 0));
	EXPECT_EQ(-ENOENT, req(fd, KTRACK_IOC_SESSION_ATTACH, "keep", 0));
	EXPECT_EQ(0, req(fd, KTRACK_IOC_SESSION_DESTROY, "", KTRACK_SESSION_F_ALL));
	l.count = 4;
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_SESSION_LIST, &l));
	EXPECT_EQ(0, l.count);
	close(fd);
	EXPECT_EQ(0, kt_rmmod("ktrack"));
}

TEST_F(life, destroy_wakes_attached_reader_with_pollhup)
{
	int fd = open("/dev/ktrack", O_RDWR), fd2;
	struct pollfd p = { .events = POLLIN };

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, req(fd, KTRACK_IOC_SESSION_CREATE, "gone", 0));
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	fd2 = open("/dev/ktrack", O_RDWR);
	ASSERT_EQ(0, req(fd2, KTRACK_IOC_SESSION_DESTROY, "gone", 0));
	p.fd = fd;
	ASSERT_EQ(1, poll(&p, 1, 1000));
	EXPECT_TRUE(p.revents & POLLHUP);
	EXPECT_EQ(-1, ioctl(fd, KTRACK_IOC_START));
	EXPECT_EQ(ENODEV, errno);
	close(fd);
	close(fd2);
}

TEST_F(life, cat_reads_the_default_session)
{
	int fd = open("/dev/ktrack", O_RDWR);
	char out[4096];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, req(fd, KTRACK_IOC_SESSION_CREATE, KTRACK_DEFAULT_SESSION, 0));
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	ASSERT_EQ(9, write(fd, "for cat 1", 9));
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_STOP));
	/* cat opens a fresh fd: its first read() attaches to "default". */
	ASSERT_EQ(0, kt_run(out, sizeof(out), "cat /dev/ktrack > /tmp/kt_cat.bin && "
			    "grep -c 'for cat 1' /tmp/kt_cat.bin"));
	EXPECT_EQ(1, atoi(out)) TH_LOG("%s", out);
	close(fd);
}

TEST_F(life, poll_watermark_and_flush)
{
	struct ktrack_config c = { .size = sizeof(c), .buf_pages = 4, .wakeup_bytes = 8192 };
	int fd = open("/dev/ktrack", O_RDWR);
	struct pollfd p = { .events = POLLIN };

	ASSERT_LE(0, fd);
	p.fd = fd;
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_SET_CONFIG, &c));
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	ASSERT_EQ(5, write(fd, "small", 5));
	EXPECT_EQ(0, poll(&p, 1, 0));	/* below the watermark */
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_FLUSH));
	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_TRUE(p.revents & POLLIN);
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_STOP));
	close(fd);
}

TEST_F(life, poll_wakes_a_sleeping_reader)
{
	int fd = tp_open(4, KTRACK_MODE_DISCARD);
	struct pollfd p = { .events = POLLIN };
	pid_t pid;

	ASSERT_LE(0, fd);
	p.fd = fd;
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		usleep(200000);
		_exit(write(fd, "wake", 4) == 4 ? 0 : 1);
	}
	EXPECT_EQ(1, poll(&p, 1, 10000));
	EXPECT_TRUE(p.revents & POLLIN);
	waitpid(pid, NULL, 0);
	close(fd);
}

TEST_F(life, pid_and_cpu_filters)
{
	struct ktrack_config c = { .size = sizeof(c), .buf_pages = 4, .nr_pids = 1,
				   .pids = { 1 } };
	struct ktrack_cpu_stats cs[TP_MAX_CPUS];
	int fd = open("/dev/ktrack", O_RDWR), ncpu, i;
	__u64 filtered = 0, written = 0;
	cpu_set_t set;

	ASSERT_LE(0, fd);
	ncpu = tp_nr_cpus(fd);
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_SET_CONFIG, &c));
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	EXPECT_EQ(-1, write(fd, "filtered", 8));	/* we are not pid 1 */
	EXPECT_EQ(ENOSPC, errno);
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_STOP));
	/* Only CPU 1, while we run on CPU 0. */
	memset(&c, 0, sizeof(c));
	c.size = sizeof(c);
	c.buf_pages = 4;
	c.cpu_mask = 2;
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_SET_CONFIG, &c));
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	EXPECT_EQ(-1, write(fd, "cpu0", 4));
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	EXPECT_EQ(4, write(fd, "cpu1", 4));
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_STOP));
	ASSERT_EQ(0, tp_stats(fd, cs, ncpu, NULL));
	for (i = 0; i < ncpu; i++) {
		filtered += cs[i].filtered;
		written += cs[i].written;
	}
	EXPECT_EQ(2, filtered);
	EXPECT_EQ(1, written);
	EXPECT_EQ(1, cs[1].written);
	close(fd);
}

TEST_F(life, trace_events_report_lifecycle_and_overflow)
{
	char *buf = malloc(1 << 20);
	char text[100];
	int fd, i;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, kt_tracefs_write("trace", ""));
	ASSERT_EQ(0, kt_tracefs_write("events/ktrack/enable", "1"));
	fd = tp_open(1, KTRACK_MODE_OVERWRITE);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	memset(text, 'x', sizeof(text));
	for (i = 0; i < 200; i++)
		ASSERT_EQ(sizeof(text), write(fd, text, sizeof(text)));
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_STOP));
	close(fd);
	ASSERT_EQ(0, kt_tracefs_write("events/ktrack/enable", "0"));
	ASSERT_LT(0, kt_tracefs_read("trace", buf, 1 << 20));
	EXPECT_NE(NULL, strstr(buf, "ktrack_session_start: id="));
	EXPECT_NE(NULL, strstr(buf, "ktrack_session_stop: id="));
	EXPECT_NE(NULL, strstr(buf, "ktrack_session_close: id="));
	EXPECT_NE(NULL, strstr(buf, "reason=overwritten"));
	free(buf);
}

/*
 * START (which allocates the rings under the session lock) and
 * SESSION_CREATE (which takes the sessions table lock, then the fd's
 * session lock) from two threads on one fd: the lock order must hold (a
 * cycle here deadlocked both threads in D state, and every later session
 * operation with them).
 */
struct create_race {
	int fd;
	char name[16];
	int ret;
};

static void *create_on_fd(void *arg)
{
	struct create_race *c = arg;

	c->ret = req(c->fd, KTRACK_IOC_SESSION_CREATE, c->name, 0);
	return NULL;
}

TEST_F(life, start_and_create_on_one_fd_do_not_deadlock)
{
	int i;

	for (i = 0; i < 40; i++) {
		struct create_race c = { .fd = tp_open(1024, KTRACK_MODE_DISCARD) };
		pthread_t th;

		ASSERT_LE(0, c.fd);
		snprintf(c.name, sizeof(c.name), "race%d", i);
		ASSERT_EQ(0, pthread_create(&th, NULL, create_on_fd, &c));
		ioctl(c.fd, KTRACK_IOC_START);	/* either order is fine; a hang is not */
		ASSERT_EQ(0, pthread_join(th, NULL));
		/* CREATE after START: EBUSY (the fd's session is in use); before: 0 */
		EXPECT_TRUE(c.ret == 0 || c.ret == -EBUSY) TH_LOG("create: %d", c.ret);
		req(c.fd, KTRACK_IOC_SESSION_DESTROY, c.name, 0);
		close(c.fd);
	}
}

/* A tool probing for commands it does not know leaves the fd attachable. */
TEST_F(life, unknown_command_leaves_a_fresh_fd_attachable)
{
	int owner = open("/dev/ktrack", O_RDWR), fd = open("/dev/ktrack", O_RDWR);

	ASSERT_LE(0, owner);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, req(owner, KTRACK_IOC_SESSION_CREATE, "probed", 0));
	EXPECT_EQ(-1, ioctl(fd, _IO(KTRACK_IOC_MAGIC, 0x1f)));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, _IO(KTRACK_IOC_MAGIC, 0x7f)));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(0, req(fd, KTRACK_IOC_SESSION_ATTACH, "probed", 0));
	close(fd);
	req(owner, KTRACK_IOC_SESSION_DESTROY, "probed", 0);
	close(owner);
}

TEST_HARNESS_MAIN
