// SPDX-License-Identifier: GPL-2.0
/*
 * uapi_copy.c - copy-in of extensible ioctl structs (see uapi_copy.h).
 */
#include <linux/errno.h>
#include <linux/mm.h>
#include <linux/uaccess.h>

#include "uapi_copy.h"

int ktrack_copy_sized_in(void *kbuf, size_t ksize, size_t min,
			 const void __user *ubuf, u32 *usize)
{
	int ret;

	if (get_user(*usize, (const u32 __user *)ubuf))
		return -EFAULT;
	if (*usize < min || *usize > PAGE_SIZE)
		return -EINVAL;
	ret = copy_struct_from_user(kbuf, ksize, ubuf, *usize);
	return ret == -E2BIG ? -EINVAL : ret;
}
