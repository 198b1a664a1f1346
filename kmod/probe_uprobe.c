// SPDX-License-Identifier: GPL-2.0
/*
 * probe_uprobe.c - u and ur probes: an instruction of a user-space file,
 * by uprobe_register() on the file's inode (as ftrace's uprobe events).
 *
 * The file is found by its path when the probe is added, before
 * kt_probe_lock, and its path (so its inode) is held until the probe is
 * freed: a binary unlinked or replaced (renamed over)
 * while armed keeps its inode, its uprobe and the processes that run it;
 * new runs of a new file at that path are not probed.
 *
 * Handlers run in the hitting task's context, on its user registers: the
 * arguments are the user ABI's (the same registers as the kernel's), and
 * fetches read user memory only (probe_desc.c checks it).
 *
 * ur: uprobes give the return handler no data of the entry, so the entry
 * side keeps the entry time and arguments in a per-probe table, one slot
 * per live call, found by task (pointer and start time) and the user stack
 * pointer at entry (where the return address is; the return runs with it
 * one word higher).  A task's slots lie in a window after its hash; a call
 * whose slot is lower on the stack than a new entry never returned
 * (longjmp, an exception) and its slot is reused.  An exit whose entry
 * kept nothing is still recorded, its arguments and duration marked
 * faulted, and counted in the probe's missed.
 */
#include <linux/hash.h>
#include <linux/namei.h>
#include <linux/path.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uprobes.h>

#include "compat_uprobe.h"
#include "probe_internal.h"

#define KT_URET_BITS	8
#define KT_URET_SLOTS	(1U << KT_URET_BITS)
#define KT_URET_WINDOW	16	/* live calls of one task in one ur probe */

struct kt_uret_slot {
	struct task_struct *task;	/* the owner; NULL while free */
	u64 start_time;			/* the owner's */
	unsigned long sp;		/* user sp at entry */
	struct kt_entry_data d;
};

struct kt_uprobe {
	struct kt_probe *probe;
	struct uprobe_consumer uc;
	struct path path;		/* held from add until freed */
	struct kt_uprobe_handle h;
	bool attached;
	atomic64_t unmatched;		/* ur exits whose entry kept nothing */
	struct kt_uret_slot *slots;	/* ur: KT_URET_SLOTS */
};

static struct kt_uret_slot *kt_uret_slot(struct kt_uprobe *up, u32 h, u32 i)
{
	return &up->slots[(h + i) & (KT_URET_SLOTS - 1)];
}

/*
 * ur entry: keep this call's time and arguments for its return - only for
 * a task the session records (its pid filter), while it runs, so that the
 * idle or blocked calls of the system's other processes take no slot.
 */
static void kt_uret_enter(struct kt_uprobe *up, struct pt_regs *regs)
{
	struct task_struct *t = current;
	unsigned long sp = user_stack_pointer(regs);
	u32 h = hash_ptr(t, KT_URET_BITS), i;
	struct kt_uret_slot *mine = NULL;
	bool wanted;

	preempt_disable();
	wanted = ktrack_session_selects(up->probe->session);
	preempt_enable();
	if (!wanted)
		return;

	for (i = 0; i < KT_URET_WINDOW; i++) {
		struct kt_uret_slot *s = kt_uret_slot(up, h, i);

		if (READ_ONCE(s->task) != t)
			continue;
		/* a dead task's at this address, or a call that never returned */
		if (s->start_time != t->start_time || s->sp <= sp) {
			if (!mine)
				mine = s;
			else	/* our reads of it done before it is free */
				smp_store_release(&s->task, NULL);
		}
	}
	for (i = 0; !mine && i < KT_URET_WINDOW; i++) {
		struct kt_uret_slot *s = kt_uret_slot(up, h, i);

		if (!READ_ONCE(s->task) && !cmpxchg(&s->task, NULL, t))
			mine = s;
	}
	if (!mine)
		return;		/* its exit is counted unmatched */
	mine->start_time = t->start_time;
	mine->sp = sp;
	kt_entry_save(&mine->d, regs);
}

/* ur exit: the slot its entry filled, copied into 'd' and freed. */
static bool kt_uret_leave(struct kt_uprobe *up, struct pt_regs *regs, struct kt_entry_data *d)
{
	struct task_struct *t = current;
	unsigned long sp = user_stack_pointer(regs) - sizeof(long);
	u32 h = hash_ptr(t, KT_URET_BITS), i;

	for (i = 0; i < KT_URET_WINDOW; i++) {
		struct kt_uret_slot *s = kt_uret_slot(up, h, i);

		if (READ_ONCE(s->task) != t || s->start_time != t->start_time || s->sp != sp)
			continue;
		*d = s->d;
		/* the copy is done before another task may claim the slot */
		smp_store_release(&s->task, NULL);
		return true;
	}
	return false;
}

static int kt_up_handler(struct uprobe_consumer *uc, struct pt_regs *regs)
{
	struct kt_uprobe *up = container_of(uc, struct kt_uprobe, uc);
	struct kt_probe *p = up->probe;
	unsigned long args[KTRACK_FETCH_MAX_ARG];
	struct kt_fetch_ctx ctx = { .regs = regs, .args = args };
	unsigned int i;

	/* a 32-bit process: another ABI (arguments on the stack, 4-byte words) */
	if (!user_64bit_mode(regs)) {
		atomic64_inc(&up->unmatched);
		return 0;
	}
	if (p->kind == KTRACK_PROBE_URETPROBE) {
		kt_uret_enter(up, regs);
		return 0;
	}
	for (i = 0; i < KTRACK_FETCH_MAX_ARG; i++)
		args[i] = regs_get_kernel_argument(regs, i);
	kt_probe_emit_user(p, &ctx, KTRACK_PROBE_EV_ENTRY, instruction_pointer(regs), 0);
	return 0;
}

