// SPDX-License-Identifier: GPL-2.0
/*
 * session.c - sessions and their ioctls, the named-session table, mmap of
 * the rings, and the exported API for other modules (ktrack_api.h).
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

#include <linux/ctype.h>
#include <linux/jump_label.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <ktrack/ktrack_api.h>
#include "compat.h"
#include "ktrack_internal.h"
#include "ktrack_trace.h"
#include "ring.h"
#include "session.h"
#include "uapi_copy.h"

/*
 * Lock order: ktrack_sessions_mutex -> s->read_lock (SET_CONFIG) -> s->lock
 * -> s->mmap_lock -> ktrack_running_lock; kt_probe_lock (probe.c) and objtrace_mutex
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
static DEFINE_MUTEX(ktrack_sessions_mutex);	/* named table */
static LIST_HEAD(ktrack_named);
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

static atomic_t ktrack_nr_sessions = ATOMIC_INIT(0);

/* Pages the rings of 'c' take: buf_pages + a control page per possible CPU. */
static bool over_page_limit(const struct ktrack_config *c)
{
	unsigned long max = READ_ONCE(max_pages_per_session);

	if (!max)
		max = totalram_pages() / 16;
	return ((u64)c->buf_pages + 1) * num_possible_cpus() > max;
}

int ktrack_session_check_pages(struct ktrack_session *s)
{
	return over_page_limit(&s->cfg) ? -E2BIG : 0;
}

static const struct ktrack_config ktrack_default_config = {
	.size = sizeof(struct ktrack_config),
	.buf_pages = KTRACK_DEFAULT_BUF_PAGES,
	.mode = KTRACK_MODE_DISCARD,
	.clock = KTRACK_CLOCK_LOCAL,
};

static u32 watermark(const struct ktrack_config *c)
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

struct ktrack_session *ktrack_session_new(const char *name)
{
	struct ktrack_session *s;

	if (atomic_inc_return(&ktrack_nr_sessions) > READ_ONCE(max_sessions)) {
		atomic_dec(&ktrack_nr_sessions);
		return ERR_PTR(-EMFILE);
	}
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s) {
		atomic_dec(&ktrack_nr_sessions);
		return ERR_PTR(-ENOMEM);
	}
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
	s->wm_bytes = watermark(&s->cfg);
	s->nr_rings = nr_cpu_ids;
	atomic_set(&s->nr_fds, 1);
	trace_ktrack_session_open(s->id, s->name);
	return s;
}

static void session_free(struct kref *ref)
{
	struct ktrack_session *s = container_of(ref, struct ktrack_session, ref);

	ktrack_rings_free(s);
	kfree(s);
	atomic_dec(&ktrack_nr_sessions);
}

void ktrack_session_put(struct ktrack_session *s)
{
	kref_put(&s->ref, session_free);
}

/* Stop recording; every record committed so far stays readable. */
static void session_stop_locked(struct ktrack_session *s)
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

