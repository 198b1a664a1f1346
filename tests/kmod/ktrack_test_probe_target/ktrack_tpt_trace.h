/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test module's own trace events (system "ktrack_tpt"), fired by
 * "tp N" with known values: t probes on module tracepoints.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM ktrack_tpt

#if !defined(_KTRACK_TPT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KTRACK_TPT_TRACE_H

#include <linux/tracepoint.h>

/*
 * The "rebuilt" module (tests/kmod/ktrack_test_probe_target_v2, the same
 * module built with KTRACK_TPT_V2) lays ktrack_tpt_hit out anew: a field
 * before the others moves every offset.
 */
#ifdef KTRACK_TPT_V2
#define TPT_V2_FIELD	__field(u64, v2)
#define TPT_V2_ASSIGN	(__entry->v2 = 2)
#else
#define TPT_V2_FIELD
#define TPT_V2_ASSIGN	((void)0)
#endif

/* One per "tp N" round: seq 0..N-1, magic and the constant label. */
TRACE_EVENT(ktrack_tpt_hit,
	TP_PROTO(int seq, u64 magic, const char *label),
	TP_ARGS(seq, magic, label),
	TP_STRUCT__entry(
		TPT_V2_FIELD
		__field(int, seq)
		__field(u64, magic)
	),
	TP_fast_assign(
		TPT_V2_ASSIGN;
		__entry->seq = seq;
		__entry->magic = magic;
	),
	TP_printk("seq=%d magic=0x%llx", __entry->seq, __entry->magic)
);

/* Once per "tp N" command: how many hits it fired. */
TRACE_EVENT(ktrack_tpt_done,
	TP_PROTO(unsigned int count, long sum),
	TP_ARGS(count, sum),
	TP_STRUCT__entry(
		__field(unsigned int, count)
		__field(long, sum)
	),
	TP_fast_assign(
		__entry->count = count;
		__entry->sum = sum;
	),
	TP_printk("count=%u sum=%ld", __entry->count, __entry->sum)
);

#endif /* _KTRACK_TPT_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE ktrack_tpt_trace
#include <trace/define_trace.h>
