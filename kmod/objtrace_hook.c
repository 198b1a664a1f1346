// SPDX-License-Identifier: GPL-2.0
/*
 * objtrace_hook.c - the function-entry hook (one ftrace_ops filtered to the
 * chosen function set, on both 6.1 and 6.12), the free hooks (kfree,
 * kmem_cache_free, a named destructor) and the records they write.
 *
 * Every handler here runs at the entry of arbitrary kernel functions: it is
 * notrace, guarded by ftrace_test_recursion_trylock(), never sleeps, never
 * allocates and takes no lock on the hit path.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/trace_recursion.h>
#include <linux/uaccess.h>

#include "objtrace.h"
#include "compat_objtrace.h"

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

static notrace void objtrace_emit_track(struct objtrace_state *st, unsigned long addr,
					u64 life, u32 source, unsigned long ip,
					u64 parent_life, const u64 *vals, u8 fault)
{
	struct ktrack_reservation res;
	struct ktrack_rec_obj_track *r;

	r = ktrack_ring_reserve(st->sess, KTRACK_REC_OBJ_TRACK, sizeof(*r), &res);
	if (!r) {
		this_cpu_inc(st->pcpu->rec_lost);
		return;
	}
	memset(r, 0, sizeof(*r));
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

	r = ktrack_ring_reserve(st->sess, KTRACK_REC_OBJ_UNTRACK, sizeof(*r), &res);
	if (!r) {
		this_cpu_inc(st->pcpu->rec_lost);
		return;
	}
	memset(r, 0, sizeof(*r));
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
	if (!objtrace_table_kill(&st->table, obj))
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
	char probe;
	u8 fault;
	int ret;

	if (!objtrace_kptr(addr) ||
	    copy_from_kernel_nofault(&probe, (const void *)addr, 1))
		ret = -EFAULT;
	else
		ret = objtrace_table_insert(&st->table, addr, now,
					    source != KTRACK_OBJ_SRC_DERIVED, &obj);
	if (ret) {
		atomic64_inc(&st->dropped[objtrace_drop_of_errno[-ret]]);
		return ret;
	}
	atomic64_inc(&st->lives);
	fault = objtrace_read_values(st, addr, vals);
	/* Changes-only compares the first hit with the values at track time. */
	memcpy(obj->last_vals, vals, sizeof(vals));
	obj->last_ts = now;
	obj->last_ip = ip;
	obj->last_cpu = raw_smp_processor_id();
	obj->last_valid = 1;
	if (life)
		*life = obj->life;
	objtrace_emit_track(st, addr, obj->life, source, ip, parent_life, vals, fault);
	return 0;
}

