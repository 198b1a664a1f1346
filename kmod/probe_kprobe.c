// SPDX-License-Identifier: GPL-2.0
/*
 * probe_kprobe.c - attach with kprobes and kretprobes: p probes (one
 * kprobe), r probes (one kretprobe), and f probes where the kernel has no
 * fprobe (a kprobe per function for entries - placed on the ftrace call
 * site by KPROBES_ON_FTRACE - and a kretprobe per function for exits).
 */
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "compat_probe.h"
#include "probe_internal.h"

static notrace int kt_kp_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct kt_func *fn = container_of(kp, struct kt_func, kp);
	struct kt_probe *p = fn->probe;
	/* only the first p->nr_args are read: not zeroed (INIT_STACK_ALL_ZERO) */
	unsigned long args[KTRACK_FETCH_MAX_ARG] __uninitialized;
	struct kt_fetch_ctx ctx = { .regs = regs, .args = args };
	u64 parent = 0;
	unsigned int i;

	for (i = 0; i < p->nr_args; i++)
		args[i] = regs_get_kernel_argument(regs, i);
	/* at a function's first byte the return address is on top of stack */
	if (!p->offset)
		parent = regs_get_kernel_stack_nth(regs, 0);
	kt_probe_emit(p, &ctx, KTRACK_PROBE_EV_ENTRY, (unsigned long)kp->addr, parent);
	return 0;
}
NOKPROBE_SYMBOL(kt_kp_pre);

static notrace int kt_rp_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct kt_func *fn = container_of(rp, struct kt_func, rp);
	struct kt_probe *p = fn->probe;
	struct kt_entry_data *d = (struct kt_entry_data *)ri->data;

	kt_entry_save(d, regs);
	/* f probes on both edges: the entry record comes from here */
	if (p->kind == KTRACK_PROBE_FUNCS && (p->flags & KTRACK_PROBE_F_ENTRY)) {
		struct kt_fetch_ctx ctx = { .regs = regs, .args = d->args };

		kt_probe_emit(p, &ctx, KTRACK_PROBE_EV_ENTRY, (unsigned long)rp->kp.addr,
			      regs_get_kernel_stack_nth(regs, 0));
	}
	return 0;
}
NOKPROBE_SYMBOL(kt_rp_entry);

static notrace int kt_rp_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct kretprobe *rp = get_kretprobe(ri);
	struct kt_func *fn = container_of(rp, struct kt_func, rp);
	struct kt_entry_data *d = (struct kt_entry_data *)ri->data;

	kt_probe_emit_exit(fn->probe, regs, d, (unsigned long)rp->kp.addr,
			   kt_kretprobe_retaddr(ri));
	return 0;
}
NOKPROBE_SYMBOL(kt_rp_ret);

/* Map kprobe registration errors to what the user should be told. */
static int kt_kprobe_errno(int ret)
{
	switch (ret) {
	case -ENOENT:		/* no such symbol */
	case -EADDRNOTAVAIL:
	case -EPERM:
	case -ENOMEM:
		return ret;
	case -EEXIST:
	case -EBUSY:
		return -EBUSY;
	default:		/* -EINVAL, -EILSEQ: blacklisted, notrace, mid-insn */
		return -EOPNOTSUPP;
	}
}

/* Free the arrays arm allocated (the name string is the caller's). */
static void kt_kprobe_free(struct kt_probe *p)
{
	kfree(p->funcs);
	kfree(p->kps);
	kfree(p->rps);
	p->funcs = NULL;
	p->kps = NULL;
	p->rps = NULL;
}

