// SPDX-License-Identifier: GPL-2.0
/*
 * latency_noise.c - the latency tracer "noise", after the kernel's osnoise:
 * per CPU a kernel thread that, for 'runtime' of every 'period', spins
 * reading the local clock; a gap between two reads longer than 'tolerance' is
 * noise: time the CPU did something else.  Tracepoint handlers on
 * irq_handler_entry/exit, softirq_entry/exit, nmi_handler and sched_switch
 * count, on each CPU while its noise thread is sampling and is the task
 * there, the interference and its time:
 *   irq, softirq: handler time (minus what nested in it: NMIs, and IRQs in
 *     softirqs), when they interrupted the noise thread;
 *   nmi: nmi_handler's own duration;
 *   thread: the time from the noise thread's switch-out to its switch-in
 *     (other threads, and whatever interrupted them, run in it);
 *   hw: what is left of a gap once the interference counted during it is
 *     taken out, when that is still over the tolerance: IRQs disabled (no
 *     handler to see), IPIs and the local timer (vectors without
 *     irq_handler_entry), SMIs, the hypervisor.  osnoise's "HW noise" is a
 *     gap with no interference at all; taking out what was counted instead
 *     keeps an irqs-off window as hw noise when the softirq that runs as
 *     IRQs come back lands in the same gap.
 * At the end of each period the thread emits a ktrack_osnoise event.
 *
 * The thread runs SCHED_OTHER with preemption enabled and calls
 * cond_resched() in its loop, as osnoise's workload does on kernels without
 * full preemption: what needs the CPU gets it, and shows as thread noise.
 * Between samples it sleeps (period - runtime).
 *
 * The handlers touch only their own CPU's struct, from any context (NMI
 * included), without locks; the thread reads the counters of its CPU, on
 * that CPU.  Counters only grow; a sample is their difference.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/kthread.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/tracepoint.h>

#include "compat.h"
#include "latency.h"
#include "ktrack_trace.h"
#include "probe_internal.h"

struct kt_onoise_count {
	u64 irq_count, irq_ns;
	u64 softirq_count, softirq_ns;
	u64 nmi_count, nmi_ns;
	u64 thread_count, thread_ns;
};

struct kt_onoise {
	struct task_struct *task;	/* NULL: none on this CPU */
	bool sampling;			/* the thread is in its spin */
	struct kt_onoise_count n;
	/* the open interference: start times, and what nested in it so far */
	u64 irq_start, irq_nmi_ns;
	u64 softirq_start, softirq_irq_ns, softirq_nmi_ns;
	u64 switched_out;
};

static struct kt_onoise __percpu *kt_onoise;
static u64 kt_onoise_period, kt_onoise_runtime, kt_onoise_tolerance;

/* This CPU's noise thread is sampling and interrupted: count it. */
static struct kt_onoise *kt_onoise_here(void)
{
	struct kt_onoise *c = this_cpu_ptr(kt_onoise);

	return READ_ONCE(c->sampling) && current == c->task ? c : NULL;
}

static notrace void kt_onoise_irq_entry(void *data, int irq, struct irqaction *action)
{
	struct kt_onoise *c = kt_onoise_here();

	if (!c)
		return;
	c->irq_nmi_ns = c->n.nmi_ns;
	c->irq_start = ktrack_local_clock();
}

static notrace void kt_onoise_irq_exit(void *data, int irq, struct irqaction *action, int ret)
{
	struct kt_onoise *c = this_cpu_ptr(kt_onoise);
	u64 d;

	if (!c->irq_start)
		return;		/* its entry was not counted */
	d = ktrack_local_clock() - c->irq_start - (c->n.nmi_ns - c->irq_nmi_ns);
	c->irq_start = 0;
	c->n.irq_count++;
	c->n.irq_ns += (s64)d > 0 ? d : 0;
}

static notrace void kt_onoise_softirq_entry(void *data, unsigned int vec_nr)
{
	struct kt_onoise *c = kt_onoise_here();

	if (!c)
		return;
	c->softirq_irq_ns = c->n.irq_ns;
	c->softirq_nmi_ns = c->n.nmi_ns;
	c->softirq_start = ktrack_local_clock();
}

static notrace void kt_onoise_softirq_exit(void *data, unsigned int vec_nr)
{
	struct kt_onoise *c = this_cpu_ptr(kt_onoise);
	u64 d;

	if (!c->softirq_start)
		return;
	d = ktrack_local_clock() - c->softirq_start - (c->n.irq_ns - c->softirq_irq_ns) -
	    (c->n.nmi_ns - c->softirq_nmi_ns);
	c->softirq_start = 0;
	c->n.softirq_count++;
	c->n.softirq_ns += (s64)d > 0 ? d : 0;
}

