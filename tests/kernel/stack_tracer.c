// SPDX-License-Identifier: GPL-2.0
/*
 * The stack tracer (KTRACK_IOC_STACK_*): the deepest stack of a known path
 * (ktrack_test_probe_target's "deep N": ktrack_deep_frame() recursing, each
 * frame over 512 bytes, then ktrack_deep_leaf()), found frame by frame with
 * exact frame counts; one owner at a time; ownership ends with the session;
 * every malformed request refused with nothing hooked.
 */
#include <sys/ioctl.h>

#include "kselftest_harness.h"
#include "probe_common.h"

FIXTURE(stk) {
	int fd;
	unsigned long leaf, leaf_end, frame_fn, frame_end;
};

/* The first kallsyms address above 'addr': the end of its function. */
static unsigned long next_sym(unsigned long addr)
{
	char line[512];
	unsigned long a, best = ~0UL;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx", &a) == 1 && a > addr && a < best)
			best = a;
	fclose(f);
	return best;
}

FIXTURE_SETUP(stk)
{
	ASSERT_EQ(0, pt_load_all());
	self->fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	self->leaf = pt_kallsyms("ktrack_deep_leaf");
	self->frame_fn = pt_kallsyms("ktrack_deep_frame");
	ASSERT_NE(0, self->leaf);
	ASSERT_NE(0, self->frame_fn);
	self->leaf_end = next_sym(self->leaf);
	self->frame_end = next_sym(self->frame_fn);
}

FIXTURE_TEARDOWN(stk)
{
	close(self->fd);
	pt_unload_all();
}

static int stk_start(int fd, const char *filter)
{
	struct ktrack_stack_start req = { .size = sizeof(req) };

	snprintf(req.filter, sizeof(req.filter), "%s", filter);
	return ioctl(fd, KTRACK_IOC_STACK_START, &req) ? -errno : 0;
}

static int stk_get(int fd, struct ktrack_stack_max *m, struct ktrack_stack_frame *f, uint32_t nr)
{
	memset(m, 0, sizeof(*m));
	m->size = sizeof(*m);
	m->nr = nr;
	m->frames_ptr = (uintptr_t)f;
	return ioctl(fd, KTRACK_IOC_STACK_GET, m) ? -errno : 0;
}

/* Is 'ip' (an entry or a return address) inside [fn, end)? */
static int in_fn(uint64_t ip, unsigned long fn, unsigned long end)
{
	return ip >= fn && ip < end;
}

TEST_F(stk, deep_path_found_frame_by_frame)
{
	struct ktrack_stack_frame f[KTRACK_STACK_MAX_FRAMES], f4[KTRACK_STACK_MAX_FRAMES];
	struct ktrack_stack_max m, m4;
	uint32_t i, deep = 0, sum = 0;

	ASSERT_EQ(0, stk_start(self->fd, "ktrack_deep_*"));
	/* hooked while it runs: ftrace lists the function */
	EXPECT_EQ(0, kt_run(NULL, 0, "grep -q ktrack_deep_leaf /sys/kernel/tracing/enabled_functions"));
	ASSERT_EQ(0, pt_cmd("deep 4", 0));
	ASSERT_EQ(0, stk_get(self->fd, &m4, f4, KTRACK_STACK_MAX_FRAMES));
	ASSERT_EQ(0, pt_cmd("deep 12", 0));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_STACK_STOP));
	ASSERT_EQ(0, stk_get(self->fd, &m, f, KTRACK_STACK_MAX_FRAMES));
	/* the leaf's entry under 12 frames, each over 512 bytes */
	/* the entry's ftrace site: the function's start, or after its endbr64 */
	EXPECT_TRUE(in_fn(m.func, self->leaf, self->leaf_end)) TH_LOG("func %llx, leaf %lx",
								    (unsigned long long)m.func, self->leaf);
	EXPECT_EQ(getpid(), (pid_t)m.pid);
	EXPECT_GE(m.max_bytes, 12 * 512);
	/*
	 * Deeper than "deep 4" by 8 frames of over 512 bytes, less the
	 * random offset each syscall starts its stack at
	 * (RANDOMIZE_KSTACK_OFFSET: under 1 KiB), so compared with room.
	 */
	EXPECT_GE(m.max_bytes, m4.max_bytes + 8 * 512 - 1024) TH_LOG("deep 4: %llu bytes, %u frames, depth0 %u",
		(unsigned long long)m4.max_bytes, m4.nr, f4[0].depth);
	EXPECT_LT(m.max_bytes, 65536);
	EXPECT_LE(16, m.checks);	/* 5 + 13 entries at least */
	ASSERT_LT(12, m.nr);
	ASSERT_GE(KTRACK_STACK_MAX_FRAMES, m.nr);
	EXPECT_TRUE(in_fn(f[0].ip, self->leaf, self->leaf_end)) TH_LOG("frame 0 at %llx, leaf %lx",
							(unsigned long long)f[0].ip, self->leaf);
	for (i = 0; i < m.nr; i++) {
		if (i + 1 < m.nr)
			EXPECT_GT(f[i].depth, f[i + 1].depth) TH_LOG("frame %u", i);
		sum += f[i].size;
		if (in_fn(f[i].ip, self->frame_fn, self->frame_end)) {
			deep++;
			/* the caller's frame holds the 512-byte buffer */
			if (i + 1 < m.nr && in_fn(f[i + 1].ip, self->frame_fn, self->frame_end))
				EXPECT_LE(512, f[i + 1].size) TH_LOG("frame %u", i + 1);
		}
	}
	EXPECT_EQ(12, deep);
	for (i = 0; i < m.nr; i++)
		printf("# %2u depth %u size %u ip %llx\n", i, f[i].depth, f[i].size, (unsigned long long)f[i].ip);
	printf("# max %llu leaf %lx frame %lx\n", (unsigned long long)m.max_bytes, self->leaf, self->frame_fn);
	EXPECT_EQ(f[0].depth, sum);
	EXPECT_LE(f[0].depth, m.max_bytes + 512);

	/* a short buffer gets the first frames, and the count of all */
	ASSERT_EQ(0, stk_get(self->fd, &m4, f, 2));
	EXPECT_EQ(m.nr, m4.nr);
	/* stopped: the maximum stays until the next START */
	ASSERT_EQ(0, pt_cmd("deep 16", 0));
	ASSERT_EQ(0, stk_get(self->fd, &m4, f, 0));
	EXPECT_EQ(m.max_bytes, m4.max_bytes);
	ASSERT_EQ(0, stk_start(self->fd, "ktrack_deep_leaf"));
	ASSERT_EQ(0, stk_get(self->fd, &m4, f, 0));
	EXPECT_EQ(0, m4.max_bytes);
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_STACK_STOP));
}

