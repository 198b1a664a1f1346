// SPDX-License-Identifier: GPL-2.0
/*
 * ring.c - per-CPU ring buffers: the lock-free write path (reserve, commit,
 * LOST records, overwrite reclaim, flush).  Allocation and freeing are in
 * ring_alloc.c; read(), poll()'s checks and the unread count in ring_read.c.
 *
 * Design (perf-like).  Each CPU has its own ring; only that CPU writes it,
 * from any context (task, softirq, hardirq, NMI), nested.  A writer
 * reserves space with a local_cmpxchg() loop on 'head' (a nested writer
 * simply interrupts the loop and completes first), fills its record and
 * commits.  'nest' counts writers in progress on the CPU: only the
 * outermost one publishes ctrl->data_head (store-release), and it re-checks
 * 'head' after dropping 'nest' to zero so that a writer nested in that
 * window is published too.  Thus data_head never covers a record still
 * being written.  No lock, no allocation, no sleeping: NMI-safe.
 *
 * A record never wraps: when it does not fit before the end of the area,
 * the reservation also covers the tail end, which becomes a PAD record.
 *
 * Discard mode: space is free up to the reader's data_tail (load-acquire,
 * pairs with the reader's store-release after it copied the data).  A
 * dropped record increments 'lost_pending'; the next writer that finds
 * room writes a KTRACK_REC_LOST record with that count first, so the gap
 * sits exactly where the records went missing (FLUSH writes the last one).
 *
 * Overwrite mode: the outermost writer reclaims the oldest records until
 * its reservation fits, and a page more (ring_reclaim_slack()), moving
 * 'oldest' inside a seqcount (see the ABI header for the reader's side).
 * Until the slack is used up, ring_claim_fast() reserves with no reclaim
 * at all.  The outermost writer is the only one that may: at nest 1
 * every reserved record below 'head' is committed, so their lengths can be
 * walked.  A nested writer that finds no room drops its record (counted,
 * LOST record as in discard mode).
 *
 * Linked pairs (a probe hit and its stack, KTRACK_RECF_LINKED): one
 * reservation holds both records, so nothing nests between them; reclaim
 * and read() take the pair only whole (ring_unit_len()), and every counter
 * counts both.
 */
#include <linux/cpumask.h>
#include <linux/hardirq.h>
#include <linux/mm.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "ktrack_internal.h"
#include "ktrack_trace.h"
#include "ring.h"
#include "session.h"

static notrace u64 session_clock(const struct ktrack_session *s)
{
	switch (READ_ONCE(s->cfg.clock)) {
	case KTRACK_CLOCK_MONO:
		return ktime_get_mono_fast_ns();
	case KTRACK_CLOCK_BOOT:
		return ktime_get_boot_fast_ns();
	default:
		return ktrack_local_clock();
	}
}

u64 notrace ktrack_session_clock(struct ktrack_session *s)
{
	return session_clock(s);
}

static notrace u16 ctx_flags(void)
{
	/* one read of the preempt count, not one per test */
	unsigned long pc = preempt_count();

	if (pc & NMI_MASK)
		return KTRACK_RECF_CTX_NMI;
	if (pc & HARDIRQ_MASK)
		return KTRACK_RECF_CTX_HARDIRQ;
	if (pc & SOFTIRQ_OFFSET)
		return KTRACK_RECF_CTX_SOFTIRQ;
	return KTRACK_RECF_CTX_TASK;
}

static notrace bool pid_listed(const struct ktrack_session *s, pid_t pid, pid_t tgid)
{
	u32 i;

	for (i = 0; i < s->cfg.nr_pids; i++)
		if (s->cfg.pids[i] == pid || s->cfg.pids[i] == tgid)
			return true;
	return false;
}

/*
 * KTRACK_CFG_F_PID_TREE: is a process 'current' descends from listed?
 * Preemption is disabled (an RCU read side): the parents cannot be freed
 * under the walk.
 */
