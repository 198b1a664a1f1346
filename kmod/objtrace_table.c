// SPDX-License-Identifier: GPL-2.0
/*
 * objtrace_table.c - the tracked-object table.
 *
 * A hash of hlist_nulls chains over a preallocated pool of entries:
 *  - lookup is lock-free and allocation-free (any context, NMI included);
 *  - insert takes a raw spinlock with interrupts off (under NMI only a
 *    trylock, and the caller counts a failure), never allocates;
 *  - ending a life is a cmpxchg of the entry's {life, state} plus a push
 *    onto a lock-free list; an irq_work (or the ioctl path) unlinks dead
 *    entries, and an RCU callback returns them to the pool a grace period
 *    later.  A dead entry is invisible to lookups, so a new object at the
 *    same address starts a new life at once (from another entry).
 * Every reader runs with preemption disabled, so the grace period covers
 * every handler that may still hold an unlinked entry.  A lock-free reader
 * can still walk from an entry unlinked under it into the free list's next
 * use in another chain: each chain ends in a nulls value naming its bucket,
 * and a reader that ends elsewhere restarts.
 */
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/rculist.h>
#include <linux/rculist_nulls.h>
#include <linux/vmalloc.h>

#include <linux/ktime.h>

#include "alloc_stats.h"
#include "objtrace.h"

static atomic64_t objtrace_life_seq = ATOMIC64_INIT(0);

/* Life ids are unique across sessions and never reused. */
notrace u64 objtrace_next_life(void)
{
	return atomic64_inc_return(&objtrace_life_seq);
}

static __always_inline unsigned int objtrace_hash(const struct objtrace_table *t,
						  unsigned long key)
{
	return hash_long(key, t->bits);
}

static void objtrace_table_reclaim_work(struct irq_work *work)
{
	objtrace_table_reclaim(container_of(work, struct objtrace_table, reclaim));
}

int objtrace_table_init(struct objtrace_table *t, unsigned int capacity)
{
	unsigned int i, nbuckets;

	memset(t, 0, sizeof(*t));
	nbuckets = roundup_pow_of_two(capacity);
	t->bits = max_t(unsigned int, ilog2(nbuckets), 1);
	nbuckets = 1U << t->bits;
	t->capacity = capacity;
	t->buckets = kvcalloc(nbuckets, sizeof(*t->buckets), GFP_KERNEL_ACCOUNT);
	t->pool = kvcalloc(capacity, sizeof(*t->pool), GFP_KERNEL_ACCOUNT);
	if (!t->buckets || !t->pool) {
		kvfree(t->buckets);
		kvfree(t->pool);
		t->buckets = NULL;
		t->pool = NULL;
		return -ENOMEM;
	}
	kt_alloc_add(KT_ALLOC_OBJ_TABLES, 1);
	for (i = 0; i < nbuckets; i++)
		INIT_HLIST_NULLS_HEAD(&t->buckets[i], i);
	for (i = capacity; i-- > 0;) {
		t->pool[i].next_free = t->free_list;
		t->free_list = &t->pool[i];
	}
	t->limbo = NULL;
	t->gp_batch = NULL;
	t->gp_pending = false;
	raw_spin_lock_init(&t->lock);
	atomic_set(&t->nr_live, 0);
	init_llist_head(&t->dead);
	init_irq_work(&t->reclaim, objtrace_table_reclaim_work);
	return 0;
}

/* The caller guarantees that no hook or probe can reach the table any more. */
void objtrace_table_destroy(struct objtrace_table *t)
{
	if (!t->pool)
		return;
	objtrace_table_drain(t);
	/*
	 * No handler is left: the callback chain ends within two rounds.  At
	 * least one barrier even when none looks pending: the last callback
	 * may still be returning (into this module's text) after it cleared
	 * gp_pending.
	 */
	do {
		rcu_barrier();
	} while (READ_ONCE(t->gp_pending));
	kvfree(t->buckets);
	kvfree(t->pool);
	kt_alloc_add(KT_ALLOC_OBJ_TABLES, -1);
	t->buckets = NULL;
	t->pool = NULL;
}

/*
 * Find the live entry for 'key'.  Lock-free; the caller runs with
 * preemption disabled.  *life is read after the key check and validated by
 * re-reading the key, so it belongs to the entry that matched.
 */
notrace struct objtrace_obj *objtrace_table_lookup(struct objtrace_table *t,
						   unsigned long key, u64 *life)
{
	unsigned int slot = objtrace_hash(t, key);
	struct hlist_nulls_node *n;
	struct objtrace_obj *obj;

restart:
	hlist_nulls_for_each_entry_rcu(obj, n, &t->buckets[slot], node) {
		s64 ls;

		if (READ_ONCE(obj->key) != key)
			continue;
		ls = atomic64_read_acquire(&obj->ls);
		if (OBJTRACE_LS_STATE(ls) != OBJTRACE_LIVE)
			continue;
		*life = OBJTRACE_LS_LIFE(ls);
		smp_rmb();	/* life before the key re-check */
		if (READ_ONCE(obj->key) != key)
			continue;
		return obj;
	}
	if (get_nulls_value(n) != slot)
		goto restart;
	return NULL;
}