static notrace bool __objtrace_untrack(struct objtrace_state *st, unsigned long addr,
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
		ret = __objtrace_untrack(st, addr, reason, ip, parent_ip);
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
		unsigned long key = READ_ONCE(obj->key);

		if (atomic_read(&obj->state) != OBJTRACE_LIVE)
			continue;
		preempt_disable();
		/* Task context of an ioctl: nothing else of ours runs here. */
		if (objtrace_guard_enter()) {
			objtrace_end(st, obj, key, READ_ONCE(obj->life), reason, 0, 0);
			objtrace_guard_exit();
		}
		preempt_enable();
	}
	irq_work_sync(&t->reclaim);
	objtrace_table_reclaim(t);
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
	u8 fault;

	hit = atomic_inc_return(&obj->hits);
	this_cpu_inc(st->pcpu->hits);
	now = ktrack_session_clock(st->sess);
	if (cfg->max_age_ns && now - obj->born > cfg->max_age_ns) {
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
	r = ktrack_ring_reserve(st->sess, KTRACK_REC_OBJ_HIT, sizeof(*r), &res);
	if (r) {
		memset(r, 0, sizeof(*r));
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
	} else {
		this_cpu_inc(st->pcpu->rec_lost);
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
static notrace void objtrace_fset_func(unsigned long ip, unsigned long parent_ip,
				       struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct objtrace_fset *fs = container_of(op, struct objtrace_fset, ops);

	objtrace_check_args(fs->st, fs->mask, ip, parent_ip, fregs);
}

static notrace void objtrace_free_arg(struct objtrace_state *st, unsigned int arg,
				      u32 reason, unsigned long ip, unsigned long parent_ip,
				      struct ftrace_regs *fregs)
{
	unsigned long v;
	int bit = objtrace_hook_enter(st, ip, parent_ip);

	if (bit < 0)
		return;
	v = ktrack_fregs_arg(fregs, arg);
	if (objtrace_kptr(v))
		__objtrace_untrack(st, v, reason, ip, parent_ip);
	objtrace_hook_exit(bit);
}

static notrace void objtrace_kfree_func(unsigned long ip, unsigned long parent_ip,
				       struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	objtrace_free_arg(container_of(op, struct objtrace_state, kfree_ops), 0,
			  KTRACK_OBJ_END_FREE, ip, parent_ip, fregs);
}

static notrace void objtrace_cache_free_func(unsigned long ip, unsigned long parent_ip,
					    struct ftrace_ops *op,
					    struct ftrace_regs *fregs)
{
	objtrace_free_arg(container_of(op, struct objtrace_state, cache_free_ops), 1,
			  KTRACK_OBJ_END_FREE, ip, parent_ip, fregs);
}

static notrace void objtrace_dtor_func(unsigned long ip, unsigned long parent_ip,
				      struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct objtrace_state *st = container_of(op, struct objtrace_state, dtor_ops);

	objtrace_free_arg(st, st->cfg.destructor_arg, KTRACK_OBJ_END_DESTRUCTOR,
			  ip, parent_ip, fregs);
}

static int objtrace_filter_one(struct ftrace_ops *ops, const char *name)
{
	char buf[KTRACK_OBJ_SYM_MAX];
	size_t len = strscpy(buf, name, sizeof(buf));

	if ((ssize_t)len <= 0)
		return -EINVAL;
	return ftrace_set_filter(ops, buf, len, 0);
}

static int objtrace_cmp_ulong(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/*
 * Validate an address-given function set (ioctl context, before anything
 * changes): zero padding, a non-empty mask within nr_args, kernel addresses,
 * no function twice, at most KTRACK_OBJ_MAX_MASKS groups.  Whether each
 * address is an ftrace location is checked by ftrace_set_filter_ips() in
 * objtrace_hooks_prepare().
 */
int objtrace_funcs_check(const struct ktrack_obj_func *funcs, unsigned int n,
			 unsigned int nr_args)
{
	u8 masks[KTRACK_OBJ_MAX_MASKS];
	unsigned int i, j, nr_masks = 0;
	unsigned long *addrs;
	int ret = 0;

	for (i = 0; i < n; i++) {
		const struct ktrack_obj_func *f = &funcs[i];

		if (memchr_inv(f->__pad, 0, sizeof(f->__pad)) || !f->arg_mask ||
		    f->arg_mask >= 1U << nr_args || !objtrace_kptr(f->addr))
			return -EINVAL;
		for (j = 0; j < nr_masks && masks[j] != f->arg_mask; j++)
			;
		if (j < nr_masks)
			continue;
		if (nr_masks == KTRACK_OBJ_MAX_MASKS)
			return -E2BIG;
		masks[nr_masks++] = f->arg_mask;
	}
	addrs = kvmalloc_array(n, sizeof(*addrs), GFP_KERNEL);
	if (!addrs)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		addrs[i] = funcs[i].addr;
	sort(addrs, n, sizeof(*addrs), objtrace_cmp_ulong, NULL);
	/*
	 * ftrace maps a symbol address to the __fentry__ site a few bytes in
	 * (after endbr64 with IBT), so two entries closer than
	 * OBJTRACE_SAME_FUNC bytes name the same function; distinct functions
	 * are at least 16 bytes apart (function alignment).
	 */
	for (i = 1; i < n && !ret; i++)
		if (addrs[i] - addrs[i - 1] < OBJTRACE_SAME_FUNC)
			ret = -EINVAL;
	kvfree(addrs);
	return ret;
}

/* One ftrace_ops per distinct argument mask of the address-given set. */
static int objtrace_fsets_prepare(struct objtrace_state *st)
{
	const struct ktrack_obj_func *f = st->funcs;
	unsigned int n = st->cfg.functions_len, i, g, nr = 0, cnt;
	u8 masks[KTRACK_OBJ_MAX_MASKS];
	unsigned long *ips;
	int ret = 0;

	for (i = 0; i < n; i++) {
		for (g = 0; g < nr && masks[g] != f[i].arg_mask; g++)
			;
		if (g == nr)
			masks[nr++] = f[i].arg_mask;
	}
	st->fsets = kcalloc(nr, sizeof(*st->fsets), GFP_KERNEL);
	ips = kvmalloc_array(n, sizeof(*ips), GFP_KERNEL);
	if (!st->fsets || !ips) {
		kvfree(ips);
		return -ENOMEM;
	}
	st->nr_fsets = nr;
	for (g = 0; g < nr && !ret; g++) {
		struct objtrace_fset *fs = &st->fsets[g];

		fs->st = st;
		fs->mask = masks[g];
		fs->ops.func = objtrace_fset_func;
		for (i = 0, cnt = 0; i < n; i++)
			if (f[i].arg_mask == masks[g])
				ips[cnt++] = f[i].addr;
		/* -EINVAL when an address is not an ftrace location. */
		ret = ftrace_set_filter_ips(&fs->ops, ips, cnt, 0, 0);
	}
	kvfree(ips);
	st->nr_functions = n;
	return ret;
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
	st->kfree_ops.func = objtrace_kfree_func;
	st->cache_free_ops.func = objtrace_cache_free_func;
	st->dtor_ops.func = objtrace_dtor_func;
	st->nr_functions = 0;
	if (st->cfg.flags & KTRACK_OBJF_FUNC_ADDRS) {
		ret = objtrace_fsets_prepare(st);
		if (ret)
			return ret;
	}
	while (p && (tok = strsep(&p, " \t\n,")) != NULL) {
		if (!*tok)
			continue;
		/* ftrace_set_filter() edits its buffer: tok is our own copy. */
		ret = ftrace_set_filter(&st->ops, tok, strlen(tok), 0);
		if (ret)
			return ret;
		st->nr_functions++;
	}
	if (!st->nr_functions)
		return -EINVAL;
	if (!(st->cfg.flags & KTRACK_OBJF_NO_FREE)) {
		ret = objtrace_filter_one(&st->kfree_ops, "kfree");
		if (!ret)
			ret = objtrace_filter_one(&st->cache_free_ops, "kmem_cache_free");
		if (ret)
			return ret;
	}
	if (st->cfg.destructor[0])
		return objtrace_filter_one(&st->dtor_ops, st->cfg.destructor);
	return 0;
}

int objtrace_hooks_register(struct objtrace_state *st)
{
	unsigned int i;
	int ret = 0;

	if (!(st->cfg.flags & KTRACK_OBJF_NO_FREE)) {
		ret = register_ftrace_function(&st->kfree_ops);
		if (ret)
			goto err;
		st->kfree_reg = true;
		ret = register_ftrace_function(&st->cache_free_ops);
		if (ret)
			goto err;
		st->cache_free_reg = true;
	}
	if (st->cfg.destructor[0]) {
		ret = register_ftrace_function(&st->dtor_ops);
		if (ret)
			goto err;
		st->dtor_reg = true;
	}
	for (i = 0; i < st->nr_fsets; i++) {
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
	for (i = 0; i < st->nr_fsets; i++) {
		if (st->fsets[i].reg)
			unregister_ftrace_function(&st->fsets[i].ops);
		st->fsets[i].reg = false;
	}
	if (st->dtor_reg)
		unregister_ftrace_function(&st->dtor_ops);
	if (st->cache_free_reg)
		unregister_ftrace_function(&st->cache_free_ops);
	if (st->kfree_reg)
		unregister_ftrace_function(&st->kfree_ops);
	st->ops_reg = false;
	st->dtor_reg = false;
	st->cache_free_reg = false;
	st->kfree_reg = false;
}

void objtrace_hooks_free(struct objtrace_state *st)
{
	unsigned int i;

	for (i = 0; i < st->nr_fsets; i++)
		ftrace_free_filter(&st->fsets[i].ops);
	kfree(st->fsets);
	st->fsets = NULL;
	st->nr_fsets = 0;
	ftrace_free_filter(&st->ops);
	ftrace_free_filter(&st->kfree_ops);
	ftrace_free_filter(&st->cache_free_ops);
	ftrace_free_filter(&st->dtor_ops);
	memset(&st->ops, 0, sizeof(st->ops));
	memset(&st->kfree_ops, 0, sizeof(st->kfree_ops));
	memset(&st->cache_free_ops, 0, sizeof(st->cache_free_ops));
	memset(&st->dtor_ops, 0, sizeof(st->dtor_ops));
}
