/* SPDX-License-Identifier: GPL-2.0 */
/*
 * user_event.h - typed user events (KTRACK_FEAT_USER_EVENT): the registry
 * (user_event.c), shared with the probe kind that follows them
 * (probe_uevent.c).
 */
#ifndef _KTRACK_USER_EVENT_H
#define _KTRACK_USER_EVENT_H

#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/types.h>
#include <uapi/ktrack.h>

struct ktrack_file;
struct iov_iter;

#define KT_UEV_NUM	1	/* u8..s64 */
#define KT_UEV_ARRAY	2	/* char[N], in place */
#define KT_UEV_DYN	3	/* char[]: a __u32 (length << 16) | offset */

struct kt_uevent_field {
	char name[KTRACK_FETCH_NAME_MAX];
	u16 offset;
	u16 size;
	u8 kind;		/* KT_UEV_* */
	bool is_signed;
};

/*
 * A registered event.  Its description never changes once published
 * (kt_uevents[], RCU); 'probes' and 'nr_armed' change under kt_probe_lock,
 * the list read under RCU by writers.
 */
struct kt_uevent {
	u32 id;
	u32 refs;		/* files that registered it (under kt_probe_lock) */
	char name[KTRACK_UEVENT_NAME_MAX];
	char *format;		/* canonical description */
	u32 fixed_size;
	u16 nr_fields;
	u16 nr_dyn;
	struct list_head probes;	/* struct kt_probe.uev_node */
	u32 nr_armed;
	struct rcu_head rcu;
	struct kt_uevent_field fields[];
};

/* Under kt_probe_lock: the event registered as 'name', or NULL. */
struct kt_uevent *kt_uevent_find(const char *name);
/* Under kt_probe_lock: probes armed on 'ev' changed by 'delta'. */
void kt_uevent_set_armed(struct kt_uevent *ev, int delta);

/* ktrack_main.c */
long ktrack_uevent_ioctl(struct ktrack_file *f, unsigned int cmd, void __user *arg);
bool ktrack_uevent_cmd_known(unsigned int cmd);
ssize_t ktrack_uevent_write(struct ktrack_file *f, struct iov_iter *from);
int ktrack_uevent_mmap(struct vm_area_struct *vma);
void ktrack_uevent_file_release(struct ktrack_file *f);
int ktrack_uevent_init(void);
void ktrack_uevent_exit(void);

#endif /* _KTRACK_USER_EVENT_H */
