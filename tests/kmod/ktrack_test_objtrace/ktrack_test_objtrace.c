// SPDX-License-Identifier: GPL-2.0
/*
 * ktrack_test_objtrace - objects with a known life, on request, for the
 * object tracker's tests (tests/kernel/objtrace_*.c).
 *
 * Writing N to parameters/run performs N times:
 *   o = ktrack_test_obj_alloc()          mode = 0x10   (kretprobe source)
 *   ktrack_test_obj_step1(o)             arg 1, mode 0x10 (unchanged)
 *   mode = 0x20; ktrack_test_obj_step2(7, o)            arg 2
 *   ktrack_test_obj_step_same(o)         arg 1, mode 0x20 (unchanged)
 *   mode = 0x30; ktrack_test_obj_step6(1, 2, 3, 4, 5, o) arg 6
 *   ktrack_test_obj_free(o)              arg 1 -> kmem_cache_free()
 * then allocates the same address again (a new life of the same address;
 * see kt_want for how, under KASAN too), passes it to
 * ktrack_test_obj_step1() and frees it.
 * addr1/addr2 report the two addresses of the last run.
 *
 * parameters/array is the address of KTRACK_TEST_NR_ARRAY objects of
 * KTRACK_TEST_OBJ_SIZE bytes; writing N to parameters/touch passes each of
 * the first N to ktrack_test_obj_step1().  Writing 1 to parameters/api
 * hands an object to ktrack_obj_track() (looked up at run time, so this
 * module loads without ktrack.ko) and passes it to step1 then kfree().
 *
 * Free paths (objtrace_testmod.c): writing 1 to parameters/bulk tracks an
 * object, passes it to step1 and frees it with kmem_cache_free_bulk(), then
 * allocates the same address again as 'run' does (addr1/addr2); writing 1
 * to parameters/vrun does alloc/step1/vfree() on ktrack_test_obj_valloc().
 *
 * For tests/stress/objtrace_life.c: writing N to parameters/churn runs, on
 * every online CPU at once, N times: allocate (ktrack_test_obj_alloc),
 * publish the object in a shared slot array, pass a random slot's pointer
 * (an object of any CPU, maybe freed, maybe reused) to
 * ktrack_test_obj_peek(), which never dereferences it, pass the object to
 * step1, and free it through kmem_cache_free, kfree, kmem_cache_free_bulk
 * (in batches) or kfree_rcu in turn (the odd ones come from
 * ktrack_test_obj_kmalloc()), so that addresses are reused across
 * CPUs while other CPUs' hits race with the frees.
 *
 * For bench/objtrace.sh: writing N to parameters/hot calls
 * ktrack_test_obj_hot(hot_obj) N times and stores the mean time per call in
 * bench_ps (picoseconds, so sub-ns differences show); bare_hook=1 attaches
 * an empty ftrace_ops callback to ktrack_test_obj_hot (the bare hook).
 */
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/ftrace.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <ktrack/ktrack_objtrace.h>

#include "ktrack_test_objtrace.h"

static struct kmem_cache *kt_cache;
static struct kt_obj *kt_array;
static unsigned long addr1, addr2, array, hot_obj, bench_ps;
static struct kt_obj kt_hot;
static unsigned long sink;

module_param(addr1, ulong, 0400);
module_param(addr2, ulong, 0400);
module_param(array, ulong, 0400);
module_param(hot_obj, ulong, 0400);
module_param(bench_ps, ulong, 0400);

/*
 * 'run' and 'bulk' want a freed object's address back for a second life.
 * The slab hands the last freed object back first, but KFENCE may take an
 * allocation now and then, and KASAN's quarantine (the debug kernel) holds
 * every freed object back.  So the second allocation names the address it
 * wants in kt_want: ktrack_test_obj_alloc() then drains the quarantine into
 * the slab (kmem_cache_shrink(), under KASAN) and allocates, holding every
 * other object, until that address comes back.  kt_keep, an object of the
 * first life's slab kept allocated meanwhile, stops the shrink from
 * discarding that slab with the address in it.  The params' setters run
 * one at a time (the module's param lock), so these need no lock.
 */
#define KT_MAX_HELD 1024
static unsigned long kt_want;
static struct kt_obj *kt_keep;

static struct kt_obj *kt_alloc_at(unsigned long want)
{
	struct kt_obj **held, *o = NULL;
	int n = 0;

