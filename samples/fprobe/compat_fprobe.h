/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat_fprobe.h - the fprobe handler signatures of 6.1 and 6.12, behind
 * one macro, so fprobe_sample.c is written once.
 *
 *   6.1   void entry(fp, ip, regs, data)          void exit(fp, ip, regs, data)
 *   6.12  int  entry(fp, ip, ret_ip, regs, data)  void exit(fp, ip, ret_ip, regs, data)
 *
 * v6.2 let the entry handler return non-zero to skip the exit handler for
 * that call; v6.5 added ret_ip (where the function will return to).  The
 * targets here are 6.1 and 6.12; 6.2-6.4 (int, no ret_ip) are not handled.
 * (v6.14 moves fprobe onto fgraph and passes struct ftrace_regs instead of
 * pt_regs: one more branch here when that kernel becomes a target.)
 *
 * FPROBE_HANDLERS(entry, exit) takes two version-independent functions
 *   bool entry(struct fprobe *fp, unsigned long ip, struct pt_regs *regs, void *data)
 *   void exit(struct fprobe *fp, unsigned long ip, struct pt_regs *regs, void *data)
 * (entry returns true when it wants the exit handler to run for this call)
 * and defines entry##_cb and exit##_cb with the running kernel's signatures.
 * On 6.1 the entry handler cannot skip the exit handler: the exit
 * function must also check what entry left in data.
 */
#ifndef SAMPLE_COMPAT_FPROBE_H
#define SAMPLE_COMPAT_FPROBE_H

#include <linux/fprobe.h>
#include <linux/version.h>

#if KERNEL_VERSION(6, 5, 0) <= LINUX_VERSION_CODE
#define FPROBE_HANDLERS(entry, exit)					\
static notrace int entry##_cb(struct fprobe *fp, unsigned long ip,	\
			      unsigned long ret_ip,			\
			      struct pt_regs *regs, void *data)		\
{									\
	return entry(fp, ip, regs, data) ? 0 : 1;			\
}									\
static notrace void exit##_cb(struct fprobe *fp, unsigned long ip,	\
			      unsigned long ret_ip,			\
			      struct pt_regs *regs, void *data)		\
{									\
	exit(fp, ip, regs, data);					\
}
#else
#define FPROBE_HANDLERS(entry, exit)					\
static notrace void entry##_cb(struct fprobe *fp, unsigned long ip,	\
			       struct pt_regs *regs, void *data)	\
{									\
	entry(fp, ip, regs, data);					\
}									\
static notrace void exit##_cb(struct fprobe *fp, unsigned long ip,	\
			      struct pt_regs *regs, void *data)		\
{									\
	exit(fp, ip, regs, data);					\
}
#endif

#endif /* SAMPLE_COMPAT_FPROBE_H */
