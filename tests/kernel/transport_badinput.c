// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input: a table of transport ioctl calls with wrong sizes, flags,
 * NULL/unmapped pointers, oversized buffers and wrong states, each with
 * its errno; after each, the session must still configure, start, record
 * a marker, stop and deliver it.
 */
/*
 * The harness's fixture wrapper keeps 'child' across a setjmp; with our
 * inlined helpers gcc -Wextra flags it although it is never used after
 * the longjmp.
 */
#pragma GCC diagnostic ignored "-Wclobbered"
#include "kselftest_harness.h"
#include "transport_lib.h"

/* Through a volatile so the compiler does not flag the deliberate misuse. */
static void *volatile unmapped_p = (void *)8;
#define UNMAPPED (unmapped_p)

struct big_config {
	struct ktrack_config c;
	__u64 extra;
};

/* One call: returns 0 or -errno. */
typedef int (*bad_fn)(int fd);

static int io(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static int cfg(int fd, __u32 pages, __u32 mode, __u32 clock, __u32 flags)
{
	struct ktrack_config c = { .size = sizeof(c), .buf_pages = pages, .mode = mode,
				   .clock = clock, .flags = flags };

	return io(fd, KTRACK_IOC_SET_CONFIG, &c);
}

static int cfg_small_size(int fd)
{
	struct ktrack_config c = { .size = 8, .buf_pages = 4 };

	return io(fd, KTRACK_IOC_SET_CONFIG, &c);
}

static int cfg_huge_size(int fd)
{
	struct ktrack_config c = { .size = 1 << 20, .buf_pages = 4 };

	return io(fd, KTRACK_IOC_SET_CONFIG, &c);
}

static int cfg_nonzero_tail(int fd)
{
	struct big_config b = { .c = { .size = sizeof(b), .buf_pages = 4 }, .extra = 1 };

	return io(fd, KTRACK_IOC_SET_CONFIG, &b);
}

static int cfg_null(int fd) { return io(fd, KTRACK_IOC_SET_CONFIG, NULL); }
static int cfg_unmapped(int fd) { return io(fd, KTRACK_IOC_SET_CONFIG, UNMAPPED); }
/* the first bit no KTRACK_CFG_F_* uses */
#define CFG_UNKNOWN_FLAG (KTRACK_CFG_F_GROUP << 1)
static int cfg_flags(int fd) { return cfg(fd, 4, 0, 0, CFG_UNKNOWN_FLAG); }
static int cfg_zero_pages(int fd) { return cfg(fd, 0, 0, 0, 0); }
static int cfg_not_pow2(int fd) { return cfg(fd, 3, 0, 0, 0); }
static int cfg_too_big(int fd) { return cfg(fd, KTRACK_MAX_BUF_PAGES * 2, 0, 0, 0); }
static int cfg_bad_mode(int fd) { return cfg(fd, 4, 7, 0, 0); }
static int cfg_bad_clock(int fd) { return cfg(fd, 4, 0, 9, 0); }

static int cfg_bad_percent(int fd)
{
	struct ktrack_config c = { .size = sizeof(c), .buf_pages = 4, .wakeup_percent = 101 };

	return io(fd, KTRACK_IOC_SET_CONFIG, &c);
}

static int cfg_too_many_pids(int fd)
{
	struct ktrack_config c = { .size = sizeof(c), .buf_pages = 4,
				   .nr_pids = KTRACK_MAX_PID_FILTER + 1 };

	return io(fd, KTRACK_IOC_SET_CONFIG, &c);
}

static int cfg_stray_pid(int fd)
{
	struct ktrack_config c = { .size = sizeof(c), .buf_pages = 4, .nr_pids = 1,
				   .pids = { 1, 2 } };

	return io(fd, KTRACK_IOC_SET_CONFIG, &c);
}

static int cfg_bad_cpu_mask(int fd)
{
	struct ktrack_config c = { .size = sizeof(c), .buf_pages = 4, .cpu_mask = 1ULL << 63 };

	return io(fd, KTRACK_IOC_SET_CONFIG, &c);
}

static int getcfg_null(int fd) { return io(fd, KTRACK_IOC_GET_CONFIG, NULL); }

static int stats_null_cpus(int fd)
{
	struct ktrack_stats st = { .size = sizeof(st), .nr_cpus = 2 };

	return io(fd, KTRACK_IOC_GET_STATS, &st);
}

static int stats_unmapped_cpus(int fd)
{
	struct ktrack_stats st = { .size = sizeof(st), .nr_cpus = 2,
				   .cpus_ptr = (uintptr_t)UNMAPPED };

	return io(fd, KTRACK_IOC_GET_STATS, &st);
}

/* Entry sizes below the first struct, not a multiple of 8, or over 256. */
static int stats_entry(int fd, __u32 esize)
{
	struct ktrack_cpu_stats_ext cs[2];
	struct ktrack_stats st = { .size = sizeof(st), .nr_cpus = 1, .cpus_ptr = (uintptr_t)cs,
				   .cpu_stats_size = esize };

	return io(fd, KTRACK_IOC_GET_STATS, &st);
}

static int stats_entry_1(int fd) { return stats_entry(fd, 1); }
static int stats_entry_56(int fd) { return stats_entry(fd, 56); }
static int stats_entry_68(int fd) { return stats_entry(fd, 68); }
static int stats_entry_264(int fd) { return stats_entry(fd, 264); }

static int sess(int fd, unsigned long cmd, const char *name, __u32 flags)
{
	struct ktrack_session_req r = { .size = sizeof(r), .flags = flags };

	strncpy(r.name, name, sizeof(r.name) - 1);
	return io(fd, cmd, &r);
}

static int create_bad_name(int fd) { return sess(fd, KTRACK_IOC_SESSION_CREATE, "a/b", 0); }
static int create_empty(int fd) { return sess(fd, KTRACK_IOC_SESSION_CREATE, "", 0); }
static int create_flags(int fd) { return sess(fd, KTRACK_IOC_SESSION_CREATE, "x", 2); }
static int attach_unknown(int fd) { return sess(fd, KTRACK_IOC_SESSION_ATTACH, "nosuch", 0); }
static int destroy_unknown(int fd) { return sess(fd, KTRACK_IOC_SESSION_DESTROY, "nosuch", 0); }
static int destroy_bad_flags(int fd) { return sess(fd, KTRACK_IOC_SESSION_DESTROY, "x", 4); }
static int destroy_all_named(int fd)
{
	return sess(fd, KTRACK_IOC_SESSION_DESTROY, "x", KTRACK_SESSION_F_ALL);
}

static int create_unterminated(int fd)
{
	struct ktrack_session_req r = { .size = sizeof(r) };

	memset(r.name, 'a', sizeof(r.name));
	return io(fd, KTRACK_IOC_SESSION_CREATE, &r);
}

static int create_null(int fd) { return io(fd, KTRACK_IOC_SESSION_CREATE, NULL); }

static int list_unmapped(int fd)
{
	struct ktrack_session_list l = { .size = sizeof(l), .count = 4,
					 .entries_ptr = (uintptr_t)UNMAPPED };
	int ret;

	/* Needs one named session to have something to copy. */
	sess(fd, KTRACK_IOC_SESSION_DESTROY, "", KTRACK_SESSION_F_ALL);
	{
		int fd2 = open("/dev/ktrack", O_RDWR);

		sess(fd2, KTRACK_IOC_SESSION_CREATE, "bad_list", 0);
		close(fd2);
	}
	ret = io(fd, KTRACK_IOC_SESSION_LIST, &l);
	sess(fd, KTRACK_IOC_SESSION_DESTROY, "bad_list", 0);
	return ret;
}

static int list_null_entries(int fd)
{
	struct ktrack_session_list l = { .size = sizeof(l), .count = 4 };

	return io(fd, KTRACK_IOC_SESSION_LIST, &l);
}

static int unknown_cmd(int fd) { return io(fd, _IO(KTRACK_IOC_MAGIC, 0x1f), NULL); }
static int wrong_dir_cmd(int fd) { return io(fd, _IOR(KTRACK_IOC_MAGIC, 0x01, struct ktrack_config), NULL); }
static int wrong_size_cmd(int fd) { return io(fd, _IOW(KTRACK_IOC_MAGIC, 0x01, __u64), NULL); }
static int other_magic(int fd) { return io(fd, _IO('T', 0x03), NULL); }

static int start_twice(int fd)
{
	int ret;

	if (io(fd, KTRACK_IOC_START, NULL))
		return -1000;
	ret = io(fd, KTRACK_IOC_START, NULL);
	io(fd, KTRACK_IOC_STOP, NULL);
	return ret;
}

static int resize_while_running(int fd)
{
	int ret;

	if (io(fd, KTRACK_IOC_START, NULL))
		return -1000;
	ret = cfg(fd, 8, 0, 0, 0);
	io(fd, KTRACK_IOC_STOP, NULL);
	return ret;
}

static int resize_while_mapped(int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p;
	int ret;

	if (cfg(fd, 4, 0, 0, 0))
		return -1000;
	p = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1001;
	ret = cfg(fd, 8, 0, 0, 0);
	munmap(p, page);
	return ret;
}

static int stop_idle(int fd) { return io(fd, KTRACK_IOC_STOP, NULL); }

static int mmap_writable_data(int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, page);

	if (p != MAP_FAILED) {
		munmap(p, page);
		return 0;
	}
	return -errno;
}

