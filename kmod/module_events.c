// SPDX-License-Identifier: GPL-2.0
/*
 * module_events.c - module load and unload records (issue 12).
 *
 * A record from a module's code is named by the module that held that
 * address at that time: ktrackctl cannot know which one from a kallsyms
 * snapshot taken at start, since a module loaded later, or unloaded, or a
 * different module loaded at the same address, is not in it.  So the stream
 * says so itself: a module notifier writes into every running session
 *   - at MODULE_STATE_COMING (the module's code is in place, its init has
 *     not run: no record from its code can precede this one), a
 *     KTRACK_REC_MODULE LOAD with its text ranges, then its function
 *     symbols (name, address, size) in KTRACK_REC_MODULE_SYMS records;
 *   - at MODULE_STATE_GOING (its exit ran, or its load failed after
 *     COMING), a KTRACK_REC_MODULE UNLOAD.
 * The records bypass the sessions' pid/CPU filters (they describe the
 * system, not an event) and are counted like any other record: a full
 * ring loses them as LOST, never silently.
 *
 * The notifier runs in process context; the ring writes never sleep.  The
 * symbol table is read at COMING, when mod->kallsyms is the full (init)
 * copy that the loader filled before formation.
 */
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/notifier.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "compat.h"
#include "ktrack_internal.h"

/*
 * Symbols go out in records of at most this size, far below the smallest
 * ring's limit (a record may not exceed half a ring).
 */
#define KT_MODSYMS_BATCH	2048

static void kt_module_record(struct module *mod, u32 event, u32 nr_syms)
{
	struct ktrack_rec_module rec;

	memset(&rec, 0, sizeof(rec));
	rec.event = event;
	rec.nr_syms = nr_syms;
	rec.text_base = (unsigned long)ktrack_module_text(mod);
	rec.text_size = ktrack_module_text_size(mod);
	rec.init_base = (unsigned long)ktrack_module_init_text(mod);
	rec.init_size = ktrack_module_init_text_size(mod);
	if (!rec.init_size)
		rec.init_base = 0;
	strscpy(rec.name, mod->name, sizeof(rec.name));
	ktrack_emit_meta(KTRACK_REC_MODULE, &rec, sizeof(rec));
}

static bool kt_in(unsigned long addr, const void *base, unsigned int size)
{
	return addr >= (unsigned long)base && addr - (unsigned long)base < size;
}

/* Is symbol i of 'ks' a function of 'mod' (core or init text)? */
static bool kt_module_func(struct module *mod, const struct mod_kallsyms *ks, unsigned int i)
{
	const Elf_Sym *sym = &ks->symtab[i];

	if (!strchr("tTwW", ks->typetab[i]) || !ks->strtab[sym->st_name])
		return false;
	return kt_in(sym->st_value, ktrack_module_text(mod), ktrack_module_text_size(mod)) ||
	       kt_in(sym->st_value, ktrack_module_init_text(mod),
		     ktrack_module_init_text_size(mod));
}

/*
 * Walks the function symbols: counts them when 'batch' is NULL, else
 * writes them out in KTRACK_REC_MODULE_SYMS records built in 'batch'.
 */
static u32 kt_module_syms(struct module *mod, const struct mod_kallsyms *ks, u8 *batch)
{
	struct ktrack_rec_module_syms *hdr = (void *)batch;
	u32 len = sizeof(*hdr), nr = 0;
	unsigned int i;

	if (batch) {
		memset(hdr, 0, sizeof(*hdr));
		hdr->text_base = (unsigned long)ktrack_module_text(mod);
	}
	for (i = 0; i < ks->num_symtab; i++) {
		const Elf_Sym *sym = &ks->symtab[i];
		const char *name = &ks->strtab[sym->st_name];
		u32 nlen, elen;
		struct ktrack_module_sym *e;

		if (!kt_module_func(mod, ks, i))
			continue;
		nr++;
		if (!batch)
			continue;
		nlen = strnlen(name, KSYM_NAME_LEN - 1) + 1;
		elen = ALIGN(sizeof(*e) + nlen, 8);
		if (len + elen > KT_MODSYMS_BATCH) {
			ktrack_emit_meta(KTRACK_REC_MODULE_SYMS, batch, len);
			hdr->nr = 0;
			len = sizeof(*hdr);
		}
		e = (void *)(batch + len);
		memset(e, 0, elen);
		e->addr = sym->st_value;
		e->size = min_t(u64, sym->st_size, U32_MAX);
		e->name_len = nlen;
		e->type = ks->typetab[i];
		memcpy(e + 1, name, nlen - 1);
		len += elen;
		hdr->nr++;
	}
	if (batch && hdr->nr)
		ktrack_emit_meta(KTRACK_REC_MODULE_SYMS, batch, len);
	return nr;
}

static void kt_module_coming(struct module *mod)
{
	const struct mod_kallsyms *ks;
	u8 *batch;
	u32 nr;

	/* Process context, before the ring writes that disable preemption. */
	batch = kmalloc(KT_MODSYMS_BATCH, GFP_KERNEL);
	rcu_read_lock_sched();
	ks = rcu_dereference_sched(mod->kallsyms);
	nr = ks && batch ? kt_module_syms(mod, ks, NULL) : 0;
	kt_module_record(mod, KTRACK_MODULE_LOAD, nr);
	if (nr)
		kt_module_syms(mod, ks, batch);
	rcu_read_unlock_sched();
	kfree(batch);
}

static int kt_module_notify(struct notifier_block *nb, unsigned long state, void *data)
{
	struct module *mod = data;

	if (state == MODULE_STATE_COMING)
		kt_module_coming(mod);
	else if (state == MODULE_STATE_GOING)
		kt_module_record(mod, KTRACK_MODULE_UNLOAD, 0);
	return NOTIFY_DONE;
}

static struct notifier_block kt_module_nb = {
	.notifier_call = kt_module_notify,
};

int ktrack_module_events_init(void)
{
	return register_module_notifier(&kt_module_nb);
}

void ktrack_module_events_exit(void)
{
	unregister_module_notifier(&kt_module_nb);
}