static int kt_kprobe_arm(struct kt_probe *p)
{
	bool entry = p->kind == KTRACK_PROBE_KPROBE ||
		     (p->kind == KTRACK_PROBE_FUNCS &&
		      (p->flags & (KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_EXIT)) == KTRACK_PROBE_F_ENTRY);
	char *names = NULL;
	u32 i;
	int ret;

	p->funcs = kcalloc(p->nr_funcs, sizeof(*p->funcs), GFP_KERNEL_ACCOUNT);
	if (entry)
		p->kps = kcalloc(p->nr_funcs, sizeof(*p->kps), GFP_KERNEL_ACCOUNT);
	else
		p->rps = kcalloc(p->nr_funcs, sizeof(*p->rps), GFP_KERNEL_ACCOUNT);
	/* "MOD:SYM" for kallsyms when a module is named */
	if (p->module[0] && p->kind != KTRACK_PROBE_FUNCS)
		names = kasprintf(GFP_KERNEL, "%s:%s", p->module, p->symbol);
	if (!p->funcs || (entry ? !p->kps : !p->rps) || (p->module[0] && !names &&
							  p->kind != KTRACK_PROBE_FUNCS)) {
		ret = -ENOMEM;
		goto err;
	}
	for (i = 0; i < p->nr_funcs; i++) {
		struct kt_func *fn = &p->funcs[i];
		struct kprobe *kp = entry ? &fn->kp : &fn->rp.kp;

		fn->probe = p;
		if (p->func_addrs)	/* f MOD:GLOB: resolved in the module */
			fn->name = NULL;
		else if (p->kind == KTRACK_PROBE_FUNCS)
			fn->name = p->func_names[i];
		else if (p->symbol[0])
			fn->name = names ? names : p->symbol;
		if (fn->name)
			kp->symbol_name = fn->name;
		else if (p->func_addrs)
			kp->addr = (kprobe_opcode_t *)p->func_addrs[i];
		else
			kp->addr = (kprobe_opcode_t *)(unsigned long)p->addr;
		kp->offset = p->offset;
		if (entry) {
			fn->kp.pre_handler = kt_kp_pre;
			p->kps[i] = &fn->kp;
		} else {
			fn->rp.entry_handler = kt_rp_entry;
			fn->rp.handler = kt_rp_ret;
			fn->rp.data_size = sizeof(struct kt_entry_data);
			fn->rp.maxactive = p->maxactive;
			p->rps[i] = &fn->rp;
		}
	}
	ret = entry ? register_kprobes(p->kps, p->nr_funcs) :
		      register_kretprobes(p->rps, p->nr_funcs);
	if (ret)
		goto err;
	if (entry)
		p->nr_kps = p->nr_funcs;
	else
		p->nr_rps = p->nr_funcs;
	/* the name string stays referenced by the kprobes until disarm */
	return 0;
err:
	kfree(names);
	kt_kprobe_free(p);
	return kt_kprobe_errno(ret);
}

static void kt_kprobe_disarm(struct kt_probe *p)
{
	char *names = NULL;

	if (p->nr_kps)
		unregister_kprobes(p->kps, p->nr_kps);
	if (p->nr_rps)
		unregister_kretprobes(p->rps, p->nr_rps);
	if (p->funcs && p->module[0] && p->kind != KTRACK_PROBE_FUNCS)
		names = (char *)p->funcs[0].name;
	kfree(names);
	p->nr_kps = 0;
	p->nr_rps = 0;
	kt_kprobe_free(p);
}

static u64 kt_kprobe_missed(struct kt_probe *p)
{
	u64 n = 0;
	u32 i;

	for (i = 0; i < p->nr_kps; i++)
		n += p->kps[i]->nmissed;
	for (i = 0; i < p->nr_rps; i++)
		n += p->rps[i]->nmissed + p->rps[i]->kp.nmissed;
	return n;
}

/* The registered kprobe of attach point i (entry kprobe or kretprobe's). */
static struct kprobe *kt_kprobe_at(struct kt_probe *p, u32 i)
{
	return i < p->nr_kps ? p->kps[i] : &p->rps[i - p->nr_kps]->kp;
}

/*
 * How many attach points are inside 'mod' (KT_IN_NONE, _SOME or _ALL)?  A
 * probe given by address, say, or an f probe with some of its functions
 * there.
 */
static int kt_kprobe_in_module(struct kt_probe *p, struct module *mod)
{
	u32 i, n = p->nr_kps + p->nr_rps, in = 0;

	for (i = 0; i < n; i++)
		in += within_module((unsigned long)kt_kprobe_at(p, i)->addr, mod);
	return !in ? KT_IN_NONE : in == n ? KT_IN_ALL : KT_IN_SOME;
}

/*
 * How many attach points has the kprobes core killed (KT_IN_*)?  It kills
 * those in a going module's text, and those in a module's init text when
 * the module goes LIVE.
 */
static int kt_kprobe_gone(struct kt_probe *p)
{
	u32 i, n = p->nr_kps + p->nr_rps, gone = 0;

	for (i = 0; i < n; i++)
		gone += !!kprobe_gone(kt_kprobe_at(p, i));
	return !gone ? KT_IN_NONE : gone == n ? KT_IN_ALL : KT_IN_SOME;
}

/* What the three kprobe-based mechanisms share. */
#define KT_KPROBE_OPS_COMMON				\
	.arm = kt_kprobe_arm,				\
	.disarm = kt_kprobe_disarm,			\
	.missed = kt_kprobe_missed,			\
	.in_module = kt_kprobe_in_module,		\
	.gone = kt_kprobe_gone

const struct kt_probe_ops kt_kprobe_ops = {
	.mechanism = KTRACK_MECH_KPROBE,
	.wait_module = true,
	KT_KPROBE_OPS_COMMON,
};

const struct kt_probe_ops kt_kretprobe_ops = {
	.mechanism = KTRACK_MECH_KRETPROBE,
	.wait_module = true,
	KT_KPROBE_OPS_COMMON,
};

/* f probes without fprobe: kprobes on the ftrace call sites + kretprobes */
const struct kt_probe_ops kt_kprobe_funcs_ops = {
	.mechanism = KTRACK_MECH_KPROBE_FTRACE,
	KT_KPROBE_OPS_COMMON,
};
