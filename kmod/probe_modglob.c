// SPDX-License-Identifier: GPL-2.0
/*
 * probe_modglob.c - f probes on MOD:GLOB[,GLOB...]: the globs travel to the
 * kernel and are matched here against one module's own function symbols,
 * so that a probe can wait for a module that is not loaded yet and arm at
 * MODULE_STATE_COMING, before its init function runs.
 *
 * At COMING, mod->kallsyms is the loader's full copy: the functions of the
 * init text (.init.text) are there, and the probe attaches to them too.
 * At LIVE (probe_module.c) the probe is armed again on the core functions only:
 * the init text is about to be freed.  The symbol table is read under
 * rcu_read_lock_sched(), as kallsyms reads it (the pointer switches to the
 * core copy after init, and the init copy is freed after a grace period).
 *
 * A function is taken when its name matches one of the globs (kt_glob(),
 * the filter's glob), it is text of the module (core, or init when asked),
 * and ftrace has a call site in it (the module's __mcount_loc): that skips
 * what neither fprobe nor a kprobe on the ftrace site can attach to
 * (notrace functions, __pfx_ padding, .cold parts).  Aliases (init_module
 * and its function) are one function: one attach point per address.
 *
 * The walk over a module's functions (kt_module_funcs()) also serves the
 * f probes by name on fprobe (probe_fprobe.c), whose functions leave with
 * their module and come back with it.
 */
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "compat.h"
#include "compat_probe.h"
#include "probe_internal.h"

/*
 * The module of that name, with a reference on its kobject (which keeps
 * the struct module from being freed, not from going), or NULL.
 * find_module() is not exported; every module has a kobject in the
 * "module" kset.  Built-in code with parameters has one too, with no
 * module behind it.
 */
struct module *kt_module_get(const char *name)
{
	struct kobject *kobj = kset_find_obj(THIS_MODULE->mkobj.kobj.kset, name);
	struct module *mod;

	if (!kobj)
		return NULL;
	mod = container_of(kobj, struct module_kobject, kobj)->mod;
	if (!mod) {
		kobject_put(kobj);
		return NULL;
	}
	return mod;
}

void kt_module_put(struct module *mod)
{
	kobject_put(&mod->mkobj.kobj);
}

static bool kt_in(unsigned long addr, const void *base, unsigned int size)
{
	return addr >= (unsigned long)base && addr - (unsigned long)base < size;
}

/* Has ftrace a call site in [addr, end)? */
static bool kt_ftrace_site(const struct module *mod, unsigned long addr, unsigned long end)
{
	const unsigned long *sites = kt_module_ftrace_sites(mod);
	unsigned int i, n = kt_module_nr_ftrace_sites(mod);

	for (i = 0; i < n; i++)
		if (sites[i] >= addr && sites[i] < end)
			return true;
	return false;
}

/*
 * Walk the functions of 'mod' that ftrace can attach to, for 'w': text
 * symbols of its core text (KT_TEXT_CORE) and/or of its init text
 * (KT_TEXT_INIT) that w->want() asks for and that have an ftrace call site
 * (the module's __mcount_loc), which skips what neither fprobe nor a
 * kprobe on the ftrace site can attach to (notrace functions, __pfx_
 * padding, .cold parts); w->take() gets each.  The symbol table is read
 * under rcu_read_lock_sched(): the callbacks must not sleep.  A nonzero
 * return of take() ends the walk and is returned.
 */
int kt_module_funcs(struct module *mod, struct kt_funcs_walk *w)
{
	const struct mod_kallsyms *ks;
	unsigned int i;
	int ret = 0;

	rcu_read_lock_sched();
	ks = rcu_dereference_sched(mod->kallsyms);
	for (i = 0; !ret && ks && i < ks->num_symtab; i++) {
		const Elf_Sym *sym = &ks->symtab[i];
		const char *name = &ks->strtab[sym->st_name];
		unsigned long a = sym->st_value;
		bool init;

		if (!strchr("tTwW", ks->typetab[i]) || !*name)
			continue;
		init = kt_in(a, ktrack_module_init_text(mod), ktrack_module_init_text_size(mod));
		if (init ? !(w->text & KT_TEXT_INIT) :
		    (!(w->text & KT_TEXT_CORE) ||
		     !kt_in(a, ktrack_module_text(mod), ktrack_module_text_size(mod))))
			continue;
		if (!w->want(w, name) ||
		    !kt_ftrace_site(mod, a, a + max_t(unsigned long, sym->st_size, 1)))
			continue;
		ret = w->take(w, name, a, init);
	}
	rcu_read_unlock_sched();
	return ret;
}

