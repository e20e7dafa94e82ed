// SPDX-License-Identifier: BSD-2-Clause
/* GPU activity joined to the CPU side: CUPTI's clock mapped to the
 * tracer's, each kernel, copy and memset joined to the call that launched
 * it, and so to the cycle and phase of that thread at that time; then the
 * figures per device over each cycle, each phase and the run
 * (model_gpu.h). Pure functions of the model; part of model__derive. */
#ifndef INFERTRACE_GPU_JOIN_H
#define INFERTRACE_GPU_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model.h"

/* One process's map from CUPTI's clock to CLOCK_MONOTONIC: the line
 * through its first and last calibration pairs (by CUPTI time). */
struct gpu_clock_fit {
	bool calibrated;          /* at least one pair; else the identity */
	uint64_t cupti0, mono0;   /* the first pair */
	double slope;             /* mono ns per CUPTI ns (1 with one pair) */
	struct model_gpu_clock clock;
};

void gpu_join__fit(const struct model_gpu_calib *pairs, size_t n, pid_t pid, struct gpu_clock_fit *out);
uint64_t gpu_join__map(const struct gpu_clock_fit *f, uint64_t cupti_ns);
/* Whether a runtime or driver callback id is a synchronize call. */
bool gpu_join__is_sync(uint32_t domain, uint32_t cbid);
/* The launch stack (model.names) of a launch call of thread (tgid, tid)
 * that ended at end_ns (tracer clock): its last launch event after
 * after_ns (the start of the thread's previous call; 0 for none) and up
 * to 2 µs past the end; -1 when there is none.
 * a->launches is sorted by (tgid, tid, ts_ns). */
int32_t gpu_join__launch_stack(const struct model_gpu_activity *a, pid_t tgid, pid_t tid, uint64_t after_ns,
			       uint64_t end_ns);
/* Everything: ops mapped, joined and sorted by (device, start_ns); the
 * cycles' and the run's figures; gpu.folded. Replaces what an earlier
 * call derived. 0 or -ENOMEM. */
int gpu_join__derive(struct model *m);

#endif
