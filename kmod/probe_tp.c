// SPDX-License-Identifier: GPL-2.0
/*
 * probe_tp.c - t probes: attach to an existing static tracepoint of the
 * core kernel or of a module and record its raw arguments ($arg1..$arg5:
 * KT_TP_NR_ARGS; validation refuses $arg6, which this handler never receives).
 *
 * Tracepoint probes are called as probe(data, arg1, ..., argN) with N fixed
 * by the event's TP_PROTO.  This handler takes the maximum count of
 * register-passed arguments: on x86-64 those are the argument registers, so
 * a tracepoint with fewer arguments leaves the extra ones as whatever the
 * registers hold (never memory we would read).  Userspace names the
 * arguments it uses.  The record's ip is the struct tracepoint (the
 * __tracepoint_NAME data symbol in kallsyms).  Kernels with kCFI refuse t
 * probes (compat_probe.h).
 *
 * Module tracepoints: for_each_kernel_tracepoint() sees only vmlinux, so
 * the tracepoint-module notifier keeps a table of the modules that have
 * tracepoints (COMING for each one already loaded when we register, then
 * COMING and GOING as they come and go).  The table is under kt_probe_lock,
 * taken inside the kernel's tracepoint_module_list_mutex (the notifier's
 * lock; nothing holding kt_probe_lock takes it).  GOING disarms the t probes
 * on the module's tracepoints before the kernel checks that none is left,
 * and the module notifier of probe.c re-arms pending ones at COMING, after
 * this notifier (registered at boot) has put the module in the table.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "compat_probe.h"
#include "probe_internal.h"

static notrace void kt_tp_handler(void *data, unsigned long a1, unsigned long a2,
				  unsigned long a3, unsigned long a4, unsigned long a5)
{
	struct kt_probe *p = data;
	unsigned long args[KTRACK_FETCH_MAX_ARG] = { a1, a2, a3, a4, a5 };	/* KT_TP_NR_ARGS */
	struct kt_fetch_ctx ctx = { .args = args };

	kt_probe_emit(p, &ctx, KTRACK_PROBE_EV_TP, (unsigned long)READ_ONCE(p->tp), _RET_IP_);
}
NOKPROBE_SYMBOL(kt_tp_handler);

struct kt_tp_find {
	const char *name;
	struct tracepoint *tp;
};

static void kt_tp_match(struct tracepoint *tp, void *priv)
{
	struct kt_tp_find *f = priv;

	if (!strcmp(tp->name, f->name))
		f->tp = tp;
}

/* A loaded module with tracepoints (kt_tp_mods, under kt_probe_lock). */
struct kt_tp_mod {
	struct list_head node;
	struct module *mod;
};

static LIST_HEAD(kt_tp_mods);

static struct tracepoint *kt_tp_in_module(struct module *mod, const char *name)
{
	unsigned int i;

	for (i = 0; i < mod->num_tracepoints; i++) {
		struct tracepoint *tp = tracepoint_ptr_deref(&mod->tracepoints_ptrs[i]);

		if (!strcmp(tp->name, name))
			return tp;
	}
	return NULL;
}

/*
 * The tracepoint 'p' names: MOD:EVENT in that module only; EVENT in vmlinux
 * first, then in the loaded modules.
 */
static struct tracepoint *kt_tp_lookup(struct kt_probe *p)
{
	struct tracepoint *tp;
	struct kt_tp_mod *m;

	lockdep_assert_held(&kt_probe_lock);
	if (!p->module[0]) {
		tp = kt_tp_find_kernel(p->symbol);
		if (tp)
			return tp;
	}
	list_for_each_entry(m, &kt_tp_mods, node) {
		if (p->module[0] && strcmp(p->module, m->mod->name))
			continue;
		tp = kt_tp_in_module(m->mod, p->symbol);
		if (tp)
			return tp;
	}
	return NULL;
}

/* A tracepoint of vmlinux by name, or NULL (also the latency tracers'). */
struct tracepoint *kt_tp_find_kernel(const char *name)
{
	struct kt_tp_find f = { .name = name };

