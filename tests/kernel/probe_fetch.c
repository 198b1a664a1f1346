// SPDX-License-Identifier: GPL-2.0
/*
 * Dynamic probes, end to end: specs compiled by ktrackctl, added on a
 * session fd, records read back from /dev/ktrack.  Every fetch form and
 * type returns the exact values the target module passes; $retval and
 * $duration are right; filters pass exactly the expected hits; hits equal
 * calls; faulting reads record the marker.
 */
#include <sched.h>
#include <sys/sysinfo.h>

#include "kselftest_harness.h"
#include "probe_common.h"

#define BUFSZ (1 << 20)

PT_RECORDS_FIXTURE(probe, BUFSZ);

static void pt_calls(struct __test_metadata *_metadata, int n)
{
	char cmd[32];

	snprintf(cmd, sizeof(cmd), "call %d", n);
	ASSERT_EQ(0, pt_cmd(cmd, 0));
}

TEST_F(probe, args_and_types_exact)
{
	int id = pt_add(self->fd, "p:add ktrack_tpt_add a=$arg1:s32 b=$arg2:x64 c=$arg3:u8 d=$arg4:s16 "
			"e=$arg5:x64 f=$arg6:s8 comm=$comm cpu=$cpu", NULL);
	struct ktrack_probe_info info = { 0 };
	struct ktrack_rec_probe *r;
	struct ktrack_rec_hdr *h;
	size_t len, pos = 0;
	int n = 0;

	ASSERT_LT(0, id);
	pt_calls(_metadata, 3);
	len = pt_drain(self->fd, self->buf, BUFSZ);
	while ((r = pt_next(self->buf, len, &pos, id, &h))) {
		int32_t a; uint64_t b, e; uint8_t c; int16_t d; int8_t f; uint32_t cpu;

		memcpy(&a, r->data + 0, 4);
		memcpy(&b, r->data + 8, 8);
		memcpy(&c, r->data + 16, 1);
		memcpy(&d, r->data + 18, 2);
		memcpy(&e, r->data + 24, 8);
		memcpy(&f, r->data + 32, 1);
		memcpy(&cpu, r->data + 40, 4);
		EXPECT_EQ(KTRACK_PROBE_EV_ENTRY, r->event);
		EXPECT_EQ(-5, a);
		EXPECT_EQ(0x123456789abcULL, b);
		EXPECT_EQ(200, c);
		EXPECT_EQ(-1234, d);
		EXPECT_EQ(0xdeadbeefcafef00dULL, e);
		EXPECT_EQ(-7, f);
		EXPECT_STREQ("probe_fetch", pt_str(r, 36));
		EXPECT_EQ(h->cpu, cpu);
		EXPECT_EQ(0, r->fault_mask);
		/* the probed address: the function, or just past its ENDBR64 (IBT) */
		EXPECT_LE(pt_kallsyms("ktrack_tpt_add"), r->ip);
		EXPECT_GT(pt_kallsyms("ktrack_tpt_add") + 16, r->ip);
		EXPECT_EQ(getpid(), (pid_t)h->pid);
		n++;
	}
	EXPECT_EQ(3, n);
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(3, info.hits);
	EXPECT_EQ(0, info.misses);
	EXPECT_EQ(KTRACK_MECH_KPROBE, info.mechanism);
	EXPECT_EQ(KTRACK_PROBE_ST_ARMED, info.state);
}

TEST_F(probe, nested_derefs_strings_arrays_symbols)
{
	int id = pt_add(self->fd, "p:st ktrack_tpt_struct id=+0($arg1):s32 magic=+0(+8($arg1)):x64 "
			"istr=+0(+8(+8($arg1))):string name=+16($arg1):string label=+0(+32($arg1)):string "
			"arr=+40($arg1):u32[4] g=@ktrack_tpt_global:u32", NULL);
	struct ktrack_rec_probe *r;
	size_t len, pos = 0;
	uint32_t arr[4], g;
	int32_t idv;
	uint64_t magic;

	ASSERT_LT(0, id);
	pt_calls(_metadata, 1);
	len = pt_drain(self->fd, self->buf, BUFSZ);
	r = pt_next(self->buf, len, &pos, id, NULL);
	ASSERT_NE(NULL, r);
	memcpy(&idv, r->data, 4);
	memcpy(&magic, r->data + 8, 8);
	memcpy(arr, r->data + 28, 16);
	memcpy(&g, r->data + 44, 4);
	EXPECT_EQ(42, idv);
	EXPECT_EQ(0x1122334455667788ULL, magic);
	EXPECT_STREQ("inner-string", pt_str(r, 16));
	EXPECT_STREQ("outer-name", pt_str(r, 20));
	EXPECT_STREQ("label-text", pt_str(r, 24));
	EXPECT_EQ(1, arr[0]);
	EXPECT_EQ(2, arr[1]);
	EXPECT_EQ(3, arr[2]);
	EXPECT_EQ(4, arr[3]);
	EXPECT_EQ(0x5a5a1234, g);
	EXPECT_EQ(0, r->fault_mask);
}

