/* SPDX-License-Identifier: GPL-2.0 */
/*
 * objtrace.h - the object tracker's internal interfaces (objtrace_*.c):
 *   objtrace_table.c   tracked-object table (lock-free lookup);
 *   objtrace_hook.c    function-entry hook, free hooks, records;
 *   objtrace_source.c  kprobe/kretprobe sources;
 *   objtrace_main.c    per-session state, ioctls, exported API.
 */
#ifndef _KTRACK_OBJTRACE_INTERNAL_H
#define _KTRACK_OBJTRACE_INTERNAL_H

#include <linux/atomic.h>
#include <linux/ftrace.h>
#include <linux/irq_work.h>
#include <linux/kprobes.h>
#include <linux/list.h>
#include <linux/list_nulls.h>
#include <linux/llist.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include <uapi/ktrack.h>
#include "ktrack_internal.h"

/* Entries of an address-given set closer than this name one function. */
#define OBJTRACE_SAME_FUNC	8

/* objtrace_obj.state */
#define OBJTRACE_FREE	0	/* on the free list */
#define OBJTRACE_LIVE	1	/* in the table, tracked */
#define OBJTRACE_DEAD	2	/* life ended, waiting to be unlinked */

/*
 * One tracked life.  Entries come from a preallocated pool and are recycled
 * without a grace period: lookups run lock-free over hlist_nulls chains, and
 * a reader that followed a recycled entry into another chain notices it by
 * the chain's nulls value and restarts (the SLAB_TYPESAFE_BY_RCU pattern).
 */
struct objtrace_obj {
	struct hlist_nulls_node node;
	unsigned long key;		/* object address; 0 when free */
	u64 life;
	atomic_t state;			/* OBJTRACE_* */
	atomic_t hits;
	u64 born;			/* session clock at track time */
	unsigned long derived;		/* last derived pointer followed */
	/*
	 * Changes-only bookkeeping.  Updated without a lock: two CPUs hitting
	 * the same object at once may interleave their updates.
	 */
	u64 last_vals[KTRACK_OBJ_MAX_WATCH];
	u64 last_ts;
	unsigned long last_ip;
	u32 last_cpu;
	u32 last_valid;
	struct llist_node dead;		/* reclaim queue */
	struct objtrace_obj *next_free;
};

struct objtrace_table {
	struct hlist_nulls_head *buckets;
	unsigned int bits;
	unsigned int capacity;
	struct objtrace_obj *pool;
	struct objtrace_obj *free_list;	/* under lock */
	raw_spinlock_t lock;		/* writers only */
	atomic_t nr_live;
	struct llist_head dead;
	struct irq_work reclaim;
};

struct objtrace_pcpu {
	u64 hits;
	u64 hits_recorded;
	u64 hits_unchanged;
	u64 rec_lost;
	u64 recursion;
};

struct objtrace_source {
	struct ktrack_obj_source desc;
	struct kretprobe krp;		/* KTRACK_OBJ_SRC_RETVAL */
	struct kprobe kp;		/* KTRACK_OBJ_SRC_ARG */
	struct objtrace_state *st;
	bool registered;
};

/*
 * One group of an address-given function set (KTRACK_OBJF_FUNC_ADDRS): the
 * functions that check the same arguments share an ftrace_ops.
 */
struct objtrace_fset {
	struct ftrace_ops ops;
	struct objtrace_state *st;
	u8 mask;			/* arguments to check */
	bool reg;
};

/* Per-session object tracker. */
struct objtrace_state {
	struct list_head node;		/* objtrace_states, under objtrace_mutex */
	struct list_head api_node;	/* objtrace_api_states (RCU) while enabled */
	struct ktrack_session *sess;
	bool configured;
	bool enabled;
	struct ktrack_obj_config cfg;
	char *functions;		/* NUL-terminated copy of the globs */
	unsigned int nr_functions;
	struct objtrace_table table;
	struct objtrace_pcpu __percpu *pcpu;
	atomic64_t dropped[KTRACK_OBJ_DROP_MAX];
	atomic64_t ended[KTRACK_OBJ_END_MAX];
	atomic64_t lives;