static notrace void kt_onoise_nmi(void *data, void *handler, s64 delta_ns, int handled)
{
	struct kt_onoise *c = kt_onoise_here();

	if (!c)
		return;
	c->n.nmi_count++;
	c->n.nmi_ns += delta_ns > 0 ? delta_ns : 0;
}

static notrace void kt_onoise_switch(void *data, bool preempt, struct task_struct *prev,
				     struct task_struct *next, unsigned int prev_state)
{
	struct kt_onoise *c = this_cpu_ptr(kt_onoise);

	if (!READ_ONCE(c->sampling))
		return;
	if (prev == c->task) {
		c->switched_out = ktrack_local_clock();
	} else if (next == c->task && c->switched_out) {
		c->n.thread_count++;
		c->n.thread_ns += ktrack_local_clock() - c->switched_out;
		c->switched_out = 0;
	}
}

static struct {
	const char *name;
	void *func;
	bool optional;		/* nmi_handler: x86 only */
	struct tracepoint *tp;	/* registered */
} kt_onoise_tps[] = {
	{ "irq_handler_entry", kt_onoise_irq_entry },
	{ "irq_handler_exit", kt_onoise_irq_exit },
	{ "softirq_entry", kt_onoise_softirq_entry },
	{ "softirq_exit", kt_onoise_softirq_exit },
	{ "nmi_handler", kt_onoise_nmi, true },
	{ "sched_switch", kt_onoise_switch },
};

static void kt_onoise_unregister(void)
{
	bool any = false;
	int i;

	for (i = 0; i < ARRAY_SIZE(kt_onoise_tps); i++) {
		if (!kt_onoise_tps[i].tp)
			continue;
		tracepoint_probe_unregister(kt_onoise_tps[i].tp, kt_onoise_tps[i].func, NULL);
		kt_onoise_tps[i].tp = NULL;
		any = true;
	}
	/* no handler runs on the per-CPU data after this */
	if (any)
		tracepoint_synchronize_unregister();
}

static int kt_onoise_register(void)
{
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(kt_onoise_tps); i++) {
		struct tracepoint *tp = kt_tp_find_kernel(kt_onoise_tps[i].name);

		if (!tp) {
			if (kt_onoise_tps[i].optional)
				continue;
			pr_warn("latency noise: no tracepoint %s\n", kt_onoise_tps[i].name);
			ret = -ENOENT;
			goto fail;
		}
		ret = tracepoint_probe_register(tp, kt_onoise_tps[i].func, NULL);
		if (ret)
			goto fail;
		kt_onoise_tps[i].tp = tp;
	}
	return 0;
fail:
	kt_onoise_unregister();
	return ret;
}

/* The interference time counted so far on this CPU. */
static u64 kt_onoise_counted_ns(const struct kt_onoise *c)
{
	return READ_ONCE(c->n.irq_ns) + READ_ONCE(c->n.softirq_ns) + READ_ONCE(c->n.nmi_ns) +
	       READ_ONCE(c->n.thread_ns);
}

static void kt_onoise_snapshot(const struct kt_onoise *c, struct kt_onoise_count *n)
{
	n->irq_count = READ_ONCE(c->n.irq_count);
	n->irq_ns = READ_ONCE(c->n.irq_ns);
	n->softirq_count = READ_ONCE(c->n.softirq_count);
	n->softirq_ns = READ_ONCE(c->n.softirq_ns);
	n->nmi_count = READ_ONCE(c->n.nmi_count);
	n->nmi_ns = READ_ONCE(c->n.nmi_ns);
	n->thread_count = READ_ONCE(c->n.thread_count);
	n->thread_ns = READ_ONCE(c->n.thread_ns);
}

/* A gap between two clock reads, and the interference counted during it. */
static void kt_onoise_gap(struct kt_onoise *c, struct kt_osnoise_sample *s, u64 gap,
			  u64 *counted)
{
	u64 cur = kt_onoise_counted_ns(c), rest;

	if (gap > kt_onoise_tolerance) {
		s->noise_ns += gap;
		s->max_single_ns = max(s->max_single_ns, gap);
		rest = gap > cur - *counted ? gap - (cur - *counted) : 0;
		if (rest > kt_onoise_tolerance) {
			s->hw_count++;
			s->hw_ns += rest;
		}
	}
	*counted = cur;
}

