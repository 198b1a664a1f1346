/* SPDX-License-Identifier: GPL-2.0 */
/* One event for trace_events_proprietary.c (see there). */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM trace_events_proprietary

#if !defined(_TRACE_EVENTS_PROPRIETARY_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_EVENTS_PROPRIETARY_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(proprietary_hello,
	TP_PROTO(int n),
	TP_ARGS(n),
	TP_STRUCT__entry(
		__field(int, n)
	),
	TP_fast_assign(
		__entry->n = n;
	),
	TP_printk("n=%d", __entry->n)
);

#endif /* _TRACE_EVENTS_PROPRIETARY_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace_events_proprietary_trace
#include <trace/define_trace.h>
