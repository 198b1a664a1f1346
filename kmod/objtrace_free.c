// SPDX-License-Identifier: GPL-2.0
/*
 * objtrace_free.c - the free hooks: one ftrace_ops per way an object's
 * memory goes back (kfree, kmem_cache_free, kmem_cache_free_bulk, vfree)
 * plus the configured destructor.  Each ends the life of the address it
 * frees, if tracked.
 *
 * kfree_bulk() and the batches of kfree_rcu() end in kmem_cache_free_bulk(),
 * kvfree() in kfree() or vfree(), so these cover the slab and vmalloc free
 * paths.  Memory that goes back without any of them (free_pages(), a
 * SLAB_TYPESAFE_BY_RCU object reused in place) is caught when an allocator
 * source hands the address out again (KTRACK_OBJ_END_REUSE, objtrace_hook.c).
 */
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/trace_recursion.h>
#include <linux/uaccess.h>

#include "objtrace.h"
#include "compat_ftrace.h"

/* What the hooked function frees: one pointer argument, or an array. */
struct objtrace_free_def {
	const char *func;		/* NULL: the configured destructor */
	unsigned int arg;		/* the pointer; for a bulk free the array */
	bool bulk;			/* (s, size_t nr, void **p): arg is p, nr before it */
};

static const struct objtrace_free_def objtrace_free_defs[OBJTRACE_NR_FREE] = {
	[OBJTRACE_FREE_KFREE] = { "kfree", 0, false },
	[OBJTRACE_FREE_CACHE] = { "kmem_cache_free", 1, false },
	[OBJTRACE_FREE_BULK] = { "kmem_cache_free_bulk", 2, true },
	[OBJTRACE_FREE_VFREE] = { "vfree", 0, false },
	[OBJTRACE_FREE_DTOR] = { NULL, 0, false },
};

static notrace void objtrace_free_func(unsigned long ip, unsigned long parent_ip,
				       struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct objtrace_free_hook *fh = container_of(op, struct objtrace_free_hook, ops);
	const struct objtrace_free_def *def = &objtrace_free_defs[fh->kind];
	struct objtrace_state *st = fh->st;
	u32 reason = KTRACK_OBJ_END_FREE;
	unsigned int arg = def->arg;
	unsigned long v;
	int bit = objtrace_hook_enter(st, ip, parent_ip);

	if (bit < 0)
		return;
	if (fh->kind == OBJTRACE_FREE_DTOR) {
		arg = st->cfg.destructor_arg;
		reason = KTRACK_OBJ_END_DESTRUCTOR;
	}
	v = ktrack_fregs_arg(fregs, arg);
	if (def->bulk) {
		size_t i, nr = ktrack_fregs_arg(fregs, arg - 1);
		const unsigned long *p = (const unsigned long *)v;

		/* The array is the caller's: read it without trusting it. */
		for (i = 0; objtrace_kptr(v) && i < nr; i++) {
			unsigned long o;

			if (copy_from_kernel_nofault(&o, p + i, sizeof(o)))
				break;
			if (objtrace_kptr(o))
				objtrace_untrack_hooked(st, o, reason, ip, parent_ip);
		}
	} else if (objtrace_kptr(v)) {
		objtrace_untrack_hooked(st, v, reason, ip, parent_ip);
	}
	objtrace_hook_exit(bit);
}

static int objtrace_filter_one(struct ftrace_ops *ops, const char *name)
{
	char buf[KTRACK_OBJ_SYM_MAX];
	size_t len = strscpy(buf, name, sizeof(buf));

	if ((ssize_t)len <= 0)
		return -EINVAL;
	return ftrace_set_filter(ops, buf, len, 0);
}

/* Build the filters of the free hooks (ioctl context). */
int objtrace_free_prepare(struct objtrace_state *st)
{
	unsigned int k;
	int ret;

	for (k = 0; k < OBJTRACE_NR_FREE; k++) {
		struct objtrace_free_hook *fh = &st->free_hooks[k];
		const char *func = objtrace_free_defs[k].func;

		fh->st = st;
		fh->kind = k;
		fh->ops.func = objtrace_free_func;
		/*
		 * Called only where RCU is watching: the table's grace periods
		 * and the session's at STOP must cover a running callback.
		 */
		fh->ops.flags = FTRACE_OPS_FL_RCU;
		fh->used = func ? !(st->cfg.flags & KTRACK_OBJF_NO_FREE) : !!st->cfg.destructor[0];
		if (!fh->used)
			continue;
		/* An exact name: a destructor is a function, not a glob. */
		ret = objtrace_filter_one(&fh->ops, func ? func : st->cfg.destructor);
		if (ret)
			return ret;
	}
	return 0;
}

int objtrace_free_register(struct objtrace_state *st)
{
	unsigned int k;
	int ret;

	for (k = 0; k < OBJTRACE_NR_FREE; k++) {
		struct objtrace_free_hook *fh = &st->free_hooks[k];

		if (!fh->used)
			continue;
		ret = register_ftrace_function(&fh->ops);
		if (ret)
			return ret;
		fh->reg = true;
	}
	return 0;
}

void objtrace_free_unregister(struct objtrace_state *st)
{
	unsigned int k;

	for (k = OBJTRACE_NR_FREE; k-- > 0;) {
		struct objtrace_free_hook *fh = &st->free_hooks[k];

		if (fh->reg)
			unregister_ftrace_function(&fh->ops);
		fh->reg = false;
	}
}

void objtrace_free_release(struct objtrace_state *st)
{
	unsigned int k;

	for (k = 0; k < OBJTRACE_NR_FREE; k++) {
		ftrace_free_filter(&st->free_hooks[k].ops);
		memset(&st->free_hooks[k], 0, sizeof(st->free_hooks[k]));
	}
}
