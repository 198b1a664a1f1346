// SPDX-License-Identifier: GPL-2.0
/*
 * Attach mechanisms of dynamic probes: f globs (fprobe, or kprobes on
 * ftrace + kretprobes where there is no fprobe) cover exactly the functions
 * available_filter_functions lists and pair entries with exits, and
 * entry-only or exit-only f probes see their arguments; a
 * tracepoint probe on sched_process_fork sees every fork; a probe on a
 * module function goes pending -> armed -> disarmed -> armed over 20 reload
 * cycles; a probe by address in a module is not re-armed at a reload; one
 * on init text is disarmed when the module goes live; maxactive exhaustion
 * reports the exact number of misses; a MOD:SYM probe added while its
 * module goes waits for the next load; an f probe over a module and
 * vmlinux follows the module across reloads; an f probe over a kernel glob
 * (one ftrace_ops) is validated, records every call and follows a reload.
 */
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "probe_common.h"

#define BUFSZ (4 << 20)

PT_RECORDS_FIXTURE(attach, BUFSZ);

static uint64_t pt_features(int fd)
{
	struct ktrack_version v = { .size = sizeof(v) };

	return ioctl(fd, KTRACK_IOC_VERSION, &v) ? 0 : v.features;
}

TEST_F(attach, glob_covers_available_filter_functions_with_paired_exits)
{
	static const char *const names[] = { "ktrack_tpt_glob_four", "ktrack_tpt_glob_one",
					     "ktrack_tpt_glob_three", "ktrack_tpt_glob_two" };
	static const int arg[] = { 40, 10, 30, 20 };
	int id = pt_add(self->fd, "f:g ktrack_tpt_glob_*%both a=$arg1:s32 ret=$retval:s32 d=$duration", NULL);
	struct ktrack_probe_info info = { 0 };
	char out[1 << 14];
	size_t len;
	int i, listed;

	ASSERT_LT(0, id);
	ASSERT_EQ(0, kt_run(out, sizeof(out),
			    "grep -c '^ktrack_tpt_glob_' /sys/kernel/tracing/available_filter_functions"));
	listed = atoi(out);
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(listed, info.nr_funcs);
	EXPECT_EQ(4, info.nr_funcs);
	EXPECT_EQ(KTRACK_PROBE_ST_ARMED, info.state);
	if (pt_features(self->fd) & KTRACK_FEAT_FPROBE) {
		EXPECT_EQ(KTRACK_MECH_FPROBE, info.mechanism);
	} else {
		EXPECT_EQ(KTRACK_MECH_KPROBE_FTRACE, info.mechanism);
	}
	ASSERT_EQ(0, pt_cmd("call 3", 0));
	len = pt_drain(self->fd, self->buf, BUFSZ);
	for (i = 0; i < 4; i++) {
		unsigned long ip = pt_kallsyms(names[i]);
		struct ktrack_rec_probe *r;
		size_t pos = 0;
		int entries = 0, exits = 0;

		ASSERT_NE(0, ip);
		while ((r = pt_next(self->buf, len, &pos, id, NULL))) {
			int32_t a, ret;

			/* fprobe reports the ftrace call site: at most a few bytes in
			 * (after an ENDBR64 with IBT)
			 */
			if (r->ip < ip || r->ip >= ip + 16)
				continue;
			memcpy(&a, r->data, 4);
			memcpy(&ret, r->data + 4, 4);
			EXPECT_EQ(arg[i], a) TH_LOG("%s", names[i]);
			if (r->event == KTRACK_PROBE_EV_ENTRY) {
				entries++;
			} else {
				EXPECT_EQ(KTRACK_PROBE_EV_EXIT, r->event);
				/* glob_one returns x + 1, glob_two x + 2, ... */
				EXPECT_EQ(arg[i] + arg[i] / 10, ret) TH_LOG("%s", names[i]);
				exits++;
			}
		}
		EXPECT_EQ(3, entries) TH_LOG("%s", names[i]);
		EXPECT_EQ(3, exits) TH_LOG("%s", names[i]);
	}
	EXPECT_EQ(24, pt_count(self->buf, len, id, 0));
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(24, info.hits);
	EXPECT_EQ(0, info.misses);
}

/*
 * Entry-only and exit-only f probes: fprobe gives an entry-only probe no
 * entry data (no return hook), so its arguments must come from elsewhere.
 */
