// SPDX-License-Identifier: GPL-2.0
/*
 * ktrack_test_latency - a known disturbance for the latency tracers' tests:
 * at load, a kernel thread (bound to another CPU) disables IRQs on CPU 'cpu' for 'irqoff_ms'
 * milliseconds, 'count' times, 'interval_ms' apart.  Each window is a
 * function-call IPI to that CPU (smp_call_function_single(): its handler
 * runs in hard IRQ context with IRQs disabled) that busy-waits on the
 * clock: nothing else runs on the CPU meanwhile, no timer and no
 * irq_handler_entry, the way a driver holding a spinlock_irqsave too long
 * would.  The thread waits for each window to end.
 *
 *   insmod ktrack_test_latency.ko cpu=1 irqoff_ms=30 count=5 interval_ms=300
 *   cat /sys/module/ktrack_test_latency/parameters/done   # windows so far
 *   rmmod ktrack_test_latency    # stops early if still running
 *
 * Each window's length as measured (ktime_get around it, on the disturbed
 * CPU) is logged: "irqs off on cpu C for N us".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>

static int cpu = 1;
module_param(cpu, int, 0444);
MODULE_PARM_DESC(cpu, "the CPU whose IRQs are disabled");
static int irqoff_ms = 30;
module_param(irqoff_ms, int, 0444);
MODULE_PARM_DESC(irqoff_ms, "length of each IRQs-off window (1..500 ms)");
static int count = 5;
module_param(count, int, 0444);
MODULE_PARM_DESC(count, "number of windows");
static int interval_ms = 300;
module_param(interval_ms, int, 0444);
MODULE_PARM_DESC(interval_ms, "pause before each window (ms)");
static int done;
module_param(done, int, 0444);
MODULE_PARM_DESC(done, "windows completed so far (read-only)");

static struct task_struct *kt_thread;

/*
 * Hard IRQ on 'cpu', IRQs disabled: the window.  A busy-wait on the clock,
 * not mdelay(): under QEMU TCG the delay loop's calibration is far off (a
 * 30 ms mdelay() measured 50 us), the clock is not.
 */
static void kt_irqoff(void *info)
{
	s64 *len_ns = info;
	ktime_t t0 = ktime_get();
	ktime_t end = ktime_add_ms(t0, irqoff_ms);

	while (ktime_before(ktime_get(), end))
		cpu_relax();
	*len_ns = ktime_to_ns(ktime_sub(ktime_get(), t0));
}

static int kt_run(void *unused)
{
	int i;

	for (i = 0; i < count && !kthread_should_stop(); i++) {
		s64 len_ns = 0;

		msleep_interruptible(interval_ms);
		if (kthread_should_stop())
			break;
		if (smp_call_function_single(cpu, kt_irqoff, &len_ns, 1))
			break;
		pr_info("irqs off on cpu %d for %lld us\n", cpu, len_ns / 1000);
		WRITE_ONCE(done, i + 1);
	}
	/* stay until rmmod: kthread_stop() needs the task */
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

static int __init kt_init(void)
{
	if (cpu < 0 || cpu >= nr_cpu_ids || !cpu_online(cpu) || irqoff_ms < 1 || irqoff_ms > 500 ||
	    count < 0 || interval_ms < 0)
		return -EINVAL;
	kt_thread = kthread_create(kt_run, NULL, "kt_irqoff");
	if (IS_ERR(kt_thread))
		return PTR_ERR(kt_thread);
	/*
	 * Off the disturbed CPU (when there is another): there the call would
	 * run in this thread, in task context, and the measuring threads would
	 * see a thread, not IRQs disabled.
	 */
	if (num_online_cpus() > 1)
		kthread_bind(kt_thread, cpumask_any_but(cpu_online_mask, cpu));
	wake_up_process(kt_thread);
	return 0;
}

static void __exit kt_exit(void)
{
	kthread_stop(kt_thread);
}

module_init(kt_init);
module_exit(kt_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ktrack test: IRQs disabled on a CPU for a known time");
