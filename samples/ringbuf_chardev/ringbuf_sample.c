// SPDX-License-Identifier: GPL-2.0
/*
 * ringbuf_sample - a character device ring buffer, the small cousin of
 * /dev/ktrack.
 *
 *   insmod ringbuf_sample.ko period_ms=10
 *   ringbuf_reader -n 100          (see ringbuf_reader.c)
 *
 * A timer produces one record every period_ms; userspace consumes them
 * with read() on /dev/ringbuf_sample and waits for them with poll().
 *
 * What to notice:
 *  - The producer runs in softirq context (a timer): it cannot sleep and
 *    cannot wait for the reader.  When the ring is full it drops the new
 *    record and counts it.  Every record carries the count so far, and
 *    sequence numbers, so the reader can see exactly what it missed:
 *    produced = read + lost + still buffered, always.
 *  - One spinlock protects head/tail against the timer.  Process context
 *    takes it with spin_lock_bh() so the timer cannot interrupt us on this
 *    CPU while we hold it (that would deadlock).
 *  - copy_to_user() may fault and sleep, so never under a spinlock: the
 *    reader copies records out of the ring into a small local buffer under
 *    the lock, copies that to userspace, then frees the slots.  A mutex
 *    keeps two readers from consuming the same records.
 *  - read() returns whole records only; it blocks unless O_NONBLOCK.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "ringbuf_sample.h"

#define SLOTS		64	/* a power of two: index = count % SLOTS */
#define READ_BATCH	16	/* records copied per lock hold */

static unsigned int period_ms = 10;
module_param(period_ms, uint, 0444);
MODULE_PARM_DESC(period_ms, "Produce one record every period_ms (default 10)");

static struct ringbuf_record ring[SLOTS];
static u64 head;		/* records written: next seq */
static u64 tail;		/* records consumed */
static u64 lost;		/* records dropped, ring full */
static DEFINE_SPINLOCK(ring_lock);
static DEFINE_MUTEX(read_mutex);
static DECLARE_WAIT_QUEUE_HEAD(readers);
static struct timer_list producer;
static u64 seq;

static void produce(struct timer_list *t)
{
	struct ringbuf_record *r;

	spin_lock(&ring_lock);
	if (head - tail == SLOTS) {
		lost++;
	} else {
		r = &ring[head % SLOTS];
		r->seq = seq;
		r->time_ns = ktime_get_ns();
		r->lost = lost;
		r->cpu = smp_processor_id();
		r->pad = 0;
		head++;
	}
	seq++;
	spin_unlock(&ring_lock);
	wake_up_interruptible(&readers);
	mod_timer(&producer, jiffies + msecs_to_jiffies(period_ms));
}

static bool ring_empty(void)
{
	bool empty;

	spin_lock_bh(&ring_lock);
	empty = head == tail;
	spin_unlock_bh(&ring_lock);
	return empty;
}

static ssize_t ringbuf_read(struct file *file, char __user *buf, size_t len,
			    loff_t *ppos)
{
	struct ringbuf_record batch[READ_BATCH];
	size_t done = 0;
	ssize_t ret;

	if (len < sizeof(batch[0]))
		return -EINVAL;	/* we never hand out part of a record */
	if (mutex_lock_interruptible(&read_mutex))
		return -ERESTARTSYS;
	while (ring_empty()) {
		mutex_unlock(&read_mutex);
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		if (wait_event_interruptible(readers, !ring_empty()))
			return -ERESTARTSYS;
		if (mutex_lock_interruptible(&read_mutex))
			return -ERESTARTSYS;
	}
	while (len - done >= sizeof(batch[0])) {
		unsigned int n = 0;

		/* Copy out under the lock; the slots stay ours until tail moves. */
		spin_lock_bh(&ring_lock);
		while (n < READ_BATCH && tail + n != head &&
		       (n + 1) * sizeof(batch[0]) <= len - done) {
			batch[n] = ring[(tail + n) % SLOTS];
			n++;
		}
		spin_unlock_bh(&ring_lock);
		if (!n)
			break;
		if (copy_to_user(buf + done, batch, n * sizeof(batch[0]))) {
			/* Nothing consumed by this batch: a retry gets the same records. */
			ret = done ? done : -EFAULT;
			goto out;
		}
		spin_lock_bh(&ring_lock);
		tail += n;
		spin_unlock_bh(&ring_lock);
		done += n * sizeof(batch[0]);
	}
	ret = done;
out:
	mutex_unlock(&read_mutex);
	return ret;
}

static __poll_t ringbuf_poll(struct file *file, struct poll_table_struct *wait)
{
	poll_wait(file, &readers, wait);
	return ring_empty() ? 0 : EPOLLIN | EPOLLRDNORM;
}

static const struct file_operations ringbuf_fops = {
	.owner = THIS_MODULE,
	.read = ringbuf_read,
	.poll = ringbuf_poll,
	.llseek = noop_llseek,
};

static struct miscdevice ringbuf_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "ringbuf_sample",
	.fops = &ringbuf_fops,
	.mode = 0444,
};

static int __init ringbuf_sample_init(void)
{
	int ret;

	if (!period_ms)
		return -EINVAL;
	ret = misc_register(&ringbuf_dev);
	if (ret)
		return ret;
	timer_setup(&producer, produce, 0);
	mod_timer(&producer, jiffies + msecs_to_jiffies(period_ms));
	pr_info("/dev/%s: %d slots, one record every %u ms\n", ringbuf_dev.name,
		SLOTS, period_ms);
	return 0;
}

static void __exit ringbuf_sample_exit(void)
{
	/* Readers hold a module reference through the open file: none is left. */
	misc_deregister(&ringbuf_dev);
	/* The timer re-arms itself: only the _sync variant with shutdown stops it for good. */
	timer_shutdown_sync(&producer);
	pr_info("produced %llu records: %llu read, %llu lost, %llu never read\n",
		seq, tail, lost, head - tail);
}

module_init(ringbuf_sample_init);
module_exit(ringbuf_sample_exit);
MODULE_DESCRIPTION("ktrack sample 6: a character device ring buffer with loss accounting");
MODULE_LICENSE("GPL");
