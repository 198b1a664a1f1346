// SPDX-License-Identifier: GPL-2.0
/*
 * objtrace_hook.c - starting and ending lives, hits, the records they write,
 * and the function-entry hook (one ftrace_ops filtered to the chosen
 * function set, on both 6.1 and 6.12; or one per argument mask of an
 * address-given set, objtrace_funcs.c).  The free hooks are in
 * objtrace_free.c.
 *
 * Every handler here runs at the entry of arbitrary kernel functions: it is
 * notrace, guarded by ftrace_test_recursion_trylock(), never sleeps, never
 * allocates and takes no lock on the hit path.
 */
#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/trace_recursion.h>
#include <linux/uaccess.h>

#include <linux/ktime.h>

#include "objtrace.h"
#include "compat_ftrace.h"

/* Read the watched values of 'addr'; returns the fault mask. */
static notrace u8 objtrace_read_values(const struct objtrace_state *st,
				       unsigned long addr, u64 *vals)
{
	const struct ktrack_obj_config *cfg = &st->cfg;
	u8 fault = 0;
	unsigned int i;

	for (i = 0; i < cfg->nr_watch; i++) {
		const void *src = (const void *)(addr + cfg->watch[i].offset);
		u64 v = 0;

		/* Little-endian: a short read fills the low bytes of v. */
		if (copy_from_kernel_nofault(&v, src, cfg->watch[i].size))
			fault |= 1U << i;
		vals[i] = v;
	}
	return fault;
}

/* Reserve a zeroed record; a full ring counts it lost and returns NULL. */
static notrace void *objtrace_reserve(struct objtrace_state *st, u16 type, u32 size,
				      struct ktrack_reservation *res)
{
	void *r = ktrack_ring_reserve(st->sess, type, size, res);

	if (r)
		memset(r, 0, size);
	else
		this_cpu_inc(st->pcpu->rec_lost);
	return r;
}

static notrace void objtrace_emit_track(struct objtrace_state *st, unsigned long addr,
					u64 life, u32 source, unsigned long ip,
					u64 parent_life, const u64 *vals, u8 fault)
{
	struct ktrack_reservation res;
	struct ktrack_rec_obj_track *r;

	r = objtrace_reserve(st, KTRACK_REC_OBJ_TRACK, sizeof(*r), &res);
	if (!r)
		return;
	r->obj = addr;
	r->life = life;
	r->ip = ip;
	r->parent_life = parent_life;
	r->source = source;
	r->nr_values = st->cfg.nr_watch;
	r->fault_mask = fault;
	memcpy(r->values, vals, sizeof(r->values));
	ktrack_ring_commit(st->sess, &res);
}

static notrace void objtrace_emit_untrack(struct objtrace_state *st, unsigned long addr,
					  u64 life, u64 hits, u32 reason,
					  unsigned long ip, unsigned long parent_ip)
{
	struct ktrack_rec_obj_untrack *r;
	struct ktrack_reservation res;

	r = objtrace_reserve(st, KTRACK_REC_OBJ_UNTRACK, sizeof(*r), &res);
	if (!r)
		return;
	r->obj = addr;
	r->life = life;
	r->ip = ip;
	r->parent_ip = parent_ip;
	r->hits = hits;
	r->reason = reason;
	ktrack_ring_commit(st->sess, &res);
}

static notrace void objtrace_end(struct objtrace_state *st, struct objtrace_obj *obj,
				 unsigned long addr, u64 life, u32 reason,
				 unsigned long ip, unsigned long parent_ip)
{
	if (!objtrace_table_kill(&st->table, obj, life))
		return;
	atomic64_inc(&st->ended[reason]);
	objtrace_emit_untrack(st, addr, life, atomic_read(&obj->hits), reason,
			      ip, parent_ip);
}

static const u8 objtrace_drop_of_errno[] = {
	[EEXIST] = KTRACK_OBJ_DROP_DUP,
	[ENOSPC] = KTRACK_OBJ_DROP_FULL,
	[EBUSY] = KTRACK_OBJ_DROP_BUSY,
	[EFAULT] = KTRACK_OBJ_DROP_BADPTR,
};

/*
 * Start a life for 'addr' (any context).  Returns 0 and the life id, or a
 * negative errno whose reason is counted in stats.dropped[].
 */
