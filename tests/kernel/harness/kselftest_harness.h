/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's kselftest_harness.h (tools/testing/selftests, from Debian's
 * linux-source), with each test's timeout (30 s, or TEST_F_TIMEOUT's)
 * multiplied by $KTRACK_TEST_TIMEOUT_SCALE: the debug kernel (KASAN,
 * lockdep, kmemleak under TCG) runs everything several times slower, and
 * make check-debug sets it.  The harness arms its timeout with alarm();
 * that one call goes through kt_scaled_alarm().
 */
#ifndef _KTRACK_KSELFTEST_HARNESS_H
#define _KTRACK_KSELFTEST_HARNESS_H

#include <stdlib.h>
#include <unistd.h>

static inline unsigned int kt_scaled_alarm(unsigned int seconds)
{
	const char *s = getenv("KTRACK_TEST_TIMEOUT_SCALE");
	long scale = s ? strtol(s, NULL, 10) : 1;

	return alarm(scale > 1 && scale < 1000 ? seconds * (unsigned int)scale : seconds);
}

#define alarm kt_scaled_alarm
#include_next <kselftest_harness.h>
#undef alarm

#endif
