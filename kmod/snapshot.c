// SPDX-License-Identifier: GPL-2.0
/*
 * snapshot.c - the SNAPSHOT action, in the manner of ftrace's snapshot
 * trigger: a copy of an overwrite-mode session's records up to a probe
 * hit, taken in the kernel while recording goes on, which a reader takes
 * with KTRACK_IOC_SNAPSHOT_GET and saves.
 *
 * The action runs in a probe handler (any context, NMI included), so it
 * only claims the session's one slot (IDLE -> REQUESTED, a cmpxchg), notes
 * the moment and queues an irq_work, which queues the copy on a workqueue.
 *
 * The copy (process context, under mmap_lock so that the rings stay)
 * reads each CPU's ring the way an mmap reader of an overwrite ring does,
 * without consuming anything: it copies [oldest, head), then re-reads
 * 'oldest' under its seqcount and keeps only what lies past it (a writer
 * moves 'oldest' before it rewrites a byte: ring_reclaim()).  Records
 * stamped after the moment are left out, as are PAD records.  What a CPU's
 * ring no longer held (the weight of the records before the first kept
 * one, 'oldest_index') leads that CPU's part as one LOST record
 * (KTRACK_LOST_OVERWRITTEN), so that the copy accounts for every record
 * the CPU produced up to the moment: kept + lost, exactly.
 *
 * The copy starts a little after the moment (irq_work, then a worker):
 * what a ring overwrites meanwhile is counted in its LOST record, and a
 * ring overwritten past the moment before the copy reached it is flagged
 * (KTRACK_SNAP_F_OVERRUN).  Reclaim is not held off meanwhile: a flight
 * recorder's rings are full, so holding it would drop every new record.
 *
 * One snapshot is held at a time: an action that finds the slot taken, or
 * a copy that gets no memory, is counted in 'missed'.  Its memory is
 * charged to max_total_pages like a ring's, and allocated without
 * mmap_lock held.
 */
#include <linux/cpumask.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "alloc_stats.h"
#include "ktrack_internal.h"
#include "ring.h"
#include "session.h"
#include "snapshot.h"
#include "uapi_copy.h"

/*
 * Probe context: claim the slot for a SNAPSHOT action.  False (counted
 * missed) when one is held or copied, or when the session cannot take one.
 */
notrace bool ktrack_snapshot_claim(struct ktrack_session *s)
{
	struct ktrack_snap *sn = &s->snap;

	if (!ktrack_session_overwrite(s) ||
	    atomic_cmpxchg(&sn->state, KT_SNAP_IDLE, KT_SNAP_REQUESTED) != KT_SNAP_IDLE) {
		atomic64_inc(&sn->missed);
		return false;
	}
	return true;
}

/*
 * Probe context, after ktrack_snapshot_claim() and the trigger record:
 * the moment is now, so that the trigger record is the snapshot's last.
 */
notrace void ktrack_snapshot_queue(struct ktrack_session *s, u32 probe_id, u64 nth)
{
	struct ktrack_snap *sn = &s->snap;

	sn->probe_id = probe_id;
	sn->nth = nth;
	sn->ts = ktrack_session_clock(s);
	irq_work_queue(&sn->irq);
}

static void snap_irq_fn(struct irq_work *w)
{
	struct ktrack_snap *sn = container_of(w, struct ktrack_snap, irq);

	queue_work(system_unbound_wq, &sn->work);
}

/*
 * One CPU's part: copy [oldest, head) of 'r' to 'seg' (room for
 * KTRACK_LOST_LEN + head - oldest bytes, head as read before: 'head'),
 * keep the records up to 'ts' whole, lead them with the LOST record.
 * Returns the part's bytes; *nrec gets its records, *overrun whether the
 * ring was overwritten past the moment before the copy.
 */
