// SPDX-License-Identifier: GPL-2.0
/*
 * probe_module.c - probes and the lives of modules: whether a MOD: target's
 * module is loaded, f MOD:GLOB armed on a loaded module, and the module
 * notifier that arms pending probes when their module comes (before its
 * init runs), disarms what lives only in a module that goes, and drops
 * init text at LIVE.  Runs under kt_probe_lock, like the rest of the probe
 * core (probe.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/string.h>

#include "probe_internal.h"

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
int kt_add_modglob(struct kt_probe *p)
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
bool kt_module_loaded(const char *name)
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
 * attach points the kprobes core killed when their module went, if this
 * module has functions of its names: arming again finds the functions of
 * the module that is back.  On fprobe, the functions that left the armed
 * probe rejoin it instead (ops->rejoin), with no disarm: its other
 * functions miss no hit.  A probe given by address is never re-armed: the
 * module's text is elsewhere now, and the old address may be anything.
 */
static void kt_module_coming(struct kt_probe *p, struct module *mod)
{
	int ret;

	/* e: a module's events are followed once it is LIVE (probe_event.c) */
	if (p->ops->arm_at_live)
		return;
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
	/*
	 * f over a kernel glob disarmed at a COMING: armed again at this one;
	 * p at entry through ftrace_ops: when the module it went with comes
	 */
	if (p->ops == &kt_ftrace_glob_ops && p->state == KTRACK_PROBE_ST_DISARMED) {
		if (p->kind == KTRACK_PROBE_KPROBE && strcmp(p->gone_module, mod->name))
			return;
		if (kt_arm(p) && p->kind == KTRACK_PROBE_KPROBE)
			pr_warn("probe %s: cannot arm in module %s\n", p->name, mod->name);
		return;
	}
	if (p->state == KTRACK_PROBE_ST_ARMED) {
		if (p->ops->rejoin) {
			ret = p->ops->rejoin(p, mod);
			if (ret)
				pr_warn("probe %s: cannot attach again in module %s (%d)\n",
					p->name, mod->name, ret);
			return;
		}
		if (!p->ops->gone || p->ops->gone(p) == KT_IN_NONE)
			return;
		/*
		 * f: a module with none of its names gives no killed point
		 * back, and arming again by name would fail on them: stays
		 * armed on the others
		 */
		if (p->kind == KTRACK_PROBE_FUNCS &&
		    !kt_module_has_funcs(mod, p->func_names, p->nr_funcs))
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
 * The armed attach points of f probe 'p' by name (no MOD:) that are in
 * 'mod' (its init text only when 'init_only') leave it (ops->leave).
 * True when the probe stays armed: none was there, or they left and the
 * others stay attached.  False when the caller must disarm it: all its
 * points are there, or they could not leave.
 */
static bool kt_leave(struct kt_probe *p, struct module *mod, bool init_only)
{
	int in = p->ops->leave(p, mod, init_only);

	if (in == KT_IN_NONE || in == KT_IN_SOME)
		return true;
	if (in < 0)
		pr_warn("probe %s: its functions in %s cannot leave it (%d): disarmed\n",
			p->name, mod->name, in);
	return false;
}

/*
 * GOING: disarm what lives only in this module.  An f probe with attach
 * points elsewhere stays armed: the kprobes core drops only the going
 * module's points, so the other functions keep their events; on fprobe,
 * ftrace drops the module's call sites but not the addresses in the
 * probe's filter, so they leave it (ops->leave) for a new module's text
 * there to stay untraced.
 */
static void kt_module_going(struct kt_probe *p, struct module *mod)
{
	int in;

	if (p->state != KTRACK_PROBE_ST_ARMED)
		return;
	if (!p->module[0] && p->ops->leave) {
		if (kt_leave(p, mod, false))
			return;
	} else {
		in = kt_in_module(p, mod);
		if (in == KT_IN_NONE || (in == KT_IN_SOME && p->kind == KTRACK_PROBE_FUNCS))
			return;
	}
	kt_disarm(p, KTRACK_PROBE_ST_DISARMED);
	strscpy(p->gone_module, mod->name, sizeof(p->gone_module));
}

/*
 * LIVE: the module's init text is freed, and the kprobes core has killed
 * the kprobes in it (its notifier runs before ours).  A probe left with no
 * live attach point is disarmed rather than reported ARMED; a MOD:SYM one
 * is armed again when its module next comes.  On fprobe, an f probe's
 * functions in the init text leave it (ftrace frees their call sites
 * after this notifier).  e probes on the module's events arm here, once
 * its init can no longer fail.
 */
static void kt_module_live(struct kt_probe *p, struct module *mod)
{
	if (p->ops->arm_at_live) {
		/* by MOD:, or without it on the events of a module that went */
		if (p->state != KTRACK_PROBE_ST_ARMED &&
		    (p->module[0] ? !strcmp(p->module, mod->name) :
				    !strcmp(p->gone_module, mod->name)) &&
		    kt_arm(p))
			pr_warn("probe %s: cannot arm on the events of %s\n", p->name, mod->name);
		return;
	}
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
	if (p->state != KTRACK_PROBE_ST_ARMED)
		return;
	if (!p->module[0] && p->ops->leave) {
		if (kt_leave(p, mod, true))
			return;
	} else if (!p->ops->gone || p->ops->gone(p) != KT_IN_ALL) {
		return;
	}
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

int kt_module_notifier_register(void)
{
	return register_module_notifier(&kt_module_nb);
}

void kt_module_notifier_unregister(void)
{
	unregister_module_notifier(&kt_module_nb);
}
