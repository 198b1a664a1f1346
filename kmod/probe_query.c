// SPDX-License-Identifier: GPL-2.0
/*
 * probe_query.c - the read-only probe ioctls: PROBE_LIST (counters and
 * state of a session's probes) and PROBE_GET (a probe's description back).
 * Both snapshot under kt_probe_lock into a kernel buffer and copy to the
 * user after dropping it (see probe.c for the lock's rules).
 */
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "probe_internal.h"
#include "uapi_copy.h"

static void kt_fill_info(struct kt_probe *p, struct ktrack_probe_info *in)
{
	int cpu;

	memset(in, 0, sizeof(*in));
	in->id = p->id;
	in->kind = p->kind;
	in->mechanism = p->mechanism;
	in->state = p->state;
	for_each_possible_cpu(cpu) {
		struct kt_probe_stats *st = per_cpu_ptr(p->stats, cpu);

		in->hits += READ_ONCE(st->hits);
		in->filtered += READ_ONCE(st->filtered);
		in->dropped += READ_ONCE(st->dropped);
		in->faults += READ_ONCE(st->faults);
		in->misses += READ_ONCE(st->missed);
		in->idle += READ_ONCE(st->idle);
	}
	in->misses += p->missed_acc + kt_kernel_missed(p);
	in->nr_funcs = p->nr_funcs;
	in->arm_count = p->arm_count;
	in->desc_size = p->desc_size;
	strscpy(in->name, p->name, sizeof(in->name));
	if (p->mod_glob)
		scnprintf(in->target, sizeof(in->target), "%s:%s", p->module, p->func_names[0]);
	else if (p->kind == KTRACK_PROBE_FUNCS)
		strscpy(in->target, p->func_names[0], sizeof(in->target));
	else if (kt_probe_is_user(p))	/* the file's name: its offset, not the symbol's */
		scnprintf(in->target, sizeof(in->target), "%s:0x%llx", kbasename(p->upath),
			  p->offset);
	else if (p->symbol[0] && p->module[0])
		scnprintf(in->target, sizeof(in->target), "%s:%s+%llu", p->module, p->symbol,
			 p->offset);
	else if (p->symbol[0])
		scnprintf(in->target, sizeof(in->target), "%s+%llu", p->symbol, p->offset);
	else
		scnprintf(in->target, sizeof(in->target), "0x%llx", p->addr);
}

/* Callers from before 'idle' pass entries of the first published size. */
static_assert(offsetof(struct ktrack_probe_info, idle) == KTRACK_PROBE_INFO_SIZE_V1);

long kt_ioctl_list(struct ktrack_session *s, void __user *arg)
{
	struct ktrack_probe_list req;
	struct ktrack_probe_info *buf = NULL;
	struct kt_probe *p;
	u32 usize, n = 0, esize, i;
	int ret;

	ret = ktrack_copy_sized_in(&req, sizeof(req), offsetof(typeof(req), entry_size), arg,
				   &usize);
	if (ret)
		return ret;
	if (req.__pad)
		return -EINVAL;
	/*
	 * A caller from before 'idle' (size 16) knows the shorter entry; one
	 * built with this header may leave entry_size 0 for its sizeof.
	 */
	if (usize <= offsetof(typeof(req), entry_size))
		esize = KTRACK_PROBE_INFO_SIZE_V1;
	else
		esize = req.entry_size ?: sizeof(*buf);
	if (esize < KTRACK_PROBE_INFO_SIZE_V1 || esize > PAGE_SIZE || esize % 8)
		return -EINVAL;
	if (req.count > KT_MAX_PROBES_LIMIT)
		req.count = KT_MAX_PROBES_LIMIT;
	if (req.count) {
		if (!req.entries_ptr)
			return -EFAULT;
		buf = kvcalloc(req.count, sizeof(*buf), GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
	}
	mutex_lock(&kt_probe_lock);
	list_for_each_entry(p, &kt_probes, node) {
		if (p->session != s)
			continue;
		if (n < req.count)
			kt_fill_info(p, &buf[n]);
		n++;
	}
	mutex_unlock(&kt_probe_lock);
	ret = 0;
	/* Copied out with no lock held; a larger entry gets zeroes after ours. */
	for (i = 0; buf && i < min(n, req.count) && !ret; i++) {
		void __user *dst = u64_to_user_ptr(req.entries_ptr) + (u64)i * esize;

		if (copy_to_user(dst, &buf[i], min_t(size_t, esize, sizeof(*buf))) ||
		    (esize > sizeof(*buf) && clear_user(dst + sizeof(*buf), esize - sizeof(*buf))))
			ret = -EFAULT;
	}
	req.count = n;
	if (!ret && copy_to_user(arg, &req, min_t(size_t, usize, sizeof(req))))
		ret = -EFAULT;
	kvfree(buf);
	return ret;
}

long kt_ioctl_get(struct ktrack_session *s, void __user *arg)
{
	struct ktrack_probe_get req;
	struct kt_probe *p;
	void *copy = NULL;
	u32 usize, need;
	int ret;

	ret = ktrack_copy_sized_in(&req, sizeof(req), sizeof(req), arg, &usize);
	if (ret)
		return ret;
	if (req.__pad || !req.id)
		return -EINVAL;
	mutex_lock(&kt_probe_lock);
	p = kt_find(s, req.id, NULL);
	if (!p) {
		mutex_unlock(&kt_probe_lock);
		return -ENOENT;
	}
	need = p->desc_size;
	if (req.desc_size >= need) {
		copy = kvmalloc(need, GFP_KERNEL);
		if (copy)
			memcpy(copy, p->desc, need);
	}
	mutex_unlock(&kt_probe_lock);
	if (req.desc_size >= need && !copy)
		return -ENOMEM;
	if (copy && copy_to_user(u64_to_user_ptr(req.desc_ptr), copy, need))
		ret = -EFAULT;
	kvfree(copy);
	req.desc_size = need;
	if (!ret && copy_to_user(arg, &req, min_t(size_t, usize, sizeof(req))))
		ret = -EFAULT;
	return ret;
}
