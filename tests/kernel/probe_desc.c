// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input for dynamic probes: malformed binary descriptions sent straight
 * to KTRACK_IOC_PROBE_ADD are rejected with EINVAL (and the session still
 * works afterwards); malformed specs given to 'ktrackctl probe add' are
 * rejected with a message and a caret; kernel errnos become sentences.
 */
#include <stddef.h>

#include "kselftest_harness.h"
#include "probe_common.h"

FIXTURE(desc) {
	int fd;
	void *good;
	size_t good_len;
	char out[8192];
};

FIXTURE_SETUP(desc)
{
	ASSERT_EQ(0, pt_load_all());
	self->fd = pt_session();
	ASSERT_LE(0, self->fd);
	self->good = pt_compile("p:g ktrack_tpt_add a=$arg1:s32 s=+0(+8($arg2)):string if a == 1 && s == \"x\"",
				NULL, &self->good_len, self->out, sizeof(self->out));
	ASSERT_NE(NULL, self->good) TH_LOG("%s", self->out);
}

FIXTURE_TEARDOWN(desc)
{
	free(self->good);
	close(self->fd);
	pt_unload_all();
}

/* One mutation of the good blob. */
struct mutation {
	const char *what;
	void (*apply)(struct ktrack_probe_desc *d, unsigned char *blob);
};

#define FETCH(d, b, i) ((struct ktrack_probe_fetch *)((b) + (d)->fetch_off) + (i))
#define INSN(d, b, i) ((struct ktrack_probe_insn *)((b) + (d)->insns_off) + (i))

static void m_version(struct ktrack_probe_desc *d, unsigned char *b) { d->version = 99; }
static void m_hdr(struct ktrack_probe_desc *d, unsigned char *b) { d->hdr_size = 8; }
static void m_size(struct ktrack_probe_desc *d, unsigned char *b) { d->size += 8; }
static void m_kind0(struct ktrack_probe_desc *d, unsigned char *b) { d->kind = 0; }
static void m_kind9(struct ktrack_probe_desc *d, unsigned char *b) { d->kind = 9; }
static void m_flags(struct ktrack_probe_desc *d, unsigned char *b) { d->flags = 1; }
static void m_name_empty(struct ktrack_probe_desc *d, unsigned char *b) { d->name[0] = 0; }
static void m_name_chars(struct ktrack_probe_desc *d, unsigned char *b) { d->name[0] = '/'; }
static void m_name_unterminated(struct ktrack_probe_desc *d, unsigned char *b) { memset(d->name, 'a', sizeof(d->name)); }
static void m_sym_unterminated(struct ktrack_probe_desc *d, unsigned char *b) { memset(d->symbol, 'a', sizeof(d->symbol)); }
static void m_sym_tail(struct ktrack_probe_desc *d, unsigned char *b) { d->symbol[100] = 'x'; }
static void m_sym_and_addr(struct ktrack_probe_desc *d, unsigned char *b) { d->addr = 0xffffffff81000000ULL; }
static void m_actions_nowhere(struct ktrack_probe_desc *d, unsigned char *b) { d->nr_actions = 1; }
static void m_actions_off(struct ktrack_probe_desc *d, unsigned char *b) { d->actions_off = 8; }
static void m_actions_many(struct ktrack_probe_desc *d, unsigned char *b) { d->nr_actions = KTRACK_PROBE_MAX_ACTIONS + 1; d->actions_off = d->fetch_off; }
/*
 * An f MOD:GLOB blob over the test module: globs "ktrack_tpt_add" then
 * "*" + 'q' x (w - 2) + "*" until 'total' bytes of globs in all.
 */
static size_t modglob_blob(unsigned char *b, size_t room, size_t total, size_t w)
{
	struct ktrack_probe_desc *d = (struct ktrack_probe_desc *)b;
	char *f = (char *)b + sizeof(*d);
	size_t used = 0, n;

	memset(b, 0, room);
	d->version = KTRACK_PROBE_DESC_VERSION;
	d->hdr_size = sizeof(*d);
	d->kind = KTRACK_PROBE_FUNCS;
	d->flags = KTRACK_PROBE_F_ENTRY;
	strcpy(d->name, "mg");
	strcpy(d->module, PT_MODULE);
	d->funcs_off = sizeof(*d);
	n = strlen("ktrack_tpt_add");
	memcpy(f, "ktrack_tpt_add", n + 1);
	f += n + 1;
	used = n;
	d->nr_funcs = 1;
	while (used < total) {
		n = total - used < w ? total - used : w;
		memset(f, 'q', n);
		f[0] = '*';
		f[n - 1] = '*';
		f[n] = 0;
		f += n + 1;
		used += n;
		d->nr_funcs++;
	}
	d->funcs_len = (unsigned char *)f - b - sizeof(*d);
	d->size = sizeof(*d) + d->funcs_len;
	return d->size;
}

/*
 * f MOD:GLOB's globs are matched against every function of the module at
 * each of its loads, preemption off: their bytes together are bounded
 * (review 2026-11-27, S2: 1,024 globs like "*??...?Z" over a large module
 * stalled the CPU for seconds).  ktrackctl says so before the kernel.
 */
TEST_F(desc, modglob_bytes_are_bounded)
{
	unsigned char *b = malloc(4096);
	size_t len;

	ASSERT_NE(NULL, b);
	len = modglob_blob(b, 4096, KTRACK_PROBE_MODGLOB_MAX, 100);
	EXPECT_EQ(0, pt_add_blob(self->fd, b, len, NULL));
	len = modglob_blob(b, 4096, KTRACK_PROBE_MODGLOB_MAX + 1, 100);
	((struct ktrack_probe_desc *)b)->name[1] = '2';
	EXPECT_EQ(-E2BIG, pt_add_blob(self->fd, b, len, NULL));
	len = modglob_blob(b, 4096, 20 * 127, 127);
	((struct ktrack_probe_desc *)b)->name[1] = '3';
	EXPECT_EQ(-E2BIG, pt_add_blob(self->fd, b, len, NULL));
	free(b);
	{
		char spec[1024] = "f:mg4 " PT_MODULE ":ktrack_tpt_add";
		size_t i;

		for (i = 0; i < 5; i++)
			strcat(spec, ",*qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq*");
		EXPECT_NE(0, kt_run(self->out, sizeof(self->out), "%s probe compile '%s' -o /dev/null",
				    kt_ktrackctl(), spec));
		EXPECT_NE(NULL, strstr(self->out, "too long")) TH_LOG("%s", self->out);
	}
}

/* graph_depth (once __pad2, which had to be 0) without GRAPH_SCOPED */
static void m_pad2(struct ktrack_probe_desc *d, unsigned char *b) { d->graph_depth = 1; }

/* Explicitly padded (no implicit tail): the same size for 32-bit callers. */
_Static_assert(sizeof(struct ktrack_probe_desc) ==
	       offsetof(struct ktrack_probe_desc, graph_depth) + sizeof(__u32), "tail padding");
