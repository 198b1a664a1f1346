// SPDX-License-Identifier: GPL-2.0
/*
 * probe_graph.c - graph scoping (KTRACK_FEAT_GRAPH_SCOPE), in the manner
 * of ftrace's set_graph_function over the functions of ktrack's f probes.
 *
 * A session with a GRAPH_ROOT probe has a fixed table of scopes, one slot
 * per task inside a root function, found by the task pointer.  A ROOT
 * entry claims a free slot for its task (cmpxchg of its root_nest from 0)
 * or nests in the task's slot; a ROOT exit unnests, and the outermost one
 * releases the slot.  A GRAPH_SCOPED hit
 * passes only when its task holds a slot; with a depth limit, its entries
 * count nested calls (depth) and its exits uncount them.
 *
 * Runs in any context (NMI included): no lock, no allocation.  Only the
 * task itself changes its slot once claimed, from its own contexts on the
 * CPU it runs on, which nest strictly (an interrupt's hits end before the
 * hit it interrupted resumes), so each change is one atomic step and a
 * nested context always leaves the counters as it found them.  Hits of an
 * interrupt on a task inside a scope are inside that scope (as ftrace's
 * funcgraph-irqs).
 *
 * Limits (docs/UAPI.md): the table has KT_GRAPH_SLOTS slots and a task's
 * slot is one of KT_GRAPH_PROBE after its hash; a root entry that finds
 * none free is recorded but opens no scope (counted in the root's missed).
 * A root probe removed while a task is inside its function leaves that
 * task's scope open until the next first root probe of the session clears
 * the table; a task that dies inside its root leaves a slot that the next
 * task at its address frees (slots match pointer and start time).
 */
#include <linux/atomic.h>
#include <linux/hash.h>
#include <linux/kprobes.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "probe_internal.h"
#include "session.h"

#define KT_GRAPH_BITS	10
#define KT_GRAPH_SLOTS	(1U << KT_GRAPH_BITS)
#define KT_GRAPH_PROBE	32	/* slots a task's may be in, after its hash */

struct kt_graph_slot {
	struct task_struct *task;	/* the owner, NULL while free or being claimed */
	u64 start_time;			/* the owner's: a new task at a dead one's address differs */
	atomic_t root_nest;		/* root functions the task is in */
	atomic_t depth;			/* scoped calls the task is in */
};

struct kt_graph {
	atomic_t live;			/* slots claimed: scoped hits' fast path */
	struct kt_graph_slot slot[KT_GRAPH_SLOTS];
};

/*
 * Process context, under kt_probe_lock: a ROOT probe is being added to 's'.
 * With no other root on the session ('first'), no root handler runs: the
 * scopes a task kept open (its root probe removed mid-call, a task that
 * died inside the root) go, so a new run starts with none.  A scoped hit
 * racing with the clearing finds its slot gone: outside, as it now is.
 */
int kt_graph_prepare(struct ktrack_session *s, bool first)
{
	struct kt_graph *g = s->graph;
	u32 i;

	if (g) {
		if (first) {
			for (i = 0; i < KT_GRAPH_SLOTS; i++) {
				WRITE_ONCE(g->slot[i].task, NULL);
				atomic_set(&g->slot[i].depth, 0);
				atomic_set(&g->slot[i].root_nest, 0);
			}
			atomic_set(&g->live, 0);
		}
		return 0;
	}
	g = kvzalloc(sizeof(*g), GFP_KERNEL_ACCOUNT);
	if (!g)
		return -ENOMEM;
	/* pairs with the handlers' READ_ONCE: zeroed before it is seen */
	smp_store_release(&s->graph, g);
	return 0;
}

/* The session is being freed: no probe of it is left, no handler runs. */
void kt_graph_free(struct ktrack_session *s)
{
	kvfree(s->graph);
	s->graph = NULL;
}

/*
 * Free 't''s slot: its outermost root call returns, or 't' found a slot a
 * dead task left at its address.  Once: an interrupt of 't' may be doing
 * the same.  root_nest turns 0 last, so nobody claims it half freed.
 */
static notrace void kt_graph_release(struct kt_graph *g, struct kt_graph_slot *s,
				     struct task_struct *t)
{
	if (cmpxchg(&s->task, t, NULL) != t)
		return;
	atomic_set(&s->depth, 0);
	atomic_dec(&g->live);
	atomic_set_release(&s->root_nest, 0);
}
NOKPROBE_SYMBOL(kt_graph_release);

