// SPDX-License-Identifier: GPL-2.0
/*
 * user_event.c - typed user events (KTRACK_FEAT_USER_EVENT), in the manner
 * of the kernel's user_events, which Debian's kernels do not build.
 *
 * A program registers "NAME TYPE FIELD; ..." (KTRACK_IOC_UEVENT_REG) and
 * gets an id, an index into a status page it maps read-only: the byte is
 * non-zero while a U probe is armed on the event (probe_uevent.c), so a
 * disabled event costs the program one load and a branch.  A write of the
 * id and a payload is checked against the fields and handed to each armed
 * probe as an e probe gets a trace event's record: the probes' fetches
 * read the fields at their offsets (KTRACK_FETCH_SRC_FIELD), so filters,
 * records and decoding are the e probes' own.
 *
 * Locking: the registry (kt_uevents[], refs, each event's probe list)
 * changes under kt_probe_lock, which the probe kind's arm and disarm run
 * under too; writers read it under RCU only.  No user copy is made with
 * kt_probe_lock held.  An event lives while some file holds it (REG until
 * UNREG or close) and is freed after a grace period, so a writer that
 * found it may finish with it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/ctype.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "compat.h"
#include "probe_internal.h"
#include "session.h"
#include "access.h"
#include "user_event.h"

static struct kt_uevent __rcu *kt_uevents[KTRACK_UEVENT_MAX];
/* one byte per id, mapped read-only by programs (ktrack_uevent_mmap()) */
static u8 *kt_uev_status;

/* ---- the description: "NAME TYPE FIELD; TYPE FIELD" -------------------- */

static const struct {
	const char *name;
	u8 size;
	bool is_signed;
} kt_uev_ints[] = {
	{ "u8", 1, false }, { "s8", 1, true }, { "u16", 2, false }, { "s16", 2, true },
	{ "u32", 4, false }, { "s32", 4, true }, { "u64", 8, false }, { "s64", 8, true },
};

static bool kt_uev_ident(const char *s)
{
	if (!*s || isdigit(*s))
		return false;
	for (; *s; s++)
		if (!isalnum(*s) && *s != '_')
			return false;
	return true;
}

/* [A-Za-z0-9_]+, or SYSTEM/EVENT of two such words */
static bool kt_uev_name_ok(const char *s)
{
	const char *slash = strchr(s, '/');
	size_t n = strlen(s), i;

	if (!n || n >= KTRACK_UEVENT_NAME_MAX || s[0] == '/' || s[n - 1] == '/')
		return false;
	if (slash && strchr(slash + 1, '/'))
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum(s[i]) && s[i] != '_' && s[i] != '/')
			return false;
	return true;
}

/* "u32", "char[16]", "char[]" into 'fl' */
static int kt_uev_type(const char *t, struct kt_uevent_field *fl)
{
	unsigned int i;
	u16 n;

	for (i = 0; i < ARRAY_SIZE(kt_uev_ints); i++) {
		if (!strcmp(t, kt_uev_ints[i].name)) {
			fl->kind = KT_UEV_NUM;
			fl->size = kt_uev_ints[i].size;
			fl->is_signed = kt_uev_ints[i].is_signed;
			return 0;
		}
	}
	if (!strcmp(t, "char[]")) {
		fl->kind = KT_UEV_DYN;
		fl->size = sizeof(u32);
		return 0;
	}
	if (!strstarts(t, "char[") || t[strlen(t) - 1] != ']')
		return -EINVAL;
	t += strlen("char[");
	/* 1..KTRACK_UEVENT_ARRAY_MAX in decimal digits, no leading zero */
	if (*t == '0')
		return -EINVAL;
	n = 0;
	for (i = 0; t[i] != ']'; i++) {
		if (!isdigit(t[i]) || i == 3)
			return -EINVAL;
		n = n * 10 + (t[i] - '0');
	}
	if (!n || t[i + 1])
		return -EINVAL;
	if (n > KTRACK_UEVENT_ARRAY_MAX)
		return -EINVAL;
	fl->kind = KT_UEV_ARRAY;
	fl->size = n;
	return 0;
}

static const char *kt_uev_type_name(const struct kt_uevent_field *fl, char *buf, size_t len)
{
	unsigned int i;

	if (fl->kind == KT_UEV_DYN)
		return "char[]";
	if (fl->kind == KT_UEV_ARRAY) {
		snprintf(buf, len, "char[%u]", fl->size);
		return buf;
	}
	for (i = 0; i < ARRAY_SIZE(kt_uev_ints); i++)
		if (kt_uev_ints[i].size == fl->size && kt_uev_ints[i].is_signed == fl->is_signed)
			return kt_uev_ints[i].name;
	return "?";
}