	struct ftrace_ops ops;		/* the hooked function set (globs) */
	struct objtrace_fset *fsets;	/* or these (KTRACK_OBJF_FUNC_ADDRS) */
	unsigned int nr_fsets;
	struct ktrack_obj_func *funcs;	/* the entries, until hooks_prepare */
	struct ftrace_ops kfree_ops;	/* kfree(ptr) */
	struct ftrace_ops cache_free_ops;	/* kmem_cache_free(s, ptr) */
	struct ftrace_ops dtor_ops;	/* cfg.destructor(..., ptr, ...) */
	bool kfree_reg, cache_free_reg, dtor_reg, ops_reg;

	struct objtrace_source *sources[KTRACK_OBJ_MAX_SOURCES];
	unsigned int nr_sources;
};

/* objtrace_table.c */
int objtrace_table_init(struct objtrace_table *t, unsigned int capacity);
void objtrace_table_destroy(struct objtrace_table *t);
struct objtrace_obj *objtrace_table_lookup(struct objtrace_table *t,
					   unsigned long key, u64 *life);
int objtrace_table_insert(struct objtrace_table *t, unsigned long key,
			  u64 born, bool may_spin, struct objtrace_obj **out);
bool objtrace_table_kill(struct objtrace_table *t, struct objtrace_obj *obj);
void objtrace_table_reclaim(struct objtrace_table *t);
u64 objtrace_next_life(void);

/* objtrace_hook.c */
int objtrace_track(struct objtrace_state *st, unsigned long addr, u32 source,
		   unsigned long ip, u64 parent_life, u64 *life);
bool objtrace_untrack(struct objtrace_state *st, unsigned long addr, u32 reason,
		      unsigned long ip, unsigned long parent_ip);
void objtrace_untrack_all(struct objtrace_state *st, u32 reason);
int objtrace_hooks_prepare(struct objtrace_state *st);
int objtrace_funcs_check(const struct ktrack_obj_func *funcs, unsigned int n,
			 unsigned int nr_args);
int objtrace_hooks_register(struct objtrace_state *st);
void objtrace_hooks_unregister(struct objtrace_state *st);
void objtrace_hooks_free(struct objtrace_state *st);

/* objtrace_source.c */
int objtrace_source_check(const struct ktrack_obj_source *desc);
int objtrace_sources_register(struct objtrace_state *st);
void objtrace_sources_unregister(struct objtrace_state *st);

/*
 * Guard against the tracker's own calls.  ftrace's recursion lock lets one
 * nested entry through per context (its "transition" bit, for an interrupt
 * that arrives before preempt_count says so), so a hooked function that the
 * tracker itself calls (copy_from_kernel_nofault() with the object address,
 * the ring buffer, ...) would be recorded as a hit of the object, and a hit
 * inside a hit.  Every entry into the tracker (hooks, sources, ioctls, the
 * driver API) holds this per-CPU, per-context-level flag; a hook that finds
 * it set returns at once.  Preemption is disabled by the callers.
 */
struct objtrace_busy {
	u8 level[4];		/* task, softirq, hardirq, NMI */
};
DECLARE_PER_CPU(struct objtrace_busy, objtrace_busy);

static __always_inline bool objtrace_guard_enter(void)
{
	u8 *b = &this_cpu_ptr(&objtrace_busy)->level[interrupt_context_level()];

	if (READ_ONCE(*b))
		return false;
	WRITE_ONCE(*b, 1);
	barrier();
	return true;
}

static __always_inline void objtrace_guard_exit(void)
{
	barrier();
	WRITE_ONCE(this_cpu_ptr(&objtrace_busy)->level[interrupt_context_level()], 0);
}

/* A value that may point to a kernel object (cheap pre-filter). */
static __always_inline bool objtrace_kptr(unsigned long v)
{
	return v >= TASK_SIZE_MAX && !IS_ERR_VALUE(v);
}

#endif /* _KTRACK_OBJTRACE_INTERNAL_H */
