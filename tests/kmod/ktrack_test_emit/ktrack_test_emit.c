// SPDX-License-Identifier: GPL-2.0
/*
 * ktrack_test_emit - emits KTRACK_REC_TEST_SEQ records into every running
 * ktrack session, for the transport's accounting tests and benchmarks.
 *
 * Interface: the debugfs file /sys/kernel/debug/ktrack_test_emit/ctl.
 * Write one command; the write returns when it is done; read the result.
 *
 *   run RUN COUNT CTXMASK SIZE
 *	On every online CPU, emit COUNT records from each context in CTXMASK
 *	(bit 0 task, 1 softirq, 2 hardirq, 3 NMI; the KTRACK_RECF_CTX_*
 *	values as bit numbers) with payload SIZE bytes (16..1024, multiple of
 *	8; struct ktrack_rec_test_seq + filler).  seq counts from 0 per
 *	(RUN, context, CPU).  The contexts interleave: a task loop bound to
 *	the CPU emits, and every few records raises a self-IPI (irq_work:
 *	hardirq) or, alternately, a function-call IPI to the next online CPU
 *	(smp_call_function_single: hardirq there), arms a pinned timer
 *	(softirq) and sends itself an NMI
 *	(an NMI IPI through the local APIC, as the kernel's NMI backtrace
 *	does: it needs no PMU, so it works under QEMU TCG too), which emit
 *	in batches.
 *	Result: "run RUN nmi_supported 0|1" then per CPU
 *	"cpu C task N softirq N hardirq N nmi N" (records produced).
 *
 *   bench COUNT SIZE [GAP_NS]
 *	Emit COUNT records in a tight task-context loop on the current CPU
 *	(busy-waiting GAP_NS between records: a paced producer).
 *	Result: "bench records COUNT ns TOTAL_NS".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/irq_work.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <asm/apic.h>
#include <asm/nmi.h>

#include <ktrack/ktrack_api.h>
#include <uapi/ktrack.h>

#define NCTX		4
#define MAX_SIZE	1024
#define HARD_BATCH	16
#define SOFT_BATCH	64
#define NMI_BATCH	8

struct emit_cpu {
	int cpu;
	atomic_t left[NCTX];
	u64 seq[NCTX];
	u8 buf[NCTX][MAX_SIZE];		/* one per context: they nest */
	struct irq_work hard;
	struct timer_list timer;
	atomic_t nmi_pending;		/* NMIs sent to this CPU, not handled */
	struct work_struct work;
};

static struct emit_cpu __percpu *ecpus;
static DEFINE_MUTEX(emit_lock);
static struct dentry *dir;
static u32 cur_run, cur_size;
static char result[4096];

static void emit_batch(struct emit_cpu *e, int ctx, int max)
{
	struct ktrack_rec_test_seq *r = (void *)e->buf[ctx];

	while (max-- > 0 && atomic_read(&e->left[ctx]) > 0) {
		r->seq = e->seq[ctx]++;
		r->context = ctx;
		r->run = cur_run;
		if (ktrack_active())
			__ktrack_emit_record(KTRACK_REC_TEST_SEQ, r, cur_size);
		atomic_dec(&e->left[ctx]);
	}
}

static void hard_fn(struct irq_work *w)
{
	emit_batch(container_of(w, struct emit_cpu, hard), KTRACK_RECF_CTX_HARDIRQ, HARD_BATCH);
}

/*
 * A cross-CPU function-call IPI: hardirq context on the target CPU, but
 * for a target polling in idle, which the sender spares the IPI: its idle
 * loop runs the function in task context (seen on 6.1 with a loaded host:
 * "context 2 in payload, flags 0 in header").  Those go to a self-IPI.
 */
static void ipi_fn(void *arg)
{
	struct emit_cpu *e = arg;

	if (!in_hardirq()) {
		irq_work_queue(&e->hard);
		return;
	}
	emit_batch(e, KTRACK_RECF_CTX_HARDIRQ, HARD_BATCH);
}

static void ipi_nop(void *arg)
{
}

