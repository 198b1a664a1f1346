/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fuzz_ops.h - the fuzzer's random source, shared state and one builder
 * per call (fuzz_ioctl.c draws the calls and runs the threads).  Each
 * builder starts from the argument's valid shape and mutates it.
 */
#ifndef KTRACK_FUZZ_OPS_H
#define KTRACK_FUZZ_OPS_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <uapi/ktrack.h>

#define NR_SLOTS	6	/* session fds shared by all threads */
#define NR_MAPS		32	/* live mappings */
#define MAX_THREADS	16

/* ---- random numbers: xorshift64*, one state per thread ------------------ */

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545F4914F6CDD1DULL;
}

static uint32_t below(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rnd(r) % n) : 0;
}

static int chance(struct rng *r, int percent)
{
	return below(r, 100) < (uint32_t)percent;
}

#define PICK(r, arr) ((arr)[below(r, sizeof(arr) / sizeof((arr)[0]))])

/* ---- shared state ------------------------------------------------------ */

static int slots[NR_SLOTS];		/* fd numbers; replaced with dup2 */
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;

static struct {
	void *addr;
	size_t len;
} maps[NR_MAPS];
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;

/* Pointer targets: a guard page after a valid one (faults midway), a
 * PROT_NONE page, a read-only page.
 */
static char *edge;		/* edge[0..4095] valid, edge[4096..] PROT_NONE */
static char *none_page;
static char *ro_page;

/* Probe descriptions compiled by ktrackctl: the corpus the mutations start from. */
#define NR_CORPUS	16
static struct {
	void *blob;
	size_t len;
} corpus[NR_CORPUS];
static int nr_corpus;

/* What the device documents (include/uapi/ktrack.h), plus what the VFS,
 * mm and ktrack's allocation and locking paths return for the calls we
 * make.  Anything else (EIO, ENXIO, a positive junk value) is a bug.
 */
static int errno_ok(int e)
{
	switch (e) {
	case EINVAL: case EFAULT: case ENOTTY: case EPERM: case E2BIG: case EBUSY:
	case ENOENT: case EEXIST: case ENOSPC: case EADDRNOTAVAIL: case EOPNOTSUPP:
	case ENODATA: case EAGAIN: case ENOMEM: case ENODEV: case EBADF: case EACCES:
	case ERANGE: case EOVERFLOW: case EMFILE: case ENAMETOOLONG: case EPIPE:
	case EALREADY: case ESRCH: case EINTR: case EILSEQ: case ESTALE:
	/*
	 * read(): the fuzzer hands ring control pages (mapped RW) to read()
	 * as its buffer, so record bytes land on data_tail: a position that
	 * is no record boundary is refused with EIO (docs/UAPI.md).
	 */
	case EIO:
		return 1;
	}
	return 0;
}

/* ---- argument builders -------------------------------------------------- */

/*
 * The most bytes any call here may write to its buffer: max_probes (256,
 * checked by main()) PROBE_LIST entries of 4096 bytes.  Every pointer
 * handed to the kernel has room for what the kernel may write there: an
 * overrun is the fuzzer corrupting itself, not a kernel bug.  (A "faults
 * midway" pointer once started up to 1 MiB below its page, in libc's data,
 * and runs died of heap corruption and SIGSEGV.)
 */
#define FUZZ_OUT_MAX	(256 * 4096)
#define FUZZ_ARG_MAX	4096	/* the largest ioctl struct, with room */

/*
 * Per-thread scratch for misaligned copies, allocated by main() before the
 * threads start (a worker's first malloc would map memory where a ring was
 * unmapped, under a stale ring pointer of another thread): FUZZ_OUT_MAX + 64
 * bytes for a data buffer, then FUZZ_ARG_MAX + 64 for the ioctl's struct.
 */
#define FUZZ_SCRATCH	(FUZZ_OUT_MAX + 64 + FUZZ_ARG_MAX + 64)
static __thread unsigned char *scratch;

/* memcpy, unless 'src' is not all readable (then 'dst' is left as it was). */
static void copy_if_readable(void *dst, const void *src, size_t len)
{
	struct iovec to = { .iov_base = dst, .iov_len = len };
	struct iovec from = { .iov_base = (void *)src, .iov_len = len };

	if (len)
		process_vm_readv(getpid(), &to, 1, &from, 1, 0);
}

