// SPDX-License-Identifier: GPL-2.0
/*
 * kprobe_sample - a kprobe on any kernel function, named at load time.
 *
 *   insmod kprobe_sample.ko symbol=hrtimer_nanosleep comm=sleep
 *
 * The pre-handler runs just before the probed instruction (here: the first
 * instruction of the function, so the arguments are still in their argument
 * registers) and logs the first three arguments of the first few calls.
 * The post-handler runs just after that instruction and only counts.
 *
 * What to notice:
 *  - regs_get_kernel_argument() hides the calling convention (rdi, rsi,
 *    rdx... on x86-64; x0, x1... on arm64): the same source works on every
 *    architecture that has CONFIG_HAVE_REGS_AND_STACK_ACCESS_API.  It is
 *    only right at the function's entry: once the function runs, those
 *    registers are reused.
 *  - Handlers run with preemption disabled (often with interrupts off):
 *    no sleeping, no mutex, no GFP_KERNEL.  pr_info() is allowed, but it is
 *    slow, so we log only the first max_logged calls and count the rest.
 *  - A kprobe with a post-handler can never be turned into a jump
 *    ("optimized kprobe"): only register one when you need it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/string.h>

static char symbol[KSYM_NAME_LEN] = "hrtimer_nanosleep";
module_param_string(symbol, symbol, sizeof(symbol), 0444);
MODULE_PARM_DESC(symbol, "Function to probe (default hrtimer_nanosleep)");

static char comm[TASK_COMM_LEN];
module_param_string(comm, comm, sizeof(comm), 0444);
MODULE_PARM_DESC(comm, "Only log calls made by this command name (default: all)");

static unsigned int max_logged = 5;
module_param(max_logged, uint, 0444);
MODULE_PARM_DESC(max_logged, "Log at most this many calls (default 5)");

/* Handlers run concurrently on every CPU: plain ints would lose counts. */
static atomic_long_t pre_hits = ATOMIC_LONG_INIT(0);
static atomic_long_t post_hits = ATOMIC_LONG_INIT(0);
static atomic_t logged = ATOMIC_INIT(0);

static int sample_pre(struct kprobe *p, struct pt_regs *regs)
{
	/* current->comm is safe to read here: we run in the caller's context. */
	if (comm[0] && strncmp(current->comm, comm, TASK_COMM_LEN))
		return 0;
	atomic_long_inc(&pre_hits);
	if (atomic_inc_return(&logged) <= max_logged)
		pr_info("%s(0x%lx, 0x%lx, 0x%lx) called by %s[%d]\n",
			p->symbol_name,
			regs_get_kernel_argument(regs, 0),
			regs_get_kernel_argument(regs, 1),
			regs_get_kernel_argument(regs, 2),
			current->comm, task_pid_nr(current));
	/* 0: go on and run the function (1 would mean "I changed regs->ip"). */
	return 0;
}
NOKPROBE_SYMBOL(sample_pre);

static void sample_post(struct kprobe *p, struct pt_regs *regs,
			unsigned long flags)
{
	if (comm[0] && strncmp(current->comm, comm, TASK_COMM_LEN))
		return;
	atomic_long_inc(&post_hits);
}
NOKPROBE_SYMBOL(sample_post);

static struct kprobe kp = {
	.symbol_name = symbol,
	.pre_handler = sample_pre,
	.post_handler = sample_post,
};

static int __init kprobe_sample_init(void)
{
	int ret = register_kprobe(&kp);

	if (ret) {
		/*
		 * The usual reasons: -ENOENT (no such symbol, or it was
		 * inlined away), -EINVAL (the function is on the kprobe
		 * blacklist: see /sys/kernel/debug/kprobes/blacklist),
		 * -EPERM (kernel lockdown forbids kprobes).
		 */
		pr_err("cannot probe '%s': error %d\n", symbol, ret);
		return ret;
	}
	pr_info("probing %s at %pS\n", symbol, kp.addr);
	return 0;
}

static void __exit kprobe_sample_exit(void)
{
	/* After this returns no handler is running or will run again. */
	unregister_kprobe(&kp);
	pr_info("%s: %ld calls seen before, %ld after the first instruction; missed %lu\n",
		symbol, atomic_long_read(&pre_hits),
		atomic_long_read(&post_hits), kp.nmissed);
}

module_init(kprobe_sample_init);
module_exit(kprobe_sample_exit);
MODULE_DESCRIPTION("ktrack sample 2: a kprobe reading function arguments portably");
MODULE_LICENSE("GPL");
