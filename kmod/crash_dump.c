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
 * dump at a time (an atomic flag), each session once per START, at most
 * dump_lines records per CPU, KT_DUMP_MAX_LINES lines and KT_DUMP_MAX_WALK
 * bytes of rings walked in all.
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

/* bytes of rings walked by one dump, over all sessions and CPUs */
#define KT_DUMP_MAX_WALK	(256ULL << 20)

static atomic_t kt_dumping = ATOMIC_INIT(0);
/*
 * One dump at a time (kt_dumping): the newest records of one ring as
 * (offset, length) pairs, and the copy of the one being printed.  Other
 * CPUs may still write their rings, so a saved record is copied, its
 * length checked again on the copy, and only the copy is parsed.
 */
static struct {
	u32 off;
	u16 len;
	bool linked_tail;	/* the STACK of a linked pair: never shown without its PROBE */
} kt_dump_recs[KT_DUMP_MAX_PER_CPU];
static u8 kt_dump_copy[KTRACK_REC_MAX + 8] __aligned(8);
/* the last probe name found (names are looked up without locks) */
static struct ktrack_session *kt_dump_name_s;
static u32 kt_dump_name_id;
static char kt_dump_name[KTRACK_PROBE_NAME_MAX];

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
	if (kt_dump_name_s == s && kt_dump_name_id == p->probe_id) {
		memcpy(name, kt_dump_name, sizeof(name));
	} else if (ktrack_probe_name_nofault(s, p->probe_id, name, sizeof(name))) {
		memcpy(kt_dump_name, name, sizeof(name));
		kt_dump_name_s = s;
		kt_dump_name_id = p->probe_id;
	} else {
		strscpy(name, "?", sizeof(name));
	}
	pr_emerg("ktrack: %5llu.%09llu [%03u] pid %u: %s (probe %u) %s %pS <- %pS data %*ph\n",
		 h->ts / NSEC_PER_SEC, h->ts % NSEC_PER_SEC, h->cpu, h->pid, name, p->probe_id,
		 p->event == KTRACK_PROBE_EV_EXIT ? "exit" :
		 p->event == KTRACK_PROBE_EV_ENTRY ? "entry" : "event", (void *)p->ip,
		 (void *)p->parent_ip, (int)(n * 4), words);
}

/* One record, from its copy (len checked: sizeof(hdr) <= len <= KTRACK_REC_MAX); returns lines. */
static unsigned int kt_dump_record(struct ktrack_session *s, const u8 *rec, u32 len)
{
	const struct ktrack_rec_hdr *h = (const void *)rec;
	const void *payload = rec + sizeof(*h);
	u32 plen = len - sizeof(*h);
	u64 sec = h->ts / NSEC_PER_SEC, ns = h->ts % NSEC_PER_SEC;
	unsigned int lines = 1;

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
		lines = max(i, 1U);
		break;
	}
	case KTRACK_REC_MARKER:
	case KTRACK_REC_PRINTF:
		/* user text: escaped, so it cannot forge console lines */
		pr_emerg("ktrack: %5llu.%09llu [%03u] pid %u: %s: %*pE\n", sec, ns, h->cpu, h->pid,
			 h->type == KTRACK_REC_MARKER ? "marker" : "printf",
			 (int)strnlen(payload, plen), payload);
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
			 h->cpu, h->pid, h->type, len);
	}
	return lines;
}

/*
 * The newest committed records of one ring; returns the lines printed.
 * 'walked' bounds the bytes walked by the whole dump.
 */
static unsigned int kt_dump_ring(struct ktrack_session *s, struct ktrack_ring *r, unsigned int max,
				 unsigned int line_budget, u64 *walked)
{
	u64 head = READ_ONCE(r->pub_head), pos;
	unsigned int n = 0, i, first, lines = 0;
	bool after_linked = false;

	/* overwrite: the oldest still present; discard: the unread ones */
	pos = r->mode == KTRACK_MODE_OVERWRITE ? READ_ONCE(r->oldest) : READ_ONCE(r->ctrl->data_tail);
	if (pos > head || head - pos > r->size || (pos & 7))
		return 0;
	while (pos < head && *walked < KT_DUMP_MAX_WALK) {
		u64 off = pos & ring_mask(r);
		const struct ktrack_rec_hdr *h = (const void *)(r->data + off);
		u16 len = READ_ONCE(h->len);

		if (len < 8 || (len & 7) || off + len > r->size || pos + len > head)
			break;
		if (READ_ONCE(h->type) != KTRACK_REC_PAD && len >= sizeof(*h)) {
			kt_dump_recs[n % max].off = off;
			kt_dump_recs[n % max].len = len;
			kt_dump_recs[n % max].linked_tail = after_linked;
			after_linked = !after_linked && (READ_ONCE(h->flags) & KTRACK_RECF_LINKED);
			n++;
		}
		pos += len;
		*walked += len;
	}
	first = n > max ? n % max : 0;
	for (i = 0; i < min(n, max) && lines < line_budget; i++) {
		u32 off = kt_dump_recs[(first + i) % max].off;
		u16 len = kt_dump_recs[(first + i) % max].len;

		/* the cut fell inside a pair: its STACK alone would name no probe */
		if (!i && kt_dump_recs[first % max].linked_tail)
			continue;
		/* copied, then checked again: a writer may have reused the space */
		memcpy(kt_dump_copy, r->data + off, len);
		if (((struct ktrack_rec_hdr *)kt_dump_copy)->len != len)
			continue;
		lines += kt_dump_record(s, kt_dump_copy, len);
	}
	return lines;
}

static void kt_dump_session(struct ktrack_session *s, unsigned int *lines, u64 *walked)
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
			*lines += kt_dump_ring(s, r, max, KT_DUMP_MAX_LINES - *lines, walked);
	}
	pr_emerg("ktrack: end of session %s\n", s->name[0] ? s->name : "(anonymous)");
}

struct kt_dump_ctx {
	const char *why;
	bool all;
	bool said;
	unsigned int lines;
	u64 walked;
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
	kt_dump_session(s, &c->lines, &c->walked);
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
	/*
	 * Early among the panic notifiers.  With a kdump kernel loaded,
	 * panic() kexecs before the notifiers run, unless the kernel was
	 * booted with crash_kexec_post_notifiers (the dump is then in the
	 * crashed kernel's log, which kdump saves).
	 */
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
