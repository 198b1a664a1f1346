// SPDX-License-Identifier: GPL-2.0
/*
 * Object trackers whose hooked functions' module goes (review 2026-11-27
 * #5): the module's functions leave every tracker's ftrace filters at
 * MODULE_STATE_GOING (kmod/objtrace_module.c), so that no call site of a
 * module loaded later (at the same address or not) is hooked; a tracker
 * that lost functions is marked gone (stats), ENABLE and ADD_SOURCE are
 * ESTALE, one left with nothing hooked is disabled (DISABLE then ESTALE),
 * and OBJ_CONFIG starts afresh.  Trackers on vmlinux functions keep
 * working throughout.
 *
 * The vmlinux function is getppid's: SYSCALL_DEFINE0 makes __x64_sys_getppid
 * an alias of __do_sys_getppid (__SYS_STUB0), and ftrace names each call
 * site by one kallsyms name of its address, so the glob
 * "__x64_sys_getppid" matches no ftrace function on these kernels and
 * OBJ_CONFIG is EINVAL (ftrace_set_filter() in objtrace_hooks_prepare());
 * "*sys_getppid" matches whichever name ftrace has.  A kprobe (by any
 * alias) tracks getppid's argument, the caller's pt_regs, which is the
 * same object at each call of this thread: the hook sees it from the
 * second call on.
 */
#include <sys/syscall.h>

#include "kselftest_harness.h"
#include "objtrace_helpers.h"

#define MG_GETPPID_GLOB "*sys_getppid"
#define MG_GETPPID_SYM "__x64_sys_getppid"
#define MG_STEP1 "ktrack_test_obj_step1"
#define MG_STEP2 "ktrack_test_obj_step2"

FIXTURE(modgoing) {
	int fd[4];
};

FIXTURE_SETUP(modgoing)
{
	int i;

	ASSERT_EQ(0, ot_load());
	for (i = 0; i < 4; i++) {
		self->fd[i] = open("/dev/ktrack", O_RDWR);
		ASSERT_LE(0, self->fd[i]);
	}
}

FIXTURE_TEARDOWN(modgoing)
{
	int i;

	for (i = 0; i < 4; i++)
		if (self->fd[i] >= 0)
			close(self->fd[i]);
	if (kt_module_loaded(OT_TESTMOD))
		kt_rmmod(OT_TESTMOD);
	EXPECT_EQ(0, kt_rmmod("ktrack"));
}

static int mg_insmod_testmod(void)
{
	return kt_insmod(kt_module_path("tests/kmod/" OT_TESTMOD "/" OT_TESTMOD ".ko"), "");
}

static void mg_getppid(int n)
{
	while (n--)
		syscall(SYS_getppid);
}

/* A tracker on getppid (by glob or address set), tracking its pt_regs. */
static void mg_getppid_tracker(struct __test_metadata *_metadata, int fd)
{
	struct ktrack_obj_config c;

	ot_default_config(&c, MG_GETPPID_GLOB);
	c.flags = KTRACK_OBJF_NO_FREE;
	c.nr_args = 1;
	ASSERT_EQ(0, ot_ioctl(fd, KTRACK_IOC_OBJ_CONFIG, &c));
	ASSERT_EQ(0, ot_add_source(fd, KTRACK_OBJ_SRC_ARG, MG_GETPPID_SYM, 0));
	ASSERT_EQ(0, ot_ioctl(fd, KTRACK_IOC_OBJ_ENABLE, NULL));
}

/* getppid() hits the tracker: its hit count grows. */
static void mg_expect_getppid_hits(struct __test_metadata *_metadata, int fd, const char *who)
{
	struct ktrack_obj_stats before, after;

	ASSERT_EQ(0, ot_stats(fd, &before));
	mg_getppid(5);
	ASSERT_EQ(0, ot_stats(fd, &after));
	EXPECT_LE(before.hits + 4, after.hits) TH_LOG("%s: getppid no longer hits", who);
	EXPECT_LE(1, after.lives) TH_LOG("%s", who);
}

/* No call site of the test module is hooked by anyone (enabled_functions). */
static void mg_expect_testmod_unhooked(struct __test_metadata *_metadata, const char *when)
{
	static char buf[1 << 20];
	ssize_t n = kt_tracefs_read("enabled_functions", buf, sizeof(buf));

	ASSERT_LE(0, n);
	EXPECT_EQ(NULL, strstr(buf, "ktrack_test_obj_")) TH_LOG("%s: %s", when,
								strstr(buf, "ktrack_test_obj_"));
}

