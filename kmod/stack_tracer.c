// SPDX-License-Identifier: GPL-2.0
/*
 * stack_tracer.c - the deepest kernel stack seen, in the manner of ftrace's
 * stack tracer (kernel/trace/trace_stack.c): an ftrace_ops on every
 * function (or those an ftrace filter names) measures how much of the task
 * stack is in use at each entry; on a new maximum it saves the stack trace
 * and finds each return address on the stack, which gives every frame's
 * depth and size.  ioctl numbers 0x40..0x4f (KTRACK_IOC_STACK_*).
 *
 * One tracer for the whole module, as ftrace has one: the session that
 * starts it owns it until STOP or its teardown; another gets EBUSY.
 *
 * Locks: kt_stack_lock (mutex) serialises START/STOP/teardown and the
 * reader's snapshot; it is taken with no session lock held.  The handler
 * takes only kt_stack_max_lock, a raw arch spinlock with interrupts off,
 * never from NMI, and never nested: a per-CPU guard keeps the handler from
 * running inside itself.  The snapshot takes it too, interrupts off.
 */
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/stacktrace.h>
#include <linux/uaccess.h>

#include "ktrack_internal.h"
#include "uapi_copy.h"

static DEFINE_MUTEX(kt_stack_lock);
static struct ktrack_session *kt_stack_owner;	/* under kt_stack_lock */
/*
 * The hook while it runs, under kt_stack_lock.  A new ftrace_ops for each
 * START: ftrace_free_filter() frees an ops' hashes without resetting them,
 * so an ops whose filter was freed cannot take a filter again.
 */
static struct ftrace_ops *kt_stack_ops;

static arch_spinlock_t kt_stack_max_lock = __ARCH_SPIN_LOCK_UNLOCKED;
/* the maximum, under kt_stack_max_lock */
static unsigned long kt_stack_max;
static unsigned long kt_stack_ips[KTRACK_STACK_MAX_FRAMES];
static unsigned int kt_stack_depth[KTRACK_STACK_MAX_FRAMES];
static unsigned int kt_stack_nr;
static unsigned long kt_stack_func;		/* the traced function at the max */
static pid_t kt_stack_pid;
static char kt_stack_comm[TASK_COMM_LEN];
/* bytes between the traced function's frame and the handler's local */
static unsigned int kt_stack_tracer_frame;

static DEFINE_PER_CPU(int, kt_stack_busy);
static DEFINE_PER_CPU(u64, kt_stack_checks);

/*
 * A new maximum: save the trace and place each return address on the
 * stack, from 'start' (the handler's own frame) to the top.  As ftrace's
 * check_stack(): an address not found costs one more pass, no more.
 */
/*
 * The trace being placed: static, as ftrace's stack_dump_trace[], since a
 * new maximum is where the stack has the least room (under
 * kt_stack_max_lock).
 */
static unsigned long kt_stack_trace[KTRACK_STACK_MAX_FRAMES + 8];

static notrace void kt_stack_record(unsigned long ip, unsigned long *start, unsigned long used)
{
	unsigned long *trace = kt_stack_trace;
	unsigned long *top, *p, *from = start;
	unsigned int n, i, x = 0;
	unsigned long this_size = used;
	/* the traced function's own entry: the return from its __fentry__ call */
	unsigned long ret_ip = ip + MCOUNT_INSN_SIZE;

	n = stack_trace_save(trace, ARRAY_SIZE(kt_stack_trace), 0);
	/* skip the handler's own frames: start at the traced function */
	for (i = 0; i < n && trace[i] != ret_ip; i++)
		;
	if (i == n)
		i = 0;
	top = (unsigned long *)((unsigned long)task_stack_page(current) + THREAD_SIZE);
	while (i < n && x < KTRACK_STACK_MAX_FRAMES) {
		bool found = false;

		kt_stack_depth[x] = this_size;
		for (p = from; p < top && i < n && x < KTRACK_STACK_MAX_FRAMES; p++) {
			/* the stack is not ours: KASAN must not take this as a bug */
			if (READ_ONCE_NOCHECK(*p) != trace[i])
				continue;
			kt_stack_ips[x] = trace[i++];
			this_size = (top - p) * sizeof(unsigned long);
			kt_stack_depth[x++] = this_size;
			found = true;
			from = p + 1;
			if (!kt_stack_tracer_frame) {
				/* the handler's own use, measured once */
				kt_stack_tracer_frame = (p - start) * sizeof(unsigned long);
				kt_stack_max -= kt_stack_tracer_frame;
			}
		}
		if (!found)
			i++;
	}
	kt_stack_nr = x;
	kt_stack_func = ip;
	kt_stack_pid = current->pid;
	strscpy_pad(kt_stack_comm, current->comm, sizeof(kt_stack_comm));
}