TEST_F(attach, f_entry_only_and_exit_only)
{
	int ide = pt_add(self->fd, "f:fe ktrack_tpt_glob_one,ktrack_tpt_glob_two a=$arg1:s32", NULL);
	int idx = pt_add(self->fd, "f:fx ktrack_tpt_glob_three%return a=$arg1:s32 ret=$retval:s32", NULL);
	struct ktrack_probe_info info = { 0 };
	struct ktrack_rec_probe *r;
	size_t len, pos = 0;
	int ones = 0, twos = 0, exits = 0;

	ASSERT_LT(0, ide);
	ASSERT_LT(0, idx);
	ASSERT_EQ(0, pt_cmd("call 3", 0));
	len = pt_drain(self->fd, self->buf, BUFSZ);
	while ((r = pt_next(self->buf, len, &pos, ide, NULL))) {
		int32_t a;

		memcpy(&a, r->data, 4);
		EXPECT_EQ(KTRACK_PROBE_EV_ENTRY, r->event);
		EXPECT_TRUE(a == 10 || a == 20) TH_LOG("a=%d", a);
		ones += a == 10;
		twos += a == 20;
	}
	EXPECT_EQ(3, ones);
	EXPECT_EQ(3, twos);
	pos = 0;
	while ((r = pt_next(self->buf, len, &pos, idx, NULL))) {
		int32_t a, ret;

		memcpy(&a, r->data, 4);
		memcpy(&ret, r->data + 4, 4);
		EXPECT_EQ(KTRACK_PROBE_EV_EXIT, r->event);
		EXPECT_EQ(30, a);
		EXPECT_EQ(33, ret);
		exits++;
	}
	EXPECT_EQ(3, exits);
	ASSERT_EQ(0, pt_info(self->fd, ide, &info));
	EXPECT_EQ(6, info.hits);
	EXPECT_EQ(2, info.nr_funcs);
	ASSERT_EQ(0, pt_info(self->fd, idx, &info));
	EXPECT_EQ(3, info.hits);
}

TEST_F(attach, tracepoint_sched_process_fork_sees_every_fork)
{
	int id = pt_add(self->fd, "t:fk sched/sched_process_fork parent=$arg1->pid child=$arg2->pid", NULL);
	/* A t record's ip is the struct tracepoint, from the first hit on. */
	unsigned long tp = pt_kallsyms("__tracepoint_sched_process_fork");
	pid_t kids[5];
	int i, found = 0, mine = 0;
	struct ktrack_rec_probe *r;
	size_t len, pos = 0;

	ASSERT_LT(0, id);
	for (i = 0; i < 5; i++) {
		kids[i] = fork();
		ASSERT_LE(0, kids[i]);
		if (kids[i] == 0)
			_exit(0);
		waitpid(kids[i], NULL, 0);
	}
	len = pt_drain(self->fd, self->buf, BUFSZ);
	while ((r = pt_next(self->buf, len, &pos, id, NULL))) {
		int32_t parent, child;

		memcpy(&parent, r->data, 4);
		memcpy(&child, r->data + 4, 4);
		EXPECT_EQ(KTRACK_PROBE_EV_TP, r->event);
		EXPECT_EQ(tp, r->ip);
		if (parent != getpid())
			continue;
		mine++;
		for (i = 0; i < 5; i++)
			if (kids[i] == child)
				found++;
	}
	EXPECT_EQ(5, mine);
	EXPECT_EQ(5, found);
}

TEST_F(attach, module_reload_pending_armed_disarmed_20_cycles)
{
	struct ktrack_probe_info info = { 0 };
	int id, cycle;

	ASSERT_EQ(0, kt_rmmod(PT_MODULE));
	id = pt_add(self->fd, "p:rl " PT_MODULE ":ktrack_tpt_add a=$arg1:s32", NULL);
	ASSERT_LT(0, id);
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(KTRACK_PROBE_ST_PENDING, info.state);
	EXPECT_EQ(0, info.arm_count);
	for (cycle = 1; cycle <= 20; cycle++) {
		ASSERT_EQ(0, kt_insmod(kt_module_path(PT_MODULE_PATH), NULL));
		ASSERT_EQ(0, pt_info(self->fd, id, &info));
		EXPECT_EQ(KTRACK_PROBE_ST_ARMED, info.state);
		EXPECT_EQ(cycle, info.arm_count);
		ASSERT_EQ(0, pt_cmd("call 2", 0));
		ASSERT_EQ(0, pt_info(self->fd, id, &info));
		EXPECT_EQ(2 * cycle, info.hits);
		ASSERT_EQ(0, kt_rmmod(PT_MODULE));
		ASSERT_EQ(0, pt_info(self->fd, id, &info));
		EXPECT_EQ(KTRACK_PROBE_ST_DISARMED, info.state);
	}
	{
		size_t len = pt_drain(self->fd, self->buf, BUFSZ), pos = 0;
		struct ktrack_rec_probe *r;
		int n = 0;

		while ((r = pt_next(self->buf, len, &pos, id, NULL))) {
			int32_t a;

			memcpy(&a, r->data, 4);
			EXPECT_EQ(-5, a);
			n++;
		}
		EXPECT_EQ(40, n);
	}
	ASSERT_EQ(0, kt_insmod(kt_module_path(PT_MODULE_PATH), NULL));
}

