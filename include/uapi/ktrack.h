/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/* ktrack.h - the ABI shared verbatim by ktrack.ko and its users; rules and prose: docs/UAPI.md */
#ifndef _UAPI_KTRACK_H
#define _UAPI_KTRACK_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define KTRACK_ABI_VERSION	1
#define KTRACK_DEVICE_NAME	"ktrack"	/* /dev/ktrack */
#define KTRACK_IOC_MAGIC	0xD6

/* ---- Version and feature query: feature bits in ktrack_version.features ---- */
#define KTRACK_FEAT_RING	(1ULL << 0)	/* per-CPU ring, mmap/read/poll */
#define KTRACK_FEAT_KPROBE	(1ULL << 1)
#define KTRACK_FEAT_KRETPROBE	(1ULL << 2)
#define KTRACK_FEAT_FPROBE	(1ULL << 3)	/* CONFIG_FPROBE in this kernel */
#define KTRACK_FEAT_FTRACE_OPS	(1ULL << 4)	/* ftrace_ops with regs/args */
#define KTRACK_FEAT_TRACEPOINT	(1ULL << 5)	/* probes on static tracepoints */
#define KTRACK_FEAT_OBJTRACE	(1ULL << 6)
#define KTRACK_FEAT_NAMED_SESS	(1ULL << 7)
#define KTRACK_FEAT_OBJ_FUNC_ADDRS (1ULL << 8)	/* KTRACK_OBJF_FUNC_ADDRS */
#define KTRACK_FEAT_PROBE_IDLE	(1ULL << 9)	/* ktrack_probe_info.idle */
#define KTRACK_FEAT_MODULE_EVENTS (1ULL << 10)	/* KTRACK_REC_MODULE(_SYMS) */
#define KTRACK_FEAT_FUNCS_MODULE (1ULL << 11)	/* f MOD:GLOB, resolved at the module's load */
#define KTRACK_FEAT_EVENT_PROBE	(1ULL << 12)	/* e probes: a trace event's fields */
#define KTRACK_FEAT_EVENT_BY_NAME (1ULL << 13)	/* KTRACK_FETCH_F_BY_NAME: e probes on modules not loaded */
#define KTRACK_FEAT_LINKED_STACK (1ULL << 14)	/* a STACK record is linked to its PROBE record */
#define KTRACK_FEAT_STATS_WAKEUPS (1ULL << 15)	/* ktrack_cpu_stats_ext, cpu_stats_size */
#define KTRACK_FEAT_TRIGGERS	(1ULL << 16)	/* probe actions (desc.nr_actions), KTRACK_REC_TRIGGER */
#define KTRACK_FEAT_OBJ_MODULE_GONE (1ULL << 17)	/* objtrace follows module unloads: ESTALE, obj_stats.flags */
#define KTRACK_FEAT_PROFILE	(1ULL << 18)	/* KTRACK_PROBE_F_PROFILE, KTRACK_IOC_PROBE_PROFILE */
#define KTRACK_FEAT_STACK_TRACER (1ULL << 19)	/* KTRACK_IOC_STACK_* */
#define KTRACK_FEAT_DUMP_ON_OOPS (1ULL << 20)	/* KTRACK_CFG_F_DUMP_ON_OOPS, crash_dump.c */
#define KTRACK_FEAT_SNAPSHOT	(1ULL << 21)	/* KTRACK_ACT_SNAPSHOT, KTRACK_IOC_SNAPSHOT_GET */
#define KTRACK_FEAT_GRAPH_SCOPE	(1ULL << 22)	/* KTRACK_PROBE_F_GRAPH_*, desc.graph_depth */
#define KTRACK_FEAT_UPROBE	(1ULL << 23)	/* KTRACK_PROBE_UPROBE, _URETPROBE */
#define KTRACK_FEAT_PID_TREE	(1ULL << 24)	/* KTRACK_CFG_F_PID_TREE */
#define KTRACK_FEAT_LATENCY	(1ULL << 25)	/* KTRACK_IOC_LATENCY_* */
/* (bit 26: reserved) */
#define KTRACK_FEAT_USER_EVENT	(1ULL << 27)	/* KTRACK_IOC_UEVENT_*, KTRACK_PROBE_UEVENT */
#define KTRACK_FEAT_GROUP	(1ULL << 28)	/* KTRACK_CFG_F_GROUP (docs/ACCESS.md) */
#define KTRACK_FEAT_KERNEL_GLOB	(1ULL << 29)	/* KTRACK_PROBE_F_KERNEL_GLOB, KTRACK_MECH_FTRACE_OPS */
#define KTRACK_FEAT_KPROBE_FTRACE_OPS (1ULL << 30) /* KTRACK_PROBE_F_KERNEL_GLOB on p at entry */
struct ktrack_version {
	__u32 size;		/* in: sizeof(struct ktrack_version) */
	__u32 abi_version;	/* out: KTRACK_ABI_VERSION of the module */
	__u64 features;		/* out: KTRACK_FEAT_* */
	char module_version[32];/* out: NUL-terminated, e.g. "0.1.0" */
	char kernel_release[65];/* out: utsname()->release the module runs on */
	__u8 __pad[7];
};
#define KTRACK_IOC_VERSION	_IOWR(KTRACK_IOC_MAGIC, 0x00, struct ktrack_version)

/* ---- Records: what the rings carry and read() returns (docs/UAPI.md) ---- */
struct ktrack_rec_hdr {
	__u16 len;		/* total bytes, header included, 8-aligned */
	__u16 type;		/* enum ktrack_rec_type */
	__u16 cpu;		/* CPU the record was written on */
	__u16 flags;		/* KTRACK_RECF_* */
	__u64 ts;		/* ns, in the session's clock */
	__u32 pid;		/* current->pid (0 in irq context on idle) */
	__u32 tgid;		/* current->tgid */
};
#define KTRACK_REC_ALIGN	8
#define KTRACK_REC_MAX		65528	/* largest 'len' */
/* Context the record was written from (hdr.flags, low bits). */
#define KTRACK_RECF_CTX_TASK	0x0
#define KTRACK_RECF_CTX_SOFTIRQ	0x1
#define KTRACK_RECF_CTX_HARDIRQ	0x2
#define KTRACK_RECF_CTX_NMI	0x3
#define KTRACK_RECF_CTX_MASK	0x3
/*
 * The next record on this CPU, the second of a linked pair, belongs to
 * this one (a probe hit's KTRACK_REC_STACK after its KTRACK_REC_PROBE):
 * the two are written, dropped, overwritten and returned by read()
 * together, and nothing falls between them (KTRACK_FEAT_LINKED_STACK).
 */
#define KTRACK_RECF_LINKED	0x4
enum ktrack_rec_type {
	KTRACK_REC_PAD		= 0,	/* filler, skip */
	KTRACK_REC_LOST		= 1,	/* struct ktrack_rec_lost */
	KTRACK_REC_MARKER	= 2,	/* user marker: NUL-terminated text */
	KTRACK_REC_EMIT		= 3,	/* struct ktrack_rec_emit (driver API) */
	KTRACK_REC_PRINTF	= 4,	/* NUL-terminated text (driver API) */
	KTRACK_REC_TEST_SEQ	= 5,	/* test only: struct ktrack_rec_test_seq */
	KTRACK_REC_MODULE	= 6,	/* struct ktrack_rec_module */
	KTRACK_REC_MODULE_SYMS	= 7,	/* struct ktrack_rec_module_syms */
	KTRACK_REC_TRIGGER	= 8,	/* struct ktrack_rec_trigger */
	KTRACK_REC_PROBE	= 16,	/* struct ktrack_rec_probe */
	KTRACK_REC_STACK	= 17,	/* struct ktrack_rec_stack */
	KTRACK_REC_OBJ_HIT	= 32,	/* object tracker records (issue 5) */
	KTRACK_REC_OBJ_TRACK	= 33,
	KTRACK_REC_OBJ_UNTRACK	= 34,
};

