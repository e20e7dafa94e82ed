// SPDX-License-Identifier: BSD-2-Clause
/* The local channel between the CUPTI injection library (loaded by the CUDA
 * driver inside the target, through CUDA_INJECTION64_PATH) and the tracer.
 *
 * The injection library alone knows CUPTI's record layouts: it turns each
 * completed activity buffer into the records below and writes them, back to
 * back, on a SOCK_STREAM unix socket whose path the tracer puts in
 * IT_GPU_CHANNEL_ENV. Every record starts with struct it_gpu_hdr; `size`
 * covers the whole record, trailing name included, so a reader skips the
 * kinds it does not know. Times are CUPTI's timestamps (ns); the tracer maps
 * them to its own clock (CLOCK_MONOTONIC) from the calibration pairs. */
#ifndef INFERTRACE_GPU_CHANNEL_H
#define INFERTRACE_GPU_CHANNEL_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define IT_GPU_CHANNEL_ENV "INFERTRACE_GPU_CHANNEL" /* unix socket path */
#define IT_GPU_CUPTI_LIB_ENV "INFERTRACE_CUPTI_LIB" /* libcupti to load (a fake in tests) */
#define IT_GPU_FLUSH_MS_ENV "INFERTRACE_GPU_FLUSH_MS" /* period of the library's flushes */
/* Sampling (docs/side-data.md#sampled-activity): "full" (activity always
 * on), "auto" (on for one window in N, N from the launch rate each window
 * measured), or a number N (one window in N). Unset: full. */
#define IT_GPU_SAMPLE_ENV "INFERTRACE_GPU_SAMPLE"
#define IT_GPU_WINDOW_MS_ENV "INFERTRACE_GPU_WINDOW_MS" /* a window's length; default 1000 */
#define IT_GPU_WINDOW_MS_DEFAULT 1000
/* auto: the tracing cost each kernel adds to a launch-bound host thread
 * (2.8 us: llama.cpp's CUDA decode on an H200, docs/side-data.md), and the
 * share of the target's time it may take */
#define IT_GPU_KERNEL_COST_NS 2800
#define IT_GPU_KERNEL_COST_ENV "INFERTRACE_GPU_KERNEL_COST_NS" /* another host's measured cost */
#define IT_GPU_COST_TARGET_PCT 2.5
#define IT_GPU_SAMPLE_MAX 100

/* A sampling mode as IT_GPU_SAMPLE_ENV and --cupti give it: *every 1 for
 * "full", 0 for "auto", N for a number 1..IT_GPU_SAMPLE_MAX. 0, or -1 when
 * S is none of these. */
static inline int it_gpu_sample_parse(const char *s, uint32_t *every)
{
	char *end;
	long v;

	if (!strcmp(s, "full") || !strcmp(s, "auto")) {
		*every = s[0] == 'f';
		return 0;
	}
	v = strtol(s, &end, 10);
	if (!*s || *end || v < 1 || v > IT_GPU_SAMPLE_MAX)
		return -1;
	*every = (uint32_t)v;
	return 0;
}
#define IT_GPU_MAGIC 0x50475449u                    /* "ITGP" */
#define IT_GPU_WIRE_VERSION 2
#define IT_GPU_NAME_MAX 1024                        /* longer kernel names are cut */

enum it_gpu_kind {
	IT_GPU_HELLO = 1, /* first record of each connection */
	IT_GPU_CALIB,     /* a (CUPTI, CLOCK_MONOTONIC) timestamp pair */
	IT_GPU_KERNEL,
	IT_GPU_COPY,      /* memcpy, peer copies included */
	IT_GPU_SET,       /* memset */
	IT_GPU_API,       /* a runtime or driver call: launcher thread and time */
	IT_GPU_DROPPED,   /* records CUPTI dropped (buffers full) */
	IT_GPU_NOTICE,    /* the library stepped aside or refused: a one-line reason */
	IT_GPU_BYE,       /* the process flushed at exit: nothing more comes */
	IT_GPU_WINDOW,    /* sampling: activity turned on or off */
};

enum it_gpu_copy_dir {
	IT_GPU_DIR_OTHER = 0,
	IT_GPU_DIR_HTOD,
	IT_GPU_DIR_DTOH,
	IT_GPU_DIR_DTOD,
	IT_GPU_DIR_HTOH,
	IT_GPU_DIR_PTOP,
	IT_GPU_DIR_MAX,
};

enum it_gpu_api_domain {
	IT_GPU_API_RUNTIME = 1,
	IT_GPU_API_DRIVER = 2,
};

struct it_gpu_hdr {
	uint16_t kind;  /* enum it_gpu_kind */
	uint16_t size;  /* bytes, this header and any trailing name included */
	uint32_t pid;   /* the process the records come from */
};

struct it_gpu_hello {
	struct it_gpu_hdr h;
	uint32_t magic, wire_version;
	uint32_t cupti_version;  /* cuptiGetVersion */
	uint32_t sample_every;   /* 1: activity always on; 0: auto; N: 1 window in N */
	char cupti_path[256];    /* the libcupti that was loaded */
};

struct it_gpu_calib {
	struct it_gpu_hdr h;
	uint64_t cupti_ns;       /* cuptiGetTimestamp */
	uint64_t mono_ns;        /* CLOCK_MONOTONIC, read around it (the mean) */
};

struct it_gpu_kernel {
	struct it_gpu_hdr h;
	uint64_t start_ns, end_ns; /* CUPTI clock */
	uint32_t device, context, stream, correlation;
	uint32_t grid[3], block[3];
	uint16_t name_len;         /* bytes of name, without a NUL */
	char name[];               /* mangled, as CUPTI gives it */
};

struct it_gpu_copy {
	struct it_gpu_hdr h;
	uint64_t start_ns, end_ns;
	uint64_t bytes;
	uint32_t device, context, stream, correlation;
	uint32_t dir;              /* enum it_gpu_copy_dir (memset: 0) */
	uint32_t src_device, dst_device; /* peer copies; else device */
};

struct it_gpu_api {
	struct it_gpu_hdr h;
	uint64_t start_ns, end_ns;
	uint32_t tid;              /* system thread id (gettid) */
	uint32_t correlation;
	uint32_t cbid;             /* CUPTI's callback id of the function */
	uint32_t domain;           /* enum it_gpu_api_domain */
};

struct it_gpu_dropped {
	struct it_gpu_hdr h;
	uint64_t records;
};

/* Sent after activity was turned on (mono_ns: after cuptiActivityEnable
 * returned) and before it is turned off (before cuptiActivityDisable): an
 * op launched between the two is recorded. */
struct it_gpu_window {
	struct it_gpu_hdr h;
	uint64_t mono_ns;          /* CLOCK_MONOTONIC */
	uint32_t on;               /* 1: a window opens; 0: it closes */
	uint32_t every;            /* the N in effect: this window and N-1 off */
	uint64_t kernels;          /* closing: kernels the window recorded */
	uint64_t counted_from_ns;  /* closing: start of the span N was measured
				    * over (auto restarts it at each N = 1) */
};

struct it_gpu_notice {
	struct it_gpu_hdr h;
	uint32_t fatal;            /* 1: no activity will come from this process */
	char text[240];            /* one line, NUL-terminated */
};

#endif
