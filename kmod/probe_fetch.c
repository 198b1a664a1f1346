// SPDX-License-Identifier: GPL-2.0
/*
 * probe_fetch.c - what runs in a probe handler: fetch the described values
 * with nofault copies, run the filter program, write the record.  Runs in
 * any context (NMI included): never sleeps, never allocates, takes no lock.
 * A per-CPU nesting level gives each context its own scratch buffer and
 * bounds re-entry (a probe hit from inside a handler).
 */
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "probe_internal.h"
#include "session.h"	/* ->running, read locklessly on the hit path */

#define KT_NEST_MAX	4	/* task, softirq, hardirq, NMI */
#define KT_SCRATCH	(sizeof(struct ktrack_rec_probe) + KTRACK_PROBE_MAX_DATA)

/*
 * Frames a stack trace taken in the handler has above the probed context:
 * ktrack's own, then the probe machinery's (kprobe/ftrace/fprobe/rethook
 * handlers, trampolines, the int3 path).  They are saved, then cut off.
 */
#define KT_STACK_ABOVE	24

struct kt_scratch {
	int nest;
	u64 buf[KT_NEST_MAX][KT_SCRATCH / sizeof(u64)];
	/* the raw trace, then the STACK record built from it */
	unsigned long raw[KT_NEST_MAX][KTRACK_PROBE_MAX_STACK + KT_STACK_ABOVE];
	u64 stack[KT_NEST_MAX][(sizeof(struct ktrack_rec_stack) +
				KTRACK_PROBE_MAX_STACK * sizeof(u64)) / sizeof(u64)];
};

static struct kt_scratch __percpu *kt_scratch;

/*
 * u, ur: a record fetched before kt_probe_emit(), preemptible, so that
 * user pages not mapped yet fault in (as ftrace's uprobe events read):
 * a buffer per CPU, under its mutex, since the task may move or sleep.
 */
struct kt_ubuf {
	struct mutex lock;
	u64 buf[KT_SCRATCH / sizeof(u64)];
};

static struct kt_ubuf __percpu *kt_ubufs;

int kt_fetch_init(void)
{
	int cpu;

	/* alloc_percpu() gives at most PCPU_MIN_UNIT_SIZE per object */
	BUILD_BUG_ON(sizeof(struct kt_scratch) > PCPU_MIN_UNIT_SIZE);
	BUILD_BUG_ON(sizeof(struct kt_ubuf) > PCPU_MIN_UNIT_SIZE);
	kt_scratch = alloc_percpu(struct kt_scratch);
	kt_ubufs = alloc_percpu(struct kt_ubuf);
	if (!kt_scratch || !kt_ubufs) {
		free_percpu(kt_scratch);
		free_percpu(kt_ubufs);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu)
		mutex_init(&per_cpu_ptr(kt_ubufs, cpu)->lock);
	return 0;
}

void kt_fetch_exit(void)
{
	free_percpu(kt_scratch);
	free_percpu(kt_ubufs);
}

/* Duration clock: NMI-safe and monotonic across CPUs (entry and exit may
 * run on different CPUs when the task migrates in between).
 */
notrace u64 kt_probe_now(void)
{
	return ktime_get_mono_fast_ns();
}
NOKPROBE_SYMBOL(kt_probe_now);

notrace void kt_entry_save(struct kt_entry_data *d, struct pt_regs *regs)
{
	unsigned int i;

	d->ts = kt_probe_now();
	for (i = 0; i < KTRACK_FETCH_MAX_ARG; i++)
		d->args[i] = regs_get_kernel_argument(regs, i);
}
NOKPROBE_SYMBOL(kt_entry_save);

static notrace long kt_read(void *dst, unsigned long addr, size_t n, bool user, bool may_fault)
{
	/* u, ur handlers run in their task, preemptible: pages may come in */
	if (user && may_fault)
		return copy_from_user(dst, (const void __user *)addr, n) ? -EFAULT : 0;
	if (user)
		return copy_from_user_nofault(dst, (const void __user *)addr, n);
	return copy_from_kernel_nofault(dst, (const void *)addr, n);
}
NOKPROBE_SYMBOL(kt_read);

