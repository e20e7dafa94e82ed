// SPDX-License-Identifier: BSD-2-Clause
/* NVIDIA GPUs through NVML, loaded with dlopen at run time.
 *
 * The library is INFERTRACE_NVML_LIB when set, else "libnvidia-ml.so.1"; no
 * NVML header or library is needed to build. The few NVML types used are
 * declared in gpu_nvml.c with the ABI of nvml.h. */
#ifndef INFERTRACE_GPU_NVML_H
#define INFERTRACE_GPU_NVML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* nvmlClocksThrottleReason* bits (nvml.h; renamed nvmlClocksEventReason* in
 * CUDA 12.2 with the same values). */
#define NVML_REASON_GPU_IDLE            0x0000000000000001ULL
#define NVML_REASON_APP_CLOCKS_SETTING  0x0000000000000002ULL
#define NVML_REASON_SW_POWER_CAP        0x0000000000000004ULL
#define NVML_REASON_HW_SLOWDOWN         0x0000000000000008ULL
#define NVML_REASON_SYNC_BOOST          0x0000000000000010ULL
#define NVML_REASON_SW_THERMAL          0x0000000000000020ULL
#define NVML_REASON_HW_THERMAL          0x0000000000000040ULL
#define NVML_REASON_HW_POWER_BRAKE      0x0000000000000080ULL
#define NVML_REASON_DISPLAY_CLOCKS      0x0000000000000100ULL

/* One reading of one GPU; NAN where the backend has no value. */
struct gpu_reading {
	double util_pct;
	double mem_util_pct;
	double mem_used_mb;
	double mem_total_mb;
	double temp_c;
	double power_w;
	double sm_mhz;
	double mem_mhz;
	double max_sm_mhz;
	double reasons;        /* bit mask, NAN when unknown */
	double proc_mem_mb;    /* sum over the matched pids, NAN when none matched */
};

/* One of the driver's utilization samples: the share of the period since
 * its previous sample in which a kernel ran on the device. */
struct gpu_util_sample {
	uint64_t ts_us;        /* the driver's timestamp: CLOCK_REALTIME, µs */
	double util_pct;
};

/* Per-process GPU memory seen in one reading. */
struct gpu_proc_mem {
	pid_t pid;
	double used_mb;
};

void gpu_reading__clear(struct gpu_reading *r);

struct gpu_nvml;

/* Loads and initializes NVML. On failure returns NULL and writes why into
 * reason (library missing, nvmlInit failed, no device). */
struct gpu_nvml *gpu_nvml__open(char *reason, size_t reason_len);
void gpu_nvml__close(struct gpu_nvml *g); /* accepts NULL; calls nvmlShutdown */
int gpu_nvml__count(const struct gpu_nvml *g);
const char *gpu_nvml__name(const struct gpu_nvml *g, int idx);
/* Reads device idx. pids (may be NULL) select the processes whose GPU memory
 * is summed into r->proc_mem_mb and listed in procs (up to *nprocs entries;
 * *nprocs is set to the number written). 0, or -ENODEV for a bad index. */
int gpu_nvml__read(struct gpu_nvml *g, int idx, const pid_t *pids, int npids,
		   struct gpu_reading *r, struct gpu_proc_mem *procs, int *nprocs);
/* The device's utilization samples newer than last_us (0: all the driver
 * holds), oldest first, at most max. The count (0: none new), or
 * -EOPNOTSUPP when the driver keeps no samples (why filled in). */
int gpu_nvml__util_samples(struct gpu_nvml *g, int idx, uint64_t last_us, struct gpu_util_sample *out, int max,
			   char *why, size_t whylen);
/* The device's total-energy counter in millijoules (Volta and later). 0, or
 * -EOPNOTSUPP with why filled in (no such call, or the GPU lacks it). */
int gpu_nvml__energy_mj(struct gpu_nvml *g, int idx, unsigned long long *mj, char *why, size_t whylen);

#endif
