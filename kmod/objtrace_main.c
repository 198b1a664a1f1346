// SPDX-License-Identifier: GPL-2.0
/*
 * objtrace_main.c - the object tracker's per-session state, its ioctls
 * (0x30..0x3f); the exported driver API is in objtrace_api.c.
 *
 * Life cycle of a session's tracker: OBJ_CONFIG (allocates the table and
 * builds the function filters; only while disabled), OBJ_ADD_SOURCE,
 * OBJ_TRACK/UNTRACK/QUERY (any time after CONFIG), OBJ_ENABLE (attaches the
 * hooks and the sources), OBJ_DISABLE, and session release (detaches and
 * frees).  Every ioctl validates everything before changing anything.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": objtrace: " fmt

#include <linux/capability.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <ktrack/ktrack_objtrace.h>
#include "objtrace.h"
#include "uapi_copy.h"

/* Serializes every ioctl and the session list; never taken by a handler. */
/*
 * max_tracked_objects: the largest table a session may configure
 * (ktrack_obj_config.max_objects; about 150 bytes per entry, allocated at
 * OBJ_CONFIG), default and at most KTRACK_OBJ_MAX_OBJECTS.  A larger
 * max_objects is refused with E2BIG.  Per session.
 */
static unsigned int objtrace_max_objects = KTRACK_OBJ_MAX_OBJECTS;

static int objtrace_set_max_objects(const char *val, const struct kernel_param *kp)
{
	unsigned int n;
	int ret = kstrtouint(val, 0, &n);

	if (ret)
		return ret;
	if (!n || n > KTRACK_OBJ_MAX_OBJECTS)
		return -EINVAL;
	WRITE_ONCE(objtrace_max_objects, n);
	return 0;
}

static const struct kernel_param_ops objtrace_max_objects_ops = {
	.set = objtrace_set_max_objects,
	.get = param_get_uint,
};
module_param_cb(max_tracked_objects, &objtrace_max_objects_ops, &objtrace_max_objects, 0644);
MODULE_PARM_DESC(max_tracked_objects,
		 "objects one session may track at once (1..65536, default 65536; more: E2BIG)");

static DEFINE_MUTEX(objtrace_mutex);
static LIST_HEAD(objtrace_states);
/* Enabled states that accept ktrack_obj_track() (RCU readers). */
LIST_HEAD(objtrace_api_states);

static struct objtrace_state *objtrace_find(struct ktrack_session *s)
{
	struct objtrace_state *st;

	list_for_each_entry(st, &objtrace_states, node)
		if (st->sess == s)
			return st;
	return NULL;
}

static struct objtrace_state *objtrace_get(struct ktrack_session *s)
{
	struct objtrace_state *st = objtrace_find(s);

	if (st)
		return st;
	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return NULL;
	st->sess = s;
	INIT_LIST_HEAD(&st->api_node);
	list_add(&st->node, &objtrace_states);
	return st;
}

void objtrace_disable(struct objtrace_state *st)
{
	if (!st->enabled)
		return;
	if (st->cfg.flags & KTRACK_OBJF_API) {
		list_del_rcu(&st->api_node);
		synchronize_rcu();
	}
	objtrace_sources_unregister(st);
	objtrace_hooks_unregister(st);
	st->enabled = false;
}

/* Drop the configuration, the table and the sources (disabled state). */
static void objtrace_unconfigure(struct objtrace_state *st)
{
	unsigned int i;

	objtrace_hooks_free(st);
	objtrace_table_destroy(&st->table);
	free_percpu(st->pcpu);
	st->pcpu = NULL;
	kvfree(st->functions);
	st->functions = NULL;
	for (i = 0; i < st->nr_sources; i++)
		kfree(st->sources[i]);
	st->nr_sources = 0;
	st->configured = false;
}

