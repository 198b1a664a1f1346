// SPDX-License-Identifier: GPL-2.0
/*
 * probe.c - the dynamic probe part of ktrack.ko: the ioctls 0x20..0x2f
 * (add and del here; list and get in probe_query.c), the registry of probes (each belongs to a session
 * and goes away with it), arming through the right mechanism, and the
 * module notifier that arms pending probes when their module loads and
 * disarms them when it goes.
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
		KTRACK_FEAT_FUNCS_MODULE;

	if (KTRACK_HAVE_TP_PROBES)
		f |= KTRACK_FEAT_TRACEPOINT;
	f |= KTRACK_FEAT_EVENT_PROBE;

	if (KTRACK_HAVE_FPROBE)
		f |= KTRACK_FEAT_FPROBE;
	if (IS_ENABLED(CONFIG_KPROBES_ON_FTRACE))
		f |= KTRACK_FEAT_FTRACE_OPS;
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
};

static const struct kt_probe_ops *kt_probe_ops_of(u32 kind)
{
	return kind < ARRAY_SIZE(kt_probe_kinds) ? kt_probe_kinds[kind] : NULL;
}

/*
 * Kernel lockdown (confidentiality) forbids kprobes, and so every probe
 * built on them, and any probe that reads kernel memory.  Checked at every
 * arm: the module notifier re-arms too.
 */
static bool kt_locked_down(const struct kt_probe *p)
{
	if ((p->mechanism == KTRACK_MECH_TRACEPOINT || p->mechanism == KTRACK_MECH_PERF_EVENT) &&
	    !p->reads_kernel)
		return false;
	return security_locked_down(LOCKDOWN_KPROBES) != 0;
}

static int kt_arm(struct kt_probe *p)
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

static void kt_disarm(struct kt_probe *p, u32 new_state)
{
	if (p->state == KTRACK_PROBE_ST_ARMED) {
		p->missed_acc += kt_kernel_missed(p);
		p->ops->disarm(p);
	}
	kt_modglob_release(p);
	p->state = new_state;
}

/*
 * f MOD:GLOB: match the globs in 'mod' (with its init text while it is
 * COMING), then arm on what matched.
 */
static int kt_arm_in(struct kt_probe *p, struct module *mod, bool with_init)
{
	int ret;

	if (kt_locked_down(p))
		return -EPERM;
	ret = kt_modglob_resolve(p, mod, with_init);
	if (!ret)
		ret = kt_arm(p);
	if (ret)
		kt_modglob_release(p);
	return ret;
}

/*
 * PROBE_ADD of f MOD:GLOB: armed now when the module is loaded (COMING
 * after the notifier ran - its sysfs entry comes after - or LIVE), else
 * pending until its COMING.
 */
static int kt_add_modglob(struct kt_probe *p)
{
	struct module *mod = kt_module_get(p->module);
	int state, ret = 0;

	if (!mod)
		return 0;
	state = READ_ONCE(mod->state);
	if (state == MODULE_STATE_COMING || state == MODULE_STATE_LIVE)
		ret = kt_arm_in(p, mod, state == MODULE_STATE_COMING);
	kt_module_put(mod);
	return ret;
}

/*
 * Is a module of that name loaded, and not on its way out?  find_module()
 * is not exported; every module has a kobject in the "module" kset, which
 * is our own module's kset.  A module already GOING still has it (until
 * free_module()), but it will not come back as it is: a MOD:SYM probe on
 * it waits for the next load (review finding #25).  Our reference on the
 * kobject keeps its struct module alive (mod_kobject_put() waits for it);
 * built-in "modules" (parameters only) have none.
 */
