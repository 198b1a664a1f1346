// SPDX-License-Identifier: GPL-2.0
/*
 * probe_ftrace.c - f probes over a kernel glob (KTRACK_PROBE_F_KERNEL_GLOB):
 * one ftrace_ops of ktrack's own, whose filter ftrace fills from the glob
 * over every traceable function of the kernel and of its loaded modules.
 * There is no cap on the functions (f * takes them all), and arming or
 * disarming is one filter update and one registration, however many
 * functions: what ftrace's function tracer does.  Entries only: a return
 * hook per call needs fprobe's or kretprobes' state per function
 * (probe_fprobe.c, probe_kprobe.c), which is what the 1,024 cap bounds.
 *
 * The callback gets the argument registers (DYNAMIC_FTRACE_WITH_ARGS, on
 * x86-64 in both kernels); the whole pt_regs (FTRACE_OPS_FL_SAVE_REGS, a
 * slower trampoline) only when a fetch reads a register or the stack.
 * FTRACE_OPS_FL_RECURSION has ftrace guard against recursion (under "*"
 * the handler's own callees are in the filter) and disable preemption;
 * FTRACE_OPS_FL_RCU keeps the callback out of functions where RCU does not
 * watch (the idle loop's), as the handler reads RCU-protected state.
 *
 * Modules: ftrace drops a going module's call sites, not the addresses in
 * our filter.  Such a stale address does nothing until a call site exists
 * there again, which only a module load makes (ftrace_module_enable(),
 * before the COMING notifier).  So at every COMING the filter is made again
 * from the glob (rejoin): the new module's matching functions join (its
 * init functions too), and any stale address of a module or init text that
 * went is dropped, all before the new module's code can run.  An update
 * that fails there disarms the probe rather than leave a stale address
 * live.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "compat_ftrace.h"
#include "probe_internal.h"

static notrace void kt_ftrace_hit(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	struct kt_probe *p = op->private;
	unsigned long args[KTRACK_FETCH_MAX_ARG];
	/* NULL unless FTRACE_OPS_FL_SAVE_REGS: then no fetch needs it */
	struct kt_fetch_ctx ctx = { .regs = ftrace_get_regs(fregs), .args = args };
	unsigned int i;

	for (i = 0; i < KTRACK_FETCH_MAX_ARG; i++)
		args[i] = ktrack_fregs_arg(fregs, i);
	kt_probe_emit(p, &ctx, KTRACK_PROBE_EV_ENTRY, ip, parent_ip);
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

/*
 * "*": no filter at all, which ftrace reads as every function, as its
 * function tracer does: nothing to match (43k kallsyms lookups), and
 * modules that load later are in it without a rejoin.
 */
static bool kt_ftrace_all(const struct kt_probe *p)
{
	return !strcmp(p->func_names[0], "*");
}

/*
 * The filter, made from the glob over the functions that have a call site
 * now (reset: what was there before goes).  -ENOENT when nothing matches,
 * and the filter is left as it was.  ftrace_set_filter() edits its buffer.
 */
static int kt_ftrace_set(struct kt_probe *p, struct ftrace_ops *ops)
{
	char *glob = kstrdup(p->func_names[0], GFP_KERNEL);
	int ret;

	if (!glob)
		return -ENOMEM;
	ret = ftrace_set_filter(ops, glob, strlen(glob), 1);
	kfree(glob);
	return ret == -EINVAL ? -ENOENT : ret;
}

static int kt_ftrace_arm(struct kt_probe *p)
{
	struct ftrace_ops *ops;
	int ret;

	ops = kzalloc(sizeof(*ops), GFP_KERNEL_ACCOUNT);
	if (!ops)
		return -ENOMEM;
	ops->func = kt_ftrace_hit;
	ops->private = p;
	ops->flags = FTRACE_OPS_FL_RECURSION | FTRACE_OPS_FL_RCU;
	if (kt_ftrace_needs_regs(p))
		ops->flags |= FTRACE_OPS_FL_SAVE_REGS;
	ret = kt_ftrace_all(p) ? 0 : kt_ftrace_set(p, ops);
	if (!ret)
		ret = register_ftrace_function(ops);
	if (ret) {
		ftrace_free_filter(ops);
		kfree(ops);
		switch (ret) {
		case -ENOENT:
		case -ENOMEM:
		case -EPERM:
			return ret;
		case -EBUSY:
			return -EBUSY;
		default:
			return -EOPNOTSUPP;
		}
	}
	p->fops = ops;
	return 0;
}

/*
 * unregister_ftrace_function() returns once no callback of the ops runs:
 * for ops that are not the kernel's own (FTRACE_OPS_FL_DYNAMIC) it waits
 * for every task to have left any trampoline.
 */
static void kt_ftrace_disarm(struct kt_probe *p)
{
	struct ftrace_ops *ops = p->fops;

	if (!ops)
		return;
	unregister_ftrace_function(ops);
	ftrace_free_filter(ops);
	kfree(ops);
	p->fops = NULL;
}

/*
 * COMING: the filter made again (see the top of the file).  When nothing
 * matches any more (the glob named only functions of modules that went),
 * the old filter would stay, stale: the probe is disarmed instead, and
 * armed again at a later COMING that brings a match (probe_module.c).
 */
static int kt_ftrace_rejoin(struct kt_probe *p, struct module *mod)
{
	int ret = kt_ftrace_all(p) ? 0 : kt_ftrace_set(p, p->fops);

	if (!ret)
		return 0;
	if (ret != -ENOENT)
		pr_warn("probe %s: cannot follow its glob into module %s (%d): disarmed\n",
			p->name, mod->name, ret);
	kt_disarm(p, KTRACK_PROBE_ST_DISARMED);
	return 0;
}

const struct kt_probe_ops kt_ftrace_glob_ops = {
	.mechanism = KTRACK_MECH_FTRACE_OPS,
	.arm = kt_ftrace_arm,
	.disarm = kt_ftrace_disarm,
	.rejoin = kt_ftrace_rejoin,
};
