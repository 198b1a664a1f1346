// SPDX-License-Identifier: GPL-2.0
/*
 * context_probes - probes that fire from every context at once, and on
 * the scheduler's own wake-up path, with a reader that the handlers must
 * wake without deadlocking on a runqueue lock.
 *
 * One session, small rings (so they fill and records are lost), probes on:
 *   try_to_wake_up (entry and return) and __schedule: the scheduler's own
 *      paths, hit from task, softirq and hardirq context, including the
 *      wake-ups of our reader and the switches away from it;
 *   hrtimer_interrupt (hard IRQ), run_timer_softirq (softirq);
 *   emit_batch of ktrack_test_emit, which the module calls from task,
 *      softirq, hardirq and NMI context (it sends each CPU NMI IPIs, as
 *      sysrq-l's backtrace does: no PMU needed; sysrq-l itself is not
 *      used, its backtraces would read as splats in the kernel log).
 * A refused probe on nmi_handle must give EOPNOTSUPP (kprobes blacklist).
 * For $KTRACK_STRESS_SCALE x 3 s the emitter runs on all CPUs while the
 * reader drains with poll() + read().  Then, after stop and drain:
 *   - emit_batch's records came from all four contexts;
 *   - per CPU, the ring's equation holds: produced = written + lost, and
 *     what read() returned = written records + lost records announced by
 *     LOST records (exact);
 *   - every probe's hits are accounted: records seen + dropped + filtered
 *     + idle = hits.
 * No hang (watchdog), no lockdep report (the debug kernel's lane).
 */
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <sys/ioctl.h>

#include <uapi/ktrack.h>
#include "stress_lib.h"
#include "transport_lib.h"
#include "probe_common.h"

#define NPROBES 6
#define MAXCPU	64

static const char *const specs[NPROBES] = {
	"p:cx_ttwu try_to_wake_up p=$arg1:x64 state=$arg2:u32",
	"r:cx_ttwu_ret try_to_wake_up ret=$retval:s32",
	"p:cx_hrtimer hrtimer_interrupt",
	"p:cx_timer run_timer_softirq",
	"p:cx_sched __schedule",
	"p:cx_emit ktrack_test_emit:emit_batch ctx=$arg2:u32",
};

static int sfd;
static atomic_int stop_reading;
static unsigned long long seen[NPROBES + 1], ctx_seen[4], lost_announced, nread;
static uint32_t ids[NPROBES];
static unsigned long long cpu_records[MAXCPU], cpu_lost[MAXCPU];

static void account(const char *buf, ssize_t n)
{
	ssize_t off = 0;

	while (off + (ssize_t)sizeof(struct ktrack_rec_hdr) <= n) {
		const struct ktrack_rec_hdr *h = (const void *)(buf + off);
		int i;

		if (h->len < sizeof(*h) || off + h->len > n)
			break;
		if (h->type == KTRACK_REC_LOST) {
			const struct ktrack_rec_lost *l = (const void *)(h + 1);

			lost_announced += l->count;
			if (h->cpu < MAXCPU)
				cpu_lost[h->cpu] += l->count;
		} else {
			nread++;
			if (h->cpu < MAXCPU)
				cpu_records[h->cpu]++;
		}
		if (h->type == KTRACK_REC_PROBE) {
			const struct ktrack_rec_probe *p = (const void *)(h + 1);

			for (i = 0; i < NPROBES; i++)
				if (ids[i] && p->probe_id == ids[i])
					break;
			seen[i]++;
			if (i == NPROBES - 1)
				ctx_seen[h->flags & KTRACK_RECF_CTX_MASK]++;
		}
		off += h->len;
	}
}

/* Drained once stopped, or a read() error other than "nothing yet". */
static int read_ends(ssize_t n)
{
	return n == 0 ? atomic_load(&stop_reading) : errno != EAGAIN;
}

static void *reader_fn(void *arg)
{
	static char buf[1 << 17];

	(void)arg;
	st_reader(sfd, buf, sizeof(buf), 200, account, read_ends);
	return NULL;
}

