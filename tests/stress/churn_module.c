// SPDX-License-Identifier: GPL-2.0
/*
 * churn_module - load and unload ktrack.ko with a session and probes live
 * at each step: 100 * $KTRACK_STRESS_SCALE cycles (1,000 in make
 * check-stress).
 *
 * Each cycle loads ktrack, opens a session, adds a kprobe and a
 * kretprobe on vfs_read, starts it and makes them fire.  rmmod with the fd
 * open must fail (the module is in use).  Then, in turn:
 *   - an anonymous session: once the fd is closed, rmmod succeeds (the
 *     close tore down the session, its rings and its armed probes);
 *   - a named session: it outlives the fd and pins the module (rmmod
 *     fails cleanly) until SESSION_DESTROY, after which rmmod succeeds;
 *   - a mapping of the ring left after the close (a mapping holds the
 *     file): rmmod is refused until munmap.
 * The kernel log must stay clean (tests/vm/run; ktrack reports at unload
 * any allocation it did not free), and a last load holds nothing.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <uapi/ktrack.h>
#include "stress_lib.h"
#include "probe_common.h"

static int add_probe(int fd, void *blob, size_t len)
{
	struct ktrack_probe_add a = { .size = sizeof(a), .desc_size = len,
				      .desc_ptr = (uintptr_t)blob };

	return ioctl(fd, KTRACK_IOC_PROBE_ADD, &a) ? -errno : 0;
}

/* Hits of every probe of the session. */
static unsigned long long probe_hits(int fd)
{
	struct ktrack_probe_info info[4];
	struct ktrack_probe_list l = { .size = sizeof(l), .count = 4,
				       .entries_ptr = (uintptr_t)info,
				       .entry_size = sizeof(info[0]) };
	unsigned long long hits = 0;
	unsigned int i;

	if (ioctl(fd, KTRACK_IOC_PROBE_LIST, &l))
		return 0;
	for (i = 0; i < l.count && i < 4; i++)
		hits += info[i].hits;
	return hits;
}

/* rmmod that must fail because something holds the module. */
static int rmmod_refused(void)
{
	int ret = kt_rmmod("ktrack");

	return ret == -EAGAIN || ret == -EBUSY;
}

int main(void)
{
	char msg[4096];
	const char *ko = kt_module_path("kmod/ktrack.ko");
	int cycles = 100 * st_scale(), i, w, bad = 0, ret;
	size_t plen = 0, rlen = 0;
	void *p = pt_compile("p:churn_p vfs_read n=$arg3:u64", NULL, &plen, msg, sizeof(msg));
	void *r = pt_compile("r:churn_r vfs_read ret=$retval:s64", NULL, &rlen, msg, sizeof(msg));
	char alloc[1024], buf[4096];
	unsigned long long hits = 0;
	const char *why = "";

	printf("TAP version 13\n1..3\n");
	if (!p || !r) {
		printf("Bail out! cannot compile the probes\n");
		return 1;
	}
	if (kt_module_loaded("ktrack") && kt_rmmod("ktrack")) {
		printf("Bail out! ktrack is loaded and busy\n");
		return 1;
	}
	st_start_watchdog(120);
	w = st_watch("the load/unload loop");
	for (i = 0; i < cycles && !bad; i++) {
		struct ktrack_session_req q = { .size = sizeof(q) };
		int fd, how = i % 3;
		void *map = MAP_FAILED;

		st_alive(w);
		ret = kt_insmod(ko, NULL);
		if (ret) {
			why = "insmod failed";
			bad = ret;
			break;
		}
		fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
		snprintf(q.name, sizeof(q.name), "churn%d", i % 4);
		if (fd < 0 || (how == 1 && ioctl(fd, KTRACK_IOC_SESSION_CREATE, &q)) ||
		    add_probe(fd, p, plen) || add_probe(fd, r, rlen) ||
		    ioctl(fd, KTRACK_IOC_START)) {
			why = "session set-up failed";
			bad = -errno;
			break;
		}
		/* Fire the probes: vfs_read on a pseudo file. */
		{
			int f = open("/proc/self/stat", O_RDONLY);

			if (f >= 0) {
				(void)!read(f, buf, sizeof(buf));
				close(f);
			}
		}
		hits += probe_hits(fd);
		if (how == 2) {
			map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
			if (map == MAP_FAILED) {
				why = "mmap of the control page failed";
				bad = -errno;
				break;
			}
		}
		if (!rmmod_refused()) {
			why = "rmmod succeeded while the session fd was open";
			bad = 1;
			break;
		}
		close(fd);
		if (how == 1) {
			if (!rmmod_refused()) {
				why = "rmmod succeeded while a named session existed";
				bad = 1;
				break;
			}
			fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
			if (fd < 0 || ioctl(fd, KTRACK_IOC_SESSION_DESTROY, &q)) {
				why = "destroying the named session failed";
				bad = -errno;
				break;
			}
			close(fd);
		}
		if (how == 2) {
			if (!rmmod_refused()) {
				why = "rmmod succeeded while the ring was mapped";
				bad = 1;
				break;
			}
			munmap(map, 4096);
		}
		ret = kt_rmmod("ktrack");
		if (ret) {
			why = "rmmod failed with nothing open";
			bad = ret;
			break;
		}
	}
	st_unwatch(w);
	st_ok(!bad, "%d load/unload cycles with a named session and armed probes live%s%s",
	      i, bad ? ": " : "", why);
	if (bad < 0)
		printf("# %s\n", strerror(-bad));
	st_ok(hits > 0, "the probes fired while loaded (%llu hits)", hits);

	/* A final load: with nothing open, ktrack holds nothing. */
	ret = kt_insmod(ko, NULL);
	st_ok(!ret && st_allocations_zero(alloc, sizeof(alloc)) && !kt_rmmod("ktrack"),
	      "a fresh load holds nothing and unloads");
	if (ret)
		printf("# insmod: %s\n", strerror(-ret));
	else
		printf("# %s", alloc);
	return st_failed ? 1 : 0;
}
