// SPDX-License-Identifier: GPL-2.0
/*
 * ring_alloc.c - allocation, publication and freeing of a session's rings
 * (one per possible CPU: a control page + buf_pages data pages, vmalloc'ed
 * for mmap), and their counters for GET_STATS.  The array is built aside
 * and published whole; it is freed under s->read_lock and s->mmap_lock,
 * a grace period after it was unpublished (poll() looks under RCU).
 */
#include <linux/cpumask.h>
#include <linux/irq_work.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "alloc_stats.h"
#include "ktrack_internal.h"
#include "ring.h"
#include "session.h"

static void ring_wakeup(struct irq_work *w)
{
	struct ktrack_ring *r = container_of(w, struct ktrack_ring, wakeup);

	ktrack_session_wake(r->s);
}

void ktrack_ring_fill_stats(struct ktrack_ring *r, struct ktrack_cpu_stats_ext *ext)
{
	struct ktrack_cpu_stats *st = &ext->s;

	st->written = local_read(&r->written);
	st->lost_full = local_read(&r->lost_full);
	st->lost_too_big = local_read(&r->lost_too_big);
	st->overwritten = local_read(&r->overwritten);
	st->bytes = local_read(&r->bytes);
	st->read = atomic64_read(&r->read);
	st->filtered = local_read(&r->filtered);
	ext->wakeups = local_read(&r->wakeups);
}

static void rings_free_array(struct ktrack_ring **rings, unsigned long charged)
{
	u32 cpu;

	if (!rings)
		return;
	for_each_possible_cpu(cpu) {
		struct ktrack_ring *r = rings[cpu];

		if (!r)
			continue;
		irq_work_sync(&r->wakeup);
		if (r->area)
			kt_alloc_add(KT_ALLOC_RING_PAGES, -(long)(r->size / PAGE_SIZE + 1));
		vfree(r->area);
		kfree(r);
		kt_alloc_add(KT_ALLOC_RINGS, -1);
	}
	kfree(rings);
	ktrack_ring_pages_uncharge(charged);
}

/*
 * Build the rings aside and publish them whole: poll() and read() look at
 * s->rings without the session's locks.  Callers hold s->mmap_lock.
 */
int ktrack_rings_alloc(struct ktrack_session *s)
{
	size_t bytes = ((size_t)s->cfg.buf_pages + 1) * PAGE_SIZE;
	unsigned long charged = bytes / PAGE_SIZE * num_possible_cpus();
	struct ktrack_ring **rings;
	u32 cpu;
	int ret;

	/* The default config never went through SET_CONFIG's check. */
	ret = ktrack_session_check_pages(s);
	if (ret)
		return ret;
	ret = ktrack_ring_pages_charge(charged);
	if (ret)
		return ret;
	rings = kcalloc(nr_cpu_ids, sizeof(*rings), GFP_KERNEL_ACCOUNT);
	if (!rings) {
		ktrack_ring_pages_uncharge(charged);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu) {
		struct ktrack_ring *r = kzalloc_node(sizeof(*r), GFP_KERNEL_ACCOUNT, cpu_to_node(cpu));

		if (!r)
			goto fail;
		kt_alloc_add(KT_ALLOC_RINGS, 1);
		rings[cpu] = r;
		/*
		 * Not vmalloc_user(): its failure warns with a stack trace,
		 * and the user is told (ENOMEM, with a sentence) already.  The
		 * pages reach userspace by vm_insert_page(), not
		 * remap_vmalloc_range(): VM_USERMAP is not needed.
		 */
		r->area = __vmalloc(bytes, GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN);
		if (!r->area)
			goto fail;
		kt_alloc_add(KT_ALLOC_RING_PAGES, bytes / PAGE_SIZE);
		r->ctrl = r->area;
		r->data = (u8 *)r->area + PAGE_SIZE;
		r->size = (u64)s->cfg.buf_pages * PAGE_SIZE;
		r->cpu = cpu;
		r->mode = s->cfg.mode;
		r->s = s;
		r->ctrl->data_size = r->size;
		r->ctrl->cpu = cpu;
		r->ctrl->mode = r->mode;
		init_irq_work(&r->wakeup, ring_wakeup);
	}
	s->pages_charged = charged;
	/* Release: every ring is filled before anyone sees the array. */
	s->rings_gen++;	/* under mmap_lock: a snapshot's copy sees new rings */
	smp_store_release(&s->rings, rings);
	return 0;
fail:
	rings_free_array(rings, charged);
	return -ENOMEM;
}

/* The last reference is gone: nobody looks at the rings any more. */
void ktrack_rings_free(struct ktrack_session *s)
{
	rings_free_array(s->rings, s->rings ? s->pages_charged : 0);
	s->rings = NULL;
	s->pages_charged = 0;
}

/*
 * Free the rings of a live, stopped, unmapped session (SET_CONFIG).  The
 * caller holds s->read_lock (no read() runs) and s->mmap_lock; poll()ers
 * may still look, under RCU: unpublish, wait for them, then free.
 */
void ktrack_rings_release(struct ktrack_session *s)
{
	struct ktrack_ring **rings = s->rings;

	if (!rings)
		return;
	WRITE_ONCE(s->rings, NULL);
	synchronize_rcu();
	rings_free_array(rings, s->pages_charged);
	s->pages_charged = 0;
}