/*
 * Copy a NUL-terminated string of at most 'max' - 1 bytes; returns its
 * length or -EFAULT.  Reads in chunks that never cross a page, so a fault
 * means the string cannot continue there.
 */
static notrace long kt_read_str(char *dst, unsigned long addr, size_t max, bool user,
			       bool may_fault)
{
	size_t done = 0;

	while (done < max - 1) {
		size_t chunk = min3(max - 1 - done, (size_t)32,
				    (size_t)(PAGE_SIZE - ((addr + done) & ~PAGE_MASK)));
		char *nul;

		if (kt_read(dst + done, addr + done, chunk, user, may_fault))
			return done ? (long)done : -EFAULT;
		nul = memchr(dst + done, 0, chunk);
		if (nul)
			return nul - dst;
		done += chunk;
	}
	return done;
}
NOKPROBE_SYMBOL(kt_read_str);

/*
 * Where an e probe's field lives in the event's record: the field itself,
 * or, for a __data_loc / __rel_loc field, the data its u32 locates (length
 * in the high half, offset in the low half; relative to the end of the
 * field for __rel_loc), with in *room the bytes of the record (or of the
 * located data) from there on.  0 when it lies outside the record.
 */
static notrace unsigned long kt_field(const struct kt_fetch *f, const struct kt_fetch_ctx *c,
				      u32 *room)
{
	u32 off = f->param, loc, start, len;

	if (!c->raw || off >= c->raw_size)
		return 0;
	if (!(f->flags & (KTRACK_FETCH_F_DATA_LOC | KTRACK_FETCH_F_REL_LOC))) {
		*room = c->raw_size - off;
		return (unsigned long)(c->raw + off);
	}
	if (c->raw_size - off < sizeof(loc))
		return 0;
	memcpy(&loc, c->raw + off, sizeof(loc));
	start = (loc & 0xffff) + (f->flags & KTRACK_FETCH_F_REL_LOC ? off + sizeof(loc) : 0);
	len = loc >> 16;
	if (start >= c->raw_size || len > c->raw_size - start)
		return 0;
	*room = len;
	return (unsigned long)(c->raw + start);
}
NOKPROBE_SYMBOL(kt_field);

/* Word n of a user stack (0 when it cannot be read). */
static notrace unsigned long kt_user_stack_nth(struct pt_regs *regs, unsigned int n,
					       bool may_fault)
{
	unsigned long v;

	if (kt_read(&v, user_stack_pointer(regs) + n * sizeof(v), sizeof(v), true, may_fault))
		return 0;
	return v;
}
NOKPROBE_SYMBOL(kt_user_stack_nth);

static notrace unsigned long kt_source(const struct kt_fetch *f, const struct kt_fetch_ctx *c)
{
	switch (f->src) {
	case KTRACK_FETCH_SRC_ARG:
		return c->args[f->param - 1];
	case KTRACK_FETCH_SRC_REG:
		return c->regs ? regs_get_register(c->regs, f->param) : 0;
	case KTRACK_FETCH_SRC_STACK:
		if (c->regs && user_mode(c->regs))	/* u, ur: the user stack */
			return kt_user_stack_nth(c->regs, f->param, c->may_fault);
		return c->regs ? regs_get_kernel_stack_nth(c->regs, f->param) : 0;
	case KTRACK_FETCH_SRC_RETVAL:
		return c->exit ? c->retval : 0;
	case KTRACK_FETCH_SRC_DURATION:
		return c->exit ? c->duration : 0;
	case KTRACK_FETCH_SRC_IMM:
		return f->param;
	case KTRACK_FETCH_SRC_CPU:
		return raw_smp_processor_id();
	default:
		return 0;
	}
}
NOKPROBE_SYMBOL(kt_source);

/* A scalar of 'size' bytes into its slot. */
static __always_inline void kt_store(u8 *slot, unsigned long val, u8 size)
{
	switch (size) {
	case 1:
		*(u8 *)slot = val;
		break;
	case 2:
		*(u16 *)slot = val;
		break;
	case 4:
		*(u32 *)slot = val;
		break;
	default:
		*(u64 *)slot = val;
		break;
	}
}

static inline bool kt_is_string_type(u8 type)
{
	return type == KTRACK_FETCH_T_STRING || type == KTRACK_FETCH_T_USTRING;
}

