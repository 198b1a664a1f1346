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

#endif /* _KTRACK_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ktrack_trace
#include <trace/define_trace.h>