TEST_F(modgoing, trackers_let_go_of_a_module_that_goes)
{
	struct ktrack_obj_func mixed[3], modonly[1];
	struct ktrack_obj_config c;
	struct ktrack_obj_stats st;
	uint64_t step1, step2, getppid, hits_a, hits_d;
	int a = self->fd[0], b = self->fd[1], cc = self->fd[2], d = self->fd[3];

	/* The lost draft's setup: the alias is EINVAL (see the top). */
	ot_default_config(&c, MG_GETPPID_SYM);
	c.nr_args = 1;
	EXPECT_EQ(-EINVAL, ot_ioctl(b, KTRACK_IOC_OBJ_CONFIG, &c));

	/*
	 * Load the module once more first: ktrack.ko's init sections are
	 * freed after it is loaded (a work item), and the hole they leave
	 * would take the module's text at its next load.  Loaded in that
	 * steady state, it usually comes back at the same address below,
	 * where a stale filter entry would hook it (logged).
	 */
	ASSERT_EQ(0, kt_rmmod(OT_TESTMOD));
	ASSERT_EQ(0, mg_insmod_testmod());
	step1 = ot_kallsyms(MG_STEP1);
	step2 = ot_kallsyms(MG_STEP2);
	getppid = ot_kallsyms(MG_GETPPID_SYM);
	ASSERT_NE(0, step1);
	ASSERT_NE(0, step2);
	ASSERT_NE(0, getppid);

	/* A: the module's functions by glob, objects from its allocator. */
	ot_default_config(&c, OT_FUNCS);
	ASSERT_EQ(0, ot_ioctl(a, KTRACK_IOC_OBJ_CONFIG, &c));
	ASSERT_EQ(0, ot_add_source(a, KTRACK_OBJ_SRC_RETVAL, "ktrack_test_obj_alloc", 0));
	ASSERT_EQ(0, ot_ioctl(a, KTRACK_IOC_OBJ_ENABLE, NULL));
	/* B: vmlinux only. */
	mg_getppid_tracker(_metadata, b);
	/* C: by address, step1 and getppid in one group, step2 alone in another. */
	memset(mixed, 0, sizeof(mixed));
	mixed[0] = (struct ktrack_obj_func){ .addr = step1, .arg_mask = 0x1 };
	mixed[1] = (struct ktrack_obj_func){ .addr = getppid, .arg_mask = 0x1 };
	mixed[2] = (struct ktrack_obj_func){ .addr = step2, .arg_mask = 0x2 };
	ot_addr_config(&c, mixed, 3);
	c.flags |= KTRACK_OBJF_NO_FREE;
	ASSERT_EQ(0, ot_ioctl(cc, KTRACK_IOC_OBJ_CONFIG, &c));
	ASSERT_EQ(0, ot_add_source(cc, KTRACK_OBJ_SRC_ARG, MG_GETPPID_SYM, 0));
	ASSERT_EQ(0, ot_ioctl(cc, KTRACK_IOC_OBJ_ENABLE, NULL));
	/* D: by address, the module's step1 only. */
	memset(modonly, 0, sizeof(modonly));
	modonly[0] = (struct ktrack_obj_func){ .addr = step1, .arg_mask = 0x1 };
	ot_addr_config(&c, modonly, 1);
	ASSERT_EQ(0, ot_ioctl(d, KTRACK_IOC_OBJ_CONFIG, &c));
	ASSERT_EQ(0, ot_add_source(d, KTRACK_OBJ_SRC_RETVAL, "ktrack_test_obj_alloc", 0));
	ASSERT_EQ(0, ot_ioctl(d, KTRACK_IOC_OBJ_ENABLE, NULL));

	ASSERT_EQ(0, ot_param_write("run", "2"));
	ASSERT_EQ(0, ot_stats(a, &st));
	EXPECT_EQ(14, st.hits);
	EXPECT_EQ(0, st.flags);
	EXPECT_EQ(0, st.funcs_gone);
	hits_a = st.hits;
	ASSERT_EQ(0, ot_stats(d, &st));
	EXPECT_EQ(4, st.hits);		/* step1 of each life */
	hits_d = st.hits;
	mg_expect_getppid_hits(_metadata, b, "B before");
	mg_expect_getppid_hits(_metadata, cc, "C before");

	ASSERT_EQ(0, kt_rmmod(OT_TESTMOD));

	/* A: every hooked function went: disabled, gone, ESTALE. */
	ASSERT_EQ(0, ot_stats(a, &st));
	EXPECT_EQ(KTRACK_OBJ_STATS_F_MODULE_GONE, st.flags);
	EXPECT_LE(6, st.funcs_gone);	/* alloc, step1, step2, step_same, step6, free, ... */
	EXPECT_EQ(0, st.enabled);
	EXPECT_EQ(hits_a, st.hits);
	EXPECT_EQ(-ESTALE, ot_ioctl(a, KTRACK_IOC_OBJ_ENABLE, NULL));
	EXPECT_EQ(-ESTALE, ot_add_source(a, KTRACK_OBJ_SRC_RETVAL, "kmem_cache_alloc", 0));
	EXPECT_EQ(-ESTALE, ot_ioctl(a, KTRACK_IOC_OBJ_DISABLE, NULL));
	EXPECT_EQ(-ENOENT, ot_query(a, step1, NULL, NULL));
	/* B: untouched. */
	ASSERT_EQ(0, ot_stats(b, &st));
	EXPECT_EQ(0, st.flags);
	EXPECT_EQ(0, st.funcs_gone);
	EXPECT_EQ(1, st.enabled);
	mg_expect_getppid_hits(_metadata, b, "B after");
	/* C: step1 left its group, step2's group was unhooked; getppid stays. */
	ASSERT_EQ(0, ot_stats(cc, &st));
	EXPECT_EQ(KTRACK_OBJ_STATS_F_MODULE_GONE, st.flags);
	EXPECT_EQ(2, st.funcs_gone);
	EXPECT_EQ(1, st.enabled);
	mg_expect_getppid_hits(_metadata, cc, "C after");
	/* D: nothing left hooked: disabled. */
	ASSERT_EQ(0, ot_stats(d, &st));
	EXPECT_EQ(KTRACK_OBJ_STATS_F_MODULE_GONE, st.flags);
	EXPECT_EQ(1, st.funcs_gone);
	EXPECT_EQ(0, st.enabled);
	EXPECT_EQ(-ESTALE, ot_ioctl(d, KTRACK_IOC_OBJ_DISABLE, NULL));
	EXPECT_EQ(-ESTALE, ot_ioctl(d, KTRACK_IOC_OBJ_ENABLE, NULL));
	mg_expect_testmod_unhooked(_metadata, "after rmmod");

	/* The module again, maybe at the same address: nobody's hooks run there. */
	ASSERT_EQ(0, mg_insmod_testmod());
	TH_LOG("step1 was at %#llx, is now at %#llx%s", (unsigned long long)step1,
	       (unsigned long long)ot_kallsyms(MG_STEP1),
	       ot_kallsyms(MG_STEP1) == step1 ? " (the same address)" : "");
	mg_expect_testmod_unhooked(_metadata, "after insmod");
	ASSERT_EQ(0, ot_param_write("run", "2"));
	ASSERT_EQ(0, ot_stats(a, &st));
	EXPECT_EQ(hits_a, st.hits);
	ASSERT_EQ(0, ot_stats(d, &st));
	EXPECT_EQ(hits_d, st.hits);
	mg_expect_getppid_hits(_metadata, cc, "C after insmod");
	/* C: enabled, and a function went: DISABLE works, ENABLE is ESTALE. */
	EXPECT_EQ(0, ot_ioctl(cc, KTRACK_IOC_OBJ_DISABLE, NULL));
	EXPECT_EQ(-ESTALE, ot_ioctl(cc, KTRACK_IOC_OBJ_ENABLE, NULL));

	/* OBJ_CONFIG starts afresh: A hooks the module that is back. */
	ot_default_config(&c, OT_FUNCS);
	ASSERT_EQ(0, ot_ioctl(a, KTRACK_IOC_OBJ_CONFIG, &c));
	ASSERT_EQ(0, ot_add_source(a, KTRACK_OBJ_SRC_RETVAL, "ktrack_test_obj_alloc", 0));
	ASSERT_EQ(0, ot_ioctl(a, KTRACK_IOC_OBJ_ENABLE, NULL));
	ASSERT_EQ(0, ot_param_write("run", "1"));
	ASSERT_EQ(0, ot_stats(a, &st));
	EXPECT_EQ(0, st.flags);
	EXPECT_EQ(0, st.funcs_gone);
	EXPECT_EQ(7, st.hits);
	EXPECT_EQ(2, st.lives);
	/* ...and lets go of it at the next rmmod. */
	ASSERT_EQ(0, kt_rmmod(OT_TESTMOD));
	ASSERT_EQ(0, ot_stats(a, &st));
	EXPECT_EQ(KTRACK_OBJ_STATS_F_MODULE_GONE, st.flags);
	EXPECT_EQ(0, st.enabled);
	mg_expect_testmod_unhooked(_metadata, "after the second rmmod");
	mg_expect_getppid_hits(_metadata, b, "B at the end");
}