static int session_start_locked(struct ktrack_session *s)
{
	int ret;

	if (s->running)
		return -EBUSY;
	mutex_lock(&s->mmap_lock);
	ret = s->rings ? 0 : ktrack_rings_alloc(s);
	mutex_unlock(&s->mmap_lock);
	if (ret)
		return ret;
	s->state = KTRACK_STATE_RUNNING;
	session_flush_seen_all(s);
	s->touched = true;
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
static void session_teardown(struct ktrack_session *s)
{
	mutex_lock(&s->lock);
	if (s->dead) {
		mutex_unlock(&s->lock);
		return;
	}
	mutex_lock(&s->mmap_lock);
	WRITE_ONCE(s->dead, true);
	mutex_unlock(&s->mmap_lock);
	session_stop_locked(s);
	mutex_unlock(&s->lock);
	ktrack_probe_session_release(s);
	ktrack_objtrace_session_release(s);
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
		session_teardown(s);
	ktrack_session_put(s);
}

/* ---- named sessions --------------------------------------------------- */

static int copy_session_req(struct ktrack_session_req *req, void __user *arg)
{
	u32 usize;
	size_t n;
	int ret;

	ret = ktrack_copy_sized_in(req, sizeof(*req), sizeof(*req), arg, &usize);
	if (ret)
		return ret;
	if (req->flags & ~KTRACK_SESSION_F_ALL)
		return -EINVAL;
	n = strnlen(req->name, sizeof(req->name));
	if (n == sizeof(req->name))
		return -EINVAL;
	/* The bytes after the NUL are reserved too. */
	if (memchr_inv(req->name + n, 0, sizeof(req->name) - n))
		return -EINVAL;
	return 0;
}

static bool valid_name(const char *name)
{
	const char *p;

	if (!*name)
		return false;
	for (p = name; *p; p++)
		if (!isalnum(*p) && *p != '_' && *p != '.' && *p != '-')
			return false;
	return true;
}

static struct ktrack_session *find_named(const char *name)
{
	struct ktrack_session *s;

	lockdep_assert_held(&ktrack_sessions_mutex);
	list_for_each_entry(s, &ktrack_named, named_node)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

/* The file's own session may be replaced only while nothing uses it. */
static bool pristine(struct ktrack_session *s)
{
	return !s->named && !s->touched && !atomic_read(&s->nr_maps);
}

/*
 * CREATE/ATTACH: claim the file's pristine session for a swap.  Checked
 * and marked under s->mmap_lock, which mmap() holds from its own check to
 * the mapping's nr_maps: either the mapping came first (EBUSY here) or
 * mmap() sees 'leaving' and refuses, instead of mapping a session that the
 * swap is about to tear down.
 */
static bool claim_pristine(struct ktrack_session *cur)
{
	bool ok;

	mutex_lock(&cur->lock);
	mutex_lock(&cur->mmap_lock);
	ok = pristine(cur);
	if (ok) {
		cur->touched = true;	/* no second create/attach on it */
		cur->leaving = true;
	}
	mutex_unlock(&cur->mmap_lock);
	mutex_unlock(&cur->lock);
	return ok;
}

/* The swap did not happen: the session is the file's again. */
static void unclaim(struct ktrack_session *cur)
{
	mutex_lock(&cur->lock);
	mutex_lock(&cur->mmap_lock);
	cur->touched = false;
	cur->leaving = false;
	mutex_unlock(&cur->mmap_lock);
	mutex_unlock(&cur->lock);
}

/* Attach file 'f' (now on anonymous 'old') to 'news' (referenced). */
static void swap_session(struct ktrack_file *f, struct ktrack_session *old,
			 struct ktrack_session *news)
{
	atomic_inc(&news->nr_fds);
	ktrack_session_del_file(old, f);
	spin_lock(&f->lock);
	f->s = news;
	spin_unlock(&f->lock);
	WRITE_ONCE(f->flush_seen, READ_ONCE(news->flush_seq));
	ktrack_session_add_file(news, f);
	/* Pollers re-check, now on 'news' (their entries are on f->wq). */
	wake_up_all(&f->wq);
	/* The file's reference on 'old' moves to nobody: release it. */
	ktrack_session_file_release(old);
}

static long session_create(struct ktrack_file *f, struct ktrack_session *cur, void __user *arg)
{
	struct ktrack_session_req req;
	struct ktrack_session *s;
	int ret;

	ret = copy_session_req(&req, arg);
	if (ret)
		return ret;
	if (req.flags || !valid_name(req.name))
		return -EINVAL;
	mutex_lock(&ktrack_sessions_mutex);
	if (find_named(req.name)) {
		ret = -EEXIST;
		goto out;
	}
	if (!claim_pristine(cur)) {
		ret = -EBUSY;
		goto out;
	}
	s = ktrack_session_new(req.name);
	if (IS_ERR(s)) {
		unclaim(cur);
		ret = PTR_ERR(s);
		goto out;
	}
	/* The initial reference is the name table's; the file takes one. */
	atomic_set(&s->nr_fds, 0);
	__module_get(THIS_MODULE);
	list_add_tail(&s->named_node, &ktrack_named);
	ktrack_session_get(s);
	mutex_unlock(&ktrack_sessions_mutex);
	swap_session(f, cur, s);
	return 0;
out:
	mutex_unlock(&ktrack_sessions_mutex);
	return ret;
}

static long session_attach_name(struct ktrack_file *f, struct ktrack_session *cur,
				const char *name)
{
	struct ktrack_session *s;

	mutex_lock(&ktrack_sessions_mutex);
	s = find_named(name);
	if (!s) {
		mutex_unlock(&ktrack_sessions_mutex);
		return -ENOENT;
	}
	if (!claim_pristine(cur)) {
		mutex_unlock(&ktrack_sessions_mutex);
		return -EBUSY;
	}
	ktrack_session_get(s);
	mutex_unlock(&ktrack_sessions_mutex);
	swap_session(f, cur, s);
	return 0;
}

static long session_attach(struct ktrack_file *f, struct ktrack_session *cur, void __user *arg)
{
	struct ktrack_session_req req;
	int ret;

	ret = copy_session_req(&req, arg);
	if (ret)
		return ret;
	if (req.flags || !valid_name(req.name))
		return -EINVAL;
	return session_attach_name(f, cur, req.name);
}

void ktrack_session_maybe_attach_default(struct ktrack_file *f)
{
	struct ktrack_session *cur = ktrack_file_session(f);

	if (pristine(cur))
		session_attach_name(f, cur, KTRACK_DEFAULT_SESSION);
	ktrack_session_put(cur);
}

/* Remove from the table (mutex held); the caller tears down and puts. */
static void unlink_named(struct ktrack_session *s)
{
	list_del_init(&s->named_node);
}

static void destroy_unlinked(struct ktrack_session *s)
{
	session_teardown(s);
	ktrack_session_put(s);	/* the table's reference */
	module_put(THIS_MODULE);
}

static long session_destroy(void __user *arg)
{
	struct ktrack_session_req req;
	struct ktrack_session *s, *tmp;
	LIST_HEAD(doomed);
	int ret;

	ret = copy_session_req(&req, arg);
	if (ret)
		return ret;
	if (req.flags & KTRACK_SESSION_F_ALL) {
		if (req.name[0])
			return -EINVAL;
		mutex_lock(&ktrack_sessions_mutex);
		list_splice_init(&ktrack_named, &doomed);
		mutex_unlock(&ktrack_sessions_mutex);
		list_for_each_entry_safe(s, tmp, &doomed, named_node) {
			unlink_named(s);
			destroy_unlinked(s);
		}
		return 0;
	}
	if (!valid_name(req.name))
		return -EINVAL;
	mutex_lock(&ktrack_sessions_mutex);
	s = find_named(req.name);
	if (s)
		unlink_named(s);
	mutex_unlock(&ktrack_sessions_mutex);
	if (!s)
		return -ENOENT;
	destroy_unlinked(s);
	return 0;
}

static long session_list(void __user *arg)
{
	struct ktrack_session_list l;
	struct ktrack_session_info *info = NULL;
	struct ktrack_session *s;
	u32 usize, n = 0, cap;
	int ret;

	ret = ktrack_copy_sized_in(&l, sizeof(l), sizeof(l), arg, &usize);
	if (ret)
		return ret;
	if (l.count && !l.entries_ptr)
		return -EFAULT;
	if (l.count > 4096)
		return -E2BIG;
	cap = l.count;
	if (cap) {
		info = kvcalloc(cap, sizeof(*info), GFP_KERNEL);
		if (!info)
			return -ENOMEM;
	}
	mutex_lock(&ktrack_sessions_mutex);
	list_for_each_entry(s, &ktrack_named, named_node) {
		if (n < cap) {
			strscpy(info[n].name, s->name, sizeof(info[n].name));
			info[n].id = s->id;
			info[n].nr_fds = atomic_read(&s->nr_fds);
			info[n].state = READ_ONCE(s->state);
			info[n].buf_pages = READ_ONCE(s->cfg.buf_pages);
			info[n].nr_probes = ktrack_probe_count(s);
		}
		n++;
	}
	mutex_unlock(&ktrack_sessions_mutex);
	ret = 0;
	if (cap && copy_to_user(u64_to_user_ptr(l.entries_ptr), info,
				(size_t)min(n, cap) * sizeof(*info)))
		ret = -EFAULT;
	kvfree(info);
	if (ret)
		return ret;
	l.count = n;
	if (put_user(n, &((struct ktrack_session_list __user *)arg)->count))
		return -EFAULT;
	return 0;
}

/* ---- per-session ioctls ------------------------------------------------ */

static long session_set_config(struct ktrack_session *s, void __user *arg)
{
	bool reader_out = false;
	struct ktrack_config c;
	u32 usize, i;
	int ret;

	ret = ktrack_copy_sized_in(&c, sizeof(c), sizeof(c), arg, &usize);
	if (ret)
		return ret;
	if (c.flags || c.mode > KTRACK_MODE_OVERWRITE || c.clock > KTRACK_CLOCK_BOOT ||
	    c.wakeup_percent > 100 || c.nr_pids > KTRACK_MAX_PID_FILTER)
		return -EINVAL;
	if (!c.buf_pages || !is_power_of_2(c.buf_pages))
		return -EINVAL;
	if (c.buf_pages > KTRACK_MAX_BUF_PAGES || over_page_limit(&c))
		return -E2BIG;
	for (i = c.nr_pids; i < KTRACK_MAX_PID_FILTER; i++)
		if (c.pids[i])
			return -EINVAL;
	for (i = 0; i < c.nr_pids; i++)
		if (c.pids[i] <= 0)
			return -EINVAL;
	if (nr_cpu_ids < 64 && (c.cpu_mask >> nr_cpu_ids))
		return -EINVAL;
	c.size = sizeof(c);
	/*
	 * New rings mean freeing the old ones, which read() uses under
	 * read_lock alone.  read_lock is held across read()'s user copies and
	 * waits, so it is taken before s->lock, and only when rings go.
	 */
again:
	if (reader_out && mutex_lock_interruptible(&s->read_lock))
		return -ERESTARTSYS;
	mutex_lock(&s->lock);
	mutex_lock(&s->mmap_lock);
	ret = 0;
	if (s->dead) {
		ret = -ENODEV;
	} else if (s->running) {
		ret = -EBUSY;
	} else if (s->rings && (c.buf_pages != s->cfg.buf_pages || c.mode != s->cfg.mode)) {
		if (atomic_read(&s->nr_maps)) {
			ret = -EBUSY;
		} else if (!reader_out) {
			mutex_unlock(&s->mmap_lock);
			mutex_unlock(&s->lock);
			reader_out = true;
			goto again;
		} else {
			ktrack_rings_release(s);
		}
	}
	if (!ret) {
		s->cfg = c;
		s->wm_bytes = watermark(&c);
		s->touched = true;
	}
	mutex_unlock(&s->mmap_lock);
	mutex_unlock(&s->lock);
	if (reader_out)
		mutex_unlock(&s->read_lock);
	return ret;
}

static long session_get_config(struct ktrack_session *s, void __user *arg)
{
	struct ktrack_config c;
	u32 usize;
	int ret;

	ret = ktrack_copy_sized_in(&c, sizeof(c), sizeof(c), arg, &usize);
	if (ret)
		return ret;
	mutex_lock(&s->lock);
	c = s->cfg;
	mutex_unlock(&s->lock);
	c.size = sizeof(c);
	if (copy_to_user(arg, &c, min_t(size_t, usize, sizeof(c))))
		return -EFAULT;
	return 0;
}

static long session_get_stats(struct ktrack_session *s, void __user *arg)
{
	struct ktrack_stats st;
	struct ktrack_cpu_stats *cs = NULL;
	u32 usize, cpu, n;
	int ret;

	ret = ktrack_copy_sized_in(&st, sizeof(st), sizeof(st), arg, &usize);
	if (ret)
		return ret;
	if (st.__pad)
		return -EINVAL;
	if (st.nr_cpus && !st.cpus_ptr)
		return -EFAULT;
	n = min(st.nr_cpus, nr_cpu_ids);
	if (n) {
		cs = kvcalloc(n, sizeof(*cs), GFP_KERNEL);
		if (!cs)
			return -ENOMEM;
	}
	/* Filled under the locks, copied out after them (see the lock order). */
	mutex_lock(&s->lock);
	mutex_lock(&s->mmap_lock);
	for (cpu = 0; cpu < n; cpu++) {
		cs[cpu].cpu = cpu;
		cs[cpu].online = cpu_online(cpu);
		if (s->rings && s->rings[cpu])
			ktrack_ring_fill_stats(s->rings[cpu], &cs[cpu]);
	}
	st.state = s->state;
	mutex_unlock(&s->mmap_lock);
	mutex_unlock(&s->lock);
	ret = 0;
	for (cpu = 0; cpu < n && !ret; cpu++)
		if (copy_to_user((struct ktrack_cpu_stats __user *)u64_to_user_ptr(st.cpus_ptr) + cpu,
				 &cs[cpu], sizeof(*cs)))
			ret = -EFAULT;
	kvfree(cs);
	if (ret)
		return ret;
	st.nr_cpus = nr_cpu_ids;
	st.size = sizeof(st);
	if (copy_to_user(arg, &st, min_t(size_t, usize, sizeof(st))))
		return -EFAULT;
	return 0;
}

long ktrack_session_ioctl(struct ktrack_file *f, struct ktrack_session *s, unsigned int cmd,
			  void __user *arg)
{
	long ret;

	switch (cmd) {
	case KTRACK_IOC_SET_CONFIG:
		return session_set_config(s, arg);
	case KTRACK_IOC_GET_CONFIG:
		return session_get_config(s, arg);
	case KTRACK_IOC_GET_STATS:
		return session_get_stats(s, arg);
	case KTRACK_IOC_SESSION_CREATE:
		return session_create(f, s, arg);
	case KTRACK_IOC_SESSION_ATTACH:
		return session_attach(f, s, arg);
	case KTRACK_IOC_SESSION_DESTROY:
		return session_destroy(arg);
	case KTRACK_IOC_SESSION_LIST:
		return session_list(arg);
	case KTRACK_IOC_START:
	case KTRACK_IOC_STOP:
	case KTRACK_IOC_FLUSH:
		break;
	default:
		break;
	}
	mutex_lock(&s->lock);
	if (s->dead) {
		ret = -ENODEV;
		goto out;
	}
	switch (cmd) {
	case KTRACK_IOC_START:
		ret = session_start_locked(s);
		break;
	case KTRACK_IOC_STOP:
		ret = s->running ? 0 : -EALREADY;
		session_stop_locked(s);
		break;
	case KTRACK_IOC_FLUSH:
		ktrack_rings_flush(s);
		/* After the LOST records: a poller that sees the seq sees them. */
		smp_wmb();
		WRITE_ONCE(s->flush_seq, s->flush_seq + 1);
		ktrack_session_wake(s);
		ret = 0;
		break;
	default:
		/*
		 * Each part owns a range of command numbers (ktrack_internal.h)
		 * and runs its ioctls without s->lock, which must not be held
		 * across their user copies; each checks ktrack_session_dead()
		 * under its own lock.  An unknown command leaves the session
		 * untouched: probing for commands must not make a fresh fd
		 * impossible to attach.
		 */
		if ((_IOC_NR(cmd) >= 0x20 && _IOC_NR(cmd) <= 0x2f) ||
		    (_IOC_NR(cmd) >= 0x30 && _IOC_NR(cmd) <= 0x3f)) {
			s->touched = true;
			mutex_unlock(&s->lock);
			if (_IOC_NR(cmd) <= 0x2f)
				return ktrack_probe_ioctl(s, cmd, arg);
			return ktrack_objtrace_ioctl(s, cmd, arg);
		}
		ret = -ENOTTY;
	}
out:
	mutex_unlock(&s->lock);
	return ret;
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

/* ---- mmap --------------------------------------------------------------- */

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

void ktrack_emit_meta(u16 type, const void *payload, u32 len)
{
	struct ktrack_session *s;

	rcu_read_lock();
	list_for_each_entry_rcu(s, &ktrack_running, run_node)
		ktrack_session_write_meta(s, type, payload, len);
	rcu_read_unlock();
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
