// SPDX-License-Identifier: GPL-2.0
/*
 * probe_fprobe.c - f probes through one fprobe over all their functions
 * (kernels with CONFIG_FPROBE).  Entry data carries the entry time and the
 * arguments to the exit handler, for $duration and $argN on exits.
 *
 * An f probe by name may cover functions of vmlinux and of modules.  When
 * a module goes, ftrace drops its call sites but not the addresses in our
 * fprobe's filter, and ftrace enables a new module's call site when any
 * filter holds its address (ftrace_module_enable()): an unrelated module
 * loaded there would hit the probe.  So the probe's functions in a going
 * module leave its filter (and those in init text when the module goes
 * LIVE), the others staying attached, and come back into the live filter
 * when a module with those functions comes: no unregister and register,
 * which would miss hits on the other functions.  The filter never becomes
 * empty (ftrace would trace every function): a probe all of whose
 * functions go is disarmed instead (probe_module.c).
 */
#include <linux/bitmap.h>
#include <linux/bsearch.h>
#include <linux/fprobe.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "compat_probe.h"
#include "probe_internal.h"

static notrace int kt_fp_entry_impl(struct fprobe *fp, unsigned long entry_ip,
				    unsigned long ret_ip, struct pt_regs *regs,
				    void *entry_data)
{
	struct kt_probe *p = container_of(fp, struct kt_probe, fp);
	struct kt_entry_data local, *d = entry_data;

	/*
	 * fprobe allocates entry data only along with a return hook, i.e. when
	 * there is an exit handler: an entry-only probe gets NULL, so its
	 * arguments live on this stack for this hit.
	 */
	if (!d)
		d = &local;
	kt_entry_save(d, regs);
	if (p->flags & KTRACK_PROBE_F_ENTRY) {
		struct kt_fetch_ctx ctx = { .regs = regs, .args = d->args };

		kt_probe_emit(p, &ctx, KTRACK_PROBE_EV_ENTRY, entry_ip, ret_ip);
	}
	return 0;
}
NOKPROBE_SYMBOL(kt_fp_entry_impl);

static notrace void kt_fp_exit_impl(struct fprobe *fp, unsigned long entry_ip,
				    unsigned long ret_ip, struct pt_regs *regs,
				    void *entry_data)
{
	struct kt_probe *p = container_of(fp, struct kt_probe, fp);

	kt_probe_emit_exit(p, regs, entry_data, entry_ip, ret_ip);
}
NOKPROBE_SYMBOL(kt_fp_exit_impl);

KT_DEFINE_FPROBE_ENTRY(kt_fp_entry, kt_fp_entry_impl)
NOKPROBE_SYMBOL(kt_fp_entry);
KT_DEFINE_FPROBE_EXIT(kt_fp_exit, kt_fp_exit_impl)
NOKPROBE_SYMBOL(kt_fp_exit);

static int kt_name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int kt_fprobe_arm(struct kt_probe *p)
{
	int ret;

	/*
	 * By name: sorted, for kt_fp_want()'s bsearch (register_fprobe_syms()
	 * sorts them the same way, in place); all of them attached.
	 */
	if (!p->func_addrs)
		sort(p->func_names, p->nr_funcs, sizeof(*p->func_names), kt_name_cmp, NULL);
	bitmap_free(p->funcs_left);
	p->funcs_left = NULL;
	p->nr_left = 0;
	memset(&p->fp, 0, sizeof(p->fp));
	p->fp.entry_handler = kt_fp_entry;
	/* nr_maxactive 0: fprobe's default pool (no maxactive on f probes) */
	if (p->flags & KTRACK_PROBE_F_EXIT)
		p->fp.exit_handler = kt_fp_exit;
	p->fp.entry_data_size = sizeof(struct kt_entry_data);
	if (p->func_addrs)	/* f MOD:GLOB: resolved in the module */
		ret = register_fprobe_ips(&p->fp, p->func_addrs, p->nr_funcs);
	else
		ret = register_fprobe_syms(&p->fp, p->func_names, p->nr_funcs);
	switch (ret) {
	case 0:
	case -ENOENT:
	case -ENOMEM:
	case -EPERM:
		return ret;
	case -EBUSY:
	case -EEXIST:
		return -EBUSY;
	case -EINVAL:	/* an address ftrace does not know */
		return p->func_addrs ? -EOPNOTSUPP : -EINVAL;
	default:
		return -EOPNOTSUPP;
	}
}

