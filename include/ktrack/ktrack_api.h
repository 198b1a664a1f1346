/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktrack_api.h - emit records into every running ktrack session from any
 * kernel module (GPL).  Safe from any context (task, softirq, hardirq,
 * NMI); never sleeps.  When no session runs, each call costs one patched
 * jump (static key).  Build against ktrack.ko's Module.symvers
 * (KBUILD_EXTRA_SYMBOLS) and load ktrack.ko first.
 *
 *   ktrack_emit(MY_ID, &sample, sizeof(sample));   -> KTRACK_REC_EMIT
 *   ktrack_printf("queue %d stalled\n", q);         -> KTRACK_REC_PRINTF
 *
 * Each returns the number of sessions that took the record (0 when none
 * runs, or every one dropped it: drops are counted in their stats).
 */
#ifndef _KTRACK_API_H
#define _KTRACK_API_H

#include <linux/compiler.h>
#include <linux/jump_label.h>
#include <linux/types.h>

/* Longest ktrack_printf() text, NUL included (longer text is cut). */
#define KTRACK_PRINTF_MAX	256

/* Enabled while at least one session runs. */
DECLARE_STATIC_KEY_FALSE(ktrack_active_key);

int __ktrack_emit(u32 id, const void *data, u32 len);
__printf(1, 2) int __ktrack_printf(const char *fmt, ...);
/* A record of any type of include/uapi/ktrack.h (test helpers). */
int __ktrack_emit_record(u16 type, const void *payload, u32 len);

static inline bool ktrack_active(void)
{
	return static_branch_unlikely(&ktrack_active_key);
}

/* A struct ktrack_rec_emit record: 'id' is the caller's, data is copied. */
static __always_inline int ktrack_emit(u32 id, const void *data, u32 len)
{
	if (ktrack_active())
		return __ktrack_emit(id, data, len);
	return 0;
}

#define ktrack_printf(fmt, ...) \
	(ktrack_active() ? __ktrack_printf(fmt, ##__VA_ARGS__) : 0)

#endif /* _KTRACK_API_H */
