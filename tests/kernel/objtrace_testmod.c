// SPDX-License-Identifier: GPL-2.0
/*
 * Object tracker on the test module's known call chain (see
 * tests/kmod/ktrack_test_objtrace): a kretprobe on the allocator tracks each
 * object, the hook on ktrack_test_obj_* sees it as argument 1, 2 and 6,
 * kmem_cache_free ends the life, and a new object at the same address is a
 * new life.  Checks the counters; objtrace_records checks the records.
 */
#include "kselftest_harness.h"
#include "objtrace_helpers.h"

FIXTURE(testmod) {
	int fd;
};

FIXTURE_SETUP(testmod)
{
	ASSERT_EQ(0, ot_load());
	self->fd = open("/dev/ktrack", O_RDWR);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(testmod)
{
	if (self->fd >= 0)
		close(self->fd);
	ot_unload();
}

static void ot_setup(struct __test_metadata *_metadata, int fd, uint32_t flags,
		     uint32_t max_hits)
{
	struct ktrack_obj_config c;

	ot_default_config(&c, OT_FUNCS);
	c.flags = flags;
	c.max_hits = max_hits;
	ASSERT_EQ(0, ot_ioctl(fd, KTRACK_IOC_OBJ_CONFIG, &c));
	ASSERT_EQ(0, ot_add_source(fd, KTRACK_OBJ_SRC_RETVAL, "ktrack_test_obj_alloc", 0));
	ASSERT_EQ(0, ot_ioctl(fd, KTRACK_IOC_OBJ_ENABLE, NULL));
}

TEST_F(testmod, every_hit_counted_and_free_ends_life)
{
	struct ktrack_obj_stats st;
	int i;

	ot_setup(_metadata, self->fd, 0, 0);
	ASSERT_EQ(0, ot_param_write("run", "10"));
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_DISABLE, NULL));
	ASSERT_EQ(0, ot_stats(self->fd, &st));
	EXPECT_EQ(ot_param_read("addr1"), ot_param_read("addr2"));
	/* Per run: two lives; 5 hits (step1, step2, step_same, step6, free) + 2. */
	EXPECT_EQ(20, st.lives);
	EXPECT_EQ(70, st.hits);
	EXPECT_EQ(20, st.ended[KTRACK_OBJ_END_FREE]);
	EXPECT_EQ(0, st.nr_tracked);
	EXPECT_EQ(0, st.hits_unchanged);
	EXPECT_EQ(0, st.recursion);
	for (i = 0; i < KTRACK_OBJ_DROP_MAX; i++)
		EXPECT_EQ(0, st.dropped[i]) TH_LOG("dropped[%d]", i);
}

TEST_F(testmod, changes_only_counts_unchanged_hits)
{
	struct ktrack_obj_stats st;

	ot_setup(_metadata, self->fd, KTRACK_OBJF_CHANGES_ONLY, 0);
	ASSERT_EQ(0, ot_param_write("run", "10"));
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_DISABLE, NULL));
	ASSERT_EQ(0, ot_stats(self->fd, &st));
	/* Changed: step2 (0x10->0x20), step6 (->0x30); the other 5 are not. */
	EXPECT_EQ(70, st.hits);
	EXPECT_EQ(50, st.hits_unchanged);
	EXPECT_EQ(20, st.hits - st.hits_unchanged);
}

TEST_F(testmod, hit_limit_ends_life)
{
	struct ktrack_obj_stats st;

	ot_setup(_metadata, self->fd, 0, 2);
	ASSERT_EQ(0, ot_param_write("run", "3"));
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_DISABLE, NULL));
	ASSERT_EQ(0, ot_stats(self->fd, &st));
	EXPECT_EQ(6, st.lives);
	EXPECT_EQ(12, st.hits);
	EXPECT_EQ(6, st.ended[KTRACK_OBJ_END_HITS]);
	EXPECT_EQ(0, st.ended[KTRACK_OBJ_END_FREE]);
	EXPECT_EQ(0, st.nr_tracked);
}

TEST_F(testmod, driver_api_tracks)
{
	struct ktrack_obj_stats st;

	/* Without KTRACK_OBJF_API the session ignores drivers. */
	ot_setup(_metadata, self->fd, 0, 0);
	EXPECT_EQ(-ESRCH, ot_param_write("api", "1"));
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_DISABLE, NULL));
	close(self->fd);
	self->fd = open("/dev/ktrack", O_RDWR);
	ASSERT_LE(0, self->fd);
	ot_setup(_metadata, self->fd, KTRACK_OBJF_API, 0);
	ASSERT_EQ(0, ot_param_write("api", "1"));
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_DISABLE, NULL));
	ASSERT_EQ(0, ot_stats(self->fd, &st));
	EXPECT_EQ(1, st.lives);
	EXPECT_EQ(1, st.hits);		/* step1 */
	EXPECT_EQ(1, st.ended[KTRACK_OBJ_END_FREE]);	/* kfree */
}

