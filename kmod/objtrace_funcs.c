// SPDX-License-Identifier: GPL-2.0
/*
 * objtrace_funcs.c - address-given function sets (KTRACK_OBJF_FUNC_ADDRS):
 * validation of the entries, and one ftrace_ops per distinct argument mask
 * (the functions that check the same arguments share a callback).
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "objtrace.h"

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
int objtrace_fsets_prepare(struct objtrace_state *st)
{
	const struct ktrack_obj_func *f = st->funcs;
	unsigned int n = st->cfg.functions_len, i, g, nr = 0, cnt;
	u8 masks[KTRACK_OBJ_MAX_MASKS];
	int ret = 0;

	for (i = 0; i < n; i++) {
		for (g = 0; g < nr && masks[g] != f[i].arg_mask; g++)
			;
		if (g == nr)
			masks[nr++] = f[i].arg_mask;
	}
	st->fsets = kcalloc(nr, sizeof(*st->fsets), GFP_KERNEL_ACCOUNT);
	if (!st->fsets)
		return -ENOMEM;
	st->nr_fsets = nr;
	for (g = 0; g < nr && !ret; g++) {
		struct objtrace_fset *fs = &st->fsets[g];

		fs->st = st;
		fs->mask = masks[g];
		fs->ops.func = objtrace_fset_func;
		fs->ops.flags = FTRACE_OPS_FL_RCU;	/* as every objtrace hook */
		for (i = 0, cnt = 0; i < n; i++)
			cnt += f[i].arg_mask == masks[g];
		/* Kept: a module that goes takes its functions out of the filter. */
		fs->ips = kvmalloc_array(cnt, sizeof(*fs->ips), GFP_KERNEL_ACCOUNT);
		if (!fs->ips)
			return -ENOMEM;
		for (i = 0, cnt = 0; i < n; i++)
			if (f[i].arg_mask == masks[g])
				fs->ips[cnt++] = f[i].addr;
		fs->nr_ips = cnt;
		/* -EINVAL when an address is not an ftrace location. */
		ret = ftrace_set_filter_ips(&fs->ops, fs->ips, cnt, 0, 0);
	}
	st->nr_functions = n;
	return ret;
}

void objtrace_fsets_free(struct objtrace_state *st)
{
	unsigned int i;

	for (i = 0; i < st->nr_fsets; i++) {
		ftrace_free_filter(&st->fsets[i].ops);
		kvfree(st->fsets[i].ips);
	}
	kfree(st->fsets);
	st->fsets = NULL;
	st->nr_fsets = 0;
}
