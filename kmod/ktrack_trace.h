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

DEFINE_EVENT(ktrack_session_class, ktrack_session_open,
	TP_PROTO(u64 id, const char *name),
	TP_ARGS(id, name));

DEFINE_EVENT(ktrack_session_class, ktrack_session_close,
	TP_PROTO(u64 id, const char *name),
	TP_ARGS(id, name));

#endif /* _KTRACK_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ktrack_trace
#include <trace/define_trace.h>
