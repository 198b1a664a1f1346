// SPDX-License-Identifier: GPL-2.0
/*
 * probe_profile.c - f probes that profile instead of recording
 * (KTRACK_PROBE_F_PROFILE), in the manner of ftrace's function profiler
 * (function_profile_enabled, which Debian's kernels leave out): hits and
 * time per function are summed in the kernel, for when a record per call
 * is too much.
 *
 * Each CPU has its own table, an open-addressed hash keyed by the
 * function's address, twice as large as the probe's functions.  A handler
 * touches only its CPU's table, with preemption off; a slot is claimed by
 * cmpxchg and its counters are local64_t, so an NMI that profiles on the
 * CPU it interrupted loses nothing.  PROBE_PROFILE sums the tables under
 * kt_probe_lock and copies the result out without it.
 */
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <asm/local64.h>

#include "probe_internal.h"
#include "uapi_copy.h"

/* slots per CPU of the largest table: 2 x KTRACK_PROBE_MAX_FUNCS */
#define KT_PROFILE_MAX_SLOTS	(2 * KTRACK_PROBE_MAX_FUNCS)

struct kt_prof_slot {
	unsigned long ip;		/* 0: free */
	local64_t hits;
	local64_t timed;
	local64_t time_ns;
	local64_t max_ns;
};

struct kt_profile {
	u32 mask;			/* slots per CPU - 1 */
	atomic64_t overflow;		/* hits that found no slot */
	struct kt_prof_slot *cpu[];	/* nr_cpu_ids tables */
};

int kt_profile_alloc(struct kt_probe *p)
{
	/* f MOD:GLOB: as many functions as the globs may match */
	u32 funcs = p->mod_glob ? KTRACK_PROBE_MAX_FUNCS : max(p->nr_funcs, 1U);
	u32 slots = roundup_pow_of_two(2 * funcs);

	BUILD_BUG_ON(!is_power_of_2(KT_PROFILE_MAX_SLOTS));
	struct kt_profile *pr;
	int cpu;

	pr = kzalloc(struct_size(pr, cpu, nr_cpu_ids), GFP_KERNEL_ACCOUNT);
	if (!pr)
		return -ENOMEM;
	pr->mask = slots - 1;
	atomic64_set(&pr->overflow, 0);
	for_each_possible_cpu(cpu) {
		pr->cpu[cpu] = kvcalloc(slots, sizeof(struct kt_prof_slot), GFP_KERNEL_ACCOUNT);
		if (!pr->cpu[cpu]) {
			p->profile = pr;
			kt_profile_free(p);
			return -ENOMEM;
		}
	}
	p->profile = pr;
	return 0;
}

void kt_profile_free(struct kt_probe *p)
{
	struct kt_profile *pr = p->profile;
	int cpu;

	if (!pr)
		return;
	for_each_possible_cpu(cpu)
		kvfree(pr->cpu[cpu]);
	kfree(pr);
	p->profile = NULL;
}

static notrace struct kt_prof_slot *kt_prof_slot(struct kt_profile *pr, unsigned long ip)
{
	struct kt_prof_slot *t = pr->cpu[smp_processor_id()];
	u32 i = hash_long(ip, 32) & pr->mask;
	u32 n;

	for (n = 0; n <= pr->mask; n++, i = (i + 1) & pr->mask) {
		unsigned long cur = READ_ONCE(t[i].ip);

		if (cur == ip)
			return &t[i];
		if (cur)
			continue;
		/* an NMI may have claimed it between the read and here */
		cur = cmpxchg_local(&t[i].ip, 0UL, ip);
		if (!cur || cur == ip)
			return &t[i];
	}
	return NULL;
}
NOKPROBE_SYMBOL(kt_prof_slot);