/* Records lost on this CPU, standing where they would have been. */
struct ktrack_rec_lost {
	__u64 count;
	__u64 first_ts;
	__u64 last_ts;
	__u32 reason;		/* KTRACK_LOST_* */
	__u32 __pad;
};
#define KTRACK_LOST_FULL	1	/* discard mode: buffer full */
#define KTRACK_LOST_OVERWRITTEN	2	/* overwrite mode: reader was lapped */
#define KTRACK_LOST_TOO_BIG	3	/* record larger than the buffer */
/* Driver records (ktrack_emit()): an id chosen by the driver + raw bytes. */
struct ktrack_rec_emit {
	__u32 id;
	__u32 size;		/* bytes of data[] actually used */
	__u8 data[];
};

/* Test only: written by tests/kmod/ktrack_test_emit.ko, never by ktrack.ko. */
struct ktrack_rec_test_seq {
	__u64 seq;		/* per (run, context, cpu) sequence number */
	__u32 context;		/* KTRACK_RECF_CTX_* it was emitted from */
	__u32 run;		/* request id */
	__u8 payload[];		/* filler to reach the requested size */
};

/* A module's code came or went: LOAD (then its MODULE_SYMS) or UNLOAD. */
#define KTRACK_MODULE_LOAD	1
#define KTRACK_MODULE_UNLOAD	2
#define KTRACK_MODULE_NAME_MAX	56
struct ktrack_rec_module {
	__u32 event;		/* KTRACK_MODULE_* */
	__u32 nr_syms;		/* LOAD: symbols in the MODULE_SYMS that follow */
	__u64 text_base;	/* core text */
	__u64 text_size;
	__u64 init_base;	/* init text, freed after init (0: none) */
	__u64 init_size;
	char name[KTRACK_MODULE_NAME_MAX];	/* NUL-terminated */
};

/* Function symbols of the module at text_base: nr ktrack_module_sym + names. */
struct ktrack_rec_module_syms {
	__u64 text_base;
	__u32 nr;
	__u32 __pad;
	__u8 data[];
};
struct ktrack_module_sym {
	__u64 addr;
	__u32 size;		/* st_size (0: unknown) */
	__u16 name_len;		/* bytes of the name, NUL included */
	__u8 type;		/* kallsyms letter: 't' or 'T' */
	__u8 __pad;
};

/* One probe hit; the layout of data[] is in docs/UAPI.md. */
struct ktrack_rec_probe {
	__u32 probe_id;
	__u16 event;		/* KTRACK_PROBE_EV_* */
	__u16 data_len;
	__u64 ip;		/* probed function / address */
	__u64 parent_ip;	/* caller (entry) or return address (exit) */
	__u32 fault_mask;	/* bit i: fetch i faulted (see KTRACK_FETCH_FAULT) */
	__u32 __pad;
	__u8 data[];
};
#define KTRACK_PROBE_EV_ENTRY	1
#define KTRACK_PROBE_EV_EXIT	2
#define KTRACK_PROBE_EV_TP	3
/* Kernel stack captured for the probe record that precedes it. */
struct ktrack_rec_stack {
	__u32 probe_id;
	__u32 nr;		/* entries in ips[] */
	__u64 ips[];
};

/*
 * A probe's STOP, START or SNAPSHOT action ran (KTRACK_FEAT_TRIGGERS):
 * written after the hit's record for STOP and SNAPSHOT, before it for
 * START (the hit that starts recording is its first record, the one that
 * stops it its last; a snapshot ends with its trigger record).
 */
struct ktrack_rec_trigger {
	__u32 probe_id;
	__u16 action;		/* KTRACK_ACT_* */
	__u16 __pad;
	__u64 nth;		/* 1 the first time this action ran */
};

/* ---- Sessions and buffers (issue 3): additions announced by a feature bit ---- */
#define KTRACK_MODE_DISCARD	0	/* drop newest when full */
#define KTRACK_MODE_OVERWRITE	1	/* flight recorder: keep newest */
#define KTRACK_CLOCK_LOCAL	0	/* local_clock(): fast, per-CPU */
#define KTRACK_CLOCK_MONO	1	/* ktime_get_mono_fast_ns() */
#define KTRACK_CLOCK_BOOT	2	/* ktime_get_boot_fast_ns() */
#define KTRACK_SESSION_NAME_MAX	32
#define KTRACK_MAX_BUF_PAGES	4096	/* per CPU: 16 MiB with 4 KiB pages */
#define KTRACK_DEFAULT_BUF_PAGES 256	/* per CPU: 1 MiB */
#define KTRACK_MAX_PID_FILTER	8
/* Session configuration, set while stopped (EBUSY while running). */
/*
 * On oops or panic, print this session's newest records to the console
 * (then pause it); the module parameter dump_on_oops=1 does it for all.
 */
#define KTRACK_CFG_F_DUMP_ON_OOPS	(1U << 0)
/*
 * KTRACK_FEAT_PID_TREE: pids[] also select their descendants: a task is
 * recorded when it, or a process it descends from (real parents, up to
 * KTRACK_PID_TREE_DEPTH of them), is in pids[].
 */
#define KTRACK_CFG_F_PID_TREE		(1U << 1)
/*
 * KTRACK_FEAT_GROUP: root shares this named session with the ktrack group
 * (docs/ACCESS.md).  When the module was loaded with group_access=1, a file
 * opened without CAP_PERFMON may attach to it, read it (read, mmap, poll:
 * consuming, as any reader does) and write markers into it; EACCES on a
 * session not shared.  Refused (EINVAL) on an anonymous session.
 */
#define KTRACK_CFG_F_GROUP		(1U << 2)
#define KTRACK_PID_TREE_DEPTH		64
struct ktrack_config {
	__u32 size;
	__u32 flags;		/* KTRACK_CFG_F_* (KTRACK_FEAT_DUMP_ON_OOPS, _PID_TREE, _GROUP), else 0 */
	__u32 buf_pages;	/* per CPU, power of two, 1..KTRACK_MAX_BUF_PAGES */
	__u32 mode;		/* KTRACK_MODE_* */
	__u32 clock;		/* KTRACK_CLOCK_* */
	__u32 wakeup_bytes;	/* poll() wakes at >= this many unread bytes */
	__u32 wakeup_percent;	/* ... or at this fill level (used when bytes is 0) */
	__u32 nr_pids;		/* entries used in pids[]; 0 = every task */
	__s32 pids[KTRACK_MAX_PID_FILTER];	/* record only these pids or tgids */
	__u64 cpu_mask;		/* record only on these CPUs (bit n = CPU n); 0 = all */
};

/* Per-CPU counters, exact: produced = written + lost (docs/UAPI.md). */
struct ktrack_cpu_stats {
	__u32 cpu;
	__u32 online;
	__u64 written;		/* records committed to the ring */
	__u64 lost_full;	/* dropped: buffer full (discard mode) */
	__u64 lost_too_big;	/* dropped: larger than the buffer */
	__u64 overwritten;	/* overwritten before being read (overwrite mode) */
	__u64 bytes;		/* bytes committed */
	__u64 read;		/* records consumed through read() */
	__u64 filtered;		/* rejected by the pid/cpu filters */
};
/*
 * KTRACK_FEAT_STATS_WAKEUPS: the counters that came later, in entries of
 * ktrack_stats.cpu_stats_size bytes (struct ktrack_cpu_stats stays as it
 * was, so code built on it keeps its array stride).
 */
