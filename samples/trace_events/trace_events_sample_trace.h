/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace_events_sample_trace.h - the sample's TRACE_EVENT definitions.
 *
 * This header is read several times: once normally (it declares the
 * trace_<event>() functions the module calls) and, in the one .c file that
 * defines CREATE_TRACE_POINTS, again by <trace/define_trace.h> with the
 * macros redefined at each pass to generate the ring buffer layout, the
 * format file, the output function... That is why the guard below is
 * special: it must let TRACE_HEADER_MULTI_READ through.
 */
#undef TRACE_SYSTEM
/* The directory under /sys/kernel/tracing/events/. */
#define TRACE_SYSTEM trace_events_sample

#if !defined(_TRACE_EVENTS_SAMPLE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_EVENTS_SAMPLE_TRACE_H

#include <linux/string.h>
#include <linux/tracepoint.h>

#include "compat_trace.h"

/* Values for __print_symbolic() and __print_flags(). */
#define SAMPLE_IDLE	0
#define SAMPLE_BUSY	1
#define SAMPLE_DONE	2

#define SAMPLE_FLAG_FIRST	0x1
#define SAMPLE_FLAG_ODD		0x2
#define SAMPLE_FLAG_TENTH	0x4

/*
 * One event that shows every kind of field.  What is stored in the ring
 * buffer is the TP_STRUCT__entry layout; TP_printk() runs only when
 * someone reads the "trace" file, so formatting costs nothing at record
 * time.  (Tools like trace-cmd and perf read the binary layout from the
 * event's "format" file and never call TP_printk(): they re-implement it
 * from the "print fmt" line of that file, and understand only part of C
 * there.  libtraceevent understands sizeof(int) but not sizeof(u32), for
 * example; with the latter, trace-cmd prints "[FAILED TO PARSE]".)
 */
TRACE_EVENT(sample_tick,

	TP_PROTO(u64 seq, const char *who, int state, unsigned long flags,
		 const u32 *values, unsigned int nvalues),

	TP_ARGS(seq, who, state, flags, values, nvalues),

	TP_STRUCT__entry(
		__field(u64, seq)			/* a plain value */
		__string(who, who)			/* a string, sized per event */
		__array(char, tag, 8)			/* fixed size, always 8 bytes */
		__dynamic_array(u32, values, nvalues)	/* sized per event */
		__field(int, state)
		__field(unsigned long, flags)
	),

	TP_fast_assign(
		__entry->seq = seq;
		sample_assign_str(who);
		/* strscpy_pad: no stale stack bytes leak into the buffer. */
		strscpy_pad(__entry->tag, seq & 1 ? "odd" : "even", sizeof(__entry->tag));
		memcpy(__get_dynamic_array(values), values, nvalues * sizeof(u32));
		__entry->state = state;
		__entry->flags = flags;
	),

	TP_printk("seq=%llu who=%s tag=%s values=%s state=%s flags=%s",
		  __entry->seq, __get_str(who), __entry->tag,
		  /* sizeof(int), not sizeof(u32): see the note above. */
		  __print_array(__get_dynamic_array(values),
				__get_dynamic_array_len(values) / sizeof(int), sizeof(int)),
		  __print_symbolic(__entry->state,
				   { SAMPLE_IDLE, "IDLE" },
				   { SAMPLE_BUSY, "BUSY" },
				   { SAMPLE_DONE, "DONE" }),
		  __print_flags(__entry->flags, "|",
				{ SAMPLE_FLAG_FIRST, "FIRST" },
				{ SAMPLE_FLAG_ODD, "ODD" },
				{ SAMPLE_FLAG_TENTH, "TENTH" }))
);

/*
 * An event class: several events with the same layout share one set of
 * generated code (each TRACE_EVENT costs a few KB of text; a DEFINE_EVENT
 * of an existing class costs far less).
 */
DECLARE_EVENT_CLASS(sample_state_class,

	TP_PROTO(u64 seq, int state),

	TP_ARGS(seq, state),

	TP_STRUCT__entry(
		__field(u64, seq)
		__field(int, state)
	),

	TP_fast_assign(
		__entry->seq = seq;
		__entry->state = state;
	),

	TP_printk("seq=%llu state=%s", __entry->seq,
		  __print_symbolic(__entry->state,
				   { SAMPLE_IDLE, "IDLE" },
				   { SAMPLE_BUSY, "BUSY" },
				   { SAMPLE_DONE, "DONE" }))
);

DEFINE_EVENT(sample_state_class, sample_work_begin,
	TP_PROTO(u64 seq, int state),
	TP_ARGS(seq, state)
);

DEFINE_EVENT(sample_state_class, sample_work_end,
	TP_PROTO(u64 seq, int state),
	TP_ARGS(seq, state)
);

/*
 * A conditional event: TP_CONDITION is tested after the "is anyone
 * listening" static branch, inside the tracepoint, so the caller does not
 * pay for the test when the event is off, and the caller's code does not
 * need an if() around trace_sample_tenth().
 */
TRACE_EVENT_CONDITION(sample_tenth,

	TP_PROTO(u64 seq),

	TP_ARGS(seq),

	TP_CONDITION(seq % 10 == 0),

	TP_STRUCT__entry(
		__field(u64, seq)
	),

	TP_fast_assign(
		__entry->seq = seq;
	),

	TP_printk("seq=%llu is a multiple of ten", __entry->seq)
);

/*
 * An event with register/unregister callbacks: the kernel calls
 * sample_on_demand_reg() when the first user enables the event (tracefs,
 * perf, a BPF program...) and sample_on_demand_unreg() when the last one
 * goes away.  We use them to run a worker only while someone listens:
 * work that exists only to feed a trace costs nothing when nobody traces.
 */
int sample_on_demand_reg(void);
void sample_on_demand_unreg(void);

TRACE_EVENT_FN(sample_on_demand,

	TP_PROTO(unsigned int round),

	TP_ARGS(round),

	TP_STRUCT__entry(
		__field(unsigned int, round)
	),

	TP_fast_assign(
		__entry->round = round;
	),

	TP_printk("round=%u", __entry->round),

	sample_on_demand_reg, sample_on_demand_unreg
);

#endif /* _TRACE_EVENTS_SAMPLE_TRACE_H */

/* This part must be outside the guard: define_trace.h re-reads the file. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace_events_sample_trace
#include <trace/define_trace.h>
