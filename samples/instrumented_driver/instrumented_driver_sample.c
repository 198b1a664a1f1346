// SPDX-License-Identifier: GPL-2.0
/*
 * instrumented_driver_sample - a small driver, instrumented three ways,
 * with a latency problem planted for the walk-through to find.
 *
 *   ktrackctl load && insmod instrumented_driver_sample.ko
 *   echo hello > /dev/ktrack_demo_drv     one write() = one request
 *   cat /dev/ktrack_demo_drv              waits until every request is
 *                                         done, then prints the counters
 *
 * The driver: write() copies the payload into a request, stamps it and
 * queues it on an ordered workqueue; the work item checksums it and
 * completes it.  A request's path is
 *
 *   demo_drv_write -> demo_drv_submit -> (workqueue) -> demo_drv_handle
 *       -> demo_drv_checksum [-> demo_drv_bounce] -> demo_drv_complete
 *
 * The instrumentation, from permanent to on-demand:
 *  1. TRACE_EVENTs (instrumented_driver_trace.h): demo_req_queue,
 *     demo_req_start, demo_req_done.  Documented, stable, zero cost while
 *     disabled; any tracer can read them.
 *  2. ktrack's exported API (<ktrack/ktrack_api.h>): ktrack_emit() writes a
 *     binary completion record and ktrack_printf() a line of text into every
 *     running ktrack session, from any context.  While no session runs each
 *     call is one patched-out jump (a static key), like a tracepoint.
 *  3. The object tracker (<ktrack/ktrack_objtrace.h>): ktrack_obj_track()
 *     hands each request's address to every session that runs
 *     'ktrackctl objtrace --api'; the tracker then records every hooked
 *     function that receives the request, until ktrack_obj_untrack().
 *
 * The planted problem: payloads longer than DEMO_INLINE_MAX go through
 * demo_drv_bounce(), which "waits for a bounce-buffer DMA" by sleeping
 * 20 ms.  The walk-through finds it without reading this comment.
 *
 * Depending on ktrack.ko by symbol (rather than symbol_get()) keeps the code
 * simple: the module loads only after ktrack.ko, and ktrack.ko cannot be
 * unloaded while this module uses it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <ktrack/ktrack_api.h>
#include <ktrack/ktrack_objtrace.h>

#include "instrumented_driver_sample.h"

#define CREATE_TRACE_POINTS
#include "instrumented_driver_trace.h"

static struct workqueue_struct *demo_wq;
static atomic_t next_id = ATOMIC_INIT(0);
static atomic_t submitted = ATOMIC_INIT(0);
static atomic_t completed = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(idle_wait);

noinline void demo_drv_checksum(struct demo_req *req)
{
	u32 sum = 0, i;

	for (i = 0; i < req->len; i++)
		sum = (sum << 5) + sum + req->payload[i];
	req->csum = sum;
}

/*
 * THE PLANTED PROBLEM: a payload that does not fit the "inline" buffer is
 * copied through a bounce buffer, and we wait for that copy - here a
 * 20 ms sleep standing in for a slow device.  Sleeping is allowed: we run
 * in a work item (process context), never under a spinlock.
 */
noinline void demo_drv_bounce(struct demo_req *req)
{
	req->flags |= DEMO_REQ_BOUNCED;
	ktrack_printf("demo_drv: req %u (%u bytes) waits for a bounce buffer",
		      req->id, req->len);
	msleep(20);
}

noinline void demo_drv_complete(struct demo_req *req)
{
	struct demo_emit_rec rec = {
		.id = req->id,
		.len = req->len,
		.latency_ns = ktime_get_ns() - req->queued_ns,
	};

	trace_demo_req_done(req, rec.latency_ns);
	/* Copied into the sessions' buffers: rec may live on the stack. */
	ktrack_emit(DEMO_EMIT_ID, &rec, sizeof(rec));
	/* Untrack before freeing: the address may be reused right after. */
	ktrack_obj_untrack(req);
	kfree(req);
	atomic_inc(&completed);
	wake_up(&idle_wait);
}

/* One request, in the work item's process context. */
noinline void demo_drv_handle(struct demo_req *req)
{
	trace_demo_req_start(req);
	demo_drv_checksum(req);
	if (req->len > DEMO_INLINE_MAX)
		demo_drv_bounce(req);
	demo_drv_complete(req);
}

static void demo_drv_work(struct work_struct *work)
{
	demo_drv_handle(container_of(work, struct demo_req, work));
}

noinline void demo_drv_submit(struct demo_req *req)
{
	trace_demo_req_queue(req);
	atomic_inc(&submitted);
	INIT_WORK(&req->work, demo_drv_work);
	queue_work(demo_wq, &req->work);
}

static ssize_t demo_drv_write(struct file *file, const char __user *buf,
			      size_t count, loff_t *ppos)
{
	struct demo_req *req;

	if (!count)
		return 0;
	if (count > DEMO_MAX_PAYLOAD)
		return -E2BIG;
	req = kzalloc(struct_size(req, payload, count), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	if (copy_from_user(req->payload, buf, count)) {
		kfree(req);
		return -EFAULT;
	}
	req->len = count;
	req->id = atomic_inc_return(&next_id);
	req->queued_ns = ktime_get_ns();
	/* From here on, every hooked function that gets req is recorded. */
	ktrack_obj_track(req);
	demo_drv_submit(req);
	return count;
}

/* Waits until every submitted request completed, then reports. */
static ssize_t demo_drv_read(struct file *file, char __user *buf,
			     size_t count, loff_t *ppos)
{
	char text[64];
	int len;

	if (*ppos == 0 &&
	    wait_event_interruptible(idle_wait, atomic_read(&completed) ==
				     atomic_read(&submitted)))
		return -ERESTARTSYS;
	len = scnprintf(text, sizeof(text), "requests %d completed %d\n",
			atomic_read(&submitted), atomic_read(&completed));
	return simple_read_from_buffer(buf, count, ppos, text, len);
}

static const struct file_operations demo_drv_fops = {
	.owner = THIS_MODULE,
	.write = demo_drv_write,
	.read = demo_drv_read,
	.llseek = noop_llseek,
};

static struct miscdevice demo_drv_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "ktrack_demo_drv",
	.fops = &demo_drv_fops,
	.mode = 0600,
};

static int __init demo_drv_init(void)
{
	int ret;

	/* Ordered: one request at a time, in submission order. */
	demo_wq = alloc_ordered_workqueue("ktrack_demo_drv", 0);
	if (!demo_wq)
		return -ENOMEM;
	ret = misc_register(&demo_drv_dev);
	if (ret) {
		destroy_workqueue(demo_wq);
		return ret;
	}
	pr_info("/dev/%s ready\n", demo_drv_dev.name);
	return 0;
}

static void __exit demo_drv_exit(void)
{
	/* No new writers (the fops hold a module reference), then drain. */
	misc_deregister(&demo_drv_dev);
	destroy_workqueue(demo_wq);
	pr_info("%d requests, %d completed\n", atomic_read(&submitted),
		atomic_read(&completed));
}

module_init(demo_drv_init);
module_exit(demo_drv_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ktrack sample 7: a driver instrumented three ways");