struct ktrack_cpu_stats_ext {
	struct ktrack_cpu_stats s;
	__u64 wakeups;		/* wake-ups sent to sleeping readers (poll, read) */
};
struct ktrack_stats {
	__u32 size;
	__u32 nr_cpus;		/* in: entries in cpus_ptr; out: possible CPUs */
	__u64 cpus_ptr;		/* user pointer to nr_cpus entries of cpu_stats_size bytes */
	__u32 state;		/* KTRACK_STATE_* */
	/*
	 * in: bytes per entry at cpus_ptr: 0 = sizeof(struct ktrack_cpu_stats),
	 * or (KTRACK_FEAT_STATS_WAKEUPS) a multiple of 8 from that to 256:
	 * struct ktrack_cpu_stats_ext, its tail past the kernel's zeroed.
	 */
	__u32 cpu_stats_size;
	/* KTRACK_FEAT_TRIGGERS, size >= 32: */
	__u32 flags;		/* out: KTRACK_STATS_F_* */
	__u32 __pad;
};
#define KTRACK_STATS_SIZE_V1	24	/* sizeof(struct ktrack_stats) before 'flags' */
/* A probe's STOP action paused recording (until a START action or ioctl). */
#define KTRACK_STATS_F_TRIG_STOPPED (1U << 0)
/* KTRACK_FEAT_SNAPSHOT: a snapshot is being copied; one waits for SNAPSHOT_GET. */
#define KTRACK_STATS_F_SNAP_PENDING (1U << 1)
#define KTRACK_STATS_F_SNAP_READY   (1U << 2)
#define KTRACK_STATE_IDLE	0	/* configured, never started */
#define KTRACK_STATE_RUNNING	1
#define KTRACK_STATE_STOPPED	2
/* Named sessions (ktrackctl session create|list|destroy, -s NAME). */
struct ktrack_session_req {
	__u32 size;
	__u32 flags;		/* KTRACK_SESSION_F_* */
	char name[KTRACK_SESSION_NAME_MAX];	/* NUL-terminated, [A-Za-z0-9_.-] */
};
#define KTRACK_SESSION_F_ALL	(1U << 0)	/* destroy: every named session */
struct ktrack_session_info {
	char name[KTRACK_SESSION_NAME_MAX];
	__u64 id;
	__u32 nr_fds;		/* open file descriptors attached */
	__u32 state;		/* KTRACK_STATE_* */
	__u32 nr_probes;
	__u32 buf_pages;
};
struct ktrack_session_list {
	__u32 size;
	__u32 count;		/* in: entries at entries_ptr; out: sessions that exist */
	__u64 entries_ptr;	/* user pointer to struct ktrack_session_info[count] */
};

/* Control page of one CPU's ring; the mmap layout and protocol: docs/UAPI.md. */
struct ktrack_ring_ctrl {
	__u64 data_head;	/* kernel: end of committed data (release) */
	__u64 data_tail;	/* reader: end of consumed data (reader stores) */
	__u64 data_size;	/* bytes in the data area */
	__u64 overwrite_seq;	/* overwrite mode: seqcount around 'oldest' */
	__u32 cpu;
	__u32 mode;		/* KTRACK_MODE_* of the session */
	__u64 oldest;		/* overwrite mode: oldest record still present */
	__u64 oldest_index;	/* overwrite mode: weight of records before it */
	__u64 tail_index;	/* reader: weight of records before data_tail */
	__u8 __reserved[4096 - 64];
};
#define KTRACK_IOC_SET_CONFIG	 _IOW(KTRACK_IOC_MAGIC, 0x01, struct ktrack_config)
#define KTRACK_IOC_GET_CONFIG	 _IOWR(KTRACK_IOC_MAGIC, 0x02, struct ktrack_config)
#define KTRACK_IOC_START	 _IO(KTRACK_IOC_MAGIC, 0x03)
#define KTRACK_IOC_STOP		 _IO(KTRACK_IOC_MAGIC, 0x04)
#define KTRACK_IOC_FLUSH	 _IO(KTRACK_IOC_MAGIC, 0x05)
/*
 * The number keeps the first struct's size (KTRACK_STATS_SIZE_V1): the
 * struct grew by its 'size' field, not by a new command (stability rules).
 */
#define KTRACK_IOC_GET_STATS	 _IOC(_IOC_READ | _IOC_WRITE, KTRACK_IOC_MAGIC, 0x06, KTRACK_STATS_SIZE_V1)
#define KTRACK_IOC_SESSION_CREATE  _IOW(KTRACK_IOC_MAGIC, 0x07, struct ktrack_session_req)
#define KTRACK_IOC_SESSION_ATTACH  _IOW(KTRACK_IOC_MAGIC, 0x08, struct ktrack_session_req)
#define KTRACK_IOC_SESSION_DESTROY _IOW(KTRACK_IOC_MAGIC, 0x09, struct ktrack_session_req)
#define KTRACK_IOC_SESSION_LIST	 _IOWR(KTRACK_IOC_MAGIC, 0x0a, struct ktrack_session_list)
/*
 * KTRACK_FEAT_SNAPSHOT: take the snapshot a SNAPSHOT action made (see
 * docs/UAPI.md, "Snapshots"): the records of every CPU up to the moment,
 * each CPU's part led by a LOST record (KTRACK_LOST_OVERWRITTEN) counting
 * what its ring no longer held, as read() returns them.  0, and the slot
 * is free for the next snapshot; ENOENT none; EAGAIN one is being copied
 * or taken; ENOSPC buf_len too small (buf_len out: the bytes needed, the
 * snapshot stays); EFAULT (it stays too).  ENOENT, EAGAIN and ENOSPC write
 * the struct back too, with seq and missed.
 */
struct ktrack_snapshot {
	__u32 size;
	__u32 probe_id;		/* out: the probe whose action took it */
	__u64 buf_ptr;		/* in: user buffer for the records */
	__u64 buf_len;		/* in: its bytes; out: the records' bytes */
	__u64 ts;		/* out: the moment (session clock): records up to it */
	__u64 nth;		/* out: the action's turn (its trigger record's nth) */
	__u64 seq;		/* out: snapshots this session took, this one included */
	__u64 missed;		/* out: actions that found the slot taken, or no memory */
	__u64 records;		/* out: records in the buffer (LOST records included) */
	__u32 flags;		/* out: KTRACK_SNAP_F_* */
	__u32 __pad;
};
/*
 * A CPU's ring was overwritten past the moment before the copy reached it:
 * its part holds only records stamped after the moment (none kept), and its
 * LOST record counts what was overwritten up to the copy.
 */
#define KTRACK_SNAP_F_OVERRUN	(1U << 0)
#define KTRACK_IOC_SNAPSHOT_GET	 _IOWR(KTRACK_IOC_MAGIC, 0x0b, struct ktrack_snapshot)
/* read(2), write(2) and poll(2) on a session fd: docs/UAPI.md. */
#define KTRACK_MARKER_MAX	4000
#define KTRACK_DEFAULT_SESSION	"default"

/* ---- Dynamic probes (issue 4): ioctls 0x20..0x2f; a probe is one blob (docs/UAPI.md) ---- */
#define KTRACK_PROBE_DESC_VERSION 1
#define KTRACK_PROBE_DESC_MAX	65536	/* largest blob */
#define KTRACK_PROBE_NAME_MAX	32	/* [A-Za-z0-9_.-], NUL-terminated */
#define KTRACK_PROBE_SYM_MAX	128	/* symbol, NUL-terminated */
#define KTRACK_PROBE_MOD_MAX	56	/* module name, NUL-terminated */
#define KTRACK_PROBE_MAX_FETCH	32
#define KTRACK_PROBE_MAX_INSNS	64
#define KTRACK_PROBE_MAX_FUNCS	1024	/* f probes */
/*
 * f MOD:GLOB: bytes of all its globs together (E2BIG beyond).  Each is
 * matched against every function of the module at each of its loads,
 * where nothing may sleep: the work has to be bounded.
 */
