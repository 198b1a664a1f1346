// SPDX-License-Identifier: GPL-2.0
/*
 * objtrace_module.c - the object tracker's hooks and the modules that go.
 *
 * A tracker hooks functions through ftrace filters (the globs of
 * objtrace_hook.c, the address-given groups of objtrace_funcs.c, the
 * destructor of objtrace_free.c), and they may name functions of a module.
 * When the module goes, ftrace drops its call sites but not the addresses
 * in our filters, and it enables a new module's call site when any
 * registered filter holds its address (ftrace_module_enable()): an
 * unrelated module loaded there would run our callback (review 2026-11-27
 * #5; the probes had the same hazard, review #11c, probe_fprobe.c).  So at
 * MODULE_STATE_GOING, before ftrace releases the module, every configured
 * tracker lets go of its functions there:
 *
 *  - an address-given group (KTRACK_OBJF_FUNC_ADDRS) knows its functions:
 *    those in the module leave its filter in place (the group's others stay
 *    hooked, nothing missed); a group all of whose functions are there is
 *    unregistered instead, since an empty filter hooks every function;
 *  - a filter built from names (the globs, the destructor) is ftrace's:
 *    ktrack cannot tell whether taking the module's functions out would
 *    empty it.  So when the module has functions of those names, the
 *    tracker is disabled first (no filter of a registered ops changes), the
 *    functions leave the filters one by one (-ENOENT: not in it), and when
 *    none was in (the module came after OBJ_CONFIG) it is enabled again.
 *
 * A tracker that lost a function is marked gone (ktrack_obj_stats.flags,
 * funcs_gone): ENABLE and ADD_SOURCE are ESTALE until the next OBJ_CONFIG,
 * and DISABLE is ESTALE once the module's going disabled it.  A tracker
 * left with nothing hooked is disabled.  Sources are kprobes: the kprobes
 * core kills those in a going module itself, and they come back by name at
 * the next ENABLE.  Runs under objtrace_mutex (objtrace_main.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": objtrace: " fmt

#include <linux/glob.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "objtrace.h"
#include "compat_probe.h"

/* The functions of a module whose names the tracker's name filters hold. */
struct objtrace_mod_walk {
	struct kt_funcs_walk w;
	const struct objtrace_state *st;
	char **toks;			/* the glob list, split */
	unsigned int nr_toks;
	unsigned long *addrs;		/* found, one per address */
	unsigned int n, max;
};

/* ftrace's glob (filter_parse_regex(); an index is refused at OBJ_CONFIG). */
static bool objtrace_mod_want(struct kt_funcs_walk *w, const char *name)
{
	struct objtrace_mod_walk *m = container_of(w, struct objtrace_mod_walk, w);
	const struct objtrace_state *st = m->st;
	unsigned int i;

	if (st->free_hooks[OBJTRACE_FREE_DTOR].used && !strcmp(name, st->cfg.destructor))
		return true;
	for (i = 0; i < m->nr_toks; i++)
		if (glob_match(m->toks[i], name))
			return true;
	return false;
}

static int objtrace_mod_take(struct kt_funcs_walk *w, const char *name, unsigned long addr,
			     bool init)
{
	struct objtrace_mod_walk *m = container_of(w, struct objtrace_mod_walk, w);
	unsigned int i;

	for (i = 0; i < m->n; i++)
		if (m->addrs[i] == addr)
			return 0;	/* an alias */
	if (m->n == m->max)
		return -E2BIG;
	m->addrs[m->n++] = addr;
	return 0;
}

/*
 * The functions of 'mod' (core and init text) that the glob list or the
 * destructor names, into m->addrs; 0 or -errno.
 */
static int objtrace_mod_find(struct objtrace_mod_walk *m, struct objtrace_state *st,
			     struct module *mod)
{
	char *copy = NULL, *p, *tok;
	int ret;

	*m = (struct objtrace_mod_walk){
		.w = { .text = KT_TEXT_CORE | KT_TEXT_INIT, .want = objtrace_mod_want,
		       .take = objtrace_mod_take },
		.st = st,
		.max = kt_module_nr_ftrace_sites(mod),
	};
	if (!m->max)
		return 0;
	if (st->functions) {
		copy = kstrdup(st->functions, GFP_KERNEL);
		/* at most one token per two bytes ("a b c") */
		m->toks = kmalloc_array(strlen(st->functions) / 2 + 1, sizeof(*m->toks),
					GFP_KERNEL);
		if (!copy || !m->toks) {
			ret = -ENOMEM;
			goto out;
		}
		p = copy;
		while ((tok = strsep(&p, " \t\n,")) != NULL)
			if (*tok)
				m->toks[m->nr_toks++] = tok;
	}
	m->addrs = kmalloc_array(m->max, sizeof(*m->addrs), GFP_KERNEL);
	ret = m->addrs ? kt_module_funcs(mod, &m->w) : -ENOMEM;
out:
	kfree(m->toks);
	m->toks = NULL;
	kfree(copy);
	return ret;
}