static notrace int __objtrace_track(struct objtrace_state *st, unsigned long addr,
				   u32 source, unsigned long ip, u64 parent_life, u64 *life)
{
	u64 vals[KTRACK_OBJ_MAX_WATCH] = { 0 };
	struct objtrace_obj *obj;
	u64 now = ktrack_session_clock(st->sess);
	u64 nlife;
	char probe;
	u8 fault;
	int ret;

	if (!objtrace_kptr(addr) ||
	    copy_from_kernel_nofault(&probe, (const void *)addr, 1))
		ret = -EFAULT;
	else
		ret = objtrace_table_insert(&st->table, addr, now,
					    source != KTRACK_OBJ_SRC_DERIVED, &obj);
	/*
	 * An allocator (a return-value source, or a driver's
	 * ktrack_obj_track()) handing out an address that is still tracked
	 * means the old object was freed by a path no hook saw (a
	 * SLAB_TYPESAFE_BY_RCU reuse, free_pages(), ...): end the old life
	 * (REUSE) and start a new one, rather than let the new object's hits
	 * continue the old life.  An argument source or a derived pointer may
	 * name the same object again, so for them it stays a duplicate.
	 */
	if (ret == -EEXIST &&
	    (source == KTRACK_OBJ_SRC_RETVAL || source == KTRACK_OBJ_SRC_API)) {
		u64 olife;
		struct objtrace_obj *old = objtrace_table_lookup(&st->table, addr, &olife);

		if (old)
			objtrace_end(st, old, addr, olife, KTRACK_OBJ_END_REUSE, ip, 0);
		ret = objtrace_table_insert(&st->table, addr, now, true, &obj);
	}
	if (ret) {
		atomic64_inc(&st->dropped[objtrace_drop_of_errno[-ret]]);
		return ret;
	}
	/* Ours until a grace period after its end: the life cannot change. */
	nlife = OBJTRACE_LS_LIFE(atomic64_read(&obj->ls));
	atomic64_inc(&st->lives);
	fault = objtrace_read_values(st, addr, vals);
	/* Changes-only compares the first hit with the values at track time. */
	memcpy(obj->last_vals, vals, sizeof(vals));
	obj->last_ts = now;
	obj->last_ip = ip;
	obj->last_cpu = raw_smp_processor_id();
	obj->last_valid = 1;
	if (life)
		*life = nlife;
	objtrace_emit_track(st, addr, nlife, source, ip, parent_life, vals, fault);
	return 0;
}

/* End the life of 'addr', if tracked, from a hook that holds the guard. */
notrace bool objtrace_untrack_hooked(struct objtrace_state *st, unsigned long addr,
				     u32 reason, unsigned long ip, unsigned long parent_ip)
{
	struct objtrace_obj *obj;
	u64 life;

	if (!atomic_read(&st->table.nr_live))
		return false;
	obj = objtrace_table_lookup(&st->table, addr, &life);
	if (!obj)
		return false;
	objtrace_end(st, obj, addr, life, reason, ip, parent_ip);
	return true;
}

DEFINE_PER_CPU(struct objtrace_busy, objtrace_busy);

/*
 * Entries from outside the hook (ioctls, sources, the driver API): hold the
 * guard, so that the hooked functions the tracker calls are not hits.
 * -EBUSY (counted) when the tracker is already running on this CPU at this
 * context level, e.g. a source probe inside a function the hook calls.
 */
notrace int objtrace_track(struct objtrace_state *st, unsigned long addr, u32 source,
			   unsigned long ip, u64 parent_life, u64 *life)
{
	int ret = -EBUSY;

	preempt_disable_notrace();
	if (objtrace_guard_enter()) {
		ret = __objtrace_track(st, addr, source, ip, parent_life, life);
		objtrace_guard_exit();
	} else {
		atomic64_inc(&st->dropped[KTRACK_OBJ_DROP_BUSY]);
	}
	preempt_enable_notrace();
	return ret;
}

notrace bool objtrace_untrack(struct objtrace_state *st, unsigned long addr, u32 reason,
			      unsigned long ip, unsigned long parent_ip)
{
	bool ret = false;

	preempt_disable_notrace();
	if (objtrace_guard_enter()) {
		ret = objtrace_untrack_hooked(st, addr, reason, ip, parent_ip);
		objtrace_guard_exit();
	}
	preempt_enable_notrace();
	return ret;
}

/* End every life (ioctl context), then give the entries back at once. */
void objtrace_untrack_all(struct objtrace_state *st, u32 reason)
{
	struct objtrace_table *t = &st->table;
	unsigned int i;

	for (i = 0; i < t->capacity; i++) {
		struct objtrace_obj *obj = &t->pool[i];
		unsigned long key;
		s64 ls;

		/*
		 * Read {life, state} and the key in one preempt-off section (a
		 * grace period keeps the entry's life from changing under it),
		 * and end only the life read here.
		 */
		preempt_disable();
		ls = atomic64_read_acquire(&obj->ls);
		key = READ_ONCE(obj->key);
		/* Task context of an ioctl: nothing else of ours runs here. */
		if (OBJTRACE_LS_STATE(ls) == OBJTRACE_LIVE && objtrace_guard_enter()) {
			objtrace_end(st, obj, key, OBJTRACE_LS_LIFE(ls), reason, 0, 0);
			objtrace_guard_exit();
		}
		preempt_enable();
	}
	objtrace_table_drain(t);
}

