// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_ioctl - a structured fuzzer for /dev/ktrack.
 *
 *   fuzz_ioctl [-s SEED] [-n CALLS] [-t THREADS]
 *
 * It knows every command's struct and builds each argument from a valid
 * shape, then mutates it: sizes, flags, reserved fields, pointers (NULL,
 * unmapped, kernel, misaligned, a buffer that faults midway, the ring's
 * read-only pages), strings (unterminated, huge), probe descriptions
 * (compiled by ktrackctl, then bytes, counts, offsets and filter programs
 * mutated: programs that underflow or overflow the stack, bad opcodes,
 * fields past the fetches) and objtrace configurations.  Threads share a
 * table of session fds that other threads replace (dup2 over the slot:
 * the old file closes while calls on it may be in flight), map and unmap
 * rings, read, write markers, poll, and create, attach and destroy named
 * sessions.
 *
 * Reproducible from the seed: thread i draws from SEED * 1000 + i, so each
 * thread's sequence of calls is the same on every run (their interleaving
 * is not).  Defaults: SEED from $KTRACK_FUZZ_SEED or the time (printed),
 * CALLS from $KTRACK_FUZZ_CALLS or 100000, 4 threads.
 *
 * Passes (TAP) when every call returned, every errno is one the device
 * documents, no thread stopped making progress for 60 s (a hang: the
 * thread's kernel stack is printed), and, with every fd closed and every
 * named session destroyed, ktrack unloads and its allocation counters
 * (/sys/kernel/debug/ktrack/allocations) are zero.  The kernel log is
 * judged by tests/vm/run.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <uapi/ktrack.h>
#include "stress_lib.h"
#include "fuzz_ops.h"
#include "probe_common.h"

#define STALL_SECONDS	60

/* Per-thread progress, for the watchdog and the report. */
static atomic_ulong progress[MAX_THREADS];
static atomic_int current_op[MAX_THREADS];
static pid_t tids[MAX_THREADS];
static atomic_ulong op_calls[64], op_ok[64];
static atomic_ulong errno_seen[256];
static atomic_ulong bad_errno;
static atomic_int bad_errno_example_op = -1, bad_errno_example = 0;

enum {
	OP_VERSION, OP_SET_CONFIG, OP_GET_CONFIG, OP_START, OP_STOP, OP_FLUSH,
	OP_STATS, OP_SESS_CREATE, OP_SESS_ATTACH, OP_SESS_DESTROY, OP_SESS_LIST,
	OP_PROBE_ADD, OP_PROBE_DEL, OP_PROBE_LIST, OP_PROBE_GET, OP_PROBE_PROFILE, OP_STACK, OP_SNAPSHOT,
	OP_OBJ_CONFIG, OP_OBJ_SOURCE, OP_OBJ_TRACK, OP_OBJ_UNTRACK, OP_OBJ_ENABLE,
	OP_OBJ_DISABLE, OP_OBJ_STATS, OP_OBJ_QUERY, OP_UNKNOWN,
	OP_MMAP, OP_MUNMAP, OP_READ, OP_WRITE, OP_POLL, OP_REOPEN, NR_OPS
};

_Static_assert(NR_OPS <= 64, "op_calls[] and op_ok[] hold 64 ops");

static const char *const op_names[NR_OPS] = {
	"VERSION", "SET_CONFIG", "GET_CONFIG", "START", "STOP", "FLUSH",
	"GET_STATS", "SESSION_CREATE", "SESSION_ATTACH", "SESSION_DESTROY",
	"SESSION_LIST", "PROBE_ADD", "PROBE_DEL", "PROBE_LIST", "PROBE_GET", "PROBE_PROFILE", "STACK_*", "SNAPSHOT_GET",
	"OBJ_CONFIG", "OBJ_ADD_SOURCE", "OBJ_TRACK", "OBJ_UNTRACK", "OBJ_ENABLE",
	"OBJ_DISABLE", "OBJ_GET_STATS", "OBJ_QUERY", "unknown ioctl",
	"mmap", "munmap", "read", "write", "poll", "close+reopen",
};

/* Relative weights: cheap calls often, calls that arm hooks rarely. */
static const int op_weight[NR_OPS] = {
	[OP_VERSION] = 3, [OP_SET_CONFIG] = 8, [OP_GET_CONFIG] = 3, [OP_START] = 5,
	[OP_STOP] = 5, [OP_FLUSH] = 3, [OP_STATS] = 5, [OP_SESS_CREATE] = 3,
	[OP_SESS_ATTACH] = 3, [OP_SESS_DESTROY] = 2, [OP_SESS_LIST] = 3,
	[OP_PROBE_ADD] = 10, [OP_PROBE_DEL] = 4, [OP_PROBE_LIST] = 3, [OP_PROBE_GET] = 3,
	[OP_PROBE_PROFILE] = 3, [OP_STACK] = 2, [OP_SNAPSHOT] = 3,
	[OP_OBJ_CONFIG] = 5, [OP_OBJ_SOURCE] = 3, [OP_OBJ_TRACK] = 3, [OP_OBJ_UNTRACK] = 2,
	[OP_OBJ_ENABLE] = 2, [OP_OBJ_DISABLE] = 2, [OP_OBJ_STATS] = 2, [OP_OBJ_QUERY] = 2,
	[OP_UNKNOWN] = 4, [OP_MMAP] = 4, [OP_MUNMAP] = 3, [OP_READ] = 6, [OP_WRITE] = 4,
	[OP_POLL] = 3, [OP_REOPEN] = 1,
};

static int pick_op(struct rng *r)
{
	static int total;
	int i, x;

	if (!total)
		for (i = 0; i < NR_OPS; i++)
			total += op_weight[i];
	x = (int)below(r, (uint32_t)total);
	for (i = 0; i < NR_OPS; i++) {
		x -= op_weight[i];
		if (x < 0)
			return i;
	}
	return OP_VERSION;
}

static int run_op(struct rng *r, int op)
{
	int fd = slot_fd(r);

	switch (op) {
	case OP_VERSION: {
		struct ktrack_version v = { .size = mutate_size(r, sizeof(v)) };

		return do_ioctl(fd, KTRACK_IOC_VERSION, mutate_arg(r, &v, sizeof(v)));
	}
	case OP_SET_CONFIG: return op_set_config(r, fd);
	case OP_GET_CONFIG: {
		struct ktrack_config c = { .size = mutate_size(r, sizeof(c)) };

		return do_ioctl(fd, KTRACK_IOC_GET_CONFIG, mutate_arg(r, &c, sizeof(c)));
	}
	case OP_START: return do_ioctl(fd, KTRACK_IOC_START, NULL);
	case OP_STOP: return do_ioctl(fd, KTRACK_IOC_STOP, NULL);
	case OP_FLUSH: return do_ioctl(fd, KTRACK_IOC_FLUSH, NULL);
	case OP_STATS: return op_stats(r, fd);
	case OP_SESS_CREATE: return op_session(r, fd, KTRACK_IOC_SESSION_CREATE);
	case OP_SESS_ATTACH: return op_session(r, fd, KTRACK_IOC_SESSION_ATTACH);
	case OP_SESS_DESTROY: return op_session(r, fd, KTRACK_IOC_SESSION_DESTROY);
	case OP_SESS_LIST: return op_list(r, fd, KTRACK_IOC_SESSION_LIST, sizeof(struct ktrack_session_info));
	case OP_PROBE_ADD: return op_probe_add(r, fd);
	case OP_PROBE_DEL: return op_probe_del(r, fd);
	case OP_PROBE_LIST: return op_list(r, fd, KTRACK_IOC_PROBE_LIST, sizeof(struct ktrack_probe_info));
	case OP_PROBE_GET: return op_probe_get(r, fd);
	case OP_PROBE_PROFILE: return op_probe_profile(r, fd);
	case OP_STACK: return op_stack(r, fd);
	case OP_SNAPSHOT: return op_snapshot(r, fd);
	case OP_OBJ_CONFIG: return op_obj_config(r, fd);
	case OP_OBJ_SOURCE: return op_obj_source(r, fd);
	case OP_OBJ_TRACK: return op_obj_addr(r, fd, KTRACK_IOC_OBJ_TRACK);
	case OP_OBJ_UNTRACK: return op_obj_addr(r, fd, KTRACK_IOC_OBJ_UNTRACK);
	case OP_OBJ_ENABLE: return do_ioctl(fd, KTRACK_IOC_OBJ_ENABLE, NULL);
	case OP_OBJ_DISABLE: return do_ioctl(fd, KTRACK_IOC_OBJ_DISABLE, NULL);
	case OP_OBJ_STATS: {
		struct ktrack_obj_stats s = { .size = mutate_size(r, sizeof(s)) };

		return do_ioctl(fd, KTRACK_IOC_OBJ_GET_STATS, mutate_arg(r, &s, sizeof(s)));
	}
	case OP_OBJ_QUERY: return op_obj_addr(r, fd, KTRACK_IOC_OBJ_QUERY);
	case OP_UNKNOWN: return op_unknown(r, fd);
	case OP_MMAP: return op_mmap(r, fd);
	case OP_MUNMAP: return op_munmap(r);
	case OP_READ: return op_read(r, fd);
	case OP_WRITE: return op_write(r, fd);
	case OP_POLL: return op_poll(r, fd);
	case OP_REOPEN: return reopen_slot(r);
	}
	return -EINVAL;
}

/* ---- threads ------------------------------------------------------------ */

struct worker {
	int idx;
	unsigned char *scratch;	/* FUZZ_SCRATCH bytes (mutate_ptr) */
	uint64_t seed;
	unsigned long calls;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct rng r = { .s = w->seed ? w->seed : 1 };
	unsigned long i;

	tids[w->idx] = (pid_t)syscall(SYS_gettid);
	scratch = w->scratch;
	for (i = 0; i < w->calls; i++) {
		int op = pick_op(&r), ret;

		atomic_store(&current_op[w->idx], op);
		ret = run_op(&r, op);
		atomic_fetch_add(&op_calls[op], 1);
		if (ret == 0) {
			atomic_fetch_add(&op_ok[op], 1);
		} else {
			atomic_fetch_add(&errno_seen[-ret & 255], 1);
			if (!errno_ok(-ret)) {
				atomic_fetch_add(&bad_errno, 1);
				atomic_store(&bad_errno_example_op, op);
				atomic_store(&bad_errno_example, -ret);
			}
		}
		atomic_fetch_add(&progress[w->idx], 1);
	}
	atomic_store(&current_op[w->idx], -1);
	return NULL;
}

/* ---- set-up and checks -------------------------------------------------- */

static const char *const corpus_specs[] = {
	"p:fz vfs_read count=$arg3:u64 file=$arg1:x64",
	"p:fz vfs_write n=$arg3:u64 buf=+0($arg2):u8[8] if n > 0",
	"r:fz vfs_read ret=$retval:s64",
	"p:fz do_sys_openat2 path=+0($arg2):ustring flags=$arg3:x32 if comm ~ \"fuzz*\"",
	"f:fz vfs_read,vfs_write%both",
	/* entry-only on one name: also sent as a kernel glob (build_corpus()) */
	"f:fz vfs_read a=$arg1:x64 if a > 0",
	"t:fz sched/sched_switch",
	"p:fz __x64_sys_getppid cpu=$cpu pid=$comm",
	"p:fz vfs_read s=$stack1:x64 a=+8(+0($arg1)):x64 if (s > 1 && s < 100000) || !(cpu == 0)",
	/* accepted on overwrite-mode sessions only: copies taken while others read and reconfigure */
	"p:fz vfs_write => snapshot stack:2",
	/* user-space probes: libc, so every process of the guest hits them */
	"u:fz /lib/x86_64-linux-gnu/libc.so.6:getpid n=$arg1 c=$comm",
	"ur:fz /lib/x86_64-linux-gnu/libc.so.6:write ret=$retval:s64 d=$duration s=+0($arg2):string",
};

/* A copy of the corpus entry 'blob' with 'flag' set, as another entry. */
static void add_variant(const void *blob, size_t len, uint32_t flag)
{
	void *p;

	if (nr_corpus >= NR_CORPUS)
		return;
	p = malloc(len);
	if (!p)
		return;
	memcpy(p, blob, len);
	((struct ktrack_probe_desc *)p)->flags |= flag;
	corpus[nr_corpus].blob = p;
	corpus[nr_corpus].len = len;
	nr_corpus++;
}

static void build_corpus(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(corpus_specs) / sizeof(corpus_specs[0]); i++) {
		char msg[4096];
		size_t len = 0;
		void *blob = pt_compile(corpus_specs[i], NULL, &len, msg, sizeof(msg));

		if (!blob) {
			printf("# corpus: '%s' does not compile here: %s", corpus_specs[i], msg);
			continue;
		}
		corpus[nr_corpus].blob = blob;
		corpus[nr_corpus].len = len;
		nr_corpus++;
		/* an f probe also as a profile (KTRACK_PROBE_F_PROFILE) */
		if (!strncmp(corpus_specs[i], "f:", 2))
			add_variant(blob, len, KTRACK_PROBE_F_PROFILE);
		/*
		 * one name at entry also as a kernel glob (one ftrace_ops,
		 * probe_ftrace.c), as ktrackctl sends it
		 */
		if (((struct ktrack_probe_desc *)blob)->flags == KTRACK_PROBE_F_ENTRY &&
		    ((struct ktrack_probe_desc *)blob)->nr_funcs == 1)
			add_variant(blob, len, KTRACK_PROBE_F_KERNEL_GLOB);
	}
}