static int mprotect_data_writable(int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, page);
	int ret;

	if (p == MAP_FAILED)
		return -1000;
	ret = mprotect(p, page, PROT_READ | PROT_WRITE) ? -errno : 0;
	munmap(p, page);
	return ret;
}

static int mmap_beyond(int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, page * 1000000L);

	if (p != MAP_FAILED) {
		munmap(p, page);
		return 0;
	}
	return -errno;
}

static int mmap_private(int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, page, PROT_READ, MAP_PRIVATE, fd, 0);

	if (p != MAP_FAILED) {
		munmap(p, page);
		return 0;
	}
	return -errno;
}

static int marker_idle(int fd) { return write(fd, "x", 1) < 0 ? -errno : 0; }

static int marker_too_long(int fd)
{
	static char big[KTRACK_MARKER_MAX + 10];
	int ret;

	memset(big, 'm', sizeof(big));
	if (io(fd, KTRACK_IOC_START, NULL))
		return -1000;
	ret = write(fd, big, sizeof(big)) < 0 ? -errno : 0;
	io(fd, KTRACK_IOC_STOP, NULL);
	return ret;
}

static int marker_unmapped(int fd)
{
	int ret;

	if (io(fd, KTRACK_IOC_START, NULL))
		return -1000;
	ret = write(fd, UNMAPPED, 16) < 0 ? -errno : 0;
	io(fd, KTRACK_IOC_STOP, NULL);
	return ret;
}

