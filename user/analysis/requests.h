// SPDX-License-Identifier: BSD-2-Clause
/* Requests and the context's cost from llama.cpp's batches
 * (model_requests.h, docs/servers.md). */
#ifndef INFERTRACE_REQUESTS_H
#define INFERTRACE_REQUESTS_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* model.requests' list, gaps, distributions and context fit from its
 * recorded batches and removals; a model without batches (read back) is
 * left as it is. Part of model__derive. 0 or -ENOMEM. */
int requests__derive(struct model *m);
/* The indexes of r's batches in the order they began (ties by index): a
 * new array of r->batches.n, or NULL without memory (or batches). */
uint32_t *requests__batch_order(const struct model_requests *r);
/* Least squares of y (ms per step) over x (position): c's fit, its first
 * and last tenth of positions. present when n >= MODEL_CONTEXT_MIN_STEPS
 * and x spans MODEL_CONTEXT_MIN_SPAN positions. */
void requests__fit_context(struct model_context_cost *c, const double *x, const double *y, size_t n);

#endif
