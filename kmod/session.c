// SPDX-License-Identifier: GPL-2.0
/*
 * session.c - session lifecycle: creation and limits, START/STOP, teardown,
 * the files attached to a session, the running list and the exported API
 * for other modules (ktrack_api.h).  The named-session table and its
 * ioctls are in session_named.c, the per-session ioctls in
 * session_ioctl.c, mmap of the rings in session_mmap.c.
 *
 * Lifetime.  A session is reference counted (struct kref): every open file
 * attached to it, every mapping of its rings and, for a named session, the
 * name table hold one.  It is torn down (stopped, probes and tracked
 * objects released) when its last file closes (anonymous) or when it is
 * destroyed (named); its memory goes with the last reference.  A named
 * session pins the module (rmmod fails with EWOULDBLOCK until it is
 * destroyed); files pin it through fops.owner, mappings through vm_file.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jump_label.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <ktrack/ktrack_api.h>
#include "alloc_stats.h"
#include "compat.h"
#include "ktrack_internal.h"
#include "ktrack_trace.h"
#include "ring.h"
#include "session.h"
#include "uapi_copy.h"

/*
 * Lock order: ktrack_sessions_mutex -> s->read_lock (SET_CONFIG) -> s->lock
 * -> s->mmap_lock -> ktrack_running_lock; s->snap.lock (snapshot.c) is a
 * leaf: nothing is taken under it; kt_probe_lock (probe.c) and objtrace_mutex
 * (objtrace_main.c) are taken with no session's lock held (session list
 * counts probes under ktrack_sessions_mutex: ktrack_sessions_mutex ->
 * kt_probe_lock, never the other way).  START and STOP
 * run under s->lock, so the running list has a lock of its own below it
 * (taking the sessions mutex there would invert the order of
 * CREATE/ATTACH, which take it before s->lock).
 *
 * mmap() runs under the mm's mmap_lock and takes only s->mmap_lock.  So
 * none of these locks is ever held across a user copy (a fault can need
 * mmap_lock, and userfaultfd or FUSE can stall it for good): ioctls copy
 * in before locking and copy out after unlocking, and the parts' ioctls
 * run with no session lock held.
 */
static DEFINE_SPINLOCK(ktrack_running_lock);	/* writers of ktrack_running */
static LIST_HEAD(ktrack_running);		/* RCU: writers of ktrack_emit() */
static atomic64_t ktrack_next_id = ATOMIC64_INIT(0);

DEFINE_STATIC_KEY_FALSE(ktrack_active_key);
EXPORT_SYMBOL_GPL(ktrack_active_key);

/*
 * Limits (issue 14): what a root user can pin by mistake.  Every open()
 * is a session and every named session outlives its creator, so their
 * number is capped (EMFILE: "too many open sessions", as for files);
 * a session's rings are vmalloc memory outside any memcg, so their size
 * is capped too (E2BIG at SET_CONFIG, START or mmap, like a buf_pages
 * above KTRACK_MAX_BUF_PAGES).  Root may raise both at load time or in
 * /sys/module/ktrack/parameters/.
 */
static unsigned int max_sessions = 64;
module_param(max_sessions, uint, 0644);
MODULE_PARM_DESC(max_sessions, "sessions (open files and named sessions) at once (default 64)");

static unsigned long max_pages_per_session;
module_param(max_pages_per_session, ulong, 0644);
MODULE_PARM_DESC(max_pages_per_session,
		 "ring pages per session, all CPUs and control pages included (0: 1/16 of RAM)");

/*
 * ... and what all sessions hold together: a root user who configures
 * max_sessions sessions of max_pages_per_session each would otherwise pin
 * four times the RAM (ENOSPC at START or mmap, beyond this budget).
 */
static unsigned long max_total_pages;
module_param(max_total_pages, ulong, 0644);
MODULE_PARM_DESC(max_total_pages,
		 "ring pages of all sessions together, control pages included (0: 1/4 of RAM)");

static atomic_t ktrack_nr_sessions = ATOMIC_INIT(0);
static atomic_long_t ktrack_ring_pages = ATOMIC_LONG_INIT(0);