static notrace bool pid_tree_listed(const struct ktrack_session *s)
{
	struct task_struct *t = current;
	unsigned int depth;

	for (depth = 0; depth < KTRACK_PID_TREE_DEPTH && t->pid > 1; depth++) {
		t = rcu_dereference_sched(t->real_parent);
		if (pid_listed(s, t->tgid, t->tgid))
			return true;
	}
	return false;
}

static notrace bool filtered_out_slow(const struct ktrack_session *s, int cpu)
{
	if (s->cfg.cpu_mask && (cpu >= 64 || !(s->cfg.cpu_mask & BIT_ULL(cpu))))
		return true;
	if (!s->cfg.nr_pids)
		return false;
	if (pid_listed(s, current->pid, current->tgid))
		return false;
	return !(s->cfg.flags & KTRACK_CFG_F_PID_TREE) || !pid_tree_listed(s);
}

/* The session's CPU and pid filters; most sessions have none: no call. */
static __always_inline bool filtered_out(const struct ktrack_session *s, int cpu)
{
	if (!s->cfg.cpu_mask && !s->cfg.nr_pids)
		return false;
	return filtered_out_slow(s, cpu);
}

/* 'n' records dropped at 'ts' (2 for a linked pair). */
static notrace void note_lost(struct ktrack_ring *r, u64 ts, u32 n)
{
	local_cmpxchg(&r->lost_first_ts, 0, (long)ts);
	local_set(&r->lost_last_ts, (long)ts);
	local_add(n, &r->lost_pending);
}

/*
 * Overwrite mode: who had the record at 'pos', read() or the writer that
 * reclaims it?  read() validates a copy, then claims the record by moving
 * 'consumed' past it; the writer steals each record it reclaims the same
 * way.  One cmpxchg decides, so a record is counted once: in 'read' or in
 * 'overwritten', never both (the reader's data_tail is stored only when
 * read() returns, too late to tell the writer).
 */
static notrace bool ring_steal(struct ktrack_ring *r, u64 pos, u32 len)
{
	u64 c;

	for (;;) {
		c = READ_ONCE(r->consumed);
		if (c > pos)
			return false;	/* read() claimed it */
		if (cmpxchg(&r->consumed, c, pos + len) == c)
			return true;
	}
}

/*
 * How far past what a reservation needs one reclaim goes: a page of the
 * ring (an eighth of a small one).  A full ring then pays the reclaim's
 * barriers and steals once per page of records, not once per record, as
 * ftrace's ring buffer moves its head a page at a time.
 */
static inline u64 ring_reclaim_slack(const struct ktrack_ring *r)
{
	return min_t(u64, PAGE_SIZE, r->size / 8);
}

/*
 * Overwrite mode, outermost writer: reclaim the oldest records until
 * [.., end) fits, and a slack beyond it when they are committed.  False
 * when [.., end) cannot fit (only in-flight data left).
 */
static notrace bool ring_reclaim(struct ktrack_ring *r, u64 end, u64 head)
{
	struct ktrack_ring_ctrl *ctrl = r->ctrl;
	u64 oldest = r->oldest, index = r->oldest_index, tail;
	u64 want = end + ring_reclaim_slack(r);
	u64 unread = 0;

	tail = READ_ONCE(ctrl->data_tail);
	/* A mapper's tail past our head is corrupt: treat it as all consumed. */
	if (tail > head)
		tail = head;
	WRITE_ONCE(r->seq, r->seq + 1);
	WRITE_ONCE(ctrl->overwrite_seq, r->seq);
	smp_wmb();	/* seq odd before 'oldest' moves; pairs with readers' rmb */
	while (want - oldest > r->size) {
		u64 off = oldest & ring_mask(r);
		u16 len = READ_ONCE(*(u16 *)(r->data + off));
		u16 type = READ_ONCE(*(u16 *)(r->data + off + 2));
		u32 unit = len;

		/* at nest 1 all below head is committed: only a corrupt length stops it */
		if (oldest >= head || len < 8 || (len & 7) || off + len > r->size)
			break;
		if (type != KTRACK_REC_PAD) {
			/* a linked pair goes as one: never a STACK without its PROBE */
			unit = len >= sizeof(struct ktrack_rec_hdr) ? ring_unit_len(r, off, len) : 0;
			if (!unit || oldest + unit > head)
				break;
			index += rec_weight(r->data + off, type) + (unit != len);
			/*
			 * 'overwritten' counts records of 'written' only: a LOST
			 * record's count is already in lost_full (stats equations).
			 * A mapper's tail may sit between the two of a pair.
			 */
			if (ring_steal(r, oldest, unit)) {
				if (oldest >= tail && type != KTRACK_REC_LOST)
					unread++;
				if (unit != len && oldest + len >= tail)
					unread++;
			}
		}
		oldest += unit;
	}
	WRITE_ONCE(r->oldest, oldest);
	WRITE_ONCE(r->oldest_index, index);
	WRITE_ONCE(ctrl->oldest, oldest);
	WRITE_ONCE(ctrl->oldest_index, index);
	smp_wmb();	/* 'oldest' stored before seq turns even */
	WRITE_ONCE(r->seq, r->seq + 1);
	WRITE_ONCE(ctrl->overwrite_seq, r->seq);
	smp_wmb();	/* the reclaimed bytes are rewritten only after 'oldest' moved */
	if (unread) {
		local_add(unread, &r->overwritten);
		trace_ktrack_ring_overflow(r->s->id, r->cpu, unread, KTRACK_LOST_OVERWRITTEN);
	}
	return end - oldest <= r->size;
}