static void m_maxactive(struct ktrack_probe_desc *d, unsigned char *b) { d->maxactive = 4; }
static void m_stack(struct ktrack_probe_desc *d, unsigned char *b) { d->stack_depth = 1000; }
static void m_nr_fetch(struct ktrack_probe_desc *d, unsigned char *b) { d->nr_fetch = 200; }
static void m_nr_insns(struct ktrack_probe_desc *d, unsigned char *b) { d->nr_insns = 1000; }
static void m_fetch_off(struct ktrack_probe_desc *d, unsigned char *b) { d->fetch_off = d->size - 8; }
static void m_fetch_off_unaligned(struct ktrack_probe_desc *d, unsigned char *b) { d->fetch_off += 4; }
static void m_fetch_off_hdr(struct ktrack_probe_desc *d, unsigned char *b) { d->fetch_off = 8; }
static void m_insns_off(struct ktrack_probe_desc *d, unsigned char *b) { d->insns_off = 0xfffffff0; }
static void m_strtab_unterminated(struct ktrack_probe_desc *d, unsigned char *b) { b[d->strtab_off + d->strtab_len - 1] = 'x'; }
static void m_spec_len(struct ktrack_probe_desc *d, unsigned char *b) { d->spec_len = 0xffff; }
static void m_funcs(struct ktrack_probe_desc *d, unsigned char *b) { d->nr_funcs = 1; }
static void m_offset_big(struct ktrack_probe_desc *d, unsigned char *b) { d->offset = 1ULL << 40; }
static void m_f_src(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 0)->src = 0; }
static void m_f_src9(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 0)->src = 99; }
static void m_f_type(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 0)->type = 77; }
static void m_f_size(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 0)->size = 3; }
static void m_f_arg0(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 0)->param = 0; }
static void m_f_arg9(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 0)->param = 9; }
static void m_f_nderef(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 0)->nderef = 5; }
static void m_f_deref_tail(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 0)->deref[3] = 8; }
static void m_f_count0(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 0)->count = 0; }
static void m_f_count_big(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 1)->count = 65; }
static void m_f_array_noderef(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 0)->count = 4; }
static void m_f_string_size(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 1)->size = 8; }
static void m_f_retval(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 0)->src = KTRACK_FETCH_SRC_RETVAL; FETCH(d, b, 0)->param = 0; }
static void m_f_reg(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 0)->src = KTRACK_FETCH_SRC_REG; FETCH(d, b, 0)->param = 4096; }
static void m_f_reg_unaligned(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 0)->src = KTRACK_FETCH_SRC_REG; FETCH(d, b, 0)->param = 3; }
static void m_f_flags(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 0)->flags = 0x80; }
static void m_f_name(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 0)->name[0] = 0; }
static void m_f_comm(struct ktrack_probe_desc *d, unsigned char *b) { FETCH(d, b, 0)->src = KTRACK_FETCH_SRC_COMM; }
static void m_i_op(struct ktrack_probe_desc *d, unsigned char *b) { INSN(d, b, 0)->op = 9; }
static void m_i_cmp(struct ktrack_probe_desc *d, unsigned char *b) { INSN(d, b, 0)->cmp = 0; }
static void m_i_field(struct ktrack_probe_desc *d, unsigned char *b) { INSN(d, b, 0)->field = 30; }
static void m_i_kind(struct ktrack_probe_desc *d, unsigned char *b) { INSN(d, b, 0)->field_kind = 9; }
static void m_i_glob_num(struct ktrack_probe_desc *d, unsigned char *b) { INSN(d, b, 0)->cmp = KTRACK_FLT_GLOB; }
static void m_i_underflow(struct ktrack_probe_desc *d, unsigned char *b) { memset(INSN(d, b, 0), 0, sizeof(struct ktrack_probe_insn)); INSN(d, b, 0)->op = KTRACK_FLT_AND; }
static void m_i_str_off(struct ktrack_probe_desc *d, unsigned char *b) { INSN(d, b, 0)->field = 1; INSN(d, b, 0)->imm = 0; INSN(d, b, 0)->str_off = 5000; }

static const struct mutation mutations[] = {
	{ "version", m_version }, { "hdr_size", m_hdr }, { "size", m_size },
	{ "kind 0", m_kind0 }, { "kind 9", m_kind9 }, { "flags on p", m_flags },
	{ "empty name", m_name_empty }, { "name chars", m_name_chars },
	{ "name unterminated", m_name_unterminated }, { "symbol unterminated", m_sym_unterminated },
	{ "symbol tail", m_sym_tail }, { "symbol and addr", m_sym_and_addr },
	{ "actions without a section", m_actions_nowhere }, { "actions_off without actions", m_actions_off },
	{ "too many actions", m_actions_many }, { "graph_depth on p (was pad2)", m_pad2 }, { "maxactive on p", m_maxactive },
	{ "stack depth", m_stack }, { "nr_fetch", m_nr_fetch }, { "nr_insns", m_nr_insns },
	{ "fetch_off past end", m_fetch_off }, { "fetch_off unaligned", m_fetch_off_unaligned },
	{ "fetch_off in header", m_fetch_off_hdr }, { "insns_off overflow", m_insns_off },
	{ "strtab unterminated", m_strtab_unterminated }, { "spec_len", m_spec_len },
	{ "funcs on p", m_funcs }, { "offset huge", m_offset_big },
	{ "fetch src 0", m_f_src }, { "fetch src 99", m_f_src9 }, { "fetch type", m_f_type },
	{ "fetch size 3", m_f_size }, { "arg 0", m_f_arg0 }, { "arg 9", m_f_arg9 },
	{ "nderef 5", m_f_nderef }, { "deref tail", m_f_deref_tail }, { "count 0", m_f_count0 },
	{ "count 65", m_f_count_big }, { "array without deref", m_f_array_noderef },
	{ "string size", m_f_string_size }, { "retval on p", m_f_retval },
	{ "reg offset", m_f_reg }, { "reg unaligned", m_f_reg_unaligned },
	{ "fetch flags", m_f_flags }, { "fetch name", m_f_name }, { "comm as s32", m_f_comm },
	{ "insn op", m_i_op }, { "insn cmp", m_i_cmp }, { "insn field", m_i_field },
	{ "insn field kind", m_i_kind }, { "glob on number", m_i_glob_num },
	{ "stack underflow", m_i_underflow }, { "string offset", m_i_str_off },
};

TEST_F(desc, good_blob_is_accepted)
{
	struct ktrack_probe_add res = { 0 };

	ASSERT_EQ(0, pt_add_blob(self->fd, self->good, self->good_len, &res));
	EXPECT_LT(0, res.id);
	EXPECT_EQ(KTRACK_PROBE_ST_ARMED, res.state);
}

