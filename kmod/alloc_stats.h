/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktrack's own allocation counters: what ktrack holds right now, by kind.
 * /sys/kernel/debug/ktrack/allocations prints one "name count" line per
 * kind; with every file closed and every named session destroyed, all are
 * zero (the fuzzer and the churn stress check it).  At unload a non-zero
 * counter is reported as a leak.
 *
 * Counting is an atomic_long_add beside each allocation and free: callers
 * may be in any context.
 */
#ifndef KTRACK_ALLOC_STATS_H
#define KTRACK_ALLOC_STATS_H

enum kt_alloc_kind {
	KT_ALLOC_SESSIONS,	/* struct ktrack_session */
	KT_ALLOC_RINGS,		/* struct ktrack_ring (one per CPU per session) */
	KT_ALLOC_RING_PAGES,	/* pages of rings: control + data */
	KT_ALLOC_PROBES,	/* struct kt_probe */
	KT_ALLOC_OBJ_TABLES,	/* objtrace tables (one per configured session) */
	KT_ALLOC_SNAPSHOT_PAGES,	/* pages of snapshot copies held (snapshot.c) */
	KT_ALLOC_NR
};

void kt_alloc_add(enum kt_alloc_kind kind, long n);
int kt_alloc_stats_init(void);
void kt_alloc_stats_exit(void);

#endif
