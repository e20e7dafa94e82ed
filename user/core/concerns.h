// SPDX-License-Identifier: BSD-2-Clause
/* The concerns a recording is made of (struct concern in recording.h).
 * Each fills its part of the model; the model's stages, not this list,
 * order the work. */
#ifndef INFERTRACE_CONCERNS_H
#define INFERTRACE_CONCERNS_H

#include "recording.h"

extern const struct concern python_concern;   /* CPython frames: interpreter offsets, code names */
extern const struct concern probes_concern;   /* uprobes/USDT: cycles, phases, counts */
extern const struct concern sampling_concern; /* on-CPU samples: stacks.folded, samples */
extern const struct concern jsphase_concern;  /* js: phases observed in the samples' stacks */
extern const struct concern sched_concern;    /* on/off-CPU, run-queue waits: sched, offcpu */
extern const struct concern memory_concern;   /* RSS, page faults, growth: memory */
extern const struct concern crash_concern;    /* OOM kills, fatal signals, --comm: crashes */
extern const struct concern side_concern;     /* thermal, power, GPU, disk: side sampler + tracepoints */
extern const struct concern network_concern;  /* TCP bytes per cycle, RTT, retransmits: network */
extern const struct concern cuda_concern;     /* --preset cuda: launches, copies, sync waits per cycle */
extern const struct concern gpu_concern;      /* CUPTI activity over the channel: GPU time per cycle and phase */
extern const struct concern overhead_concern; /* probe cost per hit: probes_overhead */
extern const struct concern self_cost_concern; /* the tracer's CPU, RSS, wake-ups, BPF run time: self */
extern const struct concern llama_concern;    /* --preset llama.cpp: model file and context settings: llama */
extern const struct concern live_concern;     /* `top` and --metrics: snapshots while recording */

#endif
