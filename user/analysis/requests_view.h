// SPDX-License-Identifier: BSD-2-Clause
/* A server's requests (model_requests.h) in the text report. */
#ifndef INFERTRACE_REQUESTS_VIEW_H
#define INFERTRACE_REQUESTS_VIEW_H

#include <stdio.h>

#include "model.h"

/* Requests shown one per row, at most (the slowest by duration). */
#define REQUESTS_VIEW_ROWS 20

/* The requests' distributions, a table of them (the slowest when there are
 * more than REQUESTS_VIEW_ROWS), the slowest ones' causes and the context's
 * cost per position. Nothing without llama.cpp batches. */
void requests_view__print(FILE *out, const struct model *m);
/* The requests' medians a request's figures are held against (NAN where
 * no request has the figure): computed once for all the rows. */
struct requests_medians {
	double prompt, generated, sharers, itl, ttft, clock;
};

void requests_view__medians(const struct model *m, struct requests_medians *md);
/* Why request q was slow, from what the others show (md: their medians):
 * "" when nothing stands out. Into buf; returns buf. */
const char *requests_view__causes(const struct model *m, const struct requests_medians *md,
				  const struct model_request *q, char *buf, size_t len);

/* `top`'s line: requests in flight (each sequence with its outputs so
 * far), ended, and the ended ones' first-token and gap medians; "" without
 * llama.cpp batches. */
void requests_view__live_line(const struct model *m, char *buf, size_t len);

#endif
