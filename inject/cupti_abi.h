// SPDX-License-Identifier: BSD-2-Clause
/* The part of CUPTI's ABI the injection library uses, declared here so that
 * it builds without the CUDA toolkit. Values and layouts are CUPTI's
 * (cupti_activity.h, cupti_result.h): each record struct is the leading part
 * of CUPTI's own record, as far as the last field read, with CUPTI's packing
 * (packed, 8-byte aligned). These prefixes are the same in
 * CUpti_ActivityKernel9 / Memcpy5 / MemcpyPtoP4 / Memset4 / API of CUDA 12.9
 * Update 1 (CUPTI API version 28) and CUpti_ActivityKernel10 / Memcpy6 /
 * MemcpyPtoP4 / Memset4 / API of CUDA 13.0 (130000, 130001); the library
 * refuses other versions (IT_CUPTI_VERSION_OK). tests/fixtures/fake_cupti.c
 * writes its records with these same structs. 64-bit (LP64) only. */
#ifndef INFERTRACE_CUPTI_ABI_H
#define INFERTRACE_CUPTI_ABI_H

#include <stddef.h>
#include <stdint.h>

#define IT_CUPTI_VERSION_OK(v) ((v) == 28 || (v) == 130000 || (v) == 130001)
#define IT_CUPTI_VERSIONS "28 (CUDA 12.9 Update 1), 130000, 130001 (CUDA 13.0)"

enum {
	CUPTI_SUCCESS = 0,
	CUPTI_ERROR_MAX_LIMIT_REACHED = 12,
	CUPTI_ERROR_NOT_INITIALIZED = 15,
	CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED = 39,
};

enum {
	CUPTI_ACTIVITY_KIND_MEMCPY = 1,
	CUPTI_ACTIVITY_KIND_MEMSET = 2,
	CUPTI_ACTIVITY_KIND_DRIVER = 4,
	CUPTI_ACTIVITY_KIND_RUNTIME = 5,
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL = 10,
	CUPTI_ACTIVITY_KIND_MEMCPY2 = 22,
};

/* CUpti_ActivityMemcpyKind */
enum {
	CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN = 0,
	CUPTI_ACTIVITY_MEMCPY_KIND_HTOD = 1,
	CUPTI_ACTIVITY_MEMCPY_KIND_DTOH = 2,
	CUPTI_ACTIVITY_MEMCPY_KIND_HTOA = 3,
	CUPTI_ACTIVITY_MEMCPY_KIND_ATOH = 4,
	CUPTI_ACTIVITY_MEMCPY_KIND_ATOA = 5,
	CUPTI_ACTIVITY_MEMCPY_KIND_ATOD = 6,
	CUPTI_ACTIVITY_MEMCPY_KIND_DTOA = 7,
	CUPTI_ACTIVITY_MEMCPY_KIND_DTOD = 8,
	CUPTI_ACTIVITY_MEMCPY_KIND_HTOH = 9,
	CUPTI_ACTIVITY_MEMCPY_KIND_PTOP = 10,
};

#define CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM 1
#define CUPTI_ACTIVITY_FLAG_FLUSH_FORCED 1u

/* the driver callback ids the fake driver reports (cupti_driver_cbid.h) */
enum {
	IT_CBID_cuCtxSynchronize = 17,
	IT_CBID_cuStreamSynchronize = 126,
	IT_CBID_cuMemsetD8_v2 = 249,
	IT_CBID_cuMemcpyHtoD_v2 = 276,
	IT_CBID_cuMemcpyDtoH_v2 = 278,
	IT_CBID_cuLaunchKernel = 307,
	IT_CBID_cuMemcpyPeer = 318,
	IT_CBID_cuLaunchKernelEx = 652,
};

#define IT_CUPTI_PACKED __attribute__((packed, aligned(8)))

typedef struct IT_CUPTI_PACKED {
	uint32_t kind;
} cupti_activity;