TEST_F(desc, malformed_descriptions_are_einval)
{
	unsigned char *b = malloc(self->good_len + 64);
	struct ktrack_probe_info info = { 0 };
	size_t i;
	int id;

	ASSERT_NE(NULL, b);
	ASSERT_LE(50, sizeof(mutations) / sizeof(mutations[0]));
	for (i = 0; i < sizeof(mutations) / sizeof(mutations[0]); i++) {
		memset(b, 0, self->good_len + 64);
		memcpy(b, self->good, self->good_len);
		mutations[i].apply((struct ktrack_probe_desc *)b, b);
		EXPECT_EQ(-EINVAL, pt_add_blob(self->fd, b, self->good_len, NULL))
			TH_LOG("mutation '%s' was not rejected with EINVAL", mutations[i].what);
	}
	free(b);
	/* nothing was added, and the session still works */
	id = pt_add(self->fd, "p:after ktrack_tpt_add", NULL);
	ASSERT_LT(0, id);
	ASSERT_EQ(0, pt_cmd("call 1", 0));
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(1, info.hits);
}

/*
 * The good blob with its string compare turned into a GLOB against
 * 'pattern', in a new strtab appended at the end.  Returns the blob size.
 */
static size_t glob_blob(const void *good, size_t good_len, unsigned char *b, const char *pattern)
{
	struct ktrack_probe_desc *d = (struct ktrack_probe_desc *)b;
	size_t off = (good_len + 7) & ~(size_t)7, len = strlen(pattern) + 1, size;
	__u16 i;

	size = (off + len + 7) & ~(size_t)7;
	memset(b, 0, size);
	memcpy(b, good, good_len);
	memcpy(b + off, pattern, len);
	d->strtab_off = off;
	d->strtab_len = len;
	d->size = size;
	for (i = 0; i < d->nr_insns; i++) {
		struct ktrack_probe_insn *in = INSN(d, b, i);

		if (in->op == KTRACK_FLT_CMP && in->field_kind == KTRACK_FLD_FETCH && in->field == 1) {
			in->cmp = KTRACK_FLT_GLOB;
			in->str_off = 0;
		}
	}
	return size;
}

/*
 * A glob is matched in the handler on every hit: its pattern and classes
 * have a bounded length, or one probe could stall a CPU per hit.
 */
TEST_F(desc, glob_length_is_bounded)
{
	unsigned char *b = malloc(self->good_len + 4096);
	char pat[1024];
	size_t len;

	ASSERT_NE(NULL, b);
	/* the longest pattern and the longest class are accepted */
	memset(pat, 'a', KTRACK_FLT_GLOB_MAX);
	pat[KTRACK_FLT_GLOB_MAX] = 0;
	len = glob_blob(self->good, self->good_len, b, pat);
	EXPECT_EQ(0, pt_add_blob(self->fd, b, len, NULL));
	snprintf(pat, sizeof(pat), "*[%.*s]x", KTRACK_FLT_GLOB_CLASS_MAX,
		 "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz");
	len = glob_blob(self->good, self->good_len, b, pat);
	((struct ktrack_probe_desc *)b)->name[0] = 'h';
	EXPECT_EQ(0, pt_add_blob(self->fd, b, len, NULL));
	/* one byte more is E2BIG */
	memset(pat, 'a', KTRACK_FLT_GLOB_MAX + 1);
	pat[KTRACK_FLT_GLOB_MAX + 1] = 0;
	len = glob_blob(self->good, self->good_len, b, pat);
	((struct ktrack_probe_desc *)b)->name[0] = 'i';
	EXPECT_EQ(-E2BIG, pt_add_blob(self->fd, b, len, NULL));
	snprintf(pat, sizeof(pat), "*[%.*s]x", KTRACK_FLT_GLOB_CLASS_MAX + 1,
		 "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz");
	len = glob_blob(self->good, self->good_len, b, pat);
	((struct ktrack_probe_desc *)b)->name[0] = 'j';
	EXPECT_EQ(-E2BIG, pt_add_blob(self->fd, b, len, NULL));
	/* an unterminated class counts to the end of the pattern */
	snprintf(pat, sizeof(pat), "*[%.*s", KTRACK_FLT_GLOB_CLASS_MAX + 1,
		 "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz");
	len = glob_blob(self->good, self->good_len, b, pat);
	((struct ktrack_probe_desc *)b)->name[0] = 'k';
	EXPECT_EQ(-E2BIG, pt_add_blob(self->fd, b, len, NULL));
	/* the review's pathological case: a 60000-byte class */
	free(b);
	b = malloc(self->good_len + 65536);
	ASSERT_NE(NULL, b);
	{
		char *big = malloc(60005);

		ASSERT_NE(NULL, big);
		memset(big, 'q', 60004);
		big[0] = '*';
		big[1] = '[';
		big[60002] = ']';
		big[60003] = 'x';
		big[60004] = 0;
		len = glob_blob(self->good, self->good_len, b, big);
		((struct ktrack_probe_desc *)b)->name[0] = 'l';
		EXPECT_EQ(-E2BIG, pt_add_blob(self->fd, b, len, NULL));
		free(big);
	}
	free(b);
}

/*
 * Graph scoping's flags (KTRACK_FEAT_GRAPH_SCOPE): f only, ROOT or SCOPED
 * (not both, never with PROFILE), a root with entries and exits, a depth
 * limit only on SCOPED with entries and exits, at most
 * KTRACK_GRAPH_MAX_DEPTH; everything else EINVAL.  A SCOPED probe with no
 * root in its session is accepted and never records: its hits are filtered.
 */
static int graph_add(int fd, const void *blob, size_t len, const char *name, __u32 flags, __u32 depth)
{
	unsigned char b[8192];
	struct ktrack_probe_desc *d = (struct ktrack_probe_desc *)b;
	struct ktrack_probe_add res = { 0 };
	int ret;

	if (len > sizeof(b))
		return -1000;
	memcpy(b, blob, len);
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->flags = flags;
	d->graph_depth = depth;
	ret = pt_add_blob(fd, b, len, &res);
	return ret ? ret : (int)res.id;
}

