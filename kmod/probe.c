// SPDX-License-Identifier: GPL-2.0
/*
 * probe.c - the dynamic probe part of ktrack.ko: the ioctls 0x20..0x2f
 * (add and del here; list and get in probe_query.c), the registry of
 * probes (each belongs to a session and goes away with it) and arming
 * through the right mechanism.  The module notifier that arms pending
 * probes when their module loads and disarms them when it goes is in
 * probe_module.c.
 *
 * Locking: kt_probe_lock (a mutex) protects the list and every probe's
 * attach state; it is only taken in process context, never by a handler,
 * never held across a user copy (a stalled fault would block module load
 * and unload through the notifier), and the ioctls run without s->lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "compat_probe.h"
#include "probe_internal.h"
#include "uapi_copy.h"

/*
 * max_probes: probes per session (a session's probes, armed or pending,
 * each with its description and attach points), default 256, at most
 * KT_MAX_PROBES_LIMIT.  One more is refused with ENOSPC.  Per session, like
 * the other per-session limits, so that one tool cannot starve another;
 * sessions themselves are counted elsewhere.
 */
static unsigned int kt_max_probes = 256;

static int kt_set_max_probes(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	if (!n || n > KT_MAX_PROBES_LIMIT)
		return -EINVAL;
	WRITE_ONCE(kt_max_probes, n);
	return 0;
}

static const struct kernel_param_ops kt_max_probes_ops = {
	.set = kt_set_max_probes,
	.get = param_get_uint,
};
module_param_cb(max_probes, &kt_max_probes_ops, &kt_max_probes, 0644);
MODULE_PARM_DESC(max_probes, "probes per session (1..4096, default 256; more: ENOSPC)");

DEFINE_MUTEX(kt_probe_lock);
LIST_HEAD(kt_probes);
static u32 kt_next_id;

u64 ktrack_probe_features(void)
{
	u64 f = KTRACK_FEAT_KPROBE | KTRACK_FEAT_KRETPROBE | KTRACK_FEAT_PROBE_IDLE |
		KTRACK_FEAT_FUNCS_MODULE | KTRACK_FEAT_LINKED_STACK;

	if (KTRACK_HAVE_TP_PROBES)
		f |= KTRACK_FEAT_TRACEPOINT;
	f |= KTRACK_FEAT_EVENT_PROBE | KTRACK_FEAT_EVENT_BY_NAME | KTRACK_FEAT_USER_EVENT;
	if (IS_ENABLED(CONFIG_UPROBES))
		f |= KTRACK_FEAT_UPROBE;

	if (KTRACK_HAVE_FPROBE)
		f |= KTRACK_FEAT_FPROBE;
	if (IS_ENABLED(CONFIG_KPROBES_ON_FTRACE))
		f |= KTRACK_FEAT_FTRACE_OPS;
	if (IS_ENABLED(CONFIG_DYNAMIC_FTRACE_WITH_ARGS))
		f |= KTRACK_FEAT_KERNEL_GLOB | KTRACK_FEAT_KPROBE_FTRACE_OPS;
	return f;
}

/*
 * The attach operations of each kind of probe.  A new kind is a new
 * probe_*.c file with its ops, plus its entry here.
 */
static const struct kt_probe_ops *const kt_probe_kinds[] = {
	[KTRACK_PROBE_KPROBE] = &kt_kprobe_ops,
	[KTRACK_PROBE_KRETPROBE] = &kt_kretprobe_ops,
	[KTRACK_PROBE_FUNCS] = KTRACK_HAVE_FPROBE ? &kt_fprobe_ops : &kt_kprobe_funcs_ops,
	[KTRACK_PROBE_TRACEPOINT] = &kt_tp_ops,
	[KTRACK_PROBE_EVENT] = &kt_event_ops,
	[KTRACK_PROBE_UPROBE] = &kt_uprobe_ops,
	[KTRACK_PROBE_URETPROBE] = &kt_uprobe_ops,
	[KTRACK_PROBE_UEVENT] = &kt_uevent_ops,
};

static const struct kt_probe_ops *kt_probe_ops_of(u32 kind, u32 flags)
{
	/* f over a kernel glob, p at entry: ktrack's own ftrace_ops (probe_ftrace.c) */
	if ((kind == KTRACK_PROBE_FUNCS || kind == KTRACK_PROBE_KPROBE) &&
	    (flags & KTRACK_PROBE_F_KERNEL_GLOB))
		return &kt_ftrace_glob_ops;
	return kind < ARRAY_SIZE(kt_probe_kinds) ? kt_probe_kinds[kind] : NULL;
}

/*
 * Kernel lockdown (confidentiality) forbids kprobes, and so every probe
 * built on them, and any probe that reads kernel memory.  Checked at every
 * arm: the module notifier re-arms too.
 */
