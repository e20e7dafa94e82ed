// SPDX-License-Identifier: BSD-2-Clause
#include "gpu_nvml.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The subset of nvml.h used here, with its ABI: enums are int-sized,
 * handles are opaque pointers. */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
/* what nvmlDeviceGetComputeRunningProcesses (v1) fills */
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; } nvmlProcessInfo_v1_t;
/* what the _v2 and _v3 entry points fill (nvmlProcessInfo_t since CUDA 11) */
typedef struct {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t;

/* nvmlDeviceGetSamples: the value is a union of 8 bytes; utilization
 * samples are unsigned ints (NVML_VALUE_TYPE_UNSIGNED_INT) */
typedef union { double d; unsigned int ui; unsigned long ul; unsigned long long ull; long long sll; } nvmlValue_t;
typedef struct { unsigned long long timeStamp; nvmlValue_t sampleValue; } nvmlSample_t;

#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_FOUND 6
#define NVML_GPU_UTILIZATION_SAMPLES 1
#define NVML_VALUE_TYPE_DOUBLE 0
#define NVML_VALUE_TYPE_UNSIGNED_INT 1
#define NVML_VALUE_TYPE_UNSIGNED_LONG 2
#define NVML_VALUE_TYPE_UNSIGNED_LONG_LONG 3
#define MAX_UTIL_SAMPLES 1024
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_TEMPERATURE_GPU 0
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)
#define NVML_NAME_LEN 96 /* NVML_DEVICE_NAME_V2_BUFFER_SIZE */
#define MAX_GPUS 16
#define MAX_PROCS 256

struct gpu_nvml {
	void *lib;
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	nvmlReturn_t (*get_count)(unsigned int *);
	nvmlReturn_t (*get_handle)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*get_name)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*get_util)(nvmlDevice_t, nvmlUtilization_t *);
	nvmlReturn_t (*get_mem)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*get_temp)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*get_power)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*get_clock)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*get_max_clock)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*get_reasons)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*get_energy)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*get_procs_v2)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_v2_t *);
	nvmlReturn_t (*get_procs_v1)(nvmlDevice_t, unsigned int *, nvmlProcessInfo_v1_t *);
	nvmlReturn_t (*get_samples)(nvmlDevice_t, int, unsigned long long, int *, unsigned int *, nvmlSample_t *);
	const char *(*error_string)(nvmlReturn_t);
	int count;
	nvmlDevice_t dev[MAX_GPUS];
	char name[MAX_GPUS][NVML_NAME_LEN];
	/* scratch for the process lists, so no allocation per sample */
	nvmlProcessInfo_v2_t procs2[MAX_PROCS];
	nvmlProcessInfo_v1_t procs1[MAX_PROCS];
	nvmlSample_t samples[MAX_UTIL_SAMPLES];
};

void gpu_reading__clear(struct gpu_reading *r)
{
	r->util_pct = r->mem_util_pct = r->mem_used_mb = r->mem_total_mb = NAN;
	r->temp_c = r->power_w = r->sm_mhz = r->mem_mhz = r->max_sm_mhz = NAN;
	r->reasons = r->proc_mem_mb = NAN;
}

static void *sym(void *lib, const char *a, const char *b)
{
	void *p = dlsym(lib, a);

	if (!p && b)
		p = dlsym(lib, b);
	return p;
}

static const char *errstr(const struct gpu_nvml *g, nvmlReturn_t rc, char *buf, size_t len)
{
	const char *s = g->error_string ? g->error_string(rc) : NULL;

	snprintf(buf, len, "%s (%d)", s ? s : "error", rc);
	return buf;
}

struct gpu_nvml *gpu_nvml__open(char *reason, size_t reason_len)
{
	const char *libname = getenv("INFERTRACE_NVML_LIB");
	char ebuf[128];
	struct gpu_nvml *g;
	unsigned int n = 0;
	nvmlReturn_t rc;

