// SPDX-License-Identifier: GPL-2.0
/*
 * No ktrack lock is held across a user copy (review finding #4).
 *
 * A copy from or to user memory can stall for as long as userspace likes
 * (userfaultfd, FUSE); mmap() runs with mmap_lock held for write.  So a
 * lock that an ioctl holds across a user copy, and that mmap() or another
 * session also takes, lets one stalled ioctl block mmap() of the same file
 * (on 6.1, a deadlock through mmap_lock), or every other session.
 *
 * Each test stalls one ioctl in a copy from or to a userfaultfd-registered
 * page (the fault is not resolved), checks with the fault message that it
 * is stalled, then runs the other call from a second thread, which must
 * return while the first is still stalled.  Bound: 10 s; then the stall is
 * broken (SIGKILL of the stalled process, or write-unprotect) so that
 * nothing hangs either way.
 */
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "probe_common.h"

#define UA_BOUND_MS	10000

struct ua_call {
	int fd;
	unsigned long cmd;
	void *arg;
	long ret;
	int err;
	int done_pipe;		/* written once the call returned; -1: none */
	void *map;		/* mmap() call: the result */
};

static void *ua_ioctl_thread(void *a)
{
	struct ua_call *c = a;

	c->ret = ioctl(c->fd, c->cmd, c->arg);
	c->err = c->ret < 0 ? errno : 0;
	if (c->done_pipe >= 0 && write(c->done_pipe, "x", 1) != 1)
		c->err = -1;
	return NULL;
}

static void *ua_mmap_thread(void *a)
{
	struct ua_call *c = a;

	c->map = mmap(NULL, getpagesize(), PROT_READ, MAP_SHARED, c->fd, 0);
	c->err = c->map == MAP_FAILED ? errno : 0;
	if (write(c->done_pipe, "M", 1) != 1)
		c->err = -1;
	return NULL;
}

/* A userfaultfd over one fresh anonymous page; 'wp': write-protect mode. */
static int ua_uffd(void **page, bool wp)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = wp ? UFFD_FEATURE_PAGEFAULT_FLAG_WP : 0 };
	struct uffdio_register reg = { .mode = wp ? UFFDIO_REGISTER_MODE_WP :
						     UFFDIO_REGISTER_MODE_MISSING };
	int uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (uffd < 0)
		return -errno;
	if (ioctl(uffd, UFFDIO_API, &api)) {
		close(uffd);
		return -EOPNOTSUPP;
	}
	*page = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (*page == MAP_FAILED) {
		close(uffd);
		return -ENOMEM;
	}
	if (wp)
		memset(*page, 0, getpagesize());	/* populated: only writes fault */
	reg.range.start = (unsigned long)*page;
	reg.range.len = getpagesize();
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		munmap(*page, getpagesize());
		close(uffd);
		return -EOPNOTSUPP;
	}
	return uffd;
}

static int ua_write_protect(int uffd, void *page, bool on)
{
	struct uffdio_writeprotect w = {
		.range = { .start = (unsigned long)page, .len = getpagesize() },
		.mode = on ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};

	return ioctl(uffd, UFFDIO_WRITEPROTECT, &w) ? -errno : 0;
}

/* Wait until a thread faults on the page: returns the message's flags or -1. */
static long long ua_wait_fault(int uffd)
{
	struct pollfd p = { .fd = uffd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&p, 1, UA_BOUND_MS) != 1)
		return -1;
	if (read(uffd, &msg, sizeof(msg)) != sizeof(msg) || msg.event != UFFD_EVENT_PAGEFAULT)
		return -1;
	return msg.arg.pagefault.flags;
}

/* Did the call behind 'pipe_rd' return within the bound? */
static bool ua_returned(int pipe_rd)
{
	struct pollfd p = { .fd = pipe_rd, .events = POLLIN };

	return poll(&p, 1, UA_BOUND_MS) == 1;
}

FIXTURE(ua) {
	int fd;
};

