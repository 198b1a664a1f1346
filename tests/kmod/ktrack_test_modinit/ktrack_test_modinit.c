// SPDX-License-Identifier: GPL-2.0
/*
 * ktrack_test_modinit - a driver whose init path makes a known number of
 * calls, for f MOD:GLOB probes armed before the module loads
 * (tests/kernel/probe_modinit.sh).  At load, ktrack_tmi_init() calls
 *   ktrack_tmi_setup()  (init text) once, which calls ktrack_tmi_step() 3 times
 *   ktrack_tmi_step()   (core text) 2 more times (5 in all)
 *   ktrack_tmi_leaf()   (core text) 4 times
 * The parameter 'fail=1' makes init fail with -ENODEV after those calls.
 * After init, reading /proc/ktrack_test_modinit calls ktrack_tmi_leaf()
 * once (a core function, still probed after LIVE).
 */
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>

static int fail;
module_param(fail, int, 0444);
MODULE_PARM_DESC(fail, "make init fail with -ENODEV after its calls");

static int ktrack_tmi_count;

/* noipa: not inlined, not cloned (.constprop/.isra): one symbol each. */

static __attribute__((__noipa__)) int ktrack_tmi_leaf(int x)
{
	WRITE_ONCE(ktrack_tmi_count, ktrack_tmi_count + 1);
	return x + 1;
}

static __attribute__((__noipa__)) int ktrack_tmi_step(int x)
{
	return x * 2 + READ_ONCE(ktrack_tmi_count);
}

static __attribute__((__noipa__)) int __init ktrack_tmi_setup(int n)
{
	int i, v = 0;

	for (i = 0; i < n; i++)
		v += ktrack_tmi_step(i);
	return v;
}

static int ktrack_tmi_show(struct seq_file *m, void *v)
{
	seq_printf(m, "%d\n", ktrack_tmi_leaf(READ_ONCE(ktrack_tmi_count)));
	return 0;
}

static int __init ktrack_tmi_init(void)
{
	int i, v = ktrack_tmi_setup(3);

	for (i = 0; i < 2; i++)
		v += ktrack_tmi_step(v);
	for (i = 0; i < 4; i++)
		v = ktrack_tmi_leaf(v);
	pr_debug("ktrack_test_modinit: %d\n", v);
	if (fail)
		return -ENODEV;
	if (!proc_create_single("ktrack_test_modinit", 0444, NULL, ktrack_tmi_show))
		return -ENOMEM;
	return 0;
}

static void __exit ktrack_tmi_exit(void)
{
	remove_proc_entry("ktrack_test_modinit", NULL);
}

module_init(ktrack_tmi_init);
module_exit(ktrack_tmi_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ktrack test: a module whose init makes known calls");