/* Called with preemption off, for a hit that passed every filter. */
notrace void kt_profile_hit(struct kt_probe *p, u16 event, unsigned long ip, u64 duration)
{
	struct kt_profile *pr = p->profile;
	struct kt_prof_slot *s = kt_prof_slot(pr, ip);
	s64 old;

	if (!s) {
		atomic64_inc(&pr->overflow);
		return;
	}
	if (event == KTRACK_PROBE_EV_ENTRY || !(p->flags & KTRACK_PROBE_F_ENTRY))
		local64_inc(&s->hits);
	if (event != KTRACK_PROBE_EV_EXIT)
		return;
	local64_inc(&s->timed);
	local64_add(duration, &s->time_ns);
	old = local64_read(&s->max_ns);
	while ((u64)old < duration) {
		s64 prev = local64_cmpxchg(&s->max_ns, old, duration);

		if (prev == old)
			break;
		old = prev;
	}
}
NOKPROBE_SYMBOL(kt_profile_hit);

/*
 * Sums the CPUs' tables into out[] (mask + 1 entries); returns how many;
 * hits of addresses that find no room there are added to *overflow.
 */
static u32 kt_profile_sum(struct kt_profile *pr, struct ktrack_profile_entry *out, u64 *overflow)
{
	u32 slots = pr->mask + 1, n = 0, i, j, k;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct kt_prof_slot *t = pr->cpu[cpu];

		for (i = 0; i < slots; i++) {
			unsigned long ip = READ_ONCE(t[i].ip);
			struct ktrack_profile_entry *e;
			u64 max;

			if (!ip)
				continue;
			/*
			 * The same hash over the output, bounded: the CPUs may
			 * hold more addresses than one table (a module reloaded
			 * at new addresses), and those find no room.
			 */
			e = NULL;
			for (j = hash_long(ip, 32) & pr->mask, k = 0; k <= pr->mask;
			     j = (j + 1) & pr->mask, k++) {
				if (!out[j].ip || out[j].ip == ip) {
					e = &out[j];
					break;
				}
			}
			if (!e) {
				*overflow += local64_read(&t[i].hits);
				continue;
			}
			if (!e->ip) {
				e->ip = ip;
				n++;
			}
			e->hits += local64_read(&t[i].hits);
			e->timed += local64_read(&t[i].timed);
			e->time_ns += local64_read(&t[i].time_ns);
			max = local64_read(&t[i].max_ns);
			e->max_ns = max_t(u64, e->max_ns, max);
		}
	}
	return n;
}

long kt_ioctl_profile(struct ktrack_session *s, void __user *arg)
{
	struct ktrack_probe_profile req;
	struct ktrack_profile_entry *sum;
	struct kt_probe *p;
	u32 usize, n, i, done = 0;
	int ret;

	ret = ktrack_copy_sized_in(&req, sizeof(req), sizeof(req), arg, &usize);
	if (ret)
		return ret;
	if (!req.id || req.entry_size != sizeof(*sum) || req.overflow)
		return -EINVAL;
	if (req.count && !req.entries_ptr)
		return -EFAULT;
	/* the largest table, allocated before the lock the notifier takes */
	sum = kvcalloc(KT_PROFILE_MAX_SLOTS, sizeof(*sum), GFP_KERNEL);
	if (!sum)
		return -ENOMEM;
	mutex_lock(&kt_probe_lock);
	p = kt_find(s, req.id, NULL);
	if (!p || !p->profile) {
		mutex_unlock(&kt_probe_lock);
		kvfree(sum);
		return p ? -EINVAL : -ENOENT;
	}
	req.overflow = atomic64_read(&p->profile->overflow);
	n = kt_profile_sum(p->profile, sum, &req.overflow);
	i = p->profile->mask + 1;
	mutex_unlock(&kt_probe_lock);

	/* packed to the front, copied with no lock held */
	while (i--) {
		if (!sum[i].ip || done >= req.count)
			continue;
		if (copy_to_user(u64_to_user_ptr(req.entries_ptr) + (u64)done * sizeof(*sum),
				 &sum[i], sizeof(*sum))) {
			ret = -EFAULT;
			break;
		}
		done++;
	}
	req.count = n;
	if (!ret && copy_to_user(arg, &req, min_t(size_t, usize, sizeof(req))))
		ret = -EFAULT;
	kvfree(sum);
	return ret;
}
