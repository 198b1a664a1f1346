// SPDX-License-Identifier: GPL-2.0
/*
 * probe_ftrace.c - f probes over a kernel glob (KTRACK_PROBE_F_KERNEL_GLOB):
 * one ftrace_ops of ktrack's own, whose filter ftrace fills from the glob
 * over every traceable function of the kernel and of its loaded modules.
 * ktrackctl sends an entry-only f on one name this way too, and a p probe
 * at a function's entry (kind KPROBE, the symbol as the glob): per hit one
 * callback with the argument registers, where a kprobe at the ftrace call
 * site saves the whole pt_regs and goes through the kprobes core.
 * There is no cap on the functions (f * takes them all), and arming or
 * disarming is one filter update and one registration, however many
 * functions: what ftrace's function tracer does.  Entries only: a return
 * hook per call needs fprobe's or kretprobes' state per function
 * (probe_fprobe.c, probe_kprobe.c), which is what the 1,024 cap bounds.
 *
 * The callback gets the argument registers (DYNAMIC_FTRACE_WITH_ARGS, on
 * x86-64 in both kernels); the whole pt_regs (FTRACE_OPS_FL_SAVE_REGS, a
 * slower trampoline) only when a fetch reads a register or the stack.
 * The ops has neither FTRACE_OPS_FL_RECURSION nor FTRACE_OPS_FL_RCU, so
 * ftrace's trampoline calls the handler directly, not through
 * ftrace_ops_assist_func() and an indirect call (kprobes' own ftrace
 * handler does the same): the handler disables preemption itself and
 * guards against recursion with a bit per context and CPU, taken before it
 * calls anything traceable.  A traced function that the handler itself
 * calls (a fetch's copy_from_kernel_nofault(), a stack walk) finds the bit
 * taken, and such hits count as missed.  The handler reads RCU-protected
 * state, so a hit where RCU does not watch (the idle loop's functions on
 * 6.1) counts as missed too (FTRACE_OPS_FL_RCU would drop it uncounted).
 * ktrack's own functions are no hits either: under "*" its reader's work
 * would feed its rings.
 *
 * The filter ("*" has none: ftrace then calls the ops for every function,
 * modules that load later included, as for its function tracer):
 *  - An anchor, a ktrack function that is never called, is in it first:
 *    ftrace reads an empty filter as every function, and a filter could
 *    otherwise become empty (ftrace_set_filter() installs what it matched
 *    before an allocation failed, possibly nothing; the functions of the
 *    modules that go leave it).
 *  - ftrace drops a going module's call sites, not the addresses in our
 *    filter, and a later module's text there would hit the probe: at GOING
 *    the module's functions that the glob matches leave the filter (its
 *    init functions at LIVE), and at COMING those of the new module join it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>

#include "compat.h"
#include "compat_ftrace.h"
#include "probe_internal.h"

/* Per CPU, a bit per interrupt context level: the handler runs there. */
static DEFINE_PER_CPU(unsigned int, kt_ftrace_busy);

/* In every filter but "*" (see the top of the file); never called. */
static noinline void kt_ftrace_anchor(void)
{
	barrier();
}

static notrace bool kt_ftrace_own(unsigned long ip)
{
	unsigned long base = (unsigned long)ktrack_module_text(THIS_MODULE);

	return ip - base < ktrack_module_text_size(THIS_MODULE);
}

static notrace void kt_ftrace_hit(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	/* only the first p->nr_args are read: not zeroed (INIT_STACK_ALL_ZERO) */
	unsigned long args[KTRACK_FETCH_MAX_ARG] __uninitialized;
	unsigned int bit = 1U << interrupt_context_level();
	struct kt_fetch_ctx ctx = { .args = args };
	struct kt_probe *p;
	unsigned int i;

	/* before anything traceable: the recursion bit needs it (top of file) */
	preempt_disable_notrace();
	/* NULL: the ops outlived its probe (kt_ftrace_disarm()) */
	p = READ_ONCE(op->private);
	if (unlikely(!p) || kt_ftrace_own(ip))
		goto out;
	if (unlikely(this_cpu_read(kt_ftrace_busy) & bit)) {
		this_cpu_inc(p->stats->missed);
		goto out;
	}
	this_cpu_or(kt_ftrace_busy, bit);
	/* the handler reads RCU-protected state: a hit where RCU does not watch is missed */
	if (unlikely(!rcu_is_watching())) {
		this_cpu_inc(p->stats->missed);
		goto unlock;
	}
	/* only fetches read them (none under a bare "f *") */
	if (p->nr_fetch) {
		/* NULL unless FTRACE_OPS_FL_SAVE_REGS: then no fetch needs it */
		ctx.regs = ftrace_get_regs(fregs);
		for (i = 0; i < p->nr_args; i++)
			args[i] = ktrack_fregs_arg(fregs, i);
	}
	kt_probe_emit(p, &ctx, KTRACK_PROBE_EV_ENTRY, ip, parent_ip);
unlock:
	this_cpu_and(kt_ftrace_busy, ~bit);
out:
	preempt_enable_notrace();
}
NOKPROBE_SYMBOL(kt_ftrace_hit);

