// SPDX-License-Identifier: BSD-2-Clause
/* timeline.speedscope.json: the timed samples of --call-graph dwarf, per
 * thread and in time order, in speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json): one "sampled"
 * profile per thread, named by the thread's comm, the frames shared. A
 * sample weighs one sampling period and sits at its time from the
 * recording's start (trace.json's zero); the time a thread was not sampled
 * is an empty stack. See docs/outputs.md. */
#ifndef INFERTRACE_SPEEDSCOPE_H
#define INFERTRACE_SPEEDSCOPE_H

#include <stdio.h>

struct model;

/* Writes the model's trace samples as a speedscope file to out. 0,
 * -ENOMEM or -EIO. */
int speedscope__encode(const struct model *m, FILE *out);
/* Writes DIR/timeline.speedscope.json atomically. 0 or -errno. */
int speedscope__write(const struct model *m, const char *dir);

#endif
