/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the probe tests (probe_*.c): load ktrack and the target
 * module, compile specs with 'ktrackctl probe compile', add them on the
 * test's own session fd, and walk the records read back.
 */
#ifndef KTRACK_PROBE_COMMON_H
#define KTRACK_PROBE_COMMON_H

#include <poll.h>
#include <sys/ioctl.h>

#include "ktrack_test.h"
#include <uapi/ktrack.h>

#define PT_MODULE	"ktrack_test_probe_target"
#define PT_MODULE_PATH	"tests/kmod/ktrack_test_probe_target/ktrack_test_probe_target.ko"
#define PT_PROC		"/proc/ktrack_test_probe"

static inline int pt_load_all(void)
{
	char out[4096];

	if (!kt_module_loaded("ktrack") &&
	    kt_run(out, sizeof(out), "%s load", kt_ktrackctl()) != 0) {
		fprintf(stderr, "ktrackctl load: %s\n", out);
		return -1;
	}
	if (!kt_module_loaded(PT_MODULE) && kt_insmod(kt_module_path(PT_MODULE_PATH), NULL))
		return -1;
	return 0;
}

static inline void pt_unload_all(void)
{
	if (kt_module_loaded(PT_MODULE))
		kt_rmmod(PT_MODULE);
	if (kt_module_loaded("ktrack"))
		kt_rmmod("ktrack");
}