#define KTRACK_PROBE_MODGLOB_MAX 512
#define KTRACK_PROBE_MAX_STACK	64	/* stack_depth */
#define KTRACK_PROBE_MAX_ACTIVE	4096	/* maxactive */
#define KTRACK_PROBE_MAX_DATA	4096	/* fixed slots + strings per record */
#define KTRACK_FETCH_MAX_DEREF	4	/* nesting of +OFF(...) */
#define KTRACK_FETCH_MAX_ARRAY	64	/* elements of TYPE[N] */
#define KTRACK_FETCH_MAX_STR	256	/* bytes kept of one string */
#define KTRACK_FETCH_MAX_ARG	6	/* $arg1..$arg6 (x86-64 registers) */
#define KTRACK_FETCH_NAME_MAX	24
#define KTRACK_FETCH_FAULT	0xff	/* fill byte of a faulted slot */
/* desc.kind (KTRACK_PROBE_*) and desc.flags (KTRACK_PROBE_F_*) */
#define KTRACK_PROBE_KPROBE	1	/* p: SYM+OFFS or ADDR */
#define KTRACK_PROBE_KRETPROBE	2	/* r: SYM */
#define KTRACK_PROBE_FUNCS	3	/* f: funcs list, entry and/or exit */
#define KTRACK_PROBE_TRACEPOINT	4	/* t: symbol = event name */
#define KTRACK_PROBE_EVENT	5	/* e: symbol = "SUBSYS/EVENT", a trace event */
/*
 * u and ur (KTRACK_FEAT_UPROBE): a user-space instruction.  nr_funcs = 1
 * and funcs holds the file's absolute path; offset is the instruction's
 * byte offset in that file (an ELF address turned into a file offset by
 * the caller); symbol is the ELF symbol for display, or "".  addr and
 * module are 0 and "".  Records carry the user ip; fetches read user
 * memory (every dereference has KTRACK_FETCH_F_USER, strings are
 * KTRACK_FETCH_T_USTRING) and $stackN the user stack; no stack_depth.
 */
#define KTRACK_PROBE_UPROBE	6	/* u: entry (any instruction) */
#define KTRACK_PROBE_URETPROBE	7	/* ur: return of the function at offset */
#define KTRACK_PROBE_PATH_MAX	4096	/* u/ur: funcs_len, the path and its NUL */
/*
 * U (KTRACK_FEAT_USER_EVENT): a typed user event (see "User events"
 * below), symbol = its name.  Every fetch is KTRACK_FETCH_SRC_FIELD with
 * KTRACK_FETCH_F_BY_NAME (the field's name in strtab, found in the event's
 * layout each time it is registered), or $comm/$cpu; no dereference beyond
 * the field itself, no stack_depth.  Until a program registers the event
 * the probe is PENDING; it is ARMED while the event is registered.
 */
#define KTRACK_PROBE_UEVENT	8
#define KTRACK_PROBE_F_ENTRY	(1U << 0)	/* f: record entries */
#define KTRACK_PROBE_F_EXIT	(1U << 1)	/* f: record exits */
/*
 * f, KTRACK_FEAT_PROFILE: no records; each hit that passes the filter and
 * the session's pid/CPU filters is counted (and timed, with F_EXIT) per
 * function in per-CPU tables, read by KTRACK_IOC_PROBE_PROFILE.  No
 * actions, stack or hit limit.
 */
#define KTRACK_PROBE_F_PROFILE	(1U << 2)
/*
 * f, KTRACK_FEAT_GRAPH_SCOPE (docs/UAPI.md, "Graph scoping"): a GRAPH_ROOT
 * probe (ENTRY and EXIT) opens a scope for the current task at each entry
 * and closes it at the exit; a GRAPH_SCOPED probe's hits pass only while
 * the current task is inside a scope opened by a root probe of the same
 * session, and (graph_depth != 0, ENTRY and EXIT) only for calls at most
 * graph_depth nested calls of the scoped probes below the root.
 */
#define KTRACK_PROBE_F_GRAPH_ROOT	(1U << 3)
#define KTRACK_PROBE_F_GRAPH_SCOPED	(1U << 4)
#define KTRACK_GRAPH_MAX_DEPTH	64	/* desc.graph_depth */
/*
 * f, KTRACK_FEAT_KERNEL_GLOB: funcs holds one glob (nr_funcs = 1, no
 * module), matched by ftrace against every traceable function of the
 * kernel and its loaded modules, with no KTRACK_PROBE_MAX_FUNCS cap, and
 * followed into modules that load later.  Entries only (F_ENTRY alone; no
 * PROFILE or GRAPH flags), through ktrack's own ftrace_ops
 * (KTRACK_MECH_FTRACE_OPS); ktrack's own functions are left out.
 * p, KTRACK_FEAT_KPROBE_FTRACE_OPS: the same ftrace_ops at a function's
 * entry, for a symbol with no offset, module or address, and no glob
 * character (flags = F_KERNEL_GLOB alone): ftrace matches the name.
 */
#define KTRACK_PROBE_F_KERNEL_GLOB	(1U << 5)
/* Fetch sources (ktrack_probe_fetch.src). */
#define KTRACK_FETCH_SRC_ARG	1	/* param = 1..KTRACK_FETCH_MAX_ARG */
#define KTRACK_FETCH_SRC_REG	2	/* param = byte offset in struct pt_regs */
#define KTRACK_FETCH_SRC_RETVAL	3	/* exits only */
#define KTRACK_FETCH_SRC_STACK	4	/* param = N of $stackN */
#define KTRACK_FETCH_SRC_COMM	5	/* current->comm (type string) */
#define KTRACK_FETCH_SRC_IMM	6	/* param (an address for @SYM) */
#define KTRACK_FETCH_SRC_DURATION 7	/* exits only: ns since entry */
#define KTRACK_FETCH_SRC_CPU	8
#define KTRACK_FETCH_SRC_FIELD	9	/* e: param = offset of a field in the event's record */
#define KTRACK_FETCH_SRC_MAX	9
/* Fetch types (ktrack_probe_fetch.type, size gives the width) and flags (.flags). */
#define KTRACK_FETCH_T_U	1
#define KTRACK_FETCH_T_S	2
#define KTRACK_FETCH_T_X	3
#define KTRACK_FETCH_T_STRING	4	/* kernel memory, size 1 */
#define KTRACK_FETCH_T_USTRING	5	/* user memory, size 1 */
#define KTRACK_FETCH_T_SYMBOL	6	/* size 8, printed as sym+off */
#define KTRACK_FETCH_T_MAX	6
#define KTRACK_FETCH_F_USER	(1U << 0)	/* dereferences read user memory */
#define KTRACK_FETCH_F_DATA_LOC	(1U << 1)	/* SRC_FIELD: a __data_loc field */
#define KTRACK_FETCH_F_REL_LOC	(1U << 2)	/* SRC_FIELD: a __rel_loc field */
/*
 * SRC_FIELD of an event whose module is not loaded yet: param is the offset
 * in strtab of the field's name, found in the event's layout each time the
 * probe arms.  The type is the caller's (a string: no dereference given;
 * the kernel reads __data_loc, char[N] or a pointer as the field is).
 */