static void timer_fn(struct timer_list *t)
{
	emit_batch(container_of(t, struct emit_cpu, timer), KTRACK_RECF_CTX_SOFTIRQ, SOFT_BATCH);
}

/*
 * Every local NMI comes here (with the watchdog's and others'): claim only
 * as many as this module sent to this CPU.
 */
static int nmi_fn(unsigned int type, struct pt_regs *regs)
{
	struct emit_cpu *e = this_cpu_ptr(ecpus);

	if (!atomic_add_unless(&e->nmi_pending, -1, 0))
		return NMI_DONE;
	emit_batch(e, KTRACK_RECF_CTX_NMI, NMI_BATCH);
	return NMI_HANDLED;
}

static void nmi_send(struct emit_cpu *e)
{
	atomic_inc(&e->nmi_pending);
	apic->send_IPI(e->cpu, NMI_VECTOR);
}

static bool busy(struct emit_cpu *e)
{
	int c;

	for (c = 0; c < NCTX; c++)
		if (atomic_read(&e->left[c]) > 0)
			return true;
	return false;
}

/* Bound to e->cpu: the task loop that also drives the other contexts. */
static void task_fn(struct work_struct *w)
{
	struct emit_cpu *e = container_of(w, struct emit_cpu, work);
	unsigned long deadline = jiffies + 30 * HZ;
	unsigned long i = 0;

	while (busy(e)) {
		emit_batch(e, KTRACK_RECF_CTX_TASK, 1);
		if (!(i % 8) && atomic_read(&e->left[KTRACK_RECF_CTX_HARDIRQ]) > 0) {
			unsigned int next = cpumask_next(e->cpu, cpu_online_mask);

			if (next >= nr_cpu_ids)
				next = cpumask_first(cpu_online_mask);

			/*
			 * An IPI to ourselves would run the function here with
			 * interrupts off, not in hardirq context: only to another CPU.
			 */
			if ((i % 16) && next != e->cpu)
				smp_call_function_single(next, ipi_fn, per_cpu_ptr(ecpus, next), 0);
			else
				irq_work_queue(&e->hard);
		}
		if (!(i % 32) && atomic_read(&e->left[KTRACK_RECF_CTX_SOFTIRQ]) > 0 &&
		    !timer_pending(&e->timer))
			mod_timer(&e->timer, jiffies);
		/* one NMI in flight at a time: it lands in the next few instructions */
		if (atomic_read(&e->left[KTRACK_RECF_CTX_NMI]) > 0 && !atomic_read(&e->nmi_pending))
			nmi_send(e);
		if (atomic_read(&e->left[KTRACK_RECF_CTX_TASK]) <= 0) {
			/* Let the timer and the NMIs catch up. */
			if (time_after(jiffies, deadline))
				atomic_set(&e->left[KTRACK_RECF_CTX_NMI], 0);
			usleep_range(200, 400);
		} else if (!(i % 256)) {
			cond_resched();
		}
		i++;
	}
	irq_work_sync(&e->hard);
	del_timer_sync(&e->timer);
}

static int do_run(u32 run, u32 count, u32 mask, u32 size)
{
	size_t off;
	int cpu, c;

	cur_run = run;
	cur_size = size;
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct emit_cpu *e = per_cpu_ptr(ecpus, cpu);

		for (c = 0; c < NCTX; c++) {
			e->seq[c] = 0;
			atomic_set(&e->left[c], (mask & BIT(c)) ? count : 0);
		}
	}
	for_each_online_cpu(cpu)
		schedule_work_on(cpu, &per_cpu_ptr(ecpus, cpu)->work);
	for_each_online_cpu(cpu)
		flush_work(&per_cpu_ptr(ecpus, cpu)->work);
	/*
	 * Each CPU runs its function calls in order: a waited one on every
	 * CPU means the asynchronous ones of the task loops are done.
	 */
	on_each_cpu(ipi_nop, NULL, 1);
	off = scnprintf(result, sizeof(result), "run %u nmi_supported %d\n", run,
			!!(mask & BIT(KTRACK_RECF_CTX_NMI)));
	for_each_online_cpu(cpu) {
		struct emit_cpu *e = per_cpu_ptr(ecpus, cpu);

		off += scnprintf(result + off, sizeof(result) - off,
				 "cpu %d task %llu softirq %llu hardirq %llu nmi %llu\n", cpu,
				 e->seq[0], e->seq[1], e->seq[2], e->seq[3]);
	}
	cpus_read_unlock();
	return 0;
}