/*
 * A p probe given by address inside a module is disarmed when the module
 * goes and stays so when a module of that name comes back: its text is
 * elsewhere, so the old address may be anything (review finding 11a).
 */
TEST_F(attach, address_probe_in_module_not_rearmed_on_reload)
{
	struct ktrack_probe_info info = { 0 };
	unsigned long addr = pt_kallsyms("ktrack_tpt_add");
	char spec[128];
	int id;

	ASSERT_NE(0, addr);
	snprintf(spec, sizeof(spec), "p:ab 0x%lx a=$arg1:s32", addr);
	id = pt_add(self->fd, spec, NULL);
	ASSERT_LT(0, id);
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(KTRACK_PROBE_ST_ARMED, info.state);
	ASSERT_EQ(0, kt_rmmod(PT_MODULE));
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(KTRACK_PROBE_ST_DISARMED, info.state);
	ASSERT_EQ(0, kt_insmod(kt_module_path(PT_MODULE_PATH), NULL));
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(KTRACK_PROBE_ST_DISARMED, info.state);
	EXPECT_EQ(1, info.arm_count);
	ASSERT_EQ(0, pt_cmd("call 2", 0));
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(0, info.hits);
}

/*
 * A probe on a module's init function is armed while the module comes
 * (the init call is seen) and disarmed when it goes live and the kprobes
 * core kills kprobes in the freed init text: not reported ARMED with no
 * attach point left (review finding 11d).  Armed again at the next load.
 */
TEST_F(attach, init_text_probe_disarmed_when_module_goes_live)
{
	struct ktrack_probe_info info = { 0 };
	int id, cycle;

	ASSERT_EQ(0, kt_rmmod(PT_MODULE));
	id = pt_add(self->fd, "p:ini " PT_MODULE ":tpt_init", NULL);
	ASSERT_LT(0, id);
	for (cycle = 1; cycle <= 2; cycle++) {
		ASSERT_EQ(0, kt_insmod(kt_module_path(PT_MODULE_PATH), NULL));
		ASSERT_EQ(0, pt_info(self->fd, id, &info));
		EXPECT_EQ(KTRACK_PROBE_ST_DISARMED, info.state);
		EXPECT_EQ(cycle, info.arm_count);
		EXPECT_EQ(cycle, info.hits);
		ASSERT_EQ(0, kt_rmmod(PT_MODULE));
	}
	ASSERT_EQ(0, kt_insmod(kt_module_path(PT_MODULE_PATH), NULL));
}

/*
 * Entry records of probe 'id' at the function at 'ip' (its ftrace site: a
 * few bytes in), by 'pid' (0: by anyone).
 */
static int pt_entries_at(char *buf, size_t len, int id, unsigned long ip, pid_t pid)
{
	struct ktrack_rec_hdr *h;
	struct ktrack_rec_probe *r;
	size_t pos = 0;
	int n = 0;

	while ((r = pt_next(buf, len, &pos, id, &h)))
		n += r->event == KTRACK_PROBE_EV_ENTRY && r->ip >= ip && r->ip < ip + 16 &&
		     (!pid || (pid_t)h->pid == pid);
	return n;
}

/*
 * An f probe by name over a function of a module and one of vmlinux
 * follows the module across reloads (review finding 11c): while the module
 * is away the vmlinux function keeps its events, one per call, and once it
 * is back its function has events again, at its new address; the probe
 * stays ARMED throughout and has no event anywhere else.  On fprobe it is
 * never armed again (the module's function leaves the live fprobe and
 * rejoins it): the vmlinux function neither misses a call nor is seen
 * twice.  getppid() is the vmlinux function, counted for this process.
 *
 * The function must come back elsewhere: ftrace enables a new module's
 * call site that any filter still names, so a function back at the same
 * address hits a stale filter entry and hides the bug.  The allocator often
 * gives a module its old place back (a filler module loaded into the gap
 * was not enough: it may land in a lower gap), so the cycles alternate
 * between the module and its v2 build, whose ktrack_tpt_add is at another
 * offset: the address changes on every reload, wherever the module lands.
 */
