/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ring.h - per-CPU ring buffers of a session (see ring.c for the design):
 * ring.c writes, ring_read.c reads, ring_alloc.c allocates and frees.
 */
#ifndef _KTRACK_RING_H
#define _KTRACK_RING_H

#include <linux/atomic.h>
#include <linux/irq_work.h>
#include <linux/types.h>
#include <asm/local.h>

#include <uapi/ktrack.h>

struct ktrack_session;

/* Bytes of a LOST record: header + struct ktrack_rec_lost. */
#define KTRACK_LOST_LEN	(sizeof(struct ktrack_rec_hdr) + sizeof(struct ktrack_rec_lost))

struct ktrack_ring {
	struct ktrack_ring_ctrl *ctrl;	/* page 0 of 'area', mapped RW */
	u8 *data;			/* pages 1.., mapped read-only */
	void *area;			/* vmalloc'ed, zeroed: ctrl + data */
	u64 size;			/* data bytes, power of two */
	u32 cpu;
	u32 mode;
	struct ktrack_session *s;

	/* Written only on 'cpu' (nesting included): local ops. */
	local_t head;			/* end of reserved space */
	local_t nest;			/* writers in progress on this CPU */
	local_t lost_pending;		/* dropped, no LOST record yet */
	local_t lost_first_ts;
	local_t lost_last_ts;
	local_t written;
	local_t lost_full;
	local_t lost_too_big;
	local_t overwritten;
	local_t bytes;
	local_t filtered;
	local_t wakeups;		/* irq_work queued to wake readers */

	/*
	 * Overwrite mode: the oldest record still present.  Only the
	 * outermost writer on 'cpu' moves it, inside the seqcount 'seq'
	 * (mirrored to the control page for mmap readers; read() uses these
	 * copies, which userspace cannot corrupt).
	 */
	u64 seq;
	u64 oldest;
	u64 oldest_index;

	u64 pub_head;			/* data_head as published: the kernel's copy */
	u64 consumed;			/* overwrite mode: read() vs reclaim, see ring_steal() */
	atomic64_t read;		/* records consumed by read() */
	atomic_t armed;			/* a reader sleeps: wake it */
	struct irq_work wakeup;		/* wake_up() is not NMI-safe */
};

static inline u64 ring_mask(const struct ktrack_ring *r)
{
	return r->size - 1;
}

/* Records a record stands for: a LOST record its count (overwrite mode). */
static __always_inline u64 rec_weight(const u8 *rec, u16 type)
{
	if (type == KTRACK_REC_LOST)
		return READ_ONCE(((const struct ktrack_rec_lost *)(rec + sizeof(struct ktrack_rec_hdr)))->count);
	return 1;
}

/*
 * Bytes of the unit that starts with the record at 'off' (len 'len',
 * already checked): the record alone, or with the record linked to it
 * (KTRACK_RECF_LINKED), which the writer claimed in the same reservation
 * and which overwrite reclaim and read() take only together.  0 when the
 * link leads nowhere valid (the caller treats the ring as corrupt).
 */
static __always_inline u32 ring_unit_len(const struct ktrack_ring *r, u64 off, u16 len)
{
	u16 flags = READ_ONCE(((const struct ktrack_rec_hdr *)(r->data + off))->flags);
	u16 len2;

	if (!(flags & KTRACK_RECF_LINKED))
		return len;
	if (off + len + sizeof(struct ktrack_rec_hdr) > r->size)
		return 0;
	len2 = READ_ONCE(*(const u16 *)(r->data + off + len));
	if (len2 < sizeof(struct ktrack_rec_hdr) || (len2 & 7) || off + len + len2 > r->size)
		return 0;
	return len + len2;
}

/* ring_alloc.c: allocate and publish s->rings; under s->mmap_lock. */
int ktrack_rings_alloc(struct ktrack_session *s);
/* Free them with the session (last reference). */
void ktrack_rings_free(struct ktrack_session *s);
/* Free them on a live session: under s->read_lock and s->mmap_lock; sleeps. */
void ktrack_rings_release(struct ktrack_session *s);
/* Overwrite mode: 'oldest' and its index, consistent (ring_reclaim()'s seqcount). */
void ktrack_ring_oldest(struct ktrack_ring *r, u64 *pos, u64 *index);
/* Bytes not consumed yet on this ring. */
u64 ktrack_ring_unread(struct ktrack_ring *r);
/* Writes pending LOST records on every CPU (session stopped or not). */
void ktrack_rings_flush(struct ktrack_session *s);
/* read(2): whole records from every CPU; bytes copied or -errno. */
ssize_t ktrack_rings_read(struct ktrack_session *s, char __user *buf, size_t count);
/* Arm every ring's wakeup (before sleeping on a file's wq). */
void ktrack_rings_arm(struct ktrack_session *s);
/* True when a reader should wake: watermark, or any data when 'any'. */
bool ktrack_rings_readable(struct ktrack_session *s, bool any);
void ktrack_ring_fill_stats(struct ktrack_ring *r, struct ktrack_cpu_stats_ext *st);

#endif /* _KTRACK_RING_H */