TEST_F(probe, kernel_and_user_strings)
{
	int id = pt_add(self->fd, "p:s ktrack_tpt_string s=$arg1:string us=$arg2:ustring", NULL);
	static const char cmd[] = "ustr hello-user";
	struct ktrack_rec_probe *r;
	size_t len, pos = 0;

	ASSERT_LT(0, id);
	ASSERT_EQ(0, pt_cmd(cmd, sizeof(cmd)));	/* NUL included */
	len = pt_drain(self->fd, self->buf, BUFSZ);
	r = pt_next(self->buf, len, &pos, id, NULL);
	ASSERT_NE(NULL, r);
	EXPECT_STREQ("hello kernel", pt_str(r, 0));
	EXPECT_STREQ("hello-user", pt_str(r, 4));
	EXPECT_EQ(0, r->fault_mask);
}

TEST_F(probe, faulting_reads_record_the_marker)
{
	int id = pt_add(self->fd, "p:f ktrack_tpt_ptr v=+0($arg1):u64 s=+0($arg1):string "
			"deep=+8(+0($arg1)):u32 ok=$arg1", NULL);
	struct ktrack_probe_info info = { 0 };
	struct ktrack_rec_probe *r;
	size_t len, pos = 0;
	uint64_t v, ok;
	uint32_t deep, loc;

	ASSERT_LT(0, id);
	pt_calls(_metadata, 2);
	len = pt_drain(self->fd, self->buf, BUFSZ);
	r = pt_next(self->buf, len, &pos, id, NULL);
	ASSERT_NE(NULL, r);
	memcpy(&v, r->data, 8);
	memcpy(&loc, r->data + 8, 4);
	memcpy(&deep, r->data + 12, 4);
	memcpy(&ok, r->data + 16, 8);
	EXPECT_EQ(0x7, r->fault_mask);
	EXPECT_EQ(0xffffffffffffffffULL, v);
	EXPECT_EQ(0, loc & 0xffff);
	EXPECT_EQ(0xffffffffU, deep);
	EXPECT_EQ(16, ok);
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(2, info.hits);
	EXPECT_EQ(6, info.faults);
}

/*
 * A string whose pointer chain faults before the string (+0(+0($arg1)))
 * is an empty string at the end of the data, as docs/UAPI.md says.  Its
 * slot used to be 0xffffffff, which a glob filter took for 64 KiB past
 * the record and read (review 2026-11-27, S1-2; KASAN's witness).
 */
TEST_F(probe, faulted_string_chain_is_empty_for_the_filter)
{
	int id = pt_add(self->fd, "p:fs ktrack_tpt_ptr s=+0(+0($arg1)):string", NULL);
	int idz = pt_add(self->fd, "p:fz ktrack_tpt_ptr s=+0(+0($arg1)):string if s ~ \"*Z\"", NULL);
	int ide = pt_add(self->fd, "p:fe ktrack_tpt_ptr s=+0(+0($arg1)):string if s ~ \"*\"", NULL);
	struct ktrack_probe_info info = { 0 };
	struct ktrack_rec_probe *r;
	size_t len, pos = 0;
	uint32_t loc;

	ASSERT_LT(0, id);
	ASSERT_LT(0, idz);
	ASSERT_LT(0, ide);
	pt_calls(_metadata, 2);
	len = pt_drain(self->fd, self->buf, BUFSZ);
	r = pt_next(self->buf, len, &pos, id, NULL);
	ASSERT_NE(NULL, r);
	memcpy(&loc, r->data, 4);
	EXPECT_EQ(1, r->fault_mask);
	EXPECT_EQ(0, loc & 0xffff);
	EXPECT_GE(r->data_len, loc >> 16);
	EXPECT_EQ(2, pt_count(self->buf, len, id, KTRACK_PROBE_EV_ENTRY));
	/* the empty string matches "*" and not "*Z" */
	EXPECT_EQ(0, pt_count(self->buf, len, idz, KTRACK_PROBE_EV_ENTRY));
	EXPECT_EQ(2, pt_count(self->buf, len, ide, KTRACK_PROBE_EV_ENTRY));
	ASSERT_EQ(0, pt_info(self->fd, idz, &info));
	EXPECT_EQ(2, info.hits);
	EXPECT_EQ(2, info.filtered);
	EXPECT_EQ(2, info.faults);
}

