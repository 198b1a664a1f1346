// SPDX-License-Identifier: GPL-2.0
/*
 * objtrace_sample - follow a few objects through the kernel by address.
 *
 *   insmod objtrace_sample.ko
 *
 * The idea behind ktrack's object tracker, in its smallest honest form:
 * hook some functions (here with one kprobe each, on ksize() and kfree()),
 * and on every call compare the function's first argument with a short
 * table of addresses we care about.  A match means "this object went
 * through this function": in order, that is the object's path.
 *
 * The sample makes its own objects so the walk-through is repeatable: it
 * allocates nr_objects buffers, tracks their addresses, then a work item
 * "uses" one object every 100 ms (ksize(), then kfree()).  At the end it
 * prints each object's path.
 *
 * What to notice:
 *  - The hook runs on EVERY call of kfree() in the whole system, so the
 *    check must be tiny: a few loads and compares, no lock, no allocation.
 *    The table is a fixed array of unsigned long read with READ_ONCE().
 *  - An address is an identity only while the object lives.  Once kfree()
 *    sees it, the memory may be handed to someone else at the same address,
 *    so the tracker must stop tracking it right there (we clear the slot
 *    from the handler with cmpxchg) or it would follow a stranger.
 *  - The handler records the path; printing happens later, outside it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#define MAX_OBJECTS	4
#define MAX_STEPS	4

static unsigned int nr_objects = 3;
module_param(nr_objects, uint, 0444);
MODULE_PARM_DESC(nr_objects, "Objects to allocate and follow (1-4, default 3)");

static int objtrace_pre(struct kprobe *p, struct pt_regs *regs);

/* The functions we hook; kfree must stay last (it ends an object's life). */
static struct kprobe probes[] = {
	{ .symbol_name = "ksize", .pre_handler = objtrace_pre },
	{ .symbol_name = "kfree", .pre_handler = objtrace_pre },
};
static struct kprobe *probe_list[] = { &probes[0], &probes[1] };

/*
 * tracked[i] is the address of object i while it is followed, 0 after.
 * path[i] lists which probes saw it (index into probes[], +1; 0 = empty).
 */
static unsigned long tracked[MAX_OBJECTS];
static u8 path[MAX_OBJECTS][MAX_STEPS];
static atomic_t steps[MAX_OBJECTS];
static atomic_long_t checked = ATOMIC_LONG_INIT(0);

static void *objects[MAX_OBJECTS];
static unsigned int next_object;
static struct delayed_work use_work;

static int objtrace_pre(struct kprobe *p, struct pt_regs *regs)
{
	unsigned long arg = regs_get_kernel_argument(regs, 0);
	unsigned int probe = p - probes;
	int i, n;

	atomic_long_inc(&checked);
	for (i = 0; i < MAX_OBJECTS; i++) {
		if (!arg || READ_ONCE(tracked[i]) != arg)
			continue;
		n = atomic_inc_return(&steps[i]) - 1;
		if (n < MAX_STEPS)
			path[i][n] = probe + 1;
		/* Freed: the address is no longer this object's name. */
		if (probe == ARRAY_SIZE(probes) - 1)
			cmpxchg(&tracked[i], arg, 0);
	}
	return 0;
}
NOKPROBE_SYMBOL(objtrace_pre);

/* Process context: use one object the way a driver would, then free it. */
static void use_one(struct work_struct *work)
{
	void *obj = objects[next_object];
	size_t size = ksize(obj);

	pr_info("object %u: used (%zu bytes), now freed\n", next_object, size);
	kfree(obj);
	objects[next_object] = NULL;
	if (++next_object < nr_objects)
		schedule_delayed_work(&use_work, msecs_to_jiffies(100));
	else
		pr_info("all %u objects freed\n", nr_objects);
}

static int __init objtrace_sample_init(void)
{
	unsigned int i;
	int ret;

	if (!nr_objects || nr_objects > MAX_OBJECTS)
		return -EINVAL;
	for (i = 0; i < nr_objects; i++) {
		objects[i] = kzalloc(64, GFP_KERNEL);
		if (!objects[i]) {
			ret = -ENOMEM;
			goto free;
		}
		/* Track before arming the probes: the handler never sees a half-filled table. */
		tracked[i] = (unsigned long)objects[i];
	}
	ret = register_kprobes(probe_list, ARRAY_SIZE(probe_list));
	if (ret) {
		pr_err("cannot hook ksize/kfree: error %d\n", ret);
		goto free;
	}
	pr_info("following %u objects through ksize and kfree\n", nr_objects);
	INIT_DELAYED_WORK(&use_work, use_one);
	schedule_delayed_work(&use_work, msecs_to_jiffies(100));
	return 0;
free:
	for (i = 0; i < nr_objects; i++)
		kfree(objects[i]);
	return ret;
}

static void __exit objtrace_sample_exit(void)
{
	unsigned int i, s, n;

	cancel_delayed_work_sync(&use_work);
	unregister_kprobes(probe_list, ARRAY_SIZE(probe_list));
	for (i = 0; i < nr_objects; i++) {
		char line[64] = "";

		n = min_t(unsigned int, atomic_read(&steps[i]), MAX_STEPS);
		for (s = 0; s < n; s++) {
			strlcat(line, s ? " -> " : "", sizeof(line));
			strlcat(line, probes[path[i][s] - 1].symbol_name, sizeof(line));
		}
		pr_info("object %u path: %s%s\n", i, n ? line : "(never seen)",
			READ_ONCE(tracked[i]) ? "" : " (untracked)");
		kfree(objects[i]);	/* still ours if the work never reached it */
	}
	pr_info("checked %ld calls to find them\n", atomic_long_read(&checked));
}

module_init(objtrace_sample_init);
module_exit(objtrace_sample_exit);
MODULE_DESCRIPTION("ktrack sample 5: follow objects by address through hooked functions");
MODULE_LICENSE("GPL");
