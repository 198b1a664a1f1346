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
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/utsname.h>

#include <uapi/ktrack.h>
#include "ktrack_internal.h"
#include "access.h"
#include "alloc_stats.h"
#include "ktrack_trace.h"
#include "ring.h"
#include "session.h"
#include "uapi_copy.h"
#include "user_event.h"

#define KTRACK_MODULE_VERSION "0.1.0"

static int ktrack_open(struct inode *inode, struct file *file)
{
	struct ktrack_file *f;
	bool member;
	int ret;

	/* root's, or with group_access=1 a member of the ktrack group's (access.c) */
	ret = ktrack_access_open(&member);
	if (ret)
		return ret;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f) {
		ktrack_access_release(member);
		return -ENOMEM;
	}
	f->member = member;
	spin_lock_init(&f->lock);
	init_waitqueue_head(&f->wq);
	f->s = ktrack_session_new(NULL, !member);
	if (IS_ERR(f->s)) {
		long err = PTR_ERR(f->s);

		kfree(f);
		ktrack_access_release(member);
		return err;
	}
	ktrack_session_add_file(f->s, f);
	file->private_data = f;
	return 0;
}

static int ktrack_release(struct inode *inode, struct file *file)
{
	struct ktrack_file *f = file->private_data;

	ktrack_uevent_file_release(f);
	ktrack_latency_file_release(f);
	ktrack_session_del_file(f->s, f);
	ktrack_session_file_release(f->s);
	ktrack_access_release(f->member);
	kfree(f);
	return 0;
}

static ssize_t ktrack_read(struct file *file, char __user *buf, size_t count, loff_t *ppos)
{
	struct ktrack_file *f = file->private_data;
	struct ktrack_session *s;
	ssize_t ret;

	if (!count)
		return 0;	/* read(2) of nothing: nothing, never a wait */
	ktrack_session_maybe_attach_default(f);
	s = ktrack_file_session(f);
	ret = ktrack_access_reader(f, s);
	if (ret) {
		ktrack_session_put(s);
		return ret;
	}
	if (mutex_lock_interruptible(&s->read_lock)) {
		ktrack_session_put(s);
		return -ERESTARTSYS;
	}
	for (;;) {
		ret = ktrack_rings_read(s, buf, count);
		if (ret)
			break;
		if (!READ_ONCE(s->running))
			break;		/* stopped (or never started) and drained */
		if (file->f_flags & O_NONBLOCK) {
			ret = -EAGAIN;
			break;
		}
		ktrack_rings_arm(s);
		if (wait_event_interruptible(f->wq, ktrack_session_readable(s, f) ||
					     !READ_ONCE(s->running))) {
			ret = -ERESTARTSYS;
			break;
		}
	}
	mutex_unlock(&s->read_lock);
	ktrack_session_put(s);
	return ret;
}

/* A user marker (trace_marker-like): the text becomes a MARKER record. */
static ssize_t ktrack_marker(struct ktrack_file *f, char *text, size_t count)
{
	struct ktrack_session *s = ktrack_file_session(f);
	ssize_t ret;

	/* a member marks only the sessions root shares */
	if (ktrack_access_reader(f, s))
		ret = -EACCES;
	else if (!READ_ONCE(s->running) || READ_ONCE(s->trig_off))
		ret = -ENODATA;	/* stopped, or paused by a STOP action */
	else if (ktrack_session_write(s, KTRACK_REC_MARKER, text, count + 1))
		ret = -ENOSPC;
	else
		ret = count;
	ktrack_session_put(s);
	return ret;
}

/*
 * write(2): a marker, or on a file that registered user events, an
 * event's id and payload (user_event.c).
 */
static ssize_t ktrack_write(struct file *file, const char __user *buf, size_t count,
			    loff_t *ppos)
{
	struct ktrack_file *f = file->private_data;
	struct iov_iter from;
	char *text;
	ssize_t ret;

	if (READ_ONCE(f->uev_writer)) {
		iov_iter_ubuf(&from, ITER_SOURCE, (void __user *)buf, count);
		return ktrack_uevent_write(f, &from);
	}
	if (!count)
		return -EINVAL;
	if (count >= KTRACK_MARKER_MAX)
		return -E2BIG;
	text = memdup_user_nul(buf, count);
	if (IS_ERR(text))
		return PTR_ERR(text);
	ret = ktrack_marker(f, text, count);
	kfree(text);
	return ret;
}

/* writev(2): one user event from all the pieces, or one marker. */
static ssize_t ktrack_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct ktrack_file *f = iocb->ki_filp->private_data;
	size_t count = iov_iter_count(from);
	char *text;
	ssize_t ret;

	if (READ_ONCE(f->uev_writer))
		return ktrack_uevent_write(f, from);
	if (!count)
		return -EINVAL;
	if (count >= KTRACK_MARKER_MAX)
		return -E2BIG;
	text = kmalloc(count + 1, GFP_KERNEL);
	if (!text)
		return -ENOMEM;
	if (copy_from_iter(text, count, from) != count) {
		kfree(text);
		return -EFAULT;
	}
	text[count] = '\0';
	ret = ktrack_marker(f, text, count);
	kfree(text);
	return ret;
}

