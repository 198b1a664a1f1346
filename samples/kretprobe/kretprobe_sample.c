// SPDX-License-Identifier: GPL-2.0
/*
 * kretprobe_sample - how long does a kernel function take?
 *
 *   insmod kretprobe_sample.ko symbol=hrtimer_nanosleep maxactive=1
 *
 * A kretprobe is a kprobe on the function's entry that also replaces the
 * return address, so a second handler runs when the function returns.
 * Between the two, each call in flight owns one "instance", and each
 * instance carries data_size bytes that belong to that call only: we keep
 * the entry timestamp there.  No table keyed by task, no lock.
 *
 * What to notice:
 *  - maxactive is how many calls may be in flight at once (across all
 *    tasks, including ones sleeping inside the function).  When they are
 *    all taken, the next call is not measured: nmissed counts it.  A
 *    function that sleeps (like hrtimer_nanosleep) needs a big maxactive.
 *  - The entry handler may return non-zero to say "not interested": no
 *    instance is used and the return handler will not run for that call.
 *  - Always report nmissed: latency numbers with silent holes mislead.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/string.h>

static char symbol[KSYM_NAME_LEN] = "hrtimer_nanosleep";
module_param_string(symbol, symbol, sizeof(symbol), 0444);
MODULE_PARM_DESC(symbol, "Function to time (default hrtimer_nanosleep)");

static char comm[TASK_COMM_LEN];
module_param_string(comm, comm, sizeof(comm), 0444);
MODULE_PARM_DESC(comm, "Only time calls made by this command name (default: all)");

static int maxactive;
module_param(maxactive, int, 0444);
MODULE_PARM_DESC(maxactive, "Calls measured at once (0: the kernel's default)");

static unsigned int max_logged = 5;
module_param(max_logged, uint, 0444);
MODULE_PARM_DESC(max_logged, "Log at most this many calls (default 5)");

/* What each call in flight remembers between entry and return. */
struct call_data {
	ktime_t entry;
};

static atomic_long_t calls = ATOMIC_LONG_INIT(0);
static atomic64_t total_ns = ATOMIC64_INIT(0);
static atomic_t logged = ATOMIC_INIT(0);

static int sample_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct call_data *d = (struct call_data *)ri->data;

	if (comm[0] && strncmp(current->comm, comm, TASK_COMM_LEN))
		return 1;	/* skip: no return handler for this call */
	d->entry = ktime_get();
	return 0;
}
NOKPROBE_SYMBOL(sample_entry);

static int sample_return(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct call_data *d = (struct call_data *)ri->data;
	s64 ns = ktime_to_ns(ktime_sub(ktime_get(), d->entry));

	atomic_long_inc(&calls);
	atomic64_add(ns, &total_ns);
	if (atomic_inc_return(&logged) <= max_logged)
		pr_info("%s returned %ld after %lld us (%s[%d])\n",
			symbol, (long)regs_return_value(regs), div_s64(ns, NSEC_PER_USEC),
			current->comm, task_pid_nr(current));
	return 0;
}
NOKPROBE_SYMBOL(sample_return);

static struct kretprobe krp = {
	.kp.symbol_name = symbol,
	.entry_handler = sample_entry,
	.handler = sample_return,
	.data_size = sizeof(struct call_data),
};

static int __init kretprobe_sample_init(void)
{
	int ret;

	krp.maxactive = maxactive;	/* <= 0 lets the kernel pick */
	ret = register_kretprobe(&krp);
	if (ret) {
		pr_err("cannot probe '%s': error %d\n", symbol, ret);
		return ret;
	}
	pr_info("timing %s, %d calls at once\n", symbol, krp.maxactive);
	return 0;
}

static void __exit kretprobe_sample_exit(void)
{
	long n;

	unregister_kretprobe(&krp);
	n = atomic_long_read(&calls);
	pr_info("%s: %ld calls timed, average %lld us; nmissed %d\n", symbol, n,
		n ? div64_s64(atomic64_read(&total_ns), n * NSEC_PER_USEC) : 0,
		krp.nmissed);
}

module_init(kretprobe_sample_init);
module_exit(kretprobe_sample_exit);
MODULE_DESCRIPTION("ktrack sample 3: a kretprobe timing calls with per-call data");
MODULE_LICENSE("GPL");
