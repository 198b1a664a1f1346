/* SPDX-License-Identifier: GPL-2.0 */
/*
 * access.h - who may use /dev/ktrack (docs/ACCESS.md): root's files, and
 * with group_access=1 the ktrack group's ("member" files, opened without
 * CAP_PERFMON or CAP_SYS_ADMIN).
 */
#ifndef _KTRACK_ACCESS_H
#define _KTRACK_ACCESS_H

#include <linux/types.h>

struct ktrack_file;
struct ktrack_session;

/* open(): 0 with *member set, -EPERM (no group access) or -EMFILE (max_group_files). */
int ktrack_access_open(bool *member);
/* release() of a file that ktrack_access_open() let in. */
void ktrack_access_release(bool member);
/* The device node's mode: 0600, or 0660 with group_access=1. */
umode_t ktrack_access_dev_mode(void);
/* ioctl(): may this file issue 'cmd'?  (a member: only what reads and marks) */
bool ktrack_access_ioctl_allowed(const struct ktrack_file *f, unsigned int cmd);
/* Root shares 's' with the group (a named session with KTRACK_CFG_F_GROUP). */
bool ktrack_access_shared(const struct ktrack_session *s);
/* read(), mmap() and markers: 0, or -EACCES for a member on a session not shared. */
int ktrack_access_reader(const struct ktrack_file *f, const struct ktrack_session *s);

#endif /* _KTRACK_ACCESS_H */