static notrace bool ring_room(struct ktrack_ring *r, u64 head, u64 end)
{
	if (r->mode == KTRACK_MODE_DISCARD) {
		/* Acquire: the reader's copy is done before we overwrite (its release). */
		u64 tail = smp_load_acquire(&r->ctrl->data_tail);

		/*
		 * The control page is writable by the mapper: a tail beyond
		 * what was reserved would wedge the ring (every record lost);
		 * take it as "all consumed", the mapper's own loss.
		 */
		if (tail > head)
			tail = head;
		return end - tail <= r->size;
	}
	if (end - READ_ONCE(r->oldest) <= r->size)
		return true;
	if (local_read(&r->nest) != 1)
		return false;
	return ring_reclaim(r, end, head);
}

/* Publish data_head when the outermost writer on this CPU is done. */
static notrace void ring_put(struct ktrack_ring *r)
{
	long head;

	if (local_read(&r->nest) > 1) {
		local_dec(&r->nest);
		return;
	}
again:
	head = local_read(&r->head);
	/*
	 * Release: the records are written before readers see the head.
	 * 'pub_head' is the kernel's copy (read(), poll(), the watermark),
	 * which the mapper cannot overwrite; data_head is for mappers.
	 */
	smp_store_release(&r->pub_head, (u64)head);	/* records before the head */
	smp_store_release(&r->ctrl->data_head, (u64)head);	/* the same, for mappers */
	barrier();
	local_set(&r->nest, 0);
	barrier();
	if (unlikely(head != local_read(&r->head))) {
		local_inc(&r->nest);
		goto again;
	}
}

static notrace void ring_maybe_wake(struct ktrack_session *s, struct ktrack_ring *r)
{
	/*
	 * Store-buffering pair with ktrack_rings_arm(): we store pub_head
	 * then load 'armed', the reader stores 'armed' then loads pub_head.
	 * Without a full barrier on both sides each can miss the other's
	 * store (x86 lets a load pass an earlier store) and the reader
	 * sleeps with data in the ring (review finding #14).
	 */
	smp_mb();
	if (!atomic_read(&r->armed) || ktrack_ring_unread(r) < s->wm_bytes)
		return;
	/* One wake-up per arming: a reader re-arms only when it sleeps again. */
	if (atomic_cmpxchg(&r->armed, 1, 0) == 1) {
		local_inc(&r->wakeups);
		irq_work_queue(&r->wakeup);
	}
}

static notrace void fill_hdr(struct ktrack_rec_hdr *h, u16 len, u16 type, int cpu, u64 ts)
{
	h->len = len;
	h->type = type;
	h->cpu = cpu;
	h->flags = ctx_flags();
	h->ts = ts;
	h->pid = current->pid;
	h->tgid = current->tgid;
}

