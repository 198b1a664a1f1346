// SPDX-License-Identifier: GPL-2.0
/*
 * The classic case on a real workload: every function that receives an
 * inode returned by alloc_inode, with its i_mode (through BTF), while
 * 'mkdir' creates a new directory and 'ls' lists it.  The new directory's
 * inode must show the VFS path a reviewer expects (initialised as a
 * directory, instantiated in the dcache, permission-checked by ls).
 *
 * With BTF, '*' hooks only the functions that take a struct inode *, and
 * checks only those arguments.  With --no-btf every argument of every hooked
 * function is checked: then no hit may come from the tracker's own calls
 * (the hook reading the object with copy_from_kernel_nofault() was once
 * recorded as a hit of it, nested inside the real one).  That case hooks
 * every traceable kernel function ktrack.ko calls (its imports) plus the
 * three the life must show, not '*': patching all ~43000 ftrace sites at
 * once under QEMU's TCG was the root cause of two lane failures, an int3
 * oops on 6.12 (a vCPU still ran a breakpoint text_poke_bp had already
 * removed: TCG's cross-vCPU code invalidation, not the kernel) and a soft
 * lockup on 6.1 on a loaded host.  The imports are what the regression
 * needs: a self-hit can only come from a function the tracker calls.
 */
#include "kselftest_harness.h"
#include "objtrace_helpers.h"

#define OUT_MAX (8 << 20)
#define DIR_BASE "/tmp/ktrack-objtrace-inode"

/* The life whose i_mode becomes a directory 0755 (umask 022): 040755. */
static int ot_new_dir_life(char *out)
{
	char *life, *next;
	int found = 0;

	for (life = strstr(out, "\nlife "); life && !found; life = next) {
		next = strstr(life + 1, "\nlife ");
		if (next)
			*next = 0;
		if (strstr(life, "i_mode=0x41ed") && strstr(life, " inode_init_owner <- ") &&
		    strstr(life, " d_instantiate <- ") && strstr(life, " inode_permission <- "))
			found = 1;
		if (next)
			*next = '\n';
	}
	return found;
}

static void ot_inode_run(struct __test_metadata *_metadata, const char *funcs, const char *extra, int typed)
{
	char *out = malloc(OUT_MAX), *self_hit;

	ASSERT_NE(NULL, out);
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		free(out);
		SKIP(return, "this kernel has no BTF (/sys/kernel/btf/vmlinux): inode->i_mode cannot be resolved");
	}
	ASSERT_EQ(0, ot_load());
	kt_run(NULL, 0, "rm -rf " DIR_BASE "; mkdir -p " DIR_BASE);
	ASSERT_EQ(0, kt_run(out, OUT_MAX,
			    "%s objtrace --from 'r:alloc_inode $retval' --watch 'inode->i_mode:u16' "
			    "--functions '%s' --stats %s -- sh -c 'mkdir " DIR_BASE "/new && ls " DIR_BASE "/new'",
			    kt_ktrackctl(), funcs, extra))
		TH_LOG("%.4000s", out);
	EXPECT_TRUE(ot_new_dir_life(out)) TH_LOG("%.6000s", out);
	/* No hit inside the tracker (its callers are ktrack.ko's functions). */
	self_hit = strstr(out, " [ktrack]  arg");
	EXPECT_EQ(NULL, self_hit) TH_LOG("%.3000s", self_hit - (self_hit - out > 2000 ? 2000 : self_hit - out));
	if (!typed) {
		/* The callees' list is really hooked (a glob typo would hook none). */
		const char *h = strstr(out, "hooking ");

		ASSERT_NE(NULL, h) TH_LOG("%.2000s", out);
		EXPECT_LT(50, atoi(h + strlen("hooking "))) TH_LOG("%.300s", h);
	}
	if (typed) {
		EXPECT_NE(NULL, strstr(out, " functions that take a struct inode * (of ")) TH_LOG("%.2000s", out);
		/* A function without an inode argument is never a hit. */
		EXPECT_EQ(NULL, strstr(out, " _raw_spin_lock <- ")) TH_LOG("%.6000s", out);
	}
	kt_run(NULL, 0, "rm -rf " DIR_BASE);
	ot_unload();
	free(out);
}

/*
 * Each case hooks many hot kernel functions on every CPU and runs a shell
 * under QEMU TCG: 10-20 s on an idle 2-core host, and more than the
 * harness's 30 s default when other builds or guests share the host (seen
 * once in a fresh-clone make check).  The bound is the time the work can
 * take, not a wait for something to happen.
 */
FIXTURE(inode) {};
FIXTURE_SETUP(inode) {}
FIXTURE_TEARDOWN(inode) {}

TEST_F_TIMEOUT(inode, inode_ls_of_new_directory_btf, 300)
{
	ot_inode_run(_metadata, "*", "", 1);
}

TEST_F_TIMEOUT(inode, inode_ls_of_new_directory_untyped_with_the_trackers_callees, 300)
{
	static char funcs[64 << 10];
	char *p;

	/* ktrack.ko's imports that ftrace can hook, one line each. */
	ASSERT_EQ(0, kt_run(funcs, sizeof(funcs) - 64,
			    "nm -u %s | awk '{print $2}' >/tmp/ktrack-imports && "
			    "awk 'NR==FNR{w[$1];next} ($1 in w){print $1}' /tmp/ktrack-imports "
			    "/sys/kernel/tracing/available_filter_functions | sort -u",
			    kt_module_path("kmod/ktrack.ko")))
		TH_LOG("%s", funcs);
	ASSERT_NE(NULL, strstr(funcs, "copy_from_kernel_nofault\n")) TH_LOG("%s", funcs);
	for (p = funcs; *p; p++)
		if (*p == '\n')
			*p = ' ';
	strcat(funcs, "inode_init_owner d_instantiate inode_permission");
	ot_inode_run(_metadata, funcs, "--no-btf", 0);
}

TEST_HARNESS_MAIN
