/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the in-VM kernel tests (kselftest_harness.h programs): where
 * the build tree is, loading/unloading modules, reading tracefs.
 */
#ifndef KTRACK_TEST_H
#define KTRACK_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

/* The repository root: $KTRACK_ROOT, else derived from build/tests/kernel/X. */
static inline const char *kt_root(void)
{
	static char root[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n;
	int i;

	if (root[0])
		return root;
	if (getenv("KTRACK_ROOT")) {
		snprintf(root, sizeof(root), "%s", getenv("KTRACK_ROOT"));
		return root;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return ".";
	exe[n] = 0;
	for (i = 0; i < 4; i++) /* X, kernel, tests, build */
		*strrchr(exe, '/') = 0;
	snprintf(root, sizeof(root), "%s", exe);
	return root;
}

/* build/modules/$(uname -r)/REL (e.g. "kmod/ktrack.ko"). */
static inline const char *kt_module_path(const char *rel)
{
	static char path[2 * PATH_MAX];
	struct utsname u;

	uname(&u);
	snprintf(path, sizeof(path), "%s/build/modules/%s/%s", kt_root(), u.release, rel);
	return path;
}

static inline const char *kt_ktrackctl(void)
{
	static char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/build/user/bin/ktrackctl", kt_root());
	return path;
}

/* insmod; returns 0 or -errno. */
static inline int kt_insmod(const char *path, const char *params)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params ? params : "", 0);
	ret = ret ? -errno : 0;
	close(fd);
	return ret;
}

/* rmmod; returns 0 or -errno. */
static inline int kt_rmmod(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? -errno : 0;
}

static inline int kt_module_loaded(const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "/sys/module/%s/initstate", name);
	return access(p, F_OK) == 0;
}

/* Run a shell command, capture up to len-1 bytes of its stdout+stderr. */
static inline int kt_run(char *out, size_t len, const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	FILE *f;
	size_t n = 0;
	int status;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	strncat(cmd, " 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (out && len) {
		n = fread(out, 1, len - 1, f);
		out[n] = 0;
	} else {
		char sink[4096];

		while (fread(sink, 1, sizeof(sink), f) > 0)
			;
	}
	status = pclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Write a string to a file opened O_WRONLY | 'flags'; returns 0 or -errno. */
static inline int kt_write_file(const char *path, int flags, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags);
	int ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, val, strlen(val)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

/* Write a string to a tracefs file (e.g. "events/ktrack/enable"). */
static inline int kt_tracefs_write(const char *rel, const char *val)
{
	char p[512];

	snprintf(p, sizeof(p), "/sys/kernel/tracing/%s", rel);
	return kt_write_file(p, O_TRUNC, val);
}

/* Read a tracefs file into buf (NUL-terminated); returns bytes or -errno. */
static inline ssize_t kt_tracefs_read(const char *rel, char *buf, size_t len)
{
	char p[512];
	ssize_t n, total = 0;
	int fd;

	snprintf(p, sizeof(p), "/sys/kernel/tracing/%s", rel);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (total < (ssize_t)len - 1 && (n = read(fd, buf + total, len - 1 - total)) > 0)
		total += n;
	buf[total] = 0;
	close(fd);
	return total;
}

#endif /* KTRACK_TEST_H */
