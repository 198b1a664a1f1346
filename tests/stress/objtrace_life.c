// SPDX-License-Identifier: GPL-2.0
/*
 * objtrace life integrity under address reuse (review kernel-side-a31efae,
 * test 3; findings 8, 9 and 10).  ktrack_test_objtrace's 'churn' runs on
 * every online CPU: allocate (two tracked allocators), publish the object
 * in a shared slot array, hit a random slot's pointer (another CPU's
 * object, maybe freed or reused meanwhile), hit the object, free it through
 * kmem_cache_free, kfree, kmem_cache_free_bulk or kfree_rcu.  max_hits=2
 * makes hits end lives while other CPUs free them; max_age is an hour.
 *
 * Every record is read (read(), by a thread while the churn runs) and
 * checked, with no record lost:
 *   - each life starts once and ends exactly once, on the address it
 *     started on; a hit names a started life at that life's address;
 *   - the hit numbers of a life are exactly 1..n (a handler that strayed
 *     into another life would leave a gap in one and a repeat in another);
 *   - every free path is seen: no life ends by REUSE, none is a duplicate;
 *   - no life ends by AGE (a clock read across CPUs as unsigned would);
 *   - the counters match the records.
 * TAP on stdout.  KTRACK_STRESS_SCALE=10 runs ten times as many objects.
 */
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "objtrace_helpers.h"
#include "stress_lib.h"

#define OL_ITERS	2000		/* per CPU, times the scale */
#define OL_MAX_HITS	2
#define OL_BUF_PAGES	4096		/* 16 MiB per CPU: scale 10 writes ~10 MB per CPU */

struct ol_rec {
	uint16_t type;
	uint64_t obj, life, hits;
	uint32_t hit, reason;
};

static struct ol_rec *ol_recs;
static size_t ol_nr, ol_cap;
static uint64_t ol_lost_recs;	/* KTRACK_REC_LOST records */
static int ol_bad_read;
static atomic_int ol_stop;

static void ol_collect(const uint8_t *buf, ssize_t got)
{
	ssize_t off = 0;

	while (off < got) {
		const struct ktrack_rec_hdr *h = (const void *)(buf + off);
		const void *p = h + 1;
		struct ol_rec r = { .type = h->type };

		if (h->len < sizeof(*h) || off + h->len > got) {
			ol_bad_read = 1;
			return;
		}
		off += h->len;
		if (h->type == KTRACK_REC_LOST) {
			ol_lost_recs++;
			continue;
		}
		if (h->type == KTRACK_REC_OBJ_TRACK) {
			const struct ktrack_rec_obj_track *t = p;

			r.obj = t->obj;
			r.life = t->life;
		} else if (h->type == KTRACK_REC_OBJ_UNTRACK) {
			const struct ktrack_rec_obj_untrack *u = p;

			r.obj = u->obj;
			r.life = u->life;
			r.hits = u->hits;
			r.reason = u->reason;
		} else if (h->type == KTRACK_REC_OBJ_HIT) {
			const struct ktrack_rec_obj_hit *x = p;

			r.obj = x->obj;
			r.life = x->life;
			r.hit = x->hit;
		} else {
			continue;
		}
		if (ol_nr == ol_cap) {
			ol_cap = ol_cap ? 2 * ol_cap : 1 << 16;
			ol_recs = realloc(ol_recs, ol_cap * sizeof(*ol_recs));
			if (!ol_recs) {
				perror("realloc");
				exit(1);
			}
		}
		ol_recs[ol_nr++] = r;
	}
}

/* Drain what read() has now; the fd is non-blocking. */
static void ol_drain(int fd)
{
	static uint8_t buf[1 << 20];

	for (;;) {
		ssize_t got = read(fd, buf, sizeof(buf));

		if (got <= 0) {
			if (got < 0 && errno != EAGAIN)
				ol_bad_read = 1;
			return;
		}
		ol_collect(buf, got);
	}
}

static void *ol_reader(void *arg)
{
	int fd = *(int *)arg;

	while (!atomic_load(&ol_stop)) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		poll(&pfd, 1, 100);
		ol_drain(fd);
	}
	return NULL;
}

