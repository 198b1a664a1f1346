// SPDX-License-Identifier: GPL-2.0
/*
 * probe_event_fields.c - the fields of an e probe on a module that was not
 * loaded when the probe was added (KTRACK_FETCH_F_BY_NAME).
 *
 * ktrackctl reads an event's format from tracefs and sends each field's
 * offset; before the module loads there is no format to read, so it sends
 * the field's name and the type the user gave.  Each time the probe arms,
 * the name is found here in the event's layout, computed from the
 * event's fields_array as the kernel itself lays the record out
 * (event_define_fields() in kernel/trace/trace_events.c: after struct
 * trace_entry, each field at its alignment), and the type is checked
 * against it.  A rebuilt module may lay the event out anew: each arm finds
 * the fields again.  Fields whose offsets ktrackctl read from the format
 * cannot be found again: a module event's layout is remembered when the
 * probe first arms, and a probe with such fields does not arm on another.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/trace_events.h>

#include "probe_internal.h"

struct kt_event_field {
	const char *type;	/* as the format file writes it */
	u32 offset;
	u32 size;
};

/* The header fields every event record starts with. */
static bool kt_common_field(const char *name, struct kt_event_field *out)
{
	static const struct {
		const char *name, *type;
		u32 offset, size;
	} common[] = {
		{ "common_type", "unsigned short", offsetof(struct trace_entry, type),
		  sizeof_field(struct trace_entry, type) },
		{ "common_flags", "unsigned char", offsetof(struct trace_entry, flags),
		  sizeof_field(struct trace_entry, flags) },
		{ "common_preempt_count", "unsigned char",
		  offsetof(struct trace_entry, preempt_count),
		  sizeof_field(struct trace_entry, preempt_count) },
		{ "common_pid", "int", offsetof(struct trace_entry, pid),
		  sizeof_field(struct trace_entry, pid) },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(common); i++) {
		if (!strcmp(common[i].name, name)) {
			out->type = common[i].type;
			out->offset = common[i].offset;
			out->size = common[i].size;
			return true;
		}
	}
	return false;
}

static int kt_find_field(struct trace_event_call *call, const char *name,
			 struct kt_event_field *out)
{
	const struct trace_event_fields *fl = call->class->fields_array;
	u32 off = sizeof(struct trace_entry);

	if (kt_common_field(name, out))
		return 0;
	for (; fl && fl->type; fl++) {
		/* fields made by a function: syscalls, dynamic events */
		if (fl->type == TRACE_FUNCTION_TYPE)
			return -EOPNOTSUPP;
		off = ALIGN(off, fl->align);
		if (!strcmp(fl->name, name)) {
			out->type = fl->type;
			out->offset = off;
			out->size = fl->size;
			return 0;
		}
		off += fl->size;
	}
	return -ENOENT;
}

/*
 * An array of bytes, read as a string as libtraceevent reads it (ktrackctl
 * does for a loaded module): char, signed or unsigned, u8, s8.
 */
static bool kt_char_array(const char *type)
{
	static const char *const bytes[] = {
		"char[", "signed char[", "unsigned char[", "u8[", "s8[", "__u8[", "__s8[",
	};
	unsigned int i;

	if (strstarts(type, "const "))
		type += strlen("const ");
	for (i = 0; i < ARRAY_SIZE(bytes); i++)
		if (strstarts(type, bytes[i]))
			return true;
	return false;
}

/* FNV-1a over what lays the record out: each field's type, name and size. */
static u32 kt_layout_hash(struct trace_event_call *call)
{
	const struct trace_event_fields *fl = call->class->fields_array;
	u32 h = 2166136261u;
	const char *c;

	for (; fl && fl->type && fl->type != TRACE_FUNCTION_TYPE; fl++) {
		for (c = fl->type; *c; c++)
			h = (h ^ (u8)*c) * 16777619u;
		for (c = fl->name; *c; c++)
			h = (h ^ (u8)*c) * 16777619u;
		h = (h ^ fl->size) * 16777619u;
	}
	return h | 1;
}

/*
 * The rules ktrackctl applies to a format it can read (resolve_field() in
 * user/lib/probes/spec_resolve.cpp), for a type the user gave: a string is
 * read where the field's kind says; a number must fit the field.
 */
