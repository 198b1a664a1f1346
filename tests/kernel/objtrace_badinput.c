// SPDX-License-Identifier: GPL-2.0
/*
 * Object tracker bad input: invalid sources, offsets, types, function sets
 * that match no traceable function, limits out of range.  Each is refused
 * with its errno and changes nothing (the previous configuration, sources
 * and tracked set stay as they were).
 */
#include "kselftest_harness.h"
#include "objtrace_helpers.h"

FIXTURE(bad) {
	int fd;
	uint64_t base;
};

FIXTURE_SETUP(bad)
{
	struct ktrack_obj_config c;
	struct ktrack_obj_addr a = { .size = sizeof(a) };

	ASSERT_EQ(0, ot_load());
	self->fd = open("/dev/ktrack", O_RDWR);
	ASSERT_LE(0, self->fd);
	self->base = ot_param_read("array");
	ASSERT_NE(0, self->base);
	/* A good configuration with one tracked object and one source. */
	ot_default_config(&c, OT_FUNCS);
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_CONFIG, &c));
	ASSERT_EQ(0, ot_add_source(self->fd, KTRACK_OBJ_SRC_RETVAL, "ktrack_test_obj_alloc", 0));
	a.addr = self->base;
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_TRACK, &a));
}

FIXTURE_TEARDOWN(bad)
{
	if (self->fd >= 0)
		close(self->fd);
	ot_unload();
}

/* The state set up by the fixture is intact. */
static void ot_unchanged(struct __test_metadata *_metadata, int fd, uint64_t base)
{
	struct ktrack_obj_stats st;

	ASSERT_EQ(0, ot_stats(fd, &st));
	EXPECT_EQ(64, st.capacity);
	EXPECT_EQ(1, st.nr_tracked);
	EXPECT_EQ(1, st.nr_sources);
	EXPECT_EQ(1, st.nr_functions);
	EXPECT_EQ(0, st.enabled);
	EXPECT_EQ(0, ot_query(fd, base, NULL, NULL));
}

TEST_F(bad, config_rejected_and_nothing_changes)
{
	static const char good[] = OT_FUNCS;
	struct ktrack_obj_config c;
	char big[KTRACK_OBJ_FUNCS_MAX + 2];
	struct {
		const char *what;
		const char *funcs;
		int err;
		void (*tweak)(struct ktrack_obj_config *c);
	} *t, cases[] = {
		{ "no such function", "ktrack_no_such_function_xyz", -EINVAL, NULL },
		{ "notrace function (not traceable)", "trace_clock_local", -EINVAL, NULL },
		{ "empty set", " ", -EINVAL, NULL },
		/* ftrace's "remove": an empty filter would hook every function */
		{ "a '!' removal", "kfree !kfree", -EINVAL, NULL },
		{ "only a '!' removal", "!kfree", -EINVAL, NULL },
		/* ftrace's index into available_filter_functions: not a name */
		{ "an index", "kfree 1", -EINVAL, NULL },
	};
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t = &cases[i];
		ot_default_config(&c, t->funcs);
		EXPECT_EQ(t->err, ot_ioctl(self->fd, KTRACK_IOC_OBJ_CONFIG, &c)) TH_LOG("%s", t->what);
		ot_unchanged(_metadata, self->fd, self->base);
	}
#define BAD(field_expr, err) do {					\
		ot_default_config(&c, good);				\
		field_expr;						\
		EXPECT_EQ(err, ot_ioctl(self->fd, KTRACK_IOC_OBJ_CONFIG, &c)) \
			TH_LOG("%s", #field_expr);			\
		ot_unchanged(_metadata, self->fd, self->base);		\
	} while (0)
	BAD(c.max_objects = 0, -E2BIG);
	BAD(c.max_objects = KTRACK_OBJ_MAX_OBJECTS + 1, -E2BIG);
	BAD(c.nr_args = 0, -EINVAL);
	BAD(c.nr_args = 7, -EINVAL);
	BAD(c.flags = 0x80000000, -EINVAL);
	BAD(c.nr_watch = 5, -E2BIG);
	BAD(c.watch[0].size = 3, -EINVAL);		/* no such type */
	BAD(c.watch[0].size = 16, -EINVAL);
	BAD(c.watch[0].offset = KTRACK_OBJ_MAX_OFFSET, -EINVAL);
	BAD(c.watch[0].flags = 0x100, -EINVAL);
	BAD(c.watch[2].size = 2, -EINVAL);		/* beyond nr_watch */
	BAD(c.functions_ptr = 0, -EINVAL);
	BAD(c.functions_ptr = 8, -EFAULT);		/* unmapped */
	BAD(c.functions_len = 0, -EINVAL);
	BAD(c.functions_len = KTRACK_OBJ_FUNCS_MAX + 1; c.functions_ptr = (uintptr_t)big, -E2BIG);
	BAD(strcpy(c.destructor, "ktrack_no_such_function_xyz"), -EINVAL);
	BAD(strcpy(c.destructor, "kfree"); c.destructor_arg = 6, -EINVAL);
	BAD(c.destructor_arg = 1, -EINVAL);		/* no destructor */
	BAD(memset(c.destructor, 'a', sizeof(c.destructor)), -EINVAL);	/* no NUL */
	/* One function, exactly: "*" would make every function a destructor. */
	BAD(strcpy(c.destructor, "*"), -EINVAL);
	BAD(strcpy(c.destructor, "kfre?"), -EINVAL);
	BAD(strcpy(c.destructor, "kfree"); c.destructor[sizeof(c.destructor) - 1] = 'x', -EINVAL);
	BAD(c.flags = KTRACK_OBJF_DERIVE; c.derive_offset = 3, -EINVAL);	/* misaligned */
	BAD(c.derive_offset = 8, -EINVAL);		/* without the flag */
	BAD(c.size = 8, -EINVAL);			/* truncated struct */
