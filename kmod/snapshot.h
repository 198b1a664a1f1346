/* SPDX-License-Identifier: GPL-2.0 */
/*
 * snapshot.h - a session's snapshot slot (the SNAPSHOT action; see
 * snapshot.c for the design).
 */
#ifndef _KTRACK_SNAPSHOT_H
#define _KTRACK_SNAPSHOT_H

#include <linux/atomic.h>
#include <linux/irq_work.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct ktrack_session;

/* ktrack_snap.state */
#define KT_SNAP_IDLE		0	/* free: an action may claim it */
#define KT_SNAP_REQUESTED	1	/* claimed: the copy is queued or running */
#define KT_SNAP_READY		2	/* copied: waits for SNAPSHOT_GET */
#define KT_SNAP_TAKING		3	/* SNAPSHOT_GET copies it out */

struct ktrack_snap {
	atomic_t state;			/* KT_SNAP_*: moved by cmpxchg from handlers */
	/* Set by the action that claimed the slot, read by the copy. */
	u64 ts;
	u64 nth;
	u32 probe_id;
	struct irq_work irq;		/* queue_work() is not NMI-safe */
	struct work_struct work;	/* the copy: process context */
	atomic64_t missed;
	/* Under 'lock': the copy made, until SNAPSHOT_GET takes it. */
	struct mutex lock;
	void *buf;
	u64 len;
	u64 records;
	u64 seq;
	u32 flags;			/* KTRACK_SNAP_F_* of the copy held */
	unsigned long pages;		/* charged to max_total_pages */
};

void ktrack_snapshot_init(struct ktrack_session *s);
/* With the session (last reference): waits for a copy in flight; sleeps. */
void ktrack_snapshot_free(struct ktrack_session *s);
/*
 * START of a new run (s->lock held): a copy of the last run nobody took is
 * dropped, and seq and missed count from zero again.
 */
void ktrack_snapshot_new_run(struct ktrack_session *s);
/* KTRACK_STATS_F_SNAP_* of the slot now. */
u32 ktrack_snapshot_stats_flags(struct ktrack_session *s);
/* KTRACK_IOC_SNAPSHOT_GET; no session lock held. */
long ktrack_snapshot_get(struct ktrack_session *s, void __user *arg);

#endif /* _KTRACK_SNAPSHOT_H */
