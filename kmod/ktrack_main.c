// SPDX-License-Identifier: GPL-2.0
/*
 * ktrack_main.c - module entry: the /dev/ktrack misc device and its ioctl
 * dispatch.  Sessions, rings and probes live in their own files.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>

#include <uapi/ktrack.h>
#include "ktrack_internal.h"
#include "ktrack_trace.h"

#define KTRACK_MODULE_VERSION "0.1.0"

static atomic64_t ktrack_next_session_id = ATOMIC64_INIT(0);

static int ktrack_open(struct inode *inode, struct file *file)
{
	u64 id;

	if (!capable(CAP_PERFMON) && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	id = atomic64_inc_return(&ktrack_next_session_id);
	file->private_data = (void *)(unsigned long)id;
	trace_ktrack_session_open(id, "");
	return 0;
}

static int ktrack_release(struct inode *inode, struct file *file)
{
	trace_ktrack_session_close((unsigned long)file->private_data, "");
	return 0;
}

/*
 * Copy an extensible ioctl struct in: the first __u32 is its size.  Sizes
 * from 'min' up to 'ksize' are accepted; larger ones only when the bytes we
 * do not know are zero (copy_struct_from_user does that check).
 */
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

static long ktrack_ioctl_version(void __user *arg)
{
	struct ktrack_version v;
	u32 usize;
	int ret;

	ret = ktrack_copy_sized_in(&v, sizeof(v), sizeof(v), arg, &usize);
	if (ret)
		return ret;
	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	v.abi_version = KTRACK_ABI_VERSION;
	v.features = 0;
	strscpy(v.module_version, KTRACK_MODULE_VERSION, sizeof(v.module_version));
	strscpy(v.kernel_release, utsname()->release, sizeof(v.kernel_release));
	if (copy_to_user(arg, &v, min_t(size_t, usize, sizeof(v))))
		return -EFAULT;
	return 0;
}

static long ktrack_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	if (_IOC_TYPE(cmd) != KTRACK_IOC_MAGIC)
		return -ENOTTY;
	if (cmd == KTRACK_IOC_VERSION)
		return ktrack_ioctl_version(uarg);
	/* Each part owns a range of command numbers (ktrack_internal.h). */
	switch (_IOC_NR(cmd)) {
	case 0x20 ... 0x2f:
		return ktrack_probe_ioctl(NULL, cmd, uarg);
	case 0x30 ... 0x3f:
		return ktrack_objtrace_ioctl(NULL, cmd, uarg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations ktrack_fops = {
	.owner = THIS_MODULE,
	.open = ktrack_open,
	.release = ktrack_release,
	.unlocked_ioctl = ktrack_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice ktrack_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = KTRACK_DEVICE_NAME,
	.fops = &ktrack_fops,
	.mode = 0600,
};

static int __init ktrack_init(void)
{
	int ret;

	ret = misc_register(&ktrack_miscdev);
	if (ret) {
		pr_err("cannot register /dev/%s: %d\n", KTRACK_DEVICE_NAME, ret);
		return ret;
	}
	pr_info("loaded, ABI %d\n", KTRACK_ABI_VERSION);
	return 0;
}

static void __exit ktrack_exit(void)
{
	misc_deregister(&ktrack_miscdev);
	pr_info("unloaded\n");
}

module_init(ktrack_init);
module_exit(ktrack_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("ktrack developers");
MODULE_DESCRIPTION("ktrack: sessions, ring buffers and dynamic probes on /dev/ktrack");
MODULE_VERSION(KTRACK_MODULE_VERSION);
