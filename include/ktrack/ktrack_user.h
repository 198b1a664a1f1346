/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * ktrack_user.h - typed user events for C and C++ programs, header only.
 *
 * A program describes an event once and writes it where something
 * happens; ktrack records it, beside kernel events, in every session that
 * has a U probe on it (ktrackctl record 'U mylib/req').  While no session
 * wants the event, writing it costs one load and a branch:
 *
 *	#include <ktrack/ktrack_user.h>
 *
 *	struct ktrack_user_event req =
 *		ktrack_user_event_register("mylib/req u32 id; char[] path");
 *
 *	if (ktrack_user_event_enabled(&req)) {
 *		struct { uint32_t id; uint32_t path; } __attribute__((packed)) f;
 *
 *		f.id = 42;
 *		f.path = ktrack_user_loc(sizeof(f), strlen(path) + 1);
 *		ktrack_user_event_write2(&req, &f, sizeof(f), path, strlen(path) + 1);
 *	}
 *
 * The description is "NAME TYPE FIELD; TYPE FIELD ..." (uapi/ktrack.h,
 * "User events"): TYPE is u8 s8 u16 s16 u32 s32 u64 s64, char[N] (a
 * string of at most N-1 characters and its NUL, in place) or char[] (a
 * string of any length, after the fixed fields, located by a u32 from
 * ktrack_user_loc()).  Fields are packed in order, without padding.
 *
 * Each call returns 0 or a negative errno (ktrack_user_strerror() says what
 * to fix); a failed registration leaves an event that is never enabled and
 * whose writes return its error, so a program may ignore it.  Needs
 * /dev/ktrack (ktrack.ko loaded) and the right to open it.
 */
#ifndef _KTRACK_USER_H
#define _KTRACK_USER_H

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <uapi/ktrack.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ktrack_user_event {
	int fd;				/* the writer: one per program (shared) */
	int error;			/* 0, or the registration's -errno */
	uint32_t id;
	uint32_t fixed_size;		/* bytes of the fixed fields */
	const volatile uint8_t *enabled;	/* its byte of the status page */
};

/* A never-enabled byte for events whose registration failed. */
static const volatile uint8_t ktrack_user_off_ = 0;

/*
 * The program's writer: /dev/ktrack opened once, its status page mapped
 * (one per translation unit that includes this header; each is a file of
 * its own for the kernel, which is fine).
 */
struct ktrack_user_ctx_ {
	int fd;
	const volatile uint8_t *status;
	int error;
};

/* The status page's offset needs a 64-bit off_t (_FILE_OFFSET_BITS=64 on 32-bit). */
typedef char ktrack_user_off_t_is_64_bits_[sizeof(off_t) == 8 ? 1 : -1];

/*
 * Opened once per translation unit, by the first registration that
 * succeeds (a failure is not kept: the next registration tries again);
 * threads that race each open one, and the losers close theirs.
 */
static inline struct ktrack_user_ctx_ *ktrack_user_ctx_get_(void)
{
	static struct ktrack_user_ctx_ ctx = { -1, NULL, 0 };
	int unset = -1;
	void *page;
	int fd;

	if (__atomic_load_n(&ctx.status, __ATOMIC_ACQUIRE))
		return &ctx;
	fd = open("/dev/" KTRACK_DEVICE_NAME, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		ctx.error = -errno;
		return &ctx;
	}
	page = mmap(NULL, KTRACK_UEVENT_STATUS_SIZE, PROT_READ, MAP_SHARED, fd,
		    (off_t)KTRACK_UEVENT_STATUS_OFFSET);
	if (page == MAP_FAILED) {
		ctx.error = -errno;
		close(fd);
		return &ctx;
	}
	if (__atomic_compare_exchange_n(&ctx.fd, &unset, fd, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE)) {
		ctx.error = 0;
		__atomic_store_n(&ctx.status, (const volatile uint8_t *)page, __ATOMIC_RELEASE);
		return &ctx;
	}
	/* another thread won: use its writer, which it publishes next */
	munmap(page, KTRACK_UEVENT_STATUS_SIZE);
	close(fd);
	while (!__atomic_load_n(&ctx.status, __ATOMIC_ACQUIRE))
		;
	return &ctx;
}

