// SPDX-License-Identifier: GPL-2.0
/*
 * probe_uevent.c - U probes: the writes of a typed user event
 * (user_event.c).  Arming binds the probe to the registered event of its
 * name, after finding each field the probe reads in the event's layout
 * (the probe names its fields, KTRACK_FETCH_F_BY_NAME, as an e probe does
 * for a module not loaded yet); disarming unbinds it.  An event that is
 * not registered leaves the probe PENDING, and registering it arms the
 * probe (kt_uevent_bind()).  Everything here runs under kt_probe_lock.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/rculist.h>
#include <linux/rcupdate.h>
#include <linux/string.h>

#include "probe_internal.h"
#include "user_event.h"

static const struct kt_uevent_field *kt_uev_field(const struct kt_uevent *ev, const char *name)
{
	u16 i;

	for (i = 0; i < ev->nr_fields; i++)
		if (!strcmp(ev->fields[i].name, name))
			return &ev->fields[i];
	return NULL;
}

/*
 * The probe's type against the field's: a string reads a char[N] in
 * place or a char[] where its location says; a number fits in its field
 * (a char[N] read as bytes too).
 */
static int kt_uev_fit(struct kt_fetch *f, const struct kt_uevent_field *fl)
{
	bool string = f->type == KTRACK_FETCH_T_STRING;

	f->param = fl->offset;
	f->flags &= ~KTRACK_FETCH_F_DATA_LOC;
	if (string) {
		if (fl->kind == KT_UEV_NUM)
			return -EINVAL;
		if (fl->kind == KT_UEV_DYN)
			f->flags |= KTRACK_FETCH_F_DATA_LOC;
		return 0;
	}
	if (fl->kind == KT_UEV_DYN)
		return -EINVAL;
	return f->size * f->count <= fl->size ? 0 : -EINVAL;
}

static int kt_uevent_arm(struct kt_probe *p)
{
	struct kt_uevent *ev = kt_uevent_find(p->symbol);
	u16 i;

	if (!ev)
		return -ENOENT;
	for (i = 0; i < p->nr_fetch; i++) {
		struct kt_fetch *f = &p->fetch[i];
		const char *name = p->strtab + f->name_off;
		const struct kt_uevent_field *fl;

		if (!(f->flags & KTRACK_FETCH_F_BY_NAME))
			continue;
		fl = kt_uev_field(ev, name);
		if (!fl) {
			pr_warn("probe %s: user event %s has no field '%s'\n", p->name, ev->name, name);
			return -EINVAL;	/* (-ENOENT: no such event) */
		}
		if (kt_uev_fit(f, fl)) {
			pr_warn("probe %s: field '%s' of user event %s (%u bytes) does not fit the probe's type\n",
				p->name, name, ev->name, fl->size);
			return -EINVAL;
		}
	}
	/*
	 * A writer may still walk the list this node left (UNREG and REG
	 * again in a row): it must not follow the node into another list.
	 */
	if (p->uev_gp_set)
		cond_synchronize_rcu(p->uev_gp);
	p->uev = ev;
	list_add_tail_rcu(&p->uev_node, &ev->probes);
	kt_uevent_set_armed(ev, 1);
	return 0;
}

static void kt_uevent_disarm(struct kt_probe *p)
{
	list_del_rcu(&p->uev_node);
	p->uev_gp = get_state_synchronize_rcu();
	p->uev_gp_set = true;
	kt_uevent_set_armed(p->uev, -1);
	p->uev = NULL;
}

/* Writers walk an event's probes under rcu_read_lock(). */
static void kt_uevent_sync(void)
{
	synchronize_rcu();
}

const struct kt_probe_ops kt_uevent_ops = {
	.mechanism = KTRACK_MECH_UEVENT,
	.arm = kt_uevent_arm,
	.disarm = kt_uevent_disarm,
	.sync_disarm = kt_uevent_sync,
};