bool kt_locked_down(const struct kt_probe *p)
{
	if ((p->mechanism == KTRACK_MECH_TRACEPOINT || p->mechanism == KTRACK_MECH_PERF_EVENT ||
	     p->mechanism == KTRACK_MECH_UPROBE || p->mechanism == KTRACK_MECH_UEVENT) &&
	    !p->reads_kernel)
		return false;
	return security_locked_down(LOCKDOWN_KPROBES) != 0;
}

int kt_arm(struct kt_probe *p)
{
	int ret;

	if (kt_locked_down(p))
		return -EPERM;
	ret = p->ops->arm(p);
	if (!ret) {
		p->state = KTRACK_PROBE_ST_ARMED;
		p->arm_count++;
		p->gone_module[0] = '\0';
	}
	return ret;
}

u64 kt_kernel_missed(struct kt_probe *p)
{
	if (p->state != KTRACK_PROBE_ST_ARMED || !p->ops->missed)
		return 0;
	return p->ops->missed(p);
}

void kt_disarm(struct kt_probe *p, u32 new_state)
{
	if (p->state == KTRACK_PROBE_ST_ARMED) {
		p->missed_acc += kt_kernel_missed(p);
		p->ops->disarm(p);
	}
	kt_modglob_release(p);
	p->state = new_state;
}

struct kt_probe *kt_find(struct ktrack_session *s, u32 id, const char *name)
{
	struct kt_probe *p;

	list_for_each_entry(p, &kt_probes, node) {
		if (p->session != s)
			continue;
		if (id ? p->id == id : (name && !strcmp(p->name, name)))
			return p;
	}
	return NULL;
}

/*
 * kt_find() for the die and panic paths: the list is walked without
 * kt_probe_lock (which the crashed context may hold) and every load is
 * copy_from_kernel_nofault(), bounded in steps, so a list changing under
 * it costs a wrong or no answer, never a fault or a hang.
 */
bool ktrack_probe_name_nofault(struct ktrack_session *s, u32 id, char *buf, size_t len)
{
	struct list_head *pos = READ_ONCE(kt_probes.next);
	unsigned int steps;

	for (steps = 0; pos != &kt_probes && steps < 64 * KT_MAX_PROBES_LIMIT; steps++) {
		struct kt_probe *p = container_of(pos, struct kt_probe, node);
		struct ktrack_session *ps;
		u32 pid;

		if (copy_from_kernel_nofault(&ps, &p->session, sizeof(ps)) ||
		    copy_from_kernel_nofault(&pid, &p->id, sizeof(pid)))
			return false;
		if (ps == s && pid == id) {
			if (copy_from_kernel_nofault(buf, p->name, min(len, sizeof(p->name))))
				return false;
			buf[len - 1] = '\0';
			return true;
		}
		if (copy_from_kernel_nofault(&pos, &pos->next, sizeof(pos)))
			return false;
	}
	return false;
}

static bool kt_id_used(u32 id)
{
	struct kt_probe *p;

	list_for_each_entry(p, &kt_probes, node)
		if (p->id == id)
			return true;
	return false;
}

/*
 * Take 'p' out of the registry onto 'gone' (under kt_probe_lock): disarmed,
 * but a handler may still be running on it until kt_free_gone().
 */
static void kt_remove(struct kt_probe *p, struct list_head *gone)
{
	kt_disarm(p, KTRACK_PROBE_ST_DISARMED);
	list_move_tail(&p->node, gone);
}

/*
 * Free what kt_remove() took out, after one wait for the handlers of all
 * of them (tracepoints need one, uprobes on 6.12 another; kprobes and
 * fprobes wait in their unregister), with kt_probe_lock not held: removing
 * many t probes costs one grace period (e probes: the same wait), and
 * module load and unload never wait behind it.
 */
static void kt_free_gone(struct list_head *gone)
{
	void (*done[4])(void) = { NULL };
	struct kt_probe *p, *tmp;
	unsigned int i;

	list_for_each_entry(p, gone, node) {
		void (*sync)(void) = p->ops->sync_disarm;

		for (i = 0; sync && i < ARRAY_SIZE(done); i++) {
			if (done[i] == sync)
				break;
			if (!done[i]) {
				done[i] = sync;
				sync();
				break;
			}
		}
		/* (never: fewer kinds of wait than slots) */
		if (sync && i == ARRAY_SIZE(done))
			sync();
	}
	list_for_each_entry_safe(p, tmp, gone, node) {
		list_del(&p->node);
		kt_probe_free(p);
	}
}

/*
 * Add the probe described by 'desc' (kvmalloc'ed, 'size' bytes; owned by
 * the probe on success, freed here on failure) to 's'; its id, state and
 * mechanism go to 'res'.
 */
