// SPDX-License-Identifier: GPL-2.0
/*
 * objtrace_source.c - probes that feed the tracked set: a kretprobe on an
 * allocator ($retval) or a kprobe at a function entry ($argN), optionally
 * dereferenced once (+OFFS).  Handlers run in probe context: they only
 * read registers, read memory fault-safely and insert into the table.
 */
#include <linux/kprobes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "objtrace.h"

static notrace unsigned long objtrace_source_value(const struct ktrack_obj_source *d,
						   unsigned long v)
{
	unsigned long p;

	if (!(d->flags & KTRACK_OBJ_SRCF_DEREF))
		return v;
	if (!objtrace_kptr(v) ||
	    copy_from_kernel_nofault(&p, (const void *)(v + d->deref_offset), sizeof(p)))
		return 0;
	return p;
}

static notrace int objtrace_ret_handler(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct objtrace_source *src = container_of(get_kretprobe(ri), struct objtrace_source,
						   krp);
	unsigned long v = objtrace_source_value(&src->desc, regs_return_value(regs));

	/* NULL returns are failed allocations, not objects: not counted. */
	if (v)
		objtrace_track(src->st, v, KTRACK_OBJ_SRC_RETVAL,
			       (unsigned long)src->krp.kp.addr, 0, NULL);
	return 0;
}
NOKPROBE_SYMBOL(objtrace_ret_handler);

static notrace int objtrace_entry_handler(struct kprobe *kp, struct pt_regs *regs)
{
	struct objtrace_source *src = container_of(kp, struct objtrace_source, kp);
	unsigned long v = regs_get_kernel_argument(regs, src->desc.arg);

	v = objtrace_source_value(&src->desc, v);
	if (v)
		objtrace_track(src->st, v, KTRACK_OBJ_SRC_ARG, (unsigned long)kp->addr, 0, NULL);
	return 0;
}
NOKPROBE_SYMBOL(objtrace_entry_handler);

/*
 * Validate a source description (ioctl context): known type and flags, an
 * argument in range, a NUL-terminated symbol that can be probed (a trial
 * registration of a disabled kprobe tells).
 */
int objtrace_source_check(const struct ktrack_obj_source *d)
{
	struct kprobe kp = { .flags = KPROBE_FLAG_DISABLED };
	size_t len;
	int ret;

	if (d->type != KTRACK_OBJ_SRC_RETVAL && d->type != KTRACK_OBJ_SRC_ARG)
		return -EINVAL;
	if (d->flags & ~KTRACK_OBJ_SRCF_DEREF || d->__pad)
		return -EINVAL;
	if (d->type == KTRACK_OBJ_SRC_ARG ? d->arg >= KTRACK_OBJ_MAX_ARGS : d->arg)
		return -EINVAL;
	if (!(d->flags & KTRACK_OBJ_SRCF_DEREF) && d->deref_offset)
		return -EINVAL;
	if (d->deref_offset >= KTRACK_OBJ_MAX_OFFSET || d->deref_offset % sizeof(long))
		return -EINVAL;
	len = strnlen(d->symbol, sizeof(d->symbol));
	/* The bytes after the NUL are reserved (zero). */
	if (!len || len == sizeof(d->symbol) ||
	    memchr_inv(d->symbol + len, 0, sizeof(d->symbol) - len))
		return -EINVAL;
	kp.symbol_name = d->symbol;
	ret = register_kprobe(&kp);
	if (ret)
		return ret == -ENOENT ? -ENOENT : -EINVAL;
	unregister_kprobe(&kp);
	return 0;
}

static int objtrace_source_register(struct objtrace_source *src)
{
	if (src->desc.type == KTRACK_OBJ_SRC_RETVAL) {
		memset(&src->krp, 0, sizeof(src->krp));
		src->krp.kp.symbol_name = src->desc.symbol;
		src->krp.handler = objtrace_ret_handler;
		/* Preallocated instances: allocators run on every CPU at once. */
		src->krp.maxactive = max_t(int, 64, 4 * num_possible_cpus());
		return register_kretprobe(&src->krp);
	}
	memset(&src->kp, 0, sizeof(src->kp));
	src->kp.symbol_name = src->desc.symbol;
	src->kp.pre_handler = objtrace_entry_handler;
	return register_kprobe(&src->kp);
}

static void objtrace_source_unregister(struct objtrace_source *src)
{
	if (!src->registered)
		return;
	if (src->desc.type == KTRACK_OBJ_SRC_RETVAL)
		unregister_kretprobe(&src->krp);
	else
		unregister_kprobe(&src->kp);
	src->registered = false;
}

int objtrace_sources_register(struct objtrace_state *st)
{
	unsigned int i;
	int ret;

	for (i = 0; i < st->nr_sources; i++) {
		ret = objtrace_source_register(st->sources[i]);
		if (ret) {
			objtrace_sources_unregister(st);
			return ret;
		}
		st->sources[i]->registered = true;
	}
	return 0;
}

/* After this returns no source handler of 'st' runs. */
void objtrace_sources_unregister(struct objtrace_state *st)
{
	unsigned int i;

	for (i = 0; i < st->nr_sources; i++)
		objtrace_source_unregister(st->sources[i]);
}
