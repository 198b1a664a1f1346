// SPDX-License-Identifier: GPL-2.0
/*
 * probe_modglob.c - f probes on MOD:GLOB[,GLOB...]: the globs travel to the
 * kernel and are matched here against one module's own function symbols,
 * so that a probe can wait for a module that is not loaded yet and arm at
 * MODULE_STATE_COMING, before its init function runs.
 *
 * At COMING, mod->kallsyms is the loader's full copy: the functions of the
 * init text (.init.text) are there, and the probe attaches to them too.
 * At LIVE (probe.c) the probe is armed again on the core functions only:
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

static bool kt_globs_match(const struct kt_probe *p, const char *name)
{
	u32 i, len = strlen(name);

	for (i = 0; i < p->nr_globs; i++)
		if (kt_glob(p->func_names[i], name, len))
			return true;
	return false;
}

/*
 * Match p's globs against the functions of 'mod' (its init text too when
 * 'with_init'), into p->func_addrs / p->nr_funcs / p->nr_init_funcs.
 * Returns 0, -ENOENT when nothing matches, -E2BIG beyond
 * KTRACK_PROBE_MAX_FUNCS, -ENOMEM.  Process context, kt_probe_lock held.
 */
int kt_modglob_resolve(struct kt_probe *p, struct module *mod, bool with_init)
{
	const struct mod_kallsyms *ks;
	unsigned long *addrs;
	u32 n = 0, ninit = 0, i, j;
	int ret = 0;

	kt_modglob_release(p);
	addrs = kmalloc_array(KTRACK_PROBE_MAX_FUNCS, sizeof(*addrs), GFP_KERNEL);
	if (!addrs)
		return -ENOMEM;
	rcu_read_lock_sched();
	ks = rcu_dereference_sched(mod->kallsyms);
	for (i = 0; ks && i < ks->num_symtab; i++) {
		const Elf_Sym *sym = &ks->symtab[i];
		const char *name = &ks->strtab[sym->st_name];
		unsigned long a = sym->st_value;
		bool init;

		if (!strchr("tTwW", ks->typetab[i]) || !*name)
			continue;
		init = kt_in(a, ktrack_module_init_text(mod), ktrack_module_init_text_size(mod));
		if (init ? !with_init :
		    !kt_in(a, ktrack_module_text(mod), ktrack_module_text_size(mod)))
			continue;
		if (!kt_globs_match(p, name) ||
		    !kt_ftrace_site(mod, a, a + max_t(unsigned long, sym->st_size, 1)))
			continue;
		for (j = 0; j < n && addrs[j] != a; j++)
			;
		if (j < n)
			continue;
		if (n == KTRACK_PROBE_MAX_FUNCS) {
			ret = -E2BIG;
			break;
		}
		addrs[n++] = a;
		ninit += init;
	}
	rcu_read_unlock_sched();
	if (!ret && !n)
		ret = -ENOENT;
	if (ret) {
		kfree(addrs);
		return ret;
	}
	p->func_addrs = addrs;
	p->nr_funcs = n;
	p->nr_init_funcs = ninit;
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