/*
 * A hit the hit limit refuses still ran its fetches: a faulting one counts
 * in 'faults' every time; plain arguments (written straight into the ring)
 * are recorded with their values up to the limit.
 */
TEST_F(probe, faults_counted_for_hits_past_the_limit)
{
	int idf = pt_add(self->fd, "p:lf ktrack_tpt_ptr v=+0($arg1):u64", "--limit 1");
	int ida = pt_add(self->fd, "p:la ktrack_tpt_ptr a=$arg1:x64", "--limit 1");
	struct ktrack_probe_info info = { 0 };
	struct ktrack_rec_probe *r;
	size_t len, pos = 0;
	uint64_t a;

	ASSERT_LT(0, idf);
	ASSERT_LT(0, ida);
	pt_calls(_metadata, 3);
	len = pt_drain(self->fd, self->buf, BUFSZ);
	EXPECT_EQ(1, pt_count(self->buf, len, idf, KTRACK_PROBE_EV_ENTRY));
	EXPECT_EQ(1, pt_count(self->buf, len, ida, KTRACK_PROBE_EV_ENTRY));
	ASSERT_EQ(0, pt_info(self->fd, idf, &info));
	EXPECT_EQ(3, info.hits);
	EXPECT_EQ(2, info.dropped);
	EXPECT_EQ(3, info.faults);
	ASSERT_EQ(0, pt_info(self->fd, ida, &info));
	EXPECT_EQ(3, info.hits);
	EXPECT_EQ(2, info.dropped);
	EXPECT_EQ(0, info.faults);
	r = pt_next(self->buf, len, &pos, ida, NULL);
	ASSERT_NE(NULL, r);
	EXPECT_EQ(0, r->fault_mask);
	EXPECT_EQ(8, r->data_len);
	memcpy(&a, r->data, 8);
	EXPECT_EQ(16, a);
}

TEST_F(probe, retval_duration_and_args_at_exit)
{
	int id = pt_add(self->fd, "r:rs ktrack_tpt_sleep ret=$retval:s32 dur=$duration ms=$arg1:u32", NULL);
	int id2 = pt_add(self->fd, "r:ra ktrack_tpt_add a=$arg1:s32 ret=$retval:s32", NULL);
	struct ktrack_probe_info info = { 0 };
	struct ktrack_rec_probe *r;
	size_t len, pos = 0;
	int32_t ret, a;
	uint64_t dur;
	uint32_t ms;

	ASSERT_LT(0, id);
	ASSERT_LT(0, id2);
	ASSERT_EQ(0, pt_cmd("sleep 30", 0));
	pt_calls(_metadata, 1);
	len = pt_drain(self->fd, self->buf, BUFSZ);
	r = pt_next(self->buf, len, &pos, id, NULL);
	ASSERT_NE(NULL, r);
	memcpy(&ret, r->data, 4);
	memcpy(&dur, r->data + 8, 8);
	memcpy(&ms, r->data + 16, 4);
	EXPECT_EQ(KTRACK_PROBE_EV_EXIT, r->event);
	EXPECT_EQ(30, ret);
	EXPECT_EQ(30, ms);
	/* msleep(30) sleeps at least 30 ms; an entry-to-exit time below that is wrong */
	EXPECT_LE(30000000ULL, dur);
	EXPECT_GT(30ULL * 1000000000ULL, dur);
	EXPECT_NE(0, r->parent_ip);
	pos = 0;
	r = pt_next(self->buf, len, &pos, id2, NULL);
	ASSERT_NE(NULL, r);
	memcpy(&a, r->data, 4);
	memcpy(&ret, r->data + 4, 4);
	EXPECT_EQ(-5, a);
	EXPECT_EQ(-5 + 200 - 1234 - 7, ret);
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(KTRACK_MECH_KRETPROBE, info.mechanism);
	EXPECT_EQ(1, info.hits);
}