static void kt_uevent_free(struct kt_uevent *ev)
{
	if (!ev)
		return;
	kfree(ev->format);
	kfree(ev);
}

static void kt_uevent_free_rcu(struct rcu_head *rcu)
{
	kt_uevent_free(container_of(rcu, struct kt_uevent, rcu));
}

/* The canonical text of 'ev': "NAME TYPE FIELD; TYPE FIELD". */
static int kt_uev_canonical(struct kt_uevent *ev)
{
	char *out, tbuf[16];
	size_t len = 0;
	u16 i;

	/* one byte more than the limit: a text that reaches it is too long */
	out = kmalloc(KTRACK_UEVENT_FORMAT_MAX + 1, GFP_KERNEL_ACCOUNT);
	if (!out)
		return -ENOMEM;
	len = scnprintf(out, KTRACK_UEVENT_FORMAT_MAX + 1, "%s", ev->name);
	for (i = 0; i < ev->nr_fields; i++)
		len += scnprintf(out + len, KTRACK_UEVENT_FORMAT_MAX + 1 - len, "%s%s %s",
				 i ? "; " : " ",
				 kt_uev_type_name(&ev->fields[i], tbuf, sizeof(tbuf)),
				 ev->fields[i].name);
	/* "a u8 x;u8 y" fits, "a u8 x; u8 y" may not: the canonical text must */
	if (len >= KTRACK_UEVENT_FORMAT_MAX) {
		kfree(out);
		return -E2BIG;
	}
	ev->format = out;
	return 0;
}

/*
 * Parses 'text' (modified) into a new event, not published.  -EINVAL for
 * any departure from the grammar of uapi/ktrack.h.
 */
static struct kt_uevent *kt_uev_parse(char *text)
{
	struct kt_uevent_field fields[KTRACK_UEVENT_MAX_FIELDS];
	char *name, *rest, *seg;
	struct kt_uevent *ev;
	u32 fixed = 0;
	u16 nr = 0, nr_dyn = 0, i;
	int ret;

	text = skip_spaces(text);
	name = strsep(&text, " \t\n");
	if (!kt_uev_name_ok(name))
		return ERR_PTR(-EINVAL);
	rest = text ? strim(text) : NULL;
	while (rest && *rest) {
		struct kt_uevent_field *fl;
		char *type, *fname;

		seg = strim(strsep(&rest, ";"));
		/* one ';' may end the list; no empty field elsewhere */
		if (!*seg) {
			if (rest && *skip_spaces(rest))
				return ERR_PTR(-EINVAL);
			break;
		}
		if (nr == KTRACK_UEVENT_MAX_FIELDS)
			return ERR_PTR(-E2BIG);
		fl = &fields[nr];
		memset(fl, 0, sizeof(*fl));
		type = strsep(&seg, " \t\n");
		fname = seg ? skip_spaces(seg) : NULL;
		if (!fname || strpbrk(fname, " \t\n") || !kt_uev_ident(fname) ||
		    strlen(fname) >= KTRACK_FETCH_NAME_MAX)
			return ERR_PTR(-EINVAL);
		ret = kt_uev_type(type, fl);
		if (ret)
			return ERR_PTR(ret);
		for (i = 0; i < nr; i++)
			if (!strcmp(fields[i].name, fname))
				return ERR_PTR(-EINVAL);
		strscpy(fl->name, fname, sizeof(fl->name));
		fl->offset = fixed;
		fixed += fl->size;
		nr_dyn += fl->kind == KT_UEV_DYN;
		nr++;
	}
	if (fixed > KTRACK_UEVENT_PAYLOAD_MAX)
		return ERR_PTR(-E2BIG);
	ev = kzalloc(struct_size(ev, fields, nr), GFP_KERNEL_ACCOUNT);
	if (!ev)
		return ERR_PTR(-ENOMEM);
	strscpy(ev->name, name, sizeof(ev->name));
	memcpy(ev->fields, fields, nr * sizeof(fields[0]));
	ev->nr_fields = nr;
	ev->nr_dyn = nr_dyn;
	ev->fixed_size = fixed;
	INIT_LIST_HEAD(&ev->probes);
	ret = kt_uev_canonical(ev);
	if (ret) {
		kt_uevent_free(ev);
		return ERR_PTR(ret);
	}
	return ev;
}

