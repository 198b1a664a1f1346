// SPDX-License-Identifier: GPL-2.0
/*
 * access.c - the ktrack group (docs/ACCESS.md).  Off by default: the device
 * is root's (0600) and open() wants CAP_PERFMON or CAP_SYS_ADMIN, as perf
 * wants for kernel tracing at perf_event_paranoid 2 and above.  Loaded with
 * group_access=1, the device is 0660 (the packaged udev rule gives it to
 * group ktrack) and an open without the capability makes a "member" file:
 *
 *  - it reads only the named sessions root shares (KTRACK_CFG_F_GROUP, set
 *    once and never taken back): attach, read(), mmap(), poll(), and it
 *    writes markers into them only;
 *  - it registers and writes user events (at most KT_MEMBER_UEVENTS per
 *    file, and only while half the ids are free: user_event.c), which
 *    reach the U probes of shared sessions only;
 *  - it lists sessions and queries their configuration, counters and
 *    probes, but never configures, starts, stops, creates or destroys a
 *    session, nor arms probes, the object tracker or the other tracers:
 *    the ioctls below are the whole of what it may issue;
 *  - its own anonymous session is not one of max_sessions (it can never
 *    be configured, started or mapped, so it holds no rings), and member
 *    files are capped by max_group_files, so the group cannot lock root
 *    out or make the module allocate.
 *
 * The capability is the opener's, checked once at open() as perf does (the
 * fd is the grant); the handlers that arm things re-check the caller's.
 */
#include <linux/atomic.h>
#include <linux/capability.h>
#include <linux/errno.h>
#include <linux/module.h>

#include <uapi/ktrack.h>
#include "access.h"
#include "session.h"

static bool group_access;
module_param(group_access, bool, 0444);
MODULE_PARM_DESC(group_access,
		 "let users without CAP_PERFMON (the ktrack group: /dev/ktrack mode 0660) read the sessions root shares, write markers and user events (default off)");

static unsigned int max_group_files = 16;
module_param(max_group_files, uint, 0644);
MODULE_PARM_DESC(max_group_files, "files opened without CAP_PERFMON at once, with group_access=1 (default 16)");

static atomic_t kt_group_files = ATOMIC_INIT(0);

int ktrack_access_open(bool *member)
{
	*member = false;
	if (!group_access)
		return perfmon_capable() ? 0 : -EPERM;
	/* with the group let in, a member's open is no denial worth auditing */
	if (ns_capable_noaudit(&init_user_ns, CAP_PERFMON) ||
	    ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN))
		return 0;
	if (atomic_inc_return(&kt_group_files) > READ_ONCE(max_group_files)) {
		atomic_dec(&kt_group_files);
		return -EMFILE;
	}
	*member = true;
	return 0;
}

void ktrack_access_release(bool member)
{
	if (member)
		atomic_dec(&kt_group_files);
}

umode_t ktrack_access_dev_mode(void)
{
	return group_access ? 0660 : 0600;
}

bool ktrack_access_ioctl_allowed(const struct ktrack_file *f, unsigned int cmd)
{
	if (!f->member)
		return true;
	switch (cmd) {
	case KTRACK_IOC_VERSION:
	case KTRACK_IOC_GET_CONFIG:
	case KTRACK_IOC_GET_STATS:
	case KTRACK_IOC_FLUSH:
	case KTRACK_IOC_SESSION_ATTACH:	/* a shared session only */
	case KTRACK_IOC_SESSION_LIST:
	case KTRACK_IOC_PROBE_LIST:
	case KTRACK_IOC_PROBE_GET:
	case KTRACK_IOC_OBJ_GET_STATS:
	case KTRACK_IOC_UEVENT_REG:
	case KTRACK_IOC_UEVENT_UNREG:
	case KTRACK_IOC_UEVENT_QUERY:
		return true;
	default:
		return false;
	}
}

bool ktrack_access_shared(const struct ktrack_session *s)
{
	/* set once, never cleared: a member that saw it may keep what it got */
	return s->named && READ_ONCE(s->shared);
}

int ktrack_access_reader(const struct ktrack_file *f, const struct ktrack_session *s)
{
	return !f->member || ktrack_access_shared(s) ? 0 : -EACCES;
}