TEST_F(desc, graph_flags_are_validated)
{
	const __u32 en = KTRACK_PROBE_F_ENTRY, both = KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_EXIT;
	const __u32 root = KTRACK_PROBE_F_GRAPH_ROOT, scoped = KTRACK_PROBE_F_GRAPH_SCOPED;
	struct ktrack_probe_info info = { 0 };
	struct ktrack_version v = { .size = sizeof(v) };
	size_t flen = 0;
	void *f = pt_compile("f:gf ktrack_tpt_add%both", NULL, &flen, self->out, sizeof(self->out));
	int id;

	ASSERT_NE(NULL, f) TH_LOG("%s", self->out);
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_VERSION, &v));
	EXPECT_TRUE(v.features & KTRACK_FEAT_GRAPH_SCOPE);
	/* refused */
	EXPECT_EQ(-EINVAL, graph_add(self->fd, f, flen, "x1", both | root | scoped, 0));
	EXPECT_EQ(-EINVAL, graph_add(self->fd, f, flen, "x2", en | root, 0));
	EXPECT_EQ(-EINVAL, graph_add(self->fd, f, flen, "x3", KTRACK_PROBE_F_EXIT | root, 0));
	EXPECT_EQ(-EINVAL, graph_add(self->fd, f, flen, "x4", both | root, 2));
	EXPECT_EQ(-EINVAL, graph_add(self->fd, f, flen, "x5", en | scoped, 2));
	EXPECT_EQ(-EINVAL, graph_add(self->fd, f, flen, "x6", both, 2));
	EXPECT_EQ(-EINVAL, graph_add(self->fd, f, flen, "x7", both | scoped, KTRACK_GRAPH_MAX_DEPTH + 1));
	EXPECT_EQ(-EINVAL, graph_add(self->fd, f, flen, "x8", both | KTRACK_PROBE_F_PROFILE | scoped, 0));
	EXPECT_EQ(-EINVAL, graph_add(self->fd, f, flen, "x9", both | KTRACK_PROBE_F_PROFILE | root, 0));
	EXPECT_EQ(-EINVAL, graph_add(self->fd, f, flen, "x10", both | (1U << 5), 0));
	EXPECT_EQ(-EINVAL, graph_add(self->fd, f, flen, "x11", scoped, 0));
	/* on a p probe: no flags at all */
	EXPECT_EQ(-EINVAL, graph_add(self->fd, self->good, self->good_len, "x12", root, 0));
	EXPECT_EQ(-EINVAL, graph_add(self->fd, self->good, self->good_len, "x13", scoped, 0));
	/* accepted: a scoped probe with no root (first: no table yet), a root, limits */
	id = graph_add(self->fd, f, flen, "s0", both | scoped, 1);
	EXPECT_LT(0, id);
	EXPECT_LT(0, graph_add(self->fd, f, flen, "s1", en | scoped, 0));
	EXPECT_LT(0, graph_add(self->fd, f, flen, "s2", both | scoped, KTRACK_GRAPH_MAX_DEPTH));
	/* s0 never passes: no root in the session (its hits are filtered) */
	ASSERT_EQ(0, pt_cmd("call 3", 0));
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(6, info.hits);	/* 3 entries + 3 exits */
	EXPECT_EQ(6, info.filtered);
	EXPECT_LT(0, graph_add(self->fd, f, flen, "r0", both | root, 0));
	free(f);
}

TEST_F(desc, add_request_is_validated)
{
	struct ktrack_probe_add req = { .size = sizeof(req) };
	struct { struct ktrack_probe_add r; __u64 extra; } big = { { .size = sizeof(big) } };

	req.desc_size = self->good_len;
	req.desc_ptr = (unsigned long)self->good;
	req.id = 5;					/* out field set */
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_ADD, &req));
	EXPECT_EQ(EINVAL, errno);
	req.id = 0;
	req.desc_size = 16;				/* smaller than a header */
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_ADD, &req));
	EXPECT_EQ(EINVAL, errno);
	req.desc_size = KTRACK_PROBE_DESC_MAX + 8;	/* too big */
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_ADD, &req));
	EXPECT_EQ(E2BIG, errno);
	req.desc_size = self->good_len;
	req.desc_ptr = 8;				/* unmapped */
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_ADD, &req));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_ADD, NULL));
	EXPECT_EQ(EFAULT, errno);
	big.r.desc_size = self->good_len;
	big.r.desc_ptr = (unsigned long)self->good;
	big.extra = 1;					/* unknown non-zero tail */
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_ADD, &big));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, _IOWR(KTRACK_IOC_MAGIC, 0x2f, struct ktrack_probe_add), &req));
	EXPECT_EQ(ENOTTY, errno);
}

/*
 * maxactive is per function, as for kretprobe events: r probes only.  An
 * f exit probe cannot have it (fprobe on 6.12 shares one pool among its
 * functions, 6.1's kretprobes have one each: the same number meant two
 * things).  Review finding #24.
 */
TEST_F(desc, maxactive_only_on_r_probes)
{
	struct ktrack_probe_add res = { 0 };
	struct ktrack_probe_desc *d;
	size_t len = 0;
	void *f;
	int id;

	f = pt_compile("f:fx ktrack_tpt_glob_one,ktrack_tpt_glob_two%return r=$retval:s32",
		       NULL, &len, self->out, sizeof(self->out));
	ASSERT_NE(NULL, f) TH_LOG("%s", self->out);
	d = f;
	d->maxactive = 4;
	EXPECT_EQ(-EINVAL, pt_add_blob(self->fd, f, len, NULL));
	d->maxactive = 0;
	EXPECT_EQ(0, pt_add_blob(self->fd, f, len, &res));
	EXPECT_EQ(KTRACK_PROBE_ST_ARMED, res.state);
	free(f);
	id = pt_add(self->fd, "r4:rx ktrack_tpt_add r=$retval:s32", NULL);
	EXPECT_LT(0, id);
}

/*
 * A t: probe's handler gets 5 arguments after the tracepoint's data
 * pointer: $arg6 would always read 0, so it is refused (review finding #7).
 */
TEST_F(desc, tracepoint_arg6_is_einval)
{
	struct ktrack_probe_desc *d;
	size_t len = 0;
	void *t;

	t = pt_compile("t:t6 sched/sched_process_fork a=$arg1:x64", NULL, &len,
		       self->out, sizeof(self->out));
	ASSERT_NE(NULL, t) TH_LOG("%s", self->out);
	d = t;
	ASSERT_EQ(KTRACK_FETCH_SRC_ARG, FETCH(d, (unsigned char *)t, 0)->src);
	FETCH(d, (unsigned char *)t, 0)->param = 6;
	EXPECT_EQ(-EINVAL, pt_add_blob(self->fd, t, len, NULL));
	FETCH(d, (unsigned char *)t, 0)->param = 5;
	EXPECT_EQ(0, pt_add_blob(self->fd, t, len, NULL));
	free(t);
}

/*
 * An e probe's fields are read from the event's record and nowhere else
 * (review of the e probes): the first read is the field itself, at offset
 * 0 (a deref[0] elsewhere would read any kernel address, under lockdown
 * too), never user memory, and a field's address alone is no value.
 */
