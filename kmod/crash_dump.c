// SPDX-License-Identifier: GPL-2.0
/*
 * crash_dump.c - on oops and on panic, print the newest records of the
 * recording sessions to the console, in the manner of ftrace_dump_on_oops:
 * those configured with KTRACK_CFG_F_DUMP_ON_OOPS, or every one with the
 * module parameter dump_on_oops=1.
 *
 * The die and panic paths may have interrupted anything, on any CPU, with
 * any lock held: this takes no lock, allocates nothing, never sleeps and
 * never faults.  Sessions are found on the RCU list of running sessions
 * (their rings live until a grace period after they leave it); each is
 * paused first (as ftrace turns tracing off), and every header is checked
 * against the ring before use, since a writer on another CPU may still be
 * committing.  Probe names are read with copy_from_kernel_nofault().  One
 * dump at a time (an atomic flag), each session once, at most dump_lines
 * records per CPU and KT_DUMP_MAX_LINES in all.
 */
#include <linux/kdebug.h>
#include <linux/moduleparam.h>
#include <linux/notifier.h>
#include <linux/panic_notifier.h>
#include <linux/printk.h>
#include <linux/rculist.h>

#include "ktrack_internal.h"
#include "ring.h"
#include "session.h"

#define KT_DUMP_MAX_PER_CPU	256
#define KT_DUMP_MAX_LINES	2000

static bool dump_on_oops;
module_param(dump_on_oops, bool, 0644);
MODULE_PARM_DESC(dump_on_oops, "on oops or panic, print the newest records of every recording session");

static unsigned int dump_lines = 20;
module_param(dump_lines, uint, 0644);
MODULE_PARM_DESC(dump_lines, "records printed per CPU of each session on oops/panic (at most 256)");

static atomic_t kt_dumping = ATOMIC_INIT(0);
/* offsets of the newest records of one ring (one dump at a time) */
static u64 kt_dump_offs[KT_DUMP_MAX_PER_CPU];

static void kt_dump_probe(struct ktrack_session *s, const struct ktrack_rec_hdr *h,
			  const struct ktrack_rec_probe *p, u32 plen)
{
	char name[KTRACK_PROBE_NAME_MAX];
	u32 words[8] = { 0 };
	u32 n = 0, dlen;

	if (plen < sizeof(*p))
		return;
	dlen = min_t(u32, p->data_len, plen - sizeof(*p));
	n = min_t(u32, dlen / 4, ARRAY_SIZE(words));
	memcpy(words, p->data, n * 4);
	if (!ktrack_probe_name_nofault(s, p->probe_id, name, sizeof(name)))
		strscpy(name, "?", sizeof(name));
	pr_emerg("ktrack: %5llu.%09llu [%03u] pid %u: %s (probe %u) %s %pS <- %pS data %*ph\n",
		 h->ts / NSEC_PER_SEC, h->ts % NSEC_PER_SEC, h->cpu, h->pid, name, p->probe_id,
		 p->event == KTRACK_PROBE_EV_EXIT ? "exit" : "entry", (void *)p->ip,
		 (void *)p->parent_ip, (int)(n * 4), words);
}

static void kt_dump_record(struct ktrack_session *s, const u8 *rec)
{
	const struct ktrack_rec_hdr *h = (const void *)rec;
	const void *payload = rec + sizeof(*h);
	u32 plen = h->len - sizeof(*h);
	u64 sec = h->ts / NSEC_PER_SEC, ns = h->ts % NSEC_PER_SEC;

	switch (h->type) {
	case KTRACK_REC_PROBE:
		kt_dump_probe(s, h, payload, plen);
		break;
	case KTRACK_REC_STACK: {
		const struct ktrack_rec_stack *st = payload;
		u32 i;

		if (plen < sizeof(*st))
			break;
		for (i = 0; i < st->nr && sizeof(*st) + (i + 1) * 8 <= plen && i < 16; i++)
			pr_emerg("ktrack:                         stack %pS\n", (void *)st->ips[i]);
		break;
	}
	case KTRACK_REC_MARKER:
	case KTRACK_REC_PRINTF:
		pr_emerg("ktrack: %5llu.%09llu [%03u] pid %u: %s: %.*s\n", sec, ns, h->cpu, h->pid,
			 h->type == KTRACK_REC_MARKER ? "marker" : "printf", (int)plen,
			 (const char *)payload);
		break;
	case KTRACK_REC_LOST: {
		const struct ktrack_rec_lost *l = payload;

		if (plen >= sizeof(*l))
			pr_emerg("ktrack: %5llu.%09llu [%03u] lost %llu records\n", sec, ns, h->cpu,
				 l->count);
		break;
	}
	case KTRACK_REC_TRIGGER: {
		const struct ktrack_rec_trigger *t = payload;

		if (plen >= sizeof(*t))
			pr_emerg("ktrack: %5llu.%09llu [%03u] pid %u: trigger: probe %u action %u nth %llu\n",
				 sec, ns, h->cpu, h->pid, t->probe_id, t->action, t->nth);
		break;
	}
	default:
		pr_emerg("ktrack: %5llu.%09llu [%03u] pid %u: record type %u, %u bytes\n", sec, ns,
			 h->cpu, h->pid, h->type, h->len);
	}
}

