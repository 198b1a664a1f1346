// SPDX-License-Identifier: GPL-2.0
/*
 * objtrace.c - placeholder for the object tracker (issue 5): answers its
 * ioctl range with ENOTTY until the object tracker replaces this file.
 */
#include <linux/errno.h>
#include "ktrack_internal.h"

long ktrack_objtrace_ioctl(struct ktrack_session *s, unsigned int cmd, void __user *arg)
{
	return -ENOTTY;
}

void ktrack_objtrace_session_release(struct ktrack_session *s)
{
}

int ktrack_objtrace_init(void)
{
	return 0;
}

void ktrack_objtrace_exit(void)
{
}