/* Take 'ip' out of a name filter of a disabled tracker: 1 when it was in. */
static int objtrace_mod_unhook(struct ftrace_ops *ops, unsigned long ip)
{
	return !ftrace_set_filter_ips(ops, &ip, 1, 1, 0);
}

/*
 * The hooks by name of 'st' on 'mod': the tracker is disabled if the module
 * has functions of those names, and they leave the filters.  Returns how
 * many were hooked, or -errno (the tracker stays disabled).
 */
static int objtrace_mod_names(struct objtrace_state *st, struct module *mod, bool *disabled)
{
	struct ftrace_ops *dtor = &st->free_hooks[OBJTRACE_FREE_DTOR].ops;
	bool has_dtor = st->free_hooks[OBJTRACE_FREE_DTOR].used;
	struct objtrace_mod_walk m;
	unsigned int i;
	int ret, gone = 0;

	if (!st->functions && !has_dtor)
		return 0;
	ret = objtrace_mod_find(&m, st, mod);
	if (ret || m.n) {
		*disabled = st->enabled;
		objtrace_disable(st);
	}
	for (i = 0; !ret && i < m.n; i++) {
		if (st->functions)
			gone += objtrace_mod_unhook(&st->ops, m.addrs[i]);
		if (has_dtor)
			gone += objtrace_mod_unhook(dtor, m.addrs[i]);
	}
	kfree(m.addrs);
	return ret ? ret : gone;
}

/*
 * The address-given groups of 'st' on 'mod': its functions there leave each
 * group's filter in place; a group that would be left empty is unhooked.
 * Returns how many functions went; *live: groups still hooking something.
 */
static unsigned int objtrace_mod_fsets(struct objtrace_state *st, struct module *mod,
				       unsigned int *live)
{
	unsigned int i, j, k, in, gone = 0;
	int ret;

	for (i = 0; i < st->nr_fsets; i++) {
		struct objtrace_fset *fs = &st->fsets[i];

		if (fs->gone)
			continue;
		/* the module's functions to the end of the array */
		for (j = 0, k = fs->nr_ips; j < k;) {
			if (within_module(fs->ips[j], mod)) {
				k--;
				swap(fs->ips[j], fs->ips[k]);
			} else {
				j++;
			}
		}
		in = fs->nr_ips - k;
		gone += in;
		if (!in) {
			*live += 1;
			continue;
		}
		if (k) {
			ret = ftrace_set_filter_ips(&fs->ops, &fs->ips[k], in, 1, 0);
			if (!ret) {
				fs->nr_ips = k;
				*live += 1;
				continue;
			}
			pr_warn("the functions of %s cannot leave a hook (%d): unhooked\n",
				mod->name, ret);
		}
		/* never an empty filter: it would hook every function */
		if (fs->reg)
			unregister_ftrace_function(&fs->ops);
		fs->reg = false;
		fs->gone = true;
	}
	return gone;
}

void objtrace_module_going(struct objtrace_state *st, struct module *mod)
{
	unsigned int live = 0, gone;
	bool disabled = false;
	int ret;

	ret = objtrace_mod_names(st, mod, &disabled);
	if (ret < 0) {
		/* not known whether a hook stays on the module: disabled for good */
		pr_warn("cannot look up the functions of %s (%d): tracker disabled\n",
			mod->name, ret);
		st->module_gone = true;
		return;
	}
	gone = ret + objtrace_mod_fsets(st, mod, &live);
	if (!gone) {
		/* the module's functions of those names came after OBJ_CONFIG */
		if (disabled) {
			ret = objtrace_enable(st);
			if (ret) {
				/* e.g. a source in the module: say why it stopped */
				pr_warn("cannot enable the tracker again (%d)\n", ret);
				st->module_gone = true;
			}
		}
		return;
	}
	st->module_gone = true;
	st->funcs_gone += gone;
	/* nothing hooked any more: sources and free hooks go too */
	if (st->enabled && !st->ops_reg && !live)
		objtrace_disable(st);
}
