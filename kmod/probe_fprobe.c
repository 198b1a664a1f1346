// SPDX-License-Identifier: GPL-2.0
/*
 * probe_fprobe.c - f probes through one fprobe over all their functions
 * (kernels with CONFIG_FPROBE).  Entry data carries the entry time and the
 * arguments to the exit handler, for $duration and $argN on exits.
 */
#include <linux/fprobe.h>

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

static int kt_fprobe_arm(struct kt_probe *p)
{
	int ret;

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
}

static u64 kt_fprobe_missed(struct kt_probe *p)
{
	return p->fp.nmissed;
}

/* ftrace drops a going module's sites itself: no in_module */
const struct kt_probe_ops kt_fprobe_ops = {
	.mechanism = KTRACK_MECH_FPROBE,
	.arm = kt_fprobe_arm,
	.disarm = kt_fprobe_disarm,
	.missed = kt_fprobe_missed,
};