int main(void)
{
	struct ktrack_config c = { .size = sizeof(c), .buf_pages = 2 };
	struct ktrack_cpu_stats cs[MAXCPU];
	struct ktrack_stats st = { .size = sizeof(st), .nr_cpus = MAXCPU, .cpus_ptr = (uintptr_t)cs };
	struct ktrack_probe_info info[NPROBES + 1];
	struct ktrack_probe_list l = { .size = sizeof(l), .count = NPROBES + 1,
				       .entries_ptr = (uintptr_t)info, .entry_size = sizeof(info[0]) };
	int i, k, ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), bad_eq = 0, bad_hits = 0, ret;
	unsigned long long produced = 0, written = 0, lost = 0;
	struct tp_produced prod;
	char msg[4096];
	pthread_t th;
	size_t len;
	void *blob;

	printf("TAP version 13\n1..5\n");
	if ((!kt_module_loaded("ktrack") && kt_insmod(kt_module_path("kmod/ktrack.ko"), NULL)) ||
	    tp_load()) {
		printf("Bail out! cannot load ktrack or ktrack_test_emit\n");
		return 1;
	}
	sfd = open("/dev/ktrack", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (sfd < 0 || ioctl(sfd, KTRACK_IOC_SET_CONFIG, &c)) {
		printf("Bail out! session: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < NPROBES; i++) {
		struct ktrack_probe_add a = { .size = sizeof(a) };

		blob = pt_compile(specs[i], NULL, &len, msg, sizeof(msg));
		if (!blob) {
			printf("Bail out! compile '%s': %s\n", specs[i], msg);
			return 1;
		}
		a.desc_size = len;
		a.desc_ptr = (uintptr_t)blob;
		if (ioctl(sfd, KTRACK_IOC_PROBE_ADD, &a)) {
			printf("# add '%s': %s\n", specs[i], strerror(errno));
			ids[i] = 0;
		} else {
			ids[i] = a.id;
		}
		free(blob);
	}
	st_ok(ids[0] && ids[1] && ids[2] && ids[3] && ids[4] && ids[5],
	      "probes armed on try_to_wake_up (entry, return), hrtimer_interrupt, run_timer_softirq, __schedule, emit_batch");

	/* The kprobes blacklist: refused, with the errno the UAPI names. */
	blob = pt_compile("p:cx_nmi nmi_handle", NULL, &len, msg, sizeof(msg));
	if (blob) {
		struct ktrack_probe_add a = { .size = sizeof(a), .desc_size = len,
					      .desc_ptr = (uintptr_t)blob };

		ret = ioctl(sfd, KTRACK_IOC_PROBE_ADD, &a) ? errno : 0;
		st_ok(ret == EOPNOTSUPP, "a probe on nmi_handle (kprobes blacklist) is refused with EOPNOTSUPP (got %s)",
		      ret ? strerror(ret) : "success");
		free(blob);
	} else {
		st_ok(strstr(msg, "nmi_handle") != NULL, "a probe on nmi_handle is refused by the compiler: %s", msg);
	}

	st_start_watchdog(120);
	if (ioctl(sfd, KTRACK_IOC_START)) {
		printf("Bail out! start: %s\n", strerror(errno));
		return 1;
	}
	pthread_create(&th, NULL, reader_fn, NULL);
	for (k = 0; k < 3 * st_scale(); k++) {
		ret = tp_run((__u32)k + 1, 4000, 0xf, 64, &prod);
		if (ret) {
			printf("# emit run %d failed: %s\n", k + 1, strerror(-ret));
			break;
		}
	}
	ioctl(sfd, KTRACK_IOC_STOP);
	atomic_store(&stop_reading, 1);
	pthread_join(th, NULL);

	st_ok(ctx_seen[0] && ctx_seen[1] && ctx_seen[2] && ctx_seen[3],
	      "emit_batch was probed from task (%llu), softirq (%llu), hardirq (%llu) and NMI (%llu) context",
	      ctx_seen[0], ctx_seen[1], ctx_seen[2], ctx_seen[3]);

	if (ioctl(sfd, KTRACK_IOC_GET_STATS, &st)) {
		printf("Bail out! GET_STATS: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < (int)st.nr_cpus && i < MAXCPU; i++) {
		unsigned long long l_cpu = cs[i].lost_full + cs[i].lost_too_big;

		produced += cs[i].written + l_cpu;
		written += cs[i].written;
		lost += l_cpu;
		if (cpu_records[i] != cs[i].written || cpu_lost[i] != l_cpu) {
			printf("# cpu %d: read %llu records + %llu announced lost; the ring says %llu written, %llu lost\n",
			       i, cpu_records[i], cpu_lost[i], (unsigned long long)cs[i].written, l_cpu);
			bad_eq++;
		}
	}
	st_ok(!bad_eq && lost > 0, "per CPU, produced = read + lost, exactly (%llu produced, %llu read, %llu lost) on %d CPUs",
	      produced, nread, lost_announced, ncpu);

	if (ioctl(sfd, KTRACK_IOC_PROBE_LIST, &l) == 0) {
		for (i = 0; i < (int)l.count && i < NPROBES; i++) {
			int j;

			for (j = 0; j < NPROBES; j++)
				if (ids[j] == info[i].id)
					break;
			if (j == NPROBES)
				continue;
			if (seen[j] + info[i].dropped + info[i].filtered + info[i].idle != info[i].hits) {
				printf("# %s: %llu hits but %llu seen + %llu dropped + %llu filtered + %llu idle\n",
				       info[i].name, (unsigned long long)info[i].hits, seen[j],
				       (unsigned long long)info[i].dropped, (unsigned long long)info[i].filtered,
				       (unsigned long long)info[i].idle);
				bad_hits++;
			}
		}
	} else {
		bad_hits++;
	}
	st_ok(!bad_hits, "every probe hit is accounted: seen + dropped + filtered + idle = hits");
	close(sfd);
	tp_unload();
	return st_failed ? 1 : 0;
}