/*
 * Fetch one value into its slot (strings: into the dynamic area at *dyn).
 * Returns false when a read faulted (the slot then holds the marker).
 */
static notrace bool kt_fetch_one(const struct kt_fetch *f, const struct kt_fetch_ctx *c,
				 u8 *data, u32 *dyn)
{
	bool user = f->flags & KTRACK_FETCH_F_USER;
	u8 *slot = data + f->slot;
	unsigned long val, addr;
	u32 field_room = 0;
	unsigned int i;

	if (f->src == KTRACK_FETCH_SRC_COMM) {
		u32 n = min_t(u32, strnlen(current->comm, TASK_COMM_LEN),
			      KTRACK_PROBE_MAX_DATA - *dyn);

		memcpy(data + *dyn, current->comm, n);
		*(u32 *)slot = (*dyn << 16) | n;
		*dyn += n;
		return true;
	}
	if (f->src == KTRACK_FETCH_SRC_FIELD) {
		/*
		 * The first read stays inside the event's record: the field
		 * (validation makes its offset 0), the pointer it holds, or a
		 * string in place, bounded below.
		 */
		val = kt_field(f, c, &field_room);
		if (!val || (f->nderef && field_room < (f->nderef > 1 ? sizeof(val) : f->slot_len)))
			goto fault;
	} else if (c->no_entry && (f->src == KTRACK_FETCH_SRC_ARG ||
				   f->src == KTRACK_FETCH_SRC_DURATION)) {
		goto fault;	/* unknown: not 0 */
	} else {
		val = kt_source(f, c);
	}
	for (i = 0; i + 1 < f->nderef; i++) {
		if (kt_read(&val, val + f->deref[i], sizeof(val), user, c->may_fault))
			goto fault;
	}
	addr = f->nderef ? val + f->deref[f->nderef - 1] : val;

	if (f->type == KTRACK_FETCH_T_STRING || f->type == KTRACK_FETCH_T_USTRING) {
		u32 room = min_t(u32, KTRACK_PROBE_MAX_DATA - *dyn, KTRACK_FETCH_MAX_STR);
		long n;

		if (f->type == KTRACK_FETCH_T_USTRING)
			user = true;
		if (f->src == KTRACK_FETCH_SRC_FIELD && !f->nderef)
			room = min_t(u32, room, field_room + 1);
		if (room < 2) {
			*(u32 *)slot = *dyn << 16;
			return true;
		}
		if (f->src == KTRACK_FETCH_SRC_FIELD && !f->nderef) {
			/* in the record, which kt_field() bounded: nothing can fault */
			n = strnlen((const char *)addr, room - 1);
			memcpy(data + *dyn, (const void *)addr, n);
		} else {
			n = kt_read_str(data + *dyn, addr, room, user, c->may_fault);
		}
		if (n < 0) {
			*(u32 *)slot = *dyn << 16;
			return false;
		}
		*(u32 *)slot = (*dyn << 16) | n;
		*dyn += n;
		return true;
	}
	if (f->nderef == 1 && f->src == KTRACK_FETCH_SRC_FIELD) {
		/* the field itself, inside the record (field_room checked above) */
		memcpy(slot, (const void *)addr, f->slot_len);
		return true;
	}
	if (f->nderef) {
		if (kt_read(slot, addr, f->slot_len, user, c->may_fault))
			goto fault;
		return true;
	}
	kt_store(slot, val, f->size);
	return true;
fault:
	/*
	 * A string's slot is a location: an empty string at the end of the
	 * data (docs/UAPI.md), never 0xffffffff, which the filter would take
	 * for 64 KiB past the record (review 2026-11-27, S1-2).
	 */
	if (kt_is_string_type(f->type))
		*(u32 *)slot = *dyn << 16;
	else
		memset(slot, KTRACK_FETCH_FAULT, f->slot_len);
	return false;
}
NOKPROBE_SYMBOL(kt_fetch_one);

