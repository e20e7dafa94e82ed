// SPDX-License-Identifier: BSD-2-Clause
/* trace.json's GPU tracks: the kernels, copies and memsets of the GPU
 * timeline (model.gpu_activity.ops), beside the CPU threads. */
#ifndef INFERTRACE_TRACE_GPU_H
#define INFERTRACE_TRACE_GPU_H

#include <stdio.h>

#include "model.h"

/* GPU d's track is the process TRACE_GPU_PID_BASE + d: above any pid
 * (pid_max is at most 2^22), so it never takes a target's track. */
#define TRACE_GPU_PID_BASE (1 << 24)

/* Per device a process "GPU d", per stream a thread "stream s" (sorted by
 * device and stream, after the CPU processes); each op a complete event
 * ("X", cat "gpu") named by its kernel, "memcpy HtoD 8.0 MiB" or
 * "memset 1.0 KiB", args {correlation, launch_tid, cycle, phase, bytes,
 * duration_us}; and a flow ("s" on the launching thread at the launch, "f"
 * on the op) where the launch is known. Times are whole microseconds since
 * the start, each track's ops in order and never overlapping (a later one
 * starts where the earlier ended: args.clipped). Each event after *sep. */
void trace_gpu__write(const struct model *m, FILE *f, const char **sep);

#endif
