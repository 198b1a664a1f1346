// SPDX-License-Identifier: GPL-2.0
/*
 * ring_read.c - the kernel's consumers of the rings: read(2) (whole
 * records, synthesized LOST records in overwrite mode), the unread count,
 * and what poll() and read()'s wait look at (arm, readable).  Positions
 * come from the kernel's own copies (pub_head, the seqcount'ed 'oldest'):
 * the writable control page only gives the reader's tail, clamped.
 */
#include <linux/cpumask.h>
#include <linux/irq_work.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "ktrack_internal.h"
#include "ring.h"
#include "session.h"

u64 ktrack_ring_unread(struct ktrack_ring *r)
{
	/* Acquire: pairs with the writer's release of pub_head. */
	u64 head = smp_load_acquire(&r->pub_head);
	u64 tail = READ_ONCE(r->ctrl->data_tail);

	if (r->mode == KTRACK_MODE_OVERWRITE)
		tail = max(tail, READ_ONCE(r->oldest));
	return head > tail ? head - tail : 0;
}

/*
 * poll() and read()'s wait condition run without a session lock: they look
 * at the rings under rcu_read_lock().  The array is published only once
 * filled (ktrack_rings_alloc) and freed only a grace period after it was
 * unpublished (ktrack_rings_release).
 */
void ktrack_rings_arm(struct ktrack_session *s)
{
	struct ktrack_ring **rings;
	u32 cpu;

	rcu_read_lock();
	/* Pairs with the release that publishes a filled array (rings_alloc). */
	rings = smp_load_acquire(&s->rings);
	if (rings)
		for_each_possible_cpu(cpu)
			atomic_set(&rings[cpu]->armed, 1);
	rcu_read_unlock();
	/* Armed before the caller checks for data: no lost wakeup. */
	smp_mb();
}

bool ktrack_rings_readable(struct ktrack_session *s, bool any)
{
	struct ktrack_ring **rings;
	bool ret = false;
	u32 cpu;

	rcu_read_lock();
	/* Pairs with the release that publishes a filled array (rings_alloc). */
	rings = smp_load_acquire(&s->rings);
	if (rings) {
		for_each_possible_cpu(cpu) {
			u64 n = ktrack_ring_unread(rings[cpu]);

			if (n && (any || n >= s->wm_bytes)) {
				ret = true;
				break;
			}
		}
	}
	rcu_read_unlock();
	return ret;
}

/* Overwrite mode: 'oldest' and its index, consistent (seqcount). */
void ktrack_ring_oldest(struct ktrack_ring *r, u64 *pos, u64 *index)
{
	u64 s1;

	for (;;) {
		/* Acquire: 'oldest' is read after seq (writer's wmb). */
		s1 = smp_load_acquire(&r->seq);
		if (s1 & 1) {
			cpu_relax();
			continue;
		}
		*pos = READ_ONCE(r->oldest);
		*index = READ_ONCE(r->oldest_index);
		smp_rmb();	/* read 'oldest' before re-checking seq */
		if (READ_ONCE(r->seq) == s1)
			return;
	}
}

/*
 * read() from one ring into buf[*done..count).  Returns 0, -EFAULT,
 * -EINVAL (first record does not fit) or -EIO (userspace corrupted the
 * positions).
 */