static notrace void objtrace_follow(struct objtrace_state *st, struct objtrace_obj *obj,
				    unsigned long addr, u64 life)
{
	unsigned long p;

	if (copy_from_kernel_nofault(&p, (const void *)(addr + st->cfg.derive_offset),
				     sizeof(p)) ||
	    !objtrace_kptr(p) || p == READ_ONCE(obj->derived))
		return;
	WRITE_ONCE(obj->derived, p);
	__objtrace_track(st, p, KTRACK_OBJ_SRC_DERIVED, 0, life, NULL);
}

static notrace void objtrace_hit(struct objtrace_state *st, struct objtrace_obj *obj,
				 unsigned long addr, u64 life, unsigned int arg,
				 unsigned long ip, unsigned long parent_ip)
{
	const struct ktrack_obj_config *cfg = &st->cfg;
	u64 vals[KTRACK_OBJ_MAX_WATCH] = { 0 };
	struct ktrack_rec_obj_hit *r;
	struct ktrack_reservation res;
	u32 flags = 0, hit;
	u64 now;
	s64 age;
	u8 fault;

	hit = atomic_inc_return(&obj->hits);
	this_cpu_inc(st->pcpu->hits);
	now = ktrack_session_clock(st->sess);
	/*
	 * The age is measured on one clock for all CPUs (the session clock may
	 * be the per-CPU local_clock, which can lag on this CPU behind the one
	 * that tracked the object), and compared signed: a hit that looks a
	 * few ns older than its birth is young, not 2^64 ns old.
	 */
	age = ktime_get_mono_fast_ns() - obj->born_mono;
	if (cfg->max_age_ns && age > 0 && (u64)age > cfg->max_age_ns) {
		objtrace_end(st, obj, addr, life, KTRACK_OBJ_END_AGE, ip, parent_ip);
		return;
	}
	fault = objtrace_read_values(st, addr, vals);
	if (obj->last_valid && memcmp(vals, obj->last_vals, sizeof(vals)))
		flags |= KTRACK_OBJ_HITF_CHANGED;
	if ((cfg->flags & KTRACK_OBJF_CHANGES_ONLY) && !(flags & KTRACK_OBJ_HITF_CHANGED) &&
	    cfg->nr_watch) {
		this_cpu_inc(st->pcpu->hits_unchanged);
		obj->last_ts = now;
		obj->last_ip = ip;
		obj->last_cpu = raw_smp_processor_id();
		goto limits;
	}
	r = objtrace_reserve(st, KTRACK_REC_OBJ_HIT, sizeof(*r), &res);
	if (r) {
		r->obj = addr;
		r->life = life;
		r->ip = ip;
		r->parent_ip = parent_ip;
		r->hit = hit;
		r->arg = arg;
		r->nr_values = cfg->nr_watch;
		r->fault_mask = fault;
		if (obj->last_valid && (cfg->flags & KTRACK_OBJF_CHANGES_ONLY)) {
			flags |= KTRACK_OBJ_HITF_PREV;
			r->prev_cpu = obj->last_cpu;
			r->prev_ts = obj->last_ts;
			r->prev_ip = obj->last_ip;
		}
		r->flags = flags;
		memcpy(r->values, vals, sizeof(vals));
		ktrack_ring_commit(st->sess, &res);
		this_cpu_inc(st->pcpu->hits_recorded);
	}
	memcpy(obj->last_vals, vals, sizeof(vals));
	obj->last_ts = now;
	obj->last_ip = ip;
	obj->last_cpu = raw_smp_processor_id();
	obj->last_valid = 1;
limits:
	if (cfg->flags & KTRACK_OBJF_DERIVE)
		objtrace_follow(st, obj, addr, life);
	if (cfg->max_hits && hit >= cfg->max_hits)
		objtrace_end(st, obj, addr, life, KTRACK_OBJ_END_HITS, ip, parent_ip);
}

/*
 * Entry of a hooked function: check the arguments in 'mask' against the
 * tracked set.  Inlined into each ftrace callback, so the glob path (first
 * nr_args arguments) and the typed path (only the arguments whose type is a
 * pointer to the tracked struct) pay only for what they check.
 */
static __always_inline void objtrace_check_args(struct objtrace_state *st, unsigned int mask,
						unsigned long ip, unsigned long parent_ip,
						struct ftrace_regs *fregs)
{
	unsigned long seen[KTRACK_OBJ_MAX_ARGS];
	unsigned int i, nseen = 0;
	int bit = objtrace_hook_enter(st, ip, parent_ip);