static u64 snap_copy_ring(struct ktrack_ring *r, u64 head, u64 ts, u8 *seg, u64 *nrec,
			  bool *overrun)
{
	u64 o1, i1, o2, i2, n, off, first, pos, out;
	u8 *raw = seg + KTRACK_LOST_LEN;
	bool first_unit = true;

	*nrec = 0;
	*overrun = false;
	ktrack_ring_oldest(r, &o1, &i1);
	if (o1 >= head) {
		/* overwritten up to where it stood after the moment */
		o2 = o1;
		i2 = i1;
		n = 0;
		*overrun = i1 && o1 > head;
		goto lost;
	}
	n = head - o1;
	if (n > r->size)
		return 0;	/* cannot happen: the ring is corrupt, keep nothing */
	off = o1 & ring_mask(r);
	first = min(n, r->size - off);
	memcpy(raw, r->data + off, first);
	memcpy(raw + first, r->data, n - first);
	smp_rmb();	/* the bytes are copied before 'oldest' is read again */
	ktrack_ring_oldest(r, &o2, &i2);
lost:
	out = 0;
	if (i2) {
		struct ktrack_rec_hdr *h = (struct ktrack_rec_hdr *)seg;
		struct ktrack_rec_lost *l = (struct ktrack_rec_lost *)(h + 1);

		memset(seg, 0, KTRACK_LOST_LEN);
		h->len = KTRACK_LOST_LEN;
		h->type = KTRACK_REC_LOST;
		h->cpu = r->cpu;
		l->count = i2;
		l->reason = KTRACK_LOST_OVERWRITTEN;
		out = KTRACK_LOST_LEN;
		(*nrec)++;
	}
	/*
	 * Keep the records past the re-read 'oldest': compacted forward
	 * (never past where they were copied), without PAD, without what
	 * was stamped after the moment (a LOST record by its first loss).
	 */
	for (pos = o2 > o1 ? o2 - o1 : 0; pos < n;) {
		const struct ktrack_rec_hdr *h = (const struct ktrack_rec_hdr *)(raw + pos);
		u32 unit = h->len;
		u64 rts;

		if (pos + sizeof(*h) > n || h->len < 8 || (h->len & 7) || pos + h->len > n)
			break;
		if (h->type != KTRACK_REC_PAD && (h->flags & KTRACK_RECF_LINKED)) {
			const struct ktrack_rec_hdr *h2 =
				(const struct ktrack_rec_hdr *)(raw + pos + h->len);

			if (pos + h->len + sizeof(*h2) > n || h2->len < sizeof(*h2) ||
			    (h2->len & 7) || pos + h->len + h2->len > n)
				break;
			unit += h2->len;
		}
		if (h->type != KTRACK_REC_PAD && h->len >= sizeof(*h)) {
			rts = h->ts;
			if (h->type == KTRACK_REC_LOST && h->len >= KTRACK_LOST_LEN)
				rts = ((const struct ktrack_rec_lost *)(h + 1))->first_ts;
			/*
			 * The oldest record left is newer than the moment: what
			 * led to it was overwritten before the copy, and
			 * oldest_index counts records made after it too.
			 */
			if (first_unit && rts > ts && i2)
				*overrun = true;
			first_unit = false;
			if (rts <= ts) {
				memmove(seg + out, raw + pos, unit);
				out += unit;
				*nrec += unit != h->len ? 2 : 1;
			}
		}
		pos += unit;
	}
	return out;
}

static void snap_release_buf(struct ktrack_snap *sn)
{
	vfree(sn->buf);
	sn->buf = NULL;
	if (sn->pages) {
		ktrack_ring_pages_uncharge(sn->pages);
		kt_alloc_add(KT_ALLOC_SNAPSHOT_PAGES, -(long)sn->pages);
	}
	sn->pages = 0;
	sn->len = 0;
	sn->records = 0;
	sn->flags = 0;
}

/*
 * Room for each CPU as it is now (under mmap_lock): what is written from
 * here on is stamped after the moment, and the copy stops at these heads.
 */
static u64 snap_measure(struct ktrack_session *s, u64 *heads)
{
	u64 total = 0;
	u32 cpu;

	for_each_possible_cpu(cpu) {
		struct ktrack_ring *r = s->rings[cpu];
		u64 o, i;

		if (r->mode != KTRACK_MODE_OVERWRITE)
			continue;
		/* Acquire: pairs with the writer's release of pub_head. */
		heads[cpu] = smp_load_acquire(&r->pub_head);
		ktrack_ring_oldest(r, &o, &i);
		total += KTRACK_LOST_LEN + (heads[cpu] > o ? min(heads[cpu] - o, r->size) : 0);
	}
	return total;
}

static void snap_work_fn(struct work_struct *w)
{
	struct ktrack_snap *sn = container_of(w, struct ktrack_snap, work);
	struct ktrack_session *s = container_of(sn, struct ktrack_session, snap);
	u64 *heads, total = 0, len = 0, nrec = 0, n, gen;
	unsigned long pages = 0;
	u32 cpu, flags = 0;
	u8 *buf = NULL;
	bool over;

	heads = kcalloc(nr_cpu_ids, sizeof(*heads), GFP_KERNEL);
	if (!heads)
		goto fail;
	mutex_lock(&s->mmap_lock);
	if (s->rings && !s->dead)
		total = snap_measure(s, heads);
	gen = s->rings_gen;
	mutex_unlock(&s->mmap_lock);
	/* An optional copy: no OOM kill for it, no warning when it fails. */
	pages = DIV_ROUND_UP(total, PAGE_SIZE);
	if (!total || ktrack_ring_pages_charge(pages)) {
		pages = 0;
		goto fail;
	}
	buf = __vmalloc(total, GFP_KERNEL | __GFP_NOWARN | __GFP_RETRY_MAYFAIL);
	if (!buf)
		goto fail;

	mutex_lock(&s->mmap_lock);
	/* the same rings as measured (SET_CONFIG may have replaced them) */
	if (!s->rings || s->dead || s->rings_gen != gen) {
		mutex_unlock(&s->mmap_lock);
		goto fail;
	}
	for_each_possible_cpu(cpu) {
		struct ktrack_ring *r = s->rings[cpu];

		if (r->mode != KTRACK_MODE_OVERWRITE)
			continue;
		len += snap_copy_ring(r, heads[cpu], READ_ONCE(sn->ts), buf + len, &n, &over);
		nrec += n;
		if (over)
			flags |= KTRACK_SNAP_F_OVERRUN;
		cond_resched();
	}
	mutex_unlock(&s->mmap_lock);
	kfree(heads);

	mutex_lock(&sn->lock);
	sn->buf = buf;
	sn->len = len;
	sn->records = nrec;
	sn->pages = pages;
	sn->flags = flags;
	sn->seq++;
	kt_alloc_add(KT_ALLOC_SNAPSHOT_PAGES, pages);
	atomic_set(&sn->state, KT_SNAP_READY);
	mutex_unlock(&sn->lock);
	ktrack_session_wake(s);
	return;
fail:
	kfree(heads);
	vfree(buf);
	if (pages)
		ktrack_ring_pages_uncharge(pages);
	atomic64_inc(&sn->missed);
	atomic_set(&sn->state, KT_SNAP_IDLE);
}