static int objtrace_check_config(const struct ktrack_obj_config *c)
{
	unsigned int i;
	size_t len;

	if (c->flags & ~KTRACK_OBJF_ALL)
		return -EINVAL;
	if (!c->max_objects || c->max_objects > READ_ONCE(objtrace_max_objects))
		return -E2BIG;
	if (!c->nr_args || c->nr_args > KTRACK_OBJ_MAX_ARGS)
		return -EINVAL;
	if (c->nr_watch > KTRACK_OBJ_MAX_WATCH)
		return -E2BIG;
	if (!c->functions_len || !c->functions_ptr)
		return -EINVAL;
	if (c->flags & KTRACK_OBJF_FUNC_ADDRS) {
		/* The entry layout is versioned by its size. */
		if (c->func_size != sizeof(struct ktrack_obj_func))
			return -EINVAL;
		if (c->functions_len > KTRACK_OBJ_MAX_FUNC_ADDRS)
			return -E2BIG;
	} else {
		if (c->func_size)
			return -EINVAL;
		if (c->functions_len > KTRACK_OBJ_FUNCS_MAX)
			return -E2BIG;
	}
	len = strnlen(c->destructor, sizeof(c->destructor));
	/*
	 * One function named exactly: it reaches ftrace_set_filter(), where
	 * "*" would make every function a destructor.  The bytes after the
	 * NUL are reserved (zero), as everywhere in the ABI.
	 */
	if (len == sizeof(c->destructor) ||
	    memchr_inv(c->destructor + len, 0, sizeof(c->destructor) - len) ||
	    strpbrk(c->destructor, "*?[]!"))
		return -EINVAL;
	if (c->destructor[0] ? c->destructor_arg >= KTRACK_OBJ_MAX_ARGS : c->destructor_arg)
		return -EINVAL;
	if (c->flags & KTRACK_OBJF_DERIVE ? c->derive_offset >= KTRACK_OBJ_MAX_OFFSET ||
	    c->derive_offset % sizeof(long) : c->derive_offset)
		return -EINVAL;
	for (i = 0; i < KTRACK_OBJ_MAX_WATCH; i++) {
		const struct ktrack_obj_watch *w = &c->watch[i];

		if (i >= c->nr_watch) {
			if (w->offset || w->size || w->flags)
				return -EINVAL;
			continue;
		}
		if (w->size != 1 && w->size != 2 && w->size != 4 && w->size != 8)
			return -EINVAL;
		if (w->offset >= KTRACK_OBJ_MAX_OFFSET || w->flags & ~KTRACK_OBJ_WATCH_SIGNED)
			return -EINVAL;
	}
	return 0;
}

/*
 * Set the configuration: a new state is built aside and replaces the old one
 * (with its table and sources) only when everything worked.
 */
/* Copy in and validate an address-given function set (ktrack_obj_func[]). */
static struct ktrack_obj_func *objtrace_funcs_copy(const struct ktrack_obj_config *c, int *err)
{
	struct ktrack_obj_func *funcs;

	funcs = kvmalloc_array(c->functions_len, sizeof(*funcs), GFP_KERNEL);
	if (!funcs) {
		*err = -ENOMEM;
		return NULL;
	}
	if (copy_from_user(funcs, u64_to_user_ptr(c->functions_ptr),
			   array_size(c->functions_len, sizeof(*funcs))))
		*err = -EFAULT;
	else
		*err = objtrace_funcs_check(funcs, c->functions_len, c->nr_args);
	if (*err) {
		kvfree(funcs);
		return NULL;
	}
	return funcs;
}

/* Copy in a glob list: functions_len bytes without a NUL inside. */
static char *objtrace_globs_copy(const struct ktrack_obj_config *c, int *err)
{
	char *funcs = kvmalloc(c->functions_len + 1, GFP_KERNEL);

	if (!funcs) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = 0;
	if (copy_from_user(funcs, u64_to_user_ptr(c->functions_ptr), c->functions_len))
		*err = -EFAULT;
	funcs[c->functions_len] = 0;
	if (!*err && strlen(funcs) != c->functions_len)
		*err = -EINVAL;
	if (*err) {
		kvfree(funcs);
		return NULL;
	}
	return funcs;
}

/* What OBJ_CONFIG copied in, before any lock. */
struct objtrace_config_in {
	struct ktrack_obj_config c;
	struct ktrack_obj_func *addrs;	/* KTRACK_OBJF_FUNC_ADDRS */
	char *funcs;			/* otherwise: the glob list */
};

static int objtrace_config_copy_in(struct objtrace_config_in *in, void __user *arg)
{
	u32 usize;
	int ret;

	ret = ktrack_copy_sized_in(&in->c, sizeof(in->c), sizeof(in->c), arg, &usize);
	if (ret)
		return ret;
	ret = objtrace_check_config(&in->c);
	if (ret)
		return ret;
	if (in->c.flags & KTRACK_OBJF_FUNC_ADDRS)
		in->addrs = objtrace_funcs_copy(&in->c, &ret);
	else
		in->funcs = objtrace_globs_copy(&in->c, &ret);
	return ret;
}

/*
 * Set the configuration: a new state is built aside and replaces the old one
 * (with its table and sources) only when everything worked.  Takes over
 * in->addrs and in->funcs.
 */