#define KTRACK_FETCH_F_BY_NAME	(1U << 3)
/* One fetch: a source, up to nderef dereferences, a type (docs/UAPI.md). */
struct ktrack_probe_fetch {
	char name[KTRACK_FETCH_NAME_MAX];	/* field name for decoders */
	__u8 src;		/* KTRACK_FETCH_SRC_* */
	__u8 type;		/* KTRACK_FETCH_T_* */
	__u8 size;		/* element bytes: 1, 2, 4, 8 */
	__u8 nderef;		/* 0..KTRACK_FETCH_MAX_DEREF */
	__u16 count;		/* elements: 1, or N of TYPE[N] (needs a deref) */
	__u16 flags;		/* KTRACK_FETCH_F_* */
	__s64 param;
	__s32 deref[KTRACK_FETCH_MAX_DEREF];
};

/* Filter program: postfix over a stack of booleans (docs/UAPI.md). */
#define KTRACK_FLT_CMP		1
#define KTRACK_FLT_AND		2
#define KTRACK_FLT_OR		3
#define KTRACK_FLT_NOT		4
#define KTRACK_FLT_EQ		1
#define KTRACK_FLT_NE		2
#define KTRACK_FLT_LT		3
#define KTRACK_FLT_LE		4
#define KTRACK_FLT_GT		5
#define KTRACK_FLT_GE		6
#define KTRACK_FLT_BITAND	7	/* (field & imm) != 0 */
#define KTRACK_FLT_GLOB		8	/* string matches glob pattern */
#define KTRACK_FLD_FETCH	1	/* field = fetch index (scalar or string) */
#define KTRACK_FLD_PID		2
#define KTRACK_FLD_TGID		3
#define KTRACK_FLD_COMM		4
#define KTRACK_FLD_CPU		5
#define KTRACK_FLT_MAX_DEPTH	16
/* GLOB pattern and [...] class limits, E2BIG beyond (checked in the handler). */
#define KTRACK_FLT_GLOB_MAX	255
#define KTRACK_FLT_GLOB_CLASS_MAX 64
struct ktrack_probe_insn {
	__u8 op;		/* KTRACK_FLT_* */
	__u8 cmp;		/* CMP: KTRACK_FLT_EQ.. */
	__u8 field_kind;	/* CMP: KTRACK_FLD_* */
	__u8 field;		/* CMP on KTRACK_FLD_FETCH: fetch index */
	__u32 str_off;		/* string compares: offset in strtab */
	__s64 imm;
};
struct ktrack_probe_desc {
	__u32 size;		/* bytes of the whole blob */
	__u16 version;		/* KTRACK_PROBE_DESC_VERSION */
	__u16 hdr_size;		/* sizeof(struct ktrack_probe_desc) */
	__u32 kind;		/* KTRACK_PROBE_KPROBE.. */
	__u32 flags;		/* KTRACK_PROBE_F_* */
	char name[KTRACK_PROBE_NAME_MAX];	/* unique in the session */
	char module[KTRACK_PROBE_MOD_MAX];	/* "" = vmlinux or any; f: funcs are globs over it */
	char symbol[KTRACK_PROBE_SYM_MAX];	/* "" with addr != 0 */
	__u64 addr;		/* p: absolute address when symbol is "" */
	__u64 offset;		/* p: +OFFS */
	__u64 hit_limit;	/* stop recording after this many hits; 0 = none */
	__u32 maxactive;	/* r only: concurrent instances; 0 = default */
	__u32 stack_depth;	/* 0 or frames of a KTRACK_REC_STACK record */
	__u16 nr_fetch;
	__u16 nr_insns;
	__u16 nr_funcs;		/* f: NUL-terminated names (globs with module) in funcs */
	__u16 nr_actions;	/* KTRACK_FEAT_TRIGGERS: struct ktrack_probe_action[] */
	__u32 fetch_off;	/* struct ktrack_probe_fetch[nr_fetch] */
	__u32 insns_off;	/* struct ktrack_probe_insn[nr_insns] */
	__u32 funcs_off;	/* f: names, back to back */
	__u32 funcs_len;
	__u32 strtab_off;	/* filter strings, NUL-terminated */
	__u32 strtab_len;
	__u32 spec_off;		/* the source text, NUL-terminated (display) */
	__u32 spec_len;
	__u32 actions_off;	/* KTRACK_FEAT_TRIGGERS, 8-aligned (0 when none) */
	/* GRAPH_SCOPED: deepest call recorded below the root, 0 = any (else 0) */
	__u32 graph_depth;	/* also no tail padding: 312 bytes on 32-bit too */
};

/*
 * Actions (triggers), run in the handler by a hit that passed the filter
 * and the hit limit, in the manner of ftrace's traceoff/traceon/stacktrace
 * triggers.  STOP pauses recording of the whole session after this hit's
 * record (KTRACK_STATS_F_TRIG_STOPPED; START ioctl or a START action
 * resumes it); START resumes it before this hit's record; STACK adds this
 * hit's kernel stack (stack_depth frames, KTRACK_ACT_STACK_DEPTH when 0).
 * SNAPSHOT (KTRACK_FEAT_SNAPSHOT, overwrite-mode sessions only) has the
 * kernel copy the rings' records up to this hit aside, while recording
 * goes on; KTRACK_IOC_SNAPSHOT_GET takes the copy.  One is held at a time:
 * an action that finds it not taken yet is counted missed.
 * STOP, START and SNAPSHOT write a KTRACK_REC_TRIGGER record.  count:
 * times it acts, 0 = always.
 */
#define KTRACK_ACT_STOP		1
#define KTRACK_ACT_START	2
#define KTRACK_ACT_STACK	3
#define KTRACK_ACT_SNAPSHOT	4
#define KTRACK_ACT_MAX		4
#define KTRACK_PROBE_MAX_ACTIONS 8
#define KTRACK_ACT_STACK_DEPTH	32
struct ktrack_probe_action {
	__u16 type;		/* KTRACK_ACT_* */
	__u16 __pad;
	__u32 count;
};

/* How a probe is attached (ktrack_probe_info.mechanism). */
#define KTRACK_MECH_KPROBE	1
#define KTRACK_MECH_KRETPROBE	2
#define KTRACK_MECH_FPROBE	3	/* 6.12+: one fprobe for all functions */
#define KTRACK_MECH_KPROBE_FTRACE 4	/* no fprobe: kprobes (ftrace) + kretprobes per function */
#define KTRACK_MECH_TRACEPOINT	5
#define KTRACK_MECH_PERF_EVENT	6	/* e: a kernel perf event per CPU */
#define KTRACK_MECH_UPROBE	7	/* u, ur: uprobe_register() */
#define KTRACK_MECH_UEVENT	8	/* U: write(2) of a registered user event */
#define KTRACK_MECH_FTRACE_OPS	9	/* f over a kernel glob, p at entry: one ftrace_ops */
#define KTRACK_PROBE_ST_PENDING	 1	/* module not loaded yet */
#define KTRACK_PROBE_ST_ARMED	 2
#define KTRACK_PROBE_ST_DISARMED 3	/* its module went away; re-arms on load */
/* Add a probe; errors beyond EINVAL say why it cannot arm (docs/UAPI.md). */
struct ktrack_probe_add {
	__u32 size;
	__u32 desc_size;	/* bytes at desc_ptr */
	__u64 desc_ptr;		/* struct ktrack_probe_desc blob */
	__u32 id;		/* out: probe id (records' probe_id) */
	__u32 state;		/* out: KTRACK_PROBE_ST_* */
	__u32 mechanism;	/* out: KTRACK_MECH_* */
	__u32 __pad;
};
#define KTRACK_PROBE_DEL_ALL	(1U << 0)
/* Delete by id (non-zero), else by name, or every probe of the session. */
struct ktrack_probe_del {
	__u32 size;
	__u32 flags;		/* KTRACK_PROBE_DEL_* */
	__u32 id;
	__u32 __pad;
	char name[KTRACK_PROBE_NAME_MAX];
};
struct ktrack_probe_info {
	__u32 id;
	__u32 kind;		/* KTRACK_PROBE_* */
	__u32 mechanism;	/* KTRACK_MECH_* */
	__u32 state;		/* KTRACK_PROBE_ST_* */
	__u64 hits;		/* handler invocations */
	__u64 misses;		/* missed by the kernel (maxactive, recursion) */
	__u64 filtered;		/* rejected by the filter */
	__u64 dropped;		/* not written: ring full, hit limit */
	__u64 faults;		/* fetches that faulted */
	__u32 nr_funcs;		/* functions attached (f), else 1 */
	__u32 arm_count;	/* times armed (module reloads re-arm) */
	__u32 desc_size;	/* bytes of the description (PROBE_GET) */
	__u32 __pad;
	char name[KTRACK_PROBE_NAME_MAX];
	char target[KTRACK_PROBE_SYM_MAX];	/* MOD:SYM+OFF, event, 1st func */
	__u64 idle;		/* KTRACK_FEAT_PROBE_IDLE, entry_size >= 240: hits while not recording */
};