int ktrack_ring_pages_charge(unsigned long n)
{
	unsigned long max = READ_ONCE(max_total_pages);

	long cur;

	if (!max)
		max = totalram_pages() / 4;
	/* never over, even for a moment: a charge that fits is never refused */
	cur = atomic_long_read(&ktrack_ring_pages);
	do {
		if ((unsigned long)cur + n > max)
			return -ENOSPC;
	} while (!atomic_long_try_cmpxchg(&ktrack_ring_pages, &cur, cur + n));
	return 0;
}

void ktrack_ring_pages_uncharge(unsigned long n)
{
	atomic_long_sub(n, &ktrack_ring_pages);
}

/* Pages the rings of 'c' take: buf_pages + a control page per possible CPU. */
bool ktrack_config_over_limit(const struct ktrack_config *c)
{
	unsigned long max = READ_ONCE(max_pages_per_session);

	if (!max)
		max = totalram_pages() / 16;
	return ((u64)c->buf_pages + 1) * num_possible_cpus() > max;
}

int ktrack_session_check_pages(struct ktrack_session *s)
{
	return ktrack_config_over_limit(&s->cfg) ? -E2BIG : 0;
}

static const struct ktrack_config ktrack_default_config = {
	.size = sizeof(struct ktrack_config),
	.buf_pages = KTRACK_DEFAULT_BUF_PAGES,
	.mode = KTRACK_MODE_DISCARD,
	.clock = KTRACK_CLOCK_LOCAL,
};

u32 ktrack_config_watermark(const struct ktrack_config *c)
{
	u64 size = (u64)c->buf_pages * PAGE_SIZE;

	u64 wm = 1;

	if (c->wakeup_bytes)
		wm = c->wakeup_bytes;
	else if (c->wakeup_percent)
		wm = max_t(u64, size * c->wakeup_percent / 100, 1);
	/*
	 * A discard ring never holds 'size' unread bytes (records do not
	 * wrap: the tail end's PAD is reserved with the next record), so a
	 * watermark at the size would never wake anyone.  Half the ring is
	 * always reachable: the largest record fits in it (ring.c, too_big).
	 */
	return min_t(u64, wm, size / 2);
}

struct ktrack_session *ktrack_session_new(const char *name, bool counted)
{
	struct ktrack_session *s;

	if (counted && atomic_inc_return(&ktrack_nr_sessions) > READ_ONCE(max_sessions)) {
		atomic_dec(&ktrack_nr_sessions);
		return ERR_PTR(-EMFILE);
	}
	s = kzalloc(sizeof(*s), GFP_KERNEL_ACCOUNT);
	if (!s) {
		if (counted)
			atomic_dec(&ktrack_nr_sessions);
		return ERR_PTR(-ENOMEM);
	}
	s->counted = counted;
	kt_alloc_add(KT_ALLOC_SESSIONS, 1);
	kref_init(&s->ref);
	s->id = atomic64_inc_return(&ktrack_next_id);
	if (name) {
		strscpy(s->name, name, sizeof(s->name));
		s->named = true;
	}
	INIT_LIST_HEAD(&s->named_node);
	INIT_LIST_HEAD(&s->run_node);
	mutex_init(&s->lock);
	mutex_init(&s->mmap_lock);
	mutex_init(&s->read_lock);
	spin_lock_init(&s->files_lock);
	INIT_LIST_HEAD(&s->files);
	s->cfg = ktrack_default_config;
	s->wm_bytes = ktrack_config_watermark(&s->cfg);
	s->nr_rings = nr_cpu_ids;
	atomic_set(&s->nr_fds, 1);
	ktrack_snapshot_init(s);
	trace_ktrack_session_open(s->id, s->name);
	return s;
}

static void session_free(struct kref *ref)
{
	struct ktrack_session *s = container_of(ref, struct ktrack_session, ref);
	bool counted = s->counted;

	ktrack_snapshot_free(s);
	ktrack_rings_free(s);
	kt_graph_free(s);
	kfree(s);
	kt_alloc_add(KT_ALLOC_SESSIONS, -1);
	if (counted)
		atomic_dec(&ktrack_nr_sessions);
}