TEST_F(probe, filter_passes_exactly_the_expected_hits)
{
	int id = pt_add(self->fd, "p:fl ktrack_tpt_sleep ms=$arg1:u32 if ms >= 5 && ms != 7", NULL);
	int idc = pt_add(self->fd, "p:cf ktrack_tpt_glob_one x=$arg1:s32 if comm ~ \"probe_f*\" && x == 10",
			 NULL);
	int idn = pt_add(self->fd, "p:cn ktrack_tpt_glob_two x=$arg1 if comm == \"nomatch\" || x < 0", NULL);
	struct ktrack_probe_info info = { 0 };
	struct ktrack_rec_probe *r;
	size_t len, pos = 0;
	char cmd[32];
	int i, seen = 0;

	ASSERT_LT(0, id);
	ASSERT_LT(0, idc);
	ASSERT_LT(0, idn);
	for (i = 1; i <= 10; i++) {
		snprintf(cmd, sizeof(cmd), "sleep %d", i);
		ASSERT_EQ(0, pt_cmd(cmd, 0));
	}
	pt_calls(_metadata, 4);
	len = pt_drain(self->fd, self->buf, BUFSZ);
	while ((r = pt_next(self->buf, len, &pos, id, NULL))) {
		uint32_t ms;

		memcpy(&ms, r->data, 4);
		EXPECT_TRUE(ms >= 5 && ms != 7);
		seen++;
	}
	EXPECT_EQ(5, seen);
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(10, info.hits);
	EXPECT_EQ(5, info.filtered);
	EXPECT_EQ(4, pt_count(self->buf, len, idc, 0));
	EXPECT_EQ(0, pt_count(self->buf, len, idn, 0));
	ASSERT_EQ(0, pt_info(self->fd, idn, &info));
	EXPECT_EQ(4, info.hits);
	EXPECT_EQ(4, info.filtered);
}

/* Lowest and highest text address of module 'mod' in /proc/kallsyms. */
static void pt_module_text(const char *mod, unsigned long *lo, unsigned long *hi)
{
	char line[512], sym[256], tag[128], want[130];
	unsigned long addr;
	char type;
	FILE *f = fopen("/proc/kallsyms", "r");

	*lo = ~0UL;
	*hi = 0;
	snprintf(want, sizeof(want), "[%s]", mod);
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %c %255s %127s", &addr, &type, sym, tag) == 4 &&
		    (type == 't' || type == 'T') && !strcmp(tag, want)) {
			if (addr < *lo)
				*lo = addr;
			if (addr > *hi)
				*hi = addr;
		}
	fclose(f);
}

/*
 * A --stack probe's PROBE and STACK records are one unit (review finding
 * #15): in a 1-page ring with no reader, in discard and overwrite mode,
 * over a sweep of record sizes, every PROBE record is directly followed by
 * its STACK record and every STACK follows its PROBE (never one without
 * the other, nothing between them); the counters count both; the stack
 * starts at the probed function, then its caller, with no frame in ktrack.ko.
 */