/*
 * Insert a new life for 'key'.  Returns 0, -EEXIST (already tracked),
 * -ENOSPC (pool empty) or -EBUSY (lock busy, when the caller cannot spin:
 * under NMI, or from the hook, which may run inside our own locked section
 * on a traced spinlock function).
 */
notrace int objtrace_table_insert(struct objtrace_table *t, unsigned long key,
				  u64 born, bool may_spin, struct objtrace_obj **out)
{
	struct objtrace_obj *obj;
	unsigned long flags;
	u64 life;
	int ret = 0;

	if (!may_spin || in_nmi()) {
		if (!raw_spin_trylock_irqsave(&t->lock, flags))
			return -EBUSY;
	} else {
		raw_spin_lock_irqsave(&t->lock, flags);
	}
	if (objtrace_table_lookup(t, key, &life)) {
		ret = -EEXIST;
		goto out;
	}
	obj = t->free_list;
	if (!obj) {
		ret = -ENOSPC;
		goto out;
	}
	t->free_list = obj->next_free;
	obj->next_free = NULL;
	atomic_set(&obj->hits, 0);
	obj->born = born;
	obj->born_mono = ktime_get_mono_fast_ns();
	obj->derived = 0;
	obj->last_valid = 0;
	WRITE_ONCE(obj->key, key);
	atomic64_set_release(&obj->ls, OBJTRACE_LS(objtrace_next_life(), OBJTRACE_LIVE));
	/* rcu_assign_pointer inside: the entry is complete before it is seen. */
	hlist_nulls_add_head_rcu(&obj->node, &t->buckets[objtrace_hash(t, key)]);
	atomic_inc(&t->nr_live);
	*out = obj;
out:
	raw_spin_unlock_irqrestore(&t->lock, flags);
	return ret;
}

/*
 * End life 'life' of 'obj' (the life its lookup returned).  Any context.
 * Returns true for the one caller that ended it (exactly one untrack record
 * per life); false when that life has already ended.
 */
notrace bool objtrace_table_kill(struct objtrace_table *t, struct objtrace_obj *obj, u64 life)
{
	if (atomic64_cmpxchg(&obj->ls, OBJTRACE_LS(life, OBJTRACE_LIVE),
			     OBJTRACE_LS(life, OBJTRACE_DEAD)) != OBJTRACE_LS(life, OBJTRACE_LIVE))
		return false;
	atomic_dec(&t->nr_live);
	llist_add(&obj->dead, &t->dead);
	irq_work_queue(&t->reclaim);
	return true;
}

/* Push the singly linked list 'list' onto *head (under t->lock). */
static void objtrace_splice(struct objtrace_obj **head, struct objtrace_obj *list)
{
	while (list) {
		struct objtrace_obj *next = list->next_free;

		list->next_free = *head;
		*head = list;
		list = next;
	}
}

/*
 * A grace period has passed since the entries of gp_batch were unlinked: no
 * handler holds them any more.  Give them to the pool, and start the next
 * batch if entries were unlinked meanwhile.
 */
static void objtrace_table_gp_done(struct rcu_head *head)
{
	struct objtrace_table *t = container_of(head, struct objtrace_table, rcu);
	unsigned long flags;
	bool again;

	raw_spin_lock_irqsave(&t->lock, flags);
	objtrace_splice(&t->free_list, t->gp_batch);
	t->gp_batch = t->limbo;
	t->limbo = NULL;
	again = t->gp_batch != NULL;
	t->gp_pending = again;
	raw_spin_unlock_irqrestore(&t->lock, flags);
	if (again)
		call_rcu(&t->rcu, objtrace_table_gp_done);
}

/* Unlink dead entries; they return to the pool a grace period later.  Not from NMI. */
void objtrace_table_reclaim(struct objtrace_table *t)
{
	struct llist_node *list = llist_del_all(&t->dead);
	struct objtrace_obj *obj, *tmp;
	unsigned long flags;
	bool start;

	if (!list)
		return;
	raw_spin_lock_irqsave(&t->lock, flags);
	llist_for_each_entry_safe(obj, tmp, list, dead) {
		hlist_nulls_del_rcu(&obj->node);
		WRITE_ONCE(obj->key, 0);
		/* Keep the life: a late kill of it must still fail. */
		atomic64_set(&obj->ls, OBJTRACE_LS(OBJTRACE_LS_LIFE(atomic64_read(&obj->ls)),
						   OBJTRACE_FREE));
		obj->next_free = t->limbo;
		t->limbo = obj;
	}
	start = !t->gp_pending;
	if (start) {
		t->gp_batch = t->limbo;
		t->limbo = NULL;
		t->gp_pending = true;
	}
	raw_spin_unlock_irqrestore(&t->lock, flags);
	if (start)
		call_rcu(&t->rcu, objtrace_table_gp_done);
}

/*
 * Sleepable context: unlink what is dead and wait until the entries are
 * back in the pool.  The RCU callback re-queues itself while entries keep
 * dying, so wait a bounded number of rounds when handlers are still
 * running; with no handler left (teardown) the second round is the last.
 */
void objtrace_table_drain(struct objtrace_table *t)
{
	int rounds;

	irq_work_sync(&t->reclaim);
	objtrace_table_reclaim(t);
	for (rounds = 0; rounds < 4 && READ_ONCE(t->gp_pending); rounds++)
		rcu_barrier();
}