/* Glob match with '*', '?' and [...] classes, iterative (bounded work). */
notrace bool kt_glob(const char *pat, const char *s, u32 slen)
{
	const char *star_p = NULL;
	u32 i = 0, star_i = 0;

	for (;;) {
		if (*pat == '*') {
			star_p = ++pat;
			star_i = i;
			continue;
		}
		if (i == slen) {
			if (!*pat)
				return true;
			goto backtrack;
		}
		if (*pat == '?' || (*pat && *pat == s[i])) {
			pat++;
			i++;
			continue;
		}
		if (*pat == '[') {
			const char *q = pat + 1;
			bool neg = *q == '!', hit = false;

			if (neg)
				q++;
			while (*q && *q != ']') {
				if (q[1] == '-' && q[2] && q[2] != ']') {
					hit |= s[i] >= q[0] && s[i] <= q[2];
					q += 3;
				} else {
					hit |= s[i] == *q++;
				}
			}
			if (*q == ']' && hit != neg) {
				pat = q + 1;
				i++;
				continue;
			}
		}
backtrack:
		if (!star_p || star_i >= slen)
			return false;
		pat = star_p;
		i = ++star_i;
	}
}
NOKPROBE_SYMBOL(kt_glob);

static notrace bool kt_cmp_num(u8 cmp, bool sign, u64 v, s64 imm)
{
	switch (cmp) {
	case KTRACK_FLT_EQ:
		return v == (u64)imm;
	case KTRACK_FLT_NE:
		return v != (u64)imm;
	case KTRACK_FLT_LT:
		return sign ? (s64)v < imm : v < (u64)imm;
	case KTRACK_FLT_LE:
		return sign ? (s64)v <= imm : v <= (u64)imm;
	case KTRACK_FLT_GT:
		return sign ? (s64)v > imm : v > (u64)imm;
	case KTRACK_FLT_GE:
		return sign ? (s64)v >= imm : v >= (u64)imm;
	case KTRACK_FLT_BITAND:
		return (v & (u64)imm) != 0;
	default:
		return false;
	}
}
NOKPROBE_SYMBOL(kt_cmp_num);

static notrace bool kt_cmp_str(const struct kt_probe *p, const struct ktrack_probe_insn *in,
			       const char *s, u32 len)
{
	const char *pat = p->strtab + in->str_off;
	bool eq;

	if (in->cmp == KTRACK_FLT_GLOB)
		return kt_glob(pat, s, len);
	eq = strlen(pat) == len && !memcmp(pat, s, len);
	return in->cmp == KTRACK_FLT_EQ ? eq : !eq;
}
NOKPROBE_SYMBOL(kt_cmp_str);

static notrace u64 kt_slot_value(const struct kt_fetch *f, const u8 *slot, bool *sign)
{
	*sign = f->type == KTRACK_FETCH_T_S;
	switch (f->size) {
	case 1:
		return *sign ? (u64)(s64)*(const s8 *)slot : *slot;
	case 2:
		return *sign ? (u64)(s64)*(const s16 *)slot : *(const u16 *)slot;
	case 4:
		return *sign ? (u64)(s64)*(const s32 *)slot : *(const u32 *)slot;
	default:
		return *(const u64 *)slot;
	}
}
NOKPROBE_SYMBOL(kt_slot_value);

/* The filter VM: validated in probe_desc.c (depth, fields, strings). */
static notrace bool kt_filter(const struct kt_probe *p, const u8 *data)
{
	bool stack[KTRACK_FLT_MAX_DEPTH];
	int sp = 0;
	u16 i;

	for (i = 0; i < p->nr_insns; i++) {
		const struct ktrack_probe_insn *in = &p->insns[i];
		bool r = false, sign = false;
		u64 v = 0;

		switch (in->op) {
		case KTRACK_FLT_CMP:
			switch (in->field_kind) {
			case KTRACK_FLD_FETCH: {
				const struct kt_fetch *f = &p->fetch[in->field];
				const u8 *slot = data + f->slot;

				if (kt_is_string_type(f->type)) {
					u32 loc = *(const u32 *)slot;

					/* inside the data, or no match */
					r = (loc >> 16) + (loc & 0xffff) <= KTRACK_PROBE_MAX_DATA &&
					    kt_cmp_str(p, in, (const char *)data + (loc >> 16),
						       loc & 0xffff);
					goto push;
				}
				v = kt_slot_value(f, slot, &sign);
				break;
			}
			case KTRACK_FLD_PID:
				v = current->pid;
				break;
			case KTRACK_FLD_TGID:
				v = current->tgid;
				break;
			case KTRACK_FLD_CPU:
				v = raw_smp_processor_id();
				break;
			case KTRACK_FLD_COMM:
				r = kt_cmp_str(p, in, current->comm,
					       strnlen(current->comm, TASK_COMM_LEN));
				goto push;
			}
			r = kt_cmp_num(in->cmp, sign, v, in->imm);
push:
			stack[sp++] = r;
			break;
		case KTRACK_FLT_AND:
			sp--;
			stack[sp - 1] = stack[sp - 1] && stack[sp];
			break;
		case KTRACK_FLT_OR:
			sp--;
			stack[sp - 1] = stack[sp - 1] || stack[sp];
			break;
		case KTRACK_FLT_NOT:
			stack[sp - 1] = !stack[sp - 1];
			break;
		}
	}
	return sp ? stack[0] : true;
}
NOKPROBE_SYMBOL(kt_filter);