static int read_unmapped(int fd)
{
	int ret;

	if (io(fd, KTRACK_IOC_START, NULL) || write(fd, "hello", 5) != 5)
		return -1000;
	io(fd, KTRACK_IOC_STOP, NULL);
	ret = read(fd, UNMAPPED, 4096) < 0 ? -errno : 0;
	return ret;
}

static int read_too_small(int fd)
{
	char buf[16];

	if (io(fd, KTRACK_IOC_START, NULL) || write(fd, "hello", 5) != 5)
		return -1000;
	io(fd, KTRACK_IOC_STOP, NULL);
	return read(fd, buf, sizeof(buf)) < 0 ? -errno : 0;
}

static const struct {
	const char *name;
	bad_fn fn;
	int err;
} bad[] = {
	{ "SET_CONFIG size 8", cfg_small_size, EINVAL },
	{ "SET_CONFIG size 1 MiB", cfg_huge_size, EINVAL },
	{ "SET_CONFIG unknown non-zero tail", cfg_nonzero_tail, EINVAL },
	{ "SET_CONFIG NULL", cfg_null, EFAULT },
	{ "SET_CONFIG unmapped", cfg_unmapped, EFAULT },
	{ "SET_CONFIG flags", cfg_flags, EINVAL },
	{ "SET_CONFIG 0 pages", cfg_zero_pages, EINVAL },
	{ "SET_CONFIG 3 pages", cfg_not_pow2, EINVAL },
	{ "SET_CONFIG 2 x max pages", cfg_too_big, E2BIG },
	{ "SET_CONFIG mode 7", cfg_bad_mode, EINVAL },
	{ "SET_CONFIG clock 9", cfg_bad_clock, EINVAL },
	{ "SET_CONFIG 101 percent", cfg_bad_percent, EINVAL },
	{ "SET_CONFIG 9 pids", cfg_too_many_pids, EINVAL },
	{ "SET_CONFIG pid beyond nr_pids", cfg_stray_pid, EINVAL },
	{ "SET_CONFIG mask of absent CPU", cfg_bad_cpu_mask, EINVAL },
	{ "GET_CONFIG NULL", getcfg_null, EFAULT },
	{ "GET_STATS NULL cpus", stats_null_cpus, EFAULT },
	{ "GET_STATS unmapped cpus", stats_unmapped_cpus, EFAULT },
	{ "GET_STATS entry size 1", stats_entry_1, EINVAL },
	{ "GET_STATS entry size 56", stats_entry_56, EINVAL },
	{ "GET_STATS entry size 68", stats_entry_68, EINVAL },
	{ "GET_STATS entry size 264", stats_entry_264, EINVAL },
	{ "SESSION_CREATE bad name", create_bad_name, EINVAL },
	{ "SESSION_CREATE empty name", create_empty, EINVAL },
	{ "SESSION_CREATE unknown flag", create_flags, EINVAL },
	{ "SESSION_CREATE unterminated", create_unterminated, EINVAL },
	{ "SESSION_CREATE NULL", create_null, EFAULT },
	{ "SESSION_ATTACH unknown", attach_unknown, ENOENT },
	{ "SESSION_DESTROY unknown", destroy_unknown, ENOENT },
	{ "SESSION_DESTROY unknown flag", destroy_bad_flags, EINVAL },
	{ "SESSION_DESTROY ALL with a name", destroy_all_named, EINVAL },
	{ "SESSION_LIST unmapped", list_unmapped, EFAULT },
	{ "SESSION_LIST NULL entries", list_null_entries, EFAULT },
	{ "unknown command", unknown_cmd, ENOTTY },
	{ "SET_CONFIG number, wrong direction", wrong_dir_cmd, ENOTTY },
	{ "SET_CONFIG number, wrong size", wrong_size_cmd, ENOTTY },
	{ "another driver's magic", other_magic, ENOTTY },
	{ "START twice", start_twice, EBUSY },
	{ "SET_CONFIG resize while running", resize_while_running, EBUSY },
	{ "SET_CONFIG resize while mapped", resize_while_mapped, EBUSY },
	{ "STOP while idle", stop_idle, EALREADY },
	{ "mmap data pages writable", mmap_writable_data, EPERM },
	{ "mprotect data pages writable", mprotect_data_writable, EACCES },
	{ "mmap beyond the rings", mmap_beyond, EINVAL },
	{ "mmap MAP_PRIVATE", mmap_private, EINVAL },
	{ "write marker while idle", marker_idle, ENODATA },
	{ "write marker too long", marker_too_long, E2BIG },
	{ "write marker unmapped", marker_unmapped, EFAULT },
	{ "read into unmapped buffer", read_unmapped, EFAULT },
	{ "read buffer smaller than a record", read_too_small, EINVAL },
};