/* CUpti_ActivityKernel9/10 up to name */
typedef struct IT_CUPTI_PACKED {
	uint32_t kind;
	uint8_t cache_config, shared_memory_config;
	uint16_t registers_per_thread;
	uint32_t pgc_requested, pgc_executed;
	uint64_t start, end, completed;
	uint32_t device, context, stream;
	int32_t grid[3], block[3];
	int32_t static_shared, dynamic_shared;
	uint32_t local_per_thread, local_total;
	uint32_t correlation;
	int64_t grid_id;
	const char *name;
} cupti_kernel;

/* CUpti_ActivityMemcpy5/6 up to correlationId */
typedef struct IT_CUPTI_PACKED {
	uint32_t kind;
	uint8_t copy_kind, src_kind, dst_kind, flags;
	uint64_t bytes, start, end;
	uint32_t device, context, stream, correlation;
} cupti_memcpy;

/* CUpti_ActivityMemcpyPtoP4 up to correlationId */
typedef struct IT_CUPTI_PACKED {
	uint32_t kind;
	uint8_t copy_kind, src_kind, dst_kind, flags;
	uint64_t bytes, start, end;
	uint32_t device, context, stream;
	uint32_t src_device, src_context, dst_device, dst_context;
	uint32_t correlation;
} cupti_memcpy_p2p;

/* CUpti_ActivityMemset4 up to correlationId */
typedef struct IT_CUPTI_PACKED {
	uint32_t kind;
	uint32_t value;
	uint64_t bytes, start, end;
	uint32_t device, context, stream, correlation;
} cupti_memset;

/* CUpti_ActivityAPI, whole */
typedef struct IT_CUPTI_PACKED {
	uint32_t kind;
	uint32_t cbid;
	uint64_t start, end;
	uint32_t process, thread, correlation, return_value;
} cupti_api;

_Static_assert(offsetof(cupti_kernel, start) == 16, "CUpti_ActivityKernel.start");
_Static_assert(offsetof(cupti_kernel, device) == 40, "CUpti_ActivityKernel.deviceId");
_Static_assert(offsetof(cupti_kernel, correlation) == 92, "CUpti_ActivityKernel.correlationId");
_Static_assert(offsetof(cupti_kernel, name) == 104, "CUpti_ActivityKernel.name");
_Static_assert(offsetof(cupti_memcpy, correlation) == 44, "CUpti_ActivityMemcpy.correlationId");
_Static_assert(offsetof(cupti_memcpy_p2p, correlation) == 60, "CUpti_ActivityMemcpyPtoP.correlationId");
_Static_assert(offsetof(cupti_memset, correlation) == 44, "CUpti_ActivityMemset.correlationId");
_Static_assert(offsetof(cupti_api, correlation) == 32, "CUpti_ActivityAPI.correlationId");

typedef int cupti_result;
typedef void (*cupti_buffer_requested_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*cupti_buffer_completed_fn)(void *ctx, uint32_t stream, uint8_t *buffer, size_t size,
					  size_t valid);

/* the entry points, by their CUPTI names */
typedef cupti_result (*cuptiGetVersion_fn)(uint32_t *version);
typedef cupti_result (*cuptiGetTimestamp_fn)(uint64_t *ts);
typedef cupti_result (*cuptiSetThreadIdType_fn)(int type);
typedef cupti_result (*cuptiActivityRegisterCallbacks_fn)(cupti_buffer_requested_fn req,
							   cupti_buffer_completed_fn done);
typedef cupti_result (*cuptiActivityEnable_fn)(uint32_t kind);
typedef cupti_result (*cuptiActivityDisable_fn)(uint32_t kind);
typedef cupti_result (*cuptiActivityGetNextRecord_fn)(uint8_t *buffer, size_t valid, cupti_activity **record);
typedef cupti_result (*cuptiActivityGetNumDroppedRecords_fn)(void *ctx, uint32_t stream, size_t *dropped);
typedef cupti_result (*cuptiActivityFlushAll_fn)(uint32_t flag);

#endif
