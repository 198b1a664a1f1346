// SPDX-License-Identifier: GPL-2.0
/*
 * fault_inject - every allocation ktrack makes while creating a session,
 * starting it (its rings), adding a probe and starting the object tracker
 * is made to fail in turn (the kernel's fail-nth: the Nth fault-injection
 * point this thread reaches fails; failslab and fail_page_alloc are the
 * points).  Each failing call must return ENOMEM (nothing else), leave the
 * session usable (a marker written after a successful retry is read back)
 * and leak nothing: with every fd closed ktrack's allocation counters are
 * zero.  Needs CONFIG_FAULT_INJECTION: the debug kernel has it, Debian's
 * kernels do not (skipped there).
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>

#include <uapi/ktrack.h>
#include "stress_lib.h"
#include "probe_common.h"

#define MAX_NTH 400

static void *blob;
static size_t blob_len;

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, val, strlen(val)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

/*
 * Arm fail-nth for this thread; read back whether it fired.  One open file
 * (opening it would be a fault point itself), read with pread() at 0 as
 * syzkaller does: the file has no llseek, so lseek() fails (ESPIPE since
 * 6.12) and a second read() is at its end and reads nothing, which looked
 * like "fired" and left the count armed into the next steps.
 */
static int fail_nth_fd = -1;

static void arm(int n)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", n);
	if (write(fail_nth_fd, v, strlen(v)) != (ssize_t)strlen(v)) {
		printf("Bail out! arm fail-nth %d: %s\n", n, strerror(errno));
		exit(1);
	}
}

static int fired(void)
{
	char v[16] = "";
	ssize_t len = pread(fail_nth_fd, v, sizeof(v) - 1, 0);

	if (len <= 0) {
		printf("Bail out! read fail-nth: %s\n", len < 0 ? strerror(errno) : "nothing");
		exit(1);
	}
	/* Reads 0 once the failure was injected; disarm either way. */
	if (atoi(v) != 0) {
		arm(0);
		return 0;
	}
	return 1;
}

static int io(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/* The steps; each runs on a session that has done the steps before it. */
static int step_create(int fd)
{
	struct ktrack_session_req q = { .size = sizeof(q) };

	snprintf(q.name, sizeof(q.name), "fi");
	return io(fd, KTRACK_IOC_SESSION_CREATE, &q);
}

static int step_start(int fd)
{
	struct ktrack_config c = { .size = sizeof(c), .buf_pages = 4 };
	int ret = io(fd, KTRACK_IOC_SET_CONFIG, &c);

	return ret ? ret : io(fd, KTRACK_IOC_START, NULL);
}

static int step_probe(int fd)
{
	struct ktrack_probe_add a = { .size = sizeof(a), .desc_size = blob_len,
				      .desc_ptr = (uintptr_t)blob };

	return io(fd, KTRACK_IOC_PROBE_ADD, &a);
}

static int step_objtrace(int fd)
{
	static char funcs[] = "vfs_read";
	struct ktrack_obj_config c = { .size = sizeof(c), .max_objects = 64, .nr_args = 2,
				       .functions_ptr = (uintptr_t)funcs,
				       .functions_len = sizeof(funcs) - 1 };
	int ret = io(fd, KTRACK_IOC_OBJ_CONFIG, &c);

	return ret ? ret : io(fd, KTRACK_IOC_OBJ_ENABLE, NULL);
}

static int (*const steps[])(int) = { step_create, step_start, step_probe, step_objtrace };
static const char *const step_names[] = { "session create", "configure + start (rings)",
					  "probe add", "objtrace config + enable" };
#define NSTEPS 4

/* A marker written now comes back through read(). */
static int usable(int fd)
{
	char buf[1 << 16];
	ssize_t n;
	int found = 0;

	if (write(fd, "fi-marker", 10) != 10)
		return 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		ssize_t off = 0;

		while (off + (ssize_t)sizeof(struct ktrack_rec_hdr) <= n) {
			struct ktrack_rec_hdr *h = (void *)(buf + off);

			if (h->len < sizeof(*h))
				break;
			if (h->type == KTRACK_REC_MARKER && !strcmp((char *)(h + 1), "fi-marker"))
				found = 1;
			off += h->len;
		}
		if (found)
			break;
	}
	return found;
}