	if (bit < 0)
		return;
	for (i = 0; mask; i++, mask >>= 1) {
		unsigned long v;
		struct objtrace_obj *obj;
		unsigned int j;
		u64 life;

		if (!(mask & 1))
			continue;
		v = ktrack_fregs_arg(fregs, i);
		if (!objtrace_kptr(v))
			continue;
		/* One hit per call: the first argument that holds the object. */
		for (j = 0; j < nseen && seen[j] != v; j++)
			;
		if (j < nseen)
			continue;
		obj = objtrace_table_lookup(&st->table, v, &life);
		if (!obj)
			continue;
		seen[nseen++] = v;
		objtrace_hit(st, obj, v, life, i, ip, parent_ip);
	}
	objtrace_hook_exit(bit);
}

/* Entry of a function matched by a glob: check its first nr_args arguments. */
static notrace void objtrace_func(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct objtrace_state *st = container_of(op, struct objtrace_state, ops);

	objtrace_check_args(st, (1U << st->cfg.nr_args) - 1, ip, parent_ip, fregs);
}

/* Entry of a function of an address-given group: check the group's mask. */
notrace void objtrace_fset_func(unsigned long ip, unsigned long parent_ip,
				       struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct objtrace_fset *fs = container_of(op, struct objtrace_fset, ops);

	objtrace_check_args(fs->st, fs->mask, ip, parent_ip, fregs);
}

/*
 * Build the filters of every ops from the configuration (ioctl context).
 * Fails with -EINVAL when a glob matches no traceable function or an address
 * is not an ftrace location; the caller then calls objtrace_hooks_free().
 */
int objtrace_hooks_prepare(struct objtrace_state *st)
{
	char *p = st->functions, *tok;
	int ret;

	st->ops.func = objtrace_func;
	/* As the free hooks: only where RCU watches (objtrace_free.c). */
	st->ops.flags = FTRACE_OPS_FL_RCU;
	st->nr_functions = 0;
	if (st->cfg.flags & KTRACK_OBJF_FUNC_ADDRS) {
		ret = objtrace_fsets_prepare(st);
		if (ret)
			return ret;
	}
	while (p && (tok = strsep(&p, " \t\n,")) != NULL) {
		if (!*tok)
			continue;
		/*
		 * ftrace reads "!GLOB" as "remove": "kfree !kfree" would leave
		 * the filter empty, and an empty filter traces every function
		 * (review 2026-11-27, S3-1).
		 */
		if (*tok == '!')
			return -EINVAL;
		/*
		 * ftrace reads a number as the index of a function in
		 * available_filter_functions, not as a name: no glob of ours
		 * then says which function it hooked (objtrace_module.c).
		 */
		if (isdigit(*tok))
			return -EINVAL;
		/* ftrace_set_filter() edits its buffer: tok is our own copy. */
		ret = ftrace_set_filter(&st->ops, tok, strlen(tok), 0);
		if (ret)
			return ret;
		st->nr_functions++;
	}
	if (!st->nr_functions)
		return -EINVAL;
	return objtrace_free_prepare(st);
}

/* The free hooks first: a life must not outlive a free while hits are seen. */
int objtrace_hooks_register(struct objtrace_state *st)
{
	unsigned int i;
	int ret;

	ret = objtrace_free_register(st);
	if (ret)
		goto err;
	for (i = 0; i < st->nr_fsets; i++) {
		if (st->fsets[i].gone)	/* its functions went (objtrace_module.c) */
			continue;
		ret = register_ftrace_function(&st->fsets[i].ops);
		if (ret)
			goto err;
		st->fsets[i].reg = true;
	}
	if (st->functions) {
		ret = register_ftrace_function(&st->ops);
		if (ret)
			goto err;
		st->ops_reg = true;
	}
	return 0;
err:
	objtrace_hooks_unregister(st);
	return ret;
}

/* After this returns no handler of 'st' runs (ftrace synchronizes). */
void objtrace_hooks_unregister(struct objtrace_state *st)
{
	unsigned int i;

	if (st->ops_reg)
		unregister_ftrace_function(&st->ops);
	st->ops_reg = false;
	for (i = 0; i < st->nr_fsets; i++) {
		if (st->fsets[i].reg)
			unregister_ftrace_function(&st->fsets[i].ops);
		st->fsets[i].reg = false;
	}
	objtrace_free_unregister(st);
}

void objtrace_hooks_free(struct objtrace_state *st)
{
	objtrace_fsets_free(st);
	ftrace_free_filter(&st->ops);
	memset(&st->ops, 0, sizeof(st->ops));
	objtrace_free_release(st);
}
