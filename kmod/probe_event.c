// SPDX-License-Identifier: GPL-2.0
/*
 * probe_event.c - e probes: a trace event's own record, as its
 * TP_fast_assign filled it, read field by field (ftrace's eprobes).
 *
 * The event is found by "SUBSYS/EVENT" with trace_get_event_file() and
 * followed through one kernel perf event per online CPU
 * (PERF_TYPE_TRACEPOINT, PERF_SAMPLE_RAW, period 1): perf builds the
 * event's record as for 'perf record -e SUBSYS:EVENT' and hands it to the
 * overflow handler below, where KTRACK_FETCH_SRC_FIELD fetches read it at
 * the offsets of the event's format file.  Syscall events work the same
 * way.  CPUs that come online after arming are not followed.
 *
 * A module's event: perf takes a reference on the module per counter, so
 * that 'rmmod' would fail with EBUSY while the probe is armed.  ktrack's
 * probes follow their module instead (disarmed when it goes, armed again
 * when it comes back, as t probes are): the references are given back once
 * the counters exist and taken again just before they are released, and a
 * module notifier that runs before the trace events' own releases the
 * counters of a going module while its events still exist.
 */
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/trace_events.h>
#include <linux/tracepoint.h>

#include "probe_internal.h"

static notrace void kt_event_handler(struct perf_event *event, struct perf_sample_data *data,
				     struct pt_regs *regs)
{
	struct kt_probe *p = event->overflow_handler_context;
	struct kt_fetch_ctx ctx = { };

	if (!data->raw)
		return;
	ctx.raw = data->raw->frag.data;
	ctx.raw_size = data->raw->frag.size;
	/* no ip: the probe names its event */
	kt_probe_emit(p, &ctx, KTRACK_PROBE_EV_TP, 0, 0);
}
NOKPROBE_SYMBOL(kt_event_handler);

/*
 * "SUBSYS/EVENT" to its event file, held (so the module or dynamic event
 * behind it stays until the counters hold it in turn), checking its module
 * for MOD:.  A module still in its init is not there yet (-EAGAIN: the
 * probe waits): its init may fail, and a failed init frees the module
 * whatever references it, so e probes on its events are armed once it is
 * LIVE (probe_module.c).  A going module's event is not there (-EBUSY from
 * the reference it can no longer give).
 */
static struct trace_event_file *kt_event_file(struct kt_probe *p)
{
	char system[KTRACK_PROBE_SYM_MAX], *event;
	struct trace_event_file *file;
	struct trace_event_call *call;
	const struct module *mod;

	strscpy(system, p->symbol, sizeof(system));
	event = strchr(system, '/');
	if (!event)
		return ERR_PTR(-EINVAL);
	*event++ = '\0';
	file = trace_get_event_file(NULL, system, event);
	if (IS_ERR(file))
		return PTR_ERR(file) == -EINVAL || PTR_ERR(file) == -EBUSY ? ERR_PTR(-ENOENT) : file;
	call = file->event_call;
	mod = (call->flags & TRACE_EVENT_FL_DYNAMIC) ? NULL : call->module;
	if (p->module[0] && (!mod || strcmp(mod->name, p->module))) {
		trace_put_event_file(file);
		return ERR_PTR(-ENOENT);
	}
	if (mod && READ_ONCE(mod->state) != MODULE_STATE_LIVE) {
		trace_put_event_file(file);
		return ERR_PTR(READ_ONCE(mod->state) == MODULE_STATE_COMING ? -EAGAIN : -ENOENT);
	}
	return file;
}

static void kt_event_release(struct kt_probe *p)
{
	unsigned int cpu;

	if (!p->pevents)
		return;
	for_each_possible_cpu(cpu) {
		if (!p->pevents[cpu])
			continue;
		/* the reference perf will put (given back at arm) */
		if (p->event_mod)
			__module_get(p->event_mod);
		perf_event_release_kernel(p->pevents[cpu]);
	}
	kfree(p->pevents);
	p->pevents = NULL;
	p->event_mod = NULL;
}

