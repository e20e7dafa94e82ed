// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Memory concern: the resident set size of each followed process, read
 * from its mm counters at each kmem:rss_stat event (where the kernel emits
 * one: 6.18 does for file pages, not for anonymous faults) and, from
 * bpf/sched.bpf.c, whenever one of its threads leaves a CPU or takes a
 * scheduler tick (mem_sample). Peaks per process and per (process, cycle);
 * user space samples `mem_rss` for the timeline. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "maps.bpf.h"
#include "mm.bpf.h"

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
	mem_update(&k, rss, now);
	k.cycle = current_cycle(tgid);
	if (k.cycle != IT_CYCLE_NONE)
		mem_update(&k, rss, now);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
