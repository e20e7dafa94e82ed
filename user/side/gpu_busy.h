// SPDX-License-Identifier: BSD-2-Clause
/* A GPU's busy time over any window, from the driver's own utilization
 * samples (NVML's nvmlDeviceGetSamples): each sample is the share of its
 * period, since the previous sample, in which a kernel ran. So a cycle of
 * 100 ms gets a GPU figure of its own though the side sampler reads once a
 * second. Used when no CUPTI activity records time the kernels. */
#ifndef INFERTRACE_GPU_BUSY_H
#define INFERTRACE_GPU_BUSY_H

#include <stdint.h>

#include "gpu_nvml.h"
#include "vec.h"

/* One sample period on the tracer's clock (CLOCK_MONOTONIC). */
struct gpu_busy_period {
	uint64_t start_ns, end_ns;
	double util_pct;
};

struct gpu_busy_series {
	VEC_OF(struct gpu_busy_period) periods; /* in time order, not overlapping */
	uint64_t last_us;       /* the newest driver timestamp taken */
	uint64_t dropped;       /* periods not kept (out of memory) */
};

/* Adds driver samples (CLOCK_REALTIME µs, oldest first) as periods ending at
 * each sample and starting at the previous one (the series' first sample
 * only marks a start). realtime_minus_mono_ns maps the driver's clock to
 * the tracer's. Samples not newer than the last one taken are skipped.
 * 0 or -ENOMEM. */
int gpu_busy__add(struct gpu_busy_series *s, const struct gpu_util_sample *smp, int n,
		  int64_t realtime_minus_mono_ns);
/* Busy ms in [start_ns, end_ns): the sum of util × overlap over the periods;
 * *covered_ms (may be NULL) the part of the window the periods cover. */
double gpu_busy__window(const struct gpu_busy_series *s, uint64_t start_ns, uint64_t end_ns,
			double *covered_ms);
void gpu_busy__free(struct gpu_busy_series *s);

#endif