TEST_F(testmod, kprobe_arg_source_and_destructor)
{
	struct ktrack_obj_config c;
	struct ktrack_obj_stats st;

	/* Track at step2's entry (argument 2); end at step6 (argument 6). */
	ot_default_config(&c, "ktrack_test_obj_step_same ktrack_test_obj_step6");
	c.flags = KTRACK_OBJF_NO_FREE;
	snprintf(c.destructor, sizeof(c.destructor), "ktrack_test_obj_step6");
	c.destructor_arg = 5;
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_CONFIG, &c));
	ASSERT_EQ(0, ot_add_source(self->fd, KTRACK_OBJ_SRC_ARG, "ktrack_test_obj_step2", 1));
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_ENABLE, NULL));
	ASSERT_EQ(0, ot_param_write("run", "4"));
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_DISABLE, NULL));
	ASSERT_EQ(0, ot_stats(self->fd, &st));
	EXPECT_EQ(4, st.lives);
	EXPECT_EQ(4, st.ended[KTRACK_OBJ_END_DESTRUCTOR]);
	/* step_same always; step6 only when its hook runs before the destructor's. */
	EXPECT_LE(4, st.hits);
	EXPECT_GE(8, st.hits);
	EXPECT_EQ(0, st.nr_tracked);
}

/*
 * kmem_cache_free_bulk() (where kfree_bulk() and kfree_rcu()'s batches end)
 * ends the life, so the same address allocated again is a new life, not a
 * duplicate whose hits would continue the old one.
 */
TEST_F(testmod, bulk_free_ends_life)
{
	struct ktrack_obj_stats st;
	int i;

	ot_setup(_metadata, self->fd, 0, 0);
	ASSERT_EQ(0, ot_param_write("bulk", "1"));
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_DISABLE, NULL));
	ASSERT_EQ(0, ot_stats(self->fd, &st));
	ASSERT_EQ(ot_param_read("addr1"), ot_param_read("addr2"));
	EXPECT_EQ(2, st.lives);
	EXPECT_EQ(3, st.hits);		/* step1; step1 + ktrack_test_obj_free */
	EXPECT_EQ(2, st.ended[KTRACK_OBJ_END_FREE]);
	EXPECT_EQ(0, st.nr_tracked);
	for (i = 0; i < KTRACK_OBJ_DROP_MAX; i++)
		EXPECT_EQ(0, st.dropped[i]) TH_LOG("dropped[%d]", i);
}

TEST_F(testmod, vfree_ends_life)
{
	struct ktrack_obj_config c;
	struct ktrack_obj_stats st;

	ot_default_config(&c, OT_FUNCS);
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_CONFIG, &c));
	ASSERT_EQ(0, ot_add_source(self->fd, KTRACK_OBJ_SRC_RETVAL, "ktrack_test_obj_valloc", 0));
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_ENABLE, NULL));
	ASSERT_EQ(0, ot_param_write("vrun", "1"));
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_DISABLE, NULL));
	ASSERT_EQ(0, ot_stats(self->fd, &st));
	EXPECT_EQ(1, st.lives);
	EXPECT_EQ(1, st.hits);		/* step1 */
	EXPECT_EQ(1, st.ended[KTRACK_OBJ_END_FREE]);
	EXPECT_EQ(0, st.nr_tracked);
}

/*
 * A free no hook sees (here: free hooks off) followed by the allocator
 * handing the address out again: the old life ends (REUSE) and the new
 * object gets its own life; its hits do not continue the old one.
 */
TEST_F(testmod, reused_address_ends_old_life)
{
	struct ktrack_obj_stats st;
	uint64_t life1, life2, hits;

	ot_setup(_metadata, self->fd, KTRACK_OBJF_NO_FREE, 0);
	ASSERT_EQ(0, ot_param_write("run", "1"));
	ASSERT_EQ(ot_param_read("addr1"), ot_param_read("addr2"));
	ASSERT_EQ(0, ot_stats(self->fd, &st));
	EXPECT_EQ(2, st.lives);
	EXPECT_EQ(1, st.ended[KTRACK_OBJ_END_REUSE]);
	EXPECT_EQ(0, st.dropped[KTRACK_OBJ_DROP_DUP]);
	EXPECT_EQ(1, st.nr_tracked);	/* the second life: its free is not hooked */
	/* The live one is the second life, with only its own 2 hits. */
	ASSERT_EQ(0, ot_query(self->fd, ot_param_read("addr2"), &life2, &hits));
	EXPECT_EQ(2, hits);		/* step1 + ktrack_test_obj_free */
	ASSERT_EQ(0, ot_param_write("run", "1"));
	ASSERT_EQ(0, ot_query(self->fd, ot_param_read("addr1"), &life1, &hits));
	EXPECT_LT(life2, life1);
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_DISABLE, NULL));
}

TEST_F(testmod, session_close_detaches)
{
	ot_setup(_metadata, self->fd, 0, 0);
	ASSERT_EQ(0, ot_param_write("run", "1"));
	close(self->fd);
	self->fd = -1;
	/* Hooks are gone: running again touches nothing and ktrack unloads. */
	ASSERT_EQ(0, ot_param_write("run", "1"));
	EXPECT_EQ(0, kt_rmmod("ktrack"));
}

TEST_HARNESS_MAIN