static long objtrace_ioc_config(struct objtrace_state **stp, struct objtrace_config_in *in)
{
	struct objtrace_state *st = *stp, *nst = NULL;
	const struct ktrack_obj_config *cp = &in->c;
	struct ktrack_obj_func *addrs = in->addrs;
	char *funcs = in->funcs, *work = NULL;
	int ret;

	if (st->enabled) {
		ret = -EBUSY;
		goto err;
	}
	nst = kzalloc(sizeof(*nst), GFP_KERNEL);
	if (funcs)
		work = kvmalloc(cp->functions_len + 1, GFP_KERNEL);
	if (!nst || (funcs && !work)) {
		ret = -ENOMEM;
		goto err;
	}
	nst->cfg = *cp;
	nst->sess = st->sess;
	INIT_LIST_HEAD(&nst->api_node);
	nst->pcpu = alloc_percpu(struct objtrace_pcpu);
	ret = nst->pcpu ? objtrace_table_init(&nst->table, cp->max_objects) : -ENOMEM;
	if (ret)
		goto err_unconf;
	/* The filter parser edits its buffer: give it a copy. */
	if (funcs)
		memcpy(work, funcs, cp->functions_len + 1);
	nst->functions = work;
	nst->funcs = addrs;
	ret = objtrace_hooks_prepare(nst);
	nst->functions = funcs;
	nst->funcs = NULL;
	kvfree(work);
	work = NULL;
	kvfree(addrs);
	addrs = NULL;
	if (ret)
		goto err_unconf;
	nst->configured = true;
	list_replace(&st->node, &nst->node);
	objtrace_unconfigure(st);
	kfree(st);
	*stp = nst;
	return 0;

err_unconf:
	nst->functions = NULL;
	objtrace_unconfigure(nst);
err:
	kvfree(addrs);
	kvfree(work);
	kvfree(funcs);
	kfree(nst);
	return ret;
}

static long objtrace_ioc_add_source(struct objtrace_state *st, const struct ktrack_obj_source *dp)
{
	struct ktrack_obj_source d = *dp;
	struct objtrace_source *src;
	int ret;

	if (!st->configured)
		return -ENODATA;
	if (st->module_gone)
		return -ESTALE;
	if (st->enabled)
		return -EBUSY;
	if (st->nr_sources >= KTRACK_OBJ_MAX_SOURCES)
		return -E2BIG;
	ret = objtrace_source_check(&d);
	if (ret)
		return ret;
	src = kzalloc(sizeof(*src), GFP_KERNEL);
	if (!src)
		return -ENOMEM;
	src->desc = d;
	src->st = st;
	st->sources[st->nr_sources++] = src;
	return 0;
}

/* TRACK/UNTRACK/QUERY on the copied-in 'a'; 1: copy 'a' back out. */
static long objtrace_ioc_addr(struct objtrace_state *st, unsigned int cmd,
			      struct ktrack_obj_addr *ap)
{
	struct ktrack_obj_addr a = *ap;
	struct objtrace_obj *obj;
	int ret;

	if (!st->configured)
		return -ENODATA;
	if (a.flags & ~(cmd == KTRACK_IOC_OBJ_UNTRACK ? KTRACK_OBJ_ADDR_ALL : 0))
		return -EINVAL;
	if (a.life || a.hits)
		return -EINVAL;
	switch (cmd) {
	case KTRACK_IOC_OBJ_TRACK:
		if (!objtrace_kptr(a.addr))
			return -EINVAL;
		ret = objtrace_track(st, a.addr, KTRACK_OBJ_SRC_EXPLICIT, 0, 0, &a.life);
		if (ret == -EEXIST || ret == -EFAULT)
			return ret;
		if (ret)
			return -ENOSPC;
		break;
	case KTRACK_IOC_OBJ_UNTRACK:
		if (a.flags & KTRACK_OBJ_ADDR_ALL) {
			if (a.addr)
				return -EINVAL;
			objtrace_untrack_all(st, KTRACK_OBJ_END_EXPLICIT);
			return 0;
		}
		if (!objtrace_untrack(st, a.addr, KTRACK_OBJ_END_EXPLICIT, 0, 0))
			return -ENOENT;
		objtrace_table_reclaim(&st->table);
		return 0;
	case KTRACK_IOC_OBJ_QUERY:
		/* The hook runs with preemption off; so does this lookup. */
		preempt_disable();
		obj = objtrace_table_lookup(&st->table, a.addr, &a.life);
		if (obj)
			a.hits = atomic_read(&obj->hits);
		preempt_enable();
		if (!obj)
			return -ENOENT;
		break;
	}
	*ap = a;
	return 1;
}

