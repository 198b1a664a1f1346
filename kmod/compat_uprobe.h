/* SPDX-License-Identifier: GPL-2.0 */
/*
 * compat_uprobe.h - the uprobe API as probe_uprobe.c uses it, on 6.1 and
 * 6.12.  6.12 ("uprobes: make uprobe_register() return struct uprobe *",
 * and the split of unregister into a nosync part and one wait for all)
 * changed both calls; the logic is written against this small form:
 *   kt_uprobe_attach()   register; 0 or -errno, the handle in *handle
 *   kt_uprobe_detach()   unregister; handlers may still run after it on
 *                        6.12, until kt_uprobe_sync()
 *   kt_uprobe_sync()     waits for every handler of every detach before it
 * and the consumer's filter callback, which ktrack does not set.
 */
#ifndef _KTRACK_COMPAT_UPROBE_H
#define _KTRACK_COMPAT_UPROBE_H

#include <linux/err.h>
#include <linux/uprobes.h>
#include <linux/version.h>

struct kt_uprobe_handle {
	struct inode *inode;
	loff_t offset;
	struct uprobe *uprobe;		/* 6.12 */
};

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
static inline int kt_uprobe_attach(struct kt_uprobe_handle *h, struct inode *inode,
				   loff_t offset, struct uprobe_consumer *uc)
{
	struct uprobe *u = uprobe_register(inode, offset, 0, uc);

	if (IS_ERR(u))
		return PTR_ERR(u);
	h->inode = inode;
	h->offset = offset;
	h->uprobe = u;
	return 0;
}

static inline void kt_uprobe_detach(struct kt_uprobe_handle *h, struct uprobe_consumer *uc)
{
	uprobe_unregister_nosync(h->uprobe, uc);
	h->uprobe = NULL;
}

static inline void kt_uprobe_sync(void)
{
	uprobe_unregister_sync();
}

/* true when kt_uprobe_detach() returns before the handlers are done */
#define KT_UPROBE_DETACH_NOSYNC	1
#else
static inline int kt_uprobe_attach(struct kt_uprobe_handle *h, struct inode *inode,
				   loff_t offset, struct uprobe_consumer *uc)
{
	int ret = uprobe_register(inode, offset, uc);

	if (ret)
		return ret;
	h->inode = inode;
	h->offset = offset;
	return 0;
}

/* waits for running handlers itself (register_rwsem) */
static inline void kt_uprobe_detach(struct kt_uprobe_handle *h, struct uprobe_consumer *uc)
{
	uprobe_unregister(h->inode, h->offset, uc);
}

static inline void kt_uprobe_sync(void)
{
}

#define KT_UPROBE_DETACH_NOSYNC	0
#endif

#endif /* _KTRACK_COMPAT_UPROBE_H */
