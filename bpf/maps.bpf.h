// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Maps and configuration shared by every BPF program of infertrace. Each
 * BPF source file includes this header; the definitions are weak so the BPF
 * static linker (bpftool gen object) merges them into one map each. */
#ifndef INFERTRACE_MAPS_BPF_H
#define INFERTRACE_MAPS_BPF_H

#include "infertrace.h"

#define SHARED __attribute__((weak))

/* Set between open and load. */
SHARED const volatile __u32 cfg_follow_children = 1;
/* 1: cycles come from --cycle/--cycle-marker probes; 0: the whole run is
 * cycle 0 of each process */
SHARED const volatile __u32 cfg_cycles_from_probes = 0;
/* Set by user space: preset probes waiting for their library. While non-zero,
 * a target that maps code is stopped until user space has placed them. */
SHARED volatile __u32 pending_probes;
/* Set by user space: the library names of probes placed when a library
 * appears (presets; user probes on a library by name not loaded yet). A
 * file mapped as code whose name starts with one stops the target until
 * user space has looked at it, even once every such probe is placed
 * somewhere: llama.cpp dlopens its CPU backend's variants in turn, and the
 * one it keeps has to be probed before its first call too. */
SHARED volatile char wanted_libs[IT_WANTED_LIBS][IT_WANTED_LIB_LEN];
SHARED volatile __u32 nwanted_libs;
/* set while Python frames are walked: see stop_for_python() */
SHARED volatile __u32 pending_python;
/* Set by user space when the recording ends: every program stops counting,
 * so what is collected afterwards matches the recording's end. */
SHARED volatile __u32 recording_stopped;
/* Bumped whenever the set of followed processes changes (user space adds
 * one, a fork is followed, --comm matches, a launched command execs): a
 * verdict "not followed" cached before a change is no longer trusted. */
SHARED volatile __u32 targets_gen;

static __always_inline void targets_changed(void)
{
	__sync_fetch_and_add(&targets_gen, 1);
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct it_target);
} targets SEC(".maps") SHARED;

/* Open cycle of each followed process. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* tgid */
	__type(value, struct it_proc_state);
} procs SEC(".maps") SHARED;

/* Phase stack of each thread of a followed process. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid */
	__type(value, struct it_thread_state);
} threads SEC(".maps") SHARED;

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

/* Submit flags for frequent records (samples, phase calls, traffic): no
 * wake-up per record, since a woken consumer preempts the traced task right
 * at the event and perturbs what is measured; user space drains the ring
 * every 100 ms, and is woken early only when the ring is half full. Rare
 * records (fork, exec, mmap) are submitted with the ring's default, which
 * wakes a consumer that has read everything before them; a preset probe's
 * stop (on_mmap_exit) forces the wake-up. */
static __always_inline __u64 lazy_wakeup(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 2)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/* Every ring-buffer record starts with this header. */
static __always_inline void event_header(struct it_event_header *h, __u32 type, __u32 tgid, __u32 tid,
					 __u64 ts_ns)
{
	h->type = type;
	h->tgid = tgid;
	h->tid = tid;
	h->cpu = bpf_get_smp_processor_id();
	h->ts_ns = ts_ns;
}

static __always_inline void stat_inc(enum it_stat idx)
{
	__u32 key = idx;
	__u64 *v = bpf_map_lookup_elem(&stats, &key);

	if (v)
		*v += 1; /* per-CPU slot: no atomics needed */
}

static __always_inline void stat_add(enum it_stat idx, __u64 n)
{
	__u32 key = idx;
	__u64 *v = bpf_map_lookup_elem(&stats, &key);

	if (v)
		*v += n;
}

/* The entry of a followed process, whatever its state. */
static __always_inline struct it_target *target_entry(__u32 tgid)
{
	return bpf_map_lookup_elem(&targets, &tgid);
}

/* A followed process whose own code runs: a launched command only counts
 * from its exec on (before, it is the tracer's forked child). */
static __always_inline struct it_target *target_of(__u32 tgid)
{
	struct it_target *t;

	if (recording_stopped)
		return NULL;
	t = bpf_map_lookup_elem(&targets, &tgid);
	return t && !(t->flags & IT_TARGET_AWAIT_EXEC) ? t : NULL;
}

/* Phase of a thread and cycle of its process, as samples are tagged. */
static __always_inline __u32 current_phase(__u32 tid)
{
	struct it_thread_state *ts = bpf_map_lookup_elem(&threads, &tid);

	return ts ? ts->phase : IT_PHASE_NONE;
}

static __always_inline __u32 current_cycle(__u32 tgid)
{
	struct it_proc_state *ps = bpf_map_lookup_elem(&procs, &tgid);

	if (!cfg_cycles_from_probes)
		return 0;
	return ps ? ps->cycle : IT_CYCLE_NONE;
}

#endif
