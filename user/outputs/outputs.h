// SPDX-License-Identifier: BSD-2-Clause
/* The outputs concern's writers: trace.json (Chrome trace events, which
 * Perfetto and chrome://tracing open), flamegraph.svg (from the folded
 * stacks) and report.html (summary tables and the flame graph, one file). */
#ifndef INFERTRACE_OUTPUTS_H
#define INFERTRACE_OUTPUTS_H

#include <stdio.h>

#include "folded.h"

/* Writes a flame graph of the stacks as a standalone SVG document: one
 * rectangle per frame, width proportional to its samples, the root at the
 * bottom, a <title> tooltip on each. An empty set gives a valid SVG with a
 * note. 0 or -EIO. */
int flamegraph__write_svg(const struct folded *stacks, const char *title, const char *unit, FILE *out);

/* Writes s with the XML/HTML special characters escaped. */
void outputs__xml_escape(FILE *out, const char *s);

#endif