/*
 * A pointer for an argument whose valid form is 'good' with 'len' bytes
 * (the kernel writes at most 'len' bytes there).  'is_struct': the ioctl's
 * own struct, whose pointer fields the kernel follows, so it never points
 * at memory the fuzzer did not fill (a ring page holds records, which may
 * hold pointers into this process).
 */
static void *mutate_any(struct rng *r, void *good, size_t len, int is_struct)
{
	unsigned char *dst;
	size_t k;

	if (!chance(r, 15))
		return good;
	switch (below(r, 8)) {
	case 0: return NULL;
	case 1: /* misaligned: a copy of good 1..7 bytes in, with room after it */
		dst = is_struct ? scratch + FUZZ_OUT_MAX + 64 : scratch;
		if (len > (is_struct ? FUZZ_ARG_MAX : FUZZ_OUT_MAX))
			return good;
		k = 1 + below(r, 7);
		copy_if_readable(dst + k, good, len);	/* 'good' may be flipped */
		return dst + k;
	case 2: return (void *)0xffffffff81000000ULL;		/* kernel text */
	case 3: return (void *)0xffff888000000000ULL;		/* direct map */
	case 4: return none_page;				/* unmapped */
	case 5: /* the last 1..min(len, 4096) bytes before the guard page,
		 * holding good's first bytes: the copy faults midway */
		k = 1 + below(r, (uint32_t)(len < 4096 ? (len ? len : 1) : 4096));
		copy_if_readable(edge + 4096 - k, good, k < len ? k : len);
		return edge + 4096 - k;
	case 6: return ro_page;					/* read-only */
	default: {
		unsigned int i = below(r, NR_MAPS);
		void *p;

		if (is_struct)
			return none_page;
		/* A ring page, if the mapping holds 'len' bytes (past its end
		 * lies other memory of this process).  Another thread may unmap
		 * it meanwhile: unmapped rings leave a PROT_NONE placeholder
		 * (op_munmap), so the copy faults instead of landing in memory
		 * mapped there since.
		 */
		pthread_mutex_lock(&map_lock);
		p = maps[i].len >= len ? maps[i].addr : NULL;
		pthread_mutex_unlock(&map_lock);
		return p ? p : none_page;
	}
	}
}

/* A data buffer: what the kernel reads or fills. */
static void *mutate_ptr(struct rng *r, void *good, size_t len)
{
	return mutate_any(r, good, len, 0);
}

/* The ioctl's struct. */
static void *mutate_arg(struct rng *r, void *good, size_t len)
{
	return mutate_any(r, good, len, 1);
}

static uint32_t mutate_size(struct rng *r, uint32_t good)
{
	static const uint32_t odd[] = { 0, 1, 4, 8, 4095, 4096, 65536, 1u << 20, 0xffffffffu };

	if (!chance(r, 12))
		return good;
	switch (below(r, 4)) {
	case 0: return PICK(r, odd);
	case 1: return good - 8;
	case 2: return good + 8 * (1 + below(r, 4));
	default: return (uint32_t)rnd(r);
	}
}

static uint32_t mutate_flags(struct rng *r, uint32_t good)
{
	if (!chance(r, 8))
		return good;
	return chance(r, 50) ? 1u << below(r, 32) : (uint32_t)rnd(r);
}

/* Flip a few bytes of an argument (reserved fields, padding, anything). */
static void flip(struct rng *r, void *p, size_t len, int percent)
{
	int n;

	if (!chance(r, percent))
		return;
	for (n = 1 + below(r, 3); n > 0; n--)
		((unsigned char *)p)[below(r, (uint32_t)len)] ^= (unsigned char)(1 + below(r, 255));
}

static const char *const sess_names[] = {
	"fz0", "fz1", "fz2", "default", "", "a/b", "..", "x y", "fz-3.ok_",
	"0123456789012345678901234567890",	/* 31: the longest legal one */
};