/*
 * The hit's kernel stack as a STACK record in 'st': the probed function
 * ('ip', for entries and exits), then its caller chain from 'parent_ip'
 * on.  stack_trace_save_regs(), which would start at the probed context,
 * is not exported to modules, so the trace is taken here and cut where
 * the parent's return address appears; without it (e probes, a parent
 * the unwinder did not see) only ktrack's own frames are cut.
 */
static notrace u32 kt_build_stack(struct kt_probe *p, struct ktrack_rec_stack *st,
				  unsigned long *raw, u32 depth, u16 event, u64 ip, u64 parent_ip)
{
	u32 n = stack_trace_save(raw, depth + KT_STACK_ABOVE, 0);
	bool at_ip = event != KTRACK_PROBE_EV_TP && ip, found = false;
	u32 i, first = 0, nr = 0;

	/*
	 * The nearest of: the parent's return address (the caller's frame),
	 * or ip + 1, where an int3 kprobe (one at an offset) interrupted the
	 * probed function: the machinery's frames lie above either.
	 */
	for (i = 0; i < n && i <= KT_STACK_ABOVE && !found; i++) {
		if (parent_ip && raw[i] == parent_ip) {
			first = i;
			found = true;
		} else if (at_ip && raw[i] == ip + 1) {
			first = i + 1;
			found = true;
		}
	}
	if (found) {
		if (at_ip)
			st->ips[nr++] = ip;
	} else {
		while (first < n && within_module(raw[first], THIS_MODULE))
			first++;
	}
	for (i = first; i < n && nr < depth; i++)
		st->ips[nr++] = raw[i];
	st->probe_id = p->id;
	st->nr = nr;
	return sizeof(*st) + nr * sizeof(st->ips[0]);
}
NOKPROBE_SYMBOL(kt_build_stack);

/*
 * Triggers (KTRACK_ACT_*), in the manner of ftrace's traceoff/traceon
 * counts: an action acts only when it changes something (STOP on a
 * session recording, START on a paused one), at most 'count' times; the
 * count is taken first, so two CPUs racing for its last turn act once.
 * Its TRIGGER record marks the moment in the trace.
 */
static notrace bool kt_action_take(struct kt_action *a, u64 *nth)
{
	s64 old = atomic64_read(&a->fired);

	do {
		if (a->count && old >= a->count)
			return false;
	} while (!atomic64_try_cmpxchg(&a->fired, &old, old + 1));
	*nth = old + 1;
	return true;
}
NOKPROBE_SYMBOL(kt_action_take);

static notrace void kt_trigger_rec(struct kt_probe *p, u16 type, u64 nth)
{
	struct ktrack_rec_trigger t = {
		.probe_id = p->id,
		.action = type,
		.nth = nth,
	};

	/* lost like any record when the ring refuses it (counted there) */
	ktrack_session_write(p->session, KTRACK_REC_TRIGGER, &t, sizeof(t));
}
NOKPROBE_SYMBOL(kt_trigger_rec);

