// SPDX-License-Identifier: GPL-2.0
/*
 * user_event_sample.c - a program that says what it does through typed
 * user events (include/ktrack/ktrack_user.h).
 *
 * It registers "sample/req u32 id; char[] path", then handles N "requests"
 * (one every INTERVAL_MS), writing one event per request while a ktrack
 * session records the event, and nothing at all while none does: the test
 * of ktrack_user_event_enabled() is one load.
 *
 *   user_event_sample [N [INTERVAL_MS [WAIT_MS]]]
 *
 * WAIT_MS: wait up to that long for a session to enable the event before
 * the first request (so that a recording started just after sees them all).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ktrack/ktrack_user.h>

/* The fixed fields, packed (no padding) as the description declares them. */
#pragma pack(push, 1)
struct req_fields {
	uint32_t id;
	uint32_t path;		/* char[]: ktrack_user_loc() of the string after them */
};
#pragma pack(pop)

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10;
	long interval = argc > 2 ? atol(argv[2]) : 10;
	long wait = argc > 3 ? atol(argv[3]) : 0;
	struct ktrack_user_event req;
	long i, written = 0;

	req = ktrack_user_event_register("sample/req u32 id; char[] path");
	if (req.error) {
		fprintf(stderr, "user_event_sample: cannot register sample/req: %s\n",
			ktrack_user_strerror(req.error));
		return 1;
	}
	printf("registered sample/req as id %u\n", req.id);
	fflush(stdout);
	while (wait > 0 && !ktrack_user_event_enabled(&req)) {
		sleep_ms(10);
		wait -= 10;
	}
	for (i = 0; i < n; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/srv/file-%ld", i);
		if (ktrack_user_event_enabled(&req)) {
			struct req_fields f;
			uint32_t len = strlen(path) + 1;
			int err;

			f.id = i;
			f.path = ktrack_user_loc(sizeof(f), len);
			err = ktrack_user_event_write2(&req, &f, sizeof(f), path, len);
			if (err) {
				fprintf(stderr, "user_event_sample: write: %s\n",
					ktrack_user_strerror(err));
				return 1;
			}
			written++;
		}
		if (interval)
			sleep_ms(interval);
	}
	printf("%ld requests, %ld events written\n", n, written);
	return 0;
}
