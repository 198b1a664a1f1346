/* SPDX-License-Identifier: GPL-2.0 */
/*
 * instrumented_driver_sample.h - the request object and the functions a
 * request goes through.
 *
 * The functions are noinline and global (declared here) on purpose: an
 * inlined function has no entry to hook, and gcc may rewrite a static
 * function's arguments (".isra"/".constprop" clones that pass req->len
 * instead of req), after which neither a probe's $arg1 nor the object
 * tracker would see the request's address.  noinline alone does not
 * prevent such clones; external linkage does.
 */
#ifndef _INSTRUMENTED_DRIVER_SAMPLE_H
#define _INSTRUMENTED_DRIVER_SAMPLE_H

#include <linux/types.h>
#include <linux/workqueue.h>

/* Payloads up to this size are handled in place; longer ones are not. */
#define DEMO_INLINE_MAX		64
#define DEMO_MAX_PAYLOAD	256

/* The ktrack_emit() id of our completion records: "drv1". */
#define DEMO_EMIT_ID		0x31767264

struct demo_req {
	u32 id;			/* sequence number, from 1 */
	u32 len;		/* payload bytes */
	u64 queued_ns;		/* ktime_get_ns() at write() */
	u32 csum;		/* computed by demo_drv_checksum() */
	u32 flags;		/* DEMO_REQ_* */
	struct work_struct work;
	u8 payload[];
};

#define DEMO_REQ_BOUNCED	0x1	/* went through demo_drv_bounce() */

/* What one completion emits through ktrack_emit(). */
struct demo_emit_rec {
	u32 id;
	u32 len;
	u64 latency_ns;		/* write() to completion */
};

void demo_drv_submit(struct demo_req *req);
void demo_drv_handle(struct demo_req *req);
void demo_drv_checksum(struct demo_req *req);
void demo_drv_bounce(struct demo_req *req);
void demo_drv_complete(struct demo_req *req);

#endif /* _INSTRUMENTED_DRIVER_SAMPLE_H */
