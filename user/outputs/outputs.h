// SPDX-License-Identifier: BSD-2-Clause
/* The writers of a recording's outputs, each reading only the model:
 * profile.json, the folded stacks, trace.json (Chrome trace events, which
 * Perfetto and chrome://tracing open), flamegraph.svg and report.html. */
#ifndef INFERTRACE_OUTPUTS_H
#define INFERTRACE_OUTPUTS_H

#include <stdio.h>

#include "folded.h"

struct model;

/* Writes every output of an analysed model into dir (atomically, each
 * file). Writes all it can; returns the first error, or -EINVAL for a
 * model that is not analysed. */
int outputs__write_all(const struct model *m, const char *dir);
/* A checkpoint while recording: profile.json, the folded stacks and
 * profile.pb.gz, each replaced atomically (profile.json last). */
int outputs__write_checkpoint(const struct model *m, const char *dir);

/* Writes a flame graph of the stacks as a standalone SVG document: one
 * rectangle per frame, width proportional to its samples, the root at the
 * bottom, a <title> tooltip on each. An empty set gives a valid SVG with a
 * note. 0 or -EIO. */
int flamegraph__write_svg(const struct folded *stacks, const char *title, const char *unit, FILE *out);

/* Writes s with the XML/HTML special characters escaped. */
void outputs__xml_escape(FILE *out, const char *s);

#endif