/* Does a fetch read a register other than an argument, or the stack? */
static bool kt_ftrace_needs_regs(const struct kt_probe *p)
{
	u16 i;

	for (i = 0; i < p->nr_fetch; i++)
		if (p->fetch[i].src == KTRACK_FETCH_SRC_REG ||
		    p->fetch[i].src == KTRACK_FETCH_SRC_STACK)
			return true;
	return false;
}

static bool kt_ftrace_all(const struct kt_probe *p)
{
	return !strcmp(p->func_names[0], "*");
}

/*
 * The filter: the anchor, then the glob over the functions that have a
 * call site now.  -ENOENT when the glob matches nothing.  ftrace_set_filter()
 * edits its buffer: it gets a copy.
 */
static int kt_ftrace_filter(struct kt_probe *p, struct ftrace_ops *ops)
{
	char *glob;
	int ret;

	ret = ftrace_set_filter_ip(ops, (unsigned long)kt_ftrace_anchor, 0, 1);
	if (ret)
		return ret;
	glob = kstrdup(p->func_names[0], GFP_KERNEL);
	if (!glob)
		return -ENOMEM;
	ret = ftrace_set_filter(ops, glob, strlen(glob), 0);
	kfree(glob);
	return ret == -EINVAL ? -ENOENT : ret;
}

static int kt_ftrace_arm(struct kt_probe *p)
{
	struct ftrace_ops *ops;
	int ret;

	/* the handler reads the argument registers ftrace saves with it */
	if (!IS_ENABLED(CONFIG_DYNAMIC_FTRACE_WITH_ARGS))
		return -EOPNOTSUPP;
	ops = kzalloc(sizeof(*ops), GFP_KERNEL_ACCOUNT);
	if (!ops)
		return -ENOMEM;
	ops->func = kt_ftrace_hit;
	/* ops->private stays NULL until registered: see kt_ftrace_disarm() */
	/* no FTRACE_OPS_FL_RECURSION: the handler guards itself (top of file) */
	if (kt_ftrace_needs_regs(p))
		ops->flags |= FTRACE_OPS_FL_SAVE_REGS;
	ret = kt_ftrace_all(p) ? 0 : kt_ftrace_filter(p, ops);
	if (!ret)
		ret = register_ftrace_function(ops);
	if (ret) {
		ftrace_free_filter(ops);
		kfree(ops);
		switch (ret) {
		case -ENOENT:
		case -ENOMEM:
		case -EPERM:
		case -EBUSY:
			return ret;
		default:
			return -EOPNOTSUPP;
		}
	}
	WRITE_ONCE(ops->private, p);
	p->fops = ops;
	return 0;
}

/*
 * The ops has no private (the handler returns at once) while ftrace patches
 * the call sites in and out, as ftrace's function tracer does with its
 * function_enabled: under "f *" every function the patching itself calls
 * would otherwise be recorded, which made arming 1.6x and disarming 1.3x
 * slower than the function tracer's (2026-11-29, 6.12 under TCG; now the
 * same).  A hit in those moments is not the probe's: it is armed once
 * register_ftrace_function() has returned.
 *
 * unregister_ftrace_function() returns once no callback of the ops runs:
 * for ops that are not the kernel's own (FTRACE_OPS_FL_DYNAMIC) it waits
 * for every task to have left any trampoline.  It fails only when ftrace
 * has shut itself down after a bug (ftrace_disabled): the call sites then
 * keep calling the ops, which is kept for good, with this module, and let
 * go of the probe (the handler reads its private under preemption off).
 */
static void kt_ftrace_disarm(struct kt_probe *p)
{
	struct ftrace_ops *ops = p->fops;

	if (!ops)
		return;
	p->fops = NULL;
	WRITE_ONCE(ops->private, NULL);
	if (unregister_ftrace_function(ops)) {
		synchronize_rcu();
		__module_get(THIS_MODULE);
		pr_err("probe %s: ftrace cannot take its ftrace_ops back: kept, with ktrack\n",
		       p->name);
		return;
	}
	ftrace_free_filter(ops);
	kfree(ops);
}

/* A module's functions that the glob matches (kt_module_funcs()). */
struct kt_fg_walk {
	struct kt_funcs_walk w;
	const char *glob;
	unsigned long *ips;	/* NULL: count only */
	u32 n;
};

