// SPDX-License-Identifier: BSD-2-Clause
/* The scheduler's split of the phases and cycles, as people read it
 * (split_view.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html_text.h"
#include "sched_logic.h"
#include "split_view.h"
#include "stats.h"

#define SPLIT_CYCLE_ROWS 30

static void add(struct model_split *to, const struct model_split *s)
{
	to->present = true;
	to->oncpu_ms += s->oncpu_ms;
	to->runq_ms += s->runq_ms;
	to->runq_others_ms += s->runq_others_ms;
	to->offcpu_ms += s->offcpu_ms;
	for (int i = 0; i < BLOCKED_NCLASSES; i++)
		to->blocked_ms[i] += s->blocked_ms[i];
}

void split_view__phase(const struct model *m, int phase, struct model_split *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < m->ncycles; i++) {
		const struct model_cycle_phase *p = &m->cycles[i].phases[phase];

		if (p->present && !p->observed && p->split.present)
			add(out, &p->split);
	}
}

bool split_view__any(const struct model *m)
{
	for (size_t i = 0; i < m->ncycles; i++) {
		if (m->cycles[i].split.present)
			return true;
		for (int ph = 1; ph < IT_MAX_PHASES; ph++)
			if (m->cycles[i].phases[ph].present && m->cycles[i].phases[ph].split.present)
				return true;
	}
	return false;
}

double split_view__percent(const struct model_split *s, double part)
{
	double t = s->oncpu_ms + s->runq_ms + s->offcpu_ms;

	return s->present && t > 0 ? 100 * part / t : NAN;
}

const char *split_view__blocked(const struct model_split *s, char *buf, size_t len)
{
	bool done[BLOCKED_NCLASSES] = { false };
	size_t off = 0;

	buf[0] = 0;
	for (int n = 0; s->present && n < BLOCKED_NCLASSES; n++) {
		int best = -1;

		for (int i = 0; i < BLOCKED_NCLASSES; i++)
			if (!done[i] && s->blocked_ms[i] >= 0.05 && (best < 0 || s->blocked_ms[i] > s->blocked_ms[best]))
				best = i;
		if (best < 0)
			break;
		done[best] = true;
		if (off < len)
			off += snprintf(buf + off, len - off, "%s%s %.1f", off ? ", " : "", blocked_class_names[best],
					s->blocked_ms[best]);
	}
	return buf;
}

const char *split_view__line(const struct model_split *s, char *buf, size_t len)
{
	char bl[200], rq[64] = "";

	if (!s->present) {
		buf[0] = 0;
		return buf;
	}
	split_view__blocked(s, bl, sizeof(bl));
	if (s->runq_others_ms >= 0.005)
		snprintf(rq, sizeof(rq), " (%.2f behind other processes)", s->runq_others_ms);
	snprintf(buf, len, "on-CPU %.2f ms, run queue %.2f%s, blocked %.2f%s%s%s", s->oncpu_ms, s->runq_ms, rq,
		 s->offcpu_ms, bl[0] ? " (" : "", bl, bl[0] ? ")" : "");
	return buf;
}

/* Each part's median over the cycles with a split (main thread); the
 * number of those cycles. */
static size_t median_cycle(const struct model *m, struct model_split *out)
{
	double *v = calloc(m->ncycles + 1, sizeof(double));
	size_t n = 0;

	memset(out, 0, sizeof(*out));
	if (!v)
		return 0;
	for (int part = 0; part < 4 + BLOCKED_NCLASSES; part++) {
		n = 0;
		for (size_t i = 0; i < m->ncycles; i++) {
			const struct model_split *s = &m->cycles[i].split;

			if (!s->present || m->cycles[i].observed)
				continue;
			v[n++] = part == 0 ? s->oncpu_ms : part == 1 ? s->runq_ms : part == 2 ? s->offcpu_ms :
				 part == 3 ? s->runq_others_ms : s->blocked_ms[part - 4];
		}
		if (!n)
			break;
		double med = stats__percentile(v, n, 50);

		if (part == 0)
			out->oncpu_ms = med;
		else if (part == 1)
			out->runq_ms = med;
		else if (part == 2)
			out->offcpu_ms = med;
		else if (part == 3)
			out->runq_others_ms = med;
		else
			out->blocked_ms[part - 4] = med;
	}
	free(v);
	out->present = n > 0;
	return n;
}

/* The next phase after ph (0: from the first) with a split, its split in
 * *s; 0 when none is left. */
static int next_split_phase(const struct model *m, int ph, struct model_split *s)
{
	while (++ph < IT_MAX_PHASES) {
		if (!m->phases[ph].present || !m->phase_names[ph])
			continue;
		split_view__phase(m, ph, s);
		if (s->present)
			return ph;
	}
	return 0;
}