static void fill_name(struct rng *r, char *dst, size_t size)
{
	memset(dst, 0, size);
	if (chance(r, 5)) {			/* unterminated */
		memset(dst, 'n', size);
		return;
	}
	snprintf(dst, size, "%s", PICK(r, sess_names));
}

static const char *const symbols[] = {
	"vfs_read", "vfs_write", "do_sys_openat2", "__x64_sys_getppid", "kfree",
	"ktrack_no_such_function", "nmi_handle", "", "vfs_read+4",
	"ktrack_tpt_bench",
};

/* ---- operations --------------------------------------------------------- */

static int slot_fd(struct rng *r)
{
	return slots[below(r, NR_SLOTS)];
}

/* Replace a slot's file: the old one closes under whoever is using it. */
static int reopen_slot(struct rng *r)
{
	int fd = open("/dev/ktrack", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	int i = (int)below(r, NR_SLOTS), ret = 0;

	if (fd < 0)
		return -errno;
	pthread_mutex_lock(&slot_lock);
	if (dup3(fd, slots[i], O_CLOEXEC) < 0)
		ret = -errno;
	pthread_mutex_unlock(&slot_lock);
	close(fd);
	return ret;
}

static int do_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

/*
 * Flip, but leave the __u64 at 'out' (a buffer the kernel writes to) as it
 * was: a flipped byte moves it up to 16 MiB, onto other memory of this
 * process.  Where it points is mutate_ptr()'s job.
 */
static void flip_keep(struct rng *r, void *p, size_t len, int percent, const __u64 *out)
{
	__u64 keep = out ? *out : 0;

	flip(r, p, len, percent);
	if (out)
		memcpy((void *)out, &keep, sizeof(keep));
}

/*
 * The last steps of most ops: a mutated size field (the first __u32 of every
 * ioctl struct), a few flipped bits in 'flip_percent' of the calls (never in
 * the output pointer 'out', if any), a mutated pointer, and the ioctl.
 */
static int send_mutated(struct rng *r, int fd, unsigned long cmd, void *arg, uint32_t size,
			int flip_percent, const __u64 *out)
{
	uint32_t usize = mutate_size(r, size);

	memcpy(arg, &usize, sizeof(usize));
	flip_keep(r, arg, size, flip_percent, out);
	return do_ioctl(fd, cmd, mutate_arg(r, arg, size));
}

/*
 * Valid about half of the time: a valid configuration with, in the other
 * half, one field out of range (several at once mostly test the first check).
 */
static int op_set_config(struct rng *r, int fd)
{
	static const uint32_t pages[] = { 0, 3, KTRACK_MAX_BUF_PAGES * 2, 0xffffffffu };
	struct ktrack_config c = { .size = sizeof(c) };

	c.buf_pages = 1u << below(r, 4);
	c.mode = below(r, 2);
	c.clock = below(r, 3);
	c.wakeup_percent = below(r, 101);
	if (chance(r, 20)) {
		c.nr_pids = 1 + below(r, KTRACK_MAX_PID_FILTER);
		c.pids[0] = getpid();
	}
	if (chance(r, 20))
		c.cpu_mask = 1 + below(r, 3);
	if (chance(r, 50)) {
		switch (below(r, 9)) {
		case 0: c.buf_pages = PICK(r, pages); break;
		case 1: c.mode = 2 + below(r, 100); break;
		case 2: c.clock = 3 + below(r, 100); break;
		case 3: c.wakeup_percent = 101 + below(r, 1000); break;
		case 4: c.nr_pids = KTRACK_MAX_PID_FILTER + 1 + below(r, 4); break;
		case 5: c.pids[KTRACK_MAX_PID_FILTER - 1] = (int32_t)rnd(r); break;
		case 6: c.cpu_mask = rnd(r); c.wakeup_bytes = (uint32_t)rnd(r); break;
		case 7: c.flags = mutate_flags(r, 1); break;
		default: flip(r, &c, sizeof(c), 100); break;
		}
	}
	c.size = mutate_size(r, sizeof(c));
	return do_ioctl(fd, KTRACK_IOC_SET_CONFIG, mutate_arg(r, &c, sizeof(c)));
}

static int op_stats(struct rng *r, int fd)
{
	static char cs[512 * 256];	/* 512 entries of the largest size */
	struct ktrack_stats st = { .size = sizeof(st) };

	st.nr_cpus = chance(r, 80) ? below(r, 8) : (uint32_t)rnd(r);
	st.cpus_ptr = (uintptr_t)mutate_ptr(r, cs, sizeof(cs));
	if (chance(r, 30))	/* entry sizes: the ext struct, or any (EINVAL unless 64..256 by 8) */
		st.cpu_stats_size = chance(r, 50) ? sizeof(struct ktrack_cpu_stats_ext) : below(r, 300);
	if (st.nr_cpus > 512 && chance(r, 50))
		st.nr_cpus = 512;
	return send_mutated(r, fd, KTRACK_IOC_GET_STATS, &st, sizeof(st), 4, &st.cpus_ptr);
}

static int op_session(struct rng *r, int fd, unsigned long cmd)
{
	struct ktrack_session_req q = { .size = sizeof(q) };

	fill_name(r, q.name, sizeof(q.name));
	q.size = mutate_size(r, sizeof(q));
	q.flags = mutate_flags(r, 0);
	if (cmd == KTRACK_IOC_SESSION_DESTROY && chance(r, 5))
		q.flags = KTRACK_SESSION_F_ALL;
	flip(r, &q, sizeof(q), 3);
	return do_ioctl(fd, cmd, mutate_arg(r, &q, sizeof(q)));
}

static int op_list(struct rng *r, int fd, unsigned long cmd, size_t entry)
{
	static char entries[FUZZ_OUT_MAX];
	struct ktrack_probe_list l = { .size = sizeof(l) };

	/* ktrack_session_list is ktrack_probe_list without entry_size. */
	if (cmd == KTRACK_IOC_SESSION_LIST)
		l.size = sizeof(struct ktrack_session_list);
	l.count = chance(r, 80) ? below(r, 64) : (uint32_t)rnd(r);
	if ((uint64_t)l.count * entry > sizeof(entries) && chance(r, 50))
		l.count = sizeof(entries) / entry;
	l.entries_ptr = (uintptr_t)mutate_ptr(r, entries, sizeof(entries));
	if (cmd == KTRACK_IOC_PROBE_LIST && chance(r, 30))
		l.entry_size = PICK(r, ((const uint32_t[]){ 0, KTRACK_PROBE_INFO_SIZE_V1, 8, 4096 }));
	l.size = mutate_size(r, l.size);
	flip_keep(r, &l, sizeof(l), 3, &l.entries_ptr);
	return do_ioctl(fd, cmd, mutate_arg(r, &l, sizeof(l)));
}

/* A probe description: a compiled one, maybe mutated. */
static int op_probe_add(struct rng *r, int fd)
{
	static __thread unsigned char buf[KTRACK_PROBE_DESC_MAX + 64];
	struct ktrack_probe_add a = { .size = sizeof(a) };
	struct ktrack_probe_desc *d = (void *)buf;
	size_t len;
	int i = (int)below(r, (uint32_t)nr_corpus);

	if (!nr_corpus)
		return -EINVAL;
	len = corpus[i].len;
	memcpy(buf, corpus[i].blob, len);
	/* Valid as compiled about one time in four: those arm real probes. */
	switch (below(r, 8)) {
	case 0: case 1:
		break;
	case 2: /* bytes anywhere */
		flip(r, buf, len, 100);
		break;
	case 3: /* counts and offsets */
		d->nr_fetch = (uint16_t)(chance(r, 50) ? below(r, KTRACK_PROBE_MAX_FETCH + 2) : rnd(r));
		d->nr_insns = (uint16_t)(chance(r, 50) ? below(r, KTRACK_PROBE_MAX_INSNS + 2) : rnd(r));
		d->fetch_off = chance(r, 50) ? d->fetch_off + 8 * below(r, 4) : (uint32_t)rnd(r);
		d->insns_off = chance(r, 50) ? d->insns_off - 8 : (uint32_t)rnd(r);
		d->strtab_len = chance(r, 50) ? d->strtab_len + 1 : (uint32_t)rnd(r);
		break;
	case 4: { /* a filter program: random postfix, stack under/overflow */
		struct ktrack_probe_insn *in;
		uint16_t n = (uint16_t)(1 + below(r, KTRACK_PROBE_MAX_INSNS + 1)), k;

		if (len + n * sizeof(*in) > sizeof(buf))
			break;
		d->insns_off = (uint32_t)len;
		d->nr_insns = n;
		in = (void *)(buf + len);
		for (k = 0; k < n; k++) {
			in[k].op = (uint8_t)(chance(r, 90) ? 1 + below(r, 4) : rnd(r));
			in[k].cmp = (uint8_t)(chance(r, 90) ? 1 + below(r, 8) : rnd(r));
			in[k].field_kind = (uint8_t)(chance(r, 90) ? 1 + below(r, 5) : rnd(r));
			in[k].field = (uint8_t)below(r, d->nr_fetch + 2);
			in[k].str_off = chance(r, 80) ? 0 : (uint32_t)rnd(r);
			in[k].imm = (int64_t)rnd(r);
		}
		len += n * sizeof(*in);
		d->size = (uint32_t)len;
		break;
	}
	case 5: { /* a fetch: bad sources, types, sizes, deref chains */
		struct ktrack_probe_fetch *f;

		if (!d->nr_fetch || d->fetch_off + sizeof(*f) > len)
			break;
		f = (void *)(buf + d->fetch_off);
		f->src = (uint8_t)below(r, KTRACK_FETCH_SRC_MAX + 2);
		f->type = (uint8_t)below(r, KTRACK_FETCH_T_MAX + 2);
		f->size = (uint8_t)(1u << below(r, 5));
		f->nderef = (uint8_t)below(r, KTRACK_FETCH_MAX_DEREF + 2);
		f->count = (uint16_t)(chance(r, 70) ? 1 : rnd(r));
		f->flags = (uint16_t)below(r, 4);
		f->param = chance(r, 50) ? (int64_t)below(r, 200) : (int64_t)rnd(r);
		f->deref[0] = (int32_t)rnd(r);
		break;
	}
	case 6: /* strings: unterminated names and symbols, other targets */
		if (chance(r, 50))
			memset(d->name, 'p', sizeof(d->name));
		else
			snprintf(d->symbol, sizeof(d->symbol), "%s", PICK(r, symbols));
		if (chance(r, 30))
			memset(d->symbol, 's', sizeof(d->symbol));
		break;
	default: /* header fields */
		d->kind = chance(r, 70) ? 1 + below(r, 5) : (uint32_t)rnd(r);
		d->flags = mutate_flags(r, d->flags);
		d->version = (uint16_t)below(r, 3);
		d->hdr_size = (uint16_t)(chance(r, 50) ? sizeof(*d) + 8 * below(r, 3) : rnd(r));
		d->stack_depth = below(r, KTRACK_PROBE_MAX_STACK + 4);
		d->maxactive = chance(r, 70) ? below(r, 64) : (uint32_t)rnd(r);
		d->size = mutate_size(r, d->size);
		break;
	}
	/* A fresh name now and then, so valid adds do not all collide (EEXIST). */
	if (chance(r, 50))
		snprintf(d->name, sizeof(d->name), "fz%u", below(r, 16));
	a.desc_size = mutate_size(r, (uint32_t)len);
	a.desc_ptr = (uintptr_t)mutate_ptr(r, buf, len);
	return send_mutated(r, fd, KTRACK_IOC_PROBE_ADD, &a, sizeof(a), 3, NULL);
}

static int op_probe_del(struct rng *r, int fd)
{
	struct ktrack_probe_del q = { .size = sizeof(q) };

	q.id = chance(r, 50) ? below(r, 64) : 0;
	if (chance(r, 80))
		snprintf(q.name, sizeof(q.name), "fz%u", below(r, 16));
	else
		fill_name(r, q.name, sizeof(q.name));
	q.flags = chance(r, 10) ? KTRACK_PROBE_DEL_ALL : mutate_flags(r, 0);
	return send_mutated(r, fd, KTRACK_IOC_PROBE_DEL, &q, sizeof(q), 3, NULL);
}

static int op_probe_get(struct rng *r, int fd)
{
	static char out[KTRACK_PROBE_DESC_MAX];
	struct ktrack_probe_get g = { .size = sizeof(g) };

	g.id = below(r, 64);
	g.desc_size = chance(r, 70) ? below(r, sizeof(out)) : (uint32_t)rnd(r);
	g.desc_ptr = (uintptr_t)mutate_ptr(r, out, sizeof(out));
	return send_mutated(r, fd, KTRACK_IOC_PROBE_GET, &g, sizeof(g), 3, &g.desc_ptr);
}

/* A profile read: ids that may be profiling probes, sizes, pointers. */
static int op_probe_profile(struct rng *r, int fd)
{
	/* as many as a profile can ever hold: a flipped count stays inside */
	static struct ktrack_profile_entry out[2 * KTRACK_PROBE_MAX_FUNCS];
	struct ktrack_probe_profile q = { .size = sizeof(q) };

	q.id = below(r, 64);
	q.count = chance(r, 70) ? below(r, 65) : (uint32_t)rnd(r);
	q.entry_size = chance(r, 80) ? sizeof(out[0]) : below(r, 128);
	q.entries_ptr = (uintptr_t)mutate_ptr(r, out, sizeof(out));
	q.overflow = chance(r, 90) ? 0 : rnd(r);
	return send_mutated(r, fd, KTRACK_IOC_PROBE_PROFILE, &q, sizeof(q), 3, &q.entries_ptr);
}

/*
 * SNAPSHOT_GET with mutated sizes and pointers, and buffers too small:
 * a snapshot that stays must be taken whole later, one that faults stays.
 */
static int op_snapshot(struct rng *r, int fd)
{
	static char buf[1 << 20];
	struct ktrack_snapshot s = { .size = sizeof(s) };

	s.buf_len = chance(r, 70) ? sizeof(buf) : below(r, 4096);
	s.buf_ptr = (uintptr_t)mutate_ptr(r, buf, sizeof(buf));
	return send_mutated(r, fd, KTRACK_IOC_SNAPSHOT_GET, &s, sizeof(s), 3, &s.buf_ptr);
}

/*
 * The stack tracer: START with filters that hook a few functions, none, or
 * are malformed (never "": every function would slow the guest for
 * seconds per START), STOP, GET with mutated sizes and pointers.
 */
static const char *const stack_filters[] = {
	"vfs_read", "vfs_read vfs_write", "ksys_*", "ktrack_no_such_fn", "!vfs_read", "vfs_read  ",
	"vfs_read ktrack_no_such_fn", "*zz*zz*zz*zz*zz*zz*zz*",
};

static int op_stack(struct rng *r, int fd)
{
	static struct ktrack_stack_frame frames[KTRACK_STACK_MAX_FRAMES];
	struct ktrack_stack_start st = { .size = sizeof(st) };
	struct ktrack_stack_max m = { .size = sizeof(m) };

	switch (below(r, 3)) {
	case 0:
		if (chance(r, 90))
			snprintf(st.filter, sizeof(st.filter), "%s", PICK(r, stack_filters));
		else
			memset(st.filter, 'v', sizeof(st.filter));	/* unterminated */
		st.flags = chance(r, 90) ? 0 : (uint32_t)rnd(r);
		return send_mutated(r, fd, KTRACK_IOC_STACK_START, &st, sizeof(st), 3, NULL);
	case 1:
		return do_ioctl(fd, KTRACK_IOC_STACK_STOP, NULL);
	default:
		m.nr = chance(r, 80) ? below(r, KTRACK_STACK_MAX_FRAMES + 1) : KTRACK_STACK_MAX_FRAMES;
		m.frames_ptr = (uintptr_t)mutate_ptr(r, frames, sizeof(frames));
		return send_mutated(r, fd, KTRACK_IOC_STACK_GET, &m, sizeof(m), 3, &m.frames_ptr);
	}
}

static const char *const obj_funcs[] = {
	"vfs_read vfs_write", "do_sys_openat2", "vfs_*", "ktrack_no_such_fn",
	"pt_*", "  ", "vfs_read\tvfs_write", "[", "*zz*zz*zz*zz*zz*zz*zz*zz*zz*",
};

/* As op_set_config: valid half of the time, else one thing wrong. */
static int op_obj_config(struct rng *r, int fd)
{
	static struct ktrack_obj_func fa[8];
	struct ktrack_obj_config c = { .size = sizeof(c) };
	char funcs[KTRACK_OBJ_FUNCS_MAX + 64];
	uint32_t i;

	snprintf(funcs, sizeof(funcs), "%s", PICK(r, obj_funcs));
	c.functions_ptr = (uintptr_t)funcs;
	c.functions_len = (uint32_t)strlen(funcs);
	c.flags = below(r, 16) & (KTRACK_OBJF_CHANGES_ONLY | KTRACK_OBJF_API | KTRACK_OBJF_NO_FREE);
	c.max_objects = 1 + below(r, 1024);
	c.nr_args = 1 + below(r, KTRACK_OBJ_MAX_ARGS);
	c.max_hits = below(r, 10);
	c.nr_watch = below(r, KTRACK_OBJ_MAX_WATCH + 1);
	for (i = 0; i < KTRACK_OBJ_MAX_WATCH; i++) {
		c.watch[i].offset = 8 * below(r, 16);
		c.watch[i].size = (uint16_t)(1u << below(r, 4));
	}
	if (chance(r, 20))
		snprintf(c.destructor, sizeof(c.destructor), "%s", PICK(r, symbols));
	if (chance(r, 10)) {
		c.flags |= KTRACK_OBJF_DERIVE;
		c.derive_offset = 8 * below(r, 8);
	}
	if (chance(r, 10)) {
		c.flags |= KTRACK_OBJF_FUNC_ADDRS;
		for (i = 0; i < 8; i++) {
			fa[i].addr = chance(r, 50) ? 0xffffffff81000000ULL + below(r, 1 << 24) : rnd(r);
			fa[i].arg_mask = (uint8_t)(1 + below(r, 3));
		}
		c.functions_ptr = (uintptr_t)fa;
		c.functions_len = 1 + below(r, 8);
		c.func_size = sizeof(fa[0]);
	}
	if (chance(r, 50)) {
		switch (below(r, 10)) {
		case 0: memset(funcs, 'a', sizeof(funcs)); c.functions_len = sizeof(funcs); break;
		case 1: c.max_objects = chance(r, 50) ? 0 : KTRACK_OBJ_MAX_OBJECTS + 1 + below(r, 10); break;
		case 2: c.nr_args = chance(r, 50) ? 0 : KTRACK_OBJ_MAX_ARGS + 1; break;
		case 3: c.nr_watch = KTRACK_OBJ_MAX_WATCH + 1; break;
		case 4: c.watch[0].size = 3; c.watch[1].offset = (uint32_t)rnd(r); c.nr_watch = 2; break;
		case 5: memset(c.destructor, 'd', sizeof(c.destructor)); break;
		case 6: c.destructor_arg = KTRACK_OBJ_MAX_ARGS + below(r, 4); break;
		case 7: c.flags = (uint32_t)rnd(r); break;
		case 8: c.func_size = below(r, 64); fa[0].arg_mask = 0xff; break;
		default: flip(r, &c, sizeof(c), 100); break;
		}
	}
	c.max_age_ns = chance(r, 90) ? 0 : rnd(r) >> below(r, 64);
	c.functions_ptr = (uintptr_t)mutate_ptr(r, (void *)(uintptr_t)c.functions_ptr, c.functions_len);
	c.size = mutate_size(r, sizeof(c));
	return do_ioctl(fd, KTRACK_IOC_OBJ_CONFIG, mutate_arg(r, &c, sizeof(c)));
}

static int op_obj_source(struct rng *r, int fd)
{
	struct ktrack_obj_source s = { .size = sizeof(s) };

	s.type = below(r, 6);
	s.flags = chance(r, 80) ? below(r, 2) : (uint32_t)rnd(r);
	s.arg = below(r, 8);
	s.deref_offset = chance(r, 80) ? 8 * below(r, 8) : (uint32_t)rnd(r);
	snprintf(s.symbol, sizeof(s.symbol), "%s", PICK(r, symbols));
	if (chance(r, 5))
		memset(s.symbol, 'y', sizeof(s.symbol));
	return send_mutated(r, fd, KTRACK_IOC_OBJ_ADD_SOURCE, &s, sizeof(s), 3, NULL);
}

static int op_obj_addr(struct rng *r, int fd, unsigned long cmd)
{
	struct ktrack_obj_addr a = { .size = sizeof(a) };

	a.addr = chance(r, 50) ? 0xffff888000000000ULL + 64 * below(r, 64) : rnd(r);
	a.flags = chance(r, 10) ? KTRACK_OBJ_ADDR_ALL : mutate_flags(r, 0);
	return send_mutated(r, fd, cmd, &a, sizeof(a), 3, NULL);
}

static int op_unknown(struct rng *r, int fd)
{
	static char arg[4096];
	unsigned int dir = below(r, 4), nr, size;

	/* Numbers just past each block, and random ones. */
	nr = chance(r, 50) ? PICK(r, ((const unsigned int[]){ 0x0b, 0x1f, 0x24, 0x38, 0xff })) : below(r, 256);
	size = chance(r, 50) ? below(r, 256) : below(r, 1 << 14);
	return do_ioctl(fd, _IOC(dir, chance(r, 90) ? KTRACK_IOC_MAGIC : below(r, 256), nr, size),
			mutate_arg(r, arg, sizeof(arg) < FUZZ_ARG_MAX ? sizeof(arg) : FUZZ_ARG_MAX));
}

/*
 * Unmap a ring, leaving a PROT_NONE placeholder in its place: another
 * thread may still hold a pointer into it (mutate_ptr), and nothing else
 * must ever be mapped there.
 */
static int unmap_ring(void *addr, size_t len)
{
	return mmap(addr, len, PROT_NONE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		    -1, 0) == MAP_FAILED ? -errno : 0;
}

static int op_mmap(struct rng *r, int fd)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)pg * (1 + below(r, chance(r, 80) ? 4 : 64));
	off_t off = (off_t)pg * (chance(r, 80) ? below(r, 8) : below(r, 1 << 16));
	int prot = chance(r, 70) ? PROT_READ : PROT_READ | PROT_WRITE;
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, off);
	int i;

	if (p == MAP_FAILED)
		return -errno;
	if (chance(r, 10))	/* try to make data pages writable */
		mprotect(p, len, PROT_READ | PROT_WRITE);
	pthread_mutex_lock(&map_lock);
	i = (int)below(r, NR_MAPS);
	if (maps[i].addr)
		unmap_ring(maps[i].addr, maps[i].len);
	maps[i].addr = p;
	maps[i].len = len;
	pthread_mutex_unlock(&map_lock);
	return 0;
}

