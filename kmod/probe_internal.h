/* SPDX-License-Identifier: GPL-2.0 */
/*
 * probe_internal.h - shared by the probe engine's files:
 *   probe.c         ioctls, the probe registry, lifecycle
 *   probe_module.c  MOD: targets and the module notifier
 *   probe_desc.c    validation of a description blob into a struct kt_probe
 *   probe_fetch.c   fetch engine, filter VM, record emission (handler side)
 *   probe_kprobe.c  kprobe / kretprobe attach (p, r, and f without fprobe)
 *   probe_fprobe.c  fprobe attach (f where CONFIG_FPROBE exists)
 *   probe_ftrace.c  f over a kernel glob: ktrack's own ftrace_ops
 *   probe_modglob.c f MOD:GLOB: the globs resolved against a coming module
 *   probe_tp.c      tracepoint attach (t)
 *   probe_event.c   trace event records through perf (e)
 *   probe_event_fields.c  e fields named before their module loads
 *   probe_graph.c   graph scoping: ROOT and SCOPED f probes
 *   probe_uprobe.c  uprobe attach (u, ur)
 *   probe_uevent.c  typed user events (U), bound to user_event.c's registry
 */
#ifndef _KTRACK_PROBE_INTERNAL_H
#define _KTRACK_PROBE_INTERNAL_H

#include <linux/atomic.h>
#include <linux/fprobe.h>	/* struct fprobe, embedded */
#include <linux/kprobes.h>	/* struct kprobe, kretprobe, embedded */
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/types.h>

#include "ktrack_internal.h"

struct module;
struct perf_event;
struct pt_regs;
struct tracepoint;
struct kt_uprobe;
struct kt_uevent;

/* A validated fetch step (see struct ktrack_probe_fetch). */
struct kt_fetch {
	u8 src;
	u8 type;
	u8 size;
	u8 nderef;
	u16 count;
	u16 flags;
	s64 param;
	s32 deref[KTRACK_FETCH_MAX_DEREF];
	u16 slot;		/* offset of its slot in data[] */
	u16 slot_len;		/* bytes of the slot */
	u16 name_off;		/* KTRACK_FETCH_F_BY_NAME: the field's name in strtab */
	bool direct;		/* an argument, $retval or $duration as it is: kt_fill() inline */
};

/* One attach point of a kprobe-based probe. */
struct kt_func {
	struct kt_probe *probe;
	struct kprobe kp;
	struct kretprobe rp;
	const char *name;	/* "MOD:SYM" or "SYM"; NULL when by address */
};

/* Per-CPU counters of one probe. */
struct kt_probe_stats {
	u64 hits;
	u64 filtered;
	u64 dropped;
	u64 faults;
	u64 missed;		/* handler nesting guard */
	u64 idle;		/* hit while the session was not recording */
};

/* What the entry side keeps for the exit side (kretprobe/fprobe data). */
struct kt_entry_data {
	u64 ts;
	unsigned long args[KTRACK_FETCH_MAX_ARG];
};

struct kt_probe;