#define KTRACK_PROBE_INFO_SIZE_V1 232	/* sizeof(struct ktrack_probe_info) before 'idle' */
struct ktrack_probe_list {
	__u32 size;
	__u32 count;		/* in: entries at entries_ptr; out: probes */
	__u64 entries_ptr;	/* struct ktrack_probe_info[count] */
	/* Since KTRACK_FEAT_PROBE_IDLE (docs/UAPI.md): */
	__u32 entry_size;	/* sizeof(struct ktrack_probe_info) the caller knows */
	__u32 __pad;
};

/* Copy a probe's description back (to decode its records elsewhere). */
struct ktrack_probe_get {
	__u32 size;
	__u32 id;
	__u32 desc_size;	/* in: bytes at desc_ptr; out: bytes needed */
	__u32 __pad;
	__u64 desc_ptr;
};
#define KTRACK_IOC_PROBE_ADD	_IOWR(KTRACK_IOC_MAGIC, 0x20, struct ktrack_probe_add)
#define KTRACK_IOC_PROBE_DEL	_IOW(KTRACK_IOC_MAGIC, 0x21, struct ktrack_probe_del)
#define KTRACK_IOC_PROBE_LIST	_IOWR(KTRACK_IOC_MAGIC, 0x22, struct ktrack_probe_list)
#define KTRACK_IOC_PROBE_GET	_IOWR(KTRACK_IOC_MAGIC, 0x23, struct ktrack_probe_get)

/* One function of a profiling probe (KTRACK_PROBE_F_PROFILE). */
struct ktrack_profile_entry {
	__u64 ip;		/* the function, as a record's ip */
	__u64 hits;		/* calls (entries; exits when only F_EXIT) */
	__u64 timed;		/* exits timed from their entry (F_EXIT) */
	__u64 time_ns;		/* their durations summed, callees included */
	__u64 max_ns;		/* the longest */
};
/* Read a profiling probe's per-function counters, summed over CPUs. */
struct ktrack_probe_profile {
	__u32 size;
	__u32 id;		/* the probe */
	__u32 count;		/* in: entries at entries_ptr; out: functions hit */
	__u32 entry_size;	/* sizeof(struct ktrack_profile_entry) */
	__u64 entries_ptr;	/* struct ktrack_profile_entry[count] */
	__u64 overflow;		/* out: hits not counted, the table being full */
};
#define KTRACK_IOC_PROBE_PROFILE _IOWR(KTRACK_IOC_MAGIC, 0x24, struct ktrack_probe_profile)

/* ---- Object tracker (issue 5): ioctl numbers 0x30..0x3f (docs/UAPI.md) ---- */
#define KTRACK_OBJ_MAX_OBJECTS	65536	/* table capacity limit */
#define KTRACK_OBJ_MAX_WATCH	4	/* watched values per object */
#define KTRACK_OBJ_MAX_ARGS	6	/* arguments checked at each entry */
#define KTRACK_OBJ_MAX_SOURCES	8
#define KTRACK_OBJ_SYM_MAX	128	/* symbol names, NUL included */
#define KTRACK_OBJ_FUNCS_MAX	4096	/* bytes of the function list */
#define KTRACK_OBJ_MAX_OFFSET	65536	/* watched/derived field offsets */
/* One watched value: 'size' bytes at 'offset' from the object start. */
struct ktrack_obj_watch {
	__u32 offset;
	__u16 size;		/* 1, 2, 4 or 8 */
	__u16 flags;		/* KTRACK_OBJ_WATCH_* */
};
#define KTRACK_OBJ_WATCH_SIGNED	(1U << 0)	/* sign-extend (for display) */
/* ktrack_obj_config.flags */
#define KTRACK_OBJF_CHANGES_ONLY (1U << 0)	/* record a hit only on a change */
#define KTRACK_OBJF_API		(1U << 1)	/* accept ktrack_obj_track() */
#define KTRACK_OBJF_DERIVE	(1U << 2)	/* follow derive_offset */
#define KTRACK_OBJF_NO_FREE	(1U << 3)	/* do not hook kfree/kmem_cache_free */
#define KTRACK_OBJF_FUNC_ADDRS	(1U << 4)	/* functions_ptr: ktrack_obj_func[] */
#define KTRACK_OBJF_ALL		0x1fU
/* KTRACK_OBJF_FUNC_ADDRS: the function set resolved in userspace (docs/UAPI.md). */
#define KTRACK_OBJ_MAX_FUNC_ADDRS 65536	/* entries per configuration */
#define KTRACK_OBJ_MAX_MASKS	16	/* distinct arg_mask values */
struct ktrack_obj_func {
	__u64 addr;		/* function address, unique in the set */
	__u8 arg_mask;		/* bit n: check argument n; 0 < mask < 1 << nr_args */
	__u8 __pad[7];
};
struct ktrack_obj_config {
	__u32 size;
	__u32 flags;		/* KTRACK_OBJF_* */
	__u32 max_objects;	/* 1..KTRACK_OBJ_MAX_OBJECTS tracked at once */
	__u32 nr_args;		/* 1..KTRACK_OBJ_MAX_ARGS checked per entry */
	__u32 max_hits;		/* per life; 0 = unlimited */
	__u32 nr_watch;		/* entries used in watch[] */
	__u64 max_age_ns;	/* per life; 0 = unlimited */
	__u64 functions_ptr;	/* globs or ktrack_obj_func[] (docs/UAPI.md) */
	__u32 functions_len;	/* 1..KTRACK_OBJ_FUNCS_MAX */
	__u32 destructor_arg;	/* 0-based argument of destructor[] */
	char destructor[KTRACK_OBJ_SYM_MAX];	/* "" or a function: untrack its arg */
	__u32 derive_offset;	/* KTRACK_OBJF_DERIVE: pointer field to follow */
	__u32 func_size;	/* KTRACK_OBJF_FUNC_ADDRS: sizeof(struct ktrack_obj_func); else 0 */
	struct ktrack_obj_watch watch[KTRACK_OBJ_MAX_WATCH];
};

/* Sources: how objects become tracked. */
#define KTRACK_OBJ_SRC_EXPLICIT	0	/* OBJ_TRACK ioctl */
#define KTRACK_OBJ_SRC_RETVAL	1	/* kretprobe: return value */
#define KTRACK_OBJ_SRC_ARG	2	/* kprobe at entry: argument 'arg' */
#define KTRACK_OBJ_SRC_API	3	/* ktrack_obj_track() from a driver */
#define KTRACK_OBJ_SRC_DERIVED	4	/* field of a tracked object */
#define KTRACK_OBJ_SRCF_DEREF	(1U << 0)	/* track *(value + deref_offset) */
struct ktrack_obj_source {
	__u32 size;
	__u32 type;		/* KTRACK_OBJ_SRC_RETVAL or _ARG */
	__u32 flags;		/* KTRACK_OBJ_SRCF_* */
	__u32 arg;		/* _ARG: 0-based argument, < KTRACK_OBJ_MAX_ARGS */
	__u32 deref_offset;	/* with KTRACK_OBJ_SRCF_DEREF */
	__u32 __pad;
	char symbol[KTRACK_OBJ_SYM_MAX];	/* function to probe */
};