static int op_munmap(struct rng *r)
{
	int i = (int)below(r, NR_MAPS), ret = 0;

	pthread_mutex_lock(&map_lock);
	if (maps[i].addr) {
		ret = unmap_ring(maps[i].addr, maps[i].len);
		maps[i].addr = NULL;
	}
	pthread_mutex_unlock(&map_lock);
	return ret;
}

static int op_read(struct rng *r, int fd)
{
	static __thread char buf[1 << 16];
	size_t len = chance(r, 70) ? sizeof(buf) : below(r, 256);
	ssize_t n;

	/* A ring page as the buffer while another thread may unmap it:
	 * the copy must fault cleanly, not corrupt.
	 */
	n = read(fd, mutate_ptr(r, buf, len), len);
	return n < 0 ? -errno : 0;
}

static int op_write(struct rng *r, int fd)
{
	static char text[KTRACK_MARKER_MAX + 64];
	size_t len = chance(r, 80) ? below(r, 64) : below(r, sizeof(text));
	ssize_t n;

	memset(text, 'm', sizeof(text));
	n = write(fd, mutate_ptr(r, text, len), len);
	return n < 0 ? -errno : 0;
}

static int op_poll(struct rng *r, int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT | POLLPRI };

	(void)r;
	return poll(&p, 1, 0) < 0 ? -errno : 0;
}

#endif
