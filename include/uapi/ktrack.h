/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ktrack.h - the one ABI between ktrack.ko and its users (ktrackctl, tests,
 * samples).  This file is shared verbatim by the kernel module and userspace.
 *
 * Rules that keep it stable:
 *  - fixed-width types only, every struct padded explicitly to 8 bytes;
 *  - every ioctl argument starts with a __u32 'size' that the caller sets to
 *    sizeof() of the struct it knows; the kernel accepts any size from the
 *    first published one up to its own, and requires unknown trailing bytes
 *    to be zero (extension without new command numbers);
 *  - reserved fields and flags must be zero (EINVAL otherwise);
 *  - KTRACK_ABI_VERSION is bumped on any incompatible change; additions are
 *    announced through the feature bits of KTRACK_IOC_VERSION.
 */
#ifndef _UAPI_KTRACK_H
#define _UAPI_KTRACK_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define KTRACK_ABI_VERSION	1
#define KTRACK_DEVICE_NAME	"ktrack"	/* /dev/ktrack */
#define KTRACK_IOC_MAGIC	0xD6

/* ------------------------------------------------------------------------
 * Version and feature query
 */

/* Feature bits reported in ktrack_version.features. */
#define KTRACK_FEAT_RING	(1ULL << 0)	/* per-CPU ring, mmap/read/poll */
#define KTRACK_FEAT_KPROBE	(1ULL << 1)
#define KTRACK_FEAT_KRETPROBE	(1ULL << 2)
#define KTRACK_FEAT_FPROBE	(1ULL << 3)	/* CONFIG_FPROBE in this kernel */
#define KTRACK_FEAT_FTRACE_OPS	(1ULL << 4)	/* ftrace_ops with regs/args */
#define KTRACK_FEAT_TRACEPOINT	(1ULL << 5)	/* probes on static tracepoints */
#define KTRACK_FEAT_OBJTRACE	(1ULL << 6)
#define KTRACK_FEAT_NAMED_SESS	(1ULL << 7)

struct ktrack_version {
	__u32 size;		/* in: sizeof(struct ktrack_version) */
	__u32 abi_version;	/* out: KTRACK_ABI_VERSION of the module */
	__u64 features;		/* out: KTRACK_FEAT_* */
	char module_version[32];/* out: NUL-terminated, e.g. "0.1.0" */
	char kernel_release[65];/* out: utsname()->release the module runs on */
	__u8 __pad[7];
};

#define KTRACK_IOC_VERSION	_IOWR(KTRACK_IOC_MAGIC, 0x00, struct ktrack_version)

/* ------------------------------------------------------------------------
 * Records: what the ring buffers carry and what read() returns.
 *
 * Every record starts with this 24-byte header.  'len' covers header and
 * payload and is a multiple of 8, so records can be walked without knowing
 * their type.  Payload layouts per type are below; a consumer skips types
 * it does not know.
 */
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

enum ktrack_rec_type {
	KTRACK_REC_PAD		= 0,	/* filler, skip */
	KTRACK_REC_LOST		= 1,	/* struct ktrack_rec_lost */
	KTRACK_REC_MARKER	= 2,	/* user marker: NUL-terminated text */
	KTRACK_REC_EMIT		= 3,	/* struct ktrack_rec_emit (driver API) */
	KTRACK_REC_PRINTF	= 4,	/* NUL-terminated text (driver API) */
	KTRACK_REC_TEST_SEQ	= 5,	/* struct ktrack_rec_test_seq */
	KTRACK_REC_PROBE	= 16,	/* struct ktrack_rec_probe */
	KTRACK_REC_STACK	= 17,	/* struct ktrack_rec_stack */
	KTRACK_REC_OBJ_HIT	= 32,	/* object tracker records (issue 5) */
	KTRACK_REC_OBJ_TRACK	= 33,
	KTRACK_REC_OBJ_UNTRACK	= 34,
};

/*
 * Records lost on this CPU, in stream order: they would have stood exactly
 * where this record stands.  'first_ts'/'last_ts' bound the lost records.
 */
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

/* Emitted by tests/kmod/ktrack_test_emit.ko for accounting and benchmarks. */
struct ktrack_rec_test_seq {
	__u64 seq;		/* per (run, context, cpu) sequence number */
	__u32 context;		/* KTRACK_RECF_CTX_* it was emitted from */
	__u32 run;		/* request id */
	__u8 payload[];		/* filler to reach the requested size */
};

/*
 * One probe hit.  data[] holds the fetched arguments in the layout that the
 * probe's description declared (see struct ktrack_probe_desc): fixed-size
 * slots first, then a dynamic area for strings; a string slot holds a
 * __u32 (offset << 16 | length) relative to data[].
 */