void ktrack_session_put(struct ktrack_session *s)
{
	kref_put(&s->ref, session_free);
}

/* Stop recording; every record committed so far stays readable. */
void ktrack_session_stop_locked(struct ktrack_session *s)
{
	if (!s->running)
		return;
	WRITE_ONCE(s->running, 0);
	spin_lock(&ktrack_running_lock);
	list_del_rcu(&s->run_node);
	spin_unlock(&ktrack_running_lock);
	static_branch_dec(&ktrack_active_key);
	/* Writers run with preemption disabled (NMIs included): wait for them. */
	synchronize_rcu();
	s->state = KTRACK_STATE_STOPPED;
	ktrack_rings_flush(s);
	WRITE_ONCE(s->flush_seq, s->flush_seq + 1);
	trace_ktrack_session_stop(s->id, s->name);
	ktrack_session_wake(s);
}

/* A new run: every attached file is back on the watermark. */
static void session_flush_seen_all(struct ktrack_session *s)
{
	struct ktrack_file *f;
	unsigned long flags;

	spin_lock_irqsave(&s->files_lock, flags);
	list_for_each_entry(f, &s->files, node)
		WRITE_ONCE(f->flush_seen, s->flush_seq);
	spin_unlock_irqrestore(&s->files_lock, flags);
}

int ktrack_session_start_locked(struct ktrack_session *s)
{
	int ret;

	if (s->running) {
		/* paused by a STOP action: START resumes it (docs/UAPI.md) */
		if (!READ_ONCE(s->trig_off))
			return -EBUSY;
		WRITE_ONCE(s->trig_off, 0);
		WRITE_ONCE(s->crash_dumped, false);	/* dumped again at the next crash */
		return 0;
	}
	mutex_lock(&s->mmap_lock);
	ret = s->rings ? 0 : ktrack_rings_alloc(s);
	mutex_unlock(&s->mmap_lock);
	if (ret)
		return ret;
	s->state = KTRACK_STATE_RUNNING;
	ktrack_snapshot_new_run(s);
	session_flush_seen_all(s);
	s->touched = true;
	WRITE_ONCE(s->trig_off, 0);	/* a new run is not paused */
	WRITE_ONCE(s->crash_dumped, false);
	static_branch_inc(&ktrack_active_key);
	/* Rings before 'running': pairs with smp_rmb() in the writer. */
	smp_store_release(&s->running, 1);
	spin_lock(&ktrack_running_lock);
	list_add_rcu(&s->run_node, &ktrack_running);
	spin_unlock(&ktrack_running_lock);
	trace_ktrack_session_start(s->id, s->name);
	return 0;
}

/* Tear down once: stop, detach probes and tracked objects, wake readers. */
void ktrack_session_teardown(struct ktrack_session *s)
{
	mutex_lock(&s->lock);
	if (s->dead) {
		mutex_unlock(&s->lock);
		return;
	}
	mutex_lock(&s->mmap_lock);
	WRITE_ONCE(s->dead, true);
	mutex_unlock(&s->mmap_lock);
	ktrack_session_stop_locked(s);
	mutex_unlock(&s->lock);
	ktrack_probe_session_release(s);
	ktrack_objtrace_session_release(s);
	ktrack_stack_session_release(s);
	trace_ktrack_session_close(s->id, s->name);
	ktrack_session_wake(s);
}

void ktrack_session_add_file(struct ktrack_session *s, struct ktrack_file *f)
{
	unsigned long flags;

	spin_lock_irqsave(&s->files_lock, flags);
	list_add_tail(&f->node, &s->files);
	spin_unlock_irqrestore(&s->files_lock, flags);
}

void ktrack_session_del_file(struct ktrack_session *s, struct ktrack_file *f)
{
	unsigned long flags;

	spin_lock_irqsave(&s->files_lock, flags);
	list_del_init(&f->node);
	spin_unlock_irqrestore(&s->files_lock, flags);
}

