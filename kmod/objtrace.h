/* SPDX-License-Identifier: GPL-2.0 */
/*
 * objtrace.h - the object tracker's internal interfaces (objtrace_*.c):
 *   objtrace_table.c   tracked-object table (lock-free lookup);
 *   objtrace_hook.c    tracking, hits and their records, the function-entry hooks;
 *   objtrace_funcs.c   address-given function sets (validation, ftrace_ops groups);
 *   objtrace_free.c    free hooks (kfree, kmem_cache_free[_bulk], vfree, destructor);
 *   objtrace_source.c  kprobe/kretprobe sources;
 *   objtrace_module.c  hooked functions of a module that goes;
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
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/trace_recursion.h>
#include <linux/types.h>

#include <uapi/ktrack.h>
#include "ktrack_internal.h"

/* Entries of an address-given set closer than this name one function. */
#define OBJTRACE_SAME_FUNC	8

/* The state bits of objtrace_obj.ls */
#define OBJTRACE_FREE	0	/* on a free list */
#define OBJTRACE_LIVE	1	/* in the table, tracked */
#define OBJTRACE_DEAD	2	/* life ended, waiting to be unlinked */
#define OBJTRACE_STATE_BITS	2
#define OBJTRACE_LS(life, state)	((s64)((life) << OBJTRACE_STATE_BITS | (state)))
#define OBJTRACE_LS_STATE(ls)	((unsigned int)(ls) & ((1U << OBJTRACE_STATE_BITS) - 1))
#define OBJTRACE_LS_LIFE(ls)	((u64)(ls) >> OBJTRACE_STATE_BITS)

/*
 * One tracked life.  Entries come from a preallocated pool.  Lookups run
 * lock-free over hlist_nulls chains with preemption disabled (an RCU
 * read-side section), and an entry unlinked from the table goes back to the
 * pool only a grace period later: a handler that found an entry keeps
 * looking at the same life (or at its end) until it returns, so it never
 * bumps, rewrites or ends the life of another object that reused the entry
 * (ABA).  Life and state share one atomic64 so that ending a life is a
 * cmpxchg that names the life it ends.
 */
struct objtrace_obj {
	struct hlist_nulls_node node;
	unsigned long key;		/* object address; 0 when free */
	atomic64_t ls;			/* OBJTRACE_LS(life, state) */
	atomic_t hits;
	u64 born;			/* session clock at track time */
	u64 born_mono;			/* ktime_get_mono_fast_ns(), for max_age */
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
	struct objtrace_obj *free_list;	/* under lock: reusable now */
	struct objtrace_obj *limbo;	/* under lock: unlinked, no grace period yet */
	struct objtrace_obj *gp_batch;	/* under lock: waiting for 'rcu' */
	bool gp_pending;		/* under lock: 'rcu' is queued */
	raw_spinlock_t lock;		/* writers only */
	atomic_t nr_live;
	struct llist_head dead;
	struct irq_work reclaim;
	struct rcu_head rcu;
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

/* The free hooks (objtrace_free.c), in registration order. */
enum {
	OBJTRACE_FREE_KFREE,		/* kfree(ptr) */
	OBJTRACE_FREE_CACHE,		/* kmem_cache_free(s, ptr) */
	OBJTRACE_FREE_BULK,		/* kmem_cache_free_bulk(s, nr, ptrs) */
	OBJTRACE_FREE_VFREE,		/* vfree(ptr) */
	OBJTRACE_FREE_DTOR,		/* cfg.destructor(..., ptr, ...) */
	OBJTRACE_NR_FREE
};

struct objtrace_free_hook {
	struct ftrace_ops ops;
	struct objtrace_state *st;
	unsigned int kind;		/* OBJTRACE_FREE_* */
	bool used, reg;
};

/*
 * One group of an address-given function set (KTRACK_OBJF_FUNC_ADDRS): the
 * functions that check the same arguments share an ftrace_ops.
 */
struct objtrace_fset {
	struct ftrace_ops ops;
	struct objtrace_state *st;
	unsigned long *ips;		/* the group's functions (objtrace_module.c) */
	unsigned int nr_ips;
	u8 mask;			/* arguments to check */
	bool reg;
	bool gone;			/* all its functions went with their module */
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
	struct objtrace_free_hook free_hooks[OBJTRACE_NR_FREE];
	bool ops_reg;