struct ol_life {
	uint64_t obj;
	uint32_t tracked, ended, nr_hits, max_hit, hit_sum_ok;
	uint64_t hit_mask;	/* hits 1..64 seen */
	uint64_t untrack_hits;
};

static void ol_check(const struct ktrack_obj_stats *st)
{
	uint64_t lo = UINT64_MAX, hi = 0, n_track = 0, n_untrack = 0, n_hit = 0, ended = 0;
	uint64_t bad_start = 0, bad_end = 0, bad_hit = 0, bad_seq = 0, twice = 0, never = 0;
	struct ol_life *lv;
	size_t i;
	int k;

	for (i = 0; i < ol_nr; i++) {
		if (ol_recs[i].life < lo)
			lo = ol_recs[i].life;
		if (ol_recs[i].life > hi)
			hi = ol_recs[i].life;
	}
	if (!ol_nr) {
		st_ok(0, "records were read");
		return;
	}
	lv = calloc(hi - lo + 1, sizeof(*lv));
	if (!lv) {
		perror("calloc");
		exit(1);
	}
	for (i = 0; i < ol_nr; i++) {
		if (ol_recs[i].type == KTRACK_REC_OBJ_TRACK) {
			struct ol_life *l = &lv[ol_recs[i].life - lo];

			n_track++;
			if (l->tracked++)
				bad_start++;
			l->obj = ol_recs[i].obj;
		}
	}
	for (i = 0; i < ol_nr; i++) {
		const struct ol_rec *r = &ol_recs[i];
		struct ol_life *l = &lv[r->life - lo];

		if (r->type == KTRACK_REC_OBJ_TRACK)
			continue;
		if (r->type == KTRACK_REC_OBJ_UNTRACK) {
			n_untrack++;
			if (!l->tracked || l->obj != r->obj)
				bad_end++;
			if (l->ended++)
				twice++;
			l->untrack_hits = r->hits;
			continue;
		}
		n_hit++;
		if (!l->tracked || l->obj != r->obj || !r->hit || r->hit > 64) {
			bad_hit++;
			continue;
		}
		if (l->hit_mask & (1ULL << (r->hit - 1)))
			bad_seq++;	/* the same hit number twice */
		l->hit_mask |= 1ULL << (r->hit - 1);
		l->nr_hits++;
	}
	for (i = 0; i <= hi - lo; i++) {
		struct ol_life *l = &lv[i];

		if (!l->tracked)
			continue;
		if (!l->ended)
			never++;
		/* Hits 1..n, no gap; the end saw at most the hits so far. */
		if (l->nr_hits < 64 &&
		    (l->hit_mask != (1ULL << l->nr_hits) - 1 || l->untrack_hits > l->nr_hits))
			bad_seq++;
	}
	for (k = 0; k < KTRACK_OBJ_END_MAX; k++)
		ended += st->ended[k];
	st_ok(n_track == st->lives && n_untrack == ended && n_hit == st->hits_recorded,
	      "records match the counters (track %llu/%llu, untrack %llu/%llu, hit %llu/%llu)",
	      (unsigned long long)n_track, (unsigned long long)st->lives,
	      (unsigned long long)n_untrack, (unsigned long long)ended,
	      (unsigned long long)n_hit, (unsigned long long)st->hits_recorded);
	st_ok(!bad_start && !bad_end && !bad_hit,
	      "every record names a life started once, at its address (%llu, %llu, %llu bad)",
	      (unsigned long long)bad_start, (unsigned long long)bad_end,
	      (unsigned long long)bad_hit);
	st_ok(!twice && !never, "every life ends exactly once (%llu twice, %llu never)",
	      (unsigned long long)twice, (unsigned long long)never);
	st_ok(!bad_seq, "the hits of each life are numbered 1..n (%llu lives not)",
	      (unsigned long long)bad_seq);
	free(lv);
}