int ktrack_probe_add_kernel(struct ktrack_session *s, void *desc, u32 size,
			    struct ktrack_probe_add *res)
{
	struct kt_probe *p, *q;
	unsigned int n = 0, n_roots = 0;
	int ret;

	p = kt_probe_from_desc(desc, size);
	if (IS_ERR(p)) {
		kvfree(desc);
		return PTR_ERR(p);
	}
	p->session = s;
	p->ops = kt_probe_ops_of(p->kind, p->flags);
	if (WARN_ON_ONCE(!p->ops)) {	/* kt_probe_from_desc() checked the kind */
		ret = -EINVAL;
		goto free;
	}
	p->mechanism = p->ops->mechanism;
	if (kt_locked_down(p)) {
		ret = -EPERM;
		goto free;
	}
	/* a snapshot copies an overwrite ring (the flight recorder's) */
	if (p->has_snapshot && !ktrack_session_overwrite(s)) {
		ret = -EINVAL;
		goto free;
	}
	/* u, ur: the file is found before kt_probe_lock (probe_uprobe.c) */
	if (kt_probe_is_user(p)) {
		ret = kt_uprobe_prepare(p);
		if (ret)
			goto free;
	}

	mutex_lock(&kt_probe_lock);
	if (ktrack_session_dead(s)) {
		ret = -ENODEV;
		goto unlock;
	}
	list_for_each_entry(q, &kt_probes, node) {
		if (q->session != s)
			continue;
		if (!strcmp(q->name, p->name)) {
			ret = -EEXIST;
			goto unlock;
		}
		n++;
		n_roots += !!(q->flags & KTRACK_PROBE_F_GRAPH_ROOT);
	}
	if (n >= READ_ONCE(kt_max_probes)) {
		ret = -ENOSPC;
		goto unlock;
	}
	/* Never 0 (an id the API cannot name), never one still in use. */
	do {
		p->id = ++kt_next_id;
	} while (!p->id || kt_id_used(p->id));
	p->state = KTRACK_PROBE_ST_PENDING;
	/* a root's scopes: the table exists before its first hit */
	if (p->flags & KTRACK_PROBE_F_GRAPH_ROOT) {
		ret = kt_graph_prepare(s, !n_roots);
		if (ret)
			goto unlock;
	}
	if (p->mod_glob) {
		ret = kt_add_modglob(p);
	} else {
		ret = kt_arm(p);
		/* MOD:SYM on a module that is not loaded: wait for it */
		if (ret == -ENOENT && p->module[0] && p->ops->wait_module)
			ret = kt_module_loaded(p->module) ? -ENOENT : 0;
		/* U: armed when a program registers the event */
		if (ret == -ENOENT && p->kind == KTRACK_PROBE_UEVENT)
			ret = 0;
		/* an e probe's module still in its init: armed once it is LIVE */
		if (ret == -EAGAIN)
			ret = p->module[0] ? 0 : -ENOENT;
	}
	if (ret)
		goto unlock;
	res->id = p->id;
	res->state = p->state;
	res->mechanism = p->mechanism;
	list_add_tail(&p->node, &kt_probes);
	mutex_unlock(&kt_probe_lock);
	return 0;
unlock:
	mutex_unlock(&kt_probe_lock);
	/*
	 * An arm that failed half way may have run handlers on the probe
	 * (e: counters created, then released while perf's other users of
	 * the event keep it, so perf itself does not wait).
	 */
	if (p->ops && p->ops->sync_disarm)
		p->ops->sync_disarm();
free:
	kt_probe_free(p);
	return ret;
}

static long kt_ioctl_add(struct ktrack_session *s, void __user *arg)
{
	struct ktrack_probe_add req;
	struct kt_probe *p;
	void *desc;
	u32 usize;
	int ret;

	ret = ktrack_copy_sized_in(&req, sizeof(req), sizeof(req), arg, &usize);
	if (ret)
		return ret;
	if (req.__pad || req.id || req.state || req.mechanism)
		return -EINVAL;
	if (req.desc_size < sizeof(struct ktrack_probe_desc))
		return -EINVAL;
	if (req.desc_size > KTRACK_PROBE_DESC_MAX)
		return -E2BIG;
	desc = kvmalloc(req.desc_size, GFP_KERNEL_ACCOUNT);
	if (!desc)
		return -ENOMEM;
	if (copy_from_user(desc, u64_to_user_ptr(req.desc_ptr), req.desc_size)) {
		kvfree(desc);
		return -EFAULT;
	}
	ret = ktrack_probe_add_kernel(s, desc, req.desc_size, &req);
	if (ret)
		return ret;
	/*
	 * Copied out with no lock held (see the lock order in session.c).
	 * When the caller cannot learn the id, the probe goes again, unless
	 * another thread of the session removed it meanwhile.
	 */
	if (copy_to_user(arg, &req, min_t(size_t, usize, sizeof(req)))) {
		LIST_HEAD(gone);

		mutex_lock(&kt_probe_lock);
		p = kt_find(s, req.id, NULL);
		if (p)
			kt_remove(p, &gone);
		mutex_unlock(&kt_probe_lock);
		kt_free_gone(&gone);
		return -EFAULT;
	}
	return 0;
}