TEST_F(stk, one_owner_until_stop_or_close)
{
	int other = open("/dev/ktrack", O_RDWR | O_CLOEXEC);

	ASSERT_LE(0, other);
	ASSERT_EQ(0, stk_start(self->fd, "ktrack_deep_leaf"));
	EXPECT_EQ(-EBUSY, stk_start(other, "ktrack_deep_leaf"));
	EXPECT_EQ(-EBUSY, stk_start(self->fd, "ktrack_deep_leaf"));
	/* only the owner stops it */
	EXPECT_EQ(-1, ioctl(other, KTRACK_IOC_STACK_STOP));
	EXPECT_EQ(ENOENT, errno);
	/* the owner's session ends: the tracer with it */
	close(self->fd);
	self->fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(0, stk_start(other, "ktrack_deep_leaf"));
	EXPECT_EQ(0, ioctl(other, KTRACK_IOC_STACK_STOP));
	EXPECT_EQ(-1, ioctl(other, KTRACK_IOC_STACK_STOP));
	EXPECT_EQ(ENOENT, errno);
	close(other);
	/* nothing of ours left in ftrace */
	EXPECT_NE(0, kt_run(NULL, 0, "grep -q ktrack_deep /sys/kernel/tracing/enabled_functions"));
}

TEST_F(stk, bad_requests_are_refused_with_nothing_hooked)
{
	struct ktrack_stack_start req = { .size = sizeof(req) };
	struct ktrack_stack_frame f[2];
	struct ktrack_stack_max m;

	EXPECT_EQ(-EINVAL, stk_start(self->fd, "ktrack_no_such_function_xyz"));
	/* one glob that matches and one that does not: refused as a whole */
	EXPECT_EQ(-EINVAL, stk_start(self->fd, "ktrack_deep_leaf ktrack_no_such_function_xyz"));
	/* "!glob" removes: it could leave an empty filter, every function */
	EXPECT_EQ(-EINVAL, stk_start(self->fd, "!ktrack_deep_leaf"));
	req.flags = 1;
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_STACK_START, &req));
	EXPECT_EQ(EINVAL, errno);
	req.flags = 0;
	memset(req.filter, 'a', sizeof(req.filter));	/* unterminated */
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_STACK_START, &req));
	EXPECT_EQ(EINVAL, errno);
	req.size = 4;
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_STACK_START, &req));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_STACK_START, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_STACK_STOP));
	EXPECT_EQ(ENOENT, errno);
	/* GET: out fields set on input, no buffer, an unmapped one */
	memset(&m, 0, sizeof(m));
	m.size = sizeof(m);
	m.checks = 1;
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_STACK_GET, &m));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-EFAULT, stk_get(self->fd, &m, NULL, 2));
	EXPECT_EQ(0, stk_get(self->fd, &m, f, 0));
	memset(&m, 0, sizeof(m));
	m.size = sizeof(m);
	m.func = 1;
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_STACK_GET, &m));
	EXPECT_EQ(EINVAL, errno);
	/* after the refusals, the tracer is free and works */
	EXPECT_EQ(0, stk_start(self->fd, "ktrack_deep_leaf"));
	EXPECT_EQ(0, ioctl(self->fd, KTRACK_IOC_STACK_STOP));
	EXPECT_NE(0, kt_run(NULL, 0, "grep -q ktrack_deep /sys/kernel/tracing/enabled_functions"));
}

TEST_HARNESS_MAIN
