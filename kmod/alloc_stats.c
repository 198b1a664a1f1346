// SPDX-License-Identifier: GPL-2.0
/*
 * ktrack's own allocation counters (see alloc_stats.h), exported read-only
 * in debugfs.  They count what ktrack holds, not bytes: a leak shows as a
 * kind that does not return to zero.
 */
#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/seq_file.h>

#include "alloc_stats.h"

static atomic_long_t kt_allocs[KT_ALLOC_NR];

static const char *const kt_alloc_names[KT_ALLOC_NR] = {
	[KT_ALLOC_SESSIONS] = "sessions",
	[KT_ALLOC_RINGS] = "rings",
	[KT_ALLOC_RING_PAGES] = "ring_pages",
	[KT_ALLOC_SNAPSHOT_PAGES] = "snapshot_pages",
	[KT_ALLOC_PROBES] = "probes",
	[KT_ALLOC_OBJ_TABLES] = "obj_tables",
};

static struct dentry *kt_debugfs_dir;

void kt_alloc_add(enum kt_alloc_kind kind, long n)
{
	atomic_long_add(n, &kt_allocs[kind]);
}

static int kt_alloc_show(struct seq_file *m, void *v)
{
	int i;

	for (i = 0; i < KT_ALLOC_NR; i++)
		seq_printf(m, "%s %ld\n", kt_alloc_names[i], atomic_long_read(&kt_allocs[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kt_alloc);

int kt_alloc_stats_init(void)
{
	/* debugfs is a debugging aid: ktrack works without it. */
	kt_debugfs_dir = debugfs_create_dir("ktrack", NULL);
	debugfs_create_file("allocations", 0400, kt_debugfs_dir, NULL, &kt_alloc_fops);
	return 0;
}

void kt_alloc_stats_exit(void)
{
	int i;

	debugfs_remove_recursive(kt_debugfs_dir);
	/*
	 * Everything is torn down by now: what is left was never freed.  Said
	 * as an error the test lane fails on (tests/vm/run's splat list).
	 */
	for (i = 0; i < KT_ALLOC_NR; i++) {
		long n = atomic_long_read(&kt_allocs[i]);

		if (n)
			pr_err("ktrack: leak: %ld %s still allocated at unload\n", n, kt_alloc_names[i]);
	}
}