/* Writes a command to the target module; returns 0 or -errno. */
static inline int pt_cmd(const char *cmd, size_t len)
{
	int fd = open(PT_PROC, O_WRONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, cmd, len ? len : strlen(cmd)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

/* A session fd, started. */
static inline int pt_session(void)
{
	int fd = open("/dev/ktrack", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (ioctl(fd, KTRACK_IOC_START) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Compiles SPEC with ktrackctl into a malloc'ed blob; NULL + message on error. */
static inline void *pt_compile(const char *spec, const char *extra, size_t *len, char *msg, size_t msglen)
{
	char path[] = "/tmp/pt_desc_XXXXXX";
	int fd = mkstemp(path);
	struct stat st;
	void *blob = NULL;

	if (fd < 0)
		return NULL;
	close(fd);
	if (kt_run(msg, msglen, "%s probe compile '%s' -o %s %s", kt_ktrackctl(), spec, path,
		   extra ? extra : "") != 0)
		goto out;
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0)
		goto out;
	blob = malloc(st.st_size);
	if (blob && read(fd, blob, st.st_size) != st.st_size) {
		free(blob);
		blob = NULL;
	}
	*len = st.st_size;
	close(fd);
out:
	unlink(path);
	return blob;
}

/* Adds a compiled blob; returns 0 or -errno, fills *res. */
static inline int pt_add_blob(int fd, void *blob, size_t len, struct ktrack_probe_add *res)
{
	struct ktrack_probe_add req = { .size = sizeof(req) };

	req.desc_size = len;
	req.desc_ptr = (unsigned long)blob;
	if (ioctl(fd, KTRACK_IOC_PROBE_ADD, &req) < 0)
		return -errno;
	if (res)
		*res = req;
	return 0;
}

/* Compile + add; returns the probe id (> 0) or -errno / -1000 on compile error. */
static inline int pt_add(int fd, const char *spec, const char *extra)
{
	char msg[4096];
	struct ktrack_probe_add res = { 0 };
	size_t len = 0;
	void *blob = pt_compile(spec, extra, &len, msg, sizeof(msg));
	int ret;

	if (!blob) {
		fprintf(stderr, "compile '%s' failed: %s\n", spec, msg);
		return -1000;
	}
	ret = pt_add_blob(fd, blob, len, &res);
	free(blob);
	if (ret) {
		fprintf(stderr, "add '%s' failed: %s\n", spec, strerror(-ret));
		return ret;
	}
	return res.id;
}

static inline int pt_info(int fd, uint32_t id, struct ktrack_probe_info *out)
{
	struct ktrack_probe_info buf[64];
	struct ktrack_probe_list req = { .size = sizeof(req), .count = 64 };
	uint32_t i;

	req.entries_ptr = (unsigned long)buf;
	if (ioctl(fd, KTRACK_IOC_PROBE_LIST, &req) < 0)
		return -errno;
	for (i = 0; i < req.count && i < 64; i++) {
		if (buf[i].id == id) {
			*out = buf[i];
			return 0;
		}
	}
	return -ENOENT;
}

/* Reads every record available now into buf; returns bytes. */
static inline size_t pt_drain(int fd, char *buf, size_t len)
{
	size_t total = 0;
	int fl = fcntl(fd, F_GETFL);

	ioctl(fd, KTRACK_IOC_FLUSH);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while (total < len) {
		ssize_t n = read(fd, buf + total, len - total);

		if (n <= 0)
			break;
		total += n;
	}
	fcntl(fd, F_SETFL, fl);
	return total;
}

/* Iterates probe records of probe 'id' in buf: returns the next one after *pos. */
static inline struct ktrack_rec_probe *pt_next(char *buf, size_t len, size_t *pos, uint32_t id,
					       struct ktrack_rec_hdr **hdr_out)
{
	while (*pos + sizeof(struct ktrack_rec_hdr) <= len) {
		struct ktrack_rec_hdr *h = (struct ktrack_rec_hdr *)(buf + *pos);
		struct ktrack_rec_probe *r = (struct ktrack_rec_probe *)(h + 1);

		if (h->len < sizeof(*h) || *pos + h->len > len)
			return NULL;
		*pos += h->len;
		if (h->type == KTRACK_REC_PROBE && r->probe_id == id) {
			if (hdr_out)
				*hdr_out = h;
			return r;
		}
	}
	return NULL;
}

static inline int pt_count(char *buf, size_t len, uint32_t id, uint16_t event)
{
	size_t pos = 0;
	struct ktrack_rec_probe *r;
	int n = 0;

	while ((r = pt_next(buf, len, &pos, id, NULL)))
		if (!event || r->event == event)
			n++;
	return n;
}

/* A string slot of a record as a NUL-terminated copy (static buffer). */
static inline const char *pt_str(struct ktrack_rec_probe *r, uint32_t slot)
{
	static char s[512];
	uint32_t loc;

	memcpy(&loc, r->data + slot, 4);
	if ((loc >> 16) + (loc & 0xffff) > r->data_len)
		return "(out of bounds)";
	memcpy(s, r->data + (loc >> 16), loc & 0xffff);
	s[loc & 0xffff] = 0;
	return s;
}

/* Address of a symbol from /proc/kallsyms (0 if absent). */
static inline unsigned long pt_kallsyms(const char *name)
{
	char line[512], sym[256];
	unsigned long addr, found = 0;
	char type;
	FILE *f = fopen("/proc/kallsyms", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %c %255s", &addr, &type, sym) == 3 && !strcmp(sym, name))
			found = addr;
	fclose(f);
	return found;
}

/*
 * The fixture of the probe tests that read records back: ktrack and the
 * target module loaded, a session fd of the test's own, and a read buffer
 * of BUFSZ bytes that starts empty (what earlier cases left is drained).
 * Expand after kselftest_harness.h.
 */
#define PT_RECORDS_FIXTURE(name, bufsz)					\
	FIXTURE(name) {							\
		int fd;							\
		char *buf;						\
	};								\
	FIXTURE_SETUP(name)						\
	{								\
		ASSERT_EQ(0, pt_load_all());				\
		self->fd = pt_session();				\
		ASSERT_LE(0, self->fd);					\
		self->buf = malloc(bufsz);				\
		ASSERT_NE(NULL, self->buf);				\
		pt_drain(self->fd, self->buf, bufsz);			\
	}								\
	FIXTURE_TEARDOWN(name)						\
	{								\
		close(self->fd);					\
		free(self->buf);					\
		pt_unload_all();					\
	}

#endif /* KTRACK_PROBE_COMMON_H */