#define PT_MODULE_V2_PATH "tests/kmod/ktrack_test_probe_target_v2/ktrack_test_probe_target.ko"

TEST_F(attach, f_probe_over_module_and_vmlinux_follows_reload)
{
	unsigned long vm = pt_kallsyms("__x64_sys_getppid"), mod = pt_kallsyms("ktrack_tpt_add");
	struct ktrack_probe_info info = { 0 };
	pid_t me = syscall(SYS_gettid);
	int id, cycle, i, moved = 0;
	unsigned long old;
	size_t len;

	ASSERT_NE(0, vm);
	ASSERT_NE(0, mod);
	id = pt_add(self->fd, "f:mv ktrack_tpt_add,__x64_sys_getppid", NULL);
	ASSERT_LT(0, id);
	ASSERT_EQ(0, pt_cmd("call 2", 0));
	for (i = 0; i < 3; i++)
		syscall(SYS_getppid);
	len = pt_drain(self->fd, self->buf, BUFSZ);
	EXPECT_EQ(2, pt_entries_at(self->buf, len, id, mod, me));
	EXPECT_EQ(3, pt_entries_at(self->buf, len, id, vm, me));
	for (cycle = 1; cycle <= 4; cycle++) {
		ASSERT_EQ(0, kt_rmmod(PT_MODULE));
		ASSERT_EQ(0, pt_info(self->fd, id, &info));
		EXPECT_EQ(KTRACK_PROBE_ST_ARMED, info.state) TH_LOG("cycle %d, module gone", cycle);
		for (i = 0; i < 3; i++)
			syscall(SYS_getppid);
		len = pt_drain(self->fd, self->buf, BUFSZ);
		EXPECT_EQ(3, pt_entries_at(self->buf, len, id, vm, me))
			TH_LOG("cycle %d, module gone", cycle);
		/* nothing but the vmlinux function, whoever called it */
		EXPECT_EQ(pt_entries_at(self->buf, len, id, vm, 0), pt_count(self->buf, len, id, 0))
			TH_LOG("cycle %d, module gone", cycle);

		ASSERT_EQ(0, kt_insmod(kt_module_path(cycle % 2 ? PT_MODULE_V2_PATH : PT_MODULE_PATH), NULL));
		old = mod;
		mod = pt_kallsyms("ktrack_tpt_add");
		ASSERT_NE(0, mod);
		moved += mod != old;
		TH_LOG("cycle %d: the module's function at %#lx, was %#lx", cycle, mod, old);
		ASSERT_EQ(0, pt_info(self->fd, id, &info));
		EXPECT_EQ(KTRACK_PROBE_ST_ARMED, info.state) TH_LOG("cycle %d, module back", cycle);
		EXPECT_EQ(2, info.nr_funcs);
		if (info.mechanism == KTRACK_MECH_FPROBE)
			EXPECT_EQ(1, info.arm_count) TH_LOG("cycle %d: armed again", cycle);
		ASSERT_EQ(0, pt_cmd("call 2", 0));
		for (i = 0; i < 3; i++)
			syscall(SYS_getppid);
		len = pt_drain(self->fd, self->buf, BUFSZ);
		EXPECT_EQ(2, pt_entries_at(self->buf, len, id, mod, me))
			TH_LOG("cycle %d, module back", cycle);
		EXPECT_EQ(3, pt_entries_at(self->buf, len, id, vm, me))
			TH_LOG("cycle %d, module back", cycle);
		EXPECT_EQ(pt_entries_at(self->buf, len, id, vm, 0) +
			  pt_entries_at(self->buf, len, id, mod, 0), pt_count(self->buf, len, id, 0))
			TH_LOG("cycle %d, module back", cycle);
	}
	/* else the test shows nothing (see above) */
	EXPECT_EQ(4, moved) TH_LOG("the function came back at its old address");
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(0, info.misses);
}

/*
 * Removing many t probes waits for the tracepoint handlers once, not once
 * per probe under the probe lock (review finding 16).  Checks that they
 * all go (and the kernel log stays clean); the time is logged.
 */
/* 64 compiles by ktrackctl: more than the default 30 s on a loaded host. */
TEST_F_TIMEOUT(attach, many_tracepoint_probes_removed_at_once, 600)
{
	struct ktrack_probe_del del = { .size = sizeof(del), .flags = KTRACK_PROBE_DEL_ALL };
	struct ktrack_probe_list list = { .size = sizeof(list) };
	struct timespec t0, t1;
	char spec[96];
	int i;

	for (i = 0; i < 64; i++) {
		snprintf(spec, sizeof(spec), "t:tp%d sched/sched_process_fork a=$arg1:x64", i);
		ASSERT_LT(0, pt_add(self->fd, spec, NULL));
	}
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_PROBE_LIST, &list));
	ASSERT_EQ(64, list.count);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_PROBE_DEL, &del));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	TH_LOG("64 t probes removed in %.3f s", t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	list.count = 0;		/* the first call wrote 64 here, and there is no array */
	ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_PROBE_LIST, &list));
	EXPECT_EQ(0, list.count);
}