static void teardown(int fd)
{
	struct ktrack_session_req q = { .size = sizeof(q) };

	snprintf(q.name, sizeof(q.name), "fi");
	ioctl(fd, KTRACK_IOC_OBJ_DISABLE);
	ioctl(fd, KTRACK_IOC_STOP);
	ioctl(fd, KTRACK_IOC_SESSION_DESTROY, &q);
	close(fd);
}

int main(void)
{
	char msg[4096], alloc[1024], path[64];
	int s, n, injected[NSTEPS] = { 0 }, wrong = 0, unusable = 0;

	printf("TAP version 13\n");
	snprintf(path, sizeof(path), "/proc/self/task/%ld/fail-nth", (long)syscall(SYS_gettid));
	fail_nth_fd = open(path, O_RDWR | O_CLOEXEC);
	if (fail_nth_fd < 0) {
		printf("1..1\nok 1 - # SKIP no fault injection in this kernel (CONFIG_FAULT_INJECTION: the debug kernel has it)\n");
		return 0;
	}
	printf("1..%d\n", NSTEPS + 1);
	/* Fail sleeping allocations too, quietly (a dumped stack reads as a splat). */
	write_file("/sys/kernel/debug/failslab/ignore-gfp-wait", "N");
	write_file("/sys/kernel/debug/failslab/verbose", "0");
	write_file("/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N");
	write_file("/sys/kernel/debug/fail_page_alloc/min-order", "0");
	write_file("/sys/kernel/debug/fail_page_alloc/verbose", "0");
	if (!kt_module_loaded("ktrack") && kt_insmod(kt_module_path("kmod/ktrack.ko"), NULL)) {
		printf("Bail out! cannot load ktrack.ko\n");
		return 1;
	}
	blob = pt_compile("p:fi vfs_read n=$arg3:u64", NULL, &blob_len, msg, sizeof(msg));
	if (!blob) {
		printf("Bail out! compile: %s\n", msg);
		return 1;
	}

	for (s = 0; s < NSTEPS; s++) {
		for (n = 1; n <= MAX_NTH; n++) {
			int fd = open("/dev/ktrack", O_RDWR | O_NONBLOCK | O_CLOEXEC), k, ret, hit;

			if (fd < 0) {
				printf("Bail out! open: %s\n", strerror(errno));
				return 1;
			}
			for (k = 0; k < s; k++)
				if (steps[k](fd)) {
					printf("Bail out! %s failed without injection\n", step_names[k]);
					return 1;
				}
			arm(n);
			ret = steps[s](fd);
			hit = fired();
			if (!hit) {		/* past the last allocation: done */
				teardown(fd);
				break;
			}
			injected[s]++;
			if (ret && ret != -ENOMEM) {
				printf("# %s, allocation %d failed: %s, not ENOMEM\n", step_names[s], n, strerror(-ret));
				wrong++;
			}
			/* Usable afterwards: the step again (if it failed), start, a marker. */
			if ((ret && steps[s](fd)) || (s < 1 ? step_start(fd) : 0) || !usable(fd)) {
				printf("# %s, allocation %d failed: the session is not usable afterwards\n",
				       step_names[s], n);
				unusable++;
			}
			teardown(fd);
		}
		st_ok(injected[s] > 0 && !wrong && !unusable,
		      "%s: each of its %d allocations failed in turn gives ENOMEM and leaves the session usable",
		      step_names[s], injected[s]);
		wrong = unusable = 0;
	}
	st_ok(st_allocations_zero(alloc, sizeof(alloc)), "every fd closed: ktrack holds nothing");
	printf("# %s", alloc);
	return st_failed ? 1 : 0;
}
