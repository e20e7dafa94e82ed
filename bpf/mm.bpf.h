// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Resident set size of an mm, read with CO-RE from its counters. */
#ifndef INFERTRACE_MM_BPF_H
#define INFERTRACE_MM_BPF_H

#include <bpf/bpf_core_read.h>

/* Set by user space: sysconf(_SC_PAGESIZE). */
SHARED const volatile __u64 cfg_page_size = 4096;

/* NR_MM_COUNTERS slots: MM_FILEPAGES, MM_ANONPAGES, MM_SWAPENTS, MM_SHMEMPAGES */
#define IT_MM_FILEPAGES 0
#define IT_MM_ANONPAGES 1
#define IT_MM_SHMEMPAGES 3

/* Before 6.2 (f1a7941243c1 "mm: convert mm's rss stats into
 * percpu_counter") the counters were atomics in struct mm_rss_stat. */
struct mm_rss_stat___pre62 {
	atomic_long_t count[4];
} __attribute__((preserve_access_index));

struct mm_struct___pre62 {
	struct mm_rss_stat___pre62 rss_stat;
} __attribute__((preserve_access_index));

static __always_inline __s64 mm_counter(struct mm_struct *mm, int i)
{
	if (bpf_core_type_exists(struct mm_rss_stat___pre62))
		return BPF_CORE_READ((struct mm_struct___pre62 *)mm, rss_stat.count[i].counter);
	/* the shared count: per-CPU deltas below the batch size are not in it */
	return BPF_CORE_READ(mm, rss_stat[i].count);
}

static __always_inline __u64 mm_rss_bytes(struct mm_struct *mm)
{
	__s64 pages;

	if (!mm)
		return 0;
	pages = mm_counter(mm, IT_MM_FILEPAGES) + mm_counter(mm, IT_MM_ANONPAGES) +
		mm_counter(mm, IT_MM_SHMEMPAGES);
	return pages > 0 ? pages * cfg_page_size : 0;
}

/* (tgid, IT_CYCLE_NONE): the whole process; (tgid, cycle): one cycle. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct it_mem_key);
	__type(value, struct it_mem_value);
} mem_rss SEC(".maps") SHARED;

static __always_inline void mem_update(struct it_mem_key *k, __u64 rss, __u64 now)
{
	struct it_mem_value *v = bpf_map_lookup_elem(&mem_rss, k), init = {};

	if (!v) {
		init.rss_bytes = init.peak_bytes = init.first_bytes = rss;
		init.updates = 1;
		init.last_ns = now;
		if (bpf_map_update_elem(&mem_rss, k, &init, BPF_NOEXIST) == 0)
			return;
		v = bpf_map_lookup_elem(&mem_rss, k);
		if (!v) {
			stat_inc(IT_STAT_SCHED_LOST);
			return;
		}
	}
	/* racy by design: two CPUs of one process updating at the same
	 * instant can lose one of two nearby values, never the trend */
	v->rss_bytes = rss;
	if (rss > v->peak_bytes)
		v->peak_bytes = rss;
	v->updates++;
	v->last_ns = now;
}

/* RSS of a running task's process, for its process and current cycle. */
static __always_inline void mem_sample(struct task_struct *task, __u32 tgid, __u32 cycle, __u64 now)
{
	struct it_mem_key k = { .tgid = tgid, .cycle = IT_CYCLE_NONE };
	struct mm_struct *mm = BPF_CORE_READ(task, mm);
	__u64 rss;

	if (!mm)
		return;
	rss = mm_rss_bytes(mm);
	mem_update(&k, rss, now);
	if (cycle != IT_CYCLE_NONE) {
		k.cycle = cycle;
		mem_update(&k, rss, now);
	}
}

#endif
