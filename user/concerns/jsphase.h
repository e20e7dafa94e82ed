// SPDX-License-Identifier: BSD-2-Clause
/* js: phases (--phase NAME=js:FUNC): JIT functions timed by observing each
 * sample's stack (jsphase.c says how). */
#ifndef INFERTRACE_JSPHASE_H
#define INFERTRACE_JSPHASE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct recording;

/* Whether a probe spec is js:FUNC (not a probe: the probes concern skips it). */
bool jsphase__spec_is_js(const char *spec);
/* One DWARF sample of thread tid taken at ts_ns in BPF cycle `cycle`, its
 * user stack leaf first with JIT frames as perf-map tokens: updates the
 * thread's js: phases. Returns the innermost js: phase the stack shows, 0
 * when none (or no js: phase was asked). */
uint32_t jsphase__observe(struct recording *rec, pid_t tgid, pid_t tid, uint32_t cycle, uint64_t ts_ns,
			  const uint64_t *ips, int n);

#endif
