/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat_ftrace.h - ftrace_ops callback API differences between 6.1 and
 * 6.12, met by the object tracker and by f probes over a kernel glob.
 */
#ifndef _KTRACK_COMPAT_FTRACE_H
#define _KTRACK_COMPAT_FTRACE_H

#include <linux/ftrace.h>
#include <linux/ptrace.h>
#include <linux/version.h>

/*
 * Function arguments at an ftrace_ops callback without FTRACE_OPS_FL_SAVE_REGS
 * (x86-64 has DYNAMIC_FTRACE_WITH_ARGS on both kernels, so the argument
 * registers are always saved).  6.1 exposes struct ftrace_regs as a plain
 * wrapper of pt_regs; 6.12 made it opaque and added
 * ftrace_regs_get_argument() (linux/ftrace_regs.h).
 */
#if KERNEL_VERSION(6, 12, 0) <= LINUX_VERSION_CODE
#define ktrack_fregs_arg(fregs, n)	ftrace_regs_get_argument(fregs, n)
#else
#define ktrack_fregs_arg(fregs, n)	regs_get_kernel_argument(&(fregs)->regs, n)
#endif

#endif /* _KTRACK_COMPAT_FTRACE_H */
