// SPDX-License-Identifier: GPL-2.0
/*
 * The walking skeleton: ktrackctl load/status/version/unload, the /dev/ktrack
 * node, the version ioctl and its validation, and the ktrack TRACE_EVENTs.
 * Leaves the guest as it found it (ktrack unloaded, tracing off).
 */
#include <sys/ioctl.h>

#include "kselftest_harness.h"
#include "ktrack_test.h"
#include <uapi/ktrack.h>

FIXTURE(skeleton) {
	char out[8192];
};

FIXTURE_SETUP(skeleton)
{
	if (kt_module_loaded("ktrack"))
		kt_rmmod("ktrack");
	ASSERT_EQ(0, kt_run(self->out, sizeof(self->out), "%s load", kt_ktrackctl()))
		TH_LOG("ktrackctl load: %s", self->out);
	ASSERT_TRUE(kt_module_loaded("ktrack"));
}

FIXTURE_TEARDOWN(skeleton)
{
	kt_tracefs_write("events/ktrack/enable", "0");
	kt_tracefs_write("trace", "");
	if (kt_module_loaded("ktrack"))
		kt_rmmod("ktrack");
}

TEST_F(skeleton, device_node_is_root_only_char_device)
{
	struct stat st;

	ASSERT_EQ(0, stat("/dev/ktrack", &st));
	EXPECT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(0600, st.st_mode & 0777);
}

TEST_F(skeleton, version_ioctl_reports_abi_and_kernel)
{
	struct ktrack_version v = { .size = sizeof(v) };
	struct utsname u;
	int fd = open("/dev/ktrack", O_RDWR);

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ioctl(fd, KTRACK_IOC_VERSION, &v));
	EXPECT_EQ(KTRACK_ABI_VERSION, v.abi_version);
	EXPECT_EQ(sizeof(v), v.size);
	uname(&u);
	EXPECT_STREQ(u.release, v.kernel_release);
	EXPECT_NE(0, v.module_version[0]);
	close(fd);
}

TEST_F(skeleton, version_ioctl_validates_its_argument)
{
	struct ktrack_version v = { .size = 4 };
	struct { struct ktrack_version v; __u64 extra; } big = { .v.size = sizeof(big) };
	int fd = open("/dev/ktrack", O_RDWR);

	ASSERT_GE(fd, 0);
	EXPECT_EQ(-1, ioctl(fd, KTRACK_IOC_VERSION, &v));	/* too small */
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(fd, KTRACK_IOC_VERSION, NULL));	/* no buffer */
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(fd, KTRACK_IOC_VERSION, (void *)8));/* unmapped */
	EXPECT_EQ(EFAULT, errno);
	big.extra = 1;						/* unknown, non-zero tail */
	EXPECT_EQ(-1, ioctl(fd, KTRACK_IOC_VERSION, &big));
	EXPECT_EQ(EINVAL, errno);
	big.extra = 0;						/* unknown, zero tail: fine */
	EXPECT_EQ(0, ioctl(fd, KTRACK_IOC_VERSION, &big));
	EXPECT_EQ(KTRACK_ABI_VERSION, big.v.abi_version);
	EXPECT_EQ(-1, ioctl(fd, _IO(KTRACK_IOC_MAGIC, 0xEE)));	/* unknown command */
	EXPECT_EQ(ENOTTY, errno);
	close(fd);
}

TEST_F(skeleton, session_open_event_fires)
{
	char *buf = malloc(1 << 16);
	int fd;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, access("/sys/kernel/tracing/events/ktrack/ktrack_session_open/format", F_OK));
	ASSERT_EQ(0, kt_tracefs_write("trace", ""));
	ASSERT_EQ(0, kt_tracefs_write("events/ktrack/ktrack_session_open/enable", "1"));
	fd = open("/dev/ktrack", O_RDWR);
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(0, kt_tracefs_write("events/ktrack/ktrack_session_open/enable", "0"));
	ASSERT_LT(0, kt_tracefs_read("trace", buf, 1 << 16));
	EXPECT_NE(NULL, strstr(buf, "ktrack_session_open: id=")) TH_LOG("trace: %s", buf);
	free(buf);
}

TEST_F(skeleton, ktrackctl_status_and_version)
{
	EXPECT_EQ(0, kt_run(self->out, sizeof(self->out), "%s status", kt_ktrackctl()));
	EXPECT_NE(NULL, strstr(self->out, "ktrack: loaded")) TH_LOG("%s", self->out);
	EXPECT_EQ(0, kt_run(self->out, sizeof(self->out), "%s version", kt_ktrackctl()));
	EXPECT_NE(NULL, strstr(self->out, "module    ")) TH_LOG("%s", self->out);
}

TEST_F(skeleton, ktrackctl_load_twice_says_already_loaded)
{
	EXPECT_EQ(0, kt_run(self->out, sizeof(self->out), "%s load", kt_ktrackctl()));
	EXPECT_NE(NULL, strstr(self->out, "already loaded")) TH_LOG("%s", self->out);
}

TEST_F(skeleton, unload_refused_while_open_then_succeeds)
{
	int fd = open("/dev/ktrack", O_RDWR);

	ASSERT_GE(fd, 0);
	EXPECT_EQ(2, kt_run(self->out, sizeof(self->out), "%s unload", kt_ktrackctl()));
	EXPECT_NE(NULL, strstr(self->out, "busy")) TH_LOG("%s", self->out);
	EXPECT_TRUE(kt_module_loaded("ktrack"));
	close(fd);
	EXPECT_EQ(0, kt_run(self->out, sizeof(self->out), "%s unload", kt_ktrackctl()))
		TH_LOG("%s", self->out);
	EXPECT_FALSE(kt_module_loaded("ktrack"));
	EXPECT_NE(0, access("/dev/ktrack", F_OK));
	EXPECT_EQ(0, kt_run(self->out, sizeof(self->out), "%s unload", kt_ktrackctl()));
	EXPECT_NE(NULL, strstr(self->out, "not loaded"));
}

TEST_F(skeleton, unprivileged_open_is_refused)
{
	pid_t pid = fork();
	int status;

	ASSERT_GE(pid, 0);
	if (pid == 0) {
		/* nobody, no capabilities */
		if (setgid(65534) || setuid(65534))
			_exit(3);
		_exit(open("/dev/ktrack", O_RDWR) < 0 && (errno == EACCES || errno == EPERM) ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST_F(skeleton, doctor_runs_and_sees_tracefs)
{
	kt_run(self->out, sizeof(self->out), "%s doctor", kt_ktrackctl());
	EXPECT_NE(NULL, strstr(self->out, "[ok  ] tracefs")) TH_LOG("%s", self->out);
	EXPECT_NE(NULL, strstr(self->out, "[ok  ] ktrack")) TH_LOG("%s", self->out);
}

TEST_HARNESS_MAIN