static notrace void kt_stack_check(unsigned long ip, unsigned long *stack)
{
	unsigned long base = (unsigned long)task_stack_page(current);
	unsigned long used, flags;
	unsigned int frame = READ_ONCE(kt_stack_tracer_frame);

	/* interrupt stacks are not the task's: not measured (as ftrace) */
	if ((unsigned long)stack < base || (unsigned long)stack >= base + THREAD_SIZE)
		return;
	used = base + THREAD_SIZE - (unsigned long)stack;
	if (used <= frame)
		return;
	used -= frame;
	if (used <= READ_ONCE(kt_stack_max))
		return;
	/* the lock is not NMI-safe: an NMI that interrupted its holder would spin */
	if (in_nmi())
		return;
	local_irq_save(flags);
	arch_spin_lock(&kt_stack_max_lock);
	if (!frame && kt_stack_tracer_frame)
		used -= kt_stack_tracer_frame;
	if (used > kt_stack_max) {
		kt_stack_max = used;
		kt_stack_record(ip, stack, used);
	}
	arch_spin_unlock(&kt_stack_max_lock);
	local_irq_restore(flags);
}

static notrace void kt_stack_call(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	unsigned long stack;

	preempt_disable_notrace();
	if (__this_cpu_inc_return(kt_stack_busy) != 1)
		goto out;
	__this_cpu_inc(kt_stack_checks);
	/* a stack walk needs RCU watching (entry and idle code may run without) */
	if (!rcu_is_watching())
		goto out;
	kt_stack_check(ip, &stack);
out:
	__this_cpu_dec(kt_stack_busy);
	preempt_enable_notrace();
}

static void kt_stack_reset(void)
{
	unsigned long flags;
	int cpu;

	local_irq_save(flags);
	arch_spin_lock(&kt_stack_max_lock);
	kt_stack_max = 0;
	kt_stack_nr = 0;
	kt_stack_func = 0;
	kt_stack_pid = 0;
	kt_stack_comm[0] = '\0';
	arch_spin_unlock(&kt_stack_max_lock);
	local_irq_restore(flags);
	for_each_possible_cpu(cpu)
		per_cpu(kt_stack_checks, cpu) = 0;
}

/* Under kt_stack_lock: no handler runs once this returns. */
static void kt_stack_unregister(void)
{
	if (!kt_stack_ops)
		return;
	/*
	 * Waits for every callback in flight (a module's ops is dynamic).
	 * It fails only when ftrace itself has been disabled (ftrace_bug()),
	 * without unhooking or waiting: then the ops must never be freed.
	 */
	if (WARN_ON_ONCE(unregister_ftrace_function(kt_stack_ops))) {
		/* ftrace may still call kt_stack_call(): the module stays */
		__module_get(THIS_MODULE);
		kt_stack_ops = NULL;
		kt_stack_owner = NULL;
		return;
	}
	ftrace_free_filter(kt_stack_ops);
	kfree(kt_stack_ops);
	kt_stack_ops = NULL;
	kt_stack_owner = NULL;
}

static long kt_stack_start(struct ktrack_session *s, void __user *arg)
{
	struct ktrack_stack_start req;
	struct ftrace_ops *ops;
	char *cur, *glob;
	unsigned int globs = 0;
	u32 usize;
	size_t len;
	int ret;

	ret = ktrack_copy_sized_in(&req, sizeof(req), sizeof(req), arg, &usize);
	if (ret)
		return ret;
	if (req.flags)
		return -EINVAL;
	len = strnlen(req.filter, sizeof(req.filter));
	if (len == sizeof(req.filter))
		return -EINVAL;
	mutex_lock(&kt_stack_lock);
	if (ktrack_session_dead(s)) {
		ret = -ENODEV;
		goto out;
	}
	if (kt_stack_ops) {
		ret = -EBUSY;
		goto out;
	}
	ops = kzalloc(sizeof(*ops), GFP_KERNEL_ACCOUNT);
	if (!ops) {
		ret = -ENOMEM;
		goto out;
	}
	ops->func = kt_stack_call;
	/*
	 * ftrace_set_filter() takes one glob ("vfs_*"): the space-separated
	 * ones go in turn, each added to the last (reset only for the first).
	 * One that matches nothing is EINVAL; no filter is every function.
	 */
	cur = req.filter;
	while ((glob = strsep(&cur, " \t"))) {
		if (!*glob)
			continue;
		if (*glob == '!') {	/* "remove": could leave an empty filter, i.e. all */
			ret = -EINVAL;
			goto free;
		}
		ret = ftrace_set_filter(ops, (unsigned char *)glob, strlen(glob), !globs++);
		if (ret)
			goto free;
	}
	kt_stack_reset();
	ret = register_ftrace_function(ops);
	if (ret)
		goto free;
	kt_stack_ops = ops;
	kt_stack_owner = s;
	goto out;
free:
	ftrace_free_filter(ops);
	kfree(ops);
out:
	mutex_unlock(&kt_stack_lock);
	return ret;
}

