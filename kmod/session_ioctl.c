// SPDX-License-Identifier: GPL-2.0
/*
 * session_ioctl.c - the per-session ioctls (SET_CONFIG, GET_CONFIG,
 * GET_STATS, START, STOP, FLUSH) and the dispatch of every session
 * command, the parts' ranges included (ktrack_internal.h).  Copies in
 * before locking and out after unlocking (lock order: session.c).
 */
#include <linux/cpumask.h>
#include <linux/mm.h>
#include <linux/capability.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ktrack_internal.h"
#include "ring.h"
#include "session.h"
#include "uapi_copy.h"

static long session_set_config(struct ktrack_session *s, void __user *arg)
{
	bool reader_out = false;
	struct ktrack_config c;
	u32 usize, i;
	int ret;

	ret = ktrack_copy_sized_in(&c, sizeof(c), sizeof(c), arg, &usize);
	if (ret)
		return ret;
	if ((c.flags & ~(KTRACK_CFG_F_DUMP_ON_OOPS | KTRACK_CFG_F_PID_TREE | KTRACK_CFG_F_GROUP)) ||
	    ((c.flags & KTRACK_CFG_F_GROUP) && !s->named) ||
	    c.mode > KTRACK_MODE_OVERWRITE || c.clock > KTRACK_CLOCK_BOOT ||
	    c.wakeup_percent > 100 || c.nr_pids > KTRACK_MAX_PID_FILTER)
		return -EINVAL;
	if (!c.buf_pages || !is_power_of_2(c.buf_pages))
		return -EINVAL;
	if (c.buf_pages > KTRACK_MAX_BUF_PAGES || ktrack_config_over_limit(&c))
		return -E2BIG;
	for (i = c.nr_pids; i < KTRACK_MAX_PID_FILTER; i++)
		if (c.pids[i])
			return -EINVAL;
	for (i = 0; i < c.nr_pids; i++)
		if (c.pids[i] <= 0)
			return -EINVAL;
	if (nr_cpu_ids < 64 && (c.cpu_mask >> nr_cpu_ids))
		return -EINVAL;
	c.size = sizeof(c);
	/*
	 * New rings mean freeing the old ones, which read() uses under
	 * read_lock alone.  read_lock is held across read()'s user copies and
	 * waits, so it is taken before s->lock, and only when rings go.
	 */
again:
	if (reader_out && mutex_lock_interruptible(&s->read_lock))
		return -ERESTARTSYS;
	mutex_lock(&s->lock);
	mutex_lock(&s->mmap_lock);
	ret = 0;
	if (s->dead) {
		ret = -ENODEV;
	} else if (s->running) {
		ret = -EBUSY;
	} else if (s->shared && !(c.flags & KTRACK_CFG_F_GROUP)) {
		/*
		 * Shared for good: members may have it mapped, attached or
		 * polled, so taking it back would leave them reading what
		 * is no longer theirs (docs/ACCESS.md).  Destroy it instead.
		 */
		ret = -EINVAL;
	} else if (s->rings && (c.buf_pages != s->cfg.buf_pages || c.mode != s->cfg.mode)) {
		if (atomic_read(&s->nr_maps)) {
			ret = -EBUSY;
		} else if (!reader_out) {
			mutex_unlock(&s->mmap_lock);
			mutex_unlock(&s->lock);
			reader_out = true;
			goto again;
		} else {
			ktrack_rings_release(s);
		}
	}
	if (!ret) {
		/* read locklessly by the access checks (access.c) */
		WRITE_ONCE(s->shared, !!(c.flags & KTRACK_CFG_F_GROUP));
		s->cfg = c;
		s->wm_bytes = ktrack_config_watermark(&c);
		s->touched = true;
	}
	mutex_unlock(&s->mmap_lock);
	mutex_unlock(&s->lock);
	if (reader_out)
		mutex_unlock(&s->read_lock);
	return ret;
}

static long session_get_config(struct ktrack_session *s, void __user *arg)
{
	struct ktrack_config c;
	u32 usize;
	int ret;

	ret = ktrack_copy_sized_in(&c, sizeof(c), sizeof(c), arg, &usize);
	if (ret)
		return ret;
	mutex_lock(&s->lock);
	c = s->cfg;
	mutex_unlock(&s->lock);
	c.size = sizeof(c);
	if (copy_to_user(arg, &c, min_t(size_t, usize, sizeof(c))))
		return -EFAULT;
	return 0;
}