/* Before the hit's record: START resumes a paused session. */
static notrace void kt_actions_before(struct kt_probe *p)
{
	struct ktrack_session *s = p->session;
	u64 nth;
	u16 i;

	for (i = 0; i < p->nr_actions; i++) {
		struct kt_action *a = &p->actions[i];

		if (a->type != KTRACK_ACT_START || !READ_ONCE(s->trig_off) ||
		    !kt_action_take(a, &nth))
			continue;
		WRITE_ONCE(s->trig_off, 0);
		kt_trigger_rec(p, a->type, nth);
	}
}
NOKPROBE_SYMBOL(kt_actions_before);

/* Does this hit get a stack by a STACK action? */
static notrace bool kt_action_stack(struct kt_probe *p)
{
	u64 nth;
	u16 i;

	for (i = 0; i < p->nr_actions; i++)
		if (p->actions[i].type == KTRACK_ACT_STACK)
			return kt_action_take(&p->actions[i], &nth);
	return false;
}
NOKPROBE_SYMBOL(kt_action_stack);

/*
 * After the hit's record: SNAPSHOT has the records up to this one copied
 * aside (a turn finding the slot taken is counted missed there), STOP
 * pauses the session, this hit its last record.
 */
static notrace void kt_actions_after(struct kt_probe *p)
{
	struct ktrack_session *s = p->session;
	u64 nth;
	u16 i;

	/* SNAPSHOT first: a STOP of the same hit would refuse its trigger record */
	for (i = 0; p->has_snapshot && i < p->nr_actions; i++) {
		struct kt_action *a = &p->actions[i];

		if (a->type == KTRACK_ACT_SNAPSHOT && kt_action_take(a, &nth) &&
		    ktrack_snapshot_claim(s)) {
			kt_trigger_rec(p, a->type, nth);
			ktrack_snapshot_queue(s, p->id, nth);
		}
	}
	for (i = 0; i < p->nr_actions; i++) {
		struct kt_action *a = &p->actions[i];

		if (a->type != KTRACK_ACT_STOP || READ_ONCE(s->trig_off) ||
		    !kt_action_take(a, &nth))
			continue;
		kt_trigger_rec(p, a->type, nth);
		WRITE_ONCE(s->trig_off, 1);
	}
}
NOKPROBE_SYMBOL(kt_actions_after);

/* A kt_fetch.direct fetch's value, its entry at hand (kt_source()'s, with no call). */
static __always_inline unsigned long kt_direct_value(const struct kt_fetch *f,
						     const struct kt_fetch_ctx *ctx)
{
	if (f->src == KTRACK_FETCH_SRC_ARG)
		return ctx->args[f->param - 1];
	if (f->src == KTRACK_FETCH_SRC_RETVAL)
		return ctx->exit ? ctx->retval : 0;
	return ctx->exit ? ctx->duration : 0;
}

/* The record of a hit: its header and fetched values (fault_mask, data_len set). */
static notrace void kt_fill(struct kt_probe *p, struct kt_fetch_ctx *ctx,
			    struct ktrack_rec_probe *rec, u16 event, u64 ip, u64 parent_ip)
{
	u32 dyn = p->fixed_len, fault = 0;
	u16 i;

	rec->probe_id = p->id;
	rec->event = event;
	rec->ip = ip;
	rec->parent_ip = parent_ip;
	rec->__pad = 0;
	/* every byte is a slot's and written below, or zeroed here */
	if (!p->no_gaps || ctx->no_entry)
		memset(rec->data, 0, dyn);
	for (i = 0; i < p->nr_fetch; i++) {
		const struct kt_fetch *f = &p->fetch[i];

		/* the common fetches, a value as it is: no call (kt_source()'s values) */
		if (f->direct && !ctx->no_entry) {
			kt_store(rec->data + f->slot, kt_direct_value(f, ctx), f->size);
			continue;
		}
		if (!kt_fetch_one(f, ctx, rec->data, &dyn))
			fault |= 1U << i;
	}
	rec->fault_mask = fault;
	rec->data_len = dyn;
}
NOKPROBE_SYMBOL(kt_fill);

/*
 * kt_fill() for kt_in_place() probes, every fetch a register value with
 * its entry at hand: each slot is a store, nothing to test or zero around
 * it but the gaps of a layout that has some.
 */
