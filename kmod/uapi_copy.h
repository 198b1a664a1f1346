/* SPDX-License-Identifier: GPL-2.0 */
/*
 * uapi_copy.h - copying the extensible ioctl structs of include/uapi/ktrack.h
 * in from userspace.  A leaf: it depends on no other ktrack header, so every
 * part (transport, probes, object tracker) can include it.
 */
#ifndef _KTRACK_UAPI_COPY_H
#define _KTRACK_UAPI_COPY_H

#include <linux/compiler_types.h>
#include <linux/types.h>

/*
 * Copy an extensible ioctl struct in: its first __u32 is its size.  Sizes
 * from 'min' up to 'ksize' are accepted; larger ones only when the bytes we
 * do not know are zero.  The size the caller passed is left in *usize (copy
 * out at most that much).  Faults: callers hold no ktrack lock.
 */
int ktrack_copy_sized_in(void *kbuf, size_t ksize, size_t min,
			 const void __user *ubuf, u32 *usize);

#endif /* _KTRACK_UAPI_COPY_H */
