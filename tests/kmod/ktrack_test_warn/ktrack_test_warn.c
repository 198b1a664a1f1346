// SPDX-License-Identifier: GPL-2.0
/*
 * ktrack_test_warn - a test module that does nothing but WARN() when it
 * loads.  tests/vm/selftest loads it and expects tests/vm/run to fail: the
 * lane must catch splats even when the command itself succeeds.
 */
#include <linux/bug.h>
#include <linux/module.h>

static int __init ktrack_test_warn_init(void)
{
	WARN(1, "ktrack_test_warn: planted warning (expected by tests/vm/selftest)\n");
	return 0;
}

static void __exit ktrack_test_warn_exit(void)
{
}

module_init(ktrack_test_warn_init);
module_exit(ktrack_test_warn_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ktrack test: a planted WARN() for the VM lane's self-test");
