// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions seen from user space: user markers, named sessions that outlive
 * their creator, the default session for read(), poll wakeups and the
 * watermark, pid and CPU filters, the ktrack trace events, and ioctls that
 * race on one fd.  The mapping and process lifecycle cases are in
 * transport_lifecycle.c; the fixture is transport_life.h.
 */
#pragma GCC diagnostic ignored "-Wclobbered"	/* see transport_accounting.c */
#include "kselftest_harness.h"
#include "transport_lib.h"
#include "transport_life.h"

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

/*
 * A reader at a watermark is woken once per watermark's worth of records,
 * never once per record (issue 16): a child writes 3,000 marker records of
 * 128 bytes on CPU 0 while the parent polls at an 8 KiB watermark and
 * drains everything after each poll().  Each arming of a ring sends at
 * most one wake-up, and only with 8 KiB unread.  A poll() arms when it
 * starts and again when it wakes (the kernel calls ->poll once more, with
 * the watermark's bytes still unread: a commit before the drain may send
 * a second wake-up for them), and each drain cycle with a wake-up read
 * 8 KiB that came after the previous drain: at most 2 * (bytes / 8 KiB + 1)
 * wake-ups for 3,000 records.  The counters come in both entry layouts.
 */
TEST_F(life, wakeups_one_per_watermark_not_per_record)
{
	struct ktrack_config c = { .size = sizeof(c), .buf_pages = 64, .wakeup_bytes = 8192 };
	struct ktrack_cpu_stats_ext ext[TP_MAX_CPUS];
	struct ktrack_cpu_stats cs[TP_MAX_CPUS];
	struct ktrack_stats st = { .size = sizeof(st) };
	int fd = open("/dev/ktrack", O_RDWR | O_NONBLOCK), ncpu, i, status = -1, child_done = 0;
	__u64 wakeups = 0, written = 0, bytes = 0, got = 0;
	struct pollfd p = { .events = POLLIN };
	static char buf[1 << 16];
	char text[103];
	cpu_set_t set;
	pid_t pid;

	ASSERT_LE(0, fd);
	ncpu = tp_nr_cpus(fd);
	ASSERT_LT(0, ncpu);
	ASSERT_GE(TP_MAX_CPUS, ncpu);
	p.fd = fd;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_SET_CONFIG, &c));
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* 24-byte header + 103 bytes of text + NUL: 128-byte records. */
		memset(text, 'w', sizeof(text));
		for (i = 0; i < 3000; i++) {
			if (write(fd, text, sizeof(text)) != sizeof(text))
				_exit(1);
			if (i % 50 == 0)
				usleep(1000);	/* let the reader sleep now and then */
		}
		_exit(0);
	}
	for (;;) {
		ssize_t n;

		while ((n = read(fd, buf, sizeof(buf))) > 0)
			got += n;
		ASSERT_EQ(-1, n);
		ASSERT_EQ(EAGAIN, errno);
		if (child_done)
			break;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			child_done = 1;	/* one last drain */
			continue;
		}
		ASSERT_LE(0, poll(&p, 1, 100));
	}
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_STOP));

	memset(ext, 0xff, sizeof(ext));
	st.nr_cpus = ncpu;
	st.cpus_ptr = (uintptr_t)ext;
	st.cpu_stats_size = sizeof(ext[0]);
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_GET_STATS, &st));
	for (i = 0; i < ncpu; i++) {
		wakeups += ext[i].wakeups;
		written += ext[i].s.written;
		bytes += ext[i].s.bytes;
	}
	EXPECT_EQ(3000, written);
	EXPECT_EQ(3000 * 128, bytes);
	EXPECT_EQ(bytes, got);
	TH_LOG("%llu wake-ups for %llu records (%llu bytes) at an 8 KiB watermark",
	       (unsigned long long)wakeups, (unsigned long long)written, (unsigned long long)bytes);
	EXPECT_LE(1, wakeups);
	EXPECT_GE(2 * (bytes / 8192 + 1), wakeups);

	/* Without cpu_stats_size: the first struct's stride, as built. */
	ASSERT_EQ(0, tp_stats(fd, cs, ncpu, NULL));
	for (i = 0; i < ncpu; i++) {
		EXPECT_EQ(i, cs[i].cpu);
		EXPECT_EQ(ext[i].s.written, cs[i].written);
		EXPECT_EQ(ext[i].s.bytes, cs[i].bytes);
	}
	/* A larger entry: the tail past the kernel's struct is zeroed. */
	{
		__u64 big[TP_MAX_CPUS][12];

		memset(big, 0xff, sizeof(big));
		st.cpus_ptr = (uintptr_t)big;
		st.cpu_stats_size = sizeof(big[0]);
		ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_GET_STATS, &st));
		for (i = 0; i < ncpu; i++) {
			EXPECT_EQ(ext[i].wakeups, big[i][8]);
			EXPECT_EQ(0, big[i][9] | big[i][10] | big[i][11]);
		}
	}
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

/*
 * A tool probing for commands it does not know leaves the fd attachable:
 * commands outside every range, and unknown ones inside the probe and
 * object-tracker ranges (a newer tool's command, or a known number with
 * another size).
 */
TEST_F(life, unknown_command_leaves_a_fresh_fd_attachable)
{
	int owner = open("/dev/ktrack", O_RDWR), fd = open("/dev/ktrack", O_RDWR);
	const unsigned long unknown[] = {
		_IO(KTRACK_IOC_MAGIC, 0x1f), _IO(KTRACK_IOC_MAGIC, 0x7f),
		_IO(KTRACK_IOC_MAGIC, 0x2f), _IO(KTRACK_IOC_MAGIC, 0x3f),
		_IOWR(KTRACK_IOC_MAGIC, 0x20, __u64), _IOWR(KTRACK_IOC_MAGIC, 0x36, __u64),
	};
	__u64 arg = 0;
	size_t i;

	ASSERT_LE(0, owner);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, req(owner, KTRACK_IOC_SESSION_CREATE, "probed", 0));
	for (i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		EXPECT_EQ(-1, ioctl(fd, unknown[i], &arg)) TH_LOG("cmd %#lx", unknown[i]);
		EXPECT_EQ(ENOTTY, errno) TH_LOG("cmd %#lx", unknown[i]);
	}
	EXPECT_EQ(0, req(fd, KTRACK_IOC_SESSION_ATTACH, "probed", 0));
	close(fd);
	req(owner, KTRACK_IOC_SESSION_DESTROY, "probed", 0);
	close(owner);
}

TEST_HARNESS_MAIN