FIXTURE_SETUP(ua)
{
	struct ktrack_config c = { .size = sizeof(c), .buf_pages = 4 };

	ASSERT_EQ(0, pt_load_all());
	self->fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_SET_CONFIG, &c));
}

FIXTURE_TEARDOWN(ua)
{
	close(self->fd);
	pt_unload_all();
}

/* What the first thread stalls in. */
enum ua_case { UA_PROBE_ADD, UA_OBJ_CONFIG, UA_GET_STATS };

/*
 * In a child process: stall the ioctl of 'c' on 'fd' in a fault on a
 * userfaultfd page nobody resolves, report 'F' on 'report', then mmap() the
 * same fd from a second thread and report 'M' once it returned.  Never
 * returns: the parent kills it.  (Before the fix the mapping thread holds
 * mmap_lock for write while it waits, so the fault can be neither resolved
 * (UFFDIO_COPY takes mmap_lock) nor interrupted by a non-fatal signal
 * (kernel-mode faults retry on those): SIGKILL is the one way out.)
 */
static void __attribute__((noreturn)) ua_stall_child(int fd, enum ua_case c, int report)
{
	static struct ktrack_stats st = { .size = sizeof(st), .nr_cpus = 1 };
	struct ua_call stalled = { .fd = fd, .done_pipe = -1 };
	struct ua_call mapper = { .fd = fd, .done_pipe = report };
	pthread_t t1, t2;
	void *page;
	int uffd = ua_uffd(&page, false);

	if (uffd < 0)
		_exit(uffd == -EOPNOTSUPP || uffd == -ENOSYS ? 4 : 1);
	switch (c) {
	case UA_PROBE_ADD:
		stalled.cmd = KTRACK_IOC_PROBE_ADD;
		stalled.arg = page;
		break;
	case UA_OBJ_CONFIG:
		stalled.cmd = KTRACK_IOC_OBJ_CONFIG;
		stalled.arg = page;
		break;
	case UA_GET_STATS:
		stalled.cmd = KTRACK_IOC_GET_STATS;
		st.cpus_ptr = (unsigned long)page;
		stalled.arg = &st;
		break;
	}
	if (pthread_create(&t2, NULL, ua_ioctl_thread, &stalled))
		_exit(1);
	if (ua_wait_fault(uffd) < 0 || write(report, "F", 1) != 1)
		_exit(2);
	/* T2 now sleeps in the fault, inside the ioctl, for good. */
	if (pthread_create(&t1, NULL, ua_mmap_thread, &mapper))
		_exit(1);
	pthread_join(t1, NULL);
	for (;;)
		pause();
}

/* The child's first report: 'F', or its exit status when it gave up. */
static int ua_expect(int rd, char want, int timeout_ms)
{
	struct pollfd p = { .fd = rd, .events = POLLIN };
	char ch;

	if (poll(&p, 1, timeout_ms) != 1 || read(rd, &ch, 1) != 1)
		return -1;
	return ch == want ? 0 : -1;
}

static void ua_mmap_during_stall(struct __test_metadata *_metadata, int fd, enum ua_case c)
{
	int pipefd[2], status = 0;
	bool returned;
	pid_t pid;

	ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(pipefd[0]);
		ua_stall_child(fd, c, pipefd[1]);
	}
	close(pipefd[1]);
	if (ua_expect(pipefd[0], 'F', UA_BOUND_MS)) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 4)
			SKIP(return, "no userfaultfd");
		ASSERT_TRUE(false) TH_LOG("the ioctl never faulted on the page (status %#x)", status);
	}
	returned = !ua_expect(pipefd[0], 'M', UA_BOUND_MS);
	/* Ends the stall either way (a fatal signal aborts the fault). */
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	close(pipefd[0]);
	EXPECT_TRUE(returned) TH_LOG("mmap() waited for an ioctl stalled in a user copy");
	/* the session is unharmed: it maps and starts */
	{
		void *m = mmap(NULL, getpagesize(), PROT_READ, MAP_SHARED, fd, 0);

		EXPECT_NE(MAP_FAILED, m);
		if (m != MAP_FAILED)
			munmap(m, getpagesize());
		EXPECT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	}
}