struct ktrack_rec_probe {
	__u32 probe_id;
	__u16 event;		/* KTRACK_PROBE_EV_* */
	__u16 data_len;
	__u64 ip;		/* probed function / address */
	__u64 parent_ip;	/* caller (entry) or return address (exit) */
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

/* ------------------------------------------------------------------------
 * Sessions and buffers (issue 3).  The transport owner may extend this
 * section; keep every addition additive and announced by a feature bit.
 */
#define KTRACK_MODE_DISCARD	0	/* drop newest when full */
#define KTRACK_MODE_OVERWRITE	1	/* flight recorder: keep newest */

#define KTRACK_CLOCK_LOCAL	0	/* local_clock(): fast, per-CPU */
#define KTRACK_CLOCK_MONO	1	/* ktime_get_mono_fast_ns() */
#define KTRACK_CLOCK_BOOT	2	/* ktime_get_boot_fast_ns() */

#define KTRACK_SESSION_NAME_MAX	32
#define KTRACK_MAX_BUF_PAGES	4096	/* per CPU: 16 MiB with 4 KiB pages */
#define KTRACK_DEFAULT_BUF_PAGES 256	/* per CPU: 1 MiB */
#define KTRACK_MAX_PID_FILTER	8

/*
 * Session configuration.  Set while stopped (EBUSY while running, or while
 * the buffers are mapped and the size changes).  A fresh session has
 * KTRACK_DEFAULT_BUF_PAGES, discard mode, local clock, no filters.
 */
struct ktrack_config {
	__u32 size;
	__u32 flags;		/* reserved, must be 0 */
	__u32 buf_pages;	/* per CPU, power of two, 1..KTRACK_MAX_BUF_PAGES */
	__u32 mode;		/* KTRACK_MODE_* */
	__u32 clock;		/* KTRACK_CLOCK_* */
	__u32 wakeup_bytes;	/* poll() wakes at >= this many unread bytes */
	__u32 wakeup_percent;	/* ... or at this fill level (used when bytes is 0) */
	__u32 nr_pids;		/* entries used in pids[]; 0 = every task */
	__s32 pids[KTRACK_MAX_PID_FILTER];	/* record only these pids or tgids */
	__u64 cpu_mask;		/* record only on these CPUs (bit n = CPU n); 0 = all */
};

/*
 * Per-CPU counters.  Exact accounting: for each CPU,
 *   produced = written + lost_full + lost_too_big   (discard mode)
 *   written  = read + overwritten + unread          (overwrite mode)
 */
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

struct ktrack_stats {
	__u32 size;
	__u32 nr_cpus;		/* in: entries in cpus_ptr; out: possible CPUs */
	__u64 cpus_ptr;		/* user pointer to struct ktrack_cpu_stats[nr_cpus] */
	__u32 state;		/* KTRACK_STATE_* */
	__u32 __pad;
};

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

/*
 * mmap layout, per CPU c, with stride = 1 + buf_pages (in pages):
 *   pgoff c * stride       : control page (struct ktrack_ring_ctrl), RW
 *   pgoff c * stride + 1   : buf_pages data pages, read-only
 * Positions are byte counts that only grow; offset in the data area is
 * position & (data_size - 1).  A record never wraps: the writer pads the
 * end of the area with a KTRACK_REC_PAD record.
 */
struct ktrack_ring_ctrl {
	__u64 data_head;	/* kernel: end of committed data (release) */
	__u64 data_tail;	/* reader: end of consumed data (reader stores) */
	__u64 data_size;	/* bytes in the data area */
	__u64 overwrite_seq;	/* overwrite mode: bumped when the kernel
				 * moves data_tail itself (reader was lapped) */
	__u32 cpu;
	__u32 mode;		/* KTRACK_MODE_* of the session */
	__u8 __reserved[4096 - 40];
};

#define KTRACK_IOC_SET_CONFIG	 _IOW(KTRACK_IOC_MAGIC, 0x01, struct ktrack_config)
#define KTRACK_IOC_GET_CONFIG	 _IOWR(KTRACK_IOC_MAGIC, 0x02, struct ktrack_config)
#define KTRACK_IOC_START	 _IO(KTRACK_IOC_MAGIC, 0x03)
#define KTRACK_IOC_STOP		 _IO(KTRACK_IOC_MAGIC, 0x04)
#define KTRACK_IOC_FLUSH	 _IO(KTRACK_IOC_MAGIC, 0x05)
#define KTRACK_IOC_GET_STATS	 _IOWR(KTRACK_IOC_MAGIC, 0x06, struct ktrack_stats)
#define KTRACK_IOC_SESSION_CREATE  _IOW(KTRACK_IOC_MAGIC, 0x07, struct ktrack_session_req)
#define KTRACK_IOC_SESSION_ATTACH  _IOW(KTRACK_IOC_MAGIC, 0x08, struct ktrack_session_req)
#define KTRACK_IOC_SESSION_DESTROY _IOW(KTRACK_IOC_MAGIC, 0x09, struct ktrack_session_req)
#define KTRACK_IOC_SESSION_LIST	 _IOWR(KTRACK_IOC_MAGIC, 0x0a, struct ktrack_session_list)

/* ------------------------------------------------------------------------
 * Dynamic probes (issue 4): ioctl numbers 0x20..0x2f, owned by the probe
 * work.  Object tracker (issue 5): 0x30..0x3f.
 */

#endif /* _UAPI_KTRACK_H */
