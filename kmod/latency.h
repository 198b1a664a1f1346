/* SPDX-License-Identifier: GPL-2.0 */
/*
 * latency.h - the latency tracers (KTRACK_IOC_LATENCY_*): latency.c owns the
 * ioctls and which file runs which tracer; latency_timer.c (timerlat) and
 * latency_noise.c (osnoise) run the workloads.  Their measurements are the
 * trace events ktrack_timerlat and ktrack_osnoise of ktrack_trace.h.
 */
#ifndef _KTRACK_LATENCY_H
#define _KTRACK_LATENCY_H

#include <linux/cpumask.h>
#include <linux/types.h>

/* ktrack_timerlat's context field: who measured the latency. */
#define KT_TIMERLAT_IRQ		0
#define KT_TIMERLAT_THREAD	1

/* One period of the noise thread on one CPU (the ktrack_osnoise event). */
struct kt_osnoise_sample {
	u64 seq;		/* periods of this thread, from 1 */
	u64 runtime_ns;		/* time spent sampling */
	u64 noise_ns;		/* sum of the gaps over the tolerance */
	u64 max_single_ns;	/* the largest gap */
	u64 irq_count, irq_ns;
	u64 softirq_count, softirq_ns;
	u64 nmi_count, nmi_ns;
	u64 thread_count, thread_ns;
	/* gaps' time that no interference counted explains: irqs off, SMIs... */
	u64 hw_count, hw_ns;
};

/*
 * Start on the CPUs of 'cpus' (online ones); 0 or -errno, with nothing left
 * running on failure.  Stop: no timer, thread or tracepoint handler of the
 * tracer runs once it returns.  Both sleep; latency.c serialises them.
 */
int kt_timerlat_start(const struct cpumask *cpus, u64 period_ns);
void kt_timerlat_stop(void);
int kt_osnoise_start(const struct cpumask *cpus, u64 period_ns, u64 runtime_ns, u64 tolerance_ns);
void kt_osnoise_stop(void);

#endif /* _KTRACK_LATENCY_H */