/*
 * How one kind of probe attaches (chosen once, when the probe is created;
 * see kt_probe_ops_of() in probe.c).  Every callback runs in process
 * context under kt_probe_lock, except sync_disarm.
 *   arm        attach; 0 or -errno (-ENOENT: the target does not exist)
 *   disarm     detach; no handler runs on the probe once it returns
 *   missed     kernel-side misses of the current arm (NULL: none)
 *   in_module  how many armed attach points are inside 'mod': KT_IN_NONE,
 *              KT_IN_SOME or KT_IN_ALL (NULL: never any)
 *   sync_disarm  NULL when disarm waits for running handlers itself;
 *              else disarm does not, and this waits for every disarm done
 *              before it (one call after many disarms; probe.c calls it
 *              without kt_probe_lock, before freeing)
 *   gone       how many the kernel has killed under us, KT_IN_* (NULL: it
 *              never does, or we cannot tell)
 *   leave      (f by name, fprobe) the armed attach points inside 'mod' -
 *              its init text only when 'init_only' - leave the probe while
 *              the others stay attached, and are remembered for rejoin:
 *              KT_IN_NONE (none there), KT_IN_SOME (they left), KT_IN_ALL
 *              (all there: nothing done, the caller disarms) or -errno
 *              (the caller disarms)
 *   rejoin     (f by name, fprobe) the attach points that left, found
 *              again in 'mod' (COMING), rejoin the armed probe: 0 or -errno
 *              (those it could not attach stay out)
 * 'mechanism' is the KTRACK_MECH_* reported to userspace; 'wait_module'
 * says a MOD:SYM target whose module is not loaded yet stays pending;
 * 'arm_at_live' that it arms when that module is LIVE, not COMING.
 */
struct kt_probe_ops {
	u32 mechanism;
	bool wait_module;
	bool arm_at_live;
	int (*arm)(struct kt_probe *p);
	void (*disarm)(struct kt_probe *p);
	u64 (*missed)(struct kt_probe *p);
	int (*in_module)(struct kt_probe *p, struct module *mod);
	int (*gone)(struct kt_probe *p);
	int (*leave)(struct kt_probe *p, struct module *mod, bool init_only);
	int (*rejoin)(struct kt_probe *p, struct module *mod);
	void (*sync_disarm)(void);
};

/*
 * Arguments a t: probe sees: kt_tp_handler() gets the tracepoint's data
 * pointer and 5 more register arguments (a 6th would be on the stack).
 */
#define KT_TP_NR_ARGS	5
/* longest event field name a probe may give (KTRACK_FETCH_F_BY_NAME) */
#define KT_FIELD_NAME_MAX	64

#define KT_IN_NONE	0
#define KT_IN_SOME	1
#define KT_IN_ALL	2

/* probe_kprobe.c: p, r, and f where the kernel has no fprobe */
extern const struct kt_probe_ops kt_kprobe_ops;
extern const struct kt_probe_ops kt_kretprobe_ops;
extern const struct kt_probe_ops kt_kprobe_funcs_ops;
/* probe_fprobe.c: f */
extern const struct kt_probe_ops kt_fprobe_ops;
/* probe_ftrace.c: f with KTRACK_PROBE_F_KERNEL_GLOB */
extern const struct kt_probe_ops kt_ftrace_glob_ops;
/* probe_tp.c: t, and the table of module tracepoints (under kt_probe_lock) */
extern const struct kt_probe_ops kt_tp_ops;
/* probe_tp.c: a tracepoint of vmlinux by name, or NULL (latency_noise.c too) */
struct tracepoint *kt_tp_find_kernel(const char *name);
int kt_tp_init(void);
void kt_tp_exit(void);
/* probe_event.c: e */
extern const struct kt_probe_ops kt_event_ops;
int kt_event_init(void);
void kt_event_exit(void);
/* probe_event_fields.c */
struct trace_event_call;
int kt_event_check_layout(struct kt_probe *p, struct trace_event_call *call);

/* A trigger (ktrack_probe_action), run by the handler (probe_fetch.c). */
struct kt_action {
	u16 type;			/* KTRACK_ACT_* */
	u32 count;			/* times it acts; 0 = always */
	atomic64_t fired;		/* times asked, the last one's 'nth' */
};