static __always_inline void kt_fill_direct(struct kt_probe *p, struct kt_fetch_ctx *ctx,
					   struct ktrack_rec_probe *rec, u16 event, u64 ip,
					   u64 parent_ip)
{
	u16 i;

	rec->probe_id = p->id;
	rec->event = event;
	rec->fault_mask = 0;
	rec->data_len = p->fixed_len;
	rec->ip = ip;
	rec->parent_ip = parent_ip;
	rec->__pad = 0;
	if (!p->no_gaps)
		memset(rec->data, 0, p->fixed_len);
	for (i = 0; i < p->nr_fetch; i++) {
		const struct kt_fetch *f = &p->fetch[i];

		kt_store(rec->data + f->slot, kt_direct_value(f, ctx), f->size);
	}
}

/*
 * The common hit - register values only, no filter, trigger, stack or
 * profile - is fetched straight into its reservation in the ring: no
 * scratch record, no copy.  A filter needs the values before the ring is
 * touched, a string's length is known only once fetched, and a fetch that
 * may fault is counted in 'faults' even when the ring refuses its record
 * (a reservation is taken only for a record that will be written).
 */
static notrace bool kt_in_place(const struct kt_probe *p, const struct kt_fetch_ctx *ctx)
{
	return p->all_direct && !ctx->no_entry && !ctx->filled && !p->nr_insns && !p->profile &&
	       !p->nr_actions && !p->stack_depth;
}
NOKPROBE_SYMBOL(kt_in_place);

static __always_inline void kt_emit_in_place(struct kt_probe *p, struct kt_fetch_ctx *ctx,
					     u16 event, u64 ip, u64 parent_ip)
{
	struct ktrack_reservation res;
	struct ktrack_rec_probe *rec;

	if (p->hit_limit && atomic64_inc_return(&p->recorded) > p->hit_limit) {
		this_cpu_inc(p->stats->dropped);
		return;
	}
	rec = ktrack_ring_reserve(p->session, KTRACK_REC_PROBE, sizeof(*rec) + p->fixed_len, &res);
	if (!rec) {
		/* refused and counted lost by the ring */
		this_cpu_inc(p->stats->dropped);
		return;
	}
	kt_fill_direct(p, ctx, rec, event, ip, parent_ip);
	ktrack_ring_commit(p->session, &res);
}