	for_each_kernel_tracepoint(kt_tp_match, &f);
	return f.tp;
}

static int kt_tp_arm(struct kt_probe *p)
{
	struct tracepoint *tp;
	int ret;

	if (!KTRACK_HAVE_TP_PROBES)
		return -EOPNOTSUPP;
	tp = kt_tp_lookup(p);
	if (!tp)
		return -ENOENT;
	/* Set first: the handler records it from the first hit on. */
	p->tp = tp;
	ret = tracepoint_probe_register(tp, (void *)kt_tp_handler, p);
	if (ret) {
		p->tp = NULL;
		return ret == -EEXIST ? -EBUSY : ret;
	}
	return 0;
}

static void kt_tp_disarm(struct kt_probe *p)
{
	if (!p->tp)
		return;
	tracepoint_probe_unregister(p->tp, (void *)kt_tp_handler, p);
	/*
	 * A handler may still run (p->tp stays valid for it): probe.c calls
	 * kt_tp_sync() once for all it removed, before freeing them.
	 */
}

static void kt_tp_sync(void)
{
	tracepoint_synchronize_unregister();
}

/* An armed probe's tracepoint is the module's, or not at all. */
static int kt_tp_in_mod(struct kt_probe *p, struct module *mod)
{
	return p->tp && within_module((unsigned long)p->tp, mod) ? KT_IN_ALL : KT_IN_NONE;
}

/* MOD:EVENT waits for its module; no kernel-side miss count */
const struct kt_probe_ops kt_tp_ops = {
	.mechanism = KTRACK_MECH_TRACEPOINT,
	.wait_module = true,
	.arm = kt_tp_arm,
	.disarm = kt_tp_disarm,
	.in_module = kt_tp_in_mod,
	.sync_disarm = kt_tp_sync,
};

/*
 * Called under the kernel's tracepoint_module_list_mutex.  GOING takes the
 * module out of the table before the probes on it are disarmed, all under
 * kt_probe_lock: no arm can find it in between.  The disarmed probes are
 * freed later, after kt_tp_sync(), by whoever removes them; the module's
 * memory outlives any handler still running on its tracepoints (the module
 * loader waits for RCU before freeing it, and tracepoint calls run inside
 * an RCU read side).
 */
static int kt_tp_module_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	struct tp_module *tp_mod = data;
	struct module *mod = tp_mod->mod;
	struct kt_tp_mod *m, *tmp;

	if (action != MODULE_STATE_COMING && action != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&kt_probe_lock);
	if (action == MODULE_STATE_COMING) {
		m = kmalloc(sizeof(*m), GFP_KERNEL);
		if (m) {
			m->mod = mod;
			list_add_tail(&m->node, &kt_tp_mods);
		} else {
			pr_warn("no memory for the tracepoints of module %s\n", mod->name);
		}
	} else {
		list_for_each_entry_safe(m, tmp, &kt_tp_mods, node) {
			if (m->mod != mod)
				continue;
			list_del(&m->node);
			kfree(m);
		}
		kt_module_going_locked(mod, &kt_tp_ops);
	}
	mutex_unlock(&kt_probe_lock);
	return NOTIFY_OK;
}

static struct notifier_block kt_tp_module_nb = {
	.notifier_call = kt_tp_module_notify,
};

int kt_tp_init(void)
{
	if (!KTRACK_HAVE_TP_PROBES)
		return 0;
	return register_tracepoint_module_notifier(&kt_tp_module_nb);
}

/*
 * No probe is left (every session went before the module exit).
 * Unregistering calls GOING for every module in the kernel's list, which
 * empties the table; what it did not (none expected) is freed here.
 */
void kt_tp_exit(void)
{
	struct kt_tp_mod *m, *tmp;

	if (!KTRACK_HAVE_TP_PROBES)
		return;
	unregister_tracepoint_module_notifier(&kt_tp_module_nb);
	mutex_lock(&kt_probe_lock);
	list_for_each_entry_safe(m, tmp, &kt_tp_mods, node) {
		list_del(&m->node);
		kfree(m);
	}
	mutex_unlock(&kt_probe_lock);
}