static void pt_wait_inside(struct __test_metadata *_metadata, int want)
{
	char buf[64];
	int i, fd, n;

	for (i = 0; i < 2000; i++) {
		fd = open(PT_PROC, O_RDONLY);
		ASSERT_LE(0, fd);
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
		if (atoi(buf + 7) == want)
			return;
		usleep(10000);
	}
	ASSERT_TRUE(0) TH_LOG("only '%s' callers inside", buf);
}

TEST_F(attach, maxactive_exhaustion_reports_exact_misses)
{
	int id = pt_add(self->fd, "r2:mx ktrack_tpt_block ret=$retval:s32", NULL);
	struct ktrack_probe_info info = { 0 };
	pid_t kids[5];
	size_t len;
	int i;

	ASSERT_LT(0, id);
	ASSERT_EQ(0, pt_cmd("rearm", 0));
	for (i = 0; i < 5; i++) {
		kids[i] = fork();
		ASSERT_LE(0, kids[i]);
		if (kids[i] == 0)
			_exit(pt_cmd("block", 0) ? 1 : 0);
	}
	pt_wait_inside(_metadata, 5);
	ASSERT_EQ(0, pt_cmd("release", 0));
	for (i = 0; i < 5; i++) {
		int st;

		ASSERT_EQ(kids[i], waitpid(kids[i], &st, 0));
		EXPECT_EQ(0, WEXITSTATUS(st));
	}
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(3, info.misses);
	EXPECT_EQ(2, info.hits);
	len = pt_drain(self->fd, self->buf, BUFSZ);
	EXPECT_EQ(2, pt_count(self->buf, len, id, KTRACK_PROBE_EV_EXIT));
}

static void *pt_block_thread(void *arg)
{
	*(int *)arg = pt_cmd("block", 0);
	return NULL;
}

/* Waits until /sys/module/PT_MODULE/initstate reads 'want'. */
static int pt_wait_initstate(const char *want)
{
	char buf[32];
	int i, fd, n;

	for (i = 0; i < 2000; i++) {
		fd = open("/sys/module/" PT_MODULE "/initstate", O_RDONLY);
		n = fd < 0 ? 0 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		buf[n > 0 ? n : 0] = 0;
		if (!strncmp(buf, want, strlen(want)))
			return 0;
		usleep(10000);
	}
	return -1;
}

/*
 * A MOD:SYM probe added while its module is going (its exit still runs, so
 * the module is still listed) waits for the next load instead of failing
 * with ENOENT (review finding #25).  The module's exit is held in
 * remove_proc_entry() by a caller blocked in ktrack_tpt_block(), released
 * through parameters/release.
 */
