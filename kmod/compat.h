/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat.h - every kernel API that moved between 6.1 and 6.12, in one place,
 * so that the logic files carry no LINUX_VERSION_CODE tests.
 * One section per API; each says when and why it changed.
 */
#ifndef _KTRACK_COMPAT_H
#define _KTRACK_COMPAT_H

#include <linux/version.h>

/*
 * TRACE_EVENT string fields: 6.10 (commit 2c92ca849fcc) dropped the source
 * argument of __assign_str(); the source is taken from __string() instead.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define ktrack_assign_str(dst, src)	__assign_str(dst)
#else
#define ktrack_assign_str(dst, src)	__assign_str(dst, src)
#endif

/*
 * vma->vm_flags became read-only in 6.3 (commit bc292ab00f6c): changes go
 * through vm_flags_set()/vm_flags_clear(), which 6.1 does not have.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define ktrack_vm_flags_set(vma, flags)		vm_flags_set(vma, flags)
#define ktrack_vm_flags_clear(vma, flags)	vm_flags_clear(vma, flags)
#else
#define ktrack_vm_flags_set(vma, flags)		((vma)->vm_flags |= (flags))
#define ktrack_vm_flags_clear(vma, flags)	((vma)->vm_flags &= ~(flags))
#endif

/*
 * local_clock() for code that runs in probe handlers: 6.1 has it inline, as
 * sched_clock_cpu() of this CPU; 6.12 has it out of line ("sched/clock:
 * Make local_clock() noinstr"), where ftrace can trace it, so a probe over
 * every function (f *) traced its own clock at each hit.  sched_clock_cpu()
 * is the same clock, notrace and exported on both kernels.
 */
#define ktrack_local_clock()	sched_clock_cpu(raw_smp_processor_id())

/*
 * A module's text: 6.4 (commit ac3b43283923) split the core and init
 * layouts into mem[MOD_*] regions; 6.1 has core_layout/init_layout, whose
 * text comes first and is text_size long.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#define ktrack_module_text(mod)		((mod)->mem[MOD_TEXT].base)
#define ktrack_module_text_size(mod)	((mod)->mem[MOD_TEXT].size)
#define ktrack_module_init_text(mod)	((mod)->mem[MOD_INIT_TEXT].base)
#define ktrack_module_init_text_size(mod) ((mod)->mem[MOD_INIT_TEXT].size)
#else
#define ktrack_module_text(mod)		((mod)->core_layout.base)
#define ktrack_module_text_size(mod)	((mod)->core_layout.text_size)
#define ktrack_module_init_text(mod)	((mod)->init_layout.base)
#define ktrack_module_init_text_size(mod) ((mod)->init_layout.text_size)
#endif

#endif /* _KTRACK_COMPAT_H */