TEST_F(desc, event_field_reads_stay_in_the_record)
{
	struct ktrack_probe_fetch *f;
	struct ktrack_probe_desc *d;
	size_t len = 0;
	void *e;

	e = pt_compile("e:ef sched/sched_switch p=$prev_pid", NULL, &len, self->out,
		       sizeof(self->out));
	ASSERT_NE(NULL, e) TH_LOG("%s", self->out);
	d = e;
	f = FETCH(d, (unsigned char *)e, 0);
	ASSERT_EQ(KTRACK_FETCH_SRC_FIELD, f->src);
	ASSERT_EQ(1, f->nderef);
	f->deref[0] = (__s32)0x81000000;	/* the review's trigger */
	EXPECT_EQ(-EINVAL, pt_add_blob(self->fd, e, len, NULL));
	f->deref[0] = 0;
	f->flags = KTRACK_FETCH_F_USER;
	EXPECT_EQ(-EINVAL, pt_add_blob(self->fd, e, len, NULL));
	f->flags = 0;
	f->nderef = 0;				/* the record's address as a number */
	EXPECT_EQ(-EINVAL, pt_add_blob(self->fd, e, len, NULL));
	f->nderef = 1;
	f->src = KTRACK_FETCH_SRC_ARG;		/* e probes have no arguments */
	f->param = 1;
	EXPECT_EQ(-EINVAL, pt_add_blob(self->fd, e, len, NULL));
	f->src = KTRACK_FETCH_SRC_FIELD;
	f->param = 24;
	EXPECT_EQ(0, pt_add_blob(self->fd, e, len, NULL));
	free(e);
}

TEST_F(desc, del_and_list_requests_are_validated)
{
	struct ktrack_probe_del del = { .size = sizeof(del) };
	struct ktrack_probe_list list = { .size = sizeof(list), .count = 4, .entries_ptr = 8 };

	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_DEL, &del));	/* neither id nor name */
	EXPECT_EQ(EINVAL, errno);
	del.flags = 0x10;
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_DEL, &del));
	EXPECT_EQ(EINVAL, errno);
	del.flags = KTRACK_PROBE_DEL_ALL;
	strcpy(del.name, "x");					/* ALL with a name */
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_DEL, &del));
	EXPECT_EQ(EINVAL, errno);
	memset(del.name, 'a', sizeof(del.name));		/* unterminated */
	del.flags = 0;
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_DEL, &del));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_LT(0, pt_add(self->fd, "p:l ktrack_tpt_add", NULL));
	memset(del.name, 0, sizeof(del.name));
	strcpy(del.name, "l");
	del.name[sizeof(del.name) - 1] = 'x';			/* junk after the NUL */
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_DEL, &del));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_LIST, &list));	/* bad pointer */
	EXPECT_EQ(EFAULT, errno);
	list.count = 0;						/* count query */
	EXPECT_EQ(0, ioctl(self->fd, KTRACK_IOC_PROBE_LIST, &list));
	EXPECT_EQ(1, list.count);
}

/*
 * PROBE_LIST entries: a caller built before 'idle' (size 16) gets 232-byte
 * entries; entry_size is validated; hits on a session that is not
 * recording are counted as idle (and are hits), never silent.
 */
TEST_F(desc, list_entry_size_and_idle_hits)
{
	struct { __u32 size, count; __u64 entries_ptr; } old = { .size = 16, .count = 2 };
	struct ktrack_probe_list list = { .size = sizeof(list), .count = 1 };
	struct ktrack_probe_info info[2];
	unsigned char v1[2][KTRACK_PROBE_INFO_SIZE_V1 + 8];
	int fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);	/* never started */

	ASSERT_LE(0, fd);
	ASSERT_LT(0, pt_add(fd, "p:idl ktrack_tpt_add", NULL));
	ASSERT_EQ(0, pt_cmd("call 3", 0));
	memset(info, 0xff, sizeof(info));
	list.entries_ptr = (uintptr_t)info;
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_PROBE_LIST, &list));		/* entry_size 0: ours */
	ASSERT_EQ(1, list.count);
	EXPECT_STREQ("idl", info[0].name);
	EXPECT_EQ(3, info[0].hits);
	EXPECT_EQ(3, info[0].idle);
	EXPECT_EQ(0, info[0].dropped);

	/* the first published layout: 232-byte entries, no 'idle' */
	memset(v1, 0xee, sizeof(v1));
	old.entries_ptr = (uintptr_t)v1;
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_PROBE_LIST, &old));
	EXPECT_EQ(1, old.count);
	EXPECT_STREQ("idl", (char *)v1 + offsetof(struct ktrack_probe_info, name));
	EXPECT_EQ(0xee, v1[0][KTRACK_PROBE_INFO_SIZE_V1]);		/* nothing past it */

	list.entry_size = KTRACK_PROBE_INFO_SIZE_V1 - 8;		/* too small */
	EXPECT_EQ(-1, ioctl(fd, KTRACK_IOC_PROBE_LIST, &list));
	EXPECT_EQ(EINVAL, errno);
	list.entry_size = sizeof(info[0]) + 4;				/* not 8-aligned */
	EXPECT_EQ(-1, ioctl(fd, KTRACK_IOC_PROBE_LIST, &list));
	EXPECT_EQ(EINVAL, errno);
	list.entry_size = sizeof(info[0]);
	list.__pad = 1;							/* reserved */
	EXPECT_EQ(-1, ioctl(fd, KTRACK_IOC_PROBE_LIST, &list));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

