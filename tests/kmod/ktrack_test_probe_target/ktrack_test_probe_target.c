// SPDX-License-Identifier: GPL-2.0
/*
 * ktrack_test_probe_target - noinline functions with known arguments for
 * the probe tests.  Commands written to /proc/ktrack_test_probe:
 *   "call N"      call every target N times with the fixed values below
 *   "ustr TEXT"   call ktrack_tpt_string() with TEXT in user memory
 *   "sleep MS"    call ktrack_tpt_sleep(MS)
 *   "block"       enter ktrack_tpt_block() and wait for "release"
 *   "release"     let every blocked caller return (also parameters/release,
 *                 which works while the module is going)
 *   "deep N"      a known deep stack for the stack tracer: ktrack_deep_frame()
 *                 recursing N times (N <= 16), each frame holding at least
 *                 KTRACK_DEEP_FRAME bytes, then ktrack_deep_leaf() once
 *   "graph"       a small call tree for graph scoping: ktrack_gr_child(100)
 *                 (-> ktrack_gr_grand(200)) outside the root, then
 *                 ktrack_gr_root(1) -> ktrack_gr_child(2) -> ktrack_gr_grand(4)
 *                 (returning 5, 6 and 7)
 *   "oops"        dereference NULL in ktrack_tpt_oops(): an oops that
 *                 kills the writer (tests/vm/crash-dump only)
 *   "bench N"     call ktrack_tpt_bench() N times in a tight loop and store
 *                 the mean time per call in parameters/bench_ps
 *                 (picoseconds, so sub-ns differences show): bench/probes.sh
 *   "tpbench N"   fire ktrack_tpt_hit N times in a tight loop, the mean time
 *                 per event in parameters/bench_ps: bench/events.sh
 *   "tp N"        fire trace event ktrack_tpt/ktrack_tpt_hit N times
 *                 (seq 0..N-1, magic 0x1122334455667788, label "tpt"),
 *                 then ktrack_tpt/ktrack_tpt_done once (count N, sum of
 *                 the seqs)
 * Reading the file gives "inside N" (callers blocked right now).
 */
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "ktrack_test_probe_target.h"

#define CREATE_TRACE_POINTS
#include "ktrack_tpt_trace.h"

/* Read by @SYM fetches. */
u32 ktrack_tpt_global = 0x5a5a1234;
EXPORT_SYMBOL_GPL(ktrack_tpt_global);

static struct ktrack_tpt_inner tpt_inner = {
	.magic = 0x1122334455667788ULL,
	.str = "inner-string",
};

static struct ktrack_tpt_outer tpt_outer = {
	.id = 42,
	.in = &tpt_inner,
	.name = "outer-name",
	.label = "label-text",
	.arr = { 1, 2, 3, 4 },
};

static unsigned long bench_ps;
module_param(bench_ps, ulong, 0400);
MODULE_PARM_DESC(bench_ps, "mean time per ktrack_tpt_bench() call of the last \"bench N\" (ps)");

static atomic_t tpt_inside = ATOMIC_INIT(0);
static bool tpt_released;
static DECLARE_WAIT_QUEUE_HEAD(tpt_wq);

/*
 * parameters/release: the "release" command, also while the module is
 * going (its exit waits in remove_proc_entry() for a blocked caller, and
 * the proc file takes no new writer then; sysfs stays until the end).
 */
static int tpt_set_release(const char *val, const struct kernel_param *kp)
{
	WRITE_ONCE(tpt_released, true);
	wake_up_all(&tpt_wq);
	return 0;
}

static const struct kernel_param_ops tpt_release_ops = {
	.set = tpt_set_release,
};
module_param_cb(release, &tpt_release_ops, NULL, 0200);
MODULE_PARM_DESC(release, "write anything: let every blocked caller return");

/* Compiler barrier on the arguments so that none is optimised away. */
#define TPT_USE(x) ({ asm volatile("" : : "r"(x) : "memory"); })

/*
 * The v2 build puts ktrack_tpt_add in a section of its own, which the module
 * loader lays out apart from .text: reloaded as v2, the function has another
 * address even when the allocator gives the module its old place back
 * (tests/kernel/probe_attach.c).  A 512-byte alignment did this but made gas
 * jump over the padding on 6.1, which objtool reports; __cold moves nothing
 * on 6.12, which builds with -fno-reorder-functions.
 */
