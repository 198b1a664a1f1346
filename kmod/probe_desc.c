// SPDX-License-Identifier: GPL-2.0
/*
 * probe_desc.c - turn a userspace probe description blob into a struct
 * kt_probe, checking every field first: a blob that passes cannot make a
 * handler loop, overrun its buffers or read memory other than through a
 * nofault copy.  Anything out of range is EINVAL.
 */
#include <linux/ctype.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "alloc_stats.h"
#include "probe_internal.h"

/* NUL-terminated within 'len' bytes, and only [A-Za-z0-9_.-]. */
static bool kt_name_ok(const char *s, size_t len, bool allow_empty)
{
	size_t n = strnlen(s, len);
	size_t i;

	if (n == len || (!n && !allow_empty))
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum(s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-')
			return false;
	/* bytes after the NUL must be zero too: nothing hidden */
	for (i = n; i < len; i++)
		if (s[i])
			return false;
	return true;
}

/* A symbol: printable, no spaces, NUL-terminated, zero tail. */
static bool kt_sym_ok(const char *s, size_t len, bool allow_empty)
{
	size_t n = strnlen(s, len);
	size_t i;

	if (n == len || (!n && !allow_empty))
		return false;
	for (i = 0; i < n; i++)
		if (!isgraph(s[i]) || s[i] == ':')
			return false;
	for (i = n; i < len; i++)
		if (s[i])
			return false;
	return true;
}

/* [off, off + len) inside the blob, after the header. */
static bool kt_section_ok(const struct ktrack_probe_desc *d, u32 off, u64 len,
			  u32 align)
{
	if (!len)
		return off == 0;
	if (off < sizeof(*d) || off % align)
		return false;
	return (u64)off + len <= d->size;
}

static bool kt_is_string(const struct kt_fetch *f)
{
	return f->type == KTRACK_FETCH_T_STRING || f->type == KTRACK_FETCH_T_USTRING;
}

/*
 * Does the fetch read kernel memory (a dereference, a kernel string)?
 * Kernel lockdown (confidentiality) forbids that as it forbids kprobes.
 * An immediate alone reads nothing: it is the caller's own number (\IMM,
 * or an address userspace already resolved); @SYM always dereferences it,
 * and counts by that.
 */
bool kt_fetch_reads_kernel(const struct kt_fetch *f)
{
	/*
	 * An e probe's field is in the event's own record, as perf hands it
	 * out: reading it (one dereference, or a string in place) is not a
	 * kernel read; following a pointer found there is, but to a user
	 * string (two dereferences, :ustring).
	 */
	/* (a field by name: known once its layout is, at arm: probe_event.c) */
	if (f->src == KTRACK_FETCH_SRC_FIELD)
		return f->nderef > 2 || (f->nderef == 2 && f->type != KTRACK_FETCH_T_USTRING);
	if (f->nderef && !(f->flags & KTRACK_FETCH_F_USER))
		return true;
	return f->type == KTRACK_FETCH_T_STRING && f->src != KTRACK_FETCH_SRC_COMM;
}

static int kt_check_fetch(const struct kt_probe *p, const struct ktrack_probe_fetch *uf,
			  struct kt_fetch *f)
{
	bool exit_ok = p->kind == KTRACK_PROBE_KRETPROBE || p->kind == KTRACK_PROBE_URETPROBE ||
		       (p->kind == KTRACK_PROBE_FUNCS && (p->flags & KTRACK_PROBE_F_EXIT));
	bool is_user = kt_probe_is_user(p);
	bool is_uevent = p->kind == KTRACK_PROBE_UEVENT;
	bool is_event = p->kind == KTRACK_PROBE_EVENT || is_uevent;
	bool regs_ok = p->kind != KTRACK_PROBE_TRACEPOINT && !is_event;
	u16 all_flags = KTRACK_FETCH_F_USER | KTRACK_FETCH_F_DATA_LOC | KTRACK_FETCH_F_REL_LOC |
			KTRACK_FETCH_F_BY_NAME;
	u16 loc_flags = KTRACK_FETCH_F_DATA_LOC | KTRACK_FETCH_F_REL_LOC;
	unsigned int i;

	if (!kt_sym_ok(uf->name, sizeof(uf->name), false))
		return -EINVAL;
	if (uf->nderef > KTRACK_FETCH_MAX_DEREF || uf->flags & ~all_flags)
		return -EINVAL;
	/*
	 * A field is either a __data_loc or a __rel_loc, and only an e
	 * probe's; one found by name is whatever its layout says.
	 */
	if ((uf->flags & loc_flags) == loc_flags ||
	    ((uf->flags & KTRACK_FETCH_F_BY_NAME) && (uf->flags & loc_flags)))
		return -EINVAL;
	if ((uf->flags & ~KTRACK_FETCH_F_USER) && uf->src != KTRACK_FETCH_SRC_FIELD)
		return -EINVAL;
	for (i = uf->nderef; i < KTRACK_FETCH_MAX_DEREF; i++)
		if (uf->deref[i])
			return -EINVAL;
	if (uf->size != 1 && uf->size != 2 && uf->size != 4 && uf->size != 8)
		return -EINVAL;
	if (!uf->count || uf->count > KTRACK_FETCH_MAX_ARRAY)
		return -EINVAL;

	f->src = uf->src;
	f->type = uf->type;
	f->size = uf->size;
	f->nderef = uf->nderef;
	f->count = uf->count;
	f->flags = uf->flags;
	f->param = uf->param;
	memcpy(f->deref, uf->deref, sizeof(f->deref));

	switch (f->type) {
	case KTRACK_FETCH_T_U:
	case KTRACK_FETCH_T_S:
	case KTRACK_FETCH_T_X:
		break;
	case KTRACK_FETCH_T_SYMBOL:
		if (f->size != 8)
			return -EINVAL;
		break;
	case KTRACK_FETCH_T_STRING:
	case KTRACK_FETCH_T_USTRING:
		if (f->size != 1 || f->count != 1)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	/* arrays are memory: they need a dereference */
	if (f->count > 1 && !f->nderef)
		return -EINVAL;
	/* u, ur: the memory is the user task's, never the kernel's */
	if (is_user && ((f->nderef && !(f->flags & KTRACK_FETCH_F_USER)) ||
			(f->type == KTRACK_FETCH_T_STRING && f->src != KTRACK_FETCH_SRC_COMM) ||
			f->type == KTRACK_FETCH_T_SYMBOL))	/* a kernel symbol's name */
		return -EINVAL;

	switch (f->src) {
	case KTRACK_FETCH_SRC_ARG:
		/* a t: probe's $arg6 would be always 0 (review finding #7); e: fields */
		if (is_event || f->param < 1 ||
		    f->param > (regs_ok ? KTRACK_FETCH_MAX_ARG : KT_TP_NR_ARGS))
			return -EINVAL;
		break;
	case KTRACK_FETCH_SRC_REG:
		if (!regs_ok || f->param < 0 || f->param > MAX_REG_OFFSET ||
		    f->param % sizeof(unsigned long))
			return -EINVAL;
		break;
	case KTRACK_FETCH_SRC_STACK:
		if (!regs_ok || f->param < 0 || f->param > 1024)
			return -EINVAL;
		break;
	case KTRACK_FETCH_SRC_RETVAL:
	case KTRACK_FETCH_SRC_DURATION:
		if (!exit_ok || f->param)
			return -EINVAL;
		break;
	case KTRACK_FETCH_SRC_COMM:
		if (f->type != KTRACK_FETCH_T_STRING || f->nderef || f->param)
			return -EINVAL;
		break;
	case KTRACK_FETCH_SRC_IMM:
		break;
	case KTRACK_FETCH_SRC_CPU:
		if (f->param)
			return -EINVAL;
		break;
	case KTRACK_FETCH_SRC_FIELD:
		/*
		 * Trace event records are at most a few KiB (u16 offsets).  The
		 * first read is the field itself, in the record (deref 0, not
		 * user memory), and a field's address alone is no value.
		 */
		if (!is_event || f->param < 0 || f->param > U16_MAX ||
		    (f->flags & KTRACK_FETCH_F_USER) || (f->nderef && f->deref[0]))
			return -EINVAL;
		/*
		 * By name, a string has no dereference (its layout decides
		 * how it is read), a number at least the field's own.
		 */
		/*
		 * U: the payload is the program's, its fields found by name
		 * at each registration, and never followed as pointers.
		 */
		if (is_uevent && (!(f->flags & KTRACK_FETCH_F_BY_NAME) || f->nderef > 1 ||
				  f->type == KTRACK_FETCH_T_SYMBOL ||
				  f->type == KTRACK_FETCH_T_USTRING))
			return -EINVAL;
		if (f->flags & KTRACK_FETCH_F_BY_NAME) {
			if (kt_is_string(f) ? f->nderef != 0 : !f->nderef)
				return -EINVAL;
			f->name_off = f->param;
		} else if (!f->nderef && f->type != KTRACK_FETCH_T_STRING) {
			return -EINVAL;
		}
		break;
	default:
		return -EINVAL;
	}
	return 0;
}

/* Fields found by name: each name a NUL-terminated string in strtab. */
static int kt_check_field_names(const struct kt_probe *p)
{
	u16 i;

	for (i = 0; i < p->nr_fetch; i++) {
		const struct kt_fetch *f = &p->fetch[i];
		const char *name;
		u32 room, len, j;

		if (!(f->flags & KTRACK_FETCH_F_BY_NAME))
			continue;
		if (f->name_off >= p->strtab_len)
			return -EINVAL;
		room = p->strtab_len - f->name_off;
		name = p->strtab + f->name_off;
		len = strnlen(name, room);
		if (!len || len >= min_t(u32, room, KT_FIELD_NAME_MAX))
			return -EINVAL;
		/* a C identifier (it is also quoted in the kernel log) */
		for (j = 0; j < len; j++)
			if (!isalnum(name[j]) && name[j] != '_')
				return -EINVAL;
	}
	return 0;
}

/* Slot layout, as documented in uapi/ktrack.h. */
static int kt_layout(struct kt_probe *p)
{
	u32 off = 0, covered = 0;
	u16 i;

	p->all_direct = true;
	p->nr_args = 0;
	for (i = 0; i < p->nr_fetch; i++) {
		struct kt_fetch *f = &p->fetch[i];
		u32 align, len;

		if (kt_is_string(f)) {
			align = 4;
			len = 4;
			p->has_strings = true;
		} else {
			align = min_t(u32, f->size, 8);
			len = f->size * f->count;
		}
		off = ALIGN(off, align);
		if (off + len > KTRACK_PROBE_MAX_DATA)
			return -EINVAL;
		f->slot = off;
		f->slot_len = len;
		/* a register value as it is: kt_fill() stores it without a call */
		f->direct = (f->src == KTRACK_FETCH_SRC_ARG || f->src == KTRACK_FETCH_SRC_RETVAL ||
			     f->src == KTRACK_FETCH_SRC_DURATION) &&
			    !f->nderef && f->count == 1 && !kt_is_string(f) &&
			    !(f->flags & KTRACK_FETCH_F_BY_NAME);
		p->all_direct &= f->direct;
		if (f->src == KTRACK_FETCH_SRC_ARG)
			p->nr_args = max_t(u8, p->nr_args, f->param);
		off += len;
		covered += len;
	}
	p->fixed_len = off;
	p->no_gaps = p->all_direct && covered == off;
	return 0;
}

/*
 * A glob runs in the handler, for every hit: bound its work.  With the star
 * backtracking of kt_glob() a match costs at most about
 * (string length) x (pattern length) steps.
 */
static int kt_check_glob(const char *pat, u32 room)
{
	size_t len = strnlen(pat, room);
	const char *q, *end;

	if (len == room)
		return -EINVAL;		/* not terminated inside strtab */
	if (len > KTRACK_FLT_GLOB_MAX)
		return -E2BIG;
	for (q = pat; *q; q++) {
		if (*q != '[')
			continue;
		end = strchr(q + 1, ']');
		if (!end)
			end = pat + len;
		if (end - q - 1 > KTRACK_FLT_GLOB_CLASS_MAX)
			return -E2BIG;
		q = end - 1;
	}
	return 0;
}

static int kt_check_filter(const struct kt_probe *p)
{
	int ret;
	int depth = 0;
	u16 i;

	for (i = 0; i < p->nr_insns; i++) {
		const struct ktrack_probe_insn *in = &p->insns[i];
		bool str = false;

		switch (in->op) {
		case KTRACK_FLT_CMP:
			switch (in->field_kind) {
			case KTRACK_FLD_FETCH:
				if (in->field >= p->nr_fetch)
					return -EINVAL;
				if (p->fetch[in->field].count != 1)
					return -EINVAL;
				str = kt_is_string(&p->fetch[in->field]);
				break;
			case KTRACK_FLD_COMM:
				str = true;
				fallthrough;
			case KTRACK_FLD_PID:
			case KTRACK_FLD_TGID:
			case KTRACK_FLD_CPU:
				if (in->field)
					return -EINVAL;
				break;
			default:
				return -EINVAL;
			}
			if (in->cmp < KTRACK_FLT_EQ || in->cmp > KTRACK_FLT_GLOB)
				return -EINVAL;
			if (str) {
				if (in->cmp != KTRACK_FLT_EQ && in->cmp != KTRACK_FLT_NE &&
				    in->cmp != KTRACK_FLT_GLOB)
					return -EINVAL;
				if (in->imm || in->str_off >= p->strtab_len)
					return -EINVAL;
				if (in->cmp == KTRACK_FLT_GLOB) {
					ret = kt_check_glob(p->strtab + in->str_off,
							    p->strtab_len - in->str_off);
					if (ret)
						return ret;
				}
			} else if (in->cmp == KTRACK_FLT_GLOB || in->str_off) {
				return -EINVAL;
			}
			depth++;
			break;
		case KTRACK_FLT_AND:
		case KTRACK_FLT_OR:
			if (in->cmp || in->field_kind || in->field || in->str_off || in->imm)
				return -EINVAL;
			if (depth < 2)
				return -EINVAL;
			depth--;
			break;
		case KTRACK_FLT_NOT:
			if (in->cmp || in->field_kind || in->field || in->str_off || in->imm)
				return -EINVAL;
			if (depth < 1)
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
		if (depth > KTRACK_FLT_MAX_DEPTH)
			return -EINVAL;
	}
	return p->nr_insns && depth != 1 ? -EINVAL : 0;
}

/*
 * f: nr_funcs names back to back, each NUL-terminated, filling the section.
 * With a module (MOD:GLOB), globs: printable, no ':' or ','.
 */
static int kt_split_funcs(struct kt_probe *p, const struct ktrack_probe_desc *d)
{
	const char *s = (const char *)d + d->funcs_off;
	const char *end = s + d->funcs_len;
	u32 i, glob_bytes = 0;

	p->func_names = kcalloc(d->nr_funcs, sizeof(*p->func_names), GFP_KERNEL_ACCOUNT);
	if (!p->func_names)
		return -ENOMEM;
	for (i = 0; i < d->nr_funcs; i++) {
		size_t n = strnlen(s, end - s);

		if (s + n == end || !n || n >= KTRACK_PROBE_SYM_MAX)
			return -EINVAL;
		if (strnchr(s, n, ' '))
			return -EINVAL;
		if ((p->mod_glob || (p->flags & KTRACK_PROBE_F_KERNEL_GLOB)) &&
		    !kt_sym_ok(s, n + 1, false))
			return -EINVAL;
		if (p->mod_glob && strnchr(s, n, ','))
			return -EINVAL;
		/* review 2026-11-27, S2: globs x functions, preemption off */
		glob_bytes += n;
		if (p->mod_glob && glob_bytes > KTRACK_PROBE_MODGLOB_MAX)
			return -E2BIG;
		p->func_names[i] = s;
		s += n + 1;
	}
	return s == end ? 0 : -EINVAL;
}

/* The actions: known types, zero padding, each type once. */
static int kt_copy_actions(struct kt_probe *p, const struct ktrack_probe_desc *d)
{
	const struct ktrack_probe_action *ua;
	u32 seen = 0;
	u16 i;

	ua = (const struct ktrack_probe_action *)((const char *)d + d->actions_off);
	for (i = 0; i < d->nr_actions; i++) {
		if (!ua[i].type || ua[i].type > KTRACK_ACT_MAX || ua[i].__pad ||
		    (seen & BIT(ua[i].type)))
			return -EINVAL;
		seen |= BIT(ua[i].type);
		p->actions[i].type = ua[i].type;
		p->actions[i].count = ua[i].count;
		atomic64_set(&p->actions[i].fired, 0);
	}
	p->nr_actions = d->nr_actions;
	p->has_start = seen & BIT(KTRACK_ACT_START);
	p->has_snapshot = seen & BIT(KTRACK_ACT_SNAPSHOT);
	return 0;
}

static bool kt_str_section_ok(const struct ktrack_probe_desc *d, u32 off, u32 len)
{
	if (!kt_section_ok(d, off, len, 1))
		return false;
	return !len || ((const char *)d)[off + len - 1] == '\0';
}

/*
 * u, ur: funcs holds one absolute path, and nothing else names the target;
 * the offset is in the file (uprobe_register() checks it against its size).
 */
static int kt_check_upath(const struct ktrack_probe_desc *d)
{
	const char *path = (const char *)d + d->funcs_off;

	if (d->nr_funcs != 1 || d->funcs_len < 2 || d->funcs_len > KTRACK_PROBE_PATH_MAX ||
	    path[0] != '/' || strnlen(path, d->funcs_len) + 1 != d->funcs_len)
		return -EINVAL;
	if (d->addr || d->module[0] || d->stack_depth || d->offset > (u64)LLONG_MAX)
		return -EINVAL;
	return 0;
}

/*
 * Build a probe from 'desc' (kvmalloc'ed, 'size' bytes, owned by the probe
 * on success).  Returns the probe or an ERR_PTR.
 */
/* Explicitly padded: the same size on 32-bit (compat_ptr_ioctl) callers. */
static_assert(sizeof(struct ktrack_probe_desc) ==
	      offsetof(struct ktrack_probe_desc, graph_depth) + sizeof(__u32));

/*
 * Graph scoping (docs/UAPI.md): f only; a probe is a root or scoped, not
 * both, never a profile; a root sees both edges (it opens and closes);
 * a depth limit needs both edges of the scoped probe (they count the
 * depth) and is given only with SCOPED.  A SCOPED probe in a session with
 * no ROOT probe is valid: its hits never pass.
 */
static int kt_check_graph(const struct ktrack_probe_desc *d)
{
	u32 both = KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_EXIT;
	u32 graph = KTRACK_PROBE_F_GRAPH_ROOT | KTRACK_PROBE_F_GRAPH_SCOPED;

	if (d->graph_depth && !(d->flags & KTRACK_PROBE_F_GRAPH_SCOPED))
		return -EINVAL;
	if (!(d->flags & graph))
		return 0;
	if ((d->flags & graph) == graph || (d->flags & KTRACK_PROBE_F_PROFILE) ||
	    d->kind != KTRACK_PROBE_FUNCS || d->graph_depth > KTRACK_GRAPH_MAX_DEPTH)
		return -EINVAL;
	if ((d->flags & KTRACK_PROBE_F_GRAPH_ROOT) && (d->flags & both) != both)
		return -EINVAL;
	if (d->graph_depth && (d->flags & both) != both)
		return -EINVAL;
	return 0;
}

/*
 * KTRACK_PROBE_F_KERNEL_GLOB: entries of an f probe, one glob and no
 * module; or a p probe at a function's entry, by name.  The glob (the
 * name) goes to ftrace_set_filter(), which reads "!GLOB" as "remove" and
 * a number as an index into available_filter_functions: a glob is a name
 * pattern here, nothing else, and a p probe's name has no glob character.
 */
static int kt_check_kernel_glob(const struct ktrack_probe_desc *d)
{
	const char *g = (const char *)d + d->funcs_off;

	if (!(d->flags & KTRACK_PROBE_F_KERNEL_GLOB))
		return 0;
	/* p at a function's entry, by name: the name, not a pattern */
	if (d->kind == KTRACK_PROBE_KPROBE) {
		if (d->flags != KTRACK_PROBE_F_KERNEL_GLOB || !d->symbol[0] || d->offset ||
		    d->addr || d->module[0] || d->nr_funcs || d->funcs_len)
			return -EINVAL;
		if (d->symbol[0] == '!' || isdigit(d->symbol[0]) ||
		    strpbrk(d->symbol, "*?[]\\"))
			return -EINVAL;
		return 0;
	}
	if (d->kind != KTRACK_PROBE_FUNCS || d->flags != (KTRACK_PROBE_F_KERNEL_GLOB |
							   KTRACK_PROBE_F_ENTRY))
		return -EINVAL;
	if (d->module[0] || d->nr_funcs != 1 || d->funcs_len < 2)
		return -EINVAL;
	/* the section itself is checked later: only its first byte here */
	if ((u64)d->funcs_off + d->funcs_len > d->size || d->funcs_off < sizeof(*d))
		return -EINVAL;
	if (*g == '!' || isdigit(*g))
		return -EINVAL;
	return 0;
}

struct kt_probe *kt_probe_from_desc(void *desc, u32 size)
{
	const struct ktrack_probe_desc *d = desc;
	const struct ktrack_probe_fetch *uf;
	struct kt_probe *p;
	u32 all_flags = KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_EXIT | KTRACK_PROBE_F_PROFILE |
			KTRACK_PROBE_F_GRAPH_ROOT | KTRACK_PROBE_F_GRAPH_SCOPED |
			KTRACK_PROBE_F_KERNEL_GLOB;
	int ret = -EINVAL;
	u16 i;

	if (size < sizeof(*d) || d->size != size || d->hdr_size != sizeof(*d) ||
	    d->version != KTRACK_PROBE_DESC_VERSION)
		return ERR_PTR(-EINVAL);
	if (d->kind < KTRACK_PROBE_KPROBE || d->kind > KTRACK_PROBE_UEVENT)
		return ERR_PTR(-EINVAL);
	if (d->flags & ~all_flags)
		return ERR_PTR(-EINVAL);
	/* other kinds: no flag, but a p probe's kernel glob (its name) */
	if (d->kind == KTRACK_PROBE_FUNCS ?
	    !(d->flags & (KTRACK_PROBE_F_ENTRY | KTRACK_PROBE_F_EXIT)) :
	    d->flags != 0 && !(d->kind == KTRACK_PROBE_KPROBE &&
			       d->flags == KTRACK_PROBE_F_KERNEL_GLOB))
		return ERR_PTR(-EINVAL);
	if (kt_check_graph(d) || kt_check_kernel_glob(d))
		return ERR_PTR(-EINVAL);
	/* a profile counts calls: it writes no record to act on or limit */
	if ((d->flags & KTRACK_PROBE_F_PROFILE) &&
	    (d->nr_actions || d->stack_depth || d->hit_limit))
		return ERR_PTR(-EINVAL);
	if (!kt_name_ok(d->name, sizeof(d->name), false) ||
	    !kt_name_ok(d->module, sizeof(d->module), true) ||
	    !kt_sym_ok(d->symbol, sizeof(d->symbol), true))
		return ERR_PTR(-EINVAL);
	if (d->nr_fetch > KTRACK_PROBE_MAX_FETCH || d->nr_insns > KTRACK_PROBE_MAX_INSNS ||
	    d->nr_funcs > KTRACK_PROBE_MAX_FUNCS || d->stack_depth > KTRACK_PROBE_MAX_STACK ||
	    d->maxactive > KTRACK_PROBE_MAX_ACTIVE || d->nr_actions > KTRACK_PROBE_MAX_ACTIONS)
		return ERR_PTR(-EINVAL);
	if (!kt_section_ok(d, d->fetch_off, (u64)d->nr_fetch * sizeof(*uf), 8) ||
	    !kt_section_ok(d, d->insns_off, (u64)d->nr_insns * sizeof(struct ktrack_probe_insn), 8) ||
	    !kt_str_section_ok(d, d->funcs_off, d->funcs_len) ||
	    !kt_str_section_ok(d, d->strtab_off, d->strtab_len) ||
	    !kt_str_section_ok(d, d->spec_off, d->spec_len) ||
	    !kt_section_ok(d, d->actions_off,
			   (u64)d->nr_actions * sizeof(struct ktrack_probe_action), 8))
		return ERR_PTR(-EINVAL);

	/*
	 * maxactive is per function, as for kretprobe events: an f probe
	 * cannot have it, as fprobe (6.12) shares one pool among all its
	 * functions while kretprobes (6.1) have one each (finding #24).
	 */
	if (d->maxactive && d->kind != KTRACK_PROBE_KRETPROBE)
		return ERR_PTR(-EINVAL);
	switch (d->kind) {
	case KTRACK_PROBE_KPROBE:
		/* a symbol (+offset), or an absolute address alone */
		if (d->nr_funcs || d->funcs_len)
			return ERR_PTR(-EINVAL);
		if (d->symbol[0] ? d->addr != 0 : (!d->addr || d->offset || d->module[0]))
			return ERR_PTR(-EINVAL);
		if (d->offset > SZ_1M)
			return ERR_PTR(-EINVAL);
		break;
	case KTRACK_PROBE_KRETPROBE:
	case KTRACK_PROBE_TRACEPOINT:
		if (!d->symbol[0] || d->addr || d->offset || d->nr_funcs || d->funcs_len)
			return ERR_PTR(-EINVAL);
		break;
	case KTRACK_PROBE_EVENT:
		/* "SUBSYS/EVENT" */
		if (!d->symbol[0] || !strchr(d->symbol, '/') || d->addr || d->offset ||
		    d->nr_funcs || d->funcs_len)
			return ERR_PTR(-EINVAL);
		break;
	case KTRACK_PROBE_FUNCS:
		/* with a module, the names are globs over its functions */
		if (d->symbol[0] || d->addr || d->offset || !d->nr_funcs)
			return ERR_PTR(-EINVAL);
		break;
	case KTRACK_PROBE_UPROBE:
	case KTRACK_PROBE_URETPROBE:
		if (kt_check_upath(d))
			return ERR_PTR(-EINVAL);
		break;
	case KTRACK_PROBE_UEVENT:
		/* the event's name; a kernel stack would be write(2)'s */
		if (!d->symbol[0] || strnlen(d->symbol, sizeof(d->symbol)) >= KTRACK_UEVENT_NAME_MAX ||
		    d->module[0] || d->addr || d->offset || d->nr_funcs || d->funcs_len ||
		    d->stack_depth)
			return ERR_PTR(-EINVAL);
		break;
	}

	p = kzalloc(sizeof(*p), GFP_KERNEL_ACCOUNT);
	if (!p)
		return ERR_PTR(-ENOMEM);
	kt_alloc_add(KT_ALLOC_PROBES, 1);
	p->kind = d->kind;
	p->flags = d->flags;
	memcpy(p->name, d->name, sizeof(p->name));
	memcpy(p->module, d->module, sizeof(p->module));
	memcpy(p->symbol, d->symbol, sizeof(p->symbol));
	p->addr = d->addr;
	p->offset = d->offset;
	p->hit_limit = d->hit_limit;
	atomic64_set(&p->recorded, 0);
	p->maxactive = d->maxactive;
	p->stack_depth = d->stack_depth;
	p->graph_depth = d->graph_depth;
	ret = kt_copy_actions(p, d);
	if (ret)
		goto err;
	p->nr_fetch = d->nr_fetch;
	p->nr_insns = d->nr_insns;
	p->nr_funcs = d->kind == KTRACK_PROBE_FUNCS ? d->nr_funcs : 1;
	if (d->kind == KTRACK_PROBE_FUNCS && d->module[0]) {
		/* nothing attached until its module's functions are matched */
		p->mod_glob = true;
		p->nr_globs = d->nr_funcs;
		p->nr_funcs = 0;
	}

	p->stats = alloc_percpu(struct kt_probe_stats);
	if (p->nr_fetch)
		p->fetch = kcalloc(p->nr_fetch, sizeof(*p->fetch), GFP_KERNEL_ACCOUNT);
	if (!p->stats || (p->nr_fetch && !p->fetch)) {
		ret = -ENOMEM;
		goto err;
	}
	uf = (const struct ktrack_probe_fetch *)((const char *)d + d->fetch_off);
	for (i = 0; i < p->nr_fetch; i++) {
		ret = kt_check_fetch(p, &uf[i], &p->fetch[i]);
		if (ret)
			goto err;
		p->reads_kernel |= kt_fetch_reads_kernel(&p->fetch[i]);
	}
	ret = kt_layout(p);
	if (ret)
		goto err;
	p->insns = d->nr_insns ? (struct ktrack_probe_insn *)((char *)desc + d->insns_off) : NULL;
	p->strtab = (const char *)desc + d->strtab_off;
	p->strtab_len = d->strtab_len;
	ret = kt_check_filter(p);
	if (ret)
		goto err;
	ret = kt_check_field_names(p);
	if (ret)
		goto err;
	if (d->kind == KTRACK_PROBE_FUNCS) {
		ret = kt_split_funcs(p, d);
		if (ret)
			goto err;
	}
	/* p at entry through ftrace_ops: its name is the filter's glob */
	if (d->kind == KTRACK_PROBE_KPROBE && (p->flags & KTRACK_PROBE_F_KERNEL_GLOB)) {
		p->func_names = kcalloc(1, sizeof(*p->func_names), GFP_KERNEL_ACCOUNT);
		if (!p->func_names) {
			ret = -ENOMEM;
			goto err;
		}
		p->func_names[0] = p->symbol;
	}
	if (kt_probe_is_user(p) || p->kind == KTRACK_PROBE_UEVENT) {
		if (kt_probe_is_user(p))
			p->upath = (const char *)desc + d->funcs_off;
		/* a kernel stack says nothing of a user probe's hit */
		for (i = 0; i < p->nr_actions; i++)
			if (p->actions[i].type == KTRACK_ACT_STACK) {
				ret = -EINVAL;
				goto err;
			}
	}
	if (p->flags & KTRACK_PROBE_F_PROFILE) {
		ret = kt_profile_alloc(p);
		if (ret)
			goto err;
	}
	p->desc = desc;
	p->desc_size = size;
	return p;
err:
	kt_profile_free(p);
	kfree(p->func_names);
	kfree(p->fetch);
	free_percpu(p->stats);
	kfree(p);
	kt_alloc_add(KT_ALLOC_PROBES, -1);
	return ERR_PTR(ret);
}

void kt_probe_free(struct kt_probe *p)
{
	kt_modglob_release(p);
	kt_uprobe_free(p);
	kfree(p->funcs);
	kfree(p->kps);
	kfree(p->rps);
	kfree(p->func_names);
	kfree(p->fetch);
	free_percpu(p->stats);
	kt_profile_free(p);
	kvfree(p->desc);
	kfree(p);
	kt_alloc_add(KT_ALLOC_PROBES, -1);
}