static int kt_up_ret_handler(struct uprobe_consumer *uc, unsigned long func, struct pt_regs *regs)
{
	struct kt_uprobe *up = container_of(uc, struct kt_uprobe, uc);
	struct kt_entry_data d;
	struct kt_fetch_ctx ctx = {
		.regs = regs,
		.args = d.args,
		.retval = regs_return_value(regs),
		.exit = true,
	};

	if (!user_64bit_mode(regs)) {
		atomic64_inc(&up->unmatched);
		return 0;
	}
	if (kt_uret_leave(up, regs, &d)) {
		ctx.duration = kt_probe_now() - d.ts;
	} else {
		/* a call its entry kept nothing of: arguments and duration faulted */
		memset(&d, 0, sizeof(d));
		ctx.no_entry = true;
		atomic64_inc(&up->unmatched);
	}
	/* as kretprobes: ip is the function, parent where it returns to */
	kt_probe_emit_user(up->probe, &ctx, KTRACK_PROBE_EV_EXIT, func, instruction_pointer(regs));
	return 0;
}

/*
 * Before kt_probe_lock (probe.c): the file is looked up here, outside it,
 * since a lookup may wait on an automount whose daemon loads a module,
 * whose notifier takes kt_probe_lock.  0 or -errno (ENOENT, EINVAL: not a
 * regular file); what it holds goes with the probe (kt_uprobe_free()).
 */
int kt_uprobe_prepare(struct kt_probe *p)
{
	struct kt_uprobe *up;
	int ret;

	up = kzalloc(sizeof(*up), GFP_KERNEL_ACCOUNT);
	if (!up)
		return -ENOMEM;
	if (p->kind == KTRACK_PROBE_URETPROBE) {
		up->slots = kvcalloc(KT_URET_SLOTS, sizeof(*up->slots), GFP_KERNEL_ACCOUNT);
		if (!up->slots) {
			kfree(up);
			return -ENOMEM;
		}
	}
	up->probe = p;
	p->up = up;
	ret = kern_path(p->upath, LOOKUP_FOLLOW, &up->path);
	if (ret) {
		memset(&up->path, 0, sizeof(up->path));
		return ret;
	}
	return d_is_reg(up->path.dentry) ? 0 : -EINVAL;
}

/* What uprobe_register() refuses, as ktrack's errnos say it (docs/UAPI.md). */
static int kt_uprobe_errno(int ret)
{
	switch (ret) {
	case -ENOMEM:
	case -EINVAL:		/* past the file's end */
	case -EPERM:
		return ret;
	case -EEXIST:
	case -EBUSY:
		return -EBUSY;
	default:		/* -ENOTSUPP: an instruction it cannot step; -EIO */
		return -EOPNOTSUPP;
	}
}

/*
 * Under kt_probe_lock: uprobe_register() takes the mmap_lock of every
 * process mapping the file (kt_probe_lock -> mmap_lock, as ftrace's
 * uprobe events hold event_mutex there).
 */
static int kt_uprobe_arm(struct kt_probe *p)
{
	struct kt_uprobe *up = p->up;
	int ret;

	if (WARN_ON_ONCE(!up || !up->path.dentry || up->attached))	/* prepared, armed once */
		return -EINVAL;
	up->uc.handler = kt_up_handler;
	if (p->kind == KTRACK_PROBE_URETPROBE)
		up->uc.ret_handler = kt_up_ret_handler;
	ret = kt_uprobe_attach(&up->h, d_real_inode(up->path.dentry), p->offset, &up->uc);
	if (ret)
		return kt_uprobe_errno(ret);
	up->attached = true;
	return 0;
}

/* The path stays held until kt_uprobe_free(): on 6.12 a handler may run until the sync. */
static void kt_uprobe_disarm(struct kt_probe *p)
{
	struct kt_uprobe *up = p->up;

	if (!up || !up->attached)
		return;
	kt_uprobe_detach(&up->h, &up->uc);
	up->attached = false;
}

static u64 kt_uprobe_missed(struct kt_probe *p)
{
	return p->up ? atomic64_read(&p->up->unmatched) : 0;
}

/* After kt_uprobe_sync() when a detach needs it (kt_free_gone()). */
void kt_uprobe_free(struct kt_probe *p)
{
	struct kt_uprobe *up = p->up;

	if (!up)
		return;
	WARN_ON_ONCE(up->attached);
	if (up->path.dentry)
		path_put(&up->path);
	kvfree(up->slots);
	kfree(up);
	p->up = NULL;
}

const struct kt_probe_ops kt_uprobe_ops = {
	.mechanism = KTRACK_MECH_UPROBE,
	.arm = kt_uprobe_arm,
	.disarm = kt_uprobe_disarm,
	.missed = kt_uprobe_missed,
	.sync_disarm = KT_UPROBE_DETACH_NOSYNC ? kt_uprobe_sync : NULL,
};