static bool kt_module_loaded(const char *name)
{
	struct kobject *kobj = kset_find_obj(THIS_MODULE->mkobj.kobj.kset, name);
	struct module *mod;
	bool live;

	if (!kobj)
		return false;
	mod = container_of(kobj, struct module_kobject, kobj)->mod;
	live = !mod || READ_ONCE(mod->state) != MODULE_STATE_GOING;
	kobject_put(kobj);
	return live;
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
 * of them (tracepoints need one; kprobes and fprobes wait in their
 * unregister), with kt_probe_lock not held: removing many t probes costs
 * one grace period (e probes: the same wait), and module load and unload never wait behind it.
 */
static void kt_free_gone(struct list_head *gone)
{
	struct kt_probe *p, *tmp;
	bool sync = false;

	list_for_each_entry(p, gone, node)
		sync |= p->ops->sync_disarm != NULL;
	if (sync)
		kt_tp_ops.sync_disarm();
	list_for_each_entry_safe(p, tmp, gone, node) {
		list_del(&p->node);
		kt_probe_free(p);
	}
}

static long kt_ioctl_add(struct ktrack_session *s, void __user *arg)
{
	struct ktrack_probe_add req;
	struct kt_probe *p, *q;
	unsigned int n = 0;
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
	desc = kvmalloc(req.desc_size, GFP_KERNEL);
	if (!desc)
		return -ENOMEM;
	if (copy_from_user(desc, u64_to_user_ptr(req.desc_ptr), req.desc_size)) {
		kvfree(desc);
		return -EFAULT;
	}
	p = kt_probe_from_desc(desc, req.desc_size);
	if (IS_ERR(p)) {
		kvfree(desc);
		return PTR_ERR(p);
	}
	p->session = s;
	p->ops = kt_probe_ops_of(p->kind);
	if (WARN_ON_ONCE(!p->ops)) {	/* kt_probe_from_desc() checked the kind */
		ret = -EINVAL;
		goto free;
	}
	p->mechanism = p->ops->mechanism;
	if (kt_locked_down(p)) {
		ret = -EPERM;
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
	if (p->mod_glob) {
		ret = kt_add_modglob(p);
	} else {
		ret = kt_arm(p);
		/* MOD:SYM on a module that is not loaded: wait for it */
		if (ret == -ENOENT && p->module[0] && p->ops->wait_module)
			ret = kt_module_loaded(p->module) ? -ENOENT : 0;
	}
	if (ret)
		goto unlock;
	req.id = p->id;
	req.state = p->state;
	req.mechanism = p->mechanism;
	list_add_tail(&p->node, &kt_probes);
	mutex_unlock(&kt_probe_lock);
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
unlock:
	mutex_unlock(&kt_probe_lock);
free:
	kt_probe_free(p);
	return ret;
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

/*
 * How much of probe 'p' lives in module 'mod' (KT_IN_*): all of it when
 * named MOD:SYM, else by its attach addresses.
 */
static int kt_in_module(struct kt_probe *p, struct module *mod)
{
	if (p->module[0])
		return strcmp(p->module, mod->name) ? KT_IN_NONE : KT_IN_ALL;
	if (p->state != KTRACK_PROBE_ST_ARMED || !p->ops->in_module)
		return KT_IN_NONE;
	return p->ops->in_module(p, mod);
}

/*
 * COMING: arm the probes waiting for this module (by MOD:SYM, or by
 * symbol after their module went), and re-arm an f probe some of whose
 * attach points the kprobes core killed when their module went: arming
 * again finds the functions of the module that is back.  A probe given by
 * address is never re-armed: the module's text is elsewhere now, and the
 * old address may be anything.
 */
static void kt_module_coming(struct kt_probe *p, struct module *mod)
{
	int ret;

	if (p->mod_glob) {
		/* f MOD:GLOB: its module only, init functions included */
		if (p->state == KTRACK_PROBE_ST_ARMED || strcmp(p->module, mod->name))
			return;
		ret = kt_arm_in(p, mod, true);
		if (ret == -E2BIG)
			pr_warn("probe %s: more than %d functions of %s match: not armed\n",
				p->name, KTRACK_PROBE_MAX_FUNCS, mod->name);
		else if (ret == -ENOENT)
			pr_warn("probe %s: no traceable function of %s matches\n", p->name,
				mod->name);
		else if (ret)
			pr_warn("probe %s: cannot arm in module %s (%d)\n", p->name, mod->name,
				ret);
		return;
	}
	if (p->state == KTRACK_PROBE_ST_ARMED) {
		if (!p->ops->gone || p->ops->gone(p) == KT_IN_NONE)
			return;
		kt_disarm(p, KTRACK_PROBE_ST_DISARMED);
	} else {
		if (strcmp(p->module, mod->name) && strcmp(p->gone_module, mod->name))
			return;
		if (!p->symbol[0] && p->kind != KTRACK_PROBE_FUNCS)
			return;
	}
	if (kt_arm(p))
		pr_warn("probe %s: cannot arm in module %s\n", p->name, mod->name);
}

/*
 * GOING: disarm what lives only in this module.  An f probe with attach
 * points elsewhere stays armed: the kprobes core (or ftrace, for fprobe)
 * drops only the going module's points, so the other functions keep
 * their events.
 */
static void kt_module_going(struct kt_probe *p, struct module *mod)
{
	int in;

	if (p->state != KTRACK_PROBE_ST_ARMED)
		return;
	in = kt_in_module(p, mod);
	if (in == KT_IN_NONE || (in == KT_IN_SOME && p->kind == KTRACK_PROBE_FUNCS))
		return;
	kt_disarm(p, KTRACK_PROBE_ST_DISARMED);
	strscpy(p->gone_module, mod->name, sizeof(p->gone_module));
}

/*
 * LIVE: the module's init text is freed, and the kprobes core has killed
 * the kprobes in it (its notifier runs before ours).  A probe left with no
 * live attach point is disarmed rather than reported ARMED; a MOD:SYM one
 * is armed again when its module next comes.
 */
static void kt_module_live(struct kt_probe *p, struct module *mod)
{
	if (p->mod_glob) {
		/*
		 * f MOD:GLOB with init functions: armed again on the core
		 * functions alone, before the init text is freed (a stale
		 * address must not stay in an ftrace filter); none left:
		 * disarmed until the module's next load.
		 */
		if (p->state != KTRACK_PROBE_ST_ARMED || !p->nr_init_funcs ||
		    strcmp(p->module, mod->name))
			return;
		kt_disarm(p, KTRACK_PROBE_ST_DISARMED);
		if (kt_arm_in(p, mod, false))
			strscpy(p->gone_module, mod->name, sizeof(p->gone_module));
		return;
	}
	if (p->state != KTRACK_PROBE_ST_ARMED || !p->ops->gone ||
	    p->ops->gone(p) != KT_IN_ALL)
		return;
	kt_disarm(p, KTRACK_PROBE_ST_DISARMED);
	strscpy(p->gone_module, mod->name, sizeof(p->gone_module));
}

/*
 * GOING for the probes of one mechanism, under kt_probe_lock: probe_tp.c
 * disarms t probes from the tracepoint-module notifier, which the kernel
 * calls before it checks that no probe is left on the going module's
 * tracepoints (and before kt_module_notify() sees the module go).
 */
void kt_module_going_locked(struct module *mod, const struct kt_probe_ops *ops)
{
	struct kt_probe *p;

	lockdep_assert_held(&kt_probe_lock);
	list_for_each_entry(p, &kt_probes, node)
		if (p->ops == ops)
			kt_module_going(p, mod);
}

static int kt_module_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct module *mod = data;
	struct kt_probe *p;

	if (action != MODULE_STATE_COMING && action != MODULE_STATE_GOING &&
	    action != MODULE_STATE_LIVE)
		return NOTIFY_DONE;
	mutex_lock(&kt_probe_lock);
	list_for_each_entry(p, &kt_probes, node) {
		if (action == MODULE_STATE_COMING)
			kt_module_coming(p, mod);
		else if (action == MODULE_STATE_GOING)
			kt_module_going(p, mod);
		else
			kt_module_live(p, mod);
	}
	mutex_unlock(&kt_probe_lock);
	return NOTIFY_DONE;
}

static struct notifier_block kt_module_nb = {
	.notifier_call = kt_module_notify,
	/* after kprobes' own notifier has handled a going module */
	.priority = 0,
};

int ktrack_probe_init(void)
{
	int ret = kt_fetch_init();

	if (ret)
		return ret;
	ret = kt_tp_init();
	if (ret)
		goto fetch;
	ret = register_module_notifier(&kt_module_nb);
	if (ret)
		goto tp;
	return 0;
tp:
	kt_tp_exit();
fetch:
	kt_fetch_exit();
	return ret;
}

void ktrack_probe_exit(void)
{
	unregister_module_notifier(&kt_module_nb);
	kt_tp_exit();
	kt_fetch_exit();
}