static bool kt_fg_want(struct kt_funcs_walk *w, const char *name)
{
	const struct kt_fg_walk *g = container_of(w, struct kt_fg_walk, w);

	return kt_glob(g->glob, name, strlen(name));
}

static int kt_fg_take(struct kt_funcs_walk *w, const char *name, unsigned long addr, bool init)
{
	struct kt_fg_walk *g = container_of(w, struct kt_fg_walk, w);

	if (g->ips)
		g->ips[g->n] = addr;
	g->n++;
	return 0;
}

static int kt_ulong_cmp(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/*
 * The functions of 'mod' in 'text' (KT_TEXT_*) that the glob matches join
 * the filter, or leave it, in one update; should that fail, one update
 * each, a function not in the filter (-ENOENT in removing: an alias ftrace
 * named otherwise) skipped.  0 or -errno.
 */
static int kt_ftrace_edit(struct kt_probe *p, struct module *mod, unsigned int text, bool remove)
{
	struct kt_fg_walk g = {
		.w = { .text = text, .want = kt_fg_want, .take = kt_fg_take },
		.glob = p->func_names[0],
	};
	u32 i, n;
	int ret, err;

	/* counted first: the walk runs where nothing may sleep */
	kt_module_funcs(mod, &g.w);
	if (!g.n)
		return 0;
	g.ips = kmalloc_array(g.n, sizeof(*g.ips), GFP_KERNEL);
	if (!g.ips)
		return -ENOMEM;
	n = g.n;
	g.n = 0;
	kt_module_funcs(mod, &g.w);
	g.n = min(g.n, n);
	/* one entry per address (aliases share one) */
	sort(g.ips, g.n, sizeof(*g.ips), kt_ulong_cmp, NULL);
	for (i = n = 0; i < g.n; i++)
		if (!n || g.ips[n - 1] != g.ips[i])
			g.ips[n++] = g.ips[i];
	ret = ftrace_set_filter_ips(p->fops, g.ips, n, remove, 0);
	if (ret) {
		ret = 0;
		for (i = 0; i < n; i++) {
			err = ftrace_set_filter_ips(p->fops, &g.ips[i], 1, remove, 0);
			if (err && !(remove && err == -ENOENT) && !ret)
				ret = err;
		}
	}
	kfree(g.ips);
	return ret;
}

/*
 * GOING (all of the module's text) or LIVE (its init text, about to be
 * freed): the module's functions leave the filter.  The anchor stays, so
 * the filter never becomes empty: KT_IN_NONE, or -errno (the caller
 * disarms: a stale address must not stay).
 */
static int kt_ftrace_leave(struct kt_probe *p, struct module *mod, bool init_only)
{
	unsigned int text = init_only ? KT_TEXT_INIT : KT_TEXT_CORE | KT_TEXT_INIT;
	int ret;

	if (kt_ftrace_all(p))
		return KT_IN_NONE;
	/*
	 * p: its one function goes with the module: the caller disarms it,
	 * as a kprobe's, and arms it again when that module comes back
	 */
	if (p->kind == KTRACK_PROBE_KPROBE) {
		struct kt_fg_walk g = {
			.w = { .text = text, .want = kt_fg_want, .take = kt_fg_take },
			.glob = p->func_names[0],
		};

		kt_module_funcs(mod, &g.w);
		return g.n ? KT_IN_ALL : KT_IN_NONE;
	}
	ret = kt_ftrace_edit(p, mod, text, true);
	return ret ? ret : KT_IN_NONE;
}

/*
 * COMING, before the module's code can run: its functions that the glob
 * matches (init functions too: they leave at LIVE) join the filter.  Under
 * lockdown, or when they cannot, the probe is disarmed rather than
 * follow the glob halfway.
 */
static int kt_ftrace_rejoin(struct kt_probe *p, struct module *mod)
{
	int ret = 0;

	/* p is one function, not a name to follow into other modules */
	if (p->kind == KTRACK_PROBE_KPROBE)
		return 0;
	if (kt_locked_down(p))
		ret = -EPERM;
	else if (!kt_ftrace_all(p))
		ret = kt_ftrace_edit(p, mod, KT_TEXT_CORE | KT_TEXT_INIT, false);
	if (!ret)
		return 0;
	pr_warn("probe %s: cannot follow its glob into module %s (%d): disarmed\n", p->name,
		mod->name, ret);
	kt_disarm(p, KTRACK_PROBE_ST_DISARMED);
	return 0;
}

const struct kt_probe_ops kt_ftrace_glob_ops = {
	.mechanism = KTRACK_MECH_FTRACE_OPS,
	.arm = kt_ftrace_arm,
	.disarm = kt_ftrace_disarm,
	.leave = kt_ftrace_leave,
	.rejoin = kt_ftrace_rejoin,
};
