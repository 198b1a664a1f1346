// SPDX-License-Identifier: GPL-2.0
/*
 * latency.c - the latency tracers' ioctls (0x50..0x57, KTRACK_FEAT_LATENCY):
 * checks a START, runs the tracer of its kind (latency_timer.c,
 * latency_noise.c) on behalf of the file that asked, and stops it at STOP,
 * at that file's close or at module unload.  One tracer of each kind for
 * the whole module: their threads own the CPUs they measure, and two of
 * them would measure each other.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ktrack_internal.h"
#include "latency.h"

/* Serialises start and stop; owner[kind]: the file running that tracer. */
static DEFINE_MUTEX(kt_lat_lock);
static struct ktrack_file *kt_lat_owner[KTRACK_LATENCY_NOISE + 1];

static void kt_lat_stop_kind(u32 kind)
{
	lockdep_assert_held(&kt_lat_lock);
	if (kind == KTRACK_LATENCY_TIMER)
		kt_timerlat_stop();
	else
		kt_osnoise_stop();
	kt_lat_owner[kind] = NULL;
}

/* The request's CPUs: each one online; none named: every online CPU. */
static int kt_lat_cpus(const struct ktrack_latency_req *req, struct cpumask *mask)
{
	bool any = false;
	unsigned int i;

	cpumask_clear(mask);
	for (i = 0; i < ARRAY_SIZE(req->cpus) * 64; i++) {
		if (!(req->cpus[i / 64] & (1ULL << (i % 64))))
			continue;
		if (i >= nr_cpu_ids || !cpu_online(i))
			return -EINVAL;
		cpumask_set_cpu(i, mask);
		any = true;
	}
	if (!any)
		cpumask_copy(mask, cpu_online_mask);
	return 0;
}

static int kt_lat_check(const struct ktrack_latency_req *req)
{
	if (req->size != sizeof(*req) || req->reserved[0] || req->reserved[1])
		return -EINVAL;
	if (req->period_ns < KTRACK_LATENCY_PERIOD_MIN || req->period_ns > KTRACK_LATENCY_PERIOD_MAX)
		return -EINVAL;
	switch (req->kind) {
	case KTRACK_LATENCY_TIMER:
		return req->runtime_ns || req->tolerance_ns ? -EINVAL : 0;
	case KTRACK_LATENCY_NOISE:
		/* a tolerance of a period or more would never see noise */
		if (!req->runtime_ns || req->runtime_ns > req->period_ns ||
		    req->tolerance_ns >= req->period_ns)
			return -EINVAL;
		return 0;
	default:
		return -EINVAL;
	}
}

static long kt_lat_start(struct ktrack_file *f, void __user *arg)
{
	struct ktrack_latency_req req;
	cpumask_var_t mask;
	long ret;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	ret = kt_lat_check(&req);
	if (ret)
		return ret;
	if (!zalloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	mutex_lock(&kt_lat_lock);
	ret = kt_lat_cpus(&req, mask);
	if (ret)
		goto out;
	if (kt_lat_owner[req.kind]) {
		ret = -EBUSY;
		goto out;
	}
	if (req.kind == KTRACK_LATENCY_TIMER)
		ret = kt_timerlat_start(mask, req.period_ns);
	else
		ret = kt_osnoise_start(mask, req.period_ns, req.runtime_ns, req.tolerance_ns);
	if (!ret)
		kt_lat_owner[req.kind] = f;
out:
	mutex_unlock(&kt_lat_lock);
	free_cpumask_var(mask);
	return ret;
}

/* Stops the tracers 'f' runs; -EALREADY when it runs none. */
static long kt_lat_stop_file(struct ktrack_file *f)
{
	long ret = -EALREADY;
	u32 kind;

	mutex_lock(&kt_lat_lock);
	for (kind = KTRACK_LATENCY_TIMER; kind <= KTRACK_LATENCY_NOISE; kind++) {
		if (f && kt_lat_owner[kind] != f)
			continue;
		if (!kt_lat_owner[kind])
			continue;
		kt_lat_stop_kind(kind);
		ret = 0;
	}
	mutex_unlock(&kt_lat_lock);
	return ret;
}

bool ktrack_latency_cmd_known(unsigned int cmd)
{
	return cmd == KTRACK_IOC_LATENCY_START || cmd == KTRACK_IOC_LATENCY_STOP;
}

long ktrack_latency_ioctl(struct ktrack_file *f, unsigned int cmd, void __user *arg)
{
	/* kernel threads that take CPUs, and tracepoint handlers */
	if (!perfmon_capable())
		return -EPERM;
	switch (cmd) {
	case KTRACK_IOC_LATENCY_START:
		return kt_lat_start(f, arg);
	case KTRACK_IOC_LATENCY_STOP:
		return kt_lat_stop_file(f);
	default:
		return -ENOTTY;
	}
}

void ktrack_latency_file_release(struct ktrack_file *f)
{
	kt_lat_stop_file(f);
}

void ktrack_latency_exit(void)
{
	kt_lat_stop_file(NULL);
}