struct kt_probe {
	struct list_head node;		/* kt_probes, under kt_probe_lock */
	struct ktrack_session *session;
	const struct kt_probe_ops *ops;	/* by kind, set at creation */
	u32 id;
	u32 kind;
	u32 flags;
	u32 mechanism;
	u32 state;
	u32 arm_count;
	char name[KTRACK_PROBE_NAME_MAX];
	char module[KTRACK_PROBE_MOD_MAX];
	char symbol[KTRACK_PROBE_SYM_MAX];
	char gone_module[KTRACK_PROBE_MOD_MAX];	/* disarmed by its unload */
	u64 addr;
	u64 offset;
	u64 hit_limit;
	atomic64_t recorded;		/* records counted against hit_limit */
	u32 maxactive;
	u32 stack_depth;
	u16 nr_actions;
	bool has_snapshot;		/* its session must be in overwrite mode */
	bool has_start;			/* a START action: runs while paused */
	struct kt_action actions[KTRACK_PROBE_MAX_ACTIONS];
	u16 nr_fetch;
	u16 nr_insns;
	u32 fixed_len;			/* bytes of the slots */
	u8 nr_args;			/* the highest $argN any fetch reads */
	bool has_strings;
	bool all_direct;		/* every fetch kt_fetch.direct: none can fault */
	bool no_gaps;			/* all_direct, the slots end to end: nothing to zero */
	bool reads_kernel;		/* deref, kernel string or @SYM */
	struct kt_fetch *fetch;
	struct ktrack_probe_insn *insns;
	const char *strtab;
	u32 strtab_len;
	void *desc;			/* the blob as given (PROBE_GET) */
	u32 desc_size;

	/* attach state */
	u32 nr_funcs;
	const char **func_names;	/* f: into desc (globs when mod_glob) */
	bool mod_glob;			/* f MOD:GLOB: resolved at its module's load */
	u32 nr_globs;			/* mod_glob: func_names[nr_globs] */
	unsigned long *func_addrs;	/* mod_glob, while armed: nr_funcs addresses */
	u32 nr_init_funcs;		/* of them, in the module's init text */
	struct kt_func *funcs;		/* kprobe mechanisms: nr_funcs */
	unsigned long *funcs_left;	/* fprobe by name: bitmap over func_names */
	u32 nr_left;			/* of them, left with their module's text */
	struct kprobe **kps;		/* registered kprobes (batch ops) */
	struct kretprobe **rps;
	u32 nr_kps;
	u32 nr_rps;
	struct fprobe fp;
	struct ftrace_ops *fops;	/* KERNEL_GLOB, while armed (probe_ftrace.c) */
	struct tracepoint *tp;
	struct perf_event **pevents;	/* e: per CPU, nr_cpu_ids */
	u64 event_id;			/* e: the event's type (perf config) */
	struct module *event_mod;	/* e, while armed: the module of its event */
	u32 layout_hash;		/* e on a module's event: its fields when first armed */

	u64 missed_acc;			/* kernel-side misses of past arms */
	struct kt_probe_stats __percpu *stats;
	struct kt_profile *profile;	/* KTRACK_PROBE_F_PROFILE: per-CPU tables */
	u32 graph_depth;		/* KTRACK_PROBE_F_GRAPH_SCOPED: 0 = no limit */
	const char *upath;		/* u, ur: the file, into desc */
	struct kt_uprobe *up;		/* u, ur: from add (kt_uprobe_prepare()) until freed */
	struct kt_uevent *uev;		/* U, while armed: its event */
	struct list_head uev_node;	/* U, while armed: uev->probes (RCU) */
	unsigned long uev_gp;		/* U, once disarmed: uev_node free after this grace period */
	bool uev_gp_set;
};

/* u and ur: user-space probes (probe_uprobe.c) */
static inline bool kt_probe_is_user(const struct kt_probe *p)
{
	return p->kind == KTRACK_PROBE_UPROBE || p->kind == KTRACK_PROBE_URETPROBE;
}

extern const struct kt_probe_ops kt_uprobe_ops;
/* probe_uevent.c: U */
extern const struct kt_probe_ops kt_uevent_ops;
int kt_uprobe_prepare(struct kt_probe *p);
void kt_uprobe_free(struct kt_probe *p);

