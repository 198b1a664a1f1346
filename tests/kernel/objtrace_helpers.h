/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the object tracker's in-VM tests (tests/kernel/objtrace_*.c):
 * load ktrack.ko and ktrack_test_objtrace.ko, configure a session's tracker
 * over the test module's functions, read its stats, poke the module.
 */
#ifndef KTRACK_OBJTRACE_HELPERS_H
#define KTRACK_OBJTRACE_HELPERS_H

#include <stdint.h>
#include <sys/ioctl.h>

#include "ktrack_test.h"
#include <uapi/ktrack.h>

#define OT_TESTMOD "ktrack_test_objtrace"
#define OT_FUNCS "ktrack_test_obj_*"
#define OT_MODE_OFFSET 4	/* struct kt_obj.mode */

static inline int ot_load(void)
{
	int ret;

	if (kt_module_loaded(OT_TESTMOD))
		kt_rmmod(OT_TESTMOD);
	if (kt_module_loaded("ktrack"))
		kt_rmmod("ktrack");
	ret = kt_insmod(kt_module_path("kmod/ktrack.ko"), "");
	if (ret)
		return ret;
	return kt_insmod(kt_module_path("tests/kmod/" OT_TESTMOD "/" OT_TESTMOD ".ko"), "");
}

static inline void ot_unload(void)
{
	kt_rmmod(OT_TESTMOD);
	kt_rmmod("ktrack");
}

/* A config over the test module's functions watching kt_obj.mode (u16). */
static inline void ot_default_config(struct ktrack_obj_config *c, const char *funcs)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->max_objects = 64;
	c->nr_args = 6;
	c->nr_watch = 1;
	c->watch[0].offset = OT_MODE_OFFSET;
	c->watch[0].size = 2;
	c->functions_ptr = (uintptr_t)funcs;
	c->functions_len = strlen(funcs);
}

static inline int ot_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int ot_add_source(int fd, uint32_t type, const char *sym, uint32_t arg)
{
	struct ktrack_obj_source s = { .size = sizeof(s), .type = type, .arg = arg };

	snprintf(s.symbol, sizeof(s.symbol), "%s", sym);
	return ot_ioctl(fd, KTRACK_IOC_OBJ_ADD_SOURCE, &s);
}

static inline int ot_stats(int fd, struct ktrack_obj_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	return ot_ioctl(fd, KTRACK_IOC_OBJ_GET_STATS, st);
}

static inline int ot_query(int fd, uint64_t addr, uint64_t *life, uint64_t *hits)
{
	struct ktrack_obj_addr a = { .size = sizeof(a), .addr = addr };
	int ret = ot_ioctl(fd, KTRACK_IOC_OBJ_QUERY, &a);

	if (life)
		*life = a.life;
	if (hits)
		*hits = a.hits;
	return ret;
}

/* Write a value to the test module's parameter; returns 0 or -errno. */
static inline int ot_param_write(const char *param, const char *val)
{
	char p[256];

	snprintf(p, sizeof(p), "/sys/module/" OT_TESTMOD "/parameters/%s", param);
	return kt_write_file(p, 0, val);
}

static inline uint64_t ot_param_read(const char *param)
{
	char p[256], buf[64] = "";
	FILE *f;

	snprintf(p, sizeof(p), "/sys/module/" OT_TESTMOD "/parameters/%s", param);
	f = fopen(p, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	return strtoull(buf, NULL, 0);
}

/* Address of a text symbol in /proc/kallsyms (first match), or 0. */
static inline uint64_t ot_kallsyms(const char *name)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	uint64_t found = 0;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 && !strcmp(sym, name) &&
		    (type == 't' || type == 'T'))
			found = addr;
	fclose(f);
	return found;
}

/* An address-given function set (KTRACK_OBJF_FUNC_ADDRS) of 'n' entries. */
static inline void ot_addr_config(struct ktrack_obj_config *c, const struct ktrack_obj_func *f,
				  unsigned int n)
{
	ot_default_config(c, "x");
	c->flags = KTRACK_OBJF_FUNC_ADDRS;
	c->func_size = sizeof(*f);
	c->functions_ptr = (uintptr_t)f;
	c->functions_len = n;
}

#endif /* KTRACK_OBJTRACE_HELPERS_H */
