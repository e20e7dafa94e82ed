// SPDX-License-Identifier: BSD-2-Clause
/* llama.cpp's figures in report.html and in `infertrace diff`. */
#ifndef INFERTRACE_LLAMA_VIEW_H
#define INFERTRACE_LLAMA_VIEW_H

#include <stdio.h>

#include "model.h"

/* report.html's llama.cpp section: model, context, figures over the cycles
 * and per cycle (nothing without llama.cpp figures or facts). */
void llama__html(FILE *out, const struct model *m);

#define LLAMA_DIFF_ROWS 3

/* One figure diff compares. verdict: 1 better by more than the threshold,
 * -1 worse by more (or present on one side only), 0 otherwise; diff's
 * table (diff.c) also asks the change's interval over the cycles. */
struct llama_diff_row {
	const char *name;
	double base, new_v;
	double change_pct; /* (new - base) / base, in percent; NAN where not computable */
	int verdict;
	int higher_is_better;
};

/* The compared rows (decode and prefill tokens/s, J per generated token),
 * those present on either side; returns how many. */
int llama__diff_rows(const struct model *b, const struct model *n, double threshold_pct,
		     struct llama_diff_row rows[LLAMA_DIFF_ROWS]);

#endif