/* ---- the registry ----------------------------------------------------- */

struct kt_uevent *kt_uevent_find(const char *name)
{
	unsigned int i;

	lockdep_assert_held(&kt_probe_lock);
	for (i = 0; i < KTRACK_UEVENT_MAX; i++) {
		struct kt_uevent *ev = rcu_dereference_protected(kt_uevents[i],
								 lockdep_is_held(&kt_probe_lock));

		if (ev && !strcmp(ev->name, name))
			return ev;
	}
	return NULL;
}

void kt_uevent_set_armed(struct kt_uevent *ev, int delta)
{
	lockdep_assert_held(&kt_probe_lock);
	ev->nr_armed += delta;
	WRITE_ONCE(kt_uev_status[ev->id], ev->nr_armed ? 1 : 0);
}

static struct kt_uevent *kt_uevent_by_id(u32 id)
{
	return rcu_dereference_protected(kt_uevents[id], lockdep_is_held(&kt_probe_lock));
}

/* A new event's pending U probes arm (each says in the log why it cannot). */
static void kt_uevent_bind(struct kt_uevent *ev)
{
	struct kt_probe *p;

	list_for_each_entry(p, &kt_probes, node) {
		if (p->kind != KTRACK_PROBE_UEVENT || p->state == KTRACK_PROBE_ST_ARMED ||
		    strcmp(p->symbol, ev->name))
			continue;
		kt_arm(p);
	}
}

/*
 * A file lets go of 'ev'; the last one ends it: its probes wait for the
 * next registration (PENDING), and it is freed once writers are done.
 */
static void kt_uevent_put(struct kt_uevent *ev)
{
	struct kt_probe *p, *tmp;

	lockdep_assert_held(&kt_probe_lock);
	if (--ev->refs)
		return;
	list_for_each_entry_safe(p, tmp, &ev->probes, uev_node)
		kt_disarm(p, KTRACK_PROBE_ST_PENDING);
	WRITE_ONCE(kt_uev_status[ev->id], 0);
	RCU_INIT_POINTER(kt_uevents[ev->id], NULL);
	call_rcu(&ev->rcu, kt_uevent_free_rcu);
}

/*
 * A group member's file (access.c) shares the registry with root's
 * programs: it holds at most KT_MEMBER_UEVENTS events, and makes a new one
 * only while fewer than half the ids are taken, so the group cannot leave
 * root without ids (ENOSPC).
 */
#define KT_MEMBER_UEVENTS	16

static bool kt_uev_member_full(struct ktrack_file *f, struct kt_uevent *old)
{
	unsigned int id, used = 0;

	if (!f->member || (old && test_bit(old->id, f->uev_ids)))
		return false;
	if (bitmap_weight(f->uev_ids, KTRACK_UEVENT_MAX) >= KT_MEMBER_UEVENTS)
		return true;
	if (old)
		return false;
	for (id = 0; id < KTRACK_UEVENT_MAX; id++)
		used += !!kt_uevent_by_id(id);
	return used >= KTRACK_UEVENT_MAX / 2;
}