static long session_get_stats(struct ktrack_session *s, void __user *arg)
{
	struct ktrack_stats st;
	struct ktrack_cpu_stats_ext *cs = NULL;
	u32 usize, cpu, n, esize, copy;
	int ret;

	ret = ktrack_copy_sized_in(&st, sizeof(st), KTRACK_STATS_SIZE_V1, arg, &usize);
	if (ret)
		return ret;
	/*
	 * Entries as large as the caller says: 0 is the first struct (code
	 * built before the _ext counters); a larger one gets its tail zeroed.
	 */
	esize = st.cpu_stats_size ? st.cpu_stats_size : sizeof(struct ktrack_cpu_stats);
	if (esize < sizeof(struct ktrack_cpu_stats) || esize > 256 || esize % 8)
		return -EINVAL;
	copy = min_t(u32, esize, sizeof(*cs));
	if (st.nr_cpus && !st.cpus_ptr)
		return -EFAULT;
	n = min(st.nr_cpus, nr_cpu_ids);
	if (n) {
		cs = kvcalloc(n, sizeof(*cs), GFP_KERNEL);
		if (!cs)
			return -ENOMEM;
	}
	/* Filled under the locks, copied out after them (see the lock order). */
	mutex_lock(&s->lock);
	mutex_lock(&s->mmap_lock);
	for (cpu = 0; cpu < n; cpu++) {
		cs[cpu].s.cpu = cpu;
		cs[cpu].s.online = cpu_online(cpu);
		if (s->rings && s->rings[cpu])
			ktrack_ring_fill_stats(s->rings[cpu], &cs[cpu]);
	}
	st.state = s->state;
	st.flags = READ_ONCE(s->trig_off) ? KTRACK_STATS_F_TRIG_STOPPED : 0;
	st.flags |= ktrack_snapshot_stats_flags(s);
	st.__pad = 0;
	mutex_unlock(&s->mmap_lock);
	mutex_unlock(&s->lock);
	ret = 0;
	for (cpu = 0; cpu < n && !ret; cpu++) {
		u8 __user *to = (u8 __user *)u64_to_user_ptr(st.cpus_ptr) + (size_t)cpu * esize;

		if (copy_to_user(to, &cs[cpu], copy) || clear_user(to + copy, esize - copy))
			ret = -EFAULT;
	}
	kvfree(cs);
	if (ret)
		return ret;
	st.nr_cpus = nr_cpu_ids;
	st.size = sizeof(st);
	if (copy_to_user(arg, &st, min_t(size_t, usize, sizeof(st))))
		return -EFAULT;
	return 0;
}

long ktrack_session_ioctl(struct ktrack_file *f, struct ktrack_session *s, unsigned int cmd,
			  void __user *arg)
{
	long ret;

	switch (cmd) {
	case KTRACK_IOC_SET_CONFIG:
		return session_set_config(s, arg);
	case KTRACK_IOC_GET_CONFIG:
		return session_get_config(s, arg);
	case KTRACK_IOC_GET_STATS:
		return session_get_stats(s, arg);
	/*
	 * Named sessions outlive their fd and hold what others record: an fd
	 * handed to a process without the privilege to open the device reads
	 * its own session, but does not reach, make or end others (review
	 * 2026-11-27, S3-4), as PROBE_ADD re-checks too.
	 */
	case KTRACK_IOC_SESSION_CREATE:
		return perfmon_capable() ? ktrack_session_create(f, s, arg) : -EPERM;
	case KTRACK_IOC_SESSION_ATTACH:
		/* a group member's file: the sessions root shares (access.c) */
		return perfmon_capable() || f->member ? ktrack_session_attach(f, s, arg) : -EPERM;
	case KTRACK_IOC_SESSION_DESTROY:
		return perfmon_capable() ? ktrack_session_destroy(arg) : -EPERM;
	case KTRACK_IOC_SESSION_LIST:
		return ktrack_session_list(arg);
	/* its own lock; a torn-down session's snapshot can still be taken */
	case KTRACK_IOC_SNAPSHOT_GET:
		return ktrack_snapshot_get(s, arg);
	case KTRACK_IOC_START:
	case KTRACK_IOC_STOP:
	case KTRACK_IOC_FLUSH:
		break;
	default:
		/* the latency tracers belong to the file, not to its session */
		if (ktrack_latency_cmd_known(cmd))
			return ktrack_latency_ioctl(f, cmd, arg);
		break;
	}
	mutex_lock(&s->lock);
	if (s->dead) {
		ret = -ENODEV;
		goto out;
	}
	switch (cmd) {
	case KTRACK_IOC_START:
		ret = ktrack_session_start_locked(s);
		break;
	case KTRACK_IOC_STOP:
		ret = s->running ? 0 : -EALREADY;
		ktrack_session_stop_locked(s);
		break;
	case KTRACK_IOC_FLUSH:
		ktrack_rings_flush(s);
		/* After the LOST records: a poller that sees the seq sees them. */
		smp_wmb();
		WRITE_ONCE(s->flush_seq, s->flush_seq + 1);
		ktrack_session_wake(s);
		ret = 0;
		break;
	default:
		/*
		 * Each part owns a range of command numbers (ktrack_internal.h)
		 * and runs its ioctls without s->lock, which must not be held
		 * across their user copies; each checks ktrack_session_dead()
		 * under its own lock.  An unknown command, in a part's range
		 * or not, leaves the session untouched: probing for commands
		 * must not make a fresh fd impossible to attach (review
		 * finding #23).
		 */
		if (ktrack_probe_cmd_known(cmd) || ktrack_objtrace_cmd_known(cmd) ||
		    ktrack_stack_cmd_known(cmd)) {
			s->touched = true;
			mutex_unlock(&s->lock);
			if (ktrack_probe_cmd_known(cmd))
				return ktrack_probe_ioctl(s, cmd, arg);
			if (ktrack_stack_cmd_known(cmd))
				return ktrack_stack_ioctl(s, cmd, arg);
			return ktrack_objtrace_ioctl(s, cmd, arg);
		}
		ret = -ENOTTY;
	}
out:
	mutex_unlock(&s->lock);
	return ret;
}