/*
 * A writer that fails to claim room gives back the pending losses it took:
 * writers nested in it (IRQ, NMI) have finished by now, so only the
 * earliest first_ts needs care.
 */
static notrace void give_back_lost(struct ktrack_ring *r, long n, long first, long last)
{
	long cur;

	do {
		cur = local_read(&r->lost_first_ts);
		if (cur && cur <= first)
			break;
	} while (local_cmpxchg(&r->lost_first_ts, cur, first) != cur);
	local_cmpxchg(&r->lost_last_ts, 0, last);
	local_add(n, &r->lost_pending);
}

/*
 * Reserve 'len' bytes (header included) on this CPU's ring, writing a
 * pending LOST record first.  Called with preemption disabled and 'nest'
 * raised; returns the record address or NULL (dropped and counted).
 *
 * The pending count is taken before the claim: a writer nested between our
 * claim and the LOST record would otherwise write that LOST record after our
 * record, and a reader would see our record before the marker of the losses
 * that came before it.
 */
static notrace void *ring_claim(struct ktrack_session *s, struct ktrack_ring *r, u32 len,
				u32 records, u64 ts, bool carrier)
{
	long pending = local_read(&r->lost_pending), first = 0, last = 0;
	u64 head, end, off, pad;
	u32 extra = 0;
	u8 *p;

	if (unlikely(pending)) {
		pending = local_xchg(&r->lost_pending, 0);
		if (pending) {
			first = local_xchg(&r->lost_first_ts, 0);
			last = local_xchg(&r->lost_last_ts, 0);
			extra = KTRACK_LOST_LEN;
		}
	}
	for (;;) {
		head = local_read(&r->head);
		off = head & ring_mask(r);
		pad = off + len + extra > r->size ? r->size - off : 0;
		end = head + pad + len + extra;
		if (!ring_room(r, head, end)) {
			if (pending)
				give_back_lost(r, pending, first, last);
			/*
			 * The flush's carrier is no record of its own: when it
			 * finds no room it must not count as one more loss.
			 */
			if (!carrier) {
				note_lost(r, ts, records);
				local_add(records, &r->lost_full);
			}
			return NULL;
		}
		if (local_cmpxchg(&r->head, head, end) == head)
			break;
	}
	if (pad) {
		/* A PAD may be 8 bytes: only len and type are written. */
		*(u16 *)(r->data + off) = pad;
		*(u16 *)(r->data + off + 2) = KTRACK_REC_PAD;
	}
	p = r->data + ((head + pad) & ring_mask(r));
	if (extra) {
		struct ktrack_rec_hdr *h = (struct ktrack_rec_hdr *)p;
		struct ktrack_rec_lost *l = (struct ktrack_rec_lost *)(h + 1);

		fill_hdr(h, KTRACK_LOST_LEN, KTRACK_REC_LOST, r->cpu, ts);
		l->count = pending;
		l->first_ts = first;
		l->last_ts = last;
		l->reason = KTRACK_LOST_FULL;
		l->__pad = 0;
		trace_ktrack_ring_overflow(s->id, r->cpu, pending, KTRACK_LOST_FULL);
		p += KTRACK_LOST_LEN;
	}
	return p;
}

/*
 * ring_claim() for the common case, in a few instructions: no losses
 * pending, the record fits before the end of the area, and the space is
 * free (discard mode) or still holds no unreclaimed record (overwrite
 * mode).  NULL: ring_claim() decides, from the same state.
 */
static __always_inline void *ring_claim_fast(struct ktrack_ring *r, u32 len)
{
	u64 head = local_read(&r->head), off = head & ring_mask(r), used_from;

	if (local_read(&r->lost_pending) || off + len > r->size)
		return NULL;
	if (r->mode == KTRACK_MODE_DISCARD)
		used_from = smp_load_acquire(&r->ctrl->data_tail);	/* as ring_room() */
	else
		used_from = READ_ONCE(r->oldest);
	if (used_from > head || head + len - used_from > r->size)
		return NULL;
	if (local_cmpxchg(&r->head, head, head + len) != head)
		return NULL;
	return r->data + off;
}