static int do_bench(u32 count, u32 size, u32 gap)
{
	struct ktrack_rec_test_seq *r;
	u64 t0, t1;
	u32 i;

	r = kzalloc(MAX_SIZE, GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->run = 0;
	r->context = KTRACK_RECF_CTX_TASK;
	t0 = ktime_get_ns();
	for (i = 0; i < count; i++) {
		r->seq = i;
		/* As a driver would: the static key first (ktrack_api.h). */
		if (ktrack_active())
			__ktrack_emit_record(KTRACK_REC_TEST_SEQ, r, size);
		if (gap) {
			u64 until = ktime_get_ns() + gap;

			while (ktime_get_ns() < until)
				cpu_relax();
		}
		if (!(i & 4095))
			cond_resched();
	}
	t1 = ktime_get_ns();
	kfree(r);
	scnprintf(result, sizeof(result), "bench records %u ns %llu\n", count, t1 - t0);
	return 0;
}

static ssize_t ctl_write(struct file *file, const char __user *ubuf, size_t len, loff_t *ppos)
{
	char cmd[128];
	u32 a, b, c, d, gap = 0;
	int ret;

	if (len >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, len))
		return -EFAULT;
	cmd[len] = 0;
	mutex_lock(&emit_lock);
	result[0] = 0;
	if (sscanf(cmd, "run %u %u %x %u", &a, &b, &c, &d) == 4 && b <= 10000000 &&
	    c < BIT(NCTX) && d >= sizeof(struct ktrack_rec_test_seq) && d <= MAX_SIZE && !(d % 8))
		ret = do_run(a, b, c, d);
	else if (sscanf(cmd, "bench %u %u %u", &a, &b, &gap) >= 2 &&
		 b >= sizeof(struct ktrack_rec_test_seq) && b <= MAX_SIZE && !(b % 8) &&
		 gap <= 1000000)
		ret = do_bench(a, b, gap);
	else
		ret = -EINVAL;
	mutex_unlock(&emit_lock);
	return ret ? ret : len;
}

static ssize_t ctl_read(struct file *file, char __user *ubuf, size_t len, loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&emit_lock);
	ret = simple_read_from_buffer(ubuf, len, ppos, result, strlen(result));
	mutex_unlock(&emit_lock);
	return ret;
}

static const struct file_operations ctl_fops = {
	.owner = THIS_MODULE,
	.read = ctl_read,
	.write = ctl_write,
	.llseek = default_llseek,
};

static int __init emit_init(void)
{
	int cpu, ret;

	ecpus = alloc_percpu(struct emit_cpu);
	if (!ecpus)
		return -ENOMEM;
	ret = register_nmi_handler(NMI_LOCAL, nmi_fn, 0, KBUILD_MODNAME);
	if (ret) {
		free_percpu(ecpus);
		return ret;
	}
	for_each_possible_cpu(cpu) {
		struct emit_cpu *e = per_cpu_ptr(ecpus, cpu);

		e->cpu = cpu;
		init_irq_work(&e->hard, hard_fn);
		timer_setup(&e->timer, timer_fn, TIMER_PINNED);
		INIT_WORK(&e->work, task_fn);
	}
	dir = debugfs_create_dir("ktrack_test_emit", NULL);
	debugfs_create_file("ctl", 0600, dir, NULL, &ctl_fops);
	return 0;
}

static void __exit emit_exit(void)
{
	debugfs_remove_recursive(dir);
	unregister_nmi_handler(NMI_LOCAL, KBUILD_MODNAME);	/* waits for handlers */
	free_percpu(ecpus);
}

module_init(emit_init);
module_exit(emit_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ktrack transport test helper: sequence-numbered records from every context");
