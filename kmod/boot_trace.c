// SPDX-License-Identifier: GPL-2.0
/*
 * boot_trace.c - tracing from the moment ktrack loads, set by module
 * parameters, so that loading ktrack from the initramfs traces early boot
 * (Debian's kernels leave boot-time tracing out):
 *
 *   modprobe ktrack probes='p:x vfs_read;f:y mydrv:*' session=early flight=16M
 *
 * creates the named session 'early' (an overwrite-mode flight recorder of
 * about 16 MiB over all CPUs; without flight=, a discard-mode session of the
 * default size), adds the probes and starts it before module init returns.
 * `ktrackctl record -s early` later saves what it holds and goes on.
 *
 * The kernel parses a subset of ktrackctl's probe language, separated by
 * ';' (and, as in ftrace's kprobe_event= boot parameter, ',' may stand for
 * the space after the kind, for boot loaders that split on spaces):
 *       p[:NAME] [MOD:]SYM[+OFFS]   r[:NAME] [MOD:]SYM
 *       f[:NAME] SYM[,SYM...][%return|%both]   f[:NAME] MOD:GLOB[%return|%both]
 * Fetch arguments, filters and actions need ktrackctl's compiler (probe
 * add on the running session).  A bad spec fails the load with EINVAL and
 * a line in the kernel log that names it; nothing stays armed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "ktrack_internal.h"
#include "session.h"

static char *probes;
module_param(probes, charp, 0400);
MODULE_PARM_DESC(probes, "probes armed at load, ';'-separated: p[:NAME] SYM, r[:NAME] SYM, f[:NAME] SYMS|MOD:GLOB[%both]");

static char *session;
module_param(session, charp, 0400);
MODULE_PARM_DESC(session, "named session created and started at load (default 'boot' when probes= is given)");

static char *flight;
module_param(flight, charp, 0400);
MODULE_PARM_DESC(flight, "make that session an overwrite-mode flight recorder of this size over all CPUs (e.g. 16M)");

#define KT_BOOT_MAX_PROBES	64

/* the session made at load, for init's unwind */
static struct ktrack_session *kt_boot_session;

/* "16M", "1G", "512K", "4096" (memparse()): bytes, or 0 on a malformed size. */
static u64 kt_parse_size(const char *s)
{
	char *end;
	u64 v = memparse(s, &end);

	return *end || end == s ? 0 : v;
}

/*
 * One spec into a description blob (kvmalloc'ed): header, the function
 * names of an f probe, the spec text.  Returns its size or -errno.
 */
static int kt_boot_desc(char *spec, const char *text, unsigned int index, void **out)
{
	struct ktrack_probe_desc *d;
	char *kind_end, *target, *name = NULL, *mod = NULL, *sym, *suffix, *plus;
	size_t spec_len = strlen(text) + 1, funcs_len = 0, size;
	u32 nr_funcs = 0, flags = 0, kind;
	u64 offset = 0;
	char *p, *blob;

	target = strpbrk(spec, " \t,");
	if (!target)
		return -EINVAL;
	*target++ = '\0';
	target = skip_spaces(target);
	if (!*target || strpbrk(target, " \t"))
		return -EINVAL;	/* arguments, filters, actions: ktrackctl */
	kind_end = strchr(spec, ':');
	if (kind_end) {
		*kind_end = '\0';
		name = kind_end + 1;
	}
	if (!strcmp(spec, "p"))
		kind = KTRACK_PROBE_KPROBE;
	else if (!strcmp(spec, "r"))
		kind = KTRACK_PROBE_KRETPROBE;
	else if (!strcmp(spec, "f"))
		kind = KTRACK_PROBE_FUNCS;
	else
		return -EINVAL;
	sym = target;
	p = strchr(target, ':');
	if (p) {
		*p = '\0';
		mod = target;
		sym = p + 1;
		if (!*mod || strlen(mod) >= KTRACK_PROBE_MOD_MAX)
			return -EINVAL;
	}
	if (kind == KTRACK_PROBE_FUNCS) {
		flags = KTRACK_PROBE_F_ENTRY;
		suffix = strchr(sym, '%');
		if (suffix) {
			*suffix++ = '\0';
			if (!strcmp(suffix, "return"))
				flags = KTRACK_PROBE_F_EXIT;
			else if (!strcmp(suffix, "both"))
				flags |= KTRACK_PROBE_F_EXIT;
			else
				return -EINVAL;
		}
		/* vmlinux: names, not globs (ktrackctl resolves those) */
		if (!mod && strpbrk(sym, "*?["))
			return -EINVAL;
		for (p = sym; *p; p++)
			if (*p == ',')
				*p = '\0';
		funcs_len = p - sym + 1;
		for (p = sym; p < sym + funcs_len - 1; p += strlen(p) + 1) {
			if (!*p)
				return -EINVAL;
			nr_funcs++;
		}
	} else {
		plus = strchr(sym, '+');
		if (plus) {
			if (kind != KTRACK_PROBE_KPROBE || kstrtou64(plus + 1, 0, &offset))
				return -EINVAL;
			*plus = '\0';
		}
	}
	if (!*sym || strlen(sym) >= KTRACK_PROBE_SYM_MAX)
		return -EINVAL;

	size = sizeof(*d) + ALIGN(funcs_len, 8) + ALIGN(spec_len, 8);
	blob = kvzalloc(size, GFP_KERNEL);
	if (!blob)
		return -ENOMEM;
	d = (struct ktrack_probe_desc *)blob;
	d->size = size;
	d->version = KTRACK_PROBE_DESC_VERSION;
	d->hdr_size = sizeof(*d);
	d->kind = kind;
	d->flags = flags;
	if (name && *name) {
		if (strscpy(d->name, name, sizeof(d->name)) < 0) {
			kvfree(blob);
			return -EINVAL;
		}
	} else
		snprintf(d->name, sizeof(d->name), "boot%u", index);
	if (mod)
		strscpy(d->module, mod, sizeof(d->module));
	if (kind == KTRACK_PROBE_FUNCS) {
		d->nr_funcs = nr_funcs;
		d->funcs_off = sizeof(*d);
		d->funcs_len = funcs_len;
		memcpy(blob + d->funcs_off, sym, funcs_len);
	} else {
		strscpy(d->symbol, sym, sizeof(d->symbol));
		d->offset = offset;
	}
	/* the text as given, for 'probe list' (the parse cut 'spec' up) */
	d->spec_off = sizeof(*d) + ALIGN(funcs_len, 8);
	d->spec_len = spec_len;
	memcpy(blob + d->spec_off, text, spec_len);
	*out = blob;
	return size;
}