	struct objtrace_source *sources[KTRACK_OBJ_MAX_SOURCES];
	unsigned int nr_sources;

	/*
	 * A hooked function's module went (objtrace_module.c): the hooks no
	 * longer name what was configured, so ENABLE and ADD_SOURCE are
	 * ESTALE until the next OBJ_CONFIG (a new state).
	 */
	bool module_gone;
	u32 funcs_gone;			/* hooked functions that went */
};

/* objtrace_table.c */
int objtrace_table_init(struct objtrace_table *t, unsigned int capacity);
void objtrace_table_destroy(struct objtrace_table *t);
struct objtrace_obj *objtrace_table_lookup(struct objtrace_table *t,
					   unsigned long key, u64 *life);
int objtrace_table_insert(struct objtrace_table *t, unsigned long key,
			  u64 born, bool may_spin, struct objtrace_obj **out);
bool objtrace_table_kill(struct objtrace_table *t, struct objtrace_obj *obj, u64 life);
void objtrace_table_reclaim(struct objtrace_table *t);
void objtrace_table_drain(struct objtrace_table *t);
u64 objtrace_next_life(void);

/* objtrace_hook.c */
int objtrace_track(struct objtrace_state *st, unsigned long addr, u32 source,
		   unsigned long ip, u64 parent_life, u64 *life);
bool objtrace_untrack(struct objtrace_state *st, unsigned long addr, u32 reason,
		      unsigned long ip, unsigned long parent_ip);
void objtrace_untrack_all(struct objtrace_state *st, u32 reason);
bool objtrace_untrack_hooked(struct objtrace_state *st, unsigned long addr, u32 reason,
			     unsigned long ip, unsigned long parent_ip);
int objtrace_hooks_prepare(struct objtrace_state *st);
int objtrace_hooks_register(struct objtrace_state *st);
void objtrace_hooks_unregister(struct objtrace_state *st);
void objtrace_hooks_free(struct objtrace_state *st);

void objtrace_fset_func(unsigned long ip, unsigned long parent_ip,
			struct ftrace_ops *op, struct ftrace_regs *fregs);

/* objtrace_funcs.c */
int objtrace_funcs_check(const struct ktrack_obj_func *funcs, unsigned int n,
			 unsigned int nr_args);
int objtrace_fsets_prepare(struct objtrace_state *st);
void objtrace_fsets_free(struct objtrace_state *st);

/* objtrace_free.c */
int objtrace_free_prepare(struct objtrace_state *st);
int objtrace_free_register(struct objtrace_state *st);
void objtrace_free_unregister(struct objtrace_state *st);
void objtrace_free_release(struct objtrace_state *st);

/* objtrace_module.c */
void objtrace_module_going(struct objtrace_state *st, struct module *mod);

/* objtrace_main.c (objtrace_mutex held) */
int objtrace_enable(struct objtrace_state *st);
void objtrace_disable(struct objtrace_state *st);

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

/*
 * The start of every hook: returns at once (-1) when nothing is tracked (the
 * cost is this one load), or when ftrace's recursion lock or the tracker's
 * own guard says we are inside ourselves (counted); else the recursion bit
 * for objtrace_hook_exit().
 */
static __always_inline int objtrace_hook_enter(struct objtrace_state *st, unsigned long ip,
					       unsigned long parent_ip)
{
	int bit;

	if (!atomic_read(&st->table.nr_live))
		return -1;
	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (bit < 0) {
		this_cpu_inc(st->pcpu->recursion);
		return -1;
	}
	if (!objtrace_guard_enter()) {
		this_cpu_inc(st->pcpu->recursion);
		ftrace_test_recursion_unlock(bit);
		return -1;
	}
	return bit;
}

static __always_inline void objtrace_hook_exit(int bit)
{
	objtrace_guard_exit();
	ftrace_test_recursion_unlock(bit);
}

/* A value that may point to a kernel object (cheap pre-filter). */
static __always_inline bool objtrace_kptr(unsigned long v)
{
	return v >= TASK_SIZE_MAX && !IS_ERR_VALUE(v);
}

/* Enabled states configured with KTRACK_OBJF_API (objtrace_main.c; RCU). */
extern struct list_head objtrace_api_states;

#endif /* _KTRACK_OBJTRACE_INTERNAL_H */