int main(int argc, char **argv)
{
	struct worker w[MAX_THREADS];
	pthread_t th[MAX_THREADS];
	unsigned long calls = getenv("KTRACK_FUZZ_CALLS") ? strtoul(getenv("KTRACK_FUZZ_CALLS"), NULL, 0) : 100000;
	uint64_t seed = getenv("KTRACK_FUZZ_SEED") ? strtoull(getenv("KTRACK_FUZZ_SEED"), NULL, 0) : (uint64_t)time(NULL);
	int threads = 4, opt, i, t = 0, fails = 0, ret;
	unsigned long last[MAX_THREADS] = { 0 }, total = 0;
	int still[MAX_THREADS] = { 0 };
	char alloc[2048];
	struct timespec t0, t1;

	while ((opt = getopt(argc, argv, "s:n:t:")) != -1) {
		switch (opt) {
		case 's': seed = strtoull(optarg, NULL, 0); break;
		case 'n': calls = strtoul(optarg, NULL, 0); break;
		case 't': threads = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s [-s SEED] [-n CALLS] [-t THREADS]\n", argv[0]);
			return 2;
		}
	}
	if (threads < 1 || threads > MAX_THREADS)
		threads = 4;
	signal(SIGPIPE, SIG_IGN);
	printf("TAP version 13\n1..4\n");
	printf("# seed %llu, %lu calls, %d threads (rerun: %s -s %llu -n %lu -t %d)\n",
	       (unsigned long long)seed, calls, threads, argv[0], (unsigned long long)seed, calls, threads);

	if (!kt_module_loaded("ktrack")) {
		ret = kt_insmod(kt_module_path("kmod/ktrack.ko"), NULL);
		if (ret) {
			printf("Bail out! cannot load ktrack.ko: %s\n", strerror(-ret));
			return 1;
		}
	}
	/* The buffers hold what the kernel may write (FUZZ_OUT_MAX, cs[]). */
	{
		FILE *f = fopen("/sys/module/ktrack/parameters/max_probes", "r");
		unsigned int mp = 0;

		if (f && fscanf(f, "%u", &mp) != 1)
			mp = 0;
		if (f)
			fclose(f);
		if (!mp || mp > 256 || sysconf(_SC_NPROCESSORS_CONF) > 512) {
			printf("Bail out! the buffers are sized for max_probes <= 256 (it is %u) and <= 512 CPUs\n", mp);
			return 1;
		}
	}
	/* A probe target module makes "MOD:SYM" descriptions armable. */
	kt_insmod(kt_module_path("tests/kmod/ktrack_test_probe_target/ktrack_test_probe_target.ko"), NULL);
	build_corpus();
	printf("# corpus: %d compiled probe descriptions\n", nr_corpus);

	edge = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	mprotect(edge + 4096, 4096, PROT_NONE);
	none_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (i = 0; i < NR_SLOTS; i++) {
		slots[i] = open("/dev/ktrack", O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (slots[i] < 0) {
			printf("Bail out! cannot open /dev/ktrack: %s\n", strerror(errno));
			return 1;
		}
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < threads; i++) {
		w[i] = (struct worker){ .idx = i, .seed = seed * 1000 + (uint64_t)i,
					.calls = calls / threads + (i < (int)(calls % threads)),
					.scratch = malloc(FUZZ_SCRATCH) };
		if (!w[i].scratch) {
			printf("Bail out! no memory for the scratch buffers\n");
			return 1;
		}
		atomic_store(&current_op[i], -1);
		pthread_create(&th[i], NULL, worker_fn, &w[i]);
	}
	/* Watchdog: every thread must keep making calls. */
	for (;;) {
		int running = 0;

		sleep(1);
		t++;
		for (i = 0; i < threads; i++) {
			unsigned long p = atomic_load(&progress[i]);

			if (p >= w[i].calls)
				continue;
			running = 1;
			still[i] = p == last[i] ? still[i] + 1 : 0;
			last[i] = p;
			if (still[i] >= STALL_SECONDS) {
				printf("not ok 1 - no call hangs: thread %d stuck %d s in %s (call %lu)\n",
				       i, still[i], op_names[atomic_load(&current_op[i])], p);
				st_print_stack(tids[i]);
				fflush(stdout);
				_exit(1);
			}
		}
		if (!running)
			break;
		if (t % 30 == 0) {
			for (total = 0, i = 0; i < threads; i++)
				total += atomic_load(&progress[i]);
			printf("# %d s: %lu calls\n", t, total);
			fflush(stdout);
		}
	}
	for (i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	for (total = 0, i = 0; i < NR_OPS; i++)
		total += atomic_load(&op_calls[i]);
	printf("ok 1 - no call hangs: %lu calls in %.1f s (%.0f calls/s)\n", total,
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       total / ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9));
	for (i = 0; i < NR_OPS; i++)
		printf("#   %-16s %8lu calls %8lu succeeded\n", op_names[i], atomic_load(&op_calls[i]),
		       atomic_load(&op_ok[i]));
	for (i = 1; i < 256; i++)
		if (atomic_load(&errno_seen[i]))
			printf("#   errno %-14s %8lu\n", strerrorname_np(i) ? strerrorname_np(i) : "?",
			       atomic_load(&errno_seen[i]));
	if (atomic_load(&bad_errno)) {
		printf("not ok 2 - every errno is a documented one: %lu calls failed otherwise, e.g. %s: %s\n",
		       atomic_load(&bad_errno), op_names[atomic_load(&bad_errno_example_op)],
		       strerror(atomic_load(&bad_errno_example)));
		fails++;
	} else {
		printf("ok 2 - every errno is a documented one\n");
	}

	/* Clean up as a user would: unmap, close, destroy named sessions. */
	for (i = 0; i < NR_MAPS; i++)
		if (maps[i].addr)
			munmap(maps[i].addr, maps[i].len);
	{
		int fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
		struct ktrack_session_req q = { .size = sizeof(q), .flags = KTRACK_SESSION_F_ALL };

		if (fd >= 0) {
			if (ioctl(fd, KTRACK_IOC_SESSION_DESTROY, &q) < 0 && errno != ENOENT)
				printf("# destroying every named session: %s\n", strerror(errno));
			close(fd);
		}
	}
	for (i = 0; i < NR_SLOTS; i++)
		close(slots[i]);
	kt_rmmod("ktrack_test_probe_target");

	if (!st_allocations_zero(alloc, sizeof(alloc))) {
		char *p;

		/* On the "not ok" line: check.sh's summary quotes only those. */
		for (p = alloc; (p = strchr(p, '\n')); )
			*p = p[1] ? ',' : '\0';
		printf("not ok 3 - allocation counters are zero once everything is closed: %s\n", alloc);
		fails++;
	} else {
		printf("ok 3 - allocation counters are zero once everything is closed\n");
	}
	ret = kt_rmmod("ktrack");
	if (ret) {
		char refs[64] = "?";
		FILE *rf = fopen("/sys/module/ktrack/refcnt", "r");

		if (rf) {
			if (!fgets(refs, sizeof(refs), rf))
				snprintf(refs, sizeof(refs), "?");
			fclose(rf);
		}
		refs[strcspn(refs, "\n")] = 0;
		printf("not ok 4 - rmmod ktrack: %s (module references: %s)\n", strerror(-ret), refs);
		fails++;
	} else {
		printf("ok 4 - rmmod ktrack\n");
	}
	return fails ? 1 : 0;
}