notrace void kt_probe_emit(struct kt_probe *p, struct kt_fetch_ctx *ctx, u16 event,
			   u64 ip, u64 parent_ip)
{
	struct ktrack_rec_probe *rec;
	struct kt_scratch *sc;
	u32 dyn, depth;
	bool acts = false, in_graph = true;
	int nest;

	preempt_disable_notrace();
	sc = this_cpu_ptr(kt_scratch);
	this_cpu_inc(p->stats->hits);
	/* graph scopes count every hit, whatever becomes of its record */
	if (unlikely(p->flags & (KTRACK_PROBE_F_GRAPH_ROOT | KTRACK_PROBE_F_GRAPH_SCOPED)))
		in_graph = kt_graph_hit(p, event == KTRACK_PROBE_EV_EXIT);
	/*
	 * Attached but not recording (before START, after STOP): counted, not
	 * fetched.  A hit that sees 'running' here and loses the race with
	 * STOP is counted as dropped by the failed write below.
	 */
	if (unlikely(!READ_ONCE(p->session->running) ||
		     (READ_ONCE(p->session->trig_off) && !p->has_start))) {
		this_cpu_inc(p->stats->idle);
		preempt_enable_notrace();
		return;
	}
	/* outside any scope of the session, or deeper than the limit */
	if (!in_graph) {
		this_cpu_inc(p->stats->filtered);
		preempt_enable_notrace();
		return;
	}
	nest = this_cpu_inc_return(kt_scratch->nest);
	if (nest > KT_NEST_MAX) {
		this_cpu_inc(p->stats->missed);
		goto out;
	}
	if (kt_in_place(p, ctx)) {
		kt_emit_in_place(p, ctx, event, ip, parent_ip);
		goto out;
	}
	/* kt_probe_emit_user() fetched it already, where user pages may fault in */
	rec = ctx->filled;
	if (!rec) {
		rec = (struct ktrack_rec_probe *)sc->buf[nest - 1];
		kt_fill(p, ctx, rec, event, ip, parent_ip);
	}
	dyn = rec->data_len;
	if (unlikely(rec->fault_mask))
		this_cpu_add(p->stats->faults, hweight32(rec->fault_mask));
	if (p->nr_insns && !kt_filter(p, rec->data)) {
		this_cpu_inc(p->stats->filtered);
		goto out;
	}
	if (p->profile) {
		/* counted, not written: the session's pid/CPU filters still hold */
		if (ktrack_session_selects(p->session))
			kt_profile_hit(p, event, ip, ctx->duration);
		goto out;
	}
	if (unlikely(p->nr_actions)) {
		/* actions only for hits the session's pid/CPU filters keep */
		acts = ktrack_session_selects(p->session);
		if (acts && p->has_start)
			kt_actions_before(p);
		/* still paused: idle, before the hit limit is charged */
		if (READ_ONCE(p->session->trig_off)) {
			this_cpu_inc(p->stats->idle);
			goto out;
		}
	}
	if (p->hit_limit && atomic64_inc_return(&p->recorded) > p->hit_limit) {
		this_cpu_inc(p->stats->dropped);
		goto out;
	}
	depth = p->stack_depth;
	if (acts && !depth && kt_action_stack(p))
		depth = KTRACK_ACT_STACK_DEPTH;
	if (depth) {
		/* one reservation for both: no record between them, no half pair */
		struct ktrack_rec_stack *st = (struct ktrack_rec_stack *)sc->stack[nest - 1];
		u32 slen = sizeof(*st);

		/*
		 * No stack walk for a pair the session refuses anyway (stopped,
		 * pid/CPU filter): the write below still refuses and counts it.
		 */
		st->probe_id = p->id;
		st->nr = 0;
		if (ktrack_session_accepts(p->session))
			slen = kt_build_stack(p, st, sc->raw[nest - 1], depth, event, ip,
					      parent_ip);
		if (ktrack_session_write_linked(p->session, KTRACK_REC_PROBE, rec,
						sizeof(*rec) + dyn, KTRACK_REC_STACK, st, slen))
			this_cpu_inc(p->stats->dropped);
	} else if (ktrack_session_write(p->session, KTRACK_REC_PROBE, rec, sizeof(*rec) + dyn)) {
		this_cpu_inc(p->stats->dropped);
	}
	if (acts)
		kt_actions_after(p);
out:
	this_cpu_dec(kt_scratch->nest);
	preempt_enable_notrace();
}
NOKPROBE_SYMBOL(kt_probe_emit);

/* The exit record of a hit: return value, and the entry's arguments and time. */
notrace void kt_probe_emit_exit(struct kt_probe *p, struct pt_regs *regs,
				const struct kt_entry_data *d, u64 ip, u64 parent_ip)
{
	struct kt_fetch_ctx ctx = {
		.regs = regs,
		.args = d->args,
		.retval = regs_return_value(regs),
		.duration = kt_probe_now() - d->ts,
		.exit = true,
	};

	kt_probe_emit(p, &ctx, KTRACK_PROBE_EV_EXIT, ip, parent_ip);
}
NOKPROBE_SYMBOL(kt_probe_emit_exit);

/*
 * u, ur (sleepable task context): fetch with faulting user reads into a
 * per-CPU buffer under its mutex, then emit as any probe.  A session not
 * recording costs no fetch (kt_probe_emit() counts the hit idle).
 */
void kt_probe_emit_user(struct kt_probe *p, struct kt_fetch_ctx *ctx, u16 event,
			u64 ip, u64 parent_ip)
{
	struct kt_ubuf *ub;

	might_sleep();
	if (!READ_ONCE(p->session->running) || !p->nr_fetch) {
		kt_probe_emit(p, ctx, event, ip, parent_ip);
		return;
	}
	ub = per_cpu_ptr(kt_ubufs, raw_smp_processor_id());
	mutex_lock(&ub->lock);
	ctx->may_fault = true;
	ctx->filled = (struct ktrack_rec_probe *)ub->buf;
	kt_fill(p, ctx, ctx->filled, event, ip, parent_ip);
	kt_probe_emit(p, ctx, event, ip, parent_ip);
	mutex_unlock(&ub->lock);
}