/* Malformed specs through the CLI: message and caret, nothing added. */
TEST_F(desc, ktrackctl_rejects_malformed_specs_with_caret)
{
	static const struct { const char *spec, *msg; int caret; } cases[] = {
		{ "p ktrack_tpt_add +8($arg9):u32", "function arguments are $arg1..$arg6", 20 },
		{ "p ktrack_tpt_add $retval", "only for return probes", 17 },
		{ "p nosuch_function_xyz", "symbol not found", 2 },
		{ "q ktrack_tpt_add", "unknown probe type", 0 },
		{ "p ktrack_tpt_add a=$arg1:u7", "unknown type", 25 },
		{ "p ktrack_tpt_add a=$arg1 if a ~ 3", "is for strings", 30 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char caret[128];
		int rc = kt_run(self->out, sizeof(self->out), "%s probe compile '%s'", kt_ktrackctl(),
				cases[i].spec);

		EXPECT_EQ(1, rc) TH_LOG("%s: %s", cases[i].spec, self->out);
		EXPECT_NE(NULL, strstr(self->out, cases[i].msg)) TH_LOG("%s", self->out);
		snprintf(caret, sizeof(caret), "\n  %*s^", cases[i].caret, "");
		EXPECT_NE(NULL, strstr(self->out, caret)) TH_LOG("%s", self->out);
	}
}

/* Kernel errnos become sentences: a module function that is not probeable. */
/*
 * Actions (triggers): each malformed one is EINVAL; a good one acts once
 * per hit that passes; a STOP pauses the session (GET_STATS says so, to
 * callers of either struct size), the START ioctl resumes it.
 */
/* PROBE_PROFILE into 'e' (count entries); returns 0 or -errno. */
static int profile_of(int fd, uint32_t id, struct ktrack_profile_entry *e, uint32_t *count)
{
	struct ktrack_probe_profile req = {
		.size = sizeof(req), .id = id, .count = *count,
		.entry_size = sizeof(*e), .entries_ptr = (uintptr_t)e,
	};

	if (ioctl(fd, KTRACK_IOC_PROBE_PROFILE, &req))
		return -errno;
	*count = req.count;
	return 0;
}

/*
 * KTRACK_PROBE_F_PROFILE: no record, exact per-function counts and times;
 * what a profile cannot carry (actions, stack, hit limit) is refused, and so
 * is every malformed PROBE_PROFILE.
 */
TEST_F(desc, profile_counts_per_function_and_validates)
{
	struct ktrack_probe_profile req;
	struct ktrack_profile_entry e[4];
	struct ktrack_probe_add res = { 0 }, plain = { 0 };
	struct ktrack_probe_desc *d;
	unsigned char *b;
	void *blob, *acts;
	size_t len, alen;
	uint32_t n;
	int i;

	blob = pt_compile("f:pf ktrack_tpt_add%both", NULL, &len, self->out, sizeof(self->out));
	ASSERT_NE(NULL, blob) TH_LOG("%s", self->out);
	acts = pt_compile("f:pa ktrack_tpt_add%both => stop", NULL, &alen, self->out, sizeof(self->out));
	ASSERT_NE(NULL, acts) TH_LOG("%s", self->out);
	((struct ktrack_probe_desc *)acts)->flags |= KTRACK_PROBE_F_PROFILE;
	EXPECT_EQ(-EINVAL, pt_add_blob(self->fd, acts, alen, NULL));
	free(acts);
	b = malloc(len);
	ASSERT_NE(NULL, b);
	for (i = 0; i < 4; i++) {
		memcpy(b, blob, len);
		d = (struct ktrack_probe_desc *)b;
		d->flags |= KTRACK_PROBE_F_PROFILE;
		switch (i) {
		case 0: d->stack_depth = 2; break;
		case 1: d->hit_limit = 5; break;
		case 2: d->flags = KTRACK_PROBE_F_PROFILE; break;	/* neither entry nor exit */
		case 3: d->flags |= 1U << 3; break;			/* unknown flag */
		}
		EXPECT_EQ(-EINVAL, pt_add_blob(self->fd, b, len, NULL)) TH_LOG("mutation %d", i);
	}
	memcpy(b, blob, len);
	((struct ktrack_probe_desc *)b)->flags |= KTRACK_PROBE_F_PROFILE;
	ASSERT_EQ(0, pt_add_blob(self->fd, b, len, &res));
	ASSERT_EQ(0, pt_add_blob(self->fd, self->good, self->good_len, &plain));
	free(b);
	free(blob);

	/* nothing counted yet: no function, and count 0 copies nothing */
	n = 0;
	ASSERT_EQ(0, profile_of(self->fd, res.id, NULL, &n));
	EXPECT_EQ(0, n);
	ASSERT_EQ(0, pt_cmd("call 3", 0));
	n = 4;
	memset(e, 0xa5, sizeof(e));
	ASSERT_EQ(0, profile_of(self->fd, res.id, e, &n));
	ASSERT_EQ(1, n);
	EXPECT_EQ(3, e[0].hits);
	EXPECT_EQ(3, e[0].timed);
	EXPECT_LT(0, e[0].time_ns);
	EXPECT_LE(e[0].max_ns, e[0].time_ns);
	EXPECT_LE(e[0].time_ns, 3 * e[0].max_ns);
	EXPECT_NE(0, e[0].ip);
	/* count 0 asks how many, and copies none */
	n = 0;
	ASSERT_EQ(0, profile_of(self->fd, res.id, NULL, &n));
	EXPECT_EQ(1, n);
	/* the profiling probe wrote no record: only the plain probe's */
	len = pt_drain(self->fd, self->out, sizeof(self->out));
	EXPECT_EQ(0, pt_count(self->out, len, res.id, 0));
	EXPECT_EQ(0, pt_count(self->out, len, res.id, 1));

	/* malformed requests */
	n = 4;
	EXPECT_EQ(-EINVAL, profile_of(self->fd, plain.id, e, &n));	/* not profiling */
	EXPECT_EQ(-ENOENT, profile_of(self->fd, res.id + 100, e, &n));
	EXPECT_EQ(-EFAULT, profile_of(self->fd, res.id, (void *)8, &n));
	EXPECT_EQ(-EFAULT, profile_of(self->fd, res.id, NULL, &n));
	req = (struct ktrack_probe_profile){ .size = sizeof(req), .id = res.id, .count = 4,
					     .entry_size = 8, .entries_ptr = (uintptr_t)e };
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_PROFILE, &req));
	EXPECT_EQ(EINVAL, errno);
	req.entry_size = sizeof(e[0]);
	req.overflow = 1;
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_PROFILE, &req));
	EXPECT_EQ(EINVAL, errno);
	req.overflow = 0;
	req.id = 0;
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_PROFILE, &req));
	EXPECT_EQ(EINVAL, errno);
	req.id = res.id;
	req.size = 8;	/* shorter than the struct */
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_PROFILE, &req));
	EXPECT_EQ(EINVAL, errno);

	/* entries only: counted, never timed (6.1 arms a kprobe, not a kretprobe) */
	blob = pt_compile("f:pe ktrack_tpt_string", NULL, &len, self->out, sizeof(self->out));
	ASSERT_NE(NULL, blob) TH_LOG("%s", self->out);
	((struct ktrack_probe_desc *)blob)->flags |= KTRACK_PROBE_F_PROFILE;
	ASSERT_EQ(0, pt_add_blob(self->fd, blob, len, &res));
	free(blob);
	ASSERT_EQ(0, pt_cmd("call 2", 0));
	n = 4;
	ASSERT_EQ(0, profile_of(self->fd, res.id, e, &n));
	ASSERT_EQ(1, n);
	EXPECT_EQ(2, e[0].hits);
	EXPECT_EQ(0, e[0].timed);
	EXPECT_EQ(0, e[0].time_ns);
}