	held = kmalloc_array(KT_MAX_HELD, sizeof(*held), GFP_KERNEL);
	if (!held)
		return NULL;
	if (IS_ENABLED(CONFIG_KASAN_GENERIC))
		kmem_cache_shrink(kt_cache);
	while (n < KT_MAX_HELD) {
		o = kmem_cache_zalloc(kt_cache, GFP_KERNEL);
		if (!o || (unsigned long)o == want)
			break;
		held[n++] = o;
		o = NULL;
	}
	while (n--)
		kmem_cache_free(kt_cache, held[n]);
	kfree(held);
	return o;
}

/*
 * Under KASAN: keep an object of o's slab allocated (see kt_want).  notrace:
 * not a function of the path the tests follow (under KASAN it is not
 * inlined, and the object passes through it).
 */
static notrace void kt_pin_slab(struct kt_obj *o)
{
	struct kt_obj *held[16];
	int n = 0;

	if (!IS_ENABLED(CONFIG_KASAN_GENERIC))
		return;
	while (n < ARRAY_SIZE(held) && !kt_keep) {
		struct kt_obj *k = kmem_cache_alloc(kt_cache, GFP_KERNEL);

		if (!k)
			break;
		if (virt_to_folio(k) == virt_to_folio(o))
			kt_keep = k;
		else
			held[n++] = k;
	}
	while (n--)
		kmem_cache_free(kt_cache, held[n]);
}

static void kt_unpin_slab(void)
{
	if (kt_keep)
		kmem_cache_free(kt_cache, kt_keep);
	kt_keep = NULL;
}

/* The second life: ktrack_test_obj_alloc() at the first one's address. */
static struct kt_obj *kt_alloc_again(unsigned long addr)
{
	struct kt_obj *o;

	kt_want = addr;
	o = ktrack_test_obj_alloc(1);
	kt_want = 0;
	kt_unpin_slab();
	return o;
}

struct kt_obj *ktrack_test_obj_alloc(int tag)
{
	struct kt_obj *o;

	o = kt_want ? kt_alloc_at(kt_want) : kmem_cache_zalloc(kt_cache, GFP_KERNEL);
	if (o) {
		o->magic = 0x6b746f62 + tag;
		WRITE_ONCE(o->mode, 0x10);
	}
	return o;
}

void ktrack_test_obj_step1(struct kt_obj *o)
{
	WRITE_ONCE(sink, sink + READ_ONCE(o->mode));
}

void ktrack_test_obj_step2(long a, struct kt_obj *o)
{
	WRITE_ONCE(sink, sink + a + READ_ONCE(o->mode));
}

void ktrack_test_obj_step_same(struct kt_obj *o)
{
	WRITE_ONCE(sink, sink + READ_ONCE(o->counter));
}

void ktrack_test_obj_step6(long a, long b, long c, long d, long e, struct kt_obj *o)
{
	WRITE_ONCE(sink, sink + a + b + c + d + e + READ_ONCE(o->mode));
}

void ktrack_test_obj_free(struct kt_obj *o)
{
	kmem_cache_free(kt_cache, o);
}

void ktrack_test_obj_hot(struct kt_obj *o)
{
	WRITE_ONCE(sink, sink + 1);
}

void ktrack_test_obj_peek(struct kt_obj *o)
{
	WRITE_ONCE(sink, sink + (unsigned long)o);
}

struct kt_obj *ktrack_test_obj_kmalloc(int tag)
{
	struct kt_obj *o = kzalloc(sizeof(*o), GFP_KERNEL);

	if (o)
		WRITE_ONCE(o->mode, 0x60 + tag);
	return o;
}

struct kt_obj *ktrack_test_obj_valloc(int tag)
{
	struct kt_obj *o = vzalloc(sizeof(*o));

	if (o)
		WRITE_ONCE(o->mode, 0x50 + tag);
	return o;
}

/*
 * A new life of addr1 (kt_alloc_again(): see kt_want), passed to step1 and
 * freed; addr2 = its address.
 */
static int kt_realloc_same(void)
{
	struct kt_obj *o2 = kt_alloc_again(addr1);

	if (!o2)
		return -EAGAIN;
	addr2 = (unsigned long)o2;
	ktrack_test_obj_step1(o2);
	ktrack_test_obj_free(o2);
	return 0;
}

