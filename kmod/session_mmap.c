// SPDX-License-Identifier: GPL-2.0
/*
 * session_mmap.c - mmap() of a session's rings (layout: the ABI header).
 * Runs under the mm's mmap_lock and takes only s->mmap_lock, which is
 * never held across a user copy (lock order: session.c).  A mapping holds
 * a session reference; its pages stay valid after the session ends.
 */
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "ktrack_internal.h"
#include "ring.h"
#include "session.h"

static void ktrack_vm_open(struct vm_area_struct *vma)
{
	struct ktrack_session *s = vma->vm_private_data;

	ktrack_session_get(s);
	atomic_inc(&s->nr_maps);
}

static void ktrack_vm_close(struct vm_area_struct *vma)
{
	struct ktrack_session *s = vma->vm_private_data;

	atomic_dec(&s->nr_maps);
	ktrack_session_put(s);
}

static const struct vm_operations_struct ktrack_vm_ops = {
	.open = ktrack_vm_open,
	.close = ktrack_vm_close,
};

int ktrack_session_mmap(struct ktrack_session *s, struct vm_area_struct *vma)
{
	unsigned long npages = vma_pages(vma), pgoff = vma->vm_pgoff, i, stride, total;
	bool data = false;
	int ret = 0;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	/* Under mmap_lock: only s->mmap_lock, never held across a user copy. */
	mutex_lock(&s->mmap_lock);
	/* Torn down, or its file is being attached elsewhere (claim_pristine). */
	if (s->dead || s->leaving) {
		ret = -ENODEV;
		goto out;
	}
	stride = 1 + (unsigned long)s->cfg.buf_pages;
	total = stride * nr_cpu_ids;
	if (pgoff >= total || npages > total - pgoff) {
		ret = -EINVAL;
		goto out;
	}
	for (i = 0; i < npages; i++)
		if ((pgoff + i) % stride)
			data = true;
	if (data && (vma->vm_flags & VM_WRITE)) {
		ret = -EPERM;
		goto out;
	}
	if (!s->rings) {
		ret = ktrack_rings_alloc(s);
		if (ret)
			goto out;
	}
	if (data)
		ktrack_vm_flags_clear(vma, VM_MAYWRITE);
	/*
	 * Not inherited by fork, never grown by mremap, not in core dumps.
	 * The inserted pages are reference counted by the page tables, so a
	 * mapping that outlives the session (MADV_DOFORK, close) stays safe.
	 */
	ktrack_vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	for (i = 0; i < npages; i++) {
		unsigned long pg = pgoff + i;
		struct ktrack_ring *r = s->rings[pg / stride];
		void *kaddr;

		/* A sparse cpu_possible_mask: no ring for that id. */
		if (!r) {
			ret = -EINVAL;
			goto out;
		}
		kaddr = (u8 *)r->area + (pg % stride) * PAGE_SIZE;
		ret = vm_insert_page(vma, vma->vm_start + i * PAGE_SIZE, vmalloc_to_page(kaddr));
		if (ret)
			goto out;
	}
	vma->vm_ops = &ktrack_vm_ops;
	vma->vm_private_data = s;
	WRITE_ONCE(s->touched, true);
	ktrack_vm_open(vma);
out:
	mutex_unlock(&s->mmap_lock);
	return ret;
}
