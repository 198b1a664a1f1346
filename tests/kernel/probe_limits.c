// SPDX-License-Identifier: GPL-2.0
/*
 * ktrack.ko's limits as module parameters, and refusals with a clear
 * errno: max_probes (probes per session: one more is ENOSPC; the
 * parameter takes 1..4096), max_tracked_objects (a larger objtrace table
 * is E2BIG; 1..65536), and a function the kprobes core blacklists
 * (nmi_handle) is refused with EOPNOTSUPP, which ktrackctl explains.
 */
#include "kselftest_harness.h"
#include "objtrace_helpers.h"
#include "probe_common.h"

#define PARAM "/sys/module/ktrack/parameters/"

static int lim_write(const char *param, const char *val)
{
	char p[256];

	snprintf(p, sizeof(p), PARAM "%s", param);
	return kt_write_file(p, 0, val);
}

FIXTURE(limits) {
	int fd;
};

FIXTURE_SETUP(limits)
{
	pt_unload_all();
	ASSERT_EQ(0, kt_insmod(kt_module_path("kmod/ktrack.ko"),
			       "max_probes=2 max_tracked_objects=100"));
	ASSERT_EQ(0, kt_insmod(kt_module_path(PT_MODULE_PATH), NULL));
	self->fd = pt_session();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(limits)
{
	if (self->fd >= 0)
		close(self->fd);
	pt_unload_all();
}

/* Each add runs ktrackctl to compile: more than 30 s on a loaded host. */
TEST_F_TIMEOUT(limits, max_probes_per_session, 300)
{
	int other;

	ASSERT_LT(0, pt_add(self->fd, "p:l1 ktrack_tpt_glob_one", NULL));
	ASSERT_LT(0, pt_add(self->fd, "p:l2 ktrack_tpt_glob_two", NULL));
	EXPECT_EQ(-ENOSPC, pt_add(self->fd, "p:l3 ktrack_tpt_glob_three", NULL));
	/* Per session: another session has its own two. */
	other = pt_session();
	ASSERT_LE(0, other);
	EXPECT_LT(0, pt_add(other, "p:l3 ktrack_tpt_glob_three", NULL));
	close(other);
	EXPECT_EQ(-EINVAL, lim_write("max_probes", "0"));
	EXPECT_EQ(-EINVAL, lim_write("max_probes", "4097"));
	ASSERT_EQ(0, lim_write("max_probes", "3"));
	EXPECT_LT(0, pt_add(self->fd, "p:l3 ktrack_tpt_glob_three", NULL));
	EXPECT_EQ(-ENOSPC, pt_add(self->fd, "p:l4 ktrack_tpt_glob_four", NULL));
}

TEST_F_TIMEOUT(limits, max_tracked_objects, 300)
{
	struct ktrack_obj_config c;
	int fd2;

	ot_default_config(&c, "ktrack_tpt_glob_one");
	c.max_objects = 101;
	EXPECT_EQ(-E2BIG, ot_ioctl(self->fd, KTRACK_IOC_OBJ_CONFIG, &c));
	c.max_objects = 100;
	EXPECT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_CONFIG, &c));
	EXPECT_EQ(-EINVAL, lim_write("max_tracked_objects", "0"));
	EXPECT_EQ(-EINVAL, lim_write("max_tracked_objects", "65537"));
	ASSERT_EQ(0, lim_write("max_tracked_objects", "200"));
	fd2 = pt_session();
	ASSERT_LE(0, fd2);
	c.max_objects = 200;
	EXPECT_EQ(0, ot_ioctl(fd2, KTRACK_IOC_OBJ_CONFIG, &c));
	close(fd2);
}

TEST_F_TIMEOUT(limits, kprobe_blacklisted_function_refused_clearly, 300)
{
	char out[4096];
	int ret;

	/*
	 * nmi_handle is NOKPROBE: the kprobes core refuses it.  (ktrackctl
	 * sends 'p nmi_handle' to ktrack's ftrace_ops, as ftrace traces it:
	 * inside the function it stays a kprobe.)
	 */
	EXPECT_EQ(-EOPNOTSUPP, pt_add(self->fd, "p:nm nmi_handle", NULL));
	ret = kt_run(out, sizeof(out),
		     "k=%s; $k session create lim >/dev/null 2>&1; $k probe add -s lim 'p:nm nmi_handle+1' 2>&1; "
		     "r=$?; $k session destroy lim >/dev/null 2>&1; exit $r", kt_ktrackctl());
	EXPECT_NE(0, ret);
	EXPECT_NE(NULL, strstr(out, "nmi_handle+1 is not probeable (blacklisted for kprobes")) TH_LOG("%s", out);
}

TEST_HARNESS_MAIN