static int ring_read(struct ktrack_ring *r, char __user *buf, size_t count, size_t *done)
{
	struct ktrack_ring_ctrl *ctrl = r->ctrl;
	bool ow = r->mode == KTRACK_MODE_OVERWRITE;
	u64 tail = READ_ONCE(ctrl->data_tail);
	u64 index = READ_ONCE(ctrl->tail_index);
	u64 oldest = 0, oindex = 0, nread = 0;
	int ret = 0;

	/*
	 * data_tail comes from the writable control page: a tail past the
	 * kernel's head means "all consumed" (the mapper's own loss), never
	 * uncommitted bytes.
	 */
	if (tail > smp_load_acquire(&r->pub_head))	/* pairs with ring_put()'s release */
		tail = READ_ONCE(r->pub_head);
	for (;;) {
		/* Acquire: pairs with the writer's release of pub_head. */
		u64 head = smp_load_acquire(&r->pub_head);
		u64 off, w = 1;
		u16 len, type;
		u32 unit;

		if (ow) {
			ktrack_ring_oldest(r, &oldest, &oindex);
			if (oldest > tail && oindex == index) {
				tail = oldest;	/* only PAD was reclaimed */
				continue;
			}
			if (oldest > tail) {
				struct {
					struct ktrack_rec_hdr h;
					struct ktrack_rec_lost l;
				} lost = {};

				if (count - *done < sizeof(lost)) {
					ret = *done ? 0 : -EINVAL;
					break;
				}
				lost.h.len = sizeof(lost);
				lost.h.type = KTRACK_REC_LOST;
				lost.h.cpu = r->cpu;
				lost.l.count = oindex - index;
				lost.l.reason = KTRACK_LOST_OVERWRITTEN;
				if (copy_to_user(buf + *done, &lost, sizeof(lost))) {
					ret = -EFAULT;
					break;
				}
				*done += sizeof(lost);
				tail = oldest;
				index = oindex;
				continue;
			}
		}
		if (tail == head)
			break;
		if (head - tail > r->size) {
			ret = -EIO;
			break;
		}
		/*
		 * A mapper's tail that is no record boundary: the header
		 * loads below would start up to 7 bytes before the end of
		 * the data area and run past it (review 2026-11-27, S1-1).
		 */
		if (tail & (KTRACK_REC_ALIGN - 1)) {
			ret = -EIO;
			break;
		}
		off = tail & ring_mask(r);
		len = READ_ONCE(*(u16 *)(r->data + off));
		type = READ_ONCE(*(u16 *)(r->data + off + 2));
		/* a linked pair is copied, claimed and counted as one (0: corrupt) */
		unit = 0;
		if (len >= 8 && !(len & 7) && off + len <= r->size)
			unit = type == KTRACK_REC_PAD ? len :
			       len < sizeof(struct ktrack_rec_hdr) ? 0 : ring_unit_len(r, off, len);
		if (!unit || unit > head - tail) {
			if (ow) {
				ktrack_ring_oldest(r, &oldest, &oindex);
				if (oldest > tail)
					continue;
			}
			ret = -EIO;
			break;
		}
		/*
		 * The weight is taken before the re-check of 'oldest' below,
		 * which validates it with the copy: read after it, a LOST
		 * record's count could come from a record written since
		 * (review finding #12).
		 */
		if (type == KTRACK_REC_LOST)
			w = rec_weight(r->data + off, type);
		if (unit != len)
			w = 2;
		if (type != KTRACK_REC_PAD) {
			if (count - *done < unit) {
				/* a length torn by a reclaim is no reason to fail */
				if (ow) {
					ktrack_ring_oldest(r, &oldest, &oindex);
					if (oldest > tail)
						continue;
				}
				ret = *done ? 0 : -EINVAL;
				break;
			}
			if (copy_to_user(buf + *done, r->data + off, unit)) {
				ret = -EFAULT;
				break;
			}
		}
		if (ow) {
			u64 c;

			/* The copy counts only if it was not reclaimed meanwhile. */
			smp_rmb();
			ktrack_ring_oldest(r, &oldest, &oindex);
			if (oldest > tail)
				continue;
			/*
			 * ... and only once: claim it against a writer that
			 * reclaims it right now (ring_steal()).  Lost that race:
			 * 'oldest' moves past it, the next pass reports it LOST.
			 */
			c = READ_ONCE(r->consumed);
			if (type != KTRACK_REC_PAD &&
			    (c > tail || cmpxchg(&r->consumed, c, tail + unit) != c)) {
				ktrack_ring_oldest(r, &oldest, &oindex);
				if (oldest > tail)
					continue;
				/* Not reclaimed, yet claimed: a tail moved back by a mapper. */
				if (READ_ONCE(r->consumed) > tail) {
					ret = -EIO;
					break;
				}
				continue;
			}
		}
		if (type != KTRACK_REC_PAD) {
			*done += unit;
			index += w;
			/* 'read' counts records of 'written': not LOST markers. */
			if (type != KTRACK_REC_LOST)
				nread += unit != len ? 2 : 1;
		}
		tail += unit;
	}
	WRITE_ONCE(ctrl->tail_index, index);
	/* Release: our copies are done before the writer reuses the space. */
	smp_store_release(&ctrl->data_tail, tail);
	atomic64_add(nread, &r->read);
	return ret;
}

ssize_t ktrack_rings_read(struct ktrack_session *s, char __user *buf, size_t count)
{
	/* Under s->read_lock: the rings are not freed meanwhile. */
	struct ktrack_ring **rings = smp_load_acquire(&s->rings);
	size_t done = 0;
	u32 i, cpu;
	int ret = 0;

	if (!rings)
		return 0;
	for (i = 0; i < s->nr_rings && !ret; i++) {
		cpu = (s->read_cpu + i) % s->nr_rings;
		if (!cpu_possible(cpu))
			continue;
		ret = ring_read(rings[cpu], buf, count, &done);
		if (ret == -EINVAL && done)
			ret = 0;
		if (done >= count)
			break;
	}
	s->read_cpu = (s->read_cpu + 1) % s->nr_rings;
	return done ? done : ret;
}