TEST_F(probe, stack_record_linked_to_its_hit_in_a_full_ring)
{
	unsigned long fn = pt_kallsyms("ktrack_tpt_glob_three"), lo, hi;
	static const unsigned int depths[] = { 1, 2, 5, 8 };
	unsigned int mode, di, nargs, pairs_total = 0;
	int ncpu = get_nprocs_conf();
	struct ktrack_cpu_stats *cs = calloc(ncpu, sizeof(*cs));
	cpu_set_t one, saved;

	ASSERT_NE(0, fn);
	/* every hit on one CPU: one ring fills, whatever the scheduler does */
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(saved), &saved));
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	ASSERT_NE(NULL, cs);
	pt_module_text("ktrack", &lo, &hi);
	ASSERT_LT(lo, hi);
	hi += 4096;	/* the last function's body */
	for (mode = KTRACK_MODE_DISCARD; mode <= KTRACK_MODE_OVERWRITE; mode++)
	for (di = 0; di < sizeof(depths) / sizeof(depths[0]); di++)
	for (nargs = 0; nargs <= 6; nargs += 2) {
		struct ktrack_config c = { .size = sizeof(c), .buf_pages = 1, .mode = mode };
		struct ktrack_stats st = { .size = sizeof(st), .nr_cpus = ncpu,
					   .cpus_ptr = (uintptr_t)cs };
		char spec[256], extra[32];
		uint64_t written = 0, lost = 0, overwritten = 0, nread = 0, marked = 0;
		size_t len, pos = 0, more;
		unsigned int i, pairs = 0;
		int fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC), id;

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_SET_CONFIG, &c));
		len = snprintf(spec, sizeof(spec), "p:lk ktrack_tpt_glob_three");
		for (i = 0; i < nargs; i++)
			len += snprintf(spec + len, sizeof(spec) - len, " a%u=$arg1:u64", i);
		snprintf(extra, sizeof(extra), "--stack %u", depths[di]);
		id = pt_add(fd, spec, extra);
		ASSERT_LT(0, id);
		ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_START));
		pt_calls(_metadata, 200);
		ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_STOP));
		len = pt_drain(fd, self->buf, BUFSZ);
		/* drained: now the flush finds room for the discard ring's LOST record */
		more = pt_drain(fd, self->buf + len, BUFSZ - len);
		len += more;
		while (pos + sizeof(struct ktrack_rec_hdr) <= len) {
			struct ktrack_rec_hdr *h = (struct ktrack_rec_hdr *)(self->buf + pos);
			struct ktrack_rec_hdr *h2 = (struct ktrack_rec_hdr *)(self->buf + pos + h->len);
			struct ktrack_rec_probe *r = (struct ktrack_rec_probe *)(h + 1);
			struct ktrack_rec_stack *sk = (struct ktrack_rec_stack *)(h2 + 1);

			ASSERT_LE(sizeof(*h), h->len);
			/* a STACK is only ever met as the second of a pair */
			ASSERT_NE(KTRACK_REC_STACK, h->type);
			if (h->type == KTRACK_REC_LOST)
				marked += ((struct ktrack_rec_lost *)(h + 1))->count;
			if (h->type != KTRACK_REC_PROBE) {
				pos += h->len;
				continue;
			}
			ASSERT_EQ(id, r->probe_id);
			ASSERT_NE(0, h->flags & KTRACK_RECF_LINKED);
			ASSERT_LE(pos + h->len + sizeof(*h2), len);
			ASSERT_EQ(KTRACK_REC_STACK, h2->type);
			ASSERT_EQ(0, h2->flags & KTRACK_RECF_LINKED);
			ASSERT_EQ(h->ts, h2->ts);
			ASSERT_EQ(id, sk->probe_id);
			ASSERT_LT(0, sk->nr);
			ASSERT_GE(depths[di], sk->nr);
			/* the probed function (kprobes skip an endbr64: +4) */
			EXPECT_EQ(r->ip, sk->ips[0]);
			EXPECT_LE(fn, sk->ips[0]);
			EXPECT_GT(fn + 16, sk->ips[0]);
			if (sk->nr > 1)
				EXPECT_EQ(r->parent_ip, sk->ips[1]);
			for (i = 0; i < sk->nr; i++)
				EXPECT_FALSE(sk->ips[i] >= lo && sk->ips[i] < hi)
					TH_LOG("frame %u %#llx lies in ktrack.ko", i,
					       (unsigned long long)sk->ips[i]);
			pairs++;
			pos += h->len + h2->len;
		}
		ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_GET_STATS, &st));
		for (i = 0; i < st.nr_cpus && i < (unsigned int)ncpu; i++) {
			written += cs[i].written;
			lost += cs[i].lost_full + cs[i].lost_too_big;
			overwritten += cs[i].overwritten;
			nread += cs[i].read;
		}
		/* 200 hits, two records each: written or lost, and in pairs */
		EXPECT_EQ(400, written + lost);
		EXPECT_EQ(0, written % 2);
		EXPECT_EQ(2 * pairs, nread);
		EXPECT_EQ(written, nread + overwritten);
		/* the LOST records say exactly how many went, pairs counted twice */
		EXPECT_EQ(lost + overwritten, marked);
		/* the ring held some but not all of them */
		EXPECT_LT(0, pairs);
		EXPECT_GT(200, pairs);
		TH_LOG("mode %u depth %u args %u: %u pairs read, %llu lost, %llu overwritten",
		       mode, depths[di], nargs, pairs, (unsigned long long)lost,
		       (unsigned long long)overwritten);
		pairs_total += pairs;
		close(fd);
	}
	EXPECT_LT(0, pairs_total);
	sched_setaffinity(0, sizeof(saved), &saved);
	free(cs);
}

