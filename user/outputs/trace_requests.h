// SPDX-License-Identifier: BSD-2-Clause
/* trace.json's request tracks: a server's requests (model.requests), one
 * track per sequence slot under its process. */
#ifndef INFERTRACE_TRACE_REQUESTS_H
#define INFERTRACE_TRACE_REQUESTS_H

#include <stdio.h>

#include "model.h"

/* Sequence s's track is thread TRACE_REQUESTS_TID_BASE + s of its process:
 * above any tid (pid_max is at most 2^22), so it never takes a thread's. */
#define TRACE_REQUESTS_TID_BASE (1 << 23)

/* Per (process, sequence) a thread "requests: seq S"; each request a
 * complete event ("X", cat "request") named "request" with args {seq,
 * prompt_tokens, cached_tokens, generated_tokens, ttft_ms, duration_ms,
 * tokens_per_s, itl_p95_ms, sharers_avg, ended_by}, holding its "prefill"
 * (first batch to first token) and "decode" (first token to last batch)
 * parts. Whole microseconds since the start. Each event after *sep. */
void trace_requests__write(const struct model *m, FILE *f, const char **sep);

#endif