static int kt_fit_field(struct kt_fetch *f, const struct kt_event_field *fld)
{
	bool data_loc = strstarts(fld->type, "__data_loc ");
	bool rel_loc = strstarts(fld->type, "__rel_loc ");
	bool dynamic = data_loc || rel_loc;
	const char *base = dynamic ? strchr(fld->type, ' ') + 1 : fld->type;
	bool array = !dynamic && strchr(fld->type, '[');
	bool chars = kt_char_array(base);
	bool pointer = strchr(fld->type, '*');
	bool string = f->type == KTRACK_FETCH_T_STRING || f->type == KTRACK_FETCH_T_USTRING;

	f->param = fld->offset;
	f->flags &= ~(KTRACK_FETCH_F_DATA_LOC | KTRACK_FETCH_F_REL_LOC);
	if (string) {
		f->nderef = 0;
		memset(f->deref, 0, sizeof(f->deref));
		if (dynamic || array) {
			/* in the record: __data_loc char[] or char[N] */
			if (!chars || f->type != KTRACK_FETCH_T_STRING)
				return -EINVAL;
			if (data_loc)
				f->flags |= KTRACK_FETCH_F_DATA_LOC;
			else if (rel_loc)
				f->flags |= KTRACK_FETCH_F_REL_LOC;
			return 0;
		}
		if (!pointer || fld->size != sizeof(void *))
			return -EINVAL;
		/* the pointer the field holds, then the string at it */
		f->nderef = 2;
		return 0;
	}
	if (dynamic)
		return -EINVAL;
	if (f->nderef > 1)	/* follows the pointer the field holds */
		return !array && fld->size == sizeof(void *) ? 0 : -EINVAL;
	return f->size * f->count <= fld->size ? 0 : -EINVAL;
}

/*
 * Called by kt_event_arm() with the event held and the probe not armed (no
 * handler reads its fetches).  Says in the kernel log which field failed:
 * the probe was added long before, and this runs from the module notifier.
 */
static int kt_event_resolve_fields(struct kt_probe *p, struct trace_event_call *call)
{
	u16 i;

	for (i = 0; i < p->nr_fetch; i++) {
		struct kt_fetch *f = &p->fetch[i];
		const char *name = p->strtab + f->name_off;
		struct kt_event_field fld;
		int ret;

		if (!(f->flags & KTRACK_FETCH_F_BY_NAME))
			continue;
		ret = kt_find_field(call, name, &fld);
		if (ret == -EOPNOTSUPP) {
			pr_warn("probe %s: the fields of %s are not known before it is loaded\n",
				p->name, p->symbol);
			return ret;
		}
		if (ret) {
			pr_warn("probe %s: event %s has no field '%s'\n", p->name, p->symbol, name);
			return ret;
		}
		ret = kt_fit_field(f, &fld);
		if (ret) {
			pr_warn("probe %s: field '%s' of %s is %s (%u bytes): the probe's type does not fit it\n",
				p->name, name, p->symbol, fld.type, fld.size);
			return ret;
		}
	}
	return 0;
}

/*
 * Called by kt_event_arm() with the event held and the probe not armed:
 * the fields by name found, those by offset checked to be still where
 * they were, and whether the probe reads kernel memory known.
 */
int kt_event_check_layout(struct kt_probe *p, struct trace_event_call *call)
{
	bool by_offset = false;
	u32 hash;
	u16 i;
	int ret;

	ret = kt_event_resolve_fields(p, call);
	if (ret)
		return ret;
	p->reads_kernel = false;
	for (i = 0; i < p->nr_fetch; i++) {
		p->reads_kernel |= kt_fetch_reads_kernel(&p->fetch[i]);
		by_offset |= p->fetch[i].src == KTRACK_FETCH_SRC_FIELD &&
			     !(p->fetch[i].flags & KTRACK_FETCH_F_BY_NAME);
	}
	if (!by_offset || (call->flags & TRACE_EVENT_FL_DYNAMIC) || !call->module)
		return 0;
	hash = kt_layout_hash(call);
	if (p->layout_hash && p->layout_hash != hash) {
		pr_warn("probe %s: the fields of %s moved since the probe was added (a rebuilt module?): add it again\n",
			p->name, p->symbol);
		return -ESTALE;
	}
	p->layout_hash = hash;
	return 0;
}