static notrace struct kt_graph_slot *kt_graph_find(struct kt_graph *g, struct task_struct *t)
{
	u32 h = hash_ptr(t, KT_GRAPH_BITS), i;
	struct kt_graph_slot *s;

	/* a released slot may lie before the task's: look at all of them */
	for (i = 0; i < KT_GRAPH_PROBE; i++) {
		s = &g->slot[(h + i) & (KT_GRAPH_SLOTS - 1)];
		if (READ_ONCE(s->task) != t)
			continue;
		if (READ_ONCE(s->start_time) == t->start_time)
			return s;
		/* a task that died inside its root: only 't' matches it */
		kt_graph_release(g, s, t);
	}
	return NULL;
}
NOKPROBE_SYMBOL(kt_graph_find);

/*
 * A free slot has no task and root_nest 0.  It is claimed by moving
 * root_nest from 0 to 1, then published with the task: a hit of the same
 * task in between (an interrupt, an NMI) does not find it, and takes and
 * gives back a slot of its own.  Returns the slot, root_nest 1; NULL: full.
 */
static notrace struct kt_graph_slot *kt_graph_claim(struct kt_graph *g, struct task_struct *t)
{
	u32 h = hash_ptr(t, KT_GRAPH_BITS), i;
	struct kt_graph_slot *s;

	for (i = 0; i < KT_GRAPH_PROBE; i++) {
		s = &g->slot[(h + i) & (KT_GRAPH_SLOTS - 1)];
		if (READ_ONCE(s->task) || atomic_read(&s->root_nest) ||
		    atomic_cmpxchg(&s->root_nest, 0, 1))
			continue;
		atomic_set(&s->depth, 0);
		atomic_inc(&g->live);
		WRITE_ONCE(s->start_time, t->start_time);
		/* the counters are set before the task can find the slot */
		smp_store_release(&s->task, t);
		return s;
	}
	return NULL;
}
NOKPROBE_SYMBOL(kt_graph_claim);

/* False when a root entry found no free slot: its call has no scope. */
static notrace bool kt_graph_root(struct kt_graph *g, bool exit)
{
	struct kt_graph_slot *s = kt_graph_find(g, current);

	if (!exit) {
		if (s) {
			atomic_inc(&s->root_nest);
			return true;
		}
		return kt_graph_claim(g, current) != NULL;
	}
	if (!s)
		return true;
	/* nested contexts leave root_nest as they found it: no race here */
	if (atomic_read(&s->root_nest) > 1) {
		atomic_dec(&s->root_nest);
		return true;
	}
	/* the outermost root call returns: unpublish, then free the slot */
	kt_graph_release(g, s, current);
	return true;
}
NOKPROBE_SYMBOL(kt_graph_root);

static notrace bool kt_graph_scoped(struct kt_graph *g, u32 limit, bool exit)
{
	struct kt_graph_slot *s;
	int d;

	if (!atomic_read(&g->live))
		return false;
	s = kt_graph_find(g, current);
	if (!s || atomic_read(&s->root_nest) <= 0)
		return false;
	if (!limit)
		return true;
	if (!exit)
		return atomic_inc_return(&s->depth) <= limit;
	d = atomic_read(&s->depth);
	/* an exit whose entry came before the probe was armed: no depth to give back */
	if (d <= 0)
		return false;
	atomic_dec(&s->depth);
	return d <= limit;
}
NOKPROBE_SYMBOL(kt_graph_scoped);

/*
 * Called first for every hit of a ROOT or SCOPED probe, whether it is then
 * recorded, filtered, dropped or idle, so that the counts stay balanced.
 * Returns whether the hit may be recorded: always for ROOT, for SCOPED only
 * inside a scope and within the depth limit.
 *
 * A root entered while the session does not record (before START, paused)
 * opens its scope all the same, as set_graph_function does with tracing
 * off: a scoped probe's 'start' under it can resume the session, and the
 * calls under it after that are recorded without their root's entry (as
 * they are when that record is lost); 'graph' shows such a root's exit as
 * "entry not recorded".
 */
notrace bool kt_graph_hit(struct kt_probe *p, bool exit)
{
	struct kt_graph *g = READ_ONCE(p->session->graph);

	if (p->flags & KTRACK_PROBE_F_GRAPH_ROOT) {
		/* the table full: recorded, but no tree (the root's 'missed') */
		if (g && !kt_graph_root(g, exit))
			this_cpu_inc(p->stats->missed);
		return true;
	}
	return g && kt_graph_scoped(g, p->graph_depth, exit);
}
NOKPROBE_SYMBOL(kt_graph_hit);
