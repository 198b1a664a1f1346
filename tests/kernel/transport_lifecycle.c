// SPDX-License-Identifier: GPL-2.0
/*
 * Session and mapping lifecycle: close with a live mapping, a reader killed
 * in poll or read, fork / MADV_DOFORK / mremap of a mapping, rmmod while a
 * session exists, 100 open/start/stop/close cycles without leaks and the
 * capability check.  Markers, named sessions, poll, filters and the trace
 * events are in transport_sessions.c; the fixture is transport_life.h.
 */
#pragma GCC diagnostic ignored "-Wclobbered"	/* see transport_accounting.c */
#include "kselftest_harness.h"
#include "transport_lib.h"
#include "transport_life.h"

#include <linux/capability.h>
#include <signal.h>

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

TEST_HARNESS_MAIN
