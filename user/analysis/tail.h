// SPDX-License-Identifier: BSD-2-Clause
/* Tail-cycle forensics: which cycles were well above typical, what grew in
 * them against the median cycle, and the stacks that account for it. */
#ifndef INFERTRACE_TAIL_H
#define INFERTRACE_TAIL_H

#include <stdio.h>

struct model;

/* Fewer cycles than this: no tail is judged (tail_cycles left out). */
#define TAIL_MIN_CYCLES 5

/* Fills m->tail_cycles from the cycles (part of model__derive): a cycle is
 * in the tail when it lasts more than median + 3·MAD and more than 10%
 * above the median. */
void tail__derive(struct model *m);
/* The text report's section and report.html's (nothing without tail cycles). */
void tail__print(FILE *out, const struct model *m);
void tail__html(FILE *out, const struct model *m);

#endif
