// SPDX-License-Identifier: GPL-2.0
/*
 * Object tracker at scale: 10,000 explicitly tracked objects (the test
 * module's array), every lookup correct (tracked addresses found with their
 * own life, neighbours not), each hit counted on the right object, and
 * untracking all leaves the set empty.
 */
#include "kselftest_harness.h"
#include "objtrace_helpers.h"

#define NR 10000
#define OBJ_SIZE 64

FIXTURE(scale) {
	int fd;
};

FIXTURE_SETUP(scale)
{
	ASSERT_EQ(0, ot_load());
	self->fd = open("/dev/ktrack", O_RDWR);
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(scale)
{
	if (self->fd >= 0)
		close(self->fd);
	ot_unload();
}

TEST_F(scale, ten_thousand_objects)
{
	struct ktrack_obj_config c;
	struct ktrack_obj_stats st;
	uint64_t base = ot_param_read("array"), life, hits, prev = 0;
	struct ktrack_obj_addr a = { .size = sizeof(a) };
	int i, bad = 0;

	ASSERT_NE(0, base);
	ot_default_config(&c, "ktrack_test_obj_step1");
	c.max_objects = NR;
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_CONFIG, &c));
	for (i = 0; i < NR; i++) {
		a.addr = base + (uint64_t)i * OBJ_SIZE;
		a.life = 0;
		ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_TRACK, &a)) TH_LOG("object %d", i);
		ASSERT_LT(prev, a.life);	/* life ids only grow */
		prev = a.life;
	}
	/* Full: one more is refused and counted. */
	a.addr = base + 8;
	a.life = 0;
	EXPECT_EQ(-ENOSPC, ot_ioctl(self->fd, KTRACK_IOC_OBJ_TRACK, &a));
	/* Already tracked. */
	a.addr = base;
	EXPECT_EQ(-EEXIST, ot_ioctl(self->fd, KTRACK_IOC_OBJ_TRACK, &a));
	ASSERT_EQ(0, ot_stats(self->fd, &st));
	EXPECT_EQ(NR, st.nr_tracked);
	EXPECT_EQ(NR, st.lives);
	EXPECT_EQ(1, st.dropped[KTRACK_OBJ_DROP_FULL]);
	EXPECT_EQ(1, st.dropped[KTRACK_OBJ_DROP_DUP]);

	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_ENABLE, NULL));
	ASSERT_EQ(0, ot_param_write("touch", "10000"));
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_DISABLE, NULL));

	for (i = 0; i < NR; i++) {
		bad += ot_query(self->fd, base + (uint64_t)i * OBJ_SIZE, &life, &hits) != 0;
		bad += hits != 1;
		bad += life != prev - (NR - 1) + i;
		/* An address inside an object is not the object. */
		bad += ot_query(self->fd, base + (uint64_t)i * OBJ_SIZE + 8, NULL, NULL) != -ENOENT;
	}
	EXPECT_EQ(0, bad);
	ASSERT_EQ(0, ot_stats(self->fd, &st));
	EXPECT_EQ(NR, st.hits);
	EXPECT_EQ(0, st.recursion);

	a.addr = 0;
	a.life = 0;
	a.flags = KTRACK_OBJ_ADDR_ALL;
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_UNTRACK, &a));
	ASSERT_EQ(0, ot_stats(self->fd, &st));
	EXPECT_EQ(0, st.nr_tracked);
	EXPECT_EQ(NR, st.ended[KTRACK_OBJ_END_EXPLICIT]);
	for (i = 0, bad = 0; i < NR; i++)
		bad += ot_query(self->fd, base + (uint64_t)i * OBJ_SIZE, NULL, NULL) != -ENOENT;
	EXPECT_EQ(0, bad);

	/* The pool is whole again: every object can be tracked anew. */
	for (i = 0, bad = 0; i < NR; i++) {
		a.addr = base + (uint64_t)i * OBJ_SIZE;
		a.flags = 0;
		a.life = 0;
		bad += ot_ioctl(self->fd, KTRACK_IOC_OBJ_TRACK, &a) != 0;
		bad += a.life <= prev;
	}
	EXPECT_EQ(0, bad);
	ASSERT_EQ(0, ot_stats(self->fd, &st));
	EXPECT_EQ(NR, st.nr_tracked);
}

TEST_HARNESS_MAIN