/*
 * Every kind of probe cuts the same way: a kretprobe exit, an f entry and
 * an f exit start at the probed function then its caller (parent_ip); a t
 * probe at the function that hit the tracepoint; an e probe (perf's
 * overflow path, no parent to cut at) with no frame of ktrack.ko either.
 */
TEST_F(probe, stack_of_every_probe_kind_starts_at_the_probed_context)
{
	struct {
		const char *spec;
		bool has_ip;	/* ips[0] is the record's ip, ips[1] its parent */
		bool at_parent;	/* ips[0] is the record's parent_ip */
		int id, seen;
	} k[] = {
		{ "r:sr ktrack_tpt_glob_two ret=$retval:s32", true, false },
		{ "f:sf ktrack_tpt_glob_one", true, false },
		{ "f:sx ktrack_tpt_glob_four%return", true, false },
		{ "t:st ktrack_tpt/ktrack_tpt_hit seq=$arg1:s32", false, true },
		{ "e:se ktrack_tpt/ktrack_tpt_hit", false, false },
		{ NULL, true, false },	/* p at an offset (int3): filled in below */
	};
	unsigned long tlo, thi;
	char off_spec[64];
	__typeof__(k[0]) *kk;
	unsigned long lo, hi;
	size_t len, pos = 0;
	unsigned int i, j;

	pt_module_text("ktrack", &lo, &hi);
	ASSERT_LT(lo, hi);
	hi += 4096;
	/* the glob targets' callers are in the target module */
	pt_module_text(PT_MODULE, &tlo, &thi);
	ASSERT_LT(tlo, thi);
	thi += 4096;
	for (i = 0; i + 1 < sizeof(k) / sizeof(k[0]); i++) {
		k[i].id = pt_add(self->fd, k[i].spec, "--stack 6");
		ASSERT_LT(0, k[i].id) TH_LOG("%s", k[i].spec);
	}
	/*
	 * The instruction after the __fentry__ call: +9 behind an endbr64,
	 * +5 without one (kprobes refuse an offset inside an instruction).
	 */
	k[i].spec = off_spec;
	snprintf(off_spec, sizeof(off_spec), "p:so ktrack_tpt_glob_three+9");
	k[i].id = pt_add(self->fd, off_spec, "--stack 6");
	if (k[i].id <= 0) {
		snprintf(off_spec, sizeof(off_spec), "p:so ktrack_tpt_glob_three+5");
		k[i].id = pt_add(self->fd, off_spec, "--stack 6");
	}
	ASSERT_LT(0, k[i].id) TH_LOG("no offset probe on ktrack_tpt_glob_three");
	pt_calls(_metadata, 3);
	ASSERT_EQ(0, pt_cmd("tp 3", 0));
	len = pt_drain(self->fd, self->buf, BUFSZ);
	while (pos + sizeof(struct ktrack_rec_hdr) <= len) {
		struct ktrack_rec_hdr *h = (struct ktrack_rec_hdr *)(self->buf + pos);
		struct ktrack_rec_hdr *h2 = (struct ktrack_rec_hdr *)(self->buf + pos + h->len);
		struct ktrack_rec_probe *r = (struct ktrack_rec_probe *)(h + 1);
		struct ktrack_rec_stack *sk = (struct ktrack_rec_stack *)(h2 + 1);

		ASSERT_LE(sizeof(*h), h->len);
		ASSERT_NE(KTRACK_REC_STACK, h->type);
		pos += h->len;
		if (h->type != KTRACK_REC_PROBE)
			continue;
		kk = NULL;
		for (i = 0; i < sizeof(k) / sizeof(k[0]); i++)
			if (k[i].id == (int)r->probe_id)
				kk = &k[i];
		ASSERT_NE(NULL, kk);
		ASSERT_LE(pos + sizeof(*h2), len);
		ASSERT_EQ(KTRACK_REC_STACK, h2->type);
		ASSERT_EQ(r->probe_id, sk->probe_id);
		ASSERT_LT(1, sk->nr) TH_LOG("%s", kk->spec);
		if (kk->has_ip) {
			EXPECT_EQ(r->ip, sk->ips[0]) TH_LOG("%s", kk->spec);
			if (r->parent_ip)
				EXPECT_EQ(r->parent_ip, sk->ips[1]) TH_LOG("%s", kk->spec);
			/* the caller, not the probe machinery */
			EXPECT_TRUE(sk->ips[1] >= tlo && sk->ips[1] < thi)
				TH_LOG("%s: frame 1 %#llx is not in the caller's module", kk->spec,
				       (unsigned long long)sk->ips[1]);
		} else if (kk->at_parent) {
			EXPECT_EQ(r->parent_ip, sk->ips[0]) TH_LOG("%s", kk->spec);
		}
		for (j = 0; j < sk->nr; j++)
			EXPECT_FALSE(sk->ips[j] >= lo && sk->ips[j] < hi)
				TH_LOG("%s: frame %u %#llx lies in ktrack.ko", kk->spec, j,
				       (unsigned long long)sk->ips[j]);
		kk->seen++;
		pos += h2->len;
	}
	for (kk = k; kk < k + sizeof(k) / sizeof(k[0]); kk++) {
		const char *spec = kk->spec;

		EXPECT_EQ(3, kk->seen) TH_LOG("%s", spec);
	}
}