TEST_F(desc, actions_are_validated_and_start_resumes)
{
	struct ktrack_probe_desc *d;
	struct ktrack_probe_action *a;
	struct ktrack_stats st = { .size = sizeof(st) };
	struct ktrack_probe_add res = { 0 };
	unsigned char *b;
	void *two;
	size_t len, len2, pos;
	int triggers = 0, i;
	uint8_t v1[KTRACK_STATS_SIZE_V1];

	two = pt_compile("p:act ktrack_tpt_add => stop stack:2", NULL, &len2, self->out, sizeof(self->out));
	ASSERT_NE(NULL, two) TH_LOG("%s", self->out);
	b = malloc(len2);
	ASSERT_NE(NULL, b);
	for (i = 0; i < 5; i++) {
		memcpy(b, two, len2);
		d = (struct ktrack_probe_desc *)b;
		a = (struct ktrack_probe_action *)(b + d->actions_off);
		ASSERT_EQ(2, d->nr_actions);
		switch (i) {
		case 0: a[0].type = 0; break;			/* no such action */
		case 1: a[1].type = KTRACK_ACT_MAX + 1; break;
		case 2: a[1].__pad = 1; break;
		case 3: a[1].type = KTRACK_ACT_STOP; break;	/* twice */
		case 4: d->actions_off += 4; break;		/* misaligned */
		}
		EXPECT_EQ(-EINVAL, pt_add_blob(self->fd, b, len2, NULL)) TH_LOG("mutation %d", i);
	}
	free(b);
	ASSERT_EQ(0, pt_add_blob(self->fd, two, len2, &res));
	free(two);
	ASSERT_EQ(0, pt_cmd("call 3", 0));
	len = pt_drain(self->fd, self->out, sizeof(self->out));
	/* the first hit recorded, its STOP, then nothing: paused */
	EXPECT_EQ(1, pt_count(self->out, len, res.id, 0));
	for (pos = 0; pos + sizeof(struct ktrack_rec_hdr) <= len;) {
		struct ktrack_rec_hdr *h = (struct ktrack_rec_hdr *)(self->out + pos);

		if (h->len < sizeof(*h))
			break;
		if (h->type == KTRACK_REC_TRIGGER) {
			struct ktrack_rec_trigger *t = (struct ktrack_rec_trigger *)(h + 1);

			EXPECT_EQ(KTRACK_ACT_STOP, t->action);
			EXPECT_EQ(1, t->nth);
			triggers++;
		}
		pos += h->len;
	}
	EXPECT_EQ(1, triggers);
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_GET_STATS, &st));
	EXPECT_EQ(KTRACK_STATE_RUNNING, st.state);
	EXPECT_EQ(KTRACK_STATS_F_TRIG_STOPPED, st.flags);
	/* a caller of the first struct (24 bytes) is served, its size kept */
	memset(v1, 0, sizeof(v1));
	*(uint32_t *)v1 = KTRACK_STATS_SIZE_V1;
	EXPECT_EQ(0, ioctl(self->fd, KTRACK_IOC_GET_STATS, v1)) TH_LOG("%s", strerror(errno));
	/* START resumes a paused session; on a recording one it is EBUSY */
	EXPECT_EQ(0, ioctl(self->fd, KTRACK_IOC_START));
	memset(&st, 0, sizeof(st));
	st.size = sizeof(st);
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_GET_STATS, &st));
	EXPECT_EQ(0, st.flags);
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_START));
	EXPECT_EQ(EBUSY, errno);
	/* marker while paused: ENODATA; recording again: the next hit stops it again */
	ASSERT_EQ(0, pt_cmd("call 1", 0));
	errno = 0;
	EXPECT_EQ(-1, write(self->fd, "m", 2));
	EXPECT_EQ(ENODATA, errno);
}

TEST_F(desc, kernel_refusals_say_why)
{
	int id;

	/* kprobe machinery itself is blacklisted */
	id = pt_add(self->fd, "p:bl kprobe_int3_handler", NULL);
	EXPECT_EQ(-EOPNOTSUPP, id);
	/* an offset inside an instruction is not probeable either */
	id = pt_add(self->fd, "p:mid ktrack_tpt_add+1", NULL);
	EXPECT_EQ(-EOPNOTSUPP, id);
}

/* Records of 'type' (for a PROBE: of probe 'id') in a read() or snapshot buffer. */
static int snap_count(const char *buf, size_t len, uint16_t type, uint32_t id, uint64_t *lost)
{
	size_t pos;
	int n = 0;

	for (pos = 0; pos + sizeof(struct ktrack_rec_hdr) <= len;) {
		const struct ktrack_rec_hdr *h = (const struct ktrack_rec_hdr *)(buf + pos);

		if (h->len < sizeof(*h) || pos + h->len > len)
			return -1;
		if (h->type == KTRACK_REC_LOST && lost)
			*lost += ((const struct ktrack_rec_lost *)(h + 1))->count;
		if (h->type == type &&
		    (type != KTRACK_REC_PROBE || ((const struct ktrack_rec_probe *)(h + 1))->probe_id == id))
			n++;
		pos += h->len;
	}
	return n;
}

/* Waits (up to 5 s) until the session's snapshot is ready. */
static bool snap_wait_ready(int fd)
{
	int i;

	for (i = 0; i < 500; i++) {
		struct ktrack_stats st = { .size = sizeof(st) };

		if (ioctl(fd, KTRACK_IOC_GET_STATS, &st) == 0 && (st.flags & KTRACK_STATS_F_SNAP_READY))
			return true;
		usleep(10000);
	}
	return false;
}