/* Attach the hooks and the sources (configured, disabled). */
int objtrace_enable(struct objtrace_state *st)
{
	int ret;

	ret = objtrace_hooks_register(st);
	if (ret)
		return ret;
	ret = objtrace_sources_register(st);
	if (ret) {
		objtrace_hooks_unregister(st);
		return ret;
	}
	st->enabled = true;
	if (st->cfg.flags & KTRACK_OBJF_API)
		list_add_rcu(&st->api_node, &objtrace_api_states);
	return 0;
}

static long objtrace_ioc_enable(struct objtrace_state *st)
{
	if (!st->configured)
		return -ENODATA;
	/* A hooked function's module went: the hooks are not what was asked. */
	if (st->module_gone)
		return -ESTALE;
	if (st->enabled)
		return -EBUSY;
	return objtrace_enable(st);
}

static void objtrace_ioc_stats(struct objtrace_state *st, struct ktrack_obj_stats *op)
{
	struct ktrack_obj_stats o;
	unsigned int i;
	int cpu;

	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	if (st->configured) {
		o.enabled = st->enabled;
		o.capacity = st->cfg.max_objects;
		o.nr_tracked = atomic_read(&st->table.nr_live);
		o.nr_functions = st->nr_functions;
		o.nr_sources = st->nr_sources;
		o.lives = atomic64_read(&st->lives);
		for_each_possible_cpu(cpu) {
			const struct objtrace_pcpu *p = per_cpu_ptr(st->pcpu, cpu);

			o.hits += p->hits;
			o.hits_recorded += p->hits_recorded;
			o.hits_unchanged += p->hits_unchanged;
			o.rec_lost += p->rec_lost;
			o.recursion += p->recursion;
		}
		for (i = 0; i < KTRACK_OBJ_DROP_MAX; i++)
			o.dropped[i] = atomic64_read(&st->dropped[i]);
		for (i = 0; i < KTRACK_OBJ_END_MAX; i++)
			o.ended[i] = atomic64_read(&st->ended[i]);
		if (st->module_gone)
			o.flags |= KTRACK_OBJ_STATS_F_MODULE_GONE;
		o.funcs_gone = st->funcs_gone;
	}
	*op = o;
}

/*
 * Every copy from or to user memory happens before objtrace_mutex is taken
 * or after it is released: a stalled fault must not block the other
 * sessions' object trackers (nor their teardown).
 */
bool ktrack_objtrace_cmd_known(unsigned int cmd)
{
	switch (cmd) {
	case KTRACK_IOC_OBJ_CONFIG:
	case KTRACK_IOC_OBJ_ADD_SOURCE:
	case KTRACK_IOC_OBJ_TRACK:
	case KTRACK_IOC_OBJ_UNTRACK:
	case KTRACK_IOC_OBJ_ENABLE:
	case KTRACK_IOC_OBJ_DISABLE:
	case KTRACK_IOC_OBJ_GET_STATS:
	case KTRACK_IOC_OBJ_QUERY:
		return true;
	default:
		return false;
	}
}