#undef BAD
	EXPECT_EQ(-EFAULT, ot_ioctl(self->fd, KTRACK_IOC_OBJ_CONFIG, NULL));
	ot_unchanged(_metadata, self->fd, self->base);
}

/* The address-given function set (KTRACK_OBJF_FUNC_ADDRS). */
TEST_F(bad, function_addresses_rejected_and_nothing_changes)
{
	static struct ktrack_obj_func f[KTRACK_OBJ_MAX_MASKS + 2];
	static struct ktrack_obj_func many[KTRACK_OBJ_MAX_FUNC_ADDRS + 1];
	uint64_t step1 = ot_kallsyms("ktrack_test_obj_step1");
	uint64_t step2 = ot_kallsyms("ktrack_test_obj_step2");
	uint64_t notrace = ot_kallsyms("trace_clock_local");
	struct ktrack_obj_config c;
	unsigned int i;

	ASSERT_NE(0, step1);
	ASSERT_NE(0, step2);
	ASSERT_NE(0, notrace);
#define BADF(setup, err) do {						\
		memset(f, 0, sizeof(f));				\
		f[0].addr = step1;					\
		f[0].arg_mask = 1;					\
		f[1].addr = step2;					\
		f[1].arg_mask = 2;					\
		ot_addr_config(&c, f, 2);				\
		setup;							\
		EXPECT_EQ(err, ot_ioctl(self->fd, KTRACK_IOC_OBJ_CONFIG, &c)) \
			TH_LOG("%s", #setup);				\
		ot_unchanged(_metadata, self->fd, self->base);		\
	} while (0)
	BADF(c.func_size = 0, -EINVAL);			/* flag without entry size */
	BADF(c.func_size = sizeof(f[0]) + 8, -EINVAL);	/* unknown entry layout */
	BADF(c.flags = 0, -EINVAL);			/* entry size without the flag */
	BADF(c.functions_len = 0, -EINVAL);
	BADF(c.functions_len = KTRACK_OBJ_MAX_FUNC_ADDRS + 1, -E2BIG);
	BADF(c.functions_ptr = 8, -EFAULT);
	BADF(f[1].arg_mask = 0, -EINVAL);			/* checks nothing */
	BADF(f[1].arg_mask = 0x40, -EINVAL);		/* argument 7 */
	BADF(c.nr_args = 1, -EINVAL);			/* mask 2 beyond nr_args */
	BADF(f[1].__pad[3] = 1, -EINVAL);
	BADF(f[1].addr = 0x400000, -EINVAL);		/* user address */
	BADF(f[1].addr = step1, -EINVAL);			/* duplicate */
	BADF(f[1].addr = step1 + 4, -EINVAL);		/* same function, fentry form */
	BADF(f[1].addr = notrace, -EINVAL);		/* not traceable */
	BADF(for (i = 0; i < KTRACK_OBJ_MAX_MASKS + 1; i++) {
		f[i].addr = step1 + 16 * i; f[i].arg_mask = i + 1; }
	     c.functions_len = KTRACK_OBJ_MAX_MASKS + 1, -E2BIG);	/* too many groups */
#undef BADF
	for (i = 0; i < KTRACK_OBJ_MAX_FUNC_ADDRS + 1; i++) {
		many[i].addr = step1 + 16 * i;
		many[i].arg_mask = 1;
	}
	ot_addr_config(&c, many, KTRACK_OBJ_MAX_FUNC_ADDRS + 1);
	EXPECT_EQ(-E2BIG, ot_ioctl(self->fd, KTRACK_IOC_OBJ_CONFIG, &c));
	ot_unchanged(_metadata, self->fd, self->base);
}

