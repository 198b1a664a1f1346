// SPDX-License-Identifier: GPL-2.0
/*
 * Object tracker records, end to end through 'ktrackctl objtrace': the test
 * module's call chain (tests/kmod/ktrack_test_objtrace) gives an exact,
 * known life per object.  Checks the recorded path, argument positions,
 * values, changes, the changes-only output with where the object was last
 * seen unchanged, the free, and the new life of the re-allocated address.
 * Also the same through 'objtrace -o FILE' + 'report --objects FILE'.
 */
#include "kselftest_harness.h"
#include "objtrace_helpers.h"

#define OUT_MAX (1 << 20)

FIXTURE(records) {
	char *out;
};

FIXTURE_SETUP(records)
{
	ASSERT_EQ(0, ot_load());
	self->out = malloc(OUT_MAX);
	ASSERT_NE(NULL, self->out);
}

FIXTURE_TEARDOWN(records)
{
	free(self->out);
	ot_unload();
}

/*
 * The lines of the life block for 'addr' (the n-th life of that address,
 * 0-based): from its "life " line up to and including its "  end:" line,
 * copied into 'blk'.  Returns the number of lines, 0 when not found.
 */
static int ot_life_block(const char *out, uint64_t addr, int nth, char lines[][512], int max)
{
	char key[64];
	const char *p = out;
	int n = 0, seen = -1;

	snprintf(key, sizeof(key), " obj 0x%llx ", (unsigned long long)addr);
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[512];

		snprintf(line, sizeof(line), "%.*s", (int)(len < 511 ? len : 511), p);
		p = nl ? nl + 1 : p + len;
		if (!strncmp(line, "life ", 5)) {
			if (seen == nth)
				break;
			if (strstr(line, key))
				seen++;
		}
		if (seen == nth && n < max)
			snprintf(lines[n++], 512, "%s", line);
	}
	return seen == nth ? n : 0;
}

/* Line 'l' has every string of the NULL-terminated list, in that order. */
static int ot_has(const char *l, ...)
{
	va_list ap;
	const char *s;

	va_start(ap, l);
	while ((s = va_arg(ap, const char *)) != NULL) {
		const char *q = strstr(l, s);

		if (!q) {
			va_end(ap);
			return 0;
		}
		l = q + strlen(s);
	}
	va_end(ap);
	return 1;
}

/* One CPU: the slab hands the freed object back on the CPU that freed it. */
#define OT_RUN_CMD "taskset -c 0 sh -c 'echo 1 > /sys/module/" OT_TESTMOD "/parameters/run'"

/*
 * 'ktrackctl objtrace' over one run of the test module: every object its
 * allocator returns is tracked with the u16 at +4 watched; 'opts' chooses
 * the functions and the output.  The command's exit status.
 */
static int ot_run_alloc(char *out, const char *opts)
{
	return kt_run(out, OUT_MAX, "%s objtrace --from 'r:ktrack_test_obj_alloc $retval' --watch +4:u16 %s -- "
		      OT_RUN_CMD, kt_ktrackctl(), opts);
}

TEST_F(records, exact_path_args_values_and_new_life)
{
	char l[16][512];
	uint64_t a1, a2;
	int n;

	ASSERT_EQ(0, ot_run_alloc(self->out, "--functions '" OT_FUNCS "'"))
		TH_LOG("%s", self->out);
	a1 = ot_param_read("addr1");
	a2 = ot_param_read("addr2");
	ASSERT_EQ(a1, a2);	/* the module re-allocated the same address */

	n = ot_life_block(self->out, a1, 0, l, 16);
	ASSERT_EQ(7, n) TH_LOG("%s", self->out);
	EXPECT_TRUE(ot_has(l[0], "tracked by retval ktrack_test_obj_alloc", "+4=0x10", NULL)) TH_LOG("%s", l[0]);
	EXPECT_TRUE(ot_has(l[1], " ktrack_test_obj_step1 <- ", "  arg1  +4=0x10", NULL)) TH_LOG("%s", l[1]);
	EXPECT_FALSE(ot_has(l[1], "changed", NULL));
	EXPECT_TRUE(ot_has(l[2], " ktrack_test_obj_step2 <- ", "  arg2  +4=0x20  changed", NULL)) TH_LOG("%s", l[2]);
	EXPECT_TRUE(ot_has(l[3], " ktrack_test_obj_step_same <- ", "  arg1  +4=0x20", NULL)) TH_LOG("%s", l[3]);
	EXPECT_FALSE(ot_has(l[3], "changed", NULL));
	EXPECT_TRUE(ot_has(l[4], " ktrack_test_obj_step6 <- ", "  arg6  +4=0x30  changed", NULL)) TH_LOG("%s", l[4]);
	EXPECT_TRUE(ot_has(l[5], " ktrack_test_obj_free <- ", "  arg1  +4=0x30", NULL)) TH_LOG("%s", l[5]);
	EXPECT_TRUE(ot_has(l[6], "  end: free by kmem_cache_free <- ", "after 5 hits", NULL))
		TH_LOG("%s", l[6]);

	/* Same address, new life: a different (larger) life id, its own path. */
	n = ot_life_block(self->out, a1, 1, l, 16);
	ASSERT_EQ(4, n) TH_LOG("%s", self->out);
	EXPECT_TRUE(ot_has(l[0], "tracked by retval ktrack_test_obj_alloc", "+4=0x10", NULL)) TH_LOG("%s", l[0]);
	EXPECT_TRUE(ot_has(l[1], " ktrack_test_obj_step1 <- ", "  arg1  +4=0x10", NULL)) TH_LOG("%s", l[1]);
	EXPECT_TRUE(ot_has(l[2], " ktrack_test_obj_free <- ", "  arg1  +4=0x10", NULL)) TH_LOG("%s", l[2]);
	EXPECT_TRUE(ot_has(l[3], "  end: free by kmem_cache_free", "after 2 hits", NULL)) TH_LOG("%s", l[3]);
	/* No third life of that address. */
	EXPECT_EQ(0, ot_life_block(self->out, a1, 2, l, 16));
}

