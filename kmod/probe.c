// SPDX-License-Identifier: GPL-2.0
/*
 * probe.c - placeholder for the dynamic probe part (issue 4): answers its
 * ioctl range with ENOTTY until the probe engine replaces this file.
 */
#include <linux/errno.h>
#include "ktrack_internal.h"

long ktrack_probe_ioctl(struct ktrack_session *s, unsigned int cmd, void __user *arg)
{
	return -ENOTTY;
}

void ktrack_probe_session_release(struct ktrack_session *s)
{
}

int ktrack_probe_init(void)
{
	return 0;
}

void ktrack_probe_exit(void)
{
}