/* The newest committed records of one ring; returns the lines printed. */
static unsigned int kt_dump_ring(struct ktrack_session *s, struct ktrack_ring *r, unsigned int max)
{
	u64 head = READ_ONCE(r->pub_head), pos, steps;
	unsigned int n = 0, i, first;

	/* overwrite: the oldest still present; discard: the unread ones */
	pos = r->mode == KTRACK_MODE_OVERWRITE ? READ_ONCE(r->oldest) : READ_ONCE(r->ctrl->data_tail);
	if (pos > head || head - pos > r->size || (pos & 7))
		return 0;
	for (steps = 0; pos < head && steps < r->size / 8; steps++) {
		u64 off = pos & ring_mask(r);
		const struct ktrack_rec_hdr *h = (const void *)(r->data + off);
		u16 len = READ_ONCE(h->len);

		if (len < 8 || (len & 7) || off + len > r->size || pos + len > head)
			break;
		if (READ_ONCE(h->type) != KTRACK_REC_PAD && len >= sizeof(*h))
			kt_dump_offs[n++ % max] = off;
		pos += len;
	}
	first = n > max ? n % max : 0;
	for (i = 0; i < min(n, max); i++)
		kt_dump_record(s, r->data + kt_dump_offs[(first + i) % max]);
	return min(n, max);
}

static void kt_dump_session(struct ktrack_session *s, unsigned int *lines)
{
	unsigned int cpu, max = clamp(READ_ONCE(dump_lines), 1U, (unsigned int)KT_DUMP_MAX_PER_CPU);
	struct ktrack_ring **rings = READ_ONCE(s->rings);

	/* paused (as ftrace turns tracing off): what is printed stays */
	WRITE_ONCE(s->trig_off, 1);
	pr_emerg("ktrack: session %s (id %llu): the newest records, %u at most per CPU\n",
		 s->name[0] ? s->name : "(anonymous)", s->id, max);
	if (!rings)
		return;
	for (cpu = 0; cpu < s->nr_rings && *lines < KT_DUMP_MAX_LINES; cpu++) {
		struct ktrack_ring *r = READ_ONCE(rings[cpu]);

		if (r)
			*lines += kt_dump_ring(s, r, min(max, KT_DUMP_MAX_LINES - *lines));
	}
	pr_emerg("ktrack: end of session %s\n", s->name[0] ? s->name : "(anonymous)");
}

struct kt_dump_ctx {
	const char *why;
	bool all;
	bool said;
	unsigned int lines;
};

static void kt_dump_one(struct ktrack_session *s, struct kt_dump_ctx *c)
{

	if (!c->all && !(READ_ONCE(s->cfg.flags) & KTRACK_CFG_F_DUMP_ON_OOPS))
		return;
	if (READ_ONCE(s->crash_dumped))
		return;
	WRITE_ONCE(s->crash_dumped, true);
	if (!c->said)
		pr_emerg("ktrack: dump on %s\n", c->why);
	c->said = true;
	kt_dump_session(s, &c->lines);
}

static void kt_crash_dump(const char *why)
{
	struct kt_dump_ctx c = { .why = why, .all = READ_ONCE(dump_on_oops) };
	struct ktrack_session *s;

	if (atomic_cmpxchg(&kt_dumping, 0, 1))
		return;
	rcu_read_lock();
	for (s = ktrack_running_next(NULL); s; s = ktrack_running_next(s))
		kt_dump_one(s, &c);
	rcu_read_unlock();
	atomic_set(&kt_dumping, 0);
}

static int kt_die_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	if (val == DIE_OOPS)
		kt_crash_dump("oops");
	return NOTIFY_DONE;
}

static int kt_panic_notify(struct notifier_block *nb, unsigned long val, void *data)
{
	kt_crash_dump("panic");
	return NOTIFY_DONE;
}

static struct notifier_block kt_die_nb = {
	.notifier_call = kt_die_notify,
};

static struct notifier_block kt_panic_nb = {
	.notifier_call = kt_panic_notify,
	/* before kdump and the other late notifiers */
	.priority = 1,
};

int ktrack_crash_dump_init(void)
{
	int ret = register_die_notifier(&kt_die_nb);

	if (ret)
		return ret;
	atomic_notifier_chain_register(&panic_notifier_list, &kt_panic_nb);
	return 0;
}

void ktrack_crash_dump_exit(void)
{
	atomic_notifier_chain_unregister(&panic_notifier_list, &kt_panic_nb);
	unregister_die_notifier(&kt_die_nb);
}