/* The session still works: configure, start, marker, stop, read it back. */
static int still_works(int fd, char *why, size_t len)
{
	struct ktrack_config c = { .size = sizeof(c) };
	static __u8 buf[1 << 16];
	ssize_t n, off = 0;
	bool found = false;

	if (io(fd, KTRACK_IOC_GET_CONFIG, &c) || c.size != sizeof(c)) {
		snprintf(why, len, "GET_CONFIG failed");
		return -1;
	}
	if (cfg(fd, 4, 0, 0, 0)) {
		snprintf(why, len, "SET_CONFIG failed: %s", strerror(errno));
		return -1;
	}
	if (io(fd, KTRACK_IOC_START, NULL) || write(fd, "alive", 5) != 5 ||
	    io(fd, KTRACK_IOC_STOP, NULL)) {
		snprintf(why, len, "start/marker/stop failed: %s", strerror(errno));
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (off = 0; off < n; off += ((struct ktrack_rec_hdr *)(buf + off))->len) {
			struct ktrack_rec_hdr *h = (void *)(buf + off);

			if (h->type == KTRACK_REC_MARKER && !strcmp((char *)(h + 1), "alive"))
				found = true;
		}
	if (!found) {
		snprintf(why, len, "the marker did not come back");
		return -1;
	}
	return 0;
}

FIXTURE(bad) {
	int dummy;
};

FIXTURE_SETUP(bad)
{
	ASSERT_EQ(0, tp_load());
}

FIXTURE_TEARDOWN(bad)
{
	tp_unload();
}

TEST_F(bad, table_each_errno_then_session_still_works)
{
	char why[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int fd = open("/dev/ktrack", O_RDWR);
		int ret;

		ASSERT_LE(0, fd);
		ret = bad[i].fn(fd);
		EXPECT_EQ(-bad[i].err, ret) TH_LOG("%s: got %d (%s)", bad[i].name, ret,
						   ret < 0 ? strerror(-ret) : "success");
		EXPECT_EQ(0, still_works(fd, why, sizeof(why))) TH_LOG("after %s: %s",
								      bad[i].name, why);
		close(fd);
	}
}

TEST_F(bad, failed_config_changes_nothing)
{
	struct ktrack_config before = { .size = sizeof(before) }, after = { .size = sizeof(after) };
	int fd = open("/dev/ktrack", O_RDWR);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, cfg(fd, 8, KTRACK_MODE_OVERWRITE, KTRACK_CLOCK_MONO, 0));
	ASSERT_EQ(0, io(fd, KTRACK_IOC_GET_CONFIG, &before));
	EXPECT_EQ(-E2BIG, cfg(fd, KTRACK_MAX_BUF_PAGES * 2, 0, 0, 0));
	EXPECT_EQ(-EINVAL, cfg(fd, 4, 0, 0, CFG_UNKNOWN_FLAG));
	/* only a named session is shared with the ktrack group */
	EXPECT_EQ(-EINVAL, cfg(fd, 4, 0, 0, KTRACK_CFG_F_GROUP));
	ASSERT_EQ(0, io(fd, KTRACK_IOC_GET_CONFIG, &after));
	EXPECT_EQ(0, memcmp(&before, &after, sizeof(before)));
	EXPECT_EQ(8, after.buf_pages);
	EXPECT_EQ(KTRACK_MODE_OVERWRITE, after.mode);
	close(fd);
}

TEST_HARNESS_MAIN
