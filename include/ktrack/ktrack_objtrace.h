/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktrack_objtrace.h - API for drivers: hand an object to the ktrack object
 * tracker, which then records every hooked function it passes through.
 *
 * Both calls are safe from any context (task, softirq, hardirq; under NMI
 * they may drop and count it), never sleep and never allocate.  They act on
 * every session whose object tracker is enabled with KTRACK_OBJF_API.
 * Return: the number of sessions that now track (or stopped tracking) ptr.
 */
#ifndef _KTRACK_OBJTRACE_H
#define _KTRACK_OBJTRACE_H

int ktrack_obj_track(const void *ptr);
int ktrack_obj_untrack(const void *ptr);

#endif /* _KTRACK_OBJTRACE_H */
