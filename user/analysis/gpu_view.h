// SPDX-License-Identifier: BSD-2-Clause
/* The GPU timeline's figures (model_gpu.h) as the report, the rules, diff
 * and the live views read them: the run's figures per device and phase,
 * the window a verdict judges, and the text report's GPU section. */
#ifndef INFERTRACE_GPU_VIEW_H
#define INFERTRACE_GPU_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"

#define GPU_VIEW_MAX_DEVICES 16

/* The figures come from CUPTI's activity records (kernels, copies, gaps). */
bool gpu_view__timeline(const struct model *m);
/* The run has GPU figures from any source (CUPTI, or NVML's busy alone). */
bool gpu_view__any(const struct model *m);

/* The figures of (device, phase) in a set; phase 0: the whole window. NULL: none. */
const struct model_gpu_figures *gpu_view__find(const struct model_gpu_figures *v, size_t n, uint32_t device,
						uint32_t phase);
/* Over the run. */
const struct model_gpu_figures *gpu_view__run(const struct model *m, uint32_t device, uint32_t phase);
/* Over one cycle. */
const struct model_gpu_figures *gpu_view__cycle(const struct model_cycle *c, uint32_t device, uint32_t phase);

/* The devices of the run's figures, ascending, at most max; their count. */
size_t gpu_view__devices(const struct model *m, uint32_t *out, size_t max);

/* The cycles with GPU figures (present); the number of cycles when none says. */
size_t gpu_view__cycles(const struct model *m);

/* The window a verdict judges on a device, summed over the cycles into sum:
 * the inference phase's figures (llm_inference, a phase named *inference*,
 * else llm_generate) when the device has them, else the whole cycles'
 * (phase 0); the lists (top kernels, idle stacks) are the run's, borrowed:
 * do not free sum. *phase: the phase id, 0 for the cycles. NULL: the
 * device has neither (no cycle with GPU figures). */
const struct model_gpu_figures *gpu_view__window(const struct model *m, uint32_t device, uint32_t *phase,
						  struct model_gpu_figures *sum);

/* A kernel's name for one line (no template arguments, parameters or
 * return type), in buf; name itself when nothing is left. */
const char *gpu_view__short_kernel(const char *name, char *buf, size_t len);

/* Copies' summed time, all directions. */
double gpu_view__copy_ms(const struct model_gpu_figures *f);
/* "HtoD", "DtoH", ... of enum it_gpu_copy_dir. */
const char *gpu_view__dir_name(unsigned int dir);
/* "8.0 MiB", "512 B": bytes for people. */
const char *gpu_view__bytes(char *buf, size_t len, uint64_t bytes);
/* A share in percent of a window, at most 100; NAN without a window. */
double gpu_view__pct(double ms, double window_ms);

/* The last ended cycle with GPU figures; NULL: none yet. */
const struct model_cycle *gpu_view__last_cycle(const struct model *m);

/* `top`'s GPU line from the last ended cycle with GPU figures, e.g. "GPU 0
 * busy 85% of 14.5 ms, 120 kernels, idle while the host ran 2.1 ms (last
 * cycle)"; "" without figures. */
void gpu_view__live_line(const struct model *m, char *buf, size_t len);

/* The text report's GPU section (nothing without GPU figures). */
void gpu_view__print(FILE *out, const struct model *m);

#endif