/*
 * A glob whose names a module loaded after OBJ_CONFIG also has: its
 * functions were never hooked, and its unload leaves the tracker enabled
 * and not gone (it is disabled and enabled again around the check).
 */
TEST_F(modgoing, module_loaded_after_config_leaves_the_tracker_alone)
{
	struct ktrack_obj_config c;
	struct ktrack_obj_stats st;
	int f = self->fd[0];

	ASSERT_EQ(0, kt_rmmod(OT_TESTMOD));
	/* ktrack.ko's ktrack_obj_track and ktrack_obj_untrack, for now. */
	ot_default_config(&c, "ktrack_*obj_* " MG_GETPPID_GLOB);
	c.flags = KTRACK_OBJF_NO_FREE;
	c.nr_args = 1;
	ASSERT_EQ(0, ot_ioctl(f, KTRACK_IOC_OBJ_CONFIG, &c));
	ASSERT_EQ(0, ot_add_source(f, KTRACK_OBJ_SRC_ARG, MG_GETPPID_SYM, 0));
	ASSERT_EQ(0, ot_ioctl(f, KTRACK_IOC_OBJ_ENABLE, NULL));
	ASSERT_EQ(0, mg_insmod_testmod());
	mg_expect_testmod_unhooked(_metadata, "a module that came after OBJ_CONFIG");
	ASSERT_EQ(0, kt_rmmod(OT_TESTMOD));
	ASSERT_EQ(0, ot_stats(f, &st));
	EXPECT_EQ(0, st.flags);
	EXPECT_EQ(0, st.funcs_gone);
	EXPECT_EQ(1, st.enabled);
	mg_expect_getppid_hits(_metadata, f, "F");
	EXPECT_EQ(0, ot_ioctl(f, KTRACK_IOC_OBJ_DISABLE, NULL));
	EXPECT_EQ(0, ot_ioctl(f, KTRACK_IOC_OBJ_ENABLE, NULL));
	EXPECT_EQ(0, ot_ioctl(f, KTRACK_IOC_OBJ_DISABLE, NULL));
}