TEST_F(probe, hit_limit_stack_registers_and_symbols)
{
	int idl = pt_add(self->fd, "p:hl ktrack_tpt_glob_two", "--limit 2");
	int ids = pt_add(self->fd, "p:sk ktrack_tpt_glob_three", "--stack 8");
	int idr = pt_add(self->fd, "p:rg ktrack_tpt_glob_four x=%di:s32 ra=$stack0:symbol", NULL);
	struct ktrack_probe_info info = { 0 };
	struct ktrack_rec_probe *r;
	struct ktrack_rec_hdr *h;
	size_t len, pos = 0;
	int stacks = 0;

	ASSERT_LT(0, idl);
	ASSERT_LT(0, ids);
	ASSERT_LT(0, idr);
	pt_calls(_metadata, 5);
	len = pt_drain(self->fd, self->buf, BUFSZ);
	EXPECT_EQ(2, pt_count(self->buf, len, idl, 0));
	ASSERT_EQ(0, pt_info(self->fd, idl, &info));
	EXPECT_EQ(5, info.hits);
	EXPECT_EQ(3, info.dropped);
	/* every hit of 'sk' is followed by its stack record */
	while (pos + sizeof(*h) <= len) {
		h = (struct ktrack_rec_hdr *)(self->buf + pos);
		if (h->type == KTRACK_REC_STACK) {
			struct ktrack_rec_stack *st = (struct ktrack_rec_stack *)(h + 1);

			EXPECT_EQ(ids, st->probe_id);
			EXPECT_LT(0, st->nr);
			EXPECT_GE(8, st->nr);
			stacks++;
		}
		pos += h->len;
	}
	EXPECT_EQ(5, stacks);
	pos = 0;
	r = pt_next(self->buf, len, &pos, idr, NULL);
	ASSERT_NE(NULL, r);
	{
		int32_t x;
		uint64_t ra;

		memcpy(&x, r->data, 4);
		memcpy(&ra, r->data + 8, 8);
		EXPECT_EQ(40, x);
		EXPECT_EQ(ra, r->parent_ip);
		EXPECT_NE(0, ra);
	}
}

TEST_F(probe, delete_stops_hits_and_close_detaches)
{
	int id = pt_add(self->fd, "p:d ktrack_tpt_glob_one", NULL);
	struct ktrack_probe_del del = { .size = sizeof(del) };
	struct ktrack_probe_info info = { 0 };
	int fd2;

	ASSERT_LT(0, id);
	strcpy(del.name, "d");
	EXPECT_EQ(-EEXIST, pt_add(self->fd, "p:d ktrack_tpt_glob_two", NULL));
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_PROBE_DEL, &del));
	EXPECT_EQ(-ENOENT, pt_info(self->fd, id, &info));
	EXPECT_EQ(-1, ioctl(self->fd, KTRACK_IOC_PROBE_DEL, &del));
	EXPECT_EQ(ENOENT, errno);
	/* another session's probes are separate and go away with its fd */
	fd2 = pt_session();
	ASSERT_LE(0, fd2);
	ASSERT_LT(0, pt_add(fd2, "p:d ktrack_tpt_glob_one", NULL));
	close(fd2);
	pt_calls(_metadata, 1);
	/* the target module unloads cleanly: nothing is attached any more */
	EXPECT_EQ(0, kt_rmmod(PT_MODULE));
}

TEST_HARNESS_MAIN
