/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ringbuf_sample.h - what read() on /dev/ringbuf_sample returns: whole
 * records, never a part of one.  Shared by the module and the reader, so
 * only fixed-width types, with explicit padding.
 */
#ifndef RINGBUF_SAMPLE_H
#define RINGBUF_SAMPLE_H

#include <linux/types.h>

struct ringbuf_record {
	__u64 seq;	/* 0, 1, 2...: every record produced gets the next one */
	__u64 time_ns;	/* ktime_get_ns() when produced (CLOCK_MONOTONIC) */
	__u64 lost;	/* records dropped so far, because the buffer was full */
	__u32 cpu;	/* CPU the timer ran on */
	__u32 pad;
};

#endif /* RINGBUF_SAMPLE_H */