	if (!libname || !*libname)
		libname = "libnvidia-ml.so.1";
	g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(reason, reason_len, "out of memory");
		return NULL;
	}
	g->lib = dlopen(libname, RTLD_NOW | RTLD_LOCAL);
	if (!g->lib) {
		const char *e = dlerror();

		snprintf(reason, reason_len, "NVML not available: %s", e ? e : libname);
		free(g);
		return NULL;
	}
	/* the _v2 names exist since driver 325; older drivers only have the plain ones */
	g->init = sym(g->lib, "nvmlInit_v2", "nvmlInit");
	g->shutdown = sym(g->lib, "nvmlShutdown", NULL);
	g->get_count = sym(g->lib, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	g->get_handle = sym(g->lib, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
	g->get_name = sym(g->lib, "nvmlDeviceGetName", NULL);
	g->get_util = sym(g->lib, "nvmlDeviceGetUtilizationRates", NULL);
	g->get_mem = sym(g->lib, "nvmlDeviceGetMemoryInfo", NULL);
	g->get_temp = sym(g->lib, "nvmlDeviceGetTemperature", NULL);
	g->get_power = sym(g->lib, "nvmlDeviceGetPowerUsage", NULL);
	g->get_clock = sym(g->lib, "nvmlDeviceGetClockInfo", NULL);
	g->get_max_clock = sym(g->lib, "nvmlDeviceGetMaxClockInfo", NULL);
	g->get_reasons = sym(g->lib, "nvmlDeviceGetCurrentClocksEventReasons",
			     "nvmlDeviceGetCurrentClocksThrottleReasons");
	/* Volta and later; millijoules since the driver was loaded */
	g->get_energy = sym(g->lib, "nvmlDeviceGetTotalEnergyConsumption", NULL);
	g->get_samples = sym(g->lib, "nvmlDeviceGetSamples", NULL);
	g->get_procs_v2 = sym(g->lib, "nvmlDeviceGetComputeRunningProcesses_v3",
			      "nvmlDeviceGetComputeRunningProcesses_v2");
	if (!g->get_procs_v2)
		g->get_procs_v1 = sym(g->lib, "nvmlDeviceGetComputeRunningProcesses", NULL);
	g->error_string = sym(g->lib, "nvmlErrorString", NULL);
	if (!g->init || !g->get_count || !g->get_handle) {
		snprintf(reason, reason_len, "NVML not usable: %s lacks nvmlInit/nvmlDeviceGetCount", libname);
		goto fail;
	}
	rc = g->init();
	if (rc != NVML_SUCCESS) {
		snprintf(reason, reason_len, "NVML init failed: %s", errstr(g, rc, ebuf, sizeof(ebuf)));
		goto fail;
	}
	rc = g->get_count(&n);
	if (rc != NVML_SUCCESS || n == 0) {
		snprintf(reason, reason_len, "no NVIDIA GPU: %s",
			 rc ? errstr(g, rc, ebuf, sizeof(ebuf)) : "NVML reports 0 devices");
		if (g->shutdown)
			g->shutdown();
		goto fail;
	}
	for (unsigned int i = 0; i < n && g->count < MAX_GPUS; i++) {
		nvmlDevice_t d;

		if (g->get_handle(i, &d) != NVML_SUCCESS)
			continue;
		g->dev[g->count] = d;
		if (!g->get_name || g->get_name(d, g->name[g->count], NVML_NAME_LEN) != NVML_SUCCESS)
			snprintf(g->name[g->count], NVML_NAME_LEN, "GPU %u", i);
		g->name[g->count][NVML_NAME_LEN - 1] = '\0';
		g->count++;
	}
	if (g->count == 0) {
		snprintf(reason, reason_len, "no NVIDIA GPU: no device handle could be opened");
		if (g->shutdown)
			g->shutdown();
		goto fail;
	}
	return g;
fail:
	dlclose(g->lib);
	free(g);
	return NULL;
}

void gpu_nvml__close(struct gpu_nvml *g)
{
	if (!g)
		return;
	if (g->shutdown)
		g->shutdown();
	dlclose(g->lib);
	free(g);
}

int gpu_nvml__count(const struct gpu_nvml *g)
{
	return g ? g->count : 0;
}

const char *gpu_nvml__name(const struct gpu_nvml *g, int idx)
{
	return g && idx >= 0 && idx < g->count ? g->name[idx] : NULL;
}

static bool pid_wanted(const pid_t *pids, int npids, unsigned int pid)
{
	for (int i = 0; i < npids; i++)
		if ((unsigned int)pids[i] == pid)
			return true;
	return false;
}

static void add_proc(struct gpu_reading *r, struct gpu_proc_mem *procs, int *n, int cap,
		     unsigned int pid, unsigned long long used)
{
	/* NVML reports NOT_AVAILABLE per process under some virtualization modes */
	double mb = used == NVML_VALUE_NOT_AVAILABLE ? NAN : used / (1024.0 * 1024.0);

	if (!isnan(mb))
		r->proc_mem_mb = (isnan(r->proc_mem_mb) ? 0 : r->proc_mem_mb) + mb;
	if (procs && *n < cap) {
		procs[*n].pid = (pid_t)pid;
		procs[*n].used_mb = mb;
		(*n)++;
	}
}

int gpu_nvml__read(struct gpu_nvml *g, int idx, const pid_t *pids, int npids,
		   struct gpu_reading *r, struct gpu_proc_mem *procs, int *nprocs)
{
	nvmlUtilization_t u;
	nvmlMemory_t m;
	unsigned int v, cnt;
	unsigned long long reasons;
	nvmlDevice_t d;
	int cap = nprocs ? *nprocs : 0, np = 0;

	gpu_reading__clear(r);
	if (nprocs)
		*nprocs = 0;
	if (!g || idx < 0 || idx >= g->count)
		return -ENODEV;
	d = g->dev[idx];
	if (g->get_util && g->get_util(d, &u) == NVML_SUCCESS) {
		r->util_pct = u.gpu;
		r->mem_util_pct = u.memory;
	}
	if (g->get_mem && g->get_mem(d, &m) == NVML_SUCCESS) {
		r->mem_used_mb = m.used / (1024.0 * 1024.0);
		r->mem_total_mb = m.total / (1024.0 * 1024.0);
	}
	if (g->get_temp && g->get_temp(d, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS)
		r->temp_c = v;
	if (g->get_power && g->get_power(d, &v) == NVML_SUCCESS)
		r->power_w = v / 1000.0; /* milliwatts */
	if (g->get_clock && g->get_clock(d, NVML_CLOCK_SM, &v) == NVML_SUCCESS)
		r->sm_mhz = v;
	if (g->get_clock && g->get_clock(d, NVML_CLOCK_MEM, &v) == NVML_SUCCESS)
		r->mem_mhz = v;
	if (g->get_max_clock && g->get_max_clock(d, NVML_CLOCK_SM, &v) == NVML_SUCCESS && v)
		r->max_sm_mhz = v;
	if (g->get_reasons && g->get_reasons(d, &reasons) == NVML_SUCCESS)
		r->reasons = (double)reasons;
	if (npids > 0 && g->get_procs_v2) {
		cnt = MAX_PROCS;
		if (g->get_procs_v2(d, &cnt, g->procs2) == NVML_SUCCESS)
			for (unsigned int i = 0; i < cnt && i < MAX_PROCS; i++)
				if (pid_wanted(pids, npids, g->procs2[i].pid))
					add_proc(r, procs, &np, cap, g->procs2[i].pid, g->procs2[i].usedGpuMemory);
	} else if (npids > 0 && g->get_procs_v1) {
		cnt = MAX_PROCS;
		if (g->get_procs_v1(d, &cnt, g->procs1) == NVML_SUCCESS)
			for (unsigned int i = 0; i < cnt && i < MAX_PROCS; i++)
				if (pid_wanted(pids, npids, g->procs1[i].pid))
					add_proc(r, procs, &np, cap, g->procs1[i].pid, g->procs1[i].usedGpuMemory);
	}
	if (nprocs)
		*nprocs = np;
	return 0;
}

int gpu_nvml__energy_mj(struct gpu_nvml *g, int idx, unsigned long long *mj, char *why, size_t whylen)
{
	char ebuf[128];
	nvmlReturn_t rc;

	if (!g || idx < 0 || idx >= g->count)
		return -ENODEV;
	if (!g->get_energy) {
		if (why)
			snprintf(why, whylen, "this NVML has no nvmlDeviceGetTotalEnergyConsumption");
		return -EOPNOTSUPP;
	}
	rc = g->get_energy(g->dev[idx], mj);
	if (rc != NVML_SUCCESS) {
		if (why)
			snprintf(why, whylen, "nvmlDeviceGetTotalEnergyConsumption: %s", errstr(g, rc, ebuf, sizeof(ebuf)));
		return -EOPNOTSUPP;
	}
	return 0;
}

static double sample_value(int type, const nvmlValue_t *v)
{
	switch (type) {
	case NVML_VALUE_TYPE_DOUBLE: return v->d;
	case NVML_VALUE_TYPE_UNSIGNED_INT: return v->ui;
	case NVML_VALUE_TYPE_UNSIGNED_LONG: return (double)v->ul;
	case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return (double)v->ull;
	default: return NAN;
	}
}

int gpu_nvml__util_samples(struct gpu_nvml *g, int idx, uint64_t last_us, struct gpu_util_sample *out, int max,
			   char *why, size_t whylen)
{
	unsigned int n = MAX_UTIL_SAMPLES;
	int type = NVML_VALUE_TYPE_UNSIGNED_INT, k = 0;
	char ebuf[128];
	nvmlReturn_t rc;

	if (idx < 0 || idx >= g->count)
		return -ENODEV;
	if (!g->get_samples) {
		snprintf(why, whylen, "this NVML has no nvmlDeviceGetSamples");
		return -EOPNOTSUPP;
	}
	rc = g->get_samples(g->dev[idx], NVML_GPU_UTILIZATION_SAMPLES, last_us, &type, &n, g->samples);
	if (rc == NVML_ERROR_NOT_FOUND)
		return 0; /* nothing newer */
	if (rc != NVML_SUCCESS) {
		snprintf(why, whylen, "nvmlDeviceGetSamples: %s", errstr(g, rc, ebuf, sizeof(ebuf)));
		return -EOPNOTSUPP;
	}
	if (n > MAX_UTIL_SAMPLES)
		n = MAX_UTIL_SAMPLES;
	/* the driver's buffer is a ring: keep the newer ones, oldest first */
	for (unsigned int i = 0; i < n; i++) {
		double v = sample_value(type, &g->samples[i].sampleValue);

		if (g->samples[i].timeStamp <= last_us || isnan(v) || v < 0 || v > 100)
			continue;
		if (k == max)
			break;
		out[k].ts_us = g->samples[i].timeStamp;
		out[k].util_pct = v;
		k++;
	}
	for (int i = 1; i < k; i++) { /* insertion sort: nearly in order already */
		struct gpu_util_sample t = out[i];
		int j = i - 1;

		for (; j >= 0 && out[j].ts_us > t.ts_us; j--)
			out[j + 1] = out[j];
		out[j + 1] = t;
	}
	return k;
}