void ktrack_session_wake(struct ktrack_session *s)
{
	struct ktrack_file *f;
	unsigned long flags;

	spin_lock_irqsave(&s->files_lock, flags);
	list_for_each_entry(f, &s->files, node)
		wake_up_all(&f->wq);
	spin_unlock_irqrestore(&s->files_lock, flags);
}

struct ktrack_session *ktrack_file_session(struct ktrack_file *f)
{
	struct ktrack_session *s;

	spin_lock(&f->lock);
	s = f->s;
	ktrack_session_get(s);
	spin_unlock(&f->lock);
	return s;
}

void ktrack_session_file_release(struct ktrack_session *s)
{
	atomic_dec(&s->nr_fds);
	if (!s->named)
		ktrack_session_teardown(s);
	ktrack_session_put(s);
}

/*
 * Has 's' been torn down?  The parts call this under their own lock before
 * attaching anything to 's': teardown sets 'dead' before it takes that lock
 * to release the part's state, so either the part sees 'dead' or teardown
 * sees what the part attached.
 */
bool ktrack_session_dead(struct ktrack_session *s)
{
	return READ_ONCE(s->dead);
}

bool ktrack_session_overwrite(struct ktrack_session *s)
{
	return READ_ONCE(s->cfg.mode) == KTRACK_MODE_OVERWRITE;
}

bool ktrack_session_readable(struct ktrack_session *s, struct ktrack_file *f)
{
	bool any = READ_ONCE(s->flush_seq) != READ_ONCE(f->flush_seen) ||
		   !READ_ONCE(s->running);

	return ktrack_rings_readable(s, any);
}

void ktrack_session_flush_drained(struct ktrack_session *s, struct ktrack_file *f, u32 seq)
{
	WRITE_ONCE(f->flush_seen, seq);
}
void ktrack_emit_meta(u16 type, const void *payload, u32 len)
{
	struct ktrack_session *s;

	rcu_read_lock();
	list_for_each_entry_rcu(s, &ktrack_running, run_node)
		ktrack_session_write_meta(s, type, payload, len);
	rcu_read_unlock();
}

struct ktrack_session *ktrack_running_next(struct ktrack_session *prev)
{
	struct list_head *pos =
		rcu_dereference(list_next_rcu(prev ? &prev->run_node : &ktrack_running));

	return pos == &ktrack_running ? NULL : container_of(pos, struct ktrack_session, run_node);
}

/* ---- API for other modules (include/ktrack/ktrack_api.h) --------------- */

int notrace __ktrack_emit_record(u16 type, const void *payload, u32 len)
{
	struct ktrack_session *s;
	int n = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(s, &ktrack_running, run_node)
		if (!ktrack_session_write(s, type, payload, len))
			n++;
	rcu_read_unlock();
	return n;
}
EXPORT_SYMBOL_GPL(__ktrack_emit_record);

int notrace __ktrack_emit(u32 id, const void *data, u32 len)
{
	struct ktrack_reservation res;
	struct ktrack_rec_emit *e;
	struct ktrack_session *s;
	int n = 0;

	if (len > KTRACK_REC_MAX)
		return 0;
	rcu_read_lock();
	list_for_each_entry_rcu(s, &ktrack_running, run_node) {
		e = ktrack_ring_reserve(s, KTRACK_REC_EMIT, sizeof(*e) + len, &res);
		if (!e)
			continue;
		e->id = id;
		e->size = len;
		memcpy(e->data, data, len);
		ktrack_ring_commit(s, &res);
		n++;
	}
	rcu_read_unlock();
	return n;
}
EXPORT_SYMBOL_GPL(__ktrack_emit);

int notrace __ktrack_printf(const char *fmt, ...)
{
	char buf[KTRACK_PRINTF_MAX];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vscnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return __ktrack_emit_record(KTRACK_REC_PRINTF, buf, len + 1);
}
EXPORT_SYMBOL_GPL(__ktrack_printf);
