// SPDX-License-Identifier: GPL-2.0
/*
 * trace_events_sample - a module with its own TRACE_EVENTs.
 *
 *   insmod trace_events_sample.ko
 *   ls /sys/kernel/tracing/events/trace_events_sample/
 *
 * A kthread wakes up every 100 ms and fires the events defined in
 * trace_events_sample_trace.h.  A second kthread exists only while
 * someone has the sample_on_demand event enabled.
 *
 * What to notice:
 *  - Exactly one .c file defines CREATE_TRACE_POINTS before including the
 *    trace header: that is where the events are instantiated.  Other files
 *    include the header plainly and just call trace_<event>().
 *  - A disabled event costs one patched-out jump (a static key) at each
 *    call site; the arguments are not even evaluated.  Expensive argument
 *    preparation belongs behind trace_<event>_enabled().
 *  - The kernel ignores the events of a module with a "bad" taint (forced
 *    load, proprietary licence): see the walk-through.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>

#define CREATE_TRACE_POINTS
#include "trace_events_sample_trace.h"

static struct task_struct *ticker;

static struct task_struct *on_demand;
static DEFINE_MUTEX(on_demand_lock);

static int ticker_fn(void *unused)
{
	u32 values[4];
	u64 seq = 0;

	while (!kthread_should_stop()) {
		unsigned int n = seq % 4 + 1, i;
		unsigned long flags = 0;

		for (i = 0; i < n; i++)
			values[i] = seq * 10 + i;
		if (!seq)
			flags |= SAMPLE_FLAG_FIRST;
		if (seq & 1)
			flags |= SAMPLE_FLAG_ODD;
		if (seq % 10 == 0)
			flags |= SAMPLE_FLAG_TENTH;

		trace_sample_work_begin(seq, SAMPLE_BUSY);
		/* Only build what the event needs when someone records it. */
		if (trace_sample_tick_enabled())
			trace_sample_tick(seq, current->comm, seq % 3, flags, values, n);
		trace_sample_tenth(seq);	/* records only when seq % 10 == 0 */
		trace_sample_work_end(seq, SAMPLE_DONE);

		seq++;
		msleep_interruptible(100);
	}
	return 0;
}

static int on_demand_fn(void *unused)
{
	unsigned int round = 0;

	while (!kthread_should_stop()) {
		trace_sample_on_demand(round++);
		msleep_interruptible(100);
	}
	return 0;
}

/* Called (in process context, may sleep) when the event gets its first user. */
int sample_on_demand_reg(void)
{
	struct task_struct *t;

	mutex_lock(&on_demand_lock);
	t = kthread_run(on_demand_fn, NULL, "sample_on_demand");
	if (IS_ERR(t)) {
		mutex_unlock(&on_demand_lock);
		return PTR_ERR(t);
	}
	on_demand = t;
	mutex_unlock(&on_demand_lock);
	pr_info("sample_on_demand enabled: worker started\n");
	return 0;
}

/* Called when the last user goes away. */
void sample_on_demand_unreg(void)
{
	mutex_lock(&on_demand_lock);
	if (on_demand)
		kthread_stop(on_demand);
	on_demand = NULL;
	mutex_unlock(&on_demand_lock);
	pr_info("sample_on_demand disabled: worker stopped\n");
}

static int __init trace_events_sample_init(void)
{
	ticker = kthread_run(ticker_fn, NULL, "trace_events_sample");
	if (IS_ERR(ticker))
		return PTR_ERR(ticker);
	return 0;
}

static void __exit trace_events_sample_exit(void)
{
	/*
	 * Events still enabled now are torn down by the tracing core right
	 * after this function returns (sample_on_demand_unreg() runs then,
	 * while our code is still in memory): we only stop our own thread.
	 */
	kthread_stop(ticker);
}

module_init(trace_events_sample_init);
module_exit(trace_events_sample_exit);
MODULE_DESCRIPTION("ktrack sample 1: TRACE_EVENTs of every kind in a module");
/* Not decoration: a non-GPL licence cannot use the tracing API at all. */
MODULE_LICENSE("GPL");
