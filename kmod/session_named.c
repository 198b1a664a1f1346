// SPDX-License-Identifier: GPL-2.0
/*
 * session_named.c - named sessions: the table, CREATE/ATTACH (a file's
 * pristine anonymous session is swapped for a named one), DESTROY and
 * LIST.  ktrack_sessions_mutex guards the table and comes first in the
 * lock order (session.c); a named session holds a reference and pins the
 * module until it is destroyed.
 */
#include <linux/capability.h>
#include <linux/ctype.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ktrack_internal.h"
#include "access.h"
#include "ring.h"
#include "session.h"
#include "uapi_copy.h"

static DEFINE_MUTEX(ktrack_sessions_mutex);	/* named table */
static LIST_HEAD(ktrack_named);

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

/* The request of CREATE and ATTACH: no flags, a valid name. */
static int copy_name_req(struct ktrack_session_req *req, void __user *arg)
{
	int ret = copy_session_req(req, arg);

	if (ret)
		return ret;
	if (req->flags || !valid_name(req->name))
		return -EINVAL;
	return 0;
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

long ktrack_session_create(struct ktrack_file *f, struct ktrack_session *cur, void __user *arg)
{
	struct ktrack_session_req req;
	struct ktrack_session *s;
	int ret;

	ret = copy_name_req(&req, arg);
	if (ret)
		return ret;
	mutex_lock(&ktrack_sessions_mutex);
	if (find_named(req.name)) {
		ret = -EEXIST;
		goto out;
	}
	if (!claim_pristine(cur)) {
		ret = -EBUSY;
		goto out;
	}
	s = ktrack_session_new(req.name, true);
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
	/* a group member reaches only what root shares (access.c) */
	if (f->member && !ktrack_access_shared(s)) {
		mutex_unlock(&ktrack_sessions_mutex);
		return -EACCES;
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

long ktrack_session_attach(struct ktrack_file *f, struct ktrack_session *cur, void __user *arg)
{
	struct ktrack_session_req req;
	int ret;

	ret = copy_name_req(&req, arg);
	if (ret)
		return ret;
	return session_attach_name(f, cur, req.name);
}

void ktrack_session_maybe_attach_default(struct ktrack_file *f)
{
	struct ktrack_session *cur = ktrack_file_session(f);

	/* as ATTACH: not through an fd handed to an unprivileged reader */
	if (pristine(cur) && (perfmon_capable() || f->member))
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
	ktrack_session_teardown(s);
	ktrack_session_put(s);	/* the table's reference */
	module_put(THIS_MODULE);
}

/*
 * A named session with no file, for module parameters (boot_trace.c):
 * the table's reference only, as a session whose creator closed.
 */
struct ktrack_session *ktrack_session_create_kernel(const char *name)
{
	struct ktrack_session *s;

	if (!valid_name(name))
		return ERR_PTR(-EINVAL);
	mutex_lock(&ktrack_sessions_mutex);
	if (find_named(name)) {
		s = ERR_PTR(-EEXIST);
		goto out;
	}
	s = ktrack_session_new(name, true);
	if (IS_ERR(s))
		goto out;
	atomic_set(&s->nr_fds, 0);
	__module_get(THIS_MODULE);
	list_add_tail(&s->named_node, &ktrack_named);
out:
	mutex_unlock(&ktrack_sessions_mutex);
	return s;
}

void ktrack_session_destroy_kernel(struct ktrack_session *s)
{
	mutex_lock(&ktrack_sessions_mutex);
	unlink_named(s);
	mutex_unlock(&ktrack_sessions_mutex);
	destroy_unlinked(s);
}

long ktrack_session_destroy(void __user *arg)
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

long ktrack_session_list(void __user *arg)
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