/* kt_module_has_funcs()'s walk: any function of those names? */
struct kt_names_walk {
	struct kt_funcs_walk w;
	const char *const *names;
	u32 n;
};

static bool kt_names_want(struct kt_funcs_walk *w, const char *name)
{
	const struct kt_names_walk *nw = container_of(w, struct kt_names_walk, w);
	u32 i;

	for (i = 0; i < nw->n; i++)
		if (!strcmp(nw->names[i], name))
			return true;
	return false;
}

static int kt_names_take(struct kt_funcs_walk *w, const char *name, unsigned long addr,
			 bool init)
{
	return 1;
}

/* Has 'mod' a function (core or init) of one of those 'n' names? */
bool kt_module_has_funcs(struct module *mod, const char *const *names, u32 n)
{
	struct kt_names_walk nw = {
		.w = {
			.text = KT_TEXT_CORE | KT_TEXT_INIT,
			.want = kt_names_want,
			.take = kt_names_take,
		},
		.names = names,
		.n = n,
	};

	return kt_module_funcs(mod, &nw.w) > 0;
}

/* kt_modglob_resolve()'s walk: the functions p's globs match. */
struct kt_modglob_walk {
	struct kt_funcs_walk w;
	struct kt_probe *p;
	unsigned long *addrs;
	u32 n;
	u32 ninit;
};

static bool kt_modglob_want(struct kt_funcs_walk *w, const char *name)
{
	const struct kt_probe *p = container_of(w, struct kt_modglob_walk, w)->p;
	u32 i, len = strlen(name);

	for (i = 0; i < p->nr_globs; i++)
		if (kt_glob(p->func_names[i], name, len))
			return true;
	return false;
}

static int kt_modglob_take(struct kt_funcs_walk *w, const char *name, unsigned long addr,
			   bool init)
{
	struct kt_modglob_walk *g = container_of(w, struct kt_modglob_walk, w);
	u32 j;

	for (j = 0; j < g->n && g->addrs[j] != addr; j++)
		;
	if (j < g->n)
		return 0;
	if (g->n == KTRACK_PROBE_MAX_FUNCS)
		return -E2BIG;
	g->addrs[g->n++] = addr;
	g->ninit += init;
	return 0;
}

/*
 * Match p's globs against the functions of 'mod' (its init text too when
 * 'with_init'), into p->func_addrs / p->nr_funcs / p->nr_init_funcs.
 * Returns 0, -ENOENT when nothing matches, -E2BIG beyond
 * KTRACK_PROBE_MAX_FUNCS, -ENOMEM.  Process context, kt_probe_lock held.
 */
int kt_modglob_resolve(struct kt_probe *p, struct module *mod, bool with_init)
{
	struct kt_modglob_walk g = {
		.w = {
			.text = KT_TEXT_CORE | (with_init ? KT_TEXT_INIT : 0),
			.want = kt_modglob_want,
			.take = kt_modglob_take,
		},
		.p = p,
	};
	int ret;

	kt_modglob_release(p);
	g.addrs = kmalloc_array(KTRACK_PROBE_MAX_FUNCS, sizeof(*g.addrs), GFP_KERNEL);
	if (!g.addrs)
		return -ENOMEM;
	ret = kt_module_funcs(mod, &g.w);
	if (!ret && !g.n)
		ret = -ENOENT;
	if (ret) {
		kfree(g.addrs);
		return ret;
	}
	p->func_addrs = g.addrs;
	p->nr_funcs = g.n;
	p->nr_init_funcs = g.ninit;
	return 0;
}

/* Forget the functions of the last match (after disarm). */
void kt_modglob_release(struct kt_probe *p)
{
	kfree(p->func_addrs);
	p->func_addrs = NULL;
	if (p->mod_glob) {
		p->nr_funcs = 0;
		p->nr_init_funcs = 0;
	}
}
