// SPDX-License-Identifier: GPL-2.0
/*
 * churn_target - reload a probed module while its probes fire on every
 * CPU: 10 * $KTRACK_STRESS_SCALE reloads (100 in make check-stress).
 *
 * A session holds a kprobe and a kretprobe on ktrack_tpt_bench() of the
 * test target module.  One thread per CPU calls it ("bench 50") as fast as it can
 * (through the module's /proc file, which vanishes while it is unloaded),
 * a reader drains the session, and the main thread unloads and reloads
 * the module.  Each reload must disarm and re-arm both probes (arm_count
 * counts them), records must keep coming, nothing may hang, and after the
 * stop every record written was read: per CPU, written = read.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <uapi/ktrack.h>
#include "stress_lib.h"
#include "probe_common.h"

#define TPT "ktrack_test_probe_target"
#define TPT_KO "tests/kmod/ktrack_test_probe_target/ktrack_test_probe_target.ko"
#define MAX_CPUS 64

static atomic_int done;
static atomic_ulong calls;
static int sfd;

static void *firer_fn(void *arg)
{
	int w = st_watch("a firing thread");

	(void)arg;
	while (!atomic_load(&done)) {
		int fd = open("/proc/ktrack_test_probe", O_WRONLY | O_CLOEXEC);

		st_alive(w);
		if (fd < 0) {
			usleep(1000);	/* unloaded right now */
			continue;
		}
		if (write(fd, "bench 50", 8) > 0)
			atomic_fetch_add(&calls, 50);
		close(fd);
	}
	st_unwatch(w);
	return NULL;
}

static atomic_ulong nread;

static void count_read(const char *buf, ssize_t n)
{
	(void)buf;
	atomic_fetch_add(&nread, (unsigned long)n);
}

static int read_ends(ssize_t n)
{
	return n == 0;		/* stopped and drained */
}

static void *reader_fn(void *arg)
{
	static char buf[1 << 16];

	(void)arg;
	st_reader(sfd, buf, sizeof(buf), 100, count_read, read_ends);
	return NULL;
}

static int add(void *blob, size_t len)
{
	struct ktrack_probe_add a = { .size = sizeof(a), .desc_size = len,
				      .desc_ptr = (uintptr_t)blob };

	return ioctl(sfd, KTRACK_IOC_PROBE_ADD, &a) ? -errno : (int)a.id;
}

int main(void)
{
	char msg[4096];
	int reloads = 10 * st_scale(), ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), i, ret, w;
	pthread_t th[MAX_CPUS + 1];
	struct ktrack_probe_info info[2];
	struct ktrack_probe_list l = { .size = sizeof(l), .count = 2,
				       .entries_ptr = (uintptr_t)info, .entry_size = sizeof(info[0]) };
	struct ktrack_cpu_stats cs[MAX_CPUS];
	struct ktrack_stats st = { .size = sizeof(st), .nr_cpus = MAX_CPUS,
				   .cpus_ptr = (uintptr_t)cs };
	size_t plen = 0, rlen = 0;
	void *p = pt_compile("p:ct_p " TPT ":ktrack_tpt_bench", NULL, &plen, msg, sizeof(msg));
	void *r = pt_compile("r:ct_r " TPT ":ktrack_tpt_bench ret=$retval:u64", NULL, &rlen, msg, sizeof(msg));
	unsigned long long written = 0, rd = 0;
	const char *why = "";
	int bad = 0;

	printf("TAP version 13\n1..3\n");
	if (!p || !r) {
		printf("Bail out! cannot compile the probes\n");
		return 1;
	}
	if ((!kt_module_loaded("ktrack") && kt_insmod(kt_module_path("kmod/ktrack.ko"), NULL)) ||
	    (!kt_module_loaded(TPT) && kt_insmod(kt_module_path(TPT_KO), NULL))) {
		printf("Bail out! cannot load ktrack or the target module\n");
		return 1;
	}
	if (ncpu > MAX_CPUS)
		ncpu = MAX_CPUS;
	sfd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	if (sfd < 0 || add(p, plen) <= 0 || add(r, rlen) <= 0 || ioctl(sfd, KTRACK_IOC_START)) {
		printf("Bail out! session set-up failed: %s\n", strerror(errno));
		return 1;
	}
	st_start_watchdog(120);
	for (i = 0; i < ncpu; i++)
		pthread_create(&th[i], NULL, firer_fn, NULL);
	pthread_create(&th[ncpu], NULL, reader_fn, NULL);
	w = st_watch("the reload loop");
	for (i = 0; i < reloads; i++) {
		st_alive(w);
		usleep(50000);	/* let them fire */
		ret = kt_rmmod(TPT);
		/* A writer inside the module's /proc file holds it a moment. */
		while (ret == -EAGAIN || ret == -EBUSY) {
			usleep(1000);
			ret = kt_rmmod(TPT);
		}
		if (!ret)
			ret = kt_insmod(kt_module_path(TPT_KO), NULL);
		if (ret) {
			why = "unload or reload of the target failed";
			bad = -ret;
			break;
		}
	}
	int done_reloads = i;

	usleep(50000);
	atomic_store(&done, 1);
	for (i = 0; i < ncpu; i++)
		pthread_join(th[i], NULL);
	ioctl(sfd, KTRACK_IOC_STOP);
	pthread_join(th[ncpu], NULL);
	st_unwatch(w);
	if (ioctl(sfd, KTRACK_IOC_PROBE_LIST, &l) || l.count != 2) {
		why = "PROBE_LIST failed";
		bad = bad ? bad : errno;
	}
	st_ok(!bad && info[0].arm_count >= (unsigned)reloads + 1 && info[1].arm_count >= (unsigned)reloads + 1 &&
	      info[0].state == KTRACK_PROBE_ST_ARMED && info[1].state == KTRACK_PROBE_ST_ARMED,
	      "%d reloads under fire on %d CPUs: both probes re-armed each time (arm counts %u, %u)%s%s",
	      done_reloads, ncpu, info[0].arm_count, info[1].arm_count, bad ? ": " : "", why);
	st_ok(info[0].hits > 0 && info[1].hits > 0 && atomic_load(&nread) > 0,
	      "records kept coming: %llu + %llu hits, %lu calls, %lu bytes read",
	      (unsigned long long)info[0].hits, (unsigned long long)info[1].hits,
	      atomic_load(&calls), atomic_load(&nread));
	if (ioctl(sfd, KTRACK_IOC_GET_STATS, &st) == 0) {
		for (i = 0; i < (int)st.nr_cpus && i < MAX_CPUS; i++) {
			written += cs[i].written;
			rd += cs[i].read;
		}
	}
	st_ok(written == rd && written > 0, "stopped and drained: every record written was read (%llu written, %llu read)",
	      written, rd);
	close(sfd);
	kt_rmmod(TPT);
	return st_failed ? 1 : 0;
}