/*
 * A good address-given set: the masks say which arguments are checked.
 * The module's run makes two lives: step1(o), step2(a, o), step_same(o),
 * step6(.., o), free(o); then step1(o), free(o).  Hooking step1 (arg 1),
 * step2 with the wrong mask (arg 1) and step6 (arg 6) gives 2 + 0 + 1 hits.
 */
TEST_F(bad, function_addresses_accepted_with_masks)
{
	struct ktrack_obj_func f[3] = {
		{ .addr = ot_kallsyms("ktrack_test_obj_step1"), .arg_mask = 0x1 },
		{ .addr = ot_kallsyms("ktrack_test_obj_step2"), .arg_mask = 0x1 },
		{ .addr = ot_kallsyms("ktrack_test_obj_step6"), .arg_mask = 0x20 },
	};
	struct ktrack_version v = { .size = sizeof(v) };
	struct ktrack_obj_stats st;
	struct ktrack_obj_config c;

	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_VERSION, &v));
	EXPECT_TRUE(v.features & KTRACK_FEAT_OBJ_FUNC_ADDRS);
	ot_addr_config(&c, f, 3);
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_CONFIG, &c));
	ASSERT_EQ(0, ot_add_source(self->fd, KTRACK_OBJ_SRC_RETVAL, "ktrack_test_obj_alloc", 0));
	ASSERT_EQ(0, ot_stats(self->fd, &st));
	EXPECT_EQ(3, st.nr_functions);
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_ENABLE, NULL));
	ASSERT_EQ(0, ot_param_write("run", "1"));
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_DISABLE, NULL));
	ASSERT_EQ(0, ot_stats(self->fd, &st));
	EXPECT_EQ(2, st.lives);
	EXPECT_EQ(3, st.hits);
}

TEST_F(bad, sources_rejected_and_nothing_changes)
{
	struct ktrack_obj_source s;

	EXPECT_EQ(-ENOENT, ot_add_source(self->fd, KTRACK_OBJ_SRC_RETVAL, "ktrack_no_such_fn", 0));
	EXPECT_EQ(-EINVAL, ot_add_source(self->fd, 9, "ktrack_test_obj_alloc", 0));
	EXPECT_EQ(-EINVAL, ot_add_source(self->fd, KTRACK_OBJ_SRC_EXPLICIT, "ktrack_test_obj_alloc", 0));
	EXPECT_EQ(-EINVAL, ot_add_source(self->fd, KTRACK_OBJ_SRC_ARG, "ktrack_test_obj_step1", 6));
	EXPECT_EQ(-EINVAL, ot_add_source(self->fd, KTRACK_OBJ_SRC_RETVAL, "ktrack_test_obj_alloc", 1));
	EXPECT_EQ(-EINVAL, ot_add_source(self->fd, KTRACK_OBJ_SRC_RETVAL, "", 0));
	memset(&s, 0, sizeof(s));
	s.size = sizeof(s);
	s.type = KTRACK_OBJ_SRC_ARG;
	memset(s.symbol, 'x', sizeof(s.symbol));		/* no NUL */
	EXPECT_EQ(-EINVAL, ot_ioctl(self->fd, KTRACK_IOC_OBJ_ADD_SOURCE, &s));
	snprintf(s.symbol, sizeof(s.symbol), "ktrack_test_obj_step1");
	s.arg = 0;						/* junk after the NUL */
	EXPECT_EQ(-EINVAL, ot_ioctl(self->fd, KTRACK_IOC_OBJ_ADD_SOURCE, &s));
	memset(s.symbol, 0, sizeof(s.symbol));
	snprintf(s.symbol, sizeof(s.symbol), "ktrack_test_obj_step1");
	s.deref_offset = 8;					/* offset without DEREF */
	EXPECT_EQ(-EINVAL, ot_ioctl(self->fd, KTRACK_IOC_OBJ_ADD_SOURCE, &s));
	s.flags = KTRACK_OBJ_SRCF_DEREF;
	s.deref_offset = 4;					/* misaligned pointer */
	EXPECT_EQ(-EINVAL, ot_ioctl(self->fd, KTRACK_IOC_OBJ_ADD_SOURCE, &s));
	s.flags = 0x10;
	s.deref_offset = 0;
	EXPECT_EQ(-EINVAL, ot_ioctl(self->fd, KTRACK_IOC_OBJ_ADD_SOURCE, &s));
	EXPECT_EQ(-EFAULT, ot_ioctl(self->fd, KTRACK_IOC_OBJ_ADD_SOURCE, (void *)8));
	ot_unchanged(_metadata, self->fd, self->base);
}

