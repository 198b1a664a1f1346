// SPDX-License-Identifier: GPL-2.0
/*
 * trace_events_proprietary - the pitfall, on purpose: one TRACE_EVENT in a
 * module that declares a licence the kernel does not consider GPL
 * compatible.  The loader taints the kernel 'P' and then refuses the
 * GPL-only tracing symbols every TRACE_EVENT needs, so the module does not
 * load at all.  See the "Pitfall" section of README.md.  (The file itself
 * is GPL, like the rest of ktrack: only the declared licence is wrong.)
 */
#include <linux/module.h>

#define CREATE_TRACE_POINTS
#include "trace_events_proprietary_trace.h"

static int __init proprietary_init(void)
{
	trace_proprietary_hello(1);
	return 0;
}

static void __exit proprietary_exit(void)
{
}

module_init(proprietary_init);
module_exit(proprietary_exit);
MODULE_DESCRIPTION("ktrack sample 1, pitfall: trace events in a non-GPL module");
/* The deliberate mistake: */
MODULE_LICENSE("Proprietary");