TEST_F(desc, snapshot_copies_up_to_the_hit_and_validates)
{
	struct ktrack_config c = { .size = sizeof(c), .buf_pages = 4, .mode = KTRACK_MODE_OVERWRITE };
	struct ktrack_snapshot sn = { .size = sizeof(sn) };
	struct ktrack_probe_add res = { 0 };
	struct ktrack_rec_trigger *t;
	size_t len, pos;
	uint64_t lost = 0;
	char *buf;
	void *blob;
	int fd, triggers = 0;

	blob = pt_compile("p:sn ktrack_tpt_add => snapshot", NULL, &len, self->out, sizeof(self->out));
	ASSERT_NE(NULL, blob) TH_LOG("%s", self->out);
	/* a discard session cannot hold snapshots: refused, nothing armed */
	EXPECT_EQ(-EINVAL, pt_add_blob(self->fd, blob, len, NULL));
	fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_SET_CONFIG, &c));
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	ASSERT_EQ(0, pt_add_blob(fd, blob, len, &res));
	free(blob);
	/* nothing to take yet; a short struct is refused */
	EXPECT_EQ(-1, ioctl(fd, KTRACK_IOC_SNAPSHOT_GET, &sn));
	EXPECT_EQ(ENOENT, errno);
	sn.size = 8;
	EXPECT_EQ(-1, ioctl(fd, KTRACK_IOC_SNAPSHOT_GET, &sn));
	EXPECT_EQ(EINVAL, errno);
	sn.size = sizeof(sn);

	/* three hits: the first takes the slot, the two after find it held */
	ASSERT_EQ(0, pt_cmd("call 3", 0));
	ASSERT_TRUE(snap_wait_ready(fd));
	EXPECT_EQ(-1, ioctl(fd, KTRACK_IOC_SNAPSHOT_GET, &sn));
	EXPECT_EQ(ENOSPC, errno);
	ASSERT_LT(0, sn.buf_len);
	buf = malloc(sn.buf_len);
	ASSERT_NE(NULL, buf);
	/* a bad buffer: EFAULT, and the snapshot stays */
	sn.buf_ptr = 8;
	EXPECT_EQ(-1, ioctl(fd, KTRACK_IOC_SNAPSHOT_GET, &sn));
	EXPECT_EQ(EFAULT, errno);
	sn.buf_ptr = (uintptr_t)buf;
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_SNAPSHOT_GET, &sn)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(1, sn.seq);
	EXPECT_EQ(1, sn.nth);
	EXPECT_EQ(2, sn.missed);
	EXPECT_EQ(res.id, sn.probe_id);
	EXPECT_EQ(1, snap_count(buf, sn.buf_len, KTRACK_REC_PROBE, res.id, &lost));
	EXPECT_EQ(1, snap_count(buf, sn.buf_len, KTRACK_REC_TRIGGER, 0, NULL));
	EXPECT_EQ(2, sn.records);
	EXPECT_EQ(0, lost);
	EXPECT_EQ(0, sn.flags);
	free(buf);
	/* taken: the slot is free, and ENOENT still says what was taken and missed */
	memset(&sn, 0, sizeof(sn));
	sn.size = sizeof(sn);
	EXPECT_EQ(-1, ioctl(fd, KTRACK_IOC_SNAPSHOT_GET, &sn));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(1, sn.seq);
	EXPECT_EQ(2, sn.missed);

	/* the next hit: a copy of all four hits, and nothing was consumed */
	ASSERT_EQ(0, pt_cmd("call 1", 0));
	ASSERT_TRUE(snap_wait_ready(fd));
	memset(&sn, 0, sizeof(sn));
	sn.size = sizeof(sn);
	buf = malloc(65536);
	ASSERT_NE(NULL, buf);
	sn.buf_ptr = (uintptr_t)buf;
	sn.buf_len = 65536;
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_SNAPSHOT_GET, &sn));
	EXPECT_EQ(2, sn.seq);
	EXPECT_EQ(4, sn.nth);
	EXPECT_EQ(4, snap_count(buf, sn.buf_len, KTRACK_REC_PROBE, res.id, NULL));
	EXPECT_EQ(2, snap_count(buf, sn.buf_len, KTRACK_REC_TRIGGER, 0, NULL));
	len = pt_drain(fd, buf, 65536);
	EXPECT_EQ(4, pt_count(buf, len, res.id, 0));
	for (pos = 0; pos + sizeof(struct ktrack_rec_hdr) <= len;) {
		struct ktrack_rec_hdr *h = (struct ktrack_rec_hdr *)(buf + pos);

		if (h->len < sizeof(*h))
			break;
		if (h->type == KTRACK_REC_TRIGGER) {
			t = (struct ktrack_rec_trigger *)(h + 1);
			EXPECT_EQ(KTRACK_ACT_SNAPSHOT, t->action);
			triggers++;
		}
		pos += h->len;
	}
	EXPECT_EQ(2, triggers);
	free(buf);
	/* a new run counts from zero */
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_STOP));
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
	memset(&sn, 0, sizeof(sn));
	sn.size = sizeof(sn);
	EXPECT_EQ(-1, ioctl(fd, KTRACK_IOC_SNAPSHOT_GET, &sn));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(0, sn.seq);
	EXPECT_EQ(0, sn.missed);
	close(fd);
}

TEST_HARNESS_MAIN

/*
 * u and ur descriptions (KTRACK_FEAT_UPROBE): one absolute path in funcs,
 * a file offset, user-memory fetches only, no kernel stack; the kernel's
 * own refusals (no such file, not a regular file, past its end) come back.
 */
#define UP_TARGET "build/tests/targets/uprobe_target"

static void *up_blob(const char *spec, size_t *len, char *out, size_t outlen)
{
	static char full[2 * PATH_MAX + 1024], path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/" UP_TARGET, kt_root());
	snprintf(full, sizeof(full), spec, path);
	return pt_compile(full, NULL, len, out, outlen);
}

/* Replaces the path (in place, same length or shorter) of a u blob. */
static void up_path(struct ktrack_probe_desc *d, unsigned char *b, const char *path)
{
	memset(b + d->funcs_off, 0, d->funcs_len);
	memcpy(b + d->funcs_off, path, strlen(path) + 1);
	d->funcs_len = strlen(path) + 1;
}

TEST_F(desc, uprobe_descriptions_are_validated)
{
	struct ktrack_probe_desc *d;
	struct ktrack_probe_fetch *f;
	unsigned char *b, *copy;
	size_t len;
	int i;

	b = up_blob("u:ug %s:kt_target_fn a=$arg1 s=+0($arg2):string => stop", &len, self->out,
		    sizeof(self->out));
	ASSERT_NE(NULL, b) TH_LOG("%s", self->out);
	d = (struct ktrack_probe_desc *)b;
	ASSERT_EQ(KTRACK_PROBE_UPROBE, d->kind);
	ASSERT_EQ(1, d->nr_funcs);
	ASSERT_EQ('/', b[d->funcs_off]);
	f = FETCH(d, b, 1);
	EXPECT_EQ(KTRACK_FETCH_T_USTRING, f->type);
	EXPECT_TRUE(f->flags & KTRACK_FETCH_F_USER);
	copy = malloc(len);
	ASSERT_NE(NULL, copy);
	for (i = 0; i < 12; i++) {
		struct ktrack_probe_desc *c = (struct ktrack_probe_desc *)copy;
		int want = -EINVAL;

		memcpy(copy, b, len);
		switch (i) {
		case 0: copy[c->funcs_off] = 'x'; break;			/* relative */
		case 1: c->nr_funcs = 2; break;
		case 2: c->funcs_len--; break;					/* not NUL-ended */
		case 3: c->addr = 0x1000; break;
		case 4: strcpy(c->module, "ext4"); break;
		case 5: c->stack_depth = 4; break;
		case 6: c->offset = 1ULL << 33; break;
		case 7: FETCH(c, copy, 1)->type = KTRACK_FETCH_T_STRING; break;	/* kernel memory */
		case 8: FETCH(c, copy, 1)->flags = 0; break;			/* deref not user */
		case 9: FETCH(c, copy, 0)->src = KTRACK_FETCH_SRC_RETVAL; FETCH(c, copy, 0)->param = 0; break;
		case 10: ((struct ktrack_probe_action *)(copy + c->actions_off))->type = KTRACK_ACT_STACK; break;
		case 11: up_path(c, copy, "/nonexistent/kt"); want = -ENOENT; break;
		}
		EXPECT_EQ(want, pt_add_blob(self->fd, copy, len, NULL)) TH_LOG("case %d", i);
	}
	/* a directory; an offset past the file's end */
	memcpy(copy, b, len);
	up_path((struct ktrack_probe_desc *)copy, copy, "/");
	EXPECT_EQ(-EINVAL, pt_add_blob(self->fd, copy, len, NULL));
	memcpy(copy, b, len);
	((struct ktrack_probe_desc *)copy)->offset = 0xfffffff0;
	EXPECT_EQ(-EINVAL, pt_add_blob(self->fd, copy, len, NULL));
	/* the good one, after all that: armed */
	{
		struct ktrack_probe_add res = { 0 };

		EXPECT_EQ(0, pt_add_blob(self->fd, b, len, &res));
		EXPECT_EQ(KTRACK_MECH_UPROBE, res.mechanism);
		EXPECT_EQ(KTRACK_PROBE_ST_ARMED, res.state);
	}
	free(copy);
	free(b);
}
