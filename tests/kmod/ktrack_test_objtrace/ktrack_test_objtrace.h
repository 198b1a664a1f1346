/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The objects and the call chain of ktrack_test_objtrace.ko.  The functions
 * are not static (the tests hook them by name) and noipa, so that gcc keeps
 * their names and argument positions (no .constprop/.isra clones).
 */
#ifndef _KTRACK_TEST_OBJTRACE_H
#define _KTRACK_TEST_OBJTRACE_H

#include <linux/compiler.h>
#include <linux/types.h>

#define KTRACK_TEST_NR_ARRAY	10000
#define KTRACK_TEST_OBJ_SIZE	64

struct kt_obj {
	u32 magic;
	u16 mode;	/* offset 4: the watched field */
	u16 flags;
	u64 counter;	/* offset 8 */
	struct kt_obj *peer;	/* offset 16: derived pointer */
	union {
		u8 pad[KTRACK_TEST_OBJ_SIZE - 24];
		struct rcu_head rcu;	/* the churn's kfree_rcu() */
	};
};

noinline __attribute__((__noipa__)) struct kt_obj *ktrack_test_obj_alloc(int tag);
noinline __attribute__((__noipa__)) void ktrack_test_obj_step1(struct kt_obj *o);
noinline __attribute__((__noipa__)) void ktrack_test_obj_step2(long a, struct kt_obj *o);
noinline __attribute__((__noipa__)) void ktrack_test_obj_step_same(struct kt_obj *o);
noinline __attribute__((__noipa__)) void ktrack_test_obj_step6(long a, long b, long c, long d,
							       long e, struct kt_obj *o);
noinline __attribute__((__noipa__)) void ktrack_test_obj_free(struct kt_obj *o);
noinline __attribute__((__noipa__)) void ktrack_test_obj_hot(struct kt_obj *o);
noinline __attribute__((__noipa__)) void ktrack_test_obj_peek(struct kt_obj *o);
noinline __attribute__((__noipa__)) struct kt_obj *ktrack_test_obj_valloc(int tag);
noinline __attribute__((__noipa__)) struct kt_obj *ktrack_test_obj_kmalloc(int tag);

#endif /* _KTRACK_TEST_OBJTRACE_H */
