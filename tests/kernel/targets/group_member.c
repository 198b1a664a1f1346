// SPDX-License-Identifier: GPL-2.0
/*
 * group_member - raw /dev/ktrack calls of the ktrack group test
 * (group_access.sh), run as a member: what ktrackctl never tries, each
 * printing the errno it got ("ok" or an errno name).  Built by
 * 'make kernel-tests' into build/tests/targets/.
 *
 *   group_member mmap           map its own (anonymous) session's rings
 *   group_member start          KTRACK_IOC_START on its own session
 *   group_member config         KTRACK_IOC_SET_CONFIG on its own session
 *   group_member hold N SECS    open N files, say "held K", keep them SECS
 *   group_member uevents N      register N distinct user events on one file
 *                               ("registered K" then the errno that stopped it)
 *   group_member read           read() a fresh file (no shared 'default')
 *   group_member unshare NAME   (as root) attach to NAME and SET_CONFIG it
 *                               without KTRACK_CFG_F_GROUP
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <uapi/ktrack.h>

static const char *err_name(int err)
{
	switch (err) {
	case 0:
		return "ok";
	case EPERM:
		return "EPERM";
	case EACCES:
		return "EACCES";
	case EMFILE:
		return "EMFILE";
	case ENOSPC:
		return "ENOSPC";
	case EINVAL:
		return "EINVAL";
	default:
		return strerror(err);
	}
}

static int open_dev(void)
{
	int fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("open: %s\n", err_name(errno));
		exit(1);
	}
	return fd;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	int fd, err = 0, i, n = argc > 2 ? atoi(argv[2]) : 0;

	if (!strcmp(what, "mmap")) {
		fd = open_dev();
		if (mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED)
			err = errno;
	} else if (!strcmp(what, "start")) {
		fd = open_dev();
		if (ioctl(fd, KTRACK_IOC_START) < 0)
			err = errno;
	} else if (!strcmp(what, "config")) {
		struct ktrack_config c = { .size = sizeof(c) };

		fd = open_dev();
		if (ioctl(fd, KTRACK_IOC_GET_CONFIG, &c) < 0 || ioctl(fd, KTRACK_IOC_SET_CONFIG, &c) < 0)
			err = errno;
	} else if (!strcmp(what, "read")) {
		char buf[64];

		fd = open_dev();
		if (read(fd, buf, sizeof(buf)) < 0)
			err = errno;
	} else if (!strcmp(what, "unshare") && argc > 2) {
		struct ktrack_session_req req = { .size = sizeof(req) };
		struct ktrack_config c = { .size = sizeof(c) };

		fd = open_dev();
		strncpy(req.name, argv[2], sizeof(req.name) - 1);
		if (ioctl(fd, KTRACK_IOC_SESSION_ATTACH, &req) < 0 ||
		    ioctl(fd, KTRACK_IOC_GET_CONFIG, &c) < 0) {
			err = errno;
		} else {
			c.flags &= ~KTRACK_CFG_F_GROUP;
			if (ioctl(fd, KTRACK_IOC_SET_CONFIG, &c) < 0)
				err = errno;
		}
	} else if (!strcmp(what, "hold") && argc > 3) {
		for (i = 0; i < n; i++) {
			if (open("/dev/ktrack", O_RDWR | O_CLOEXEC) < 0) {
				err = errno;
				break;
			}
		}
		printf("held %d\n", i);
		fflush(stdout);
		sleep(atoi(argv[3]));
	} else if (!strcmp(what, "uevents")) {
		fd = open_dev();
		for (i = 0; i < n; i++) {
			struct ktrack_uevent_reg r = { .size = sizeof(r) };
			char desc[64];

			snprintf(desc, sizeof(desc), "grp_test_%d u32 v", i);
			r.format_ptr = (unsigned long)desc;
			if (ioctl(fd, KTRACK_IOC_UEVENT_REG, &r) < 0) {
				err = errno;
				break;
			}
		}
		printf("registered %d\n", i);
	} else {
		fprintf(stderr, "usage: group_member mmap|start|config|read|unshare NAME|hold N SECS|uevents N\n");
		return 2;
	}
	printf("%s\n", err_name(err));
	return 0;
}