static int kt_run_once(void)
{
	struct kt_obj *o;

	o = ktrack_test_obj_alloc(0);
	if (!o)
		return -ENOMEM;
	kt_pin_slab(o);
	ktrack_test_obj_step1(o);
	WRITE_ONCE(o->mode, 0x20);
	ktrack_test_obj_step2(7, o);
	ktrack_test_obj_step_same(o);
	WRITE_ONCE(o->mode, 0x30);
	ktrack_test_obj_step6(1, 2, 3, 4, 5, o);
	addr1 = (unsigned long)o;
	ktrack_test_obj_free(o);
	return kt_realloc_same();
}

static int kt_set_run(const char *val, const struct kernel_param *kp)
{
	unsigned int n, i;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	for (i = 0; i < n && !ret; i++)
		ret = kt_run_once();
	return ret;
}

/* Track, hit, free with kmem_cache_free_bulk(), then the same address again. */
static int kt_set_bulk(const char *val, const struct kernel_param *kp)
{
	struct kt_obj *o;

	o = ktrack_test_obj_alloc(0);
	if (!o)
		return -ENOMEM;
	kt_pin_slab(o);
	ktrack_test_obj_step1(o);
	addr1 = (unsigned long)o;
	kmem_cache_free_bulk(kt_cache, 1, (void **)&o);
	return kt_realloc_same();
}

static int kt_set_vrun(const char *val, const struct kernel_param *kp)
{
	struct kt_obj *o = ktrack_test_obj_valloc(0);

	if (!o)
		return -ENOMEM;
	addr1 = (unsigned long)o;
	ktrack_test_obj_step1(o);
	vfree(o);
	return 0;
}

#define KT_NR_SLOTS	256
#define KT_BULK		8

static struct kt_obj *kt_slots[KT_NR_SLOTS];

struct kt_churn {
	struct completion done;
	unsigned int iters;
	unsigned int cpu;
	int ret;
};

static int kt_churn_fn(void *arg)
{
	struct kt_churn *c = arg;
	void *batch[KT_BULK];
	unsigned int i, nb = 0;

	for (i = 0; i < c->iters; i++) {
		/* kfree() and kfree_rcu() get kmalloc()ed objects: no callback
		 * into this module or its cache after it is gone.
		 */
		struct kt_obj *o = i % 2 ? ktrack_test_obj_kmalloc(c->cpu) :
					   ktrack_test_obj_alloc(c->cpu);

		if (!o) {
			c->ret = -ENOMEM;
			break;
		}
		WRITE_ONCE(kt_slots[(c->cpu * 31 + i) % KT_NR_SLOTS], o);
		ktrack_test_obj_peek(READ_ONCE(kt_slots[get_random_u32() % KT_NR_SLOTS]));
		ktrack_test_obj_step1(o);
		switch (i % 4) {
		case 0:
			ktrack_test_obj_free(o);
			break;
		case 1:
			kfree(o);
			break;
		case 2:
			batch[nb++] = o;
			if (nb == KT_BULK) {
				kmem_cache_free_bulk(kt_cache, nb, batch);
				nb = 0;
			}
			break;
		default:
			kfree_rcu(o, rcu);
			break;
		}
		ktrack_test_obj_peek(READ_ONCE(kt_slots[get_random_u32() % KT_NR_SLOTS]));
		cond_resched();
	}
	if (nb)
		kmem_cache_free_bulk(kt_cache, nb, batch);
	complete(&c->done);
	return 0;
}

static int kt_set_churn(const char *val, const struct kernel_param *kp)
{
	struct kt_churn *c;
	unsigned int n, cpu;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	if (!n || n > 10000000)
		return -EINVAL;
	c = kcalloc(nr_cpu_ids, sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct task_struct *t;

		init_completion(&c[cpu].done);
		c[cpu].iters = n;
		c[cpu].cpu = cpu;
		t = kthread_create_on_cpu(kt_churn_fn, &c[cpu], cpu, "kt_churn/%u");
		if (IS_ERR(t)) {
			c[cpu].ret = PTR_ERR(t);
			complete(&c[cpu].done);
			continue;
		}
		wake_up_process(t);
	}
	for_each_online_cpu(cpu) {
		wait_for_completion(&c[cpu].done);
		if (c[cpu].ret)
			ret = c[cpu].ret;
	}
	cpus_read_unlock();
	kfree(c);
	return ret;
}

static int kt_set_touch(const char *val, const struct kernel_param *kp)
{
	unsigned int n, i;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	if (n > KTRACK_TEST_NR_ARRAY)
		return -EINVAL;
	for (i = 0; i < n; i++)
		ktrack_test_obj_step1(&kt_array[i]);
	return 0;
}

