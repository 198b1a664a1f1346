// SPDX-License-Identifier: GPL-2.0
/*
 * latency_timer.c - the latency tracer "timer", after the kernel's timerlat:
 * per CPU an hrtimer and a kernel thread.  The thread arms the timer for an
 * absolute expiry one period after the previous one and sleeps; the timer's
 * handler (hard IRQ) measures its IRQ latency (now - the expected expiry)
 * and wakes the thread, which measures its own latency from the same expiry
 * once it runs, then arms the next period.  Each measurement is a
 * ktrack_timerlat trace event, recorded by userspace with e probes.
 *
 * The threads are SCHED_FIFO (sched_set_fifo(): priority 50, the only RT
 * setting the kernel exports to modules), as timerlat's: the thread latency
 * then shows what delays an RT task, and a higher-priority RT task or an
 * irqs/preemption-off section on the CPU shows up in it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "latency.h"
#include "ktrack_trace.h"

struct kt_tlat {
	struct hrtimer timer;
	struct task_struct *task;	/* NULL: none on this CPU */
	u64 seq;			/* the armed period; written by the thread only */
	bool fired;			/* the handler ran for the armed period */
};

/* Set by start, cleared by stop (latency.c's lock serialises them). */
static struct kt_tlat __percpu *kt_tlat;
static u64 kt_tlat_period;

static u64 kt_tlat_since(ktime_t expires)
{
	s64 d = ktime_to_ns(ktime_sub(ktime_get(), expires));

	return d > 0 ? d : 0;	/* an early expiry is no latency */
}

/* Hard IRQ (HRTIMER_MODE_*_HARD also under PREEMPT_RT): no sleeping. */
static enum hrtimer_restart kt_tlat_irq(struct hrtimer *t)
{
	struct kt_tlat *c = container_of(t, struct kt_tlat, timer);

	trace_ktrack_timerlat(c->seq, kt_tlat_since(hrtimer_get_expires(t)), KT_TIMERLAT_IRQ);
	WRITE_ONCE(c->fired, true);
	/* c->task is valid: the thread cancels the timer before it exits */
	wake_up_process(c->task);
	return HRTIMER_NORESTART;
}

static int kt_tlat_thread(void *data)
{
	struct kt_tlat *c = data;
	const u64 period = kt_tlat_period;
	ktime_t next = ktime_add_ns(ktime_get(), period);

	while (!kthread_should_stop()) {
		ktime_t now;

		c->seq++;
		WRITE_ONCE(c->fired, false);
		/* bound to this CPU: the PINNED timer fires here */
		hrtimer_start(&c->timer, next, HRTIMER_MODE_ABS_PINNED_HARD);
		for (;;) {
			set_current_state(TASK_INTERRUPTIBLE);
			if (READ_ONCE(c->fired) || kthread_should_stop())
				break;
			schedule();
		}
		__set_current_state(TASK_RUNNING);
		if (!READ_ONCE(c->fired))
			break;		/* stopped while waiting */
		trace_ktrack_timerlat(c->seq, kt_tlat_since(next), KT_TIMERLAT_THREAD);
		/*
		 * The next period follows this one's expiry, not this wake-up;
		 * periods that a long latency overran are skipped, not measured
		 * late all at once.
		 */
		next = ktime_add_ns(next, period);
		now = ktime_get();
		if (ktime_before(next, now))
			next = ktime_add_ns(next, (div64_u64(ktime_to_ns(ktime_sub(now, next)), period) + 1) *
					   period);
	}
	/* Nothing may wake this task after it is gone. */
	hrtimer_cancel(&c->timer);
	return 0;
}

void kt_timerlat_stop(void)
{
	int cpu;

	if (!kt_tlat)
		return;
	for_each_possible_cpu(cpu) {
		struct kt_tlat *c = per_cpu_ptr(kt_tlat, cpu);

		/* returns once the thread has cancelled its timer and exited */
		if (c->task)
			kthread_stop(c->task);
		/* a thread stopped before it ran never armed it: harmless */
		hrtimer_cancel(&c->timer);
	}
	free_percpu(kt_tlat);
	kt_tlat = NULL;
}

int kt_timerlat_start(const struct cpumask *cpus, u64 period_ns)
{
	int cpu;

	kt_tlat = alloc_percpu(struct kt_tlat);
	if (!kt_tlat)
		return -ENOMEM;
	kt_tlat_period = period_ns;
	for_each_possible_cpu(cpu) {
		struct kt_tlat *c = per_cpu_ptr(kt_tlat, cpu);

		hrtimer_init(&c->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_PINNED_HARD);
		c->timer.function = kt_tlat_irq;
	}
	for_each_cpu(cpu, cpus) {
		struct kt_tlat *c = per_cpu_ptr(kt_tlat, cpu);
		struct task_struct *t;

		t = kthread_create_on_cpu(kt_tlat_thread, c, cpu, "ktrack_tlat/%u");
		if (IS_ERR(t)) {
			kt_timerlat_stop();
			return PTR_ERR(t);
		}
		sched_set_fifo(t);
		c->task = t;
	}
	/* all created before any runs: a failure above stops threads that never ran */
	for_each_cpu(cpu, cpus)
		wake_up_process(per_cpu_ptr(kt_tlat, cpu)->task);
	return 0;
}
