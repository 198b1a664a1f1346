/* SPDX-License-Identifier: GPL-2.0 */
/* Probe targets of ktrack_test_probe_target.c (exported, so that GCC keeps
 * their signatures intact instead of specialising them).
 */
#ifndef KTRACK_TEST_PROBE_TARGET_H
#define KTRACK_TEST_PROBE_TARGET_H

#include <linux/types.h>

struct ktrack_tpt_inner {
	u64 magic;
	const char *str;
};

struct ktrack_tpt_outer {
	int id;
	struct ktrack_tpt_inner *in;
	char name[16];
	const char *label;
	u32 arr[4];
};

extern u32 ktrack_tpt_global;	/* read by @SYM fetches */
int ktrack_tpt_add(int a, long b, unsigned char c, short d, u64 e, s8 f);
long ktrack_tpt_struct(struct ktrack_tpt_outer *o);
int ktrack_tpt_string(const char *s, const char __user *us);
int ktrack_tpt_ptr(void *bad);
int ktrack_tpt_sleep(unsigned int ms);
int ktrack_tpt_block(void);
long ktrack_tpt_bench(int a, long b);
int ktrack_deep_leaf(void);
int ktrack_gr_grand(int x);
int ktrack_gr_child(int x);
int ktrack_gr_root(int x);
int ktrack_tpt_oops(int *p);
int ktrack_deep_frame(unsigned int n);
int ktrack_tpt_glob_one(int x);
int ktrack_tpt_glob_two(int x);
int ktrack_tpt_glob_three(int x);
int ktrack_tpt_glob_four(int x);

#endif /* KTRACK_TEST_PROBE_TARGET_H */