/* Explicit track/untrack of an address. */
struct ktrack_obj_addr {
	__u32 size;
	__u32 flags;		/* untrack: KTRACK_OBJ_ADDR_ALL */
	__u64 addr;
	__u64 life;		/* out: life id (track, query) */
	__u64 hits;		/* out: hits of that life (query) */
};
#define KTRACK_OBJ_ADDR_ALL	(1U << 0)
/* Why an object was not tracked (stats.dropped[]). */
#define KTRACK_OBJ_DROP_FULL	 0	/* table full (max_objects) */
#define KTRACK_OBJ_DROP_DUP	 1	/* address already tracked */
#define KTRACK_OBJ_DROP_BADPTR	 2	/* NULL, ERR_PTR or unreadable pointer */
#define KTRACK_OBJ_DROP_BUSY	 3	/* table lock busy under NMI or in the hook */
#define KTRACK_OBJ_DROP_MAX	 8
/* Why a life ended (rec_obj_untrack.reason, stats.untracked[]). */
#define KTRACK_OBJ_END_FREE	  0	/* kfree / kmem_cache_free */
#define KTRACK_OBJ_END_DESTRUCTOR 1	/* the configured destructor */
#define KTRACK_OBJ_END_HITS	  2	/* max_hits reached */
#define KTRACK_OBJ_END_AGE	  3	/* max_age_ns exceeded */
#define KTRACK_OBJ_END_EXPLICIT	  4	/* OBJ_UNTRACK ioctl */
#define KTRACK_OBJ_END_API	  5	/* ktrack_obj_untrack() */
#define KTRACK_OBJ_END_REUSE	  6	/* address allocated again (unseen free) */
#define KTRACK_OBJ_END_MAX	  8
struct ktrack_obj_stats {
	__u32 size;
	__u32 enabled;		/* hooks attached */
	__u32 capacity;		/* max_objects */
	__u32 nr_tracked;	/* lives in the table now */
	__u32 nr_functions;	/* functions hooked (sources and frees excluded) */
	__u32 nr_sources;
	__u64 lives;		/* lives started */
	__u64 hits;		/* entries with a tracked argument */
	__u64 hits_recorded;	/* hit records written */
	__u64 hits_unchanged;	/* not recorded: changes-only, no change */
	__u64 rec_lost;		/* records the ring refused */
	__u64 recursion;	/* hook entries skipped by the recursion guard */
	__u64 dropped[KTRACK_OBJ_DROP_MAX];	/* objects not tracked, by reason */
	__u64 ended[KTRACK_OBJ_END_MAX];	/* lives ended, by reason */
	/* KTRACK_FEAT_OBJ_MODULE_GONE, size >= 208: */
	__u32 flags;		/* out: KTRACK_OBJ_STATS_F_* */
	__u32 funcs_gone;	/* hooked functions unhooked: their module was unloaded */
};
#define KTRACK_OBJ_STATS_SIZE_V1 200	/* sizeof(struct ktrack_obj_stats) before 'flags' */
/* A hooked function's module was unloaded: ENABLE, ADD_SOURCE ESTALE until OBJ_CONFIG. */
#define KTRACK_OBJ_STATS_F_MODULE_GONE (1U << 0)
#define KTRACK_IOC_OBJ_CONFIG	  _IOW(KTRACK_IOC_MAGIC, 0x30, struct ktrack_obj_config)
#define KTRACK_IOC_OBJ_ADD_SOURCE _IOW(KTRACK_IOC_MAGIC, 0x31, struct ktrack_obj_source)
#define KTRACK_IOC_OBJ_TRACK	  _IOWR(KTRACK_IOC_MAGIC, 0x32, struct ktrack_obj_addr)
#define KTRACK_IOC_OBJ_UNTRACK	  _IOW(KTRACK_IOC_MAGIC, 0x33, struct ktrack_obj_addr)
#define KTRACK_IOC_OBJ_ENABLE	  _IO(KTRACK_IOC_MAGIC, 0x34)
#define KTRACK_IOC_OBJ_DISABLE	  _IO(KTRACK_IOC_MAGIC, 0x35)
/* The number keeps the first struct's size (KTRACK_OBJ_STATS_SIZE_V1), as GET_STATS. */
#define KTRACK_IOC_OBJ_GET_STATS  _IOC(_IOC_READ | _IOC_WRITE, KTRACK_IOC_MAGIC, 0x36, KTRACK_OBJ_STATS_SIZE_V1)
#define KTRACK_IOC_OBJ_QUERY	  _IOWR(KTRACK_IOC_MAGIC, 0x37, struct ktrack_obj_addr)
/* KTRACK_REC_OBJ_HIT: a tracked object entered a hooked function. */
struct ktrack_rec_obj_hit {
	__u64 obj;		/* object address */
	__u64 life;		/* life id */
	__u64 ip;		/* function entered */
	__u64 parent_ip;	/* its caller */
	__u32 hit;		/* 1-based hit number within the life */
	__u16 arg;		/* 0-based argument that held the object */
	__u8 nr_values;		/* valid entries in values[] */
	__u8 fault_mask;	/* bit n: values[n] could not be read */
	__u32 flags;		/* KTRACK_OBJ_HITF_* */
	__u32 prev_cpu;		/* changes-only: where last seen unchanged */
	__u64 prev_ts;
	__u64 prev_ip;
	__u64 values[KTRACK_OBJ_MAX_WATCH];
};
#define KTRACK_OBJ_HITF_CHANGED	(1U << 0)	/* values differ from previous hit */
#define KTRACK_OBJ_HITF_PREV	(1U << 1)	/* prev_* are valid */
/* KTRACK_REC_OBJ_TRACK: a life begins. */
struct ktrack_rec_obj_track {
	__u64 obj;
	__u64 life;
	__u64 ip;		/* allocator / probed function, or caller of the API */
	__u64 parent_life;	/* KTRACK_OBJ_SRC_DERIVED: the object it came from */
	__u32 source;		/* KTRACK_OBJ_SRC_* */
	__u8 nr_values;
	__u8 fault_mask;
	__u16 __pad;
	__u64 values[KTRACK_OBJ_MAX_WATCH];	/* watched values at track time */
};

/* KTRACK_REC_OBJ_UNTRACK: a life ends. */
struct ktrack_rec_obj_untrack {
	__u64 obj;
	__u64 life;
	__u64 ip;		/* free function / destructor, or 0 */
	__u64 parent_ip;	/* its caller, or 0 */
	__u64 hits;		/* hits seen during the life */
	__u32 reason;		/* KTRACK_OBJ_END_* */
	__u32 __pad;
};

/*
 * ---- Stack tracer: ioctl numbers 0x40..0x4f (KTRACK_FEAT_STACK_TRACER) ----
 * The deepest kernel task stack seen at a function entry while it runs, in
 * the manner of ftrace's stack tracer.  One for the module: the session
 * that STARTs it owns it until STOP or its end (another gets EBUSY).  GET
 * reads the maximum so far, running or not, until the next START.
 */