static long kt_stack_stop(struct ktrack_session *s)
{
	long ret = 0;

	mutex_lock(&kt_stack_lock);
	if (!kt_stack_ops || kt_stack_owner != s)
		ret = -ENOENT;
	else
		kt_stack_unregister();
	mutex_unlock(&kt_stack_lock);
	return ret;
}

struct kt_stack_snap {
	struct ktrack_stack_frame frames[KTRACK_STACK_MAX_FRAMES];
	unsigned int nr;
	u64 max;
	u64 func;
	u64 checks;
	pid_t pid;
	char comm[TASK_COMM_LEN];
};

static long kt_stack_get(void __user *arg)
{
	struct ktrack_stack_max req;
	struct kt_stack_snap *snap;
	unsigned long flags;
	unsigned int i;
	u32 usize;
	int cpu, ret;

	ret = ktrack_copy_sized_in(&req, sizeof(req), sizeof(req), arg, &usize);
	if (ret)
		return ret;
	if (req.__pad || req.max_bytes || req.func || req.checks || req.pid || req.comm[0])
		return -EINVAL;
	if (req.nr && !req.frames_ptr)
		return -EFAULT;
	snap = kzalloc(sizeof(*snap), GFP_KERNEL);
	if (!snap)
		return -ENOMEM;
	mutex_lock(&kt_stack_lock);
	local_irq_save(flags);
	arch_spin_lock(&kt_stack_max_lock);
	snap->nr = kt_stack_nr;
	snap->max = kt_stack_max;
	snap->func = kt_stack_func;
	snap->pid = kt_stack_pid;
	memcpy(snap->comm, kt_stack_comm, sizeof(snap->comm));
	for (i = 0; i < kt_stack_nr; i++) {
		snap->frames[i].ip = kt_stack_ips[i];
		snap->frames[i].depth = kt_stack_depth[i];
		/* the last frame's size runs to the top of the stack */
		snap->frames[i].size = kt_stack_depth[i] -
			(i + 1 < kt_stack_nr ? kt_stack_depth[i + 1] : 0);
	}
	arch_spin_unlock(&kt_stack_max_lock);
	local_irq_restore(flags);
	for_each_possible_cpu(cpu)
		snap->checks += per_cpu(kt_stack_checks, cpu);
	mutex_unlock(&kt_stack_lock);

	/* copied out with no lock held */
	if (req.nr && copy_to_user(u64_to_user_ptr(req.frames_ptr), snap->frames,
				   min(req.nr, snap->nr) * sizeof(snap->frames[0])))
		ret = -EFAULT;
	req.nr = snap->nr;
	req.max_bytes = snap->max;
	req.func = snap->func;
	req.checks = snap->checks;
	req.pid = snap->pid;
	memcpy(req.comm, snap->comm, sizeof(req.comm));
	kfree(snap);
	if (!ret && copy_to_user(arg, &req, min_t(size_t, usize, sizeof(req))))
		ret = -EFAULT;
	return ret;
}

bool ktrack_stack_cmd_known(unsigned int cmd)
{
	return cmd == KTRACK_IOC_STACK_START || cmd == KTRACK_IOC_STACK_STOP ||
	       cmd == KTRACK_IOC_STACK_GET;
}

long ktrack_stack_ioctl(struct ktrack_session *s, unsigned int cmd, void __user *arg)
{
	/*
	 * It hooks functions (as kprobes would) and hands out kernel
	 * addresses: what lockdown refuses to tracefs and kprobes alike.
	 */
	if (!perfmon_capable() || security_locked_down(LOCKDOWN_KPROBES))
		return -EPERM;
	switch (cmd) {
	case KTRACK_IOC_STACK_START:
		return kt_stack_start(s, arg);
	case KTRACK_IOC_STACK_STOP:
		return kt_stack_stop(s);
	case KTRACK_IOC_STACK_GET:
		return kt_stack_get(arg);
	default:
		return -ENOTTY;
	}
}

void ktrack_stack_session_release(struct ktrack_session *s)
{
	mutex_lock(&kt_stack_lock);
	if (kt_stack_owner == s)
		kt_stack_unregister();
	mutex_unlock(&kt_stack_lock);
}

void ktrack_stack_exit(void)
{
	mutex_lock(&kt_stack_lock);
	kt_stack_unregister();
	mutex_unlock(&kt_stack_lock);
}
