/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat_probe.h - probe-engine APIs that differ between the kernels ktrack
 * supports (6.1 and 6.12), so that probe_*.c carry no version tests.
 */
#ifndef _KTRACK_COMPAT_PROBE_H
#define _KTRACK_COMPAT_PROBE_H

#include <linux/version.h>
#include <linux/kprobes.h>
#include <linux/fprobe.h>

/*
 * fprobe exists only with CONFIG_FPROBE (Debian enables it from 6.2 on; the
 * 6.1 kernel lacks it).  Without it, f probes use one kprobe (placed on the
 * ftrace call site, KPROBES_ON_FTRACE) and one kretprobe per function.
 */
#define KTRACK_HAVE_FPROBE	IS_ENABLED(CONFIG_FPROBE)

/*
 * t probes register one handler with a fixed prototype for every
 * tracepoint, whatever its TP_PROTO: under kCFI (CONFIG_CFI_CLANG) the
 * first call through the tracepoint's typed pointer would be a CFI
 * violation, so such kernels refuse t probes (Debian's are built with gcc,
 * without CFI).
 */
#define KTRACK_HAVE_TP_PROBES	(!IS_ENABLED(CONFIG_CFI_CLANG))

/*
 * fprobe handler signatures: 6.5 ("fprobe: Pass return address to the
 * handlers", and the entry handler's int return that lets it skip the exit
 * handler) changed both callbacks.  The logic is written against the new
 * form; these wrappers adapt it to the old one.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#define KT_DEFINE_FPROBE_ENTRY(name, impl)				\
static notrace int name(struct fprobe *fp, unsigned long entry_ip,	\
			unsigned long ret_ip, struct pt_regs *regs,	\
			void *entry_data)				\
{									\
	return impl(fp, entry_ip, ret_ip, regs, entry_data);		\
}
#define KT_DEFINE_FPROBE_EXIT(name, impl)				\
static notrace void name(struct fprobe *fp, unsigned long entry_ip,	\
			 unsigned long ret_ip, struct pt_regs *regs,	\
			 void *entry_data)				\
{									\
	impl(fp, entry_ip, ret_ip, regs, entry_data);			\
}
#else
#define KT_DEFINE_FPROBE_ENTRY(name, impl)				\
static notrace void name(struct fprobe *fp, unsigned long entry_ip,	\
			 struct pt_regs *regs, void *entry_data)	\
{									\
	impl(fp, entry_ip, 0, regs, entry_data);			\
}
#define KT_DEFINE_FPROBE_EXIT(name, impl)				\
static notrace void name(struct fprobe *fp, unsigned long entry_ip,	\
			 struct pt_regs *regs, void *entry_data)	\
{									\
	impl(fp, entry_ip, 0, regs, entry_data);			\
}
#endif

/*
 * The functions of a registered fprobe, changed in place: fprobe (up to
 * 6.13, ftrace_ops based) keeps them in its ftrace_ops' filter, which
 * ftrace_set_filter_ips() updates on the live ops (both targets export it;
 * 6.1 never calls it, having no fprobe).  'remove' 0 adds the functions,
 * 1 removes them: -ENOENT, and nothing changed, when one is not there.
 */
#define kt_fprobe_filter_ips(fp, ips, n, remove) \
	ftrace_set_filter_ips(&(fp)->ops, ips, n, remove, 0)

/*
 * kretprobe instances: with CONFIG_KRETPROBE_ON_RETHOOK (both targets) the
 * accessors get_kretprobe()/get_kretprobe_retaddr() hide where the probe
 * and return address live; they exist under these names on 6.1 and 6.12.
 */
#define kt_kretprobe_retaddr(ri)	get_kretprobe_retaddr(ri)

/*
 * A module's ftrace call sites (its __mcount_loc, sorted by ftrace at load):
 * f MOD:GLOB attaches only to functions that have one.  Present on both
 * targets (CONFIG_FTRACE_MCOUNT_RECORD); without it, no function qualifies.
 */
#ifdef CONFIG_FTRACE_MCOUNT_RECORD
#define kt_module_ftrace_sites(mod)	((const unsigned long *)(mod)->ftrace_callsites)
#define kt_module_nr_ftrace_sites(mod)	((mod)->num_ftrace_callsites)
#else
#define kt_module_ftrace_sites(mod)	((const unsigned long *)NULL)
#define kt_module_nr_ftrace_sites(mod)	0U
#endif

#endif /* _KTRACK_COMPAT_PROBE_H */