/*
 * One period's sampling on this CPU (the thread is bound to it).  What the
 * handlers count must lie between two reads of the clock, inside one gap:
 * so the counting starts with the first read and ends with the last, IRQs
 * off around each, and every cond_resched() (where the thread is switched
 * out) is followed by a read.  The loop's last cond_resched() used to be
 * followed by none: a switch-out there counted as thread noise with no gap
 * around it (seen: a 300 ms FIFO spin as 320 ms of thread noise, the
 * largest gap 5 ms).
 */
static void kt_onoise_sample(struct kt_onoise *c, struct kt_osnoise_sample *s)
{
	struct kt_onoise_count a, b;
	u64 start, last, now, counted;
	unsigned long flags;

	local_irq_save(flags);
	kt_onoise_snapshot(c, &a);
	WRITE_ONCE(c->sampling, true);
	barrier();	/* the handlers count from here */
	start = ktrack_local_clock();
	counted = kt_onoise_counted_ns(c);
	local_irq_restore(flags);
	last = start;
	do {
		cond_resched();
		now = ktrack_local_clock();
		kt_onoise_gap(c, s, now - last, &counted);
		last = now;
	} while (now - start < kt_onoise_runtime && !kthread_should_stop());
	/* the last read: with IRQs off, nothing counted can come after it */
	local_irq_save(flags);
	now = ktrack_local_clock();
	kt_onoise_gap(c, s, now - last, &counted);
	barrier();
	WRITE_ONCE(c->sampling, false);
	/*
	 * An interference open at the end (cannot be: the thread runs) is
	 * dropped; the switch-out this thread is about to make is not noise.
	 */
	c->switched_out = 0;
	kt_onoise_snapshot(c, &b);
	local_irq_restore(flags);
	s->runtime_ns = now - start;
	s->irq_count = b.irq_count - a.irq_count;
	s->irq_ns = b.irq_ns - a.irq_ns;
	s->softirq_count = b.softirq_count - a.softirq_count;
	s->softirq_ns = b.softirq_ns - a.softirq_ns;
	s->nmi_count = b.nmi_count - a.nmi_count;
	s->nmi_ns = b.nmi_ns - a.nmi_ns;
	s->thread_count = b.thread_count - a.thread_count;
	s->thread_ns = b.thread_ns - a.thread_ns;
}

static int kt_onoise_thread(void *data)
{
	struct kt_onoise *c = data;
	u64 seq = 0;

	while (!kthread_should_stop()) {
		struct kt_osnoise_sample s = { .seq = ++seq };
		ktime_t next = ktime_add_ns(ktime_get(), kt_onoise_period);

		kt_onoise_sample(c, &s);
		trace_ktrack_osnoise(&s);
		if (kt_onoise_runtime >= kt_onoise_period)
			continue;	/* no pause: the spin takes the whole period */
		set_current_state(TASK_INTERRUPTIBLE);
		/* kthread_stop() wakes it: its flag is set before the wake-up */
		if (!kthread_should_stop())
			schedule_hrtimeout(&next, HRTIMER_MODE_ABS);
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

void kt_osnoise_stop(void)
{
	int cpu;

	if (!kt_onoise)
		return;
	for_each_possible_cpu(cpu) {
		struct kt_onoise *c = per_cpu_ptr(kt_onoise, cpu);

		if (c->task)
			kthread_stop(c->task);
	}
	kt_onoise_unregister();
	free_percpu(kt_onoise);
	kt_onoise = NULL;
}

int kt_osnoise_start(const struct cpumask *cpus, u64 period_ns, u64 runtime_ns, u64 tolerance_ns)
{
	int cpu, ret;

	kt_onoise = alloc_percpu(struct kt_onoise);
	if (!kt_onoise)
		return -ENOMEM;
	kt_onoise_period = period_ns;
	kt_onoise_runtime = runtime_ns;
	kt_onoise_tolerance = tolerance_ns;
	for_each_cpu(cpu, cpus) {
		struct task_struct *t;

		t = kthread_create_on_cpu(kt_onoise_thread, per_cpu_ptr(kt_onoise, cpu), cpu,
					  "ktrack_noise/%u");
		if (IS_ERR(t)) {
			kt_osnoise_stop();
			return PTR_ERR(t);
		}
		per_cpu_ptr(kt_onoise, cpu)->task = t;
	}
	/* the handlers read c->task: every one is set before they run */
	ret = kt_onoise_register();
	if (ret) {
		kt_osnoise_stop();
		return ret;
	}
	for_each_cpu(cpu, cpus)
		wake_up_process(per_cpu_ptr(kt_onoise, cpu)->task);
	return 0;
}