#ifdef KTRACK_TPT_V2
#define TPT_ADD_PLACE __section(".text.ktrack_tpt_v2")
#else
#define TPT_ADD_PLACE
#endif

noinline TPT_ADD_PLACE int ktrack_tpt_add(int a, long b, unsigned char c, short d, u64 e, s8 f)
{
	TPT_USE(b);
	TPT_USE(e);
	return a + c + d + f;
}
EXPORT_SYMBOL_GPL(ktrack_tpt_add);

noinline long ktrack_tpt_struct(struct ktrack_tpt_outer *o)
{
	TPT_USE(o);
	return o->id / 6;
}
EXPORT_SYMBOL_GPL(ktrack_tpt_struct);

noinline int ktrack_tpt_string(const char *s, const char __user *us)
{
	TPT_USE(s);
	TPT_USE(us);
	return strlen(s);
}
EXPORT_SYMBOL_GPL(ktrack_tpt_string);

/* Reads through a bad pointer must record a fault marker, not oops. */
noinline int ktrack_tpt_ptr(void *bad)
{
	TPT_USE(bad);
	return 0;
}
EXPORT_SYMBOL_GPL(ktrack_tpt_ptr);

noinline int ktrack_tpt_sleep(unsigned int ms)
{
	msleep(ms);
	return ms;
}
EXPORT_SYMBOL_GPL(ktrack_tpt_sleep);

noinline int ktrack_tpt_block(void)
{
	atomic_inc(&tpt_inside);
	wait_event(tpt_wq, READ_ONCE(tpt_released));
	atomic_dec(&tpt_inside);
	return 0;
}
EXPORT_SYMBOL_GPL(ktrack_tpt_block);

/*
 * The stack tracer's deep path (not ktrack_tpt_*: globs over those count
 * functions).  Each frame keeps KTRACK_DEEP_FRAME bytes live across the
 * call below it, so the compiler can neither shrink nor share them.
 */
#define KTRACK_DEEP_FRAME	512
#define KTRACK_DEEP_MAX		16

noinline int ktrack_deep_leaf(void)
{
	return 1;
}
EXPORT_SYMBOL_GPL(ktrack_deep_leaf);

noinline int ktrack_deep_frame(unsigned int n)
{
	char buf[KTRACK_DEEP_FRAME];
	int ret;

	memset(buf, (char)n, sizeof(buf));
	TPT_USE(buf);	/* the buffer escapes: it exists before the call... */
	ret = n ? ktrack_deep_frame(n - 1) : ktrack_deep_leaf();
	TPT_USE(buf);	/* ...and is read after it */
	return ret + buf[0] + buf[KTRACK_DEEP_FRAME - 1];
}
EXPORT_SYMBOL_GPL(ktrack_deep_frame);

/* Graph scoping's tree (not ktrack_tpt_*: globs over those count functions). */
noinline int ktrack_gr_grand(int x)
{
	TPT_USE(x);
	return x + 1;
}
EXPORT_SYMBOL_GPL(ktrack_gr_grand);

noinline int ktrack_gr_child(int x)
{
	return ktrack_gr_grand(x * 2) + 1;
}
EXPORT_SYMBOL_GPL(ktrack_gr_child);

noinline int ktrack_gr_root(int x)
{
	return ktrack_gr_child(x + 1) + 1;
}
EXPORT_SYMBOL_GPL(ktrack_gr_root);

/* The crash dump's oops (tests/vm/crash-dump): a NULL dereference. */
noinline int ktrack_tpt_oops(int *p)
{
	return READ_ONCE(*p);
}
EXPORT_SYMBOL_GPL(ktrack_tpt_oops);

/* The benchmark's target: two arguments, one return value. */
noinline long ktrack_tpt_bench(int a, long b)
{
	TPT_USE(a);
	TPT_USE(b);
	return a + b;
}
EXPORT_SYMBOL_GPL(ktrack_tpt_bench);

static void tpt_bench(unsigned int n)
{
	u64 t0, t1;
	unsigned int i;

	if (!n)
		return;
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++)
		ktrack_tpt_bench(i, 0x1234L);
	t1 = ktime_get_ns();
	bench_ps = div_u64((t1 - t0) * 1000, n);
}

