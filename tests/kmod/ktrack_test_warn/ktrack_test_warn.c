// SPDX-License-Identifier: GPL-2.0
/*
 * ktrack_test_warn - a test module that does nothing but plant a splat
 * when it loads.  tests/vm/selftest loads it and expects tests/vm/run to
 * fail: the lane must catch splats even when the command itself succeeds.
 *
 *   insmod ktrack_test_warn.ko             a WARN()
 *   insmod ktrack_test_warn.ko redzone=1   one byte written past a slab
 *                                          object, which SLUB reports when
 *                                          the object is freed
 */
#include <linux/bug.h>
#include <linux/module.h>
#include <linux/slab.h>

static bool redzone;
module_param(redzone, bool, 0444);
MODULE_PARM_DESC(redzone, "overrun a slab object instead of WARN()ing");

#define KT_REDZONE_OBJ 24

static int __init ktrack_test_warn_init(void)
{
	struct kmem_cache *c;
	char *p;

	if (!redzone) {
		WARN(1, "ktrack_test_warn: planted warning (expected by tests/vm/selftest)\n");
		return 0;
	}
	/*
	 * A cache of its own, red-zoned and checked whatever slub_debug says:
	 * the byte written past the object lands in its red zone, never in
	 * another object.  SLUB refuses to free the object it finds damaged,
	 * so the cache is left in place (the guest powers off next).
	 */
	c = kmem_cache_create("ktrack_test_redzone", KT_REDZONE_OBJ, 0,
			      SLAB_RED_ZONE | SLAB_CONSISTENCY_CHECKS, NULL);
	if (!c)
		return -ENOMEM;
	p = kmem_cache_alloc(c, GFP_KERNEL);
	if (!p) {
		kmem_cache_destroy(c);
		return -ENOMEM;
	}
	OPTIMIZER_HIDE_VAR(p);
	p[KT_REDZONE_OBJ] = 0x2a;
	kmem_cache_free(c, p);
	return 0;
}

static void __exit ktrack_test_warn_exit(void)
{
}

module_init(ktrack_test_warn_init);
module_exit(ktrack_test_warn_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ktrack test: a planted splat for the VM lane's self-test");
