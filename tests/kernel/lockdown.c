// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel lockdown (review finding #5): under lockdown=confidentiality
 * nothing may hook kernel functions or read kernel memory through ktrack:
 * no p/r/f probe, no t probe that dereferences, reads a kernel string or
 * an @SYM, and no object tracker (OBJ_CONFIG, ADD_SOURCE, TRACK, ENABLE).
 * A plain t probe (raw arguments only) stays allowed, as tracefs's raw
 * events are not (those are refused wholesale by LOCKDOWN_TRACEFS).
 *
 * Under lockdown=integrity all of it stays allowed, as the kernel's own
 * kprobe_events are (LOCKDOWN_KPROBES is a confidentiality reason).
 * ktrackctl's doctor names the mode, and its sentences for what the mode
 * refuses say so (make check runs both modes on both kernels).
 *
 * What was armed before lockdown was raised keeps running, as with the
 * kernel's own tracers: trace_kprobe.c checks LOCKDOWN_KPROBES when it
 * registers a kprobe (at creation and when a module comes back), never
 * at a hit, and lockdown does not remove existing kprobe events.  ktrack
 * checks at every arm (ADD, and re-arm by the module notifier) likewise.
 * An immediate (\IMM) reads no kernel memory and stays allowed.
 *
 * Runs only in a guest started with 'tests/vm/run --lockdown
 * confidentiality|integrity' (else SKIP): it loads the modules first (lockdown
 * refuses unsigned modules), then raises /sys/kernel/security/lockdown,
 * which cannot be lowered again.
 */
#include <sys/ioctl.h>

#include "kselftest_harness.h"
#include "objtrace_helpers.h"
#include "probe_common.h"

/* LEVEL of ktrack_lockdown=LEVEL on the kernel command line, or NULL. */
static const char *ld_wanted(void)
{
	static char level[64];
	char line[4096], *p;
	FILE *f = fopen("/proc/cmdline", "r");

	if (!f)
		return NULL;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (!p || !(p = strstr(line, "ktrack_lockdown=")))
		return NULL;
	sscanf(p + strlen("ktrack_lockdown="), "%63s", level);
	return level;
}

static int ld_raise(const char *level)
{
	return kt_write_file("/sys/kernel/security/lockdown", 0, level);
}

/*
 * One test: lockdown cannot be lowered, and the modules cannot be loaded
 * again once it is raised, so everything is set up before, in one place.
 */