#define KTRACK_STACK_FILTER_MAX	256
#define KTRACK_STACK_MAX_FRAMES	64
struct ktrack_stack_start {
	__u32 size;
	__u32 flags;		/* 0 */
	/* globs, space-separated ("vfs_* ext4_*"), no '!'; "" = every function */
	char filter[KTRACK_STACK_FILTER_MAX];
};
struct ktrack_stack_frame {
	__u64 ip;		/* a return address: the function this frame is in */
	__u32 depth;		/* bytes of stack in use up to this frame */
	__u32 size;		/* bytes of this frame */
};
struct ktrack_stack_max {
	__u32 size;
	__u32 nr;		/* in: frames at frames_ptr; out: frames of the maximum */
	__u64 frames_ptr;	/* struct ktrack_stack_frame[nr], deepest first */
	__u64 max_bytes;	/* out: the deepest stack seen (0: none yet) */
	__u64 func;		/* out: the function whose entry saw it */
	__u64 checks;		/* out: function entries measured */
	__u32 pid;		/* out: the task */
	char comm[16];
	__u32 __pad;
};
#define KTRACK_IOC_STACK_START	_IOW(KTRACK_IOC_MAGIC, 0x40, struct ktrack_stack_start)
#define KTRACK_IOC_STACK_STOP	_IO(KTRACK_IOC_MAGIC, 0x41)
#define KTRACK_IOC_STACK_GET	_IOWR(KTRACK_IOC_MAGIC, 0x42, struct ktrack_stack_max)

/*
 * ---- Latency tracers: ioctl numbers 0x50..0x57 (KTRACK_FEAT_LATENCY) ----
 * In-kernel workloads whose measurements are trace events of the ktrack
 * system (ktrack/ktrack_timerlat, ktrack/ktrack_osnoise), recorded like any
 * other with e probes.  One tracer of each kind for the module: the file
 * that STARTs it owns it until STOP (all its tracers) or its close.
 *   TIMER: per CPU an hrtimer every period_ns and a SCHED_FIFO thread
 *     woken by it (timerlat); runtime_ns and tolerance_ns 0.
 *   NOISE: per CPU a thread that spins runtime_ns of every period_ns
 *     reading the clock; a gap over tolerance_ns is noise (osnoise).
 * period_ns 100 us..1 s; runtime_ns <= period_ns; cpus: bit N = CPU N,
 * every bit an online CPU, all 0 = every online CPU.
 */
#define KTRACK_LATENCY_TIMER	1
#define KTRACK_LATENCY_NOISE	2
#define KTRACK_LATENCY_PERIOD_MIN	100000ULL	/* 100 us */
#define KTRACK_LATENCY_PERIOD_MAX	1000000000ULL	/* 1 s */
struct ktrack_latency_req {
	__u32 size;		/* sizeof(struct ktrack_latency_req) */
	__u32 kind;		/* KTRACK_LATENCY_* */
	__u64 period_ns;
	__u64 runtime_ns;	/* NOISE: 1..period_ns; TIMER: 0 */
	__u64 tolerance_ns;	/* NOISE: gaps up to it are no noise; TIMER: 0 */
	__u64 cpus[4];		/* bitmap of CPUs 0..255; all 0 = every online CPU */
	__u64 reserved[2];	/* 0 */
};
#define KTRACK_IOC_LATENCY_START _IOW(KTRACK_IOC_MAGIC, 0x50, struct ktrack_latency_req)
#define KTRACK_IOC_LATENCY_STOP	_IO(KTRACK_IOC_MAGIC, 0x51)

/*
 * ---- User events: ioctl numbers 0x58..0x5f (KTRACK_FEAT_USER_EVENT) ----
 *
 * A program describes an event once, "NAME FIELD; FIELD; ...", e.g.
 * "mylib/req u32 id; char[] path": NAME is [A-Za-z0-9_]+, optionally
 * SYSTEM/EVENT; a FIELD is "TYPE NAME", TYPE one of u8 s8 u16 s16 u32 s32
 * u64 s64, char[N] (N bytes in place, 1..KTRACK_UEVENT_ARRAY_MAX) or char[]
 * (a string of any length: a __u32 in place, (length << 16) | offset, the
 * offset from the payload's start and the length counting the NUL, as
 * ftrace's __data_loc), and NAME a C identifier.  Fields are packed in
 * order, with no padding.  KTRACK_IOC_UEVENT_REG returns the event's id
 * (the same for the same description, whichever file registered it;
 * EEXIST for the same name with other fields) and the bytes of its fixed
 * part.
 *
 * The status page (mmap of KTRACK_UEVENT_STATUS_SIZE bytes at offset
 * KTRACK_UEVENT_STATUS_OFFSET, read-only, shared) has one byte per id:
 * non-zero while some probe (U) is armed on the event.  A program tests
 * it before building an event, so a disabled event costs one load.
 *
 * After its first REG, a file's write(2)/writev(2) emit events: a __u32
 * id, then the payload: exactly the fixed part plus the data of its
 * char[] fields, each NUL-terminated, inside the payload and after the
 * fixed part (EINVAL otherwise, E2BIG beyond KTRACK_UEVENT_PAYLOAD_MAX,
 * ENOENT for an id this file did not register).  A write to a disabled
 * event succeeds and records nothing.  Such a file writes no markers.
 * An event lives while a file that registered it is open (or until each
 * UNREG'd it).
 */
#define KTRACK_UEVENT_FORMAT_MAX	1024	/* the description and its NUL */
#define KTRACK_UEVENT_NAME_MAX	64	/* NAME and its NUL */
#define KTRACK_UEVENT_MAX_FIELDS	KTRACK_PROBE_MAX_FETCH
#define KTRACK_UEVENT_ARRAY_MAX	256	/* N of char[N] */
#define KTRACK_UEVENT_PAYLOAD_MAX	4096	/* bytes after the id */
#define KTRACK_UEVENT_MAX	256	/* events registered at once, ids 0..255 */
#define KTRACK_UEVENT_STATUS_SIZE	4096
/* mmap offset of the status page: far above any session's rings */
#define KTRACK_UEVENT_STATUS_OFFSET	(1ULL << 40)

struct ktrack_uevent_reg {
	__u32 size;		/* sizeof(struct ktrack_uevent_reg) */
	__u32 flags;		/* 0 */
	__u64 format_ptr;	/* the description, NUL-terminated */
	__u32 id;		/* out: index into the status page */
	__u32 fixed_size;	/* out: bytes of the fixed part of a payload */
};

struct ktrack_uevent_unreg {
	__u32 size;		/* sizeof(struct ktrack_uevent_unreg) */
	__u32 id;
};

/*
 * The description of a registered event, by name (name[0] != 0) or by id
 * (name ""): the canonical text ("mylib/req u32 id; char[] path") goes to
 * format_ptr, format_len bytes at most (ENOSPC and the bytes needed in
 * format_len when it does not fit).  ENOENT: not registered.
 */
struct ktrack_uevent_query {
	__u32 size;		/* sizeof(struct ktrack_uevent_query) */
	__u32 id;		/* in (name "") or out */
	char name[KTRACK_UEVENT_NAME_MAX];
	__u64 format_ptr;
	__u32 format_len;	/* in: room; out: bytes written, NUL included */
	__u32 enabled;		/* out: probes armed on it */
};

#define KTRACK_IOC_UEVENT_REG	_IOWR(KTRACK_IOC_MAGIC, 0x58, struct ktrack_uevent_reg)
#define KTRACK_IOC_UEVENT_UNREG	_IOW(KTRACK_IOC_MAGIC, 0x59, struct ktrack_uevent_unreg)
#define KTRACK_IOC_UEVENT_QUERY	_IOWR(KTRACK_IOC_MAGIC, 0x5a, struct ktrack_uevent_query)

#endif /* _UAPI_KTRACK_H */
