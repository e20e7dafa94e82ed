// SPDX-License-Identifier: BSD-2-Clause
/* The writers of a recording's outputs, each reading only the model:
 * profile.json, the folded stacks, trace.json (Chrome trace events, which
 * Perfetto and chrome://tracing open), flamegraph.svg and report.html. */
#ifndef INFERTRACE_OUTPUTS_H
#define INFERTRACE_OUTPUTS_H

#include <stdint.h>
#include <stdio.h>
#include <jansson.h>

#include "folded.h"
#include "side_summary.h"

struct model;

/* Writes every output of an analysed model into dir (atomically, each
 * file). Writes all it can; returns the first error, or -EINVAL for a
 * model that is not analysed. */
int outputs__write_all(const struct model *m, const char *dir);
/* A checkpoint while recording: profile.json, the folded stacks and
 * profile.pb.gz, each replaced atomically (profile.json last). */
int outputs__write_checkpoint(const struct model *m, const char *dir);

enum flamegraph_palette {
	FLAMEGRAPH_ONCPU,  /* warm colours by name */
	FLAMEGRAPH_OFFCPU, /* blues by name */
	FLAMEGRAPH_DIFF,   /* red: the frame's share grew against base; blue: it shrank */
};

struct flamegraph_opts {
	const char *title;
	const char *unit;            /* of the counts, in the tooltips: "samples", "us blocked" */
	enum flamegraph_palette palette;
	const struct folded *base;   /* FLAMEGRAPH_DIFF: the stacks compared against */
};

/* Writes a flame graph of the stacks as a standalone SVG document: one
 * rectangle per frame, width proportional to its count, the root at the
 * bottom, a <title> tooltip on each, its script for zoom and search. An
 * empty set gives a valid SVG with a note. A differential graph
 * (FLAMEGRAPH_DIFF) has the widths of stacks and colours by the change of
 * each frame's share of all samples from base to stacks, as difffolded.pl
 * and flamegraph.pl draw it. 0, -ENOMEM or -EIO. */
int flamegraph__write(const struct folded *stacks, const struct flamegraph_opts *o, FILE *out);

/* Writes DIR/NAME, a flame graph, atomically. 0 or -errno. */
int flamegraph__write_file(const char *dir, const char *name, const struct folded *st,
			   const struct flamegraph_opts *o);

/* trace.json's side-data counter events ({name, ph: "C", ts, pid, args}),
 * one per series and row of sr, ts in microseconds since base_ns, appended
 * to events. Returns the number appended. */
int outputs__side_counters(const struct side_series *sr, int pid, uint64_t base_ns, json_t *events);

#endif
