/* SPDX-License-Identifier: GPL-2.0 */
/*
 * session.h - sessions: anonymous (one per open file) and named (survive
 * their creator).  Private to the transport; other parts see only the
 * opaque struct ktrack_session of ktrack_internal.h.
 */
#ifndef _KTRACK_SESSION_H
#define _KTRACK_SESSION_H

#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include <uapi/ktrack.h>

#include "snapshot.h"

struct kt_graph;
struct ktrack_ring;
struct file;
struct vm_area_struct;

struct ktrack_session {
	struct kref ref;		/* files, mappings, the name table */
	u64 id;
	char name[KTRACK_SESSION_NAME_MAX];	/* "" when anonymous */
	bool named;
	struct list_head named_node;	/* ktrack_named, under ktrack_sessions_mutex */
	struct list_head run_node;	/* ktrack_running (RCU) while running */

	/*
	 * Neither mutex is ever held across a user copy: mmap() takes
	 * mmap_lock before them.  'lock' serializes config and state
	 * changes; 'mmap_lock' (inside 'lock') guards what mmap() needs:
	 * the rings (allocation, freeing), cfg.buf_pages and cfg.mode
	 * (changed under both), and 'dead' (set under both).
	 */
	struct mutex lock;		/* config, state, START/STOP */
	struct mutex mmap_lock;		/* rings; taken by mmap() */
	struct mutex read_lock;		/* one read() at a time */
	/*
	 * The files attached here, woken on new data, STOP, FLUSH and
	 * teardown.  Waiters (poll, read) sleep on their file's queue, not
	 * the session's: a file changes session (attach) while polled.
	 */
	spinlock_t files_lock;		/* also taken from irq_work */
	struct list_head files;		/* struct ktrack_file.node */

	struct ktrack_config cfg;
	u32 wm_bytes;			/* wakeup watermark */
	u32 state;			/* KTRACK_STATE_* */
	int running;			/* read locklessly by writers */
	/*
	 * A probe's STOP action paused recording (a START action or the
	 * START ioctl resumes it): set and read locklessly by handlers.
	 */
	int trig_off;
	bool dead;			/* torn down: destroyed or closed */
	bool crash_dumped;		/* printed by an oops or panic (crash_dump.c) */
	bool touched;			/* configured, started, mapped, ... */
	bool counted;			/* one of max_sessions */
	/* KTRACK_CFG_F_GROUP: set by SET_CONFIG, never cleared (access.c) */
	bool shared;
	/*
	 * Bumped by FLUSH and STOP: a file whose flush_seen differs wakes on
	 * any data until poll() finds it drained.  Per file, so that a
	 * second poller or a concurrent FLUSH loses nothing (finding #14).
	 */
	u32 flush_seq;
	bool leaving;			/* its file attaches elsewhere: no mmap */
	atomic_t nr_fds;
	atomic_t nr_maps;

	u32 nr_rings;			/* nr_cpu_ids */
	struct ktrack_ring **rings;	/* per possible CPU; NULL until allocated */
	u64 rings_gen;			/* bumped at each allocation, under mmap_lock */
	unsigned long pages_charged;	/* of max_total_pages, while 'rings' exist */
	u32 read_cpu;			/* read(): CPU to start with (fairness) */
	struct ktrack_snap snap;	/* the SNAPSHOT action's copy (snapshot.c) */
	/* graph scopes (probe_graph.c): set with the first ROOT probe, then kept */
	struct kt_graph *graph;
};

/* Per open file: the session it is attached to (swapped by attach). */
struct ktrack_file {
	spinlock_t lock;
	struct ktrack_session *s;
	struct list_head node;		/* s->files, under s->files_lock */
	wait_queue_head_t wq;		/* poll() and read() of this file */
	u32 flush_seen;			/* s->flush_seq that poll() found drained */
	/* user events (user_event.c): those it registered, under kt_probe_lock */
	DECLARE_BITMAP(uev_ids, KTRACK_UEVENT_MAX);
	bool uev_writer;		/* write(2) emits user events, not markers */
	bool member;			/* opened without CAP_PERFMON (access.c) */
};

/*
 * ERR_PTR(-EMFILE) beyond max_sessions, ERR_PTR(-ENOMEM).  'counted': one
 * of max_sessions (all but a group member's inert anonymous session, which
 * max_group_files bounds instead: access.c).
 */
struct ktrack_session *ktrack_session_new(const char *name, bool counted);
/* probe_graph.c: the session's graph scopes, with the session */
void kt_graph_free(struct ktrack_session *s);
/* 0, or -E2BIG when its rings would exceed max_pages_per_session. */
int ktrack_session_check_pages(struct ktrack_session *s);
/*
 * The module-wide budget of ring pages (max_total_pages): charge 'n'
 * pages, 0 or -ENOSPC when every session together would exceed it.
 */
int ktrack_ring_pages_charge(unsigned long n);
void ktrack_ring_pages_uncharge(unsigned long n);
void ktrack_session_put(struct ktrack_session *s);
static inline void ktrack_session_get(struct ktrack_session *s)
{
	kref_get(&s->ref);
}

/* A new file on 's' (its first session), and its last close. */
void ktrack_session_add_file(struct ktrack_session *s, struct ktrack_file *f);
void ktrack_session_del_file(struct ktrack_session *s, struct ktrack_file *f);
/* Wake the poll()ers and readers of every file attached to 's' (any context but NMI). */
void ktrack_session_wake(struct ktrack_session *s);

/* The session of 'f', with a reference. */
struct ktrack_session *ktrack_file_session(struct ktrack_file *f);
/* Last close of a file attached to 's'. */
void ktrack_session_file_release(struct ktrack_session *s);

/* session.c: under s->lock (START, STOP) or taking it (teardown, once). */
int ktrack_session_start_locked(struct ktrack_session *s);
void ktrack_session_stop_locked(struct ktrack_session *s);
void ktrack_session_teardown(struct ktrack_session *s);
/* Wakeup watermark of a config, in bytes; its rings over max_pages_per_session? */
u32 ktrack_config_watermark(const struct ktrack_config *c);
bool ktrack_config_over_limit(const struct ktrack_config *c);

/* session_named.c: CREATE, ATTACH, DESTROY, LIST. */
long ktrack_session_create(struct ktrack_file *f, struct ktrack_session *cur, void __user *arg);
long ktrack_session_attach(struct ktrack_file *f, struct ktrack_session *cur, void __user *arg);
long ktrack_session_destroy(void __user *arg);
long ktrack_session_list(void __user *arg);

/* session_ioctl.c */
long ktrack_session_ioctl(struct ktrack_file *f, struct ktrack_session *s,
			  unsigned int cmd, void __user *arg);
/* session_named.c - read(): attach a pristine anonymous file to "default". */
void ktrack_session_maybe_attach_default(struct ktrack_file *f);
/* session_mmap.c */
int ktrack_session_mmap(struct ktrack_session *s, struct vm_area_struct *vma);
bool ktrack_session_readable(struct ktrack_session *s, struct ktrack_file *f);
/* poll() found nothing to read: a flush seen so far is drained. */
void ktrack_session_flush_drained(struct ktrack_session *s, struct ktrack_file *f, u32 seq);

#endif /* _KTRACK_SESSION_H */
