// SPDX-License-Identifier: BSD-2-Clause
/* The side concern's offer to the writers of trace.json. */
#ifndef INFERTRACE_SIDE_H
#define INFERTRACE_SIDE_H

#include <jansson.h>

#include "recording.h"

/* Appends the side samples as Chrome counter events ("ph": "C", ts in µs
 * since the recording's start) to events: temperatures, clocks, load,
 * MemAvailable, power, disk free, GPU. Valid from the side concern's write
 * until cleanup. Returns the number appended (0 without a sampler). */
int side__trace_counters(const struct recording *rec, json_t *events, int pid);

#endif