static void kt_fprobe_disarm(struct kt_probe *p)
{
	unregister_fprobe(&p->fp);
	bitmap_free(p->funcs_left);
	p->funcs_left = NULL;
	p->nr_left = 0;
}

static u64 kt_fprobe_missed(struct kt_probe *p)
{
	return p->fp.nmissed;
}

static bool kt_fp_is_left(const struct kt_probe *p, u32 i)
{
	return p->funcs_left && test_bit(i, p->funcs_left);
}

/*
 * A walk over a module's functions (kt_module_funcs()) for the probe's
 * names: addrs[i] gets the function of the module named func_names[i],
 * for the attach points that left ('left') or those attached (not 'left').
 */
struct kt_fp_walk {
	struct kt_funcs_walk w;
	struct kt_probe *p;
	bool left;
	unsigned long *addrs;	/* per name; 0: not in the module */
	u32 idx;		/* of the name want() last said yes to */
	u32 found;		/* names with an address */
};

static bool kt_fp_want(struct kt_funcs_walk *w, const char *name)
{
	struct kt_fp_walk *f = container_of(w, struct kt_fp_walk, w);
	struct kt_probe *p = f->p;
	const char **s;
	u32 i;

	s = bsearch(&name, p->func_names, p->nr_funcs, sizeof(*s), kt_name_cmp);
	if (!s)
		return false;
	i = s - p->func_names;
	/* the first symbol of that name that ftrace can attach to */
	if (f->addrs[i] || kt_fp_is_left(p, i) != f->left)
		return false;
	f->idx = i;
	return true;
}

static int kt_fp_take(struct kt_funcs_walk *w, const char *name, unsigned long addr, bool init)
{
	struct kt_fp_walk *f = container_of(w, struct kt_fp_walk, w);

	f->addrs[f->idx] = addr;
	f->found++;
	return 0;
}

/* Find the probe's names in 'mod' (see struct kt_fp_walk); 0 or -ENOMEM. */
static int kt_fp_find(struct kt_fp_walk *f, struct kt_probe *p, struct module *mod,
		      unsigned int text, bool left)
{
	*f = (struct kt_fp_walk){
		.w = { .text = text, .want = kt_fp_want, .take = kt_fp_take },
		.p = p,
		.left = left,
	};
	f->addrs = kcalloc(p->nr_funcs, sizeof(*f->addrs), GFP_KERNEL);
	if (!f->addrs)
		return -ENOMEM;
	return kt_module_funcs(mod, &f->w);
}

/*
 * Add the functions found (addrs[i] != 0) to the live fprobe's filter, or
 * remove them, in one update.  Should that fail, one update each: in
 * removing, -ENOENT says the fprobe has that name's function elsewhere (a
 * name in vmlinux, or in a module loaded earlier, as well as in this
 * module: ftrace_lookup_symbols() took the first).  On return addrs[i] is
 * still set for the names done, zeroed for the others.  0, or the first
 * error other than that -ENOENT.
 */
