// SPDX-License-Identifier: GPL-2.0
/*
 * fprobe_sample - one probe over many functions, on entry and on exit.
 *
 *   insmod fprobe_sample.ko glob='*nanosleep*' comm=sleep
 *
 * A kprobe watches one address.  An fprobe is built on ftrace: it attaches
 * to every function matching a glob (the same syntax as
 * /sys/kernel/tracing/set_ftrace_filter) with a single ftrace_ops, and
 * calls our entry handler when any of them starts and our exit handler
 * when it returns.  Each call gets entry_data_size bytes of private data
 * between the two, which we use for the entry time.
 *
 * What to notice:
 *  - fprobe needs CONFIG_FPROBE.  Debian's 6.1 kernel does not have it; there
 *    register_fprobe() is a stub returning -EOPNOTSUPP, and we say so at load
 *    time instead of failing with a bare error code.
 *  - The handler signatures changed between 6.1 and 6.12: compat_fprobe.h
 *    hides that, this file is written once.
 *  - Handlers run inside the function tracer: they are notrace, and
 *    everything they call must be safe there (no sleeping; printk is slow,
 *    so we log only the first max_logged events).
 *  - nmissed counts calls whose exit could not be hooked (too many calls in
 *    flight) or that arrived while a handler was already running on that CPU.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/errno.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/utsname.h>

#include "compat_fprobe.h"

static char glob[128] = "*nanosleep*";
module_param_string(glob, glob, sizeof(glob), 0444);
MODULE_PARM_DESC(glob, "Functions to probe, a set_ftrace_filter glob (default *nanosleep*)");

static char comm[TASK_COMM_LEN];
module_param_string(comm, comm, sizeof(comm), 0444);
MODULE_PARM_DESC(comm, "Only follow calls made by this command name (default: all)");

static unsigned int max_logged = 10;
module_param(max_logged, uint, 0444);
MODULE_PARM_DESC(max_logged, "Log at most this many entries and exits (default 10)");

/* Private to one call, from entry to exit. */
struct call_data {
	u64 entry_ns;	/* 0: entry was not interested in this call */
};

static atomic_long_t entries = ATOMIC_LONG_INIT(0);
static atomic_long_t exits = ATOMIC_LONG_INIT(0);
static atomic_t logged = ATOMIC_INIT(0);

static notrace bool sample_entry(struct fprobe *fp, unsigned long ip,
				 struct pt_regs *regs, void *data)
{
	struct call_data *d = data;

	d->entry_ns = 0;
	if (comm[0] && strncmp(current->comm, comm, TASK_COMM_LEN))
		return false;
	atomic_long_inc(&entries);
	if (atomic_inc_return(&logged) <= max_logged)
		pr_info("-> %ps\n", (void *)ip);
	d->entry_ns = ktime_get_ns();
	return true;
}

static notrace void sample_exit(struct fprobe *fp, unsigned long ip,
				struct pt_regs *regs, void *data)
{
	struct call_data *d = data;

	if (!d->entry_ns)
		return;
	atomic_long_inc(&exits);
	if (atomic_inc_return(&logged) <= max_logged)
		pr_info("<- %ps after %llu us\n", (void *)ip,
			(ktime_get_ns() - d->entry_ns) / NSEC_PER_USEC);
}

FPROBE_HANDLERS(sample_entry, sample_exit)

static struct fprobe fp = {
	.entry_handler = sample_entry_cb,
	.exit_handler = sample_exit_cb,
	.entry_data_size = sizeof(struct call_data),
};

static int __init fprobe_sample_init(void)
{
	int ret = register_fprobe(&fp, glob, NULL);

	if (ret == -EOPNOTSUPP) {
		/* Say why, in words: the bare errno would send people hunting. */
		pr_err("this kernel (%s) was built without CONFIG_FPROBE: fprobe is not available here.\n",
		       init_utsname()->release);
		pr_err("Use a kprobe per function (see the kprobe sample) or a kernel with CONFIG_FPROBE=y (6.12 on Debian 12).\n");
		return -ENODEV;
	}
	if (ret) {
		/* -ENOENT: the glob matched no traceable function. */
		pr_err("cannot probe '%s': error %d\n", glob, ret);
		return ret;
	}
	pr_info("probing '%s'\n", glob);
	return 0;
}

static void __exit fprobe_sample_exit(void)
{
	unregister_fprobe(&fp);
	pr_info("'%s': %ld entries, %ld exits; nmissed %lu\n", glob,
		atomic_long_read(&entries), atomic_long_read(&exits),
		fp.nmissed);
}

module_init(fprobe_sample_init);
module_exit(fprobe_sample_exit);
MODULE_DESCRIPTION("ktrack sample 4: an fprobe over a glob, written for 6.1 and 6.12");
MODULE_LICENSE("GPL");
