/* Maps and configuration shared by every BPF program of infertrace. Each
 * BPF source file includes this header; the definitions are weak so the BPF
 * static linker (bpftool gen object) merges them into one map each. */
#ifndef INFERTRACE_MAPS_BPF_H
#define INFERTRACE_MAPS_BPF_H

#include "infertrace.h"

#define SHARED __attribute__((weak))

/* Set between open and load. */
SHARED const volatile __u32 cfg_follow_children = 1;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct it_target);
} targets SEC(".maps") SHARED;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, IT_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps") SHARED;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps") SHARED;

#endif