static __poll_t ktrack_poll(struct file *file, poll_table *wait)
{
	struct ktrack_file *f = file->private_data;
	struct ktrack_session *s = ktrack_file_session(f);
	__poll_t mask = 0;
	u32 seq;

	/* The file's queue: it stays valid when the file changes session. */
	poll_wait(file, &f->wq, wait);
	ktrack_rings_arm(s);
	/* Before the check: a FLUSH after it stays pending for this file. */
	seq = READ_ONCE(s->flush_seq);
	smp_rmb();	/* seq before the rings: pairs with FLUSH's smp_wmb() */
	if (ktrack_session_readable(s, f))
		mask |= EPOLLIN | EPOLLRDNORM;
	else
		ktrack_session_flush_drained(s, f, seq);
	if (READ_ONCE(s->dead))
		mask |= EPOLLHUP;
	ktrack_session_put(s);
	return mask;
}

static int ktrack_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct ktrack_session *s;
	int ret;

	/* the user events' status page, far above any ring's offsets */
	if (vma->vm_pgoff == KTRACK_UEVENT_STATUS_OFFSET >> PAGE_SHIFT)
		return ktrack_uevent_mmap(vma);
	s = ktrack_file_session(file->private_data);
	ret = ktrack_access_reader(file->private_data, s);
	if (!ret)
		ret = ktrack_session_mmap(s, vma);

	ktrack_session_put(s);
	return ret;
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
	v.features = KTRACK_FEAT_RING | KTRACK_FEAT_NAMED_SESS | KTRACK_FEAT_MODULE_EVENTS |
		     KTRACK_FEAT_STATS_WAKEUPS | KTRACK_FEAT_TRIGGERS | KTRACK_FEAT_PROFILE | KTRACK_FEAT_STACK_TRACER |
		     KTRACK_FEAT_DUMP_ON_OOPS | KTRACK_FEAT_SNAPSHOT | KTRACK_FEAT_GRAPH_SCOPE |
		     KTRACK_FEAT_PID_TREE | KTRACK_FEAT_LATENCY | KTRACK_FEAT_GROUP |
		     ktrack_probe_features() |
		     ktrack_objtrace_features();
	strscpy(v.module_version, KTRACK_MODULE_VERSION, sizeof(v.module_version));
	strscpy(v.kernel_release, utsname()->release, sizeof(v.kernel_release));
	if (copy_to_user(arg, &v, min_t(size_t, usize, sizeof(v))))
		return -EFAULT;
	return 0;
}

static long ktrack_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	struct ktrack_file *f = file->private_data;
	struct ktrack_session *s;
	long ret;

	if (_IOC_TYPE(cmd) != KTRACK_IOC_MAGIC)
		return -ENOTTY;
	if (cmd == KTRACK_IOC_VERSION)
		return ktrack_ioctl_version(uarg);
	/* a group member's file: reads, queries, markers and user events only */
	if (!ktrack_access_ioctl_allowed(f, cmd))
		return -EPERM;
	/* user events belong to the file, not to its session */
	if (ktrack_uevent_cmd_known(cmd))
		return ktrack_uevent_ioctl(f, cmd, uarg);
	/*
	 * Transport commands (0x01..0x0b) and the parts' ranges (0x20..0x2f
	 * probes, 0x30..0x3f object tracker) get the file's session.
	 */
	s = ktrack_file_session(f);
	ret = ktrack_session_ioctl(f, s, cmd, uarg);
	ktrack_session_put(s);
	return ret;
}

static const struct file_operations ktrack_fops = {
	.owner = THIS_MODULE,
	.open = ktrack_open,
	.release = ktrack_release,
	.read = ktrack_read,
	.write = ktrack_write,
	.write_iter = ktrack_write_iter,
	.poll = ktrack_poll,
	.mmap = ktrack_mmap,
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

	ret = ktrack_uevent_init();
	if (ret)
		return ret;
	ret = ktrack_probe_init();
	if (ret)
		goto out_uevent;
	ret = ktrack_objtrace_init();
	if (ret)
		goto out_probe;
	ret = ktrack_module_events_init();
	if (ret)
		goto out_objtrace;
	ret = ktrack_crash_dump_init();
	if (ret)
		goto out_modev;
	kt_alloc_stats_init();
	/*
	 * probes=, session=, flight=: every part is up, and the device is
	 * not yet, so nobody can destroy or attach to the session half built.
	 */
	ret = ktrack_boot_trace_init();
	if (ret)
		goto out_stats;
	ktrack_miscdev.mode = ktrack_access_dev_mode();
	ret = misc_register(&ktrack_miscdev);
	if (ret) {
		pr_err("cannot register /dev/%s: %d\n", KTRACK_DEVICE_NAME, ret);
		goto out_boot;
	}
	pr_info("loaded, ABI %d\n", KTRACK_ABI_VERSION);
	return 0;
out_boot:
	ktrack_boot_trace_exit();
out_stats:
	kt_alloc_stats_exit();
	ktrack_crash_dump_exit();
out_modev:
	ktrack_module_events_exit();
out_objtrace:
	ktrack_objtrace_exit();
out_probe:
	ktrack_probe_exit();
out_uevent:
	ktrack_uevent_exit();
	return ret;
}

static void __exit ktrack_exit(void)
{
	misc_deregister(&ktrack_miscdev);
	ktrack_stack_exit();
	ktrack_latency_exit();
	ktrack_crash_dump_exit();
	ktrack_module_events_exit();
	ktrack_objtrace_exit();
	ktrack_probe_exit();
	ktrack_uevent_exit();
	kt_alloc_stats_exit();
	pr_info("unloaded\n");
}

module_init(ktrack_init);
module_exit(ktrack_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("ktrack developers");
MODULE_DESCRIPTION("ktrack: sessions, ring buffers and dynamic probes on /dev/ktrack");
MODULE_VERSION(KTRACK_MODULE_VERSION);