/* PROBE_ADD copying its request in (the probe part, under s->lock before). */
TEST_F(ua, mmap_while_probe_add_faults_on_copy_in)
{
	ua_mmap_during_stall(_metadata, self->fd, UA_PROBE_ADD);
}

/* OBJ_CONFIG copying its request in (the object tracker part). */
TEST_F(ua, mmap_while_obj_config_faults_on_copy_in)
{
	ua_mmap_during_stall(_metadata, self->fd, UA_OBJ_CONFIG);
}

/* GET_STATS copying the per-CPU entries out (the transport itself). */
TEST_F(ua, mmap_while_get_stats_faults_on_copy_out)
{
	ua_mmap_during_stall(_metadata, self->fd, UA_GET_STATS);
}

/*
 * PROBE_ADD writing its result back (the global probe lock): another
 * session's PROBE_LIST must not wait for it.
 */
TEST_F(ua, probe_list_of_another_session_while_probe_add_faults_on_copy_out)
{
	struct ktrack_probe_info info[4];
	struct ktrack_probe_list list = { .size = sizeof(list), .count = 4,
					  .entries_ptr = (unsigned long)info };
	struct ktrack_probe_add *req;
	struct ua_call stalled = { .fd = self->fd, .cmd = KTRACK_IOC_PROBE_ADD, .done_pipe = -1 };
	struct ua_call lister = { .cmd = KTRACK_IOC_PROBE_LIST, .arg = &list };
	char out[4096];
	size_t len;
	void *blob, *page;
	long long flags;
	pthread_t t1, t2;
	int pipefd[2], uffd;
	bool returned;

	uffd = ua_uffd(&page, true);
	if (uffd == -EOPNOTSUPP || uffd == -ENOSYS)
		SKIP(return, "no userfaultfd write-protect");
	ASSERT_LE(0, uffd);
	blob = pt_compile("p:stall ktrack_tpt_add", NULL, &len, out, sizeof(out));
	ASSERT_NE(NULL, blob) TH_LOG("%s", out);
	req = page;
	req->size = sizeof(*req);
	req->desc_size = len;
	req->desc_ptr = (unsigned long)blob;
	ASSERT_EQ(0, ua_write_protect(uffd, page, true));
	stalled.arg = page;
	lister.fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, lister.fd);
	ASSERT_EQ(0, pipe2(pipefd, O_CLOEXEC));
	lister.done_pipe = pipefd[1];

	ASSERT_EQ(0, pthread_create(&t2, NULL, ua_ioctl_thread, &stalled));
	flags = ua_wait_fault(uffd);
	ASSERT_LE(0, flags) TH_LOG("PROBE_ADD never faulted writing its result");
	ASSERT_TRUE(flags & UFFD_PAGEFAULT_FLAG_WP);
	ASSERT_EQ(0, pthread_create(&t1, NULL, ua_ioctl_thread, &lister));
	returned = ua_returned(pipefd[0]);
	/* Let the write through either way. */
	ASSERT_EQ(0, ua_write_protect(uffd, page, false));
	pthread_join(t2, NULL);
	pthread_join(t1, NULL);
	EXPECT_TRUE(returned) TH_LOG("PROBE_LIST waited for a PROBE_ADD stalled in a user copy");
	EXPECT_EQ(0, lister.ret);
	EXPECT_EQ(0, list.count);
	EXPECT_EQ(0, stalled.ret);
	EXPECT_LT(0, req->id);
	EXPECT_EQ(KTRACK_PROBE_ST_ARMED, req->state);

	close(lister.fd);
	close(pipefd[0]);
	close(pipefd[1]);
	free(blob);
	munmap(page, getpagesize());
	close(uffd);
}

TEST_HARNESS_MAIN
