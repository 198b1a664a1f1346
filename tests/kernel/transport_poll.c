// SPDX-License-Identifier: GPL-2.0
/*
 * poll/epoll on a file that changes session (review finding #1).
 *
 * A fresh fd may be attached to a named session (SESSION_ATTACH, or the
 * implicit attach of read() to "default") after it was polled.  Its poll
 * entries must stay valid and keep reporting: the wait queue belongs to the
 * file, and whichever session it is attached to wakes it.  Before the fix
 * the entry stayed on the anonymous session's queue, which was freed with
 * that session: epoll never reported the new session's data again (and
 * closing the fd wrote into freed memory).
 *
 * And poll() on a session whose rings are being allocated (review finding
 * #2): poll() takes no session lock, and START used to publish the ring
 * array before filling it (NULL dereference), then free it on failure.
 */
#include <sched.h>
#include <sys/epoll.h>

#include "kselftest_harness.h"
#include "transport_lib.h"

#define PL_BOUND_MS 10000

static int pl_req(int fd, unsigned long cmd, const char *name)
{
	struct ktrack_session_req r = { .size = sizeof(r) };

	snprintf(r.name, sizeof(r.name), "%s", name);
	return ioctl(fd, cmd, &r) ? -errno : 0;
}

FIXTURE(pl) {
	int owner;	/* created the named session "pl" */
};

FIXTURE_SETUP(pl)
{
	ASSERT_EQ(0, tp_load());
	self->owner = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->owner);
	ASSERT_EQ(0, pl_req(self->owner, KTRACK_IOC_SESSION_CREATE, "pl"));
	ASSERT_EQ(0, tp_config(self->owner, 4, KTRACK_MODE_DISCARD));
	ASSERT_EQ(0, ioctl(self->owner, KTRACK_IOC_START));
}

FIXTURE_TEARDOWN(pl)
{
	pl_req(self->owner, KTRACK_IOC_SESSION_DESTROY, "pl");
	close(self->owner);
	tp_unload();
}

/* Drain what 'fd' can read now (non-blocking). */
static void pl_drain(int fd)
{
	static char buf[1 << 16];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

TEST_F(pl, epoll_follows_session_attach)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	int fd, ep;

	fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, fd);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	/* polled on its anonymous session; now it changes session */
	ASSERT_EQ(0, pl_req(fd, KTRACK_IOC_SESSION_ATTACH, "pl"));
	/* 1: data after the attach is reported */
	ASSERT_EQ(6, write(self->owner, "first", 6));
	ASSERT_EQ(1, epoll_wait(ep, &out, 1, PL_BOUND_MS));
	EXPECT_TRUE(out.events & EPOLLIN);
	pl_drain(fd);
	EXPECT_EQ(0, epoll_wait(ep, &out, 1, 0));
	/* 2: and so is the next data (the poll entry is still live) */
	ASSERT_EQ(7, write(self->owner, "second", 7));
	EXPECT_EQ(1, epoll_wait(ep, &out, 1, PL_BOUND_MS))
		TH_LOG("epoll lost the session the fd was attached to");
	close(ep);
	close(fd);
}

struct pl_spin {
	int fd;
	volatile int stop;
	unsigned long polls;
};

static void *pl_poll_spin(void *a)
{
	struct pl_spin *sp = a;
	struct pollfd p = { .fd = sp->fd, .events = POLLIN };

	while (!sp->stop) {
		poll(&p, 1, 0);
		sp->polls++;
	}
	return NULL;
}

/*
 * A thread polls without pause while START allocates large rings (a wide
 * window: vmalloc and zeroing per CPU).  Before the fix the poller
 * dereferenced the NULL entries of the half-filled array and the kernel
 * oopsed; every iteration is a chance, none is needed to pass.
 */
TEST_F(pl, poll_while_start_allocates_the_rings)
{
	int i;

	for (i = 0; i < 6; i++) {
		struct pl_spin sp = { .fd = tp_open(2048, KTRACK_MODE_DISCARD) };
		pthread_t t;

		ASSERT_LE(0, sp.fd);
		ASSERT_EQ(0, pthread_create(&t, NULL, pl_poll_spin, &sp));
		/* the poller is running before START */
		while (!__atomic_load_n(&sp.polls, __ATOMIC_RELAXED))
			sched_yield();
		EXPECT_EQ(0, ioctl(sp.fd, KTRACK_IOC_START));
		sp.stop = 1;
		pthread_join(t, NULL);
		EXPECT_EQ(0, ioctl(sp.fd, KTRACK_IOC_STOP));
		/* and SET_CONFIG frees them again while it polls */
		sp.stop = 0;
		sp.polls = 0;
		ASSERT_EQ(0, pthread_create(&t, NULL, pl_poll_spin, &sp));
		while (!__atomic_load_n(&sp.polls, __ATOMIC_RELAXED))
			sched_yield();
		EXPECT_EQ(0, tp_config(sp.fd, 1024, KTRACK_MODE_DISCARD));
		sp.stop = 1;
		pthread_join(t, NULL);
		close(sp.fd);
	}
}

TEST_HARNESS_MAIN