TEST_F(attach, mod_sym_probe_added_while_module_goes_is_pending)
{
	struct ktrack_probe_info info = { 0 };
	pthread_t th;
	int blocked = -1, going, st, id;
	pid_t rm;

	ASSERT_EQ(0, pt_cmd("rearm", 0));
	ASSERT_EQ(0, pthread_create(&th, NULL, pt_block_thread, &blocked));
	pt_wait_inside(_metadata, 1);
	rm = fork();
	ASSERT_LE(0, rm);
	if (rm == 0)
		_exit(kt_rmmod(PT_MODULE) ? 1 : 0);
	going = pt_wait_initstate("going");
	id = going ? -1 : pt_add(self->fd, "p:late " PT_MODULE ":ktrack_tpt_add a=$arg1:s32", NULL);
	/* Let the module go whatever happened, then check. */
	EXPECT_EQ(0, kt_write_file("/sys/module/" PT_MODULE "/parameters/release", 0, "1"));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(0, blocked);
	ASSERT_EQ(rm, waitpid(rm, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
	ASSERT_EQ(0, going);
	ASSERT_LT(0, id) TH_LOG("PROBE_ADD while the module goes: %s", strerror(-id));
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(KTRACK_PROBE_ST_PENDING, info.state);
	ASSERT_EQ(0, kt_insmod(kt_module_path(PT_MODULE_PATH), NULL));
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(KTRACK_PROBE_ST_ARMED, info.state);
	ASSERT_EQ(0, pt_cmd("call 1", 0));
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(1, info.hits);
}

/*
 * f over a kernel glob (KTRACK_PROBE_F_KERNEL_GLOB): the blob of
 * "f:kg ktrack_tpt_glob_one a=$arg1:s32" with its one name turned into the
 * glob "ktrack_tpt_glob_*?*" (same length) and the flag set.
 */
static void *pt_kglob_blob(size_t *len, const char *glob, uint32_t flags, char *msg, size_t msglen)
{
	void *b = pt_compile("f:kg ktrack_tpt_glob_one a=$arg1:s32", NULL, len, msg, msglen);
	struct ktrack_probe_desc *d = b;

	if (!b)
		return NULL;
	if (d->funcs_len != strlen(glob) + 1) {
		free(b);
		return NULL;
	}
	memcpy((char *)b + d->funcs_off, glob, d->funcs_len);
	d->flags = flags;
	return b;
}

/* Which of the target's four glob functions ftrace has enabled. */
static int pt_enabled_tpt(void)
{
	char out[256];

	if (kt_run(out, sizeof(out), "grep -c '^ktrack_tpt_glob_' /sys/kernel/tracing/enabled_functions"))
		return 0;	/* grep -c: status 1 when it counts 0 */
	return atoi(out);
}

/* Is the kernel glob's anchor (a never-called ktrack function) in a filter? */
static int pt_anchor_enabled(void)
{
	char out[256];

	if (kt_run(out, sizeof(out), "grep -c '^kt_ftrace_anchor' /sys/kernel/tracing/enabled_functions"))
		return 0;
	return atoi(out);
}

/* r->ip is the ftrace call site: at most a few bytes in (ENDBR64) */
static int pt_hits_at(char *buf, size_t len, int id, const char *name, int arg)
{
	unsigned long ip = pt_kallsyms(name);
	struct ktrack_rec_probe *r;
	size_t pos = 0;
	int n = 0;

	while (ip && (r = pt_next(buf, len, &pos, id, NULL))) {
		int32_t a;

		if (r->ip < ip || r->ip >= ip + 16)
			continue;
		memcpy(&a, r->data, 4);
		n += r->event == KTRACK_PROBE_EV_ENTRY && a == arg;
	}
	return n;
}

/*
 * One glob that ftrace matches over every traceable function, attached
 * through one ftrace_ops (issue 16, f *): armed, its functions enabled in
 * ftrace, every call recorded with its argument; followed across a reload
 * of the module (the filter is made again at COMING: the new load's
 * functions hit, at their new addresses); taken off completely.  The
 * description is validated: entries only, one glob, no module, no
 * "!GLOB" or index, no profile; a glob that matches nothing is ENOENT.
 */
TEST_F(attach, kernel_glob_one_ftrace_ops_follows_module_reload)
{
	static const char *const names[] = { "ktrack_tpt_glob_one", "ktrack_tpt_glob_two",
					     "ktrack_tpt_glob_three", "ktrack_tpt_glob_four" };
	const uint32_t ok = KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_KERNEL_GLOB;
	static const struct {
		const char *glob;
		uint32_t flags;
		const char *module;
		int err;
	} bad[] = {
		{ "ktrack_tpt_glob_*?*", KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_EXIT |
					 KTRACK_PROBE_F_KERNEL_GLOB, NULL, -EINVAL },
		{ "ktrack_tpt_glob_*?*", KTRACK_PROBE_F_EXIT | KTRACK_PROBE_F_KERNEL_GLOB, NULL,
		  -EINVAL },
		{ "ktrack_tpt_glob_*?*", KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_PROFILE |
					 KTRACK_PROBE_F_KERNEL_GLOB, NULL, -EINVAL },
		{ "ktrack_tpt_glob_*?*", KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_GRAPH_SCOPED |
					 KTRACK_PROBE_F_KERNEL_GLOB, NULL, -EINVAL },
		{ "ktrack_tpt_glob_*?*", KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_KERNEL_GLOB,
		  PT_MODULE, -EINVAL },
		{ "!ktrack_tpt_glob_?*", KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_KERNEL_GLOB, NULL,
		  -EINVAL },
		{ "1ktrack_tpt_glob_?*", KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_KERNEL_GLOB, NULL,
		  -EINVAL },
		{ "ktrack_tpt_glob_:?*", KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_KERNEL_GLOB, NULL,
		  -EINVAL },
		{ "ktrack_nomatchx_*?*", KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_KERNEL_GLOB, NULL,
		  -ENOENT },
	};
	struct ktrack_probe_info info = { 0 };
	struct ktrack_probe_add res = { 0 };
	char msg[4096];
	size_t len, blen;
	void *b;
	int i, id;

	for (i = 0; i < (int)ARRAY_SIZE(bad); i++) {
		struct ktrack_probe_desc *d;

		b = pt_kglob_blob(&blen, bad[i].glob, bad[i].flags, msg, sizeof(msg));
		ASSERT_NE(NULL, b) TH_LOG("%s", msg);
		d = b;
		if (bad[i].module)
			strcpy(d->module, bad[i].module);
		EXPECT_EQ(bad[i].err, pt_add_blob(self->fd, b, blen, NULL)) TH_LOG("case %d", i);
		free(b);
	}
	EXPECT_EQ(0, pt_enabled_tpt());

	b = pt_kglob_blob(&blen, "ktrack_tpt_glob_*?*", ok, msg, sizeof(msg));
	ASSERT_NE(NULL, b) TH_LOG("%s", msg);
	ASSERT_EQ(0, pt_add_blob(self->fd, b, blen, &res));
	free(b);
	id = res.id;
	EXPECT_EQ(KTRACK_MECH_FTRACE_OPS, res.mechanism);
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(KTRACK_PROBE_ST_ARMED, info.state);
	EXPECT_EQ(KTRACK_MECH_FTRACE_OPS, info.mechanism);
	EXPECT_EQ(4, pt_enabled_tpt());
	EXPECT_EQ(1, pt_anchor_enabled());
	ASSERT_EQ(0, pt_cmd("call 3", 0));
	len = pt_drain(self->fd, self->buf, BUFSZ);
	for (i = 0; i < (int)ARRAY_SIZE(names); i++)
		EXPECT_EQ(3, pt_hits_at(self->buf, len, id, names[i], 10 * (i + 1))) TH_LOG("%d", i);
	EXPECT_EQ(12, pt_count(self->buf, len, id, 0));

	/*
	 * The module goes and comes back: the glob follows it.  While it is
	 * away the filter holds the anchor alone (empty, it would trace every
	 * function), and the probe stays armed.
	 */
	ASSERT_EQ(0, kt_rmmod(PT_MODULE));
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(KTRACK_PROBE_ST_ARMED, info.state);
	EXPECT_EQ(0, pt_enabled_tpt());
	EXPECT_EQ(1, pt_anchor_enabled());
	{
		char out[64];

		/* one line: the anchor; not every function */
		ASSERT_EQ(0, kt_run(out, sizeof(out), "wc -l < /sys/kernel/tracing/enabled_functions"));
		EXPECT_GT(1000, atoi(out)) TH_LOG("%s", out);
	}
	ASSERT_EQ(0, kt_insmod(kt_module_path(PT_MODULE_PATH), NULL));
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(KTRACK_PROBE_ST_ARMED, info.state);
	EXPECT_EQ(4, pt_enabled_tpt());
	ASSERT_EQ(0, pt_cmd("call 2", 0));
	len = pt_drain(self->fd, self->buf, BUFSZ);
	for (i = 0; i < (int)ARRAY_SIZE(names); i++)
		EXPECT_EQ(2, pt_hits_at(self->buf, len, id, names[i], 10 * (i + 1))) TH_LOG("%d", i);
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(20, info.hits);
	EXPECT_EQ(0, info.misses);

	/* taken off: nothing of it stays in ftrace */
	{
		struct ktrack_probe_del del = { .size = sizeof(del), .id = id };

		ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_PROBE_DEL, &del));
	}
	EXPECT_EQ(0, pt_enabled_tpt());
	EXPECT_EQ(0, pt_anchor_enabled());
	ASSERT_EQ(0, pt_cmd("call 1", 0));
	len = pt_drain(self->fd, self->buf, BUFSZ);
	EXPECT_EQ(0, pt_count(self->buf, len, id, 0));
}