/* Glob targets: "ktrack_tpt_glob_*" names exactly these four. */
#define TPT_GLOB_TARGET(n, k)				\
noinline int ktrack_tpt_glob_##n(int x)			\
{							\
	TPT_USE(x);					\
	return x + (k);					\
}							\
EXPORT_SYMBOL_GPL(ktrack_tpt_glob_##n)

TPT_GLOB_TARGET(one, 1);
TPT_GLOB_TARGET(two, 2);
TPT_GLOB_TARGET(three, 3);
TPT_GLOB_TARGET(four, 4);

static void tpt_call_all(void)
{
	ktrack_tpt_add(-5, 0x123456789abcL, 200, -1234, 0xdeadbeefcafef00dULL, -7);
	ktrack_tpt_struct(&tpt_outer);
	ktrack_tpt_string("hello kernel", NULL);
	ktrack_tpt_ptr((void *)16);
	ktrack_tpt_glob_one(10);
	ktrack_tpt_glob_two(20);
	ktrack_tpt_glob_three(30);
	ktrack_tpt_glob_four(40);
}

static void tpt_fire(unsigned int n)
{
	unsigned int i;
	long sum = 0;

	for (i = 0; i < n; i++) {
		trace_ktrack_tpt_hit(i, 0x1122334455667788ULL, "tpt");
		sum += i;
	}
	trace_ktrack_tpt_done(n, sum);
}

static void tpt_tp_bench(unsigned int n)
{
	unsigned int i;
	u64 t0, t1;

	if (!n)
		return;
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++)
		trace_ktrack_tpt_hit(i, 0x1122334455667788ULL, "tpt");
	t1 = ktime_get_ns();
	bench_ps = div_u64((t1 - t0) * 1000, n);
}

static ssize_t tpt_write(struct file *file, const char __user *ubuf, size_t len, loff_t *off)
{
	char cmd[64];
	size_t n = min(len, sizeof(cmd) - 1);
	unsigned int v;

	if (copy_from_user(cmd, ubuf, n))
		return -EFAULT;
	cmd[n] = '\0';
	if (sscanf(cmd, "call %u", &v) == 1) {
		while (v--)
			tpt_call_all();
	} else if (sscanf(cmd, "tp %u", &v) == 1) {
		tpt_fire(v);
	} else if (sscanf(cmd, "tpbench %u", &v) == 1) {
		tpt_tp_bench(v);
	} else if (!strncmp(cmd, "graph", 5)) {
		ktrack_gr_child(100);
		ktrack_gr_root(1);
	} else if (!strncmp(cmd, "oops", 4)) {
		ktrack_tpt_oops(NULL);
	} else if (sscanf(cmd, "deep %u", &v) == 1) {
		if (!v || v > KTRACK_DEEP_MAX)
			return -EINVAL;
		ktrack_deep_frame(v - 1);
	} else if (sscanf(cmd, "bench %u", &v) == 1) {
		tpt_bench(v);
	} else if (!strncmp(cmd, "ustr ", 5)) {
		ktrack_tpt_string("hello kernel", ubuf + 5);
	} else if (sscanf(cmd, "sleep %u", &v) == 1) {
		ktrack_tpt_sleep(v);
	} else if (!strncmp(cmd, "block", 5)) {
		ktrack_tpt_block();
	} else if (!strncmp(cmd, "release", 7)) {
		WRITE_ONCE(tpt_released, true);
		wake_up_all(&tpt_wq);
	} else if (!strncmp(cmd, "rearm", 5)) {
		WRITE_ONCE(tpt_released, false);
	} else {
		return -EINVAL;
	}
	return len;
}

static ssize_t tpt_read(struct file *file, char __user *ubuf, size_t len, loff_t *off)
{
	char buf[32];
	int n = scnprintf(buf, sizeof(buf), "inside %d\n", atomic_read(&tpt_inside));

	return simple_read_from_buffer(ubuf, len, off, buf, n);
}

static const struct proc_ops tpt_ops = {
	.proc_write = tpt_write,
	.proc_read = tpt_read,
	.proc_lseek = default_llseek,
};

static int __init tpt_init(void)
{
	return proc_create("ktrack_test_probe", 0600, NULL, &tpt_ops) ? 0 : -ENOMEM;
}

static void __exit tpt_exit(void)
{
	remove_proc_entry("ktrack_test_probe", NULL);
}

module_init(tpt_init);
module_exit(tpt_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ktrack test: probe targets with known arguments");
