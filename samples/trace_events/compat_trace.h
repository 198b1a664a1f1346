/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat_trace.h - the one TRACE_EVENT API difference between 6.1 and 6.12
 * that this sample meets.
 *
 * __assign_str() copies a __string() field in TP_fast_assign().  Up to 6.9
 * it took the source again: __assign_str(dst, src).  Since 6.10 (commit
 * 2c92ca849fcc, "tracing/treewide: Remove second parameter of
 * __assign_str()") it takes only the field, __assign_str(dst), and copies
 * from the expression already given to __string(dst, src).  Code written
 * for one does not compile on the other, hence this wrapper.
 *
 * sample_assign_str(field) has the new, one-argument form.  On older
 * kernels it passes the field's name as the source too, so it relies on the
 * usual convention that a __string() field is named after the TP_PROTO
 * argument it copies: __string(who, who).
 *
 * One consequence for 6.10+: the __string() source expression is evaluated
 * twice (once to size the event, once to copy), so it must give the same
 * string both times - pass a stable pointer, not a function call with side
 * effects.
 */
#ifndef SAMPLE_COMPAT_TRACE_H
#define SAMPLE_COMPAT_TRACE_H

#include <linux/version.h>

#if KERNEL_VERSION(6, 10, 0) <= LINUX_VERSION_CODE
#define sample_assign_str(field)	__assign_str(field)
#else
#define sample_assign_str(field)	__assign_str(field, field)
#endif

#endif /* SAMPLE_COMPAT_TRACE_H */