/* Largest record: it must fit, with a LOST record, in half the ring. */
static inline bool too_big(const struct ktrack_ring *r, u32 len)
{
	return len > KTRACK_REC_MAX - KTRACK_LOST_LEN || len + KTRACK_LOST_LEN > r->size / 2;
}

/*
 * How a reservation treats the session's state: an event needs a running
 * session and passes its pid/CPU filter; a meta record (a module came or
 * went: what names every other record) needs only a running session; a
 * forced one (the flush's LOST carrier) needs neither.
 */
enum ring_reserve_kind { RESERVE_EVENT, RESERVE_META, RESERVE_FORCED };

/*
 * 'link_len' > 0: room for a second record of that many bytes (header
 * included, aligned) after this one, claimed with it (a linked pair).
 */
static __always_inline void *ring_reserve(struct ktrack_session *s, u16 type, u32 payload_len,
				  u32 link_len, struct ktrack_reservation *res,
				  enum ring_reserve_kind kind, int on_cpu)
{
	u32 records = link_len ? 2 : 1;
	struct ktrack_ring *r;
	u32 len;
	u64 ts;
	void *p;
	int cpu;

	preempt_disable_notrace();
	if (kind != RESERVE_FORCED && !READ_ONCE(s->running))
		goto out;
	/* Paused by a STOP action: events are not produced, as when stopped. */
	if (kind == RESERVE_EVENT && READ_ONCE(s->trig_off))
		goto out;
	/* Pairs with smp_store_release(&s->running) at start. */
	smp_rmb();
	/*
	 * on_cpu >= 0 only for the flush of an offline CPU's ring, which no
	 * writer touches while the caller holds cpus_read_lock().
	 */
	cpu = on_cpu >= 0 ? on_cpu : smp_processor_id();
	r = s->rings[cpu];
	if (kind == RESERVE_EVENT && filtered_out(s, cpu)) {
		local_add(records, &r->filtered);
		goto out;
	}
	ts = session_clock(s);
	len = ALIGN(sizeof(struct ktrack_rec_hdr) + payload_len, KTRACK_REC_ALIGN);
	if (payload_len > KTRACK_REC_MAX || link_len > KTRACK_REC_MAX ||
	    too_big(r, len + link_len)) {
		note_lost(r, ts, records);
		local_add(records, &r->lost_too_big);
		goto out;
	}
	local_inc(&r->nest);
	barrier();
	p = ring_claim_fast(r, len + link_len);
	if (!p)
		p = ring_claim(s, r, len + link_len, records, ts, kind == RESERVE_FORCED);
	if (!p) {
		ring_put(r);
		goto out;
	}
	/* Zero the alignment tail: no stale bytes between records. */
	*(u64 *)((u8 *)p + len - 8) = 0;
	fill_hdr(p, len, type, cpu, ts);
	if (link_len) {
		struct ktrack_rec_hdr *h2 = (struct ktrack_rec_hdr *)((u8 *)p + len);

		((struct ktrack_rec_hdr *)p)->flags |= KTRACK_RECF_LINKED;
		*(u64 *)((u8 *)h2 + link_len - 8) = 0;
		fill_hdr(h2, link_len, KTRACK_REC_PAD, cpu, ts);
	}
	res->rec = p;
	res->len = len + link_len;
	res->records = records;
	res->cpu = cpu;
	res->pos = 0;
	res->irqflags = 0;
	return (struct ktrack_rec_hdr *)p + 1;
out:
	preempt_enable_notrace();
	return NULL;
}

void notrace *ktrack_ring_reserve(struct ktrack_session *s, u16 type, u32 payload_len,
				  struct ktrack_reservation *res)
{
	return ring_reserve(s, type, payload_len, 0, res, RESERVE_EVENT, -1);
}

int ktrack_session_write_meta(struct ktrack_session *s, u16 type, const void *payload, u32 len)
{
	struct ktrack_reservation res;
	u8 *p = ring_reserve(s, type, len, 0, &res, RESERVE_META, -1);

	if (!p)
		return -ENOSPC;
	memcpy(p, payload, len);
	ktrack_ring_commit(s, &res);
	return 0;
}