long ktrack_objtrace_ioctl(struct ktrack_session *s, unsigned int cmd, void __user *arg)
{
	struct objtrace_config_in cin = { };
	union {
		struct ktrack_obj_source src;
		struct ktrack_obj_addr addr;
		struct ktrack_obj_stats stats;
	} u;
	struct objtrace_state *st;
	u32 usize = 0;
	long ret;

	/*
	 * Hooking functions with kprobes and ftrace, and copying watched
	 * fields of any kernel address into records, is what kernel lockdown
	 * forbids (as it forbids kprobes and tracefs).
	 */
	switch (cmd) {
	case KTRACK_IOC_OBJ_CONFIG:
	case KTRACK_IOC_OBJ_ADD_SOURCE:
	case KTRACK_IOC_OBJ_TRACK:
	case KTRACK_IOC_OBJ_ENABLE:
		/* As PROBE_ADD: a handed-over fd reads, it does not arm. */
		if (!perfmon_capable() || security_locked_down(LOCKDOWN_KPROBES))
			return -EPERM;
		break;
	}
	switch (cmd) {
	case KTRACK_IOC_OBJ_CONFIG:
		ret = objtrace_config_copy_in(&cin, arg);
		break;
	case KTRACK_IOC_OBJ_ADD_SOURCE:
		ret = ktrack_copy_sized_in(&u.src, sizeof(u.src), sizeof(u.src), arg, &usize);
		break;
	case KTRACK_IOC_OBJ_TRACK:
	case KTRACK_IOC_OBJ_UNTRACK:
	case KTRACK_IOC_OBJ_QUERY:
		ret = ktrack_copy_sized_in(&u.addr, sizeof(u.addr), sizeof(u.addr), arg, &usize);
		break;
	case KTRACK_IOC_OBJ_GET_STATS:
		ret = ktrack_copy_sized_in(&u.stats, sizeof(u.stats),
					   offsetof(struct ktrack_obj_stats, lives), arg, &usize);
		break;
	case KTRACK_IOC_OBJ_ENABLE:
	case KTRACK_IOC_OBJ_DISABLE:
		ret = 0;
		break;
	default:
		return -ENOTTY;
	}
	if (ret) {
		kvfree(cin.addrs);
		kvfree(cin.funcs);
		return ret;
	}
	mutex_lock(&objtrace_mutex);
	/* Torn down: its state is released (or about to be); add nothing. */
	st = ktrack_session_dead(s) ? NULL : objtrace_get(s);
	if (!st) {
		ret = ktrack_session_dead(s) ? -ENODEV : -ENOMEM;
		kvfree(cin.addrs);
		kvfree(cin.funcs);
		goto out;
	}
	switch (cmd) {
	case KTRACK_IOC_OBJ_CONFIG:
		ret = objtrace_ioc_config(&st, &cin);
		break;
	case KTRACK_IOC_OBJ_ADD_SOURCE:
		ret = objtrace_ioc_add_source(st, &u.src);
		break;
	case KTRACK_IOC_OBJ_ENABLE:
		ret = objtrace_ioc_enable(st);
		break;
	case KTRACK_IOC_OBJ_DISABLE:
		/* ESTALE: a module's going disabled it (objtrace_module.c) */
		ret = st->enabled ? 0 : st->module_gone ? -ESTALE : -ENODATA;
		objtrace_disable(st);
		break;
	case KTRACK_IOC_OBJ_GET_STATS:
		objtrace_ioc_stats(st, &u.stats);
		ret = 1;
		break;
	default:
		ret = objtrace_ioc_addr(st, cmd, &u.addr);
		break;
	}
out:
	mutex_unlock(&objtrace_mutex);
	if (ret != 1)
		return ret;
	/* 1: the command has a result to copy out */
	if (copy_to_user(arg, &u, min_t(size_t, usize, cmd == KTRACK_IOC_OBJ_GET_STATS ?
					 sizeof(u.stats) : sizeof(u.addr))))
		return -EFAULT;
	return 0;
}

/* Stop tracking, unlist and free one state (objtrace_mutex held). */
static void objtrace_destroy(struct objtrace_state *st)
{
	objtrace_disable(st);
	list_del(&st->node);
	if (st->configured)
		objtrace_unconfigure(st);
	kfree(st);
}

void ktrack_objtrace_session_release(struct ktrack_session *s)
{
	struct objtrace_state *st;

	mutex_lock(&objtrace_mutex);
	st = objtrace_find(s);
	if (st)
		objtrace_destroy(st);
	mutex_unlock(&objtrace_mutex);
}

u64 ktrack_objtrace_features(void)
{
	return KTRACK_FEAT_OBJTRACE | KTRACK_FEAT_OBJ_FUNC_ADDRS | KTRACK_FEAT_OBJ_MODULE_GONE;
}

/*
 * GOING: every configured tracker lets go of its functions in the module,
 * before ftrace releases the module's call sites (objtrace_module.c).
 * objtrace_mutex is taken with no session lock held, as by the ioctls.
 */
static int objtrace_module_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct objtrace_state *st;

	if (action != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&objtrace_mutex);
	list_for_each_entry(st, &objtrace_states, node)
		if (st->configured)
			objtrace_module_going(st, data);
	mutex_unlock(&objtrace_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block objtrace_module_nb = {
	.notifier_call = objtrace_module_notify,
};

int ktrack_objtrace_init(void)
{
	return register_module_notifier(&objtrace_module_nb);
}

void ktrack_objtrace_exit(void)
{
	struct objtrace_state *st, *tmp;

	unregister_module_notifier(&objtrace_module_nb);

	/* Sessions are released before exit; this only catches leftovers. */
	mutex_lock(&objtrace_mutex);
	list_for_each_entry_safe(st, tmp, &objtrace_states, node)
		objtrace_destroy(st);
	mutex_unlock(&objtrace_mutex);
}
