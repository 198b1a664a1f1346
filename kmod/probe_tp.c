// SPDX-License-Identifier: GPL-2.0
/*
 * probe_tp.c - t probes: attach to an existing static tracepoint of the
 * core kernel and record its raw arguments ($arg1..$arg5: KT_TP_NR_ARGS;
 * validation refuses $arg6, which this handler never receives).
 *
 * Tracepoint probes are called as probe(data, arg1, ..., argN) with N fixed
 * by the event's TP_PROTO.  This handler takes the maximum count of
 * register-passed arguments: on x86-64 those are the argument registers, so
 * a tracepoint with fewer arguments leaves the extra ones as whatever the
 * registers hold (never memory we would read).  Userspace names the
 * arguments it uses.  The record's ip is the struct tracepoint (the
 * __tracepoint_NAME data symbol in kallsyms).  Kernels with kCFI refuse t
 * probes (compat_probe.h).
 */
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

static int kt_tp_arm(struct kt_probe *p)
{
	struct kt_tp_find f = { .name = p->symbol };
	int ret;

	if (!KTRACK_HAVE_TP_PROBES)
		return -EOPNOTSUPP;
	for_each_kernel_tracepoint(kt_tp_match, &f);
	if (!f.tp)
		return -ENOENT;
	/* Set first: the handler records it from the first hit on. */
	p->tp = f.tp;
	ret = tracepoint_probe_register(f.tp, (void *)kt_tp_handler, p);
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

/* core-kernel tracepoints only (no MOD:), no kernel-side miss count */
const struct kt_probe_ops kt_tp_ops = {
	.mechanism = KTRACK_MECH_TRACEPOINT,
	.arm = kt_tp_arm,
	.disarm = kt_tp_disarm,
	.sync_disarm = kt_tp_sync,
};