TEST_F(bad, addresses_rejected_and_nothing_changes)
{
	struct ktrack_obj_addr a = { .size = sizeof(a) };

	a.addr = 0;
	EXPECT_EQ(-EINVAL, ot_ioctl(self->fd, KTRACK_IOC_OBJ_TRACK, &a));	/* NULL */
	a.addr = 0x1000;
	EXPECT_EQ(-EINVAL, ot_ioctl(self->fd, KTRACK_IOC_OBJ_TRACK, &a));	/* user address */
	a.addr = (uint64_t)-4095;
	EXPECT_EQ(-EINVAL, ot_ioctl(self->fd, KTRACK_IOC_OBJ_TRACK, &a));	/* ERR_PTR */
	/*
	 * Unmapped kernel: the hole below the cpu_entry_area, in every x86-64
	 * layout (4- and 5-level, KASAN or not; KASAN's shadow, mapped
	 * read-only over its whole range, ends just below it).
	 */
	a.addr = 0xfffffd0000000000ULL;
	EXPECT_EQ(-EFAULT, ot_ioctl(self->fd, KTRACK_IOC_OBJ_TRACK, &a));
	a.addr = self->base;
	EXPECT_EQ(-EEXIST, ot_ioctl(self->fd, KTRACK_IOC_OBJ_TRACK, &a));
	a.flags = 1;
	EXPECT_EQ(-EINVAL, ot_ioctl(self->fd, KTRACK_IOC_OBJ_TRACK, &a));	/* flag */
	a.flags = 0;
	a.addr = self->base + 64;
	EXPECT_EQ(-ENOENT, ot_ioctl(self->fd, KTRACK_IOC_OBJ_UNTRACK, &a));	/* not tracked */
	a.flags = KTRACK_OBJ_ADDR_ALL;					/* ALL + address */
	EXPECT_EQ(-EINVAL, ot_ioctl(self->fd, KTRACK_IOC_OBJ_UNTRACK, &a));
	a.flags = 0;
	a.size = 4;
	EXPECT_EQ(-EINVAL, ot_ioctl(self->fd, KTRACK_IOC_OBJ_QUERY, &a));
	EXPECT_EQ(-EFAULT, ot_ioctl(self->fd, KTRACK_IOC_OBJ_QUERY, NULL));
	EXPECT_EQ(-ENOTTY, ot_ioctl(self->fd, _IO(KTRACK_IOC_MAGIC, 0x3f), NULL));
	EXPECT_EQ(-ENODATA, ot_ioctl(self->fd, KTRACK_IOC_OBJ_DISABLE, NULL));	/* not enabled */
	ot_unchanged(_metadata, self->fd, self->base);
}

TEST_F(bad, state_errors)
{
	int fd2 = open("/dev/ktrack", O_RDWR);
	struct ktrack_obj_addr a = { .size = sizeof(a), .addr = self->base };
	struct ktrack_obj_config c;

	/* A fresh session has no configuration: each call says so. */
	ASSERT_LE(0, fd2);
	EXPECT_EQ(-ENODATA, ot_ioctl(fd2, KTRACK_IOC_OBJ_ENABLE, NULL));
	EXPECT_EQ(-ENODATA, ot_ioctl(fd2, KTRACK_IOC_OBJ_TRACK, &a));
	EXPECT_EQ(-ENODATA, ot_add_source(fd2, KTRACK_OBJ_SRC_RETVAL, "ktrack_test_obj_alloc", 0));
	close(fd2);
	/* Enabled: configuration and sources are frozen. */
	ASSERT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_ENABLE, NULL));
	EXPECT_EQ(-EBUSY, ot_ioctl(self->fd, KTRACK_IOC_OBJ_ENABLE, NULL));
	ot_default_config(&c, OT_FUNCS);
	EXPECT_EQ(-EBUSY, ot_ioctl(self->fd, KTRACK_IOC_OBJ_CONFIG, &c));
	EXPECT_EQ(-EBUSY, ot_add_source(self->fd, KTRACK_OBJ_SRC_RETVAL, "ktrack_test_obj_alloc", 0));
	EXPECT_EQ(0, ot_ioctl(self->fd, KTRACK_IOC_OBJ_DISABLE, NULL));
	ot_unchanged(_metadata, self->fd, self->base);
}

TEST_HARNESS_MAIN