static int kt_boot_config(struct ktrack_session *s)
{
	struct ktrack_config c = s->cfg;
	u64 bytes, per_cpu;

	if (!flight)
		return 0;
	bytes = kt_parse_size(flight);
	if (!bytes)
		return -EINVAL;
	per_cpu = max_t(u64, bytes / num_possible_cpus() / PAGE_SIZE, 1);
	c.buf_pages = rounddown_pow_of_two(min_t(u64, per_cpu, KTRACK_MAX_BUF_PAGES));
	c.mode = KTRACK_MODE_OVERWRITE;
	if (ktrack_config_over_limit(&c))
		return -E2BIG;
	mutex_lock(&s->lock);
	s->cfg = c;
	s->wm_bytes = ktrack_config_watermark(&c);
	mutex_unlock(&s->lock);
	return 0;
}

int ktrack_boot_trace_init(void)
{
	const char *name = session ?: "boot";
	struct ktrack_session *s;
	unsigned int i = 0;
	char *copy, *cur, *spec;
	int ret;

	if (!probes && !session && !flight)
		return 0;
	s = ktrack_session_create_kernel(name);
	if (IS_ERR(s)) {
		pr_err("session=%s: cannot create it: %ld\n", name, PTR_ERR(s));
		return PTR_ERR(s);
	}
	ret = kt_boot_config(s);
	if (ret) {
		pr_err("flight=%s: not a size ktrack can hold (e.g. 16M, at most %u pages per CPU): %d\n",
		       flight, KTRACK_MAX_BUF_PAGES, ret);
		goto fail;
	}
	copy = kstrdup(probes ?: "", GFP_KERNEL);
	if (!copy) {
		ret = -ENOMEM;
		goto fail;
	}
	cur = copy;
	while ((spec = strsep(&cur, ";"))) {
		struct ktrack_probe_add res;
		char text[KTRACK_PROBE_SYM_MAX + 64];
		void *desc = NULL;
		int size;

		spec = strim(spec);
		if (!*spec)
			continue;
		if (strscpy(text, spec, sizeof(text)) < 0) {
			pr_err("probes=: a probe of over %zu bytes\n", sizeof(text) - 1);
			ret = -E2BIG;
			kfree(copy);
			goto fail;
		}
		ret = i >= KT_BOOT_MAX_PROBES ? -E2BIG : kt_boot_desc(spec, text, i, &desc);
		if (ret >= 0) {
			size = ret;
			ret = ktrack_probe_add_kernel(s, desc, size, &res);
		}
		if (ret < 0) {
			pr_err("probes=: '%s': %s (%d)\n", text,
			       ret == -EINVAL ? "not p|r|f[:NAME] TARGET (arguments, filters and actions need ktrackctl)" :
			       ret == -ENOENT ? "no such function" :
			       ret == -E2BIG ? "too many probes or functions" : "cannot arm it", ret);
			kfree(copy);
			goto fail;
		}
		i++;
	}
	kfree(copy);
	mutex_lock(&s->lock);
	ret = ktrack_session_start_locked(s);
	mutex_unlock(&s->lock);
	if (ret) {
		pr_err("session=%s: cannot start it: %d\n", name, ret);
		goto fail;
	}
	pr_info("session %s records from load: %u probes, %s\n", name, i,
		flight ? "overwrite (flight recorder)" : "discard");
	kt_boot_session = s;
	return 0;
fail:
	ktrack_session_destroy_kernel(s);
	return ret;
}

void ktrack_boot_trace_exit(void)
{
	if (kt_boot_session)
		ktrack_session_destroy_kernel(kt_boot_session);
	kt_boot_session = NULL;
}