int main(void)
{
	int scale = st_scale();
	struct ktrack_config rc = { .size = sizeof(rc), .buf_pages = OL_BUF_PAGES };
	struct ktrack_obj_stats st;
	struct ktrack_obj_config c;
	struct timespec t0, t1;
	pthread_t th;
	char iters[32];
	int fd, k, ret;
	uint64_t dropped = 0;

	printf("TAP version 13\n1..9\n");
	if (ot_load()) {
		printf("Bail out! cannot load ktrack.ko and %s\n", OT_TESTMOD);
		return 1;
	}
	fd = open("/dev/ktrack", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, KTRACK_IOC_SET_CONFIG, &rc)) {
		printf("Bail out! session: %s\n", strerror(errno));
		return 1;
	}
	ot_default_config(&c, "ktrack_test_obj_peek ktrack_test_obj_step1");
	c.max_objects = KTRACK_OBJ_MAX_OBJECTS;
	c.nr_args = 1;
	c.max_hits = OL_MAX_HITS;
	c.max_age_ns = 3600ULL * 1000000000ULL;
	ret = ot_ioctl(fd, KTRACK_IOC_OBJ_CONFIG, &c);
	if (!ret)
		ret = ot_add_source(fd, KTRACK_OBJ_SRC_RETVAL, "ktrack_test_obj_alloc", 0);
	if (!ret)
		ret = ot_add_source(fd, KTRACK_OBJ_SRC_RETVAL, "ktrack_test_obj_kmalloc", 0);
	if (!ret)
		ret = ioctl(fd, KTRACK_IOC_START) ? -errno : 0;
	if (!ret)
		ret = ot_ioctl(fd, KTRACK_IOC_OBJ_ENABLE, NULL);
	if (ret) {
		printf("Bail out! objtrace setup: %s\n", strerror(-ret));
		return 1;
	}
	if (pthread_create(&th, NULL, ol_reader, &fd)) {
		printf("Bail out! pthread_create\n");
		return 1;
	}
	snprintf(iters, sizeof(iters), "%d", OL_ITERS * scale);
	ret = ot_param_write("churn", iters);
	st_ok(!ret, "churn of %s objects per CPU ran (%s)", iters, ret ? strerror(-ret) : "ok");

	/* kfree_rcu() frees in batches later: wait (bounded) until each is seen. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		ret = ot_stats(fd, &st);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (ret || !st.nr_tracked || t1.tv_sec - t0.tv_sec > 60)
			break;
		poll(NULL, 0, 50);
	}
	st_ok(!ret && !st.nr_tracked, "every object's free was seen: %u still tracked after %lld s",
	      st.nr_tracked, (long long)(t1.tv_sec - t0.tv_sec));
	ret = ot_ioctl(fd, KTRACK_IOC_OBJ_DISABLE, NULL);
	if (!ret)
		ret = ioctl(fd, KTRACK_IOC_STOP) ? -errno : 0;
	atomic_store(&ol_stop, 1);
	pthread_join(th, NULL);
	ol_drain(fd);
	if (!ret)
		ret = ot_stats(fd, &st);
	st_ok(!ret && !st.rec_lost && !ol_lost_recs && !ol_bad_read,
	      "no record lost (%llu refused, %llu LOST records, read %s)",
	      (unsigned long long)st.rec_lost, (unsigned long long)ol_lost_recs,
	      ol_bad_read ? "failed" : "ok");
	for (k = 0; k < KTRACK_OBJ_DROP_MAX; k++)
		if (k != KTRACK_OBJ_DROP_FULL)
			dropped += st.dropped[k];
	st_ok(!st.ended[KTRACK_OBJ_END_REUSE] && !st.dropped[KTRACK_OBJ_DROP_DUP],
	      "every free path is seen: %llu lives ended by reuse, %llu duplicates",
	      (unsigned long long)st.ended[KTRACK_OBJ_END_REUSE],
	      (unsigned long long)st.dropped[KTRACK_OBJ_DROP_DUP]);
	st_ok(!st.ended[KTRACK_OBJ_END_AGE], "no life ends by age before max_age (%llu did)",
	      (unsigned long long)st.ended[KTRACK_OBJ_END_AGE]);
	printf("# lives %llu, hits %llu, ended free %llu hits %llu, dropped %llu (full %llu)\n",
	       (unsigned long long)st.lives, (unsigned long long)st.hits,
	       (unsigned long long)st.ended[KTRACK_OBJ_END_FREE],
	       (unsigned long long)st.ended[KTRACK_OBJ_END_HITS], (unsigned long long)dropped,
	       (unsigned long long)st.dropped[KTRACK_OBJ_DROP_FULL]);
	ol_check(&st);
	close(fd);
	ot_unload();
	return st_failed ? 1 : 0;
}