void ktrack_snapshot_init(struct ktrack_session *s)
{
	struct ktrack_snap *sn = &s->snap;

	atomic_set(&sn->state, KT_SNAP_IDLE);
	init_irq_work(&sn->irq, snap_irq_fn);
	INIT_WORK(&sn->work, snap_work_fn);
	atomic64_set(&sn->missed, 0);
	mutex_init(&sn->lock);
}

void ktrack_snapshot_free(struct ktrack_session *s)
{
	struct ktrack_snap *sn = &s->snap;

	/* No handler claims the slot any more (probes went at teardown). */
	irq_work_sync(&sn->irq);
	flush_work(&sn->work);
	snap_release_buf(sn);
}

void ktrack_snapshot_new_run(struct ktrack_session *s)
{
	struct ktrack_snap *sn = &s->snap;

	mutex_lock(&sn->lock);
	if (atomic_read(&sn->state) == KT_SNAP_READY) {
		snap_release_buf(sn);
		atomic_set(&sn->state, KT_SNAP_IDLE);
	}
	/* a copy still running belongs to the last run: counted there */
	if (atomic_read(&sn->state) == KT_SNAP_IDLE) {
		sn->seq = 0;
		atomic64_set(&sn->missed, 0);
	}
	mutex_unlock(&sn->lock);
}

u32 ktrack_snapshot_stats_flags(struct ktrack_session *s)
{
	switch (atomic_read(&s->snap.state)) {
	case KT_SNAP_REQUESTED:
	case KT_SNAP_TAKING:
		return KTRACK_STATS_F_SNAP_PENDING;
	case KT_SNAP_READY:
		return KTRACK_STATS_F_SNAP_READY;
	default:
		return 0;
	}
}

long ktrack_snapshot_get(struct ktrack_session *s, void __user *arg)
{
	struct ktrack_snap *sn = &s->snap;
	struct ktrack_snapshot req;
	u32 usize, state;
	long ret = 0;
	void *buf;
	u64 len;

	ret = ktrack_copy_sized_in(&req, sizeof(req), sizeof(req), arg, &usize);
	if (ret)
		return ret;
	/* Taken out under the lock, copied out after it (no user copy under a lock). */
	mutex_lock(&sn->lock);
	state = atomic_read(&sn->state);
	req.size = sizeof(req);
	req.seq = sn->seq;
	req.missed = atomic64_read(&sn->missed);
	if (state != KT_SNAP_READY) {
		mutex_unlock(&sn->lock);
		req.buf_len = 0;
		ret = state == KT_SNAP_IDLE ? -ENOENT : -EAGAIN;
		return copy_to_user(arg, &req, sizeof(req)) ? -EFAULT : ret;
	}
	len = sn->len;
	req.probe_id = sn->probe_id;
	req.ts = sn->ts;
	req.nth = sn->nth;
	req.records = sn->records;
	req.flags = sn->flags;
	req.__pad = 0;
	if (req.buf_len < len || (len && !req.buf_ptr)) {
		mutex_unlock(&sn->lock);
		ret = req.buf_len < len ? -ENOSPC : -EFAULT;
		req.buf_len = len;
		return copy_to_user(arg, &req, sizeof(req)) ? -EFAULT : ret;
	}
	buf = sn->buf;
	atomic_set(&sn->state, KT_SNAP_TAKING);
	mutex_unlock(&sn->lock);

	req.buf_len = len;
	if (copy_to_user(u64_to_user_ptr(req.buf_ptr), buf, len) ||
	    copy_to_user(arg, &req, sizeof(req))) {
		/* It stays for another try. */
		atomic_set(&sn->state, KT_SNAP_READY);
		return -EFAULT;
	}
	mutex_lock(&sn->lock);
	snap_release_buf(sn);
	atomic_set(&sn->state, KT_SNAP_IDLE);
	mutex_unlock(&sn->lock);
	return 0;
}
