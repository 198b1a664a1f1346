/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktrack_internal.h - the contract between the parts of ktrack.ko:
 *   transport (session*.c, ring*.c, ktrack_main.c): sessions and rings;
 *   probes (probe*.c): ioctl numbers 0x20..0x2f;
 *   object tracker (objtrace*.c): ioctl numbers 0x30..0x3f;
 *   stack tracer (stack_tracer.c): ioctl numbers 0x40..0x4f;
 *   latency tracers (latency*.c): ioctl numbers 0x50..0x57.
 * Each part implements its hooks; the transport calls them.
 */
#ifndef _KTRACK_INTERNAL_H
#define _KTRACK_INTERNAL_H

#include <linux/types.h>
#include <uapi/ktrack.h>

struct ktrack_session;

/*
 * Writing records (transport).  Safe from any context: task, softirq,
 * hardirq and NMI, nested; never sleeps, never allocates.
 *
 *   struct ktrack_reservation res;
 *   struct my_payload *p = ktrack_ring_reserve(s, TYPE, sizeof(*p), &res);
 *   if (p) { fill *p; ktrack_ring_commit(s, &res); }
 *
 * reserve() fills the record header (len, type, cpu, flags, ts, pid, tgid)
 * and returns the payload, or NULL when the record is dropped (session not
 * running, filtered, buffer full: counted in the stats).  Between reserve
 * and commit the caller must not migrate (reserve disables preemption,
 * commit re-enables it).
 */
struct ktrack_reservation {
	void *rec;		/* the record header */
	u32 len;		/* total length, header included */
	int cpu;
	unsigned long irqflags;	/* for the transport's use */
	u64 pos;		/* for the transport's use */
	u32 records;		/* 1, or 2 for a linked pair */
};

void *ktrack_ring_reserve(struct ktrack_session *s, u16 type, u32 payload_len,
			  struct ktrack_reservation *res);
void ktrack_ring_commit(struct ktrack_session *s, struct ktrack_reservation *res);

/* reserve + memcpy + commit; returns 0 or -ENOSPC when dropped. */
int ktrack_session_write(struct ktrack_session *s, u16 type,
			 const void *payload, u32 len);

/*
 * The same for records that describe the system rather than an event (a
 * module came or went): written whatever the session's pid/CPU filter.
 */
int ktrack_session_write_meta(struct ktrack_session *s, u16 type,
			      const void *payload, u32 len);

/*
 * Two records as one unit (KTRACK_RECF_LINKED on the first): one
 * reservation, so nothing falls between them and neither is dropped,
 * overwritten or read without the other.  0 or -ENOSPC (both dropped).
 */
/*
 * Would an event written now be kept (running, not paused by a STOP
 * action, pid/CPU filters)?  A hint.  selects(): the same, paused or not.
 */
bool ktrack_session_accepts(struct ktrack_session *s);
bool ktrack_session_selects(struct ktrack_session *s);
int ktrack_session_write_linked(struct ktrack_session *s, u16 type, const void *payload,
				u32 len, u16 type2, const void *payload2, u32 len2);

/* Every running session gets the record (ktrack_session_write_meta()). */
void ktrack_emit_meta(u16 type, const void *payload, u32 len);

/*
 * A walk over the functions of a module that ftrace can attach to
 * (probe_modglob.c): f probes on fprobe, and the object tracker's hooks,
 * follow a module that goes.
 */
struct module;
#define KT_TEXT_CORE	1
#define KT_TEXT_INIT	2
struct kt_funcs_walk {
	unsigned int text;	/* KT_TEXT_*: which text */
	/* is the function of that name wanted?  Asked first (cheap) */
	bool (*want)(struct kt_funcs_walk *w, const char *name);
	/* a wanted function ftrace can attach to; nonzero ends the walk */
	int (*take)(struct kt_funcs_walk *w, const char *name, unsigned long addr, bool init);
};
int kt_module_funcs(struct module *mod, struct kt_funcs_walk *w);

/* Module load/unload records (module_events.c). */
int ktrack_module_events_init(void);
void ktrack_module_events_exit(void);

/*
 * Torn down (closed or destroyed)?  Part ioctls run without the session's
 * lock: they check this under their own lock before attaching anything.
 */