/*
 * One counter per online CPU, without the CPU hotplug lock: perf takes it
 * itself when the first counter enables the tracepoint (taking it around
 * would nest it under event_mutex, against the kernel's order).  A CPU
 * going offline meanwhile is skipped.
 */
static int kt_event_arm(struct kt_probe *p)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_RAW,
		.wakeup_events = 1,
	};
	struct trace_event_file *file;
	unsigned int cpu;
	int ret = 0;

	file = kt_event_file(p);
	if (IS_ERR(file))
		return PTR_ERR(file);
	ret = kt_event_check_layout(p, file->event_call);
	if (ret)
		goto out;
	/* a field found by name may be a pointer, followed into the kernel */
	if (kt_locked_down(p)) {
		ret = -EPERM;
		goto out;
	}
	p->event_id = file->event_call->event.type;
	attr.config = p->event_id;
	p->pevents = kcalloc(nr_cpu_ids, sizeof(*p->pevents), GFP_KERNEL);
	if (!p->pevents) {
		ret = -ENOMEM;
		goto out;
	}
	for_each_online_cpu(cpu) {
		struct perf_event *ev;

		ev = perf_event_create_kernel_counter(&attr, cpu, NULL, kt_event_handler, p);
		if (IS_ERR(ev)) {
			if (PTR_ERR(ev) == -ENODEV)
				continue;
			ret = PTR_ERR(ev);
			break;
		}
		p->pevents[cpu] = ev;
	}
	if (ret) {
		kt_event_release(p);
		goto out;
	}
	/* Each counter holds the module (perf_trace_init()): give it back. */
	if (!(file->event_call->flags & TRACE_EVENT_FL_DYNAMIC) && file->event_call->module) {
		p->event_mod = file->event_call->module;
		for_each_possible_cpu(cpu)
			if (p->pevents[cpu])
				module_put(p->event_mod);
	}
out:
	trace_put_event_file(file);
	return ret;
}

/*
 * perf_event_release_kernel() takes the event off its CPU's list with an
 * IPI, which may land while a handler runs on that CPU (handlers run with
 * preemption, not interrupts, off): the handler may still be using the
 * probe when this returns.  kt_event_sync() waits for it.
 */
static void kt_event_disarm(struct kt_probe *p)
{
	kt_event_release(p);
}

/* Every tracepoint handler, perf's included, runs inside an RCU section. */
static void kt_event_sync(void)
{
	tracepoint_synchronize_unregister();
}

static int kt_event_in_module(struct kt_probe *p, struct module *mod)
{
	return p->event_mod == mod ? KT_IN_ALL : KT_IN_NONE;
}

const struct kt_probe_ops kt_event_ops = {
	.mechanism = KTRACK_MECH_PERF_EVENT,
	.wait_module = true,
	.arm_at_live = true,
	.arm = kt_event_arm,
	.disarm = kt_event_disarm,
	.sync_disarm = kt_event_sync,
	.in_module = kt_event_in_module,
};

/*
 * GOING, before the trace events' notifier (priority 1) removes the
 * module's events and before the tracepoints' (0) checks that no probe is
 * left on them: release the counters of the e probes on its events.  The
 * module's text and data stay until free_module(), after an RCU grace
 * period, so a handler still running meanwhile is safe.
 */
static int kt_event_module_notify(struct notifier_block *nb, unsigned long action, void *data)
{
	if (action != MODULE_STATE_GOING)
		return NOTIFY_DONE;
	mutex_lock(&kt_probe_lock);
	kt_module_going_locked(data, &kt_event_ops);
	mutex_unlock(&kt_probe_lock);
	return NOTIFY_DONE;
}

static struct notifier_block kt_event_module_nb = {
	.notifier_call = kt_event_module_notify,
	.priority = 2,
};

int kt_event_init(void)
{
	return register_module_notifier(&kt_event_module_nb);
}

void kt_event_exit(void)
{
	unregister_module_notifier(&kt_event_module_nb);
}