/*
 * ktrackctl objtrace on a module's functions, the module unloaded by the
 * command: the tracker went with it, and ktrackctl says so (ESTALE).
 */
TEST_F(modgoing, ktrackctl_says_the_module_was_unloaded)
{
	static char out[1 << 16];
	int rc;

	rc = kt_run(out, sizeof(out),
		    "%s objtrace --from 'r:ktrack_test_obj_alloc $retval' --module " OT_TESTMOD
		    " --functions 'ktrack_test_obj_*' -- rmmod " OT_TESTMOD, kt_ktrackctl());
	EXPECT_EQ(2, rc) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "was unloaded")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "re-run objtrace")) TH_LOG("%s", out);
	EXPECT_FALSE(kt_module_loaded(OT_TESTMOD));
}

/* A stats caller of the first struct's size is still served. */
TEST_F(modgoing, v1_stats_size_still_served)
{
	struct ktrack_obj_stats st;

	memset(&st, 0xff, sizeof(st));
	st.size = KTRACK_OBJ_STATS_SIZE_V1;
	ASSERT_EQ(0, ot_ioctl(self->fd[0], KTRACK_IOC_OBJ_GET_STATS, &st));
	EXPECT_EQ(0, st.lives);
	/* nothing written past the V1 struct */
	EXPECT_EQ(0xffffffffu, st.flags);
	EXPECT_EQ(0xffffffffu, st.funcs_gone);
}

TEST_HARNESS_MAIN