bool ktrack_session_dead(struct ktrack_session *s);

/* Session time in the session's clock (what record headers carry). */
u64 ktrack_session_clock(struct ktrack_session *s);

/*
 * The SNAPSHOT action (snapshot.c), from a probe handler: claim the
 * session's slot (false: counted missed), write the trigger record, then
 * queue the copy of everything up to now.
 */
bool ktrack_snapshot_claim(struct ktrack_session *s);
void ktrack_snapshot_queue(struct ktrack_session *s, u32 probe_id, u64 nth);
/* Can 's' take snapshots (overwrite mode)?  Checked when a probe is added. */
bool ktrack_session_overwrite(struct ktrack_session *s);

/* Hooks implemented by the probe part (probe*.c). */
long ktrack_probe_ioctl(struct ktrack_session *s, unsigned int cmd,
			void __user *arg);
/* Is 'cmd' one of the probe part's commands (else ENOTTY, session untouched)? */
bool ktrack_probe_cmd_known(unsigned int cmd);
/* Detach and free every probe of 's'; may sleep.  Called on teardown. */
void ktrack_probe_session_release(struct ktrack_session *s);
/* Number of probes attached to 's' (session list); may sleep. */
u32 ktrack_probe_count(struct ktrack_session *s);
int ktrack_probe_init(void);
void ktrack_probe_exit(void);
/* KTRACK_FEAT_* bits of the probe part (OR'ed into the version reply). */
u64 ktrack_probe_features(void);

/* Hooks implemented by the object tracker (objtrace*.c). */
long ktrack_objtrace_ioctl(struct ktrack_session *s, unsigned int cmd,
			   void __user *arg);
bool ktrack_objtrace_cmd_known(unsigned int cmd);
void ktrack_objtrace_session_release(struct ktrack_session *s);
u64 ktrack_objtrace_features(void);
int ktrack_objtrace_init(void);
void ktrack_objtrace_exit(void);

/* Tracing from load (boot_trace.c): module parameters probes=, session=, flight=. */
int ktrack_boot_trace_init(void);
/* Init's unwind only: destroys the session boot_trace_init() made. */
void ktrack_boot_trace_exit(void);
struct ktrack_session *ktrack_session_create_kernel(const char *name);
void ktrack_session_destroy_kernel(struct ktrack_session *s);
/* PROBE_ADD from the kernel: takes 'desc' (kvmalloc'ed) in every case. */
int ktrack_probe_add_kernel(struct ktrack_session *s, void *desc, u32 size,
			    struct ktrack_probe_add *res);

/* The dump on oops and panic (crash_dump.c). */
int ktrack_crash_dump_init(void);
void ktrack_crash_dump_exit(void);
/*
 * For the die and panic paths, under rcu_read_lock() (the caller's), taking
 * no lock: the running session after 'prev' (NULL: the first), or NULL.
 */
struct ktrack_session *ktrack_running_next(struct ktrack_session *prev);
/*
 * The name of probe 'id' of 's' into buf, read without locks and without
 * faulting (die and panic paths): false when it cannot be told.
 */
bool ktrack_probe_name_nofault(struct ktrack_session *s, u32 id, char *buf, size_t len);

/* Hooks implemented by the stack tracer (stack_tracer.c). */
long ktrack_stack_ioctl(struct ktrack_session *s, unsigned int cmd, void __user *arg);
bool ktrack_stack_cmd_known(unsigned int cmd);
/* Stops the tracer if 's' owns it; may sleep.  Called on teardown. */
void ktrack_stack_session_release(struct ktrack_session *s);
void ktrack_stack_exit(void);

/*
 * Hooks implemented by the latency tracers (latency.c).  They belong to the
 * file that started them (no session needed); released with it.  May sleep.
 */
struct ktrack_file;
long ktrack_latency_ioctl(struct ktrack_file *f, unsigned int cmd, void __user *arg);
bool ktrack_latency_cmd_known(unsigned int cmd);
void ktrack_latency_file_release(struct ktrack_file *f);
void ktrack_latency_exit(void);

#endif /* _KTRACK_INTERNAL_H */