static long kt_uev_reg(struct ktrack_file *f, void __user *arg)
{
	struct ktrack_uevent_reg r;
	struct kt_uevent *ev, *old;
	unsigned int id;
	char *text;
	long n;

	if (copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	if (r.size != sizeof(r) || r.flags)
		return -EINVAL;
	text = kmalloc(KTRACK_UEVENT_FORMAT_MAX, GFP_KERNEL);
	if (!text)
		return -ENOMEM;
	n = strncpy_from_user(text, u64_to_user_ptr(r.format_ptr), KTRACK_UEVENT_FORMAT_MAX);
	if (n < 0 || n == KTRACK_UEVENT_FORMAT_MAX) {
		kfree(text);
		return n < 0 ? -EFAULT : -E2BIG;
	}
	ev = kt_uev_parse(text);
	kfree(text);
	if (IS_ERR(ev))
		return PTR_ERR(ev);

	mutex_lock(&kt_probe_lock);
	old = kt_uevent_find(ev->name);
	if (kt_uev_member_full(f, old)) {
		mutex_unlock(&kt_probe_lock);
		kt_uevent_free(ev);
		return -ENOSPC;
	}
	if (old) {
		if (strcmp(old->format, ev->format)) {
			mutex_unlock(&kt_probe_lock);
			kt_uevent_free(ev);
			return -EEXIST;	/* the name, with other fields */
		}
		kt_uevent_free(ev);
		ev = old;
		if (!test_and_set_bit(ev->id, f->uev_ids))
			ev->refs++;
	} else {
		for (id = 0; id < KTRACK_UEVENT_MAX; id++)
			if (!kt_uevent_by_id(id))
				break;
		if (id == KTRACK_UEVENT_MAX) {
			mutex_unlock(&kt_probe_lock);
			kt_uevent_free(ev);
			return -ENOSPC;
		}
		ev->id = id;
		ev->refs = 1;
		set_bit(id, f->uev_ids);
		rcu_assign_pointer(kt_uevents[id], ev);
		kt_uevent_bind(ev);
	}
	WRITE_ONCE(f->uev_writer, true);
	r.id = ev->id;
	r.fixed_size = ev->fixed_size;
	mutex_unlock(&kt_probe_lock);
	/* (the file holds the event either way: UNREG or close ends it) */
	return copy_to_user(arg, &r, sizeof(r)) ? -EFAULT : 0;
}

static long kt_uev_unreg(struct ktrack_file *f, void __user *arg)
{
	struct ktrack_uevent_unreg u;
	long ret = 0;

	if (copy_from_user(&u, arg, sizeof(u)))
		return -EFAULT;
	if (u.size != sizeof(u))
		return -EINVAL;
	if (u.id >= KTRACK_UEVENT_MAX)
		return -ENOENT;
	mutex_lock(&kt_probe_lock);
	if (test_and_clear_bit(u.id, f->uev_ids))
		kt_uevent_put(kt_uevent_by_id(u.id));
	else
		ret = -ENOENT;
	mutex_unlock(&kt_probe_lock);
	return ret;
}

static long kt_uev_query(void __user *arg)
{
	struct ktrack_uevent_query q;
	struct kt_uevent *ev = NULL;
	char *format = NULL;
	u32 len;

	if (copy_from_user(&q, arg, sizeof(q)))
		return -EFAULT;
	if (q.size != sizeof(q) || strnlen(q.name, sizeof(q.name)) == sizeof(q.name))
		return -EINVAL;
	mutex_lock(&kt_probe_lock);
	if (q.name[0])
		ev = kt_uevent_find(q.name);
	else if (q.id < KTRACK_UEVENT_MAX)
		ev = kt_uevent_by_id(q.id);
	if (ev) {
		format = kstrdup(ev->format, GFP_KERNEL);
		q.id = ev->id;
		q.enabled = ev->nr_armed;
		strscpy_pad(q.name, ev->name, sizeof(q.name));
	}
	mutex_unlock(&kt_probe_lock);
	if (!ev)
		return -ENOENT;
	if (!format)
		return -ENOMEM;
	len = strlen(format) + 1;
	if (q.format_len < len) {
		kfree(format);
		q.format_len = len;
		return copy_to_user(arg, &q, sizeof(q)) ? -EFAULT : -ENOSPC;
	}
	q.format_len = len;
	if (copy_to_user(u64_to_user_ptr(q.format_ptr), format, len)) {
		kfree(format);
		return -EFAULT;
	}
	kfree(format);
	return copy_to_user(arg, &q, sizeof(q)) ? -EFAULT : 0;
}

bool ktrack_uevent_cmd_known(unsigned int cmd)
{
	return cmd == KTRACK_IOC_UEVENT_REG || cmd == KTRACK_IOC_UEVENT_UNREG ||
	       cmd == KTRACK_IOC_UEVENT_QUERY;
}

long ktrack_uevent_ioctl(struct ktrack_file *f, unsigned int cmd, void __user *arg)
{
	switch (cmd) {
	case KTRACK_IOC_UEVENT_REG:
		return kt_uev_reg(f, arg);
	case KTRACK_IOC_UEVENT_UNREG:
		return kt_uev_unreg(f, arg);
	case KTRACK_IOC_UEVENT_QUERY:
		return kt_uev_query(arg);
	}
	return -ENOTTY;
}

void ktrack_uevent_file_release(struct ktrack_file *f)
{
	unsigned int id;

	if (!READ_ONCE(f->uev_writer))
		return;
	mutex_lock(&kt_probe_lock);
	for_each_set_bit(id, f->uev_ids, KTRACK_UEVENT_MAX) {
		clear_bit(id, f->uev_ids);
		kt_uevent_put(kt_uevent_by_id(id));
	}
	mutex_unlock(&kt_probe_lock);
}

/* ---- writing an event ------------------------------------------------- */

/*
 * The payload against the fields: exactly the fixed part, then the data
 * of the char[] fields, each inside, after the fixed part, and ending
 * with its NUL.
 */
static bool kt_uev_payload_ok(const struct kt_uevent *ev, const u8 *buf, u32 len)
{
	u32 end = ev->fixed_size, total = ev->fixed_size;
	u16 i;

	if (len < ev->fixed_size)
		return false;
	for (i = 0; i < ev->nr_fields; i++) {
		const struct kt_uevent_field *fl = &ev->fields[i];
		u32 loc, off, n;

		/* a char[N] is read as a string: it holds its NUL */
		if (fl->kind == KT_UEV_ARRAY && !memchr(buf + fl->offset, 0, fl->size))
			return false;
		if (fl->kind != KT_UEV_DYN)
			continue;
		memcpy(&loc, buf + fl->offset, sizeof(loc));	/* packed: unaligned */
		off = loc & 0xffff;
		n = loc >> 16;
		if (!n || off < ev->fixed_size || off > len || n > len - off || buf[off + n - 1])
			return false;
		end = max(end, off + n);
		total += n;
	}
	return end == len && total == len;
}

#define KT_UEV_STACK_BUF 256

ssize_t ktrack_uevent_write(struct ktrack_file *f, struct iov_iter *from)
{
	size_t count = iov_iter_count(from);
	u8 stack_buf[KT_UEV_STACK_BUF], *buf = stack_buf;
	struct kt_fetch_ctx ctx = { };
	struct kt_uevent *ev;
	struct kt_probe *p;
	ssize_t ret = count;
	u32 id, len;

	if (count < sizeof(id))
		return -EINVAL;
	if (count - sizeof(id) > KTRACK_UEVENT_PAYLOAD_MAX)
		return -E2BIG;
	if (copy_from_iter(&id, sizeof(id), from) != sizeof(id))
		return -EFAULT;
	/* the file's own events only (a bit set under kt_probe_lock) */
	if (id >= KTRACK_UEVENT_MAX || !test_bit(id, f->uev_ids))
		return -ENOENT;
	len = count - sizeof(id);
	if (len > sizeof(stack_buf)) {
		buf = kmalloc(len, GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
	}
	if (copy_from_iter(buf, len, from) != len) {
		ret = -EFAULT;
		goto out;
	}
	rcu_read_lock();
	ev = rcu_dereference(kt_uevents[id]);
	/*
	 * Still this file's: UNREG'd by another thread meanwhile, the id may
	 * be another file's event now (published after the bit was cleared).
	 */
	smp_rmb();
	if (!ev || !test_bit(id, f->uev_ids)) {
		ret = -ENOENT;
	} else if (!kt_uev_payload_ok(ev, buf, len)) {
		ret = -EINVAL;
	} else {
		ctx.raw = buf;
		ctx.raw_size = len;
		list_for_each_entry_rcu(p, &ev->probes, uev_node)
			/* a member's events reach only what root shares (access.c) */
			if (!f->member || ktrack_access_shared(p->session))
				kt_probe_emit(p, &ctx, KTRACK_PROBE_EV_TP, 0, 0);
	}
	rcu_read_unlock();
out:
	if (buf != stack_buf)
		kfree(buf);
	return ret;
}

/* ---- the status page -------------------------------------------------- */

int ktrack_uevent_mmap(struct vm_area_struct *vma)
{
	if (vma_pages(vma) != KTRACK_UEVENT_STATUS_SIZE >> PAGE_SHIFT)
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	ktrack_vm_flags_clear(vma, VM_MAYWRITE);
	ktrack_vm_flags_set(vma, VM_DONTEXPAND);
	return vm_insert_page(vma, vma->vm_start, virt_to_page(kt_uev_status));
}

int ktrack_uevent_init(void)
{
	kt_uev_status = (u8 *)get_zeroed_page(GFP_KERNEL);
	return kt_uev_status ? 0 : -ENOMEM;
}

/* Every file is closed (they pin the module): no event is left. */
void ktrack_uevent_exit(void)
{
	rcu_barrier();	/* kt_uevent_free_rcu() is this module's code */
	free_page((unsigned long)kt_uev_status);
}