static int kt_set_api(const char *val, const struct kernel_param *kp)
{
	int (*track)(const void *ptr);
	struct kt_obj *o;
	int n;

	track = symbol_get(ktrack_obj_track);
	if (!track)
		return -ENOENT;
	o = kzalloc(sizeof(*o), GFP_KERNEL);
	if (!o) {
		symbol_put(ktrack_obj_track);
		return -ENOMEM;
	}
	WRITE_ONCE(o->mode, 0x40);
	n = track(o);
	symbol_put(ktrack_obj_track);
	addr1 = (unsigned long)o;
	ktrack_test_obj_step1(o);
	kfree(o);
	return n > 0 ? 0 : -ESRCH;
}

static int kt_set_hot(const char *val, const struct kernel_param *kp)
{
	unsigned int n, i;
	u64 t0, t1;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	if (!n || n > 100000000)
		return -EINVAL;
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++)
		ktrack_test_obj_hot(&kt_hot);
	t1 = ktime_get_ns();
	bench_ps = div_u64((t1 - t0) * 1000, n);
	return 0;
}

static void notrace kt_bare_func(unsigned long ip, unsigned long parent_ip,
				 struct ftrace_ops *op, struct ftrace_regs *fregs)
{
}

static struct ftrace_ops kt_bare_ops = { .func = kt_bare_func };
static bool kt_bare_on;

static int kt_set_bare(const char *val, const struct kernel_param *kp)
{
	bool on;
	int ret = kstrtobool(val, &on);

	if (ret || on == kt_bare_on)
		return ret;
	if (on) {
		ret = ftrace_set_filter_ip(&kt_bare_ops, (unsigned long)ktrack_test_obj_hot, 0, 0);
		if (!ret)
			ret = register_ftrace_function(&kt_bare_ops);
	} else {
		ret = unregister_ftrace_function(&kt_bare_ops);
	}
	if (!ret)
		kt_bare_on = on;
	return ret;
}

static const struct kernel_param_ops kt_hot_ops = { .set = kt_set_hot };
static const struct kernel_param_ops kt_bare_param_ops = { .set = kt_set_bare };
module_param_cb(hot, &kt_hot_ops, NULL, 0200);
module_param_cb(bare_hook, &kt_bare_param_ops, NULL, 0200);

static const struct kernel_param_ops kt_run_ops = { .set = kt_set_run };
static const struct kernel_param_ops kt_touch_ops = { .set = kt_set_touch };
static const struct kernel_param_ops kt_api_ops = { .set = kt_set_api };
module_param_cb(run, &kt_run_ops, NULL, 0200);
module_param_cb(touch, &kt_touch_ops, NULL, 0200);
module_param_cb(api, &kt_api_ops, NULL, 0200);
static const struct kernel_param_ops kt_bulk_ops = { .set = kt_set_bulk };
static const struct kernel_param_ops kt_vrun_ops = { .set = kt_set_vrun };
static const struct kernel_param_ops kt_churn_ops = { .set = kt_set_churn };
module_param_cb(bulk, &kt_bulk_ops, NULL, 0200);
module_param_cb(vrun, &kt_vrun_ops, NULL, 0200);
module_param_cb(churn, &kt_churn_ops, NULL, 0200);

static int __init kt_init(void)
{
	unsigned int i;

	kt_cache = kmem_cache_create("ktrack_test_obj", sizeof(struct kt_obj), 0, 0, NULL);
	if (!kt_cache)
		return -ENOMEM;
	kt_array = vzalloc(array_size(KTRACK_TEST_NR_ARRAY, sizeof(*kt_array)));
	if (!kt_array) {
		kmem_cache_destroy(kt_cache);
		return -ENOMEM;
	}
	for (i = 0; i < KTRACK_TEST_NR_ARRAY; i++)
		kt_array[i].mode = i;
	array = (unsigned long)kt_array;
	hot_obj = (unsigned long)&kt_hot;
	return 0;
}

static void __exit kt_exit(void)
{
	if (kt_bare_on)
		unregister_ftrace_function(&kt_bare_ops);
	ftrace_free_filter(&kt_bare_ops);
	vfree(kt_array);
	kmem_cache_destroy(kt_cache);
}

module_init(kt_init);
module_exit(kt_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ktrack test: objects with a known life for the object tracker");