static int kt_fp_filter(struct kt_probe *p, unsigned long *addrs, bool remove)
{
	unsigned long *ips;
	u32 i, j, n = 0;
	int ret = 0, err;

	ips = kmalloc_array(p->nr_funcs, sizeof(*ips), GFP_KERNEL);
	if (!ips) {
		memset(addrs, 0, p->nr_funcs * sizeof(*addrs));
		return -ENOMEM;
	}
	/* one entry per address (aliases share one) */
	for (i = 0; i < p->nr_funcs; i++) {
		if (!addrs[i])
			continue;
		for (j = 0; j < n && ips[j] != addrs[i]; j++)
			;
		if (j == n)
			ips[n++] = addrs[i];
	}
	if (n && kt_fprobe_filter_ips(&p->fp, ips, n, remove)) {
		for (j = 0; j < n; j++) {
			err = kt_fprobe_filter_ips(&p->fp, &ips[j], 1, remove);
			if (!err)
				continue;
			if (!ret && !(remove && err == -ENOENT))
				ret = err;
			for (i = 0; i < p->nr_funcs; i++)
				if (addrs[i] == ips[j])
					addrs[i] = 0;
		}
	}
	kfree(ips);
	return ret;
}

/*
 * GOING (all of the module's text) or LIVE (its init text, about to be
 * freed): the attached functions there leave the filter (see the top of
 * the file).  Every attached function found there: KT_IN_ALL, and nothing
 * done, since the filter must not become empty; the caller disarms (a name
 * found there may have its function elsewhere: it comes back when the
 * probe is armed again, by name).  Otherwise a function attached elsewhere
 * is left in the filter, and the update cannot empty it.
 */
static int kt_fprobe_leave(struct kt_probe *p, struct module *mod, bool init_only)
{
	struct kt_fp_walk f;
	u32 i, n = 0;
	int ret;

	ret = kt_fp_find(&f, p, mod, init_only ? KT_TEXT_INIT : KT_TEXT_CORE | KT_TEXT_INIT,
			 false);
	if (ret)
		goto out;
	if (!f.found || f.found == p->nr_funcs - p->nr_left) {
		ret = f.found ? KT_IN_ALL : KT_IN_NONE;
		goto out;
	}
	if (!p->funcs_left) {
		p->funcs_left = bitmap_zalloc(p->nr_funcs, GFP_KERNEL);
		if (!p->funcs_left) {
			ret = -ENOMEM;
			goto out;
		}
	}
	/* an error leaves a function in the filter: the caller disarms */
	ret = kt_fp_filter(p, f.addrs, true);
	for (i = 0; i < p->nr_funcs; i++) {
		if (!f.addrs[i])
			continue;
		set_bit(i, p->funcs_left);
		n++;
	}
	p->nr_left += n;
	if (!ret)
		ret = n ? KT_IN_SOME : KT_IN_NONE;
out:
	kfree(f.addrs);
	return ret;
}

/*
 * COMING: the functions that left, found in this module (its init text
 * too: they leave again at LIVE), rejoin the live filter.  Found in the
 * module that took them away or in another: the probe names functions,
 * wherever they are, as register_fprobe_syms() does.
 */
static int kt_fprobe_rejoin(struct kt_probe *p, struct module *mod)
{
	struct kt_fp_walk f;
	u32 i;
	int ret;

	if (!p->nr_left)
		return 0;
	ret = kt_fp_find(&f, p, mod, KT_TEXT_CORE | KT_TEXT_INIT, true);
	if (!ret && f.found)
		ret = kt_fp_filter(p, f.addrs, false);
	for (i = 0; f.addrs && i < p->nr_funcs; i++) {
		if (!f.addrs[i])
			continue;
		clear_bit(i, p->funcs_left);
		p->nr_left--;
	}
	kfree(f.addrs);
	return ret;
}

/*
 * ftrace drops a going module's call sites, not our filter's addresses in
 * it: leave and rejoin follow the module (f MOD:GLOB is disarmed and
 * armed again instead, probe_module.c).
 */
const struct kt_probe_ops kt_fprobe_ops = {
	.mechanism = KTRACK_MECH_FPROBE,
	.arm = kt_fprobe_arm,
	.disarm = kt_fprobe_disarm,
	.missed = kt_fprobe_missed,
	.leave = kt_fprobe_leave,
	.rejoin = kt_fprobe_rejoin,
};
