// SPDX-License-Identifier: BSD-2-Clause
/* What the CUDA calls counted (--preset cuda, the cuda concern): each
 * cycle's totals (cycles[i].cuda) and the run's with its launch stacks and
 * probed libraries (gpu.cuda). Written and loaded by
 * outputs/profile_cuda.c. A part of model.h: include model.h. */
#ifndef INFERTRACE_MODEL_CUDA_H
#define INFERTRACE_MODEL_CUDA_H

#include <stdbool.h>
#include <stdint.h>

#include "vec.h"

struct model_cuda_totals {
	bool present;
	uint64_t kernel_launches, graph_launches, memcpy_calls, memcpy_bytes, sync_calls;
	double sync_wait_ms;
};

struct model_cuda {
	struct model_cuda_totals totals; /* present: the concern ran */
	/* the launches' host stacks: Python or native, and those not kept */
	struct {
		uint64_t python, native, not_kept, copies, reused;
	} launch_stacks;
	VEC_OF(int32_t) libraries;       /* paths in model.names */
	uint64_t functions_probed;
};

#endif
