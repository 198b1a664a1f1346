// SPDX-License-Identifier: GPL-2.0
/*
 * churn_sessions - named sessions created and destroyed while readers
 * attach to them, map their rings and block in read():
 * 100 * $KTRACK_STRESS_SCALE cycles (1,000 in make check-stress).
 *
 * One thread creates "race", configures, starts, writes markers, then
 * stops and destroys it (every third cycle it destroys it while it runs)
 * and closes.  Reader threads attach by name and either map the first
 * CPU's control and data pages and read them, or block in read() until
 * the session ends.  Nothing may hang (a stalled thread fails the run
 * with its kernel stack), a destroyed session's readers must be woken,
 * the kernel log must stay clean, and once every fd is closed ktrack's
 * allocation counters read zero.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include <uapi/ktrack.h>
#include "stress_lib.h"

#define PAGES	2
#define READERS	3

static atomic_int done;
static atomic_ulong attached, mapped, reads, ends;

static int session_req(int fd, unsigned long cmd)
{
	struct ktrack_session_req q = { .size = sizeof(q) };

	snprintf(q.name, sizeof(q.name), "race");
	return ioctl(fd, cmd, &q) ? -errno : 0;
}

static void *reader_fn(void *arg)
{
	int w = st_watch("a reader"), n = 0;
	static __thread char buf[1 << 16];

	(void)arg;
	while (!atomic_load(&done)) {
		int fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);

		st_alive(w);
		if (fd < 0)
			break;
		if (session_req(fd, KTRACK_IOC_SESSION_ATTACH) == 0) {
			atomic_fetch_add(&attached, 1);
			if (n++ % 2) {
				size_t len = (size_t)(1 + PAGES) * 4096;
				volatile struct ktrack_ring_ctrl *c =
					mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);

				if (c != MAP_FAILED) {
					/* The pages stay readable after the session ends. */
					uint64_t head = c->data_head, sum = 0, k;

					for (k = 0; k < PAGES * 4096; k += 512)
						sum += ((volatile char *)c)[4096 + k];
					(void)head, (void)sum;
					atomic_fetch_add(&mapped, 1);
					munmap((void *)c, len);
				}
			} else {
				ssize_t r;

				/* Blocks until data, stop or destroy. */
				while ((r = read(fd, buf, sizeof(buf))) > 0) {
					atomic_fetch_add(&reads, 1);
					st_alive(w);
				}
				atomic_fetch_add(&ends, 1);
			}
		}
		close(fd);
	}
	st_unwatch(w);
	return NULL;
}

int main(void)
{
	int cycles = 100 * st_scale(), i, bad = 0, w;
	pthread_t th[READERS];
	char alloc[1024];
	const char *why = "";

	printf("TAP version 13\n1..2\n");
	if (!kt_module_loaded("ktrack") && kt_insmod(kt_module_path("kmod/ktrack.ko"), NULL)) {
		printf("Bail out! cannot load ktrack.ko\n");
		return 1;
	}
	st_start_watchdog(60);
	for (i = 0; i < READERS; i++)
		pthread_create(&th[i], NULL, reader_fn, NULL);
	w = st_watch("the create/destroy loop");
	for (i = 0; i < cycles && !bad; i++) {
		struct ktrack_config c = { .size = sizeof(c), .buf_pages = PAGES };
		int fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC), k;

		st_alive(w);
		if (fd < 0 || session_req(fd, KTRACK_IOC_SESSION_CREATE)) {
			why = "create failed";
			bad = errno ? errno : EIO;
			close(fd);
			break;
		}
		/*
		 * A reader that attached and mapped the fresh session first
		 * pinned its default rings: then the size cannot change (EBUSY,
		 * as documented) and the session runs with the default.
		 */
		if (ioctl(fd, KTRACK_IOC_SET_CONFIG, &c) && errno != EBUSY) {
			why = "configure failed";
			bad = errno;
			close(fd);
			break;
		}
		if (ioctl(fd, KTRACK_IOC_START)) {
			why = "start failed";
			bad = errno ? errno : EIO;
			close(fd);
			break;
		}
		for (k = 0; k < 50; k++)
			(void)!write(fd, "churn", 5);
		if (i % 3 && ioctl(fd, KTRACK_IOC_STOP)) {
			why = "stop failed";
			bad = errno ? errno : EIO;
			break;
		}
		if (session_req(fd, KTRACK_IOC_SESSION_DESTROY)) {
			why = "destroy failed";
			bad = errno ? errno : EIO;
		}
		close(fd);
	}
	int done_cycles = i;

	/* After a failure: what the loop left behind goes before the count. */
	if (bad) {
		int fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);

		session_req(fd, KTRACK_IOC_SESSION_DESTROY);
		close(fd);
	}

	atomic_store(&done, 1);
	for (i = 0; i < READERS; i++)
		pthread_join(th[i], NULL);
	st_unwatch(w);
	st_ok(!bad, "%d create/destroy cycles raced by %d readers (%lu attaches, %lu maps, %lu reads, %lu ends of stream)%s%s",
	      done_cycles, READERS, atomic_load(&attached), atomic_load(&mapped), atomic_load(&reads),
	      atomic_load(&ends), bad ? ": " : "", why);
	if (bad)
		printf("# %s\n", strerror(bad));
	st_ok(st_allocations_zero(alloc, sizeof(alloc)), "every fd closed: ktrack holds nothing");
	printf("# %s", alloc);
	return st_failed ? 1 : 0;
}
