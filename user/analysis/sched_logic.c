// SPDX-License-Identifier: BSD-2-Clause
#include <math.h>
#include <string.h>

#include "sched_logic.h"

const char *const blocked_class_names[BLOCKED_NCLASSES] = { "sleep", "io", "lock", "other", "gpu_sync",
								    "waiting_for_thread" };

static int has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static int frame_class(const char *f)
{
	static const struct {
		const char *prefix;
		enum blocked_class cls;
	} rules[] = {
		{ "futex_", BLOCKED_LOCK }, { "__futex", BLOCKED_LOCK },
		{ "do_futex", BLOCKED_LOCK }, { "mutex_lock", BLOCKED_LOCK },
		{ "__mutex_lock", BLOCKED_LOCK }, { "rwsem_down", BLOCKED_LOCK },
		{ "down_read", BLOCKED_LOCK }, { "down_write", BLOCKED_LOCK },
		{ "rt_mutex", BLOCKED_LOCK },
		{ "do_nanosleep", BLOCKED_SLEEP }, { "hrtimer_nanosleep", BLOCKED_SLEEP },
		{ "common_nsleep", BLOCKED_SLEEP }, { "__x64_sys_nanosleep", BLOCKED_SLEEP },
		{ "__x64_sys_clock_nanosleep", BLOCKED_SLEEP }, { "__arm64_sys_nanosleep", BLOCKED_SLEEP },
		{ "__arm64_sys_clock_nanosleep", BLOCKED_SLEEP }, { "msleep", BLOCKED_SLEEP },
		{ "__x64_sys_pause", BLOCKED_SLEEP }, { "sys_pause", BLOCKED_SLEEP },
		{ "io_schedule", BLOCKED_IO }, { "blk_", BLOCKED_IO }, { "bit_wait_io", BLOCKED_IO },
		{ "folio_wait", BLOCKED_IO }, { "wait_on_page", BLOCKED_IO },
		{ "__lock_page", BLOCKED_IO }, { "__folio_lock", BLOCKED_IO },
		{ "filemap_", BLOCKED_IO }, { "jbd2_", BLOCKED_IO }, { "ext4_", BLOCKED_IO },
		{ "xfs_", BLOCKED_IO }, { "nfs_", BLOCKED_IO }, { "pipe_read", BLOCKED_IO },
		{ "pipe_write", BLOCKED_IO }, { "pipe_wait", BLOCKED_IO },
		{ "sk_wait_data", BLOCKED_IO }, { "tcp_recvmsg", BLOCKED_IO },
		{ "unix_stream_read", BLOCKED_IO }, { "unix_dgram_recvmsg", BLOCKED_IO },
		{ "inet_csk_accept", BLOCKED_IO }, { "do_epoll_wait", BLOCKED_IO },
		{ "ep_poll", BLOCKED_IO }, { "do_sys_poll", BLOCKED_IO }, { "do_select", BLOCKED_IO },
		{ "io_uring", BLOCKED_IO }, { "io_cqring_wait", BLOCKED_IO },
		{ "n_tty_read", BLOCKED_IO }, { "wait_for_completion_io", BLOCKED_IO },
	};

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (has_prefix(f, rules[i].prefix))
			return rules[i].cls;
	return -1;
}

enum blocked_class blocked_classify(const char *const *frames, int n)
{
	for (int i = 0; i < n; i++) {
		int c = frames[i] ? frame_class(frames[i]) : -1;

		if (c >= 0)
			return c;
	}
	return BLOCKED_OTHER;
}

bool blocked_waker_is_interrupt(const char *const *frames, int n)
{
	/* hard interrupt entries (x86-64, arm64) and the timer softirqs */
	static const char *const irq[] = {
		"asm_sysvec_", "sysvec_", "__sysvec_", "asm_common_interrupt", "common_interrupt",
		"__common_interrupt", "irq_exit_rcu", "__irq_exit_rcu", "asm_exc_nmi", "exc_nmi",
		"hrtimer_interrupt", "__hrtimer_run_queues", "hrtimer_run_softirq", "run_timer_softirq",
		"el1_interrupt", "el0_interrupt", "el1h_64_irq", "el0t_64_irq", "gic_handle_irq",
	};

	for (int i = 0; i < n; i++)
		for (size_t k = 0; frames[i] && k < sizeof(irq) / sizeof(irq[0]); k++)
			if (has_prefix(frames[i], irq[k]))
				return true;
	return false;
}

void wall_split(struct wall_split *w, uint64_t wall_ns, uint64_t oncpu_ns, uint64_t runq_ns,
		uint64_t blocked_ns)
{
	w->wall_ms = wall_ns / 1e6;
	w->oncpu_ms = oncpu_ns / 1e6;
	w->runq_ms = runq_ns / 1e6;
	w->blocked_ms = blocked_ns / 1e6;
	w->unattributed_ms = w->wall_ms - w->oncpu_ms - w->runq_ms - w->blocked_ms;
	w->unattributed_percent = w->wall_ms > 0 ? fabs(w->unattributed_ms) / w->wall_ms * 100 : 0;
}

size_t timeline_reduce(uint64_t *t, double *v, size_t n, size_t max)
{
	size_t out = 0;

	if (n <= max || max == 0)
		return n;
	for (size_t b = 0; b < max; b++) {
		size_t lo = b * n / max, hi = (b + 1) * n / max, best = lo;

		for (size_t i = lo; i < hi; i++)
			if (v[i] > v[best])
				best = i;
		t[out] = t[best];
		v[out] = v[best];
		out++;
	}
	return out;
}