/* Remove and free every probe of 's'. */
static void kt_remove_all(struct ktrack_session *s)
{
	struct kt_probe *p, *tmp;
	LIST_HEAD(gone);

	mutex_lock(&kt_probe_lock);
	list_for_each_entry_safe(p, tmp, &kt_probes, node)
		if (p->session == s)
			kt_remove(p, &gone);
	mutex_unlock(&kt_probe_lock);
	kt_free_gone(&gone);
}

static long kt_ioctl_del(struct ktrack_session *s, void __user *arg)
{
	struct ktrack_probe_del req;
	struct kt_probe *p;
	LIST_HEAD(gone);
	size_t len;
	u32 usize;
	int ret;

	ret = ktrack_copy_sized_in(&req, sizeof(req), sizeof(req), arg, &usize);
	if (ret)
		return ret;
	if (req.__pad || req.flags & ~KTRACK_PROBE_DEL_ALL)
		return -EINVAL;
	len = strnlen(req.name, sizeof(req.name));
	/* NUL-terminated, and the bytes after the NUL reserved (zero). */
	if (len == sizeof(req.name) || memchr_inv(req.name + len, 0, sizeof(req.name) - len))
		return -EINVAL;
	if (req.flags & KTRACK_PROBE_DEL_ALL) {
		if (req.id || req.name[0])
			return -EINVAL;
		kt_remove_all(s);
		return 0;
	}
	if (!req.id && !req.name[0])
		return -EINVAL;
	mutex_lock(&kt_probe_lock);
	p = kt_find(s, req.id, req.name);
	if (p)
		kt_remove(p, &gone);
	mutex_unlock(&kt_probe_lock);
	kt_free_gone(&gone);
	return p ? 0 : -ENOENT;
}

bool ktrack_probe_cmd_known(unsigned int cmd)
{
	switch (cmd) {
	case KTRACK_IOC_PROBE_ADD:
	case KTRACK_IOC_PROBE_DEL:
	case KTRACK_IOC_PROBE_LIST:
	case KTRACK_IOC_PROBE_GET:
	case KTRACK_IOC_PROBE_PROFILE:
		return true;
	default:
		return false;
	}
}

long ktrack_probe_ioctl(struct ktrack_session *s, unsigned int cmd, void __user *arg)
{
	switch (cmd) {
	case KTRACK_IOC_PROBE_ADD:
		/*
		 * open() checked the opener; an fd handed to a process
		 * without the privilege may read, not arm (as perf does).
		 */
		if (!perfmon_capable())
			return -EPERM;
		return kt_ioctl_add(s, arg);
	case KTRACK_IOC_PROBE_DEL:
		return kt_ioctl_del(s, arg);
	case KTRACK_IOC_PROBE_LIST:
		return kt_ioctl_list(s, arg);
	case KTRACK_IOC_PROBE_GET:
		return kt_ioctl_get(s, arg);
	case KTRACK_IOC_PROBE_PROFILE:
		return kt_ioctl_profile(s, arg);
	default:
		return -ENOTTY;
	}
}

void ktrack_probe_session_release(struct ktrack_session *s)
{
	kt_remove_all(s);
}

/*
 * Called by the session list under ktrack_sessions_mutex: that mutex nests
 * outside kt_probe_lock, and nothing holding kt_probe_lock takes it.
 */
u32 ktrack_probe_count(struct ktrack_session *s)
{
	struct kt_probe *p;
	u32 n = 0;

	mutex_lock(&kt_probe_lock);
	list_for_each_entry(p, &kt_probes, node)
		n += p->session == s;
	mutex_unlock(&kt_probe_lock);
	return n;
}

int ktrack_probe_init(void)
{
	int ret = kt_fetch_init();

	if (ret)
		return ret;
	ret = kt_tp_init();
	if (ret)
		goto fetch;
	ret = kt_module_notifier_register();
	if (ret)
		goto tp;
	ret = kt_event_init();
	if (ret)
		goto notifier;
	return 0;
notifier:
	kt_module_notifier_unregister();
tp:
	kt_tp_exit();
fetch:
	kt_fetch_exit();
	return ret;
}

void ktrack_probe_exit(void)
{
	kt_event_exit();
	kt_module_notifier_unregister();
	kt_tp_exit();
	kt_fetch_exit();
}
