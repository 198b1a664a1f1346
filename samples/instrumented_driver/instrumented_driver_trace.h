/* SPDX-License-Identifier: GPL-2.0 */
/*
 * instrumented_driver_trace.h - the driver's own trace events.
 *
 * These are the driver's permanent, documented instrumentation: stable
 * names and fields that any tool (tracefs, trace-cmd, perf, ktrack's
 * 't:' probes) can use without knowing the code.  Only fixed-size fields,
 * so nothing here depends on the kernel version (strings would need the
 * __assign_str() wrapper of samples/trace_events/compat_trace.h).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM instrumented_driver

#if !defined(_INSTRUMENTED_DRIVER_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _INSTRUMENTED_DRIVER_TRACE_H

#include <linux/tracepoint.h>

#include "instrumented_driver_sample.h"

/* Queued and started share their layout: one class, two events. */
DECLARE_EVENT_CLASS(demo_req_class,
	TP_PROTO(const struct demo_req *req),
	TP_ARGS(req),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u32, len)
	),
	TP_fast_assign(
		__entry->id = req->id;
		__entry->len = req->len;
	),
	TP_printk("req=%u len=%u", __entry->id, __entry->len)
);

DEFINE_EVENT(demo_req_class, demo_req_queue,
	TP_PROTO(const struct demo_req *req),
	TP_ARGS(req)
);

DEFINE_EVENT(demo_req_class, demo_req_start,
	TP_PROTO(const struct demo_req *req),
	TP_ARGS(req)
);

TRACE_EVENT(demo_req_done,
	TP_PROTO(const struct demo_req *req, u64 latency_ns),
	TP_ARGS(req, latency_ns),
	TP_STRUCT__entry(
		__field(u32, id)
		__field(u32, len)
		__field(u32, flags)
		__field(u32, csum)
		__field(u64, latency_ns)
	),
	TP_fast_assign(
		__entry->id = req->id;
		__entry->len = req->len;
		__entry->flags = req->flags;
		__entry->csum = req->csum;
		__entry->latency_ns = latency_ns;
	),
	TP_printk("req=%u len=%u flags=%s csum=0x%08x latency_us=%llu",
		  __entry->id, __entry->len,
		  __print_flags(__entry->flags, "|", { DEMO_REQ_BOUNCED, "BOUNCED" }),
		  __entry->csum, __entry->latency_ns / 1000)
);

#endif /* _INSTRUMENTED_DRIVER_TRACE_H */

/* This part must be outside the include guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE instrumented_driver_trace
#include <trace/define_trace.h>
