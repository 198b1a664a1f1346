/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's kselftest_harness.h (tools/testing/selftests, from Debian's
 * linux-source), with each test's timeout (30 s, or TEST_F_TIMEOUT's)
 * multiplied by $KTRACK_TEST_TIMEOUT_SCALE, 10 when it is not set.  The
 * kernel's 30 s is a hang detector sized for real hardware; here every
 * test runs under TCG on a 2-core host that may be busy with builds, where
 * work that takes 5 s idle took over 30 s (lockdown.c's dozen probe
 * compilations, each a ktrackctl reading kallsyms and BTF, timed out on
 * 6.1 that way).  A timeout still catches a hang, minutes later instead of
 * seconds; the debug kernel (KASAN, lockdep, kmemleak) runs several times
 * slower again, and make check-debug raises the scale.  The harness arms
 * its timeout with alarm(); that one call goes through kt_scaled_alarm().
 */
#ifndef _KTRACK_KSELFTEST_HARNESS_H
#define _KTRACK_KSELFTEST_HARNESS_H

#include <stdlib.h>
#include <unistd.h>

static inline unsigned int kt_scaled_alarm(unsigned int seconds)
{
	const char *s = getenv("KTRACK_TEST_TIMEOUT_SCALE");
	long scale = s ? strtol(s, NULL, 10) : 10;

	return alarm(scale > 1 && scale < 1000 ? seconds * (unsigned int)scale : seconds);
}

#define alarm kt_scaled_alarm
#include_next <kselftest_harness.h>
#undef alarm

#endif