/* Registers the event described by 'format' (see above). */
static inline struct ktrack_user_event ktrack_user_event_register(const char *format)
{
	struct ktrack_user_ctx_ *ctx = ktrack_user_ctx_get_();
	struct ktrack_user_event ev = { -1, 0, 0, 0, &ktrack_user_off_ };
	struct ktrack_uevent_reg reg;

	if (!__atomic_load_n(&ctx->status, __ATOMIC_ACQUIRE)) {
		ev.error = ctx->error ? ctx->error : -ENODEV;
		return ev;
	}
	memset(&reg, 0, sizeof(reg));
	reg.size = sizeof(reg);
	reg.format_ptr = (uint64_t)(uintptr_t)format;
	if (ioctl(ctx->fd, KTRACK_IOC_UEVENT_REG, &reg) < 0) {
		ev.error = -errno;
		return ev;
	}
	ev.fd = ctx->fd;
	ev.id = reg.id;
	ev.fixed_size = reg.fixed_size;
	ev.enabled = ctx->status + reg.id;
	return ev;
}

/* Non-zero while some session records the event: one load. */
static inline int ktrack_user_event_enabled(const struct ktrack_user_event *ev)
{
	return *ev->enabled;
}

/* The u32 of a char[] field: its data 'len' bytes (NUL included) at 'offset' of the payload. */
static inline uint32_t ktrack_user_loc(uint32_t offset, uint32_t len)
{
	return (len << 16) | (offset & 0xffff);
}

/* Writes the event: 'iov' holds the payload, after the id. */
static inline int ktrack_user_event_writev(const struct ktrack_user_event *ev,
					   const struct iovec *iov, int n)
{
	struct iovec v[8];
	uint32_t id = ev->id;
	int i;

	if (ev->error)
		return ev->error;
	if (n < 0 || n > 7)
		return -EINVAL;
	v[0].iov_base = &id;
	v[0].iov_len = sizeof(id);
	for (i = 0; i < n; i++)
		v[i + 1] = iov[i];
	return writev(ev->fd, v, n + 1) < 0 ? -errno : 0;
}

/* The payload in one piece. */
static inline int ktrack_user_event_write(const struct ktrack_user_event *ev,
					  const void *payload, size_t len)
{
	struct iovec v = { (void *)payload, len };

	return ktrack_user_event_writev(ev, &v, 1);
}

/* The fixed fields, then the data of one char[] field. */
static inline int ktrack_user_event_write2(const struct ktrack_user_event *ev,
					   const void *fixed, size_t fixed_len,
					   const void *data, size_t data_len)
{
	struct iovec v[2] = { { (void *)fixed, fixed_len }, { (void *)data, data_len } };

	return ktrack_user_event_writev(ev, v, 2);
}

/* Lets go of the event (also done when the program exits). */
static inline int ktrack_user_event_unregister(struct ktrack_user_event *ev)
{
	struct ktrack_uevent_unreg u;

	if (ev->error)
		return ev->error;
	memset(&u, 0, sizeof(u));
	u.size = sizeof(u);
	u.id = ev->id;
	if (ioctl(ev->fd, KTRACK_IOC_UEVENT_UNREG, &u) < 0)
		return -errno;
	ev->error = -ENOENT;
	ev->enabled = &ktrack_user_off_;
	return 0;
}

/* What a -errno of these calls means, and what to do. */
static inline const char *ktrack_user_strerror(int err)
{
	switch (-err) {
	case 0:
		return "success";
	case ENOENT:
		return "/dev/ktrack does not exist, or the event is not registered: load ktrack (ktrackctl load)";
	case EACCES:
	case EPERM:
		return "no permission to open /dev/ktrack: run with CAP_PERFMON or as root";
	case EINVAL:
		return "the description or the payload does not follow the event's fields (see uapi/ktrack.h, \"User events\")";
	case EEXIST:
		return "an event of that name is registered with other fields";
	case ENOSPC:
		return "too many user events registered at once (KTRACK_UEVENT_MAX)";
	case E2BIG:
		return "the description or the payload is too long (KTRACK_UEVENT_FORMAT_MAX, KTRACK_UEVENT_PAYLOAD_MAX)";
	case ENOTTY:
		return "the loaded ktrack.ko has no user events: load the one built with this header";
	default:
		return strerror(-err);
	}
}

#ifdef __cplusplus
}
#endif

#endif /* _KTRACK_USER_H */