/* probe_graph.c: KTRACK_PROBE_F_GRAPH_ROOT and _SCOPED */
int kt_graph_prepare(struct ktrack_session *s, bool first);
bool kt_graph_hit(struct kt_probe *p, bool exit);

/* probe_profile.c: f probes with KTRACK_PROBE_F_PROFILE */
int kt_profile_alloc(struct kt_probe *p);
void kt_profile_free(struct kt_probe *p);
void kt_profile_hit(struct kt_probe *p, u16 event, unsigned long ip, u64 duration);
long kt_ioctl_profile(struct ktrack_session *s, void __user *arg);

/* probe_desc.c */
struct kt_probe *kt_probe_from_desc(void *desc, u32 size);
void kt_probe_free(struct kt_probe *p);
bool kt_fetch_reads_kernel(const struct kt_fetch *f);

/*
 * probe_fetch.c: the handler side.  'regs' may be NULL (tracepoints, e
 * probes); 'args' is NULL for e probes, 'raw' set for them only.
 */
struct kt_fetch_ctx {
	struct pt_regs *regs;
	const unsigned long *args;	/* KTRACK_FETCH_MAX_ARG values */
	const u8 *raw;			/* e: the event's record */
	u32 raw_size;
	unsigned long retval;
	u64 duration;
	bool exit;
	bool may_fault;			/* u, ur: user reads may fault pages in */
	bool no_entry;			/* ur exit with no entry kept: no args, no duration */
	struct ktrack_rec_probe *filled;	/* kt_probe_emit_user(): fetched already */
};

void kt_probe_emit(struct kt_probe *p, struct kt_fetch_ctx *ctx, u16 event,
		   u64 ip, u64 parent_ip);
void kt_probe_emit_exit(struct kt_probe *p, struct pt_regs *regs,
			const struct kt_entry_data *d, u64 ip, u64 parent_ip);
void kt_probe_emit_user(struct kt_probe *p, struct kt_fetch_ctx *ctx, u16 event,
			u64 ip, u64 parent_ip);
void kt_entry_save(struct kt_entry_data *d, struct pt_regs *regs);
u64 kt_probe_now(void);
int kt_fetch_init(void);
void kt_fetch_exit(void);

bool kt_glob(const char *pat, const char *s, u32 slen);

/* probe_modglob.c: f MOD:GLOB */
struct module *kt_module_get(const char *name);
void kt_module_put(struct module *mod);
int kt_modglob_resolve(struct kt_probe *p, struct module *mod, bool with_init);
/* kt_module_funcs(): ktrack_internal.h (objtrace uses it too) */
bool kt_module_has_funcs(struct module *mod, const char *const *names, u32 n);
void kt_modglob_release(struct kt_probe *p);

/* max_probes (probe.c) is at most this many per session. */
#define KT_MAX_PROBES_LIMIT 4096

/* The registry (probe.c): every probe of every session, under kt_probe_lock. */
extern struct mutex kt_probe_lock;
extern struct list_head kt_probes;
struct kt_probe *kt_find(struct ktrack_session *s, u32 id, const char *name);
u64 kt_kernel_missed(struct kt_probe *p);
/* Attach and detach through the probe's ops, lockdown checked (probe.c). */
bool kt_locked_down(const struct kt_probe *p);
int kt_arm(struct kt_probe *p);
void kt_disarm(struct kt_probe *p, u32 new_state);
/* Probes and modules (probe_module.c), under kt_probe_lock but the notifier. */
bool kt_module_loaded(const char *name);
int kt_add_modglob(struct kt_probe *p);
void kt_module_going_locked(struct module *mod, const struct kt_probe_ops *ops);
int kt_module_notifier_register(void);
void kt_module_notifier_unregister(void);
/* The read-only ioctls (probe_query.c). */
long kt_ioctl_list(struct ktrack_session *s, void __user *arg);
long kt_ioctl_get(struct ktrack_session *s, void __user *arg);

#endif /* _KTRACK_PROBE_INTERNAL_H */