/*
 * A p probe at a function's entry through the same ftrace_ops (kind
 * KPROBE, KTRACK_PROBE_F_KERNEL_GLOB alone, the symbol as the name
 * ftrace matches; KTRACK_FEAT_KPROBE_FTRACE_OPS): armed on that one
 * function, its hits recorded with their argument, nothing left in ftrace
 * once deleted.  Refused: an offset, a module, an address, a glob
 * character, another flag; a name ftrace does not know is ENOENT.
 */
TEST_F(attach, kprobe_at_entry_through_ftrace_ops)
{
	static const struct {
		const char *sym;
		uint32_t flags;
		uint64_t offset;
		const char *module;
		int err;
	} bad[] = {
		{ "ktrack_tpt_glob_two", KTRACK_PROBE_F_KERNEL_GLOB, 4, NULL, -EINVAL },
		{ "ktrack_tpt_glob_two", KTRACK_PROBE_F_KERNEL_GLOB, 0, PT_MODULE, -EINVAL },
		{ "ktrack_tpt_glob_tw*", KTRACK_PROBE_F_KERNEL_GLOB, 0, NULL, -EINVAL },
		{ "ktrack_tpt_glob_tw?", KTRACK_PROBE_F_KERNEL_GLOB, 0, NULL, -EINVAL },
		{ "!ktrack_tpt_glob_t", KTRACK_PROBE_F_KERNEL_GLOB, 0, NULL, -EINVAL },
		{ "ktrack_tpt_glob_two", KTRACK_PROBE_F_KERNEL_GLOB | KTRACK_PROBE_F_ENTRY, 0, NULL,
		  -EINVAL },
		{ "ktrack_tpt_glob_two", KTRACK_PROBE_F_ENTRY, 0, NULL, -EINVAL },
		{ "ktrack_tpt_nosuchfn", KTRACK_PROBE_F_KERNEL_GLOB, 0, NULL, -ENOENT },
	};
	struct ktrack_probe_info info = { 0 };
	struct ktrack_probe_add res = { 0 };
	struct ktrack_probe_desc *d;
	char msg[4096];
	size_t len, blen;
	void *b;
	int i, id;

	b = pt_compile("p:pe ktrack_tpt_glob_two a=$arg1:s32", NULL, &blen, msg, sizeof(msg));
	ASSERT_NE(NULL, b) TH_LOG("%s", msg);
	d = b;
	ASSERT_EQ(0u, d->flags);	/* pt_compile() sends no flag: ktrackctl decides */
	for (i = 0; i < (int)ARRAY_SIZE(bad); i++) {
		struct ktrack_probe_desc save = *d;

		memset(d->symbol, 0, sizeof(d->symbol));
		strcpy(d->symbol, bad[i].sym);
		d->flags = bad[i].flags;
		d->offset = bad[i].offset;
		if (bad[i].module)
			strcpy(d->module, bad[i].module);
		EXPECT_EQ(bad[i].err, pt_add_blob(self->fd, b, blen, NULL)) TH_LOG("case %d", i);
		*d = save;
	}
	EXPECT_EQ(0, pt_enabled_tpt());

	d->flags = KTRACK_PROBE_F_KERNEL_GLOB;
	ASSERT_EQ(0, pt_add_blob(self->fd, b, blen, &res));
	free(b);
	id = res.id;
	EXPECT_EQ(KTRACK_MECH_FTRACE_OPS, res.mechanism);
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(KTRACK_PROBE_ST_ARMED, info.state);
	EXPECT_EQ(KTRACK_PROBE_KPROBE, info.kind);
	EXPECT_EQ(1, pt_enabled_tpt());
	ASSERT_EQ(0, pt_cmd("call 3", 0));
	len = pt_drain(self->fd, self->buf, BUFSZ);
	EXPECT_EQ(3, pt_hits_at(self->buf, len, id, "ktrack_tpt_glob_two", 20));
	EXPECT_EQ(3, pt_count(self->buf, len, id, 0));
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(3, info.hits);
	EXPECT_EQ(0, info.misses);

	/*
	 * Its function goes with the module: disarmed, as a kprobe's, and
	 * armed again when that module comes back (one function: it follows
	 * no name into other modules)
	 */
	ASSERT_EQ(0, kt_rmmod(PT_MODULE));
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(KTRACK_PROBE_ST_DISARMED, info.state);
	EXPECT_EQ(0, pt_enabled_tpt());
	EXPECT_EQ(0, pt_anchor_enabled());
	ASSERT_EQ(0, kt_insmod(kt_module_path(PT_MODULE_PATH), NULL));
	ASSERT_EQ(0, pt_info(self->fd, id, &info));
	EXPECT_EQ(KTRACK_PROBE_ST_ARMED, info.state);
	EXPECT_EQ(1, pt_enabled_tpt());
	ASSERT_EQ(0, pt_cmd("call 2", 0));
	len = pt_drain(self->fd, self->buf, BUFSZ);
	EXPECT_EQ(2, pt_hits_at(self->buf, len, id, "ktrack_tpt_glob_two", 20));
	{
		struct ktrack_probe_del del = { .size = sizeof(del), .id = id };

		ASSERT_EQ(0, ioctl(self->fd, KTRACK_IOC_PROBE_DEL, &del));
	}
	EXPECT_EQ(0, pt_enabled_tpt());
	EXPECT_EQ(0, pt_anchor_enabled());
}

TEST_HARNESS_MAIN