/*
 * Only one module's functions ('*:mod:MOD', and --module): resolved in
 * userspace from available_filter_functions' [MOD] suffix, hooked by
 * address; the path through the module is the same as with the glob.
 */
TEST_F(records, module_only_function_set)
{
	const char *forms[] = { "--stats --functions '*:mod:" OT_TESTMOD "'",
				"--stats --module " OT_TESTMOD " --functions 'ktrack_test_obj_*'" };
	char l[16][512];
	unsigned int i;
	uint64_t a1;
	int n;

	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, ot_run_alloc(self->out, forms[i]))
			TH_LOG("%s", self->out);
		EXPECT_TRUE(ot_has(self->out, "hooking ", " functions (all ", " matching '", NULL))
			TH_LOG("%s", self->out);
		a1 = ot_param_read("addr1");
		n = ot_life_block(self->out, a1, 0, l, 16);
		ASSERT_EQ(7, n) TH_LOG("%s", self->out);
		EXPECT_TRUE(ot_has(l[1], " ktrack_test_obj_step1 <- ", "  arg1  +4=0x10", NULL)) TH_LOG("%s", l[1]);
		EXPECT_TRUE(ot_has(l[2], " ktrack_test_obj_step2 <- ", "  arg2  +4=0x20  changed", NULL))
			TH_LOG("%s", l[2]);
		EXPECT_TRUE(ot_has(l[4], " ktrack_test_obj_step6 <- ", "  arg6  +4=0x30  changed", NULL))
			TH_LOG("%s", l[4]);
		/* Nothing outside the module was hooked. */
		EXPECT_EQ(NULL, strstr(self->out, " vfs_")) TH_LOG("%s", self->out);
	}
	/* A module that is not loaded matches nothing: a usage error. */
	EXPECT_EQ(1, kt_run(self->out, OUT_MAX,
			    "%s objtrace --from 'r:ktrack_test_obj_alloc $retval' --module ktrack_no_such_mod "
			    "-- true", kt_ktrackctl()));
	EXPECT_TRUE(ot_has(self->out, "no traceable function matches", NULL)) TH_LOG("%s", self->out);
}

TEST_F(records, changes_only_says_where_last_seen_unchanged)
{
	char l[16][512];
	uint64_t a1;
	int n;

	ASSERT_EQ(0, ot_run_alloc(self->out, "--functions '" OT_FUNCS "' --changes-only"))
		TH_LOG("%s", self->out);
	a1 = ot_param_read("addr1");
	n = ot_life_block(self->out, a1, 0, l, 16);
	ASSERT_EQ(4, n) TH_LOG("%s", self->out);
	EXPECT_TRUE(ot_has(l[1], " ktrack_test_obj_step2 <- ", "  arg2  +4=0x20  changed",
			   "(last seen unchanged: ktrack_test_obj_step1 cpu", NULL)) TH_LOG("%s", l[1]);
	EXPECT_TRUE(ot_has(l[2], " ktrack_test_obj_step6 <- ", "  arg6  +4=0x30  changed",
			   "(last seen unchanged: ktrack_test_obj_step_same cpu", NULL)) TH_LOG("%s", l[2]);
	EXPECT_TRUE(ot_has(l[3], "  end: free by kmem_cache_free", "after 5 hits", NULL)) TH_LOG("%s", l[3]);
	/* The second life never changed: no hit recorded, still 2 seen. */
	n = ot_life_block(self->out, a1, 1, l, 16);
	ASSERT_EQ(2, n) TH_LOG("%s", self->out);
	EXPECT_TRUE(ot_has(l[1], "  end: free", "after 2 hits", NULL)) TH_LOG("%s", l[1]);
}

TEST_F(records, file_and_report_objects_json)
{
	char path[] = "/tmp/objtrace-XXXXXX";
	char want[256], opts[512];
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	close(fd);
	snprintf(opts, sizeof(opts), "--functions '" OT_FUNCS "' -o %s", path);
	ASSERT_EQ(0, ot_run_alloc(self->out, opts))
		TH_LOG("%s", self->out);
	ASSERT_EQ(0, kt_run(self->out, OUT_MAX, "%s report --objects --json %s", kt_ktrackctl(), path))
		TH_LOG("%s", self->out);
	unlink(path);
	snprintf(want, sizeof(want), "\"obj\":\"0x%llx\",\"tracked\":true,\"source\":\"retval\"",
		 (unsigned long long)ot_param_read("addr1"));
	EXPECT_NE(NULL, strstr(self->out, want)) TH_LOG("%s", self->out);
	EXPECT_TRUE(ot_has(self->out, "\"function\":\"ktrack_test_obj_step6\"", "\"arg\":6,\"changed\":true,"
			   "\"values\":{\"+4\":48}", NULL)) TH_LOG("%s", self->out);
	EXPECT_TRUE(ot_has(self->out, "\"end\":{\"reason\":\"free\",\"function\":\"kmem_cache_free\"", NULL))
		TH_LOG("%s", self->out);
}

TEST_HARNESS_MAIN
