// SPDX-License-Identifier: GPL-2.0
/* Memory concern: the resident set size of each followed process, updated
 * at every change of its mm counters (kmem:rss_stat), with its peak per
 * process and per (process, cycle). User space samples `mem_rss` for the
 * timeline. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "maps.bpf.h"
#include "mm.bpf.h"

/* (tgid, IT_CYCLE_NONE): the whole process; (tgid, cycle): one cycle. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, struct it_mem_key);
	__type(value, struct it_mem_value);
} mem_rss SEC(".maps");

static __always_inline void update(struct it_mem_key *k, __u64 rss, __u64 now)
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

SEC("raw_tp/rss_stat")
int mem_on_rss_stat(struct bpf_raw_tracepoint_args *ctx)
{
	struct mm_struct *mm = (struct mm_struct *)ctx->args[0];
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct it_mem_key k = { .tgid = tgid, .cycle = IT_CYCLE_NONE };
	__u64 rss, now;

	/* only changes made by the process itself (faults, munmap, exit);
	 * reclaim by kswapd shows at the process's next own change */
	if (!tgid || BPF_CORE_READ(task, mm) != mm || !target_of(tgid))
		return 0;
	rss = mm_rss_bytes(mm);
	now = bpf_ktime_get_ns();
	update(&k, rss, now);
	k.cycle = current_cycle(tgid);
	if (k.cycle != IT_CYCLE_NONE)
		update(&k, rss, now);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
