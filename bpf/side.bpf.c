// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Thermal and power tracepoints: zone temperature updates, cooling-device
 * state changes, CPU frequency changes and frequency limits, sent as
 * ring-buffer records (IT_EV_THERMAL_TEMP..IT_EV_CPU_FREQ_LIMITS) so they
 * land on the cycle timeline. They are system-wide facts: no target filter.
 * Each program is loaded only when this kernel has its tracepoint (user/side.c
 * checks tracefs and turns autoload off otherwise). The record layouts are
 * declared here as CO-RE flavors, so they need nothing from vmlinux.h. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "maps.bpf.h"

struct trace_event_raw_thermal_temperature___it {
	__u32 __data_loc_thermal_zone;
	int id;
	int temp_prev;
	int temp;
} __attribute__((preserve_access_index));

struct trace_event_raw_cdev_update___it {
	__u32 __data_loc_type;
	unsigned long target;
} __attribute__((preserve_access_index));

struct trace_event_raw_cpu___it {
	__u32 state;
	__u32 cpu_id;
} __attribute__((preserve_access_index));

struct trace_event_raw_cpu_frequency_limits___it {
	__u32 min_freq;
	__u32 max_freq;
	__u32 cpu_id;
} __attribute__((preserve_access_index));

static __always_inline struct it_power_event *power_reserve(__u32 type)
{
	struct it_power_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	__u64 id = bpf_get_current_pid_tgid();

	if (!e) {
		stat_inc(IT_STAT_RINGBUF_LOST);
		return NULL;
	}
	event_header(&e->hdr, type, id >> 32, (__u32)id, bpf_ktime_get_ns());
	e->id = 0;
	e->pad = 0;
	e->value = 0;
	e->value2 = 0;
	e->name[0] = 0;
	return e;
}

/* A __data_loc string: offset in the low 16 bits, from the record's start. */
static __always_inline void read_data_loc(char *dst, void *ctx, __u32 loc)
{
	bpf_probe_read_kernel_str(dst, IT_COMM_LEN, (char *)ctx + (loc & 0xffff));
}

SEC("tp/thermal/thermal_temperature")
int power_thermal_temperature(void *ctx)
{
	struct trace_event_raw_thermal_temperature___it *r = ctx;
	struct it_power_event *e = power_reserve(IT_EV_THERMAL_TEMP);

	if (!e)
		return 0;
	e->id = BPF_CORE_READ(r, id);
	e->value = BPF_CORE_READ(r, temp);
	e->value2 = BPF_CORE_READ(r, temp_prev);
	read_data_loc(e->name, ctx, BPF_CORE_READ(r, __data_loc_thermal_zone));
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp/thermal/cdev_update")
int power_cdev_update(void *ctx)
{
	struct trace_event_raw_cdev_update___it *r = ctx;
	struct it_power_event *e = power_reserve(IT_EV_CDEV_UPDATE);

	if (!e)
		return 0;
	e->value = BPF_CORE_READ(r, target);
	read_data_loc(e->name, ctx, BPF_CORE_READ(r, __data_loc_type));
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp/power/cpu_frequency")
int power_cpu_frequency(void *ctx)
{
	struct trace_event_raw_cpu___it *r = ctx;
	struct it_power_event *e = power_reserve(IT_EV_CPU_FREQ);

	if (!e)
		return 0;
	e->id = BPF_CORE_READ(r, cpu_id);
	e->value = BPF_CORE_READ(r, state);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp/power/cpu_frequency_limits")
int power_cpu_frequency_limits(void *ctx)
{
	struct trace_event_raw_cpu_frequency_limits___it *r = ctx;
	struct it_power_event *e = power_reserve(IT_EV_CPU_FREQ_LIMITS);

	if (!e)
		return 0;
	e->id = BPF_CORE_READ(r, cpu_id);
	e->value = BPF_CORE_READ(r, min_freq);
	e->value2 = BPF_CORE_READ(r, max_freq);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