TEST(everything_that_reads_kernel_memory_is_refused)
{
	const char *level = ld_wanted();
	struct ktrack_obj_config cfg, c;
	struct ktrack_obj_addr a = { .size = sizeof(a) };
	struct ktrack_obj_stats st;
	struct ktrack_probe_info info = { 0 };
	static char out[1 << 16];
	int fd, pre, conf;

	if (!level)
		SKIP(return, "needs a guest from 'tests/vm/run --lockdown confidentiality|integrity'");
	/* ktrack, the object tracker's and the probes' target modules */
	ASSERT_EQ(0, ot_load());
	ASSERT_EQ(0, pt_load_all());
	fd = pt_session();
	ASSERT_LE(0, fd);
	/* configured while allowed: TRACK, ADD_SOURCE and ENABLE are checked too */
	ot_default_config(&cfg, OT_FUNCS);
	ASSERT_EQ(0, ot_ioctl(fd, KTRACK_IOC_OBJ_CONFIG, &cfg));
	/* any kernel address would do: its watched fields would go into records */
	a.addr = ot_kallsyms("ktrack_test_obj_alloc");
	ASSERT_NE(0, a.addr);
	/* armed before lockdown: keeps firing after it, like a kprobe event */
	pre = pt_add(fd, "p:pre ktrack_tpt_add a=$arg1:s32", NULL);
	ASSERT_LT(0, pre);
	conf = !strcmp(level, "confidentiality");
	ASSERT_TRUE(conf || !strcmp(level, "integrity")) TH_LOG("level '%s'", level);
	ASSERT_EQ(0, ld_raise(level));
	ASSERT_EQ(0, pt_cmd("call 2", 0));
	ASSERT_EQ(0, pt_info(fd, pre, &info));
	EXPECT_EQ(KTRACK_PROBE_ST_ARMED, info.state);
	EXPECT_EQ(2, info.hits);
	/* an immediate reads no kernel memory */
	EXPECT_LT(0, pt_add(fd, "t:im sched/sched_process_fork k=\\42:u64", NULL));

	/* ktrackctl names the mode and says what it refuses */
	kt_run(out, sizeof(out), "%s doctor", kt_ktrackctl());
	EXPECT_NE(NULL, strstr(out, conf ? "kernel lockdown is 'confidentiality'" :
				     "kernel lockdown is 'integrity'")) TH_LOG("%s", out);
	EXPECT_EQ(conf, strstr(out, "fail with EPERM") != NULL) TH_LOG("%s", out);

	if (!conf) {
		/* integrity: kprobes and kernel reads stay allowed */
		EXPECT_EQ(0, kt_run(out, sizeof(out),
				    "%s record -q -o /tmp/ld.ktr 'p:lc ktrack_tpt_add a=$arg1:s32' -- sh -c 'echo call 3 >%s'",
				    kt_ktrackctl(), PT_PROC)) TH_LOG("%s", out);
		kt_run(out, sizeof(out), "%s report /tmp/ld.ktr 2>&1 | grep -c ' lc: '", kt_ktrackctl());
		EXPECT_EQ(3, atoi(out)) TH_LOG("%s", out);
		EXPECT_LT(0, pt_add(fd, "p:lp ktrack_tpt_add", NULL));
		EXPECT_LT(0, pt_add(fd, "t:ld sched/sched_process_fork v=+0($arg1):u64", NULL));
		EXPECT_EQ(0, ot_add_source(fd, KTRACK_OBJ_SRC_RETVAL, "ktrack_test_obj_alloc", 0));
		EXPECT_EQ(0, ot_ioctl(fd, KTRACK_IOC_OBJ_ENABLE, NULL));
		EXPECT_EQ(0, ot_ioctl(fd, KTRACK_IOC_OBJ_DISABLE, NULL));
		close(fd);
		kt_rmmod(OT_TESTMOD);
		pt_unload_all();
		return;
	}

	/* ktrackctl's sentences: the mode, what it forbids, how to get out */
	EXPECT_NE(0, kt_run(out, sizeof(out), "%s record -q -o /tmp/ld.ktr 'p:lc ktrack_tpt_add' -- true",
			    kt_ktrackctl()));
	EXPECT_NE(NULL, strstr(out, "locked down (confidentiality)")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "boot without lockdown")) TH_LOG("%s", out);
	/* an f probe: refused before the kernel is asked (tracefs is locked too) */
	EXPECT_NE(0, kt_run(out, sizeof(out), "%s record -q -o /tmp/ld.ktr 'f:lf ktrack_tpt_add' -- true",
			    kt_ktrackctl()));
	EXPECT_NE(NULL, strstr(out, "locked down (confidentiality)")) TH_LOG("%s", out);
	EXPECT_NE(0, kt_run(out, sizeof(out),
			    "%s objtrace --from 'r:ktrack_test_obj_alloc $retval' --module " OT_TESTMOD
			    " --functions 'ktrack_test_obj_*' -- true", kt_ktrackctl()));
	EXPECT_NE(NULL, strstr(out, "locked down (confidentiality)")) TH_LOG("%s", out);
	/* a t probe with raw arguments records (record forks its command) */
	EXPECT_EQ(0, kt_run(out, sizeof(out),
			    "%s record -q -o /tmp/ld.ktr 't:lt sched/sched_process_fork a=$arg1:x64' -- true",
			    kt_ktrackctl())) TH_LOG("%s", out);
	kt_run(out, sizeof(out), "%s report /tmp/ld.ktr 2>&1 | grep -c ' lt: '", kt_ktrackctl());
	EXPECT_LE(1, atoi(out)) TH_LOG("%s", out);

	/* refused before this fix already: kprobe-based probes */
	EXPECT_EQ(-EPERM, pt_add(fd, "p:lp ktrack_tpt_add", NULL));
	EXPECT_EQ(-EPERM, pt_add(fd, "r:lr ktrack_tpt_add", NULL));
	/* tracepoints that read memory or give out kernel addresses */
	EXPECT_EQ(-EPERM, pt_add(fd, "t:ld sched/sched_process_fork v=+0($arg1):u64", NULL));
	EXPECT_EQ(-EPERM, pt_add(fd, "t:ls sched/sched_process_fork s=+0($arg1):string", NULL));
	EXPECT_EQ(-EPERM, pt_add(fd, "t:li sched/sched_process_fork j=@jiffies:u64", NULL));
	/* raw arguments only: allowed */
	EXPECT_LT(0, pt_add(fd, "t:ok sched/sched_process_fork a=$arg1:x64", NULL));

	/* the object tracker */
	ot_default_config(&c, OT_FUNCS);
	EXPECT_EQ(-EPERM, ot_ioctl(fd, KTRACK_IOC_OBJ_CONFIG, &c));
	EXPECT_EQ(-EPERM, ot_add_source(fd, KTRACK_OBJ_SRC_RETVAL, "ktrack_test_obj_alloc", 0));
	EXPECT_EQ(-EPERM, ot_ioctl(fd, KTRACK_IOC_OBJ_TRACK, &a));
	EXPECT_EQ(-EPERM, ot_ioctl(fd, KTRACK_IOC_OBJ_ENABLE, NULL));
	/* reading back what exists is fine, and nothing was attached */
	EXPECT_EQ(0, ot_stats(fd, &st));
	EXPECT_EQ(0, st.enabled);
	EXPECT_EQ(0, st.nr_tracked);
	EXPECT_EQ(0, st.nr_sources);
	close(fd);
	/* unloading stays allowed under lockdown */
	kt_rmmod(OT_TESTMOD);
	pt_unload_all();
}

TEST_HARNESS_MAIN
