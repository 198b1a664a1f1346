/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The "ktrack" trace system: ktrack's own activity, visible to ftrace, perf
 * and trace-cmd users under /sys/kernel/tracing/events/ktrack/.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ktrack

#if !defined(_KTRACK_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KTRACK_TRACE_H

#include <linux/tracepoint.h>
#include "compat.h"
#include "latency.h"

/* A session was opened (anonymous: name is "") or closed. */
DECLARE_EVENT_CLASS(ktrack_session_class,
	TP_PROTO(u64 id, const char *name),
	TP_ARGS(id, name),
	TP_STRUCT__entry(
		__field(u64, id)
		__string(name, name)
	),
	TP_fast_assign(
		__entry->id = id;
		ktrack_assign_str(name, name);
	),
	TP_printk("id=%llu name=%s", __entry->id, __get_str(name))
);

#define DEFINE_KTRACK_SESSION_EVENT(event)		\
DEFINE_EVENT(ktrack_session_class, event,		\
	TP_PROTO(u64 id, const char *name),		\
	TP_ARGS(id, name))

DEFINE_KTRACK_SESSION_EVENT(ktrack_session_open);
DEFINE_KTRACK_SESSION_EVENT(ktrack_session_close);
DEFINE_KTRACK_SESSION_EVENT(ktrack_session_start);
DEFINE_KTRACK_SESSION_EVENT(ktrack_session_stop);

/*
 * Records of session 'id' were lost on 'cpu': 'count' dropped because the
 * buffer was full (reason 1, KTRACK_LOST_FULL, reported when the LOST
 * record is written) or overwritten unread (reason 2, overwrite mode).
 * May fire from any context, NMI included.
 */
TRACE_EVENT(ktrack_ring_overflow,
	TP_PROTO(u64 id, u32 cpu, u64 count, u32 reason),
	TP_ARGS(id, cpu, count, reason),
	TP_STRUCT__entry(
		__field(u64, id)
		__field(u64, count)
		__field(u32, cpu)
		__field(u32, reason)
	),
	TP_fast_assign(
		__entry->id = id;
		__entry->count = count;
		__entry->cpu = cpu;
		__entry->reason = reason;
	),
	TP_printk("id=%llu cpu=%u count=%llu reason=%s", __entry->id, __entry->cpu,
		  __entry->count, __entry->reason == 2 ? "overwritten" : "full")
);

/*
 * The latency tracer "timer" (latency_timer.c): the time from the expected
 * expiry of the CPU's timer to its handler (context 0, KT_TIMERLAT_IRQ) and
 * to its thread running (context 1, KT_TIMERLAT_THREAD) in period 'seq'.
 */
TRACE_EVENT(ktrack_timerlat,
	TP_PROTO(u64 seq, u64 latency_ns, u32 context),
	TP_ARGS(seq, latency_ns, context),
	TP_STRUCT__entry(
		__field(u64, seq)
		__field(u64, latency_ns)
		__field(u32, context)
	),
	TP_fast_assign(
		__entry->seq = seq;
		__entry->latency_ns = latency_ns;
		__entry->context = context;
	),
	TP_printk("seq=%llu context=%s latency_ns=%llu", __entry->seq,
		  __entry->context ? "thread" : "irq", __entry->latency_ns)
);

/* The latency tracer "noise" (latency_noise.c): one period on one CPU. */
TRACE_EVENT(ktrack_osnoise,
	TP_PROTO(const struct kt_osnoise_sample *s),
	TP_ARGS(s),
	TP_STRUCT__entry(
		__field(u64, seq)
		__field(u64, runtime_ns)
		__field(u64, noise_ns)
		__field(u64, max_single_ns)
		__field(u64, irq_count)
		__field(u64, irq_ns)
		__field(u64, softirq_count)
		__field(u64, softirq_ns)
		__field(u64, nmi_count)
		__field(u64, nmi_ns)
		__field(u64, thread_count)
		__field(u64, thread_ns)
		__field(u64, hw_count)
		__field(u64, hw_ns)
	),
	TP_fast_assign(
		__entry->seq = s->seq;
		__entry->runtime_ns = s->runtime_ns;
		__entry->noise_ns = s->noise_ns;
		__entry->max_single_ns = s->max_single_ns;
		__entry->irq_count = s->irq_count;
		__entry->irq_ns = s->irq_ns;
		__entry->softirq_count = s->softirq_count;
		__entry->softirq_ns = s->softirq_ns;
		__entry->nmi_count = s->nmi_count;
		__entry->nmi_ns = s->nmi_ns;
		__entry->thread_count = s->thread_count;
		__entry->thread_ns = s->thread_ns;
		__entry->hw_count = s->hw_count;
		__entry->hw_ns = s->hw_ns;
	),
	TP_printk("seq=%llu runtime_ns=%llu noise_ns=%llu max_single_ns=%llu irq=%llu/%lluns softirq=%llu/%lluns nmi=%llu/%lluns thread=%llu/%lluns hw=%llu/%lluns",
		  __entry->seq, __entry->runtime_ns, __entry->noise_ns, __entry->max_single_ns,
		  __entry->irq_count, __entry->irq_ns, __entry->softirq_count, __entry->softirq_ns,
		  __entry->nmi_count, __entry->nmi_ns, __entry->thread_count, __entry->thread_ns,
		  __entry->hw_count, __entry->hw_ns)
);

#endif /* _KTRACK_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ktrack_trace
#include <trace/define_trace.h>