/* Each cycle's own split, one row each up to SPLIT_CYCLE_ROWS cycles; more
 * would bury the rest of the report: then where to read them. */
static void print_cycles(FILE *f, const struct model *m, const char *lead)
{
	size_t n = 0;
	char bl[256];

	for (size_t i = 0; i < m->ncycles; i++)
		n += m->cycles[i].split.present;
	if (!n)
		return;
	if (n > SPLIT_CYCLE_ROWS) {
		fprintf(f, "%sEach cycle's split (%zu cycles): report.html's per-cycle table, profile.json's cycles[]\n",
			lead, n);
		return;
	}
	fprintf(f, "%sSplit per cycle (main thread):\n%7s %10s %10s %10s %10s  %s\n", lead, "cycle", "wall_ms",
		"oncpu_ms", "runq_ms", "blocked_ms", "blocked in (ms)");
	for (size_t i = 0; i < m->ncycles; i++) {
		const struct model_cycle *c = &m->cycles[i];

		if (!c->split.present)
			continue;
		split_view__blocked(&c->split, bl, sizeof(bl));
		fprintf(f, "%7u %10.2f %10.2f %10.2f %10.2f  %s\n", (unsigned)c->index, c->duration_ms, c->split.oncpu_ms,
			c->split.runq_ms, c->split.offcpu_ms, bl[0] ? bl : "-");
	}
}

void split_view__print(FILE *f, const struct model *m)
{
	struct model_split s;
	char bl[256], pc[32];
	bool header = false;
	size_t n;

	for (int ph = next_split_phase(m, 0, &s); ph; ph = next_split_phase(m, ph, &s)) {
		if (!header)
			fprintf(f, "\nPhase split over the cycles (ms summed over threads; %% of the phase's thread time):\n"
				"%-20s %10s %10s %10s  %-15s %s\n", "phase", "oncpu_ms", "runq_ms", "blocked_ms",
				"on/runq/blk %", "blocked in (ms)");
		header = true;
		snprintf(pc, sizeof(pc), "%.0f/%.0f/%.0f", split_view__percent(&s, s.oncpu_ms),
			 split_view__percent(&s, s.runq_ms), split_view__percent(&s, s.offcpu_ms));
		split_view__blocked(&s, bl, sizeof(bl));
		fprintf(f, "%-20s %10.2f %10.2f %10.2f  %-15s %s\n", m->phase_names[ph], s.oncpu_ms, s.runq_ms,
			s.offcpu_ms, isfinite(split_view__percent(&s, s.oncpu_ms)) ? pc : "-", bl[0] ? bl : "-");
	}
	n = median_cycle(m, &s);
	if (n)
		fprintf(f, "%sCycle split (main thread), median of %zu cycles: %s\n", header ? "" : "\n", n,
			split_view__line(&s, bl, sizeof(bl)));
	print_cycles(f, m, header || n ? "" : "\n");
}

static void num_cell(FILE *f, double v, int prec)
{
	if (isfinite(v))
		fprintf(f, "<td>%.*f</td>", prec, v);
	else
		fprintf(f, "<td>-</td>");
}

void split_view__html_phases(FILE *f, const struct model *m)
{
	struct model_split s;
	char bl[256];
	bool header = false;

	for (int ph = next_split_phase(m, 0, &s); ph; ph = next_split_phase(m, ph, &s)) {
		if (!header)
			fprintf(f, "<h3>On-CPU, run queue, blocked per phase</h3>\n<p>Summed over the cycles and the "
				"phase's threads; %% of the phase's thread time.</p>\n<table class=\"split\"><tr>"
				"<th>phase</th><th>on-CPU ms</th><th>run queue ms</th><th>blocked ms</th><th>on-CPU %%</th>"
				"<th>run queue %%</th><th>blocked %%</th><th>blocked in (ms)</th></tr>\n");
		header = true;
		fprintf(f, "<tr><td>");
		html_text__escape(f, m->phase_names[ph]);
		fprintf(f, "</td>");
		num_cell(f, s.oncpu_ms, 2);
		num_cell(f, s.runq_ms, 2);
		num_cell(f, s.offcpu_ms, 2);
		num_cell(f, split_view__percent(&s, s.oncpu_ms), 1);
		num_cell(f, split_view__percent(&s, s.runq_ms), 1);
		num_cell(f, split_view__percent(&s, s.offcpu_ms), 1);
		fprintf(f, "<td>%s</td></tr>\n", split_view__blocked(&s, bl, sizeof(bl))[0] ? bl : "-");
	}
	if (header)
		fprintf(f, "</table>\n");
}
