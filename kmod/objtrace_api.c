// SPDX-License-Identifier: GPL-2.0
/*
 * objtrace_api.c - ktrack_obj_track() / ktrack_obj_untrack(), exported for
 * drivers that name their own objects (KTRACK_OBJ_SRC_API): each call goes
 * to every enabled session configured with KTRACK_OBJF_API.  Callable from
 * any context: the list is walked under RCU, the table is lock-free.
 */
#include <linux/export.h>
#include <linux/rculist.h>

#include <ktrack/ktrack_objtrace.h>

#include "objtrace.h"

static int objtrace_api(const void *ptr, bool track, unsigned long ip)
{
	struct objtrace_state *st;
	int n = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(st, &objtrace_api_states, api_node) {
		if (track)
			n += !objtrace_track(st, (unsigned long)ptr, KTRACK_OBJ_SRC_API, ip, 0, NULL);
		else
			n += objtrace_untrack(st, (unsigned long)ptr, KTRACK_OBJ_END_API, ip, 0);
	}
	rcu_read_unlock();
	return n;
}

int ktrack_obj_track(const void *ptr)
{
	return objtrace_api(ptr, true, _RET_IP_);
}
EXPORT_SYMBOL_GPL(ktrack_obj_track);

int ktrack_obj_untrack(const void *ptr)
{
	return objtrace_api(ptr, false, _RET_IP_);
}
EXPORT_SYMBOL_GPL(ktrack_obj_untrack);
