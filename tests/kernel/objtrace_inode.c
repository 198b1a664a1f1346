// SPDX-License-Identifier: GPL-2.0
/*
 * The classic case on a real workload: every function that receives an
 * inode returned by alloc_inode, with its i_mode (through BTF), while
 * 'mkdir' creates a new directory and 'ls' lists it.  The new directory's
 * inode must show the VFS path a reviewer expects (initialised as a
 * directory, instantiated in the dcache, permission-checked by ls).
 */
#include "kselftest_harness.h"
#include "objtrace_helpers.h"

#define OUT_MAX (8 << 20)
#define DIR_BASE "/tmp/ktrack-objtrace-inode"

TEST(inode_ls_of_new_directory)
{
	char *out = malloc(OUT_MAX), *life, *next;
	int found = 0;

	ASSERT_NE(NULL, out);
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		SKIP(return, "this kernel has no BTF (/sys/kernel/btf/vmlinux): inode->i_mode cannot be resolved");
	ASSERT_EQ(0, ot_load());
	kt_run(NULL, 0, "rm -rf " DIR_BASE "; mkdir -p " DIR_BASE);
	ASSERT_EQ(0, kt_run(out, OUT_MAX,
			    "%s objtrace --from 'r:alloc_inode $retval' --watch 'inode->i_mode:u16' "
			    "--functions '*' --stats -- sh -c 'mkdir " DIR_BASE "/new && ls " DIR_BASE "/new'",
			    kt_ktrackctl()))
		TH_LOG("%.4000s", out);
	/* The life whose i_mode becomes a directory 0755 (umask 022): 040755. */
	for (life = strstr(out, "\nlife "); life && !found; life = next) {
		next = strstr(life + 1, "\nlife ");
		if (next)
			*next = 0;
		if (strstr(life, "i_mode=0x41ed") && strstr(life, " inode_init_owner <- ") &&
		    strstr(life, " d_instantiate") && strstr(life, " inode_permission <- "))
			found = 1;
		if (next)
			*next = '\n';
	}
	EXPECT_TRUE(found) TH_LOG("%.6000s", out);
	kt_run(NULL, 0, "rm -rf " DIR_BASE);
	ot_unload();
	free(out);
}

TEST_HARNESS_MAIN