static __always_inline void ring_commit(struct ktrack_session *s, struct ktrack_reservation *res,
				bool counted)
{
	struct ktrack_ring *r = s->rings[res->cpu];

	if (counted) {
		local_add(res->records, &r->written);
		local_add(res->len, &r->bytes);
	}
	ring_put(r);
	ring_maybe_wake(s, r);
	preempt_enable_notrace();
}

void notrace ktrack_ring_commit(struct ktrack_session *s, struct ktrack_reservation *res)
{
	ring_commit(s, res, true);
}

int notrace ktrack_session_write(struct ktrack_session *s, u16 type, const void *payload,
				 u32 len)
{
	struct ktrack_reservation res;
	u8 *p = ktrack_ring_reserve(s, type, len, &res);

	if (!p)
		return -ENOSPC;
	memcpy(p, payload, len);
	ktrack_ring_commit(s, &res);
	return 0;
}

/*
 * Would an event written now on this CPU be kept by the session's state
 * and filters?  Lets a writer skip costly work (a stack walk) for a record
 * that ring_reserve() would refuse anyway; ring_reserve() still decides
 * and counts.  Preemption disabled by the caller.
 */
bool notrace ktrack_session_accepts(struct ktrack_session *s)
{
	return READ_ONCE(s->running) && !READ_ONCE(s->trig_off) &&
	       !filtered_out(s, smp_processor_id());
}

/* As ktrack_session_accepts(), paused by a STOP action or not (triggers). */
bool notrace ktrack_session_selects(struct ktrack_session *s)
{
	return READ_ONCE(s->running) && !filtered_out(s, smp_processor_id());
}

int notrace ktrack_session_write_linked(struct ktrack_session *s, u16 type, const void *payload,
					u32 len, u16 type2, const void *payload2, u32 len2)
{
	u32 len_a = ALIGN(sizeof(struct ktrack_rec_hdr) + len, KTRACK_REC_ALIGN);
	u32 len_b = ALIGN(sizeof(struct ktrack_rec_hdr) + len2, KTRACK_REC_ALIGN);
	struct ktrack_reservation res;
	struct ktrack_rec_hdr *h2;
	u8 *p;

	p = ring_reserve(s, type, len, len_b, &res, RESERVE_EVENT, -1);
	if (!p)
		return -ENOSPC;
	memcpy(p, payload, len);
	/* ring_reserve() filled the second header as PAD: give it its type */
	h2 = (struct ktrack_rec_hdr *)((u8 *)res.rec + len_a);
	memcpy(h2 + 1, payload2, len2);
	h2->type = type2;
	ktrack_ring_commit(s, &res);
	return 0;
}

/* Runs on the ring's CPU (IPI) or with the CPU offline: no writer races. */
static void ring_flush_one(void *arg)
{
	struct ktrack_ring *r = arg;
	struct ktrack_reservation res;

	if (!local_read(&r->lost_pending))
		return;
	/* A zero-payload reservation carries the pending LOST record. */
	if (ring_reserve(r->s, KTRACK_REC_PAD, 0, 0, &res, RESERVE_FORCED, r->cpu))
		ring_commit(r->s, &res, false);
}

void ktrack_rings_flush(struct ktrack_session *s)
{
	/* Under s->lock: freed only under it; mmap() may publish meanwhile. */
	struct ktrack_ring **rings = smp_load_acquire(&s->rings);
	u32 cpu;

	if (!rings)
		return;
	cpus_read_lock();
	for_each_possible_cpu(cpu) {
		struct ktrack_ring *r = rings[cpu];

		if (!local_read(&r->lost_pending))
			continue;
		/*
		 * An offline CPU writes nothing until it comes back, which
		 * cpus_read_lock() holds off: flush its ring from here, or its
		 * last losses would never be reported (review finding #13c).
		 */
		if (cpu_online(cpu))
			smp_call_function_single(cpu, ring_flush_one, r, 1);
		else
			ring_flush_one(r);
	}
	cpus_read_unlock();
}
