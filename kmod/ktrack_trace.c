// SPDX-License-Identifier: GPL-2.0
/* Instantiates the tracepoints declared in ktrack_trace.h (once per module). */
#define CREATE_TRACE_POINTS
#include "ktrack_trace.h"
