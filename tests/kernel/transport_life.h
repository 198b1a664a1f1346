/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture and helpers that transport_lifecycle.c (mappings, processes,
 * module references) and transport_sessions.c (markers, named sessions,
 * poll, filters, trace events) share: one module load per case, and a
 * teardown that destroys every session so that the next case starts clean.
 * Include after kselftest_harness.h and transport_lib.h.
 */
#ifndef TRANSPORT_LIFE_H
#define TRANSPORT_LIFE_H

#include <sched.h>

FIXTURE(life) {
	long page;
};

FIXTURE_SETUP(life)
{
	ASSERT_EQ(0, tp_load());
	self->page = sysconf(_SC_PAGESIZE);
}

FIXTURE_TEARDOWN(life)
{
	struct ktrack_session_req r = { .size = sizeof(r), .flags = KTRACK_SESSION_F_ALL };
	int fd = open("/dev/ktrack", O_RDWR);

	if (fd >= 0) {
		ioctl(fd, KTRACK_IOC_SESSION_DESTROY, &r);
		close(fd);
	}
	kt_tracefs_write("events/ktrack/enable", "0");
	kt_tracefs_write("trace", "");
	tp_unload();
}

static inline int refcnt(void)
{
	char buf[32] = "";
	int fd = open("/sys/module/ktrack/refcnt", O_RDONLY);

	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fd);
	return atoi(buf);
}

/* vmalloc areas of session buffers still allocated. */
static inline int ring_areas(void)
{
	char out[64];

	kt_run(out, sizeof(out), "grep -c ktrack_rings_alloc /proc/vmallocinfo");
	return atoi(out);
}

static inline int req(int fd, unsigned long cmd, const char *name, __u32 flags)
{
	struct ktrack_session_req r = { .size = sizeof(r), .flags = flags };

	strncpy(r.name, name, sizeof(r.name) - 1);
	return ioctl(fd, cmd, &r) ? -errno : 0;
}

/* First MARKER text found by read()ing 'fd' to the end (stopped session). */
static inline int read_marker(int fd, char *text, size_t len)
{
	static __u8 buf[1 << 16];
	ssize_t n, off;

	text[0] = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (off = 0; off < n; off += ((struct ktrack_rec_hdr *)(buf + off))->len) {
			struct ktrack_rec_hdr *h = (void *)(buf + off);

			if (h->type == KTRACK_REC_MARKER && !text[0])
				snprintf(text, len, "%s", (char *)(h + 1));
		}
	return n < 0 ? -errno : 0;
}

/* Markers go to the ring of the writer's CPU: write from CPU 0's. */
static inline void pin_cpu0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Finds a MARKER 'text' in the data pages of a 4-page ring. */
static inline bool marker_in(const __u8 *data, __u64 head, const char *text)
{
	__u64 off = 0;

	while (off < head) {
		const struct ktrack_rec_hdr *h = (const void *)(data + off);

		if (h->len < 8)
			return false;
		if (h->type == KTRACK_REC_MARKER && !strcmp((const char *)(h + 1), text))
			return true;
		off += h->len;
	}
	return false;
}

#endif /* TRANSPORT_LIFE_H */
