// SPDX-License-Identifier: BSD-2-Clause
/* report.html's charts (report_charts.h). Every chart is an inline <svg>
 * sized by its viewBox, so it scales with the page; every bar, segment and
 * line carries its numbers as data-* attributes, the model's own, so a
 * reader (or a test) can check what is drawn against profile.json. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "html_text.h"
#include "report_charts.h"
#include "split_view.h"

#define CHART_W 960.0
#define TICKS 5

/* One colour per phase id, the same in every chart. */
static const char *const phase_palette[] = {
	"#4e79a7", "#f28e2b", "#59a14f", "#76b7b2", "#edc948",
	"#b07aa1", "#ff9da7", "#9c755f", "#8cd17d", "#499894",
};
#define NPALETTE (sizeof(phase_palette) / sizeof(phase_palette[0]))
#define REST_COLOUR "#d9d9d9"
#define TAIL_COLOUR "#d62728"
#define SHADE_COLOUR "#e8eef7"

static const char *phase_colour(int ph)
{
	return phase_palette[(size_t)(ph - 1) % NPALETTE];
}

/* ---- the SVG helpers every chart draws with ---- */

/* The plot area inside a chart's viewBox and the data ranges it maps. */
struct plot {
	double x0, y0, w, h;
	double xmin, xmax, ymin, ymax;
};

static double px(const struct plot *p, double x)
{
	return p->x0 + (p->xmax > p->xmin ? (x - p->xmin) / (p->xmax - p->xmin) : 0) * p->w;
}

static double py(const struct plot *p, double y)
{
	return p->y0 + p->h - (p->ymax > p->ymin ? (y - p->ymin) / (p->ymax - p->ymin) : 0) * p->h;
}

/* A plot area with room for the axes' labels in a chart w x h. */
static struct plot plot_in(double w, double h)
{
	return (struct plot){ .x0 = 60, .y0 = 12, .w = w - 60 - 16, .h = h - 12 - 34 };
}

/* title, then name escaped (a target's name: a phase, a channel) */
static void svg_open(FILE *f, const char *cls, double w, double h, const char *title, const char *name)
{
	fprintf(f, "<svg class=\"chart %s\" viewBox=\"0 0 %.0f %.0f\" width=\"100%%\" role=\"img\" "
		"style=\"max-width:%.0fpx;display:block\" font-family=\"sans-serif\" font-size=\"11\"><title>",
		cls, w, h, w);
	fputs(title, f);
	html_text__escape(f, name);
	fputs("</title>\n", f);
}

static void svg_close(FILE *f)
{
	fputs("</svg>\n", f);
}

/* A tooltip and the end of an element opened by rect_open or line_open:
 * "name: " (escaped) when name, then the formatted numbers. */
static void __attribute__((format(printf, 4, 5))) tip_close(FILE *f, const char *elem, const char *name,
							     const char *fmt, ...)
{
	va_list ap;

	fputs("><title>", f);
	if (name) {
		html_text__escape(f, name);
		fputs(": ", f);
	}
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fprintf(f, "</title></%s>\n", elem);
}

/* <rect ...: the caller adds data-* attributes, then tip_close. */
static void rect_open(FILE *f, const char *cls, double x, double y, double w, double h, const char *fill)
{
	fprintf(f, "<rect class=\"%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"", cls, x, y,
		w > 0 ? w : 0, h > 0 ? h : 0, fill);
}

static void data_num(FILE *f, const char *key, double v)
{
	if (isfinite(v))
		fprintf(f, " data-%s=\"%.3f\"", key, v);
}

static void data_text(FILE *f, const char *key, const char *s)
{
	fprintf(f, " data-%s=\"", key);
	html_text__escape(f, s);
	fputc('"', f);
}

static void svg_text(FILE *f, double x, double y, const char *anchor, const char *text)
{
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\" fill=\"#333\">", x, y, anchor);
	html_text__escape(f, text);
	fputs("</text>\n", f);
}

/* 1, 2 or 5 times a power of ten: about `ticks` steps over range. */
static double nice_step(double range, int ticks)
{
	double raw = range / ticks, mag, r;

	if (!(raw > 0) || !isfinite(raw))
		return 1;
	mag = pow(10, floor(log10(raw)));
	r = raw / mag;
	return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
}

/* Grid lines and labels at nice steps along one axis; unit at its end. */
static void axis(FILE *f, const struct plot *p, bool vertical, const char *unit)
{
	double lo = vertical ? p->ymin : p->xmin, hi = vertical ? p->ymax : p->xmax;
	double step = nice_step(hi - lo, TICKS);
	char label[48];

	fprintf(f, "<g class=\"axis\" stroke=\"#ccc\" stroke-width=\"0.5\">");
	fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>", p->x0, p->y0 + p->h,
		vertical ? p->x0 : p->x0 + p->w, vertical ? p->y0 : p->y0 + p->h);
	fprintf(f, "</g>\n");
	for (long k = lround(ceil(lo / step)); (double)k * step <= hi + step * 1e-9; k++) {
		double v = (double)k * step;

		snprintf(label, sizeof(label), "%g", v);
		if (vertical) {
			fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#eee\"/>\n", p->x0,
				py(p, v), p->x0 + p->w, py(p, v));
			svg_text(f, p->x0 - 4, py(p, v) + 4, "end", label);
		} else {
			svg_text(f, px(p, v), p->y0 + p->h + 14, "middle", label);
		}
	}
	if (vertical)
		svg_text(f, 4, p->y0 + 4, "start", unit);
	else
		svg_text(f, p->x0 + p->w, p->y0 + p->h + 30, "end", unit);
}

/* <polyline points="...: the caller adds points with line_point, then
 * line_end, data-* attributes and tip_close. */
static void line_open(FILE *f, const char *stroke)
{
	fprintf(f, "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", stroke);
}

static void line_point(FILE *f, const struct plot *p, double x, double y)
{
	fprintf(f, "%.2f,%.2f ", px(p, x), py(p, y));
}

static void line_end(FILE *f)
{
	fputc('"', f);
}

/* A legend entry (HTML, beside the chart); an outline swatch when outline. */
static void legend(FILE *f, const char *colour, bool outline, const char *name)
{
	fprintf(f, "<span style=\"display:inline-block;margin-right:12px\"><span style=\"display:inline-block;"
		"width:10px;height:10px;margin-right:4px;%s%s%s\"></span>", outline ? "border:2px solid " : "background:",
		colour, outline ? ";background:" REST_COLOUR : "");
	html_text__escape(f, name);
	fputs("</span>\n", f);
}

/* ---- cycle times ---- */

/* A bar: one cycle, or the mean of a group of consecutive cycles. */
struct cycle_bar {
	size_t first, last;        /* cycles[first .. last) */
	double ms, phase_ms[IT_MAX_PHASES], stacked_ms;
	bool tail;
};

/* in_tail[i]: cycles[i] is a tail cycle (model.tail names cycles by
 * cycles[].index and pid). NULL without tail cycles or memory. */
static bool *tail_marks(const struct model *m)
{
	bool *in_tail;

	if (!m->have_tail || !m->tail.n || !m->ncycles || !(in_tail = calloc(m->ncycles, sizeof(bool))))
		return NULL;
	for (size_t t = 0; t < m->tail.n; t++) {
		const struct model_tail_cycle *tc = &m->tail.v[t];

		/* cycles[].index is the cycle's place (derive.c): look there first */
		if (tc->cycle < m->ncycles && m->cycles[tc->cycle].index == tc->cycle && m->cycles[tc->cycle].pid == tc->pid) {
			in_tail[tc->cycle] = true;
			continue;
		}
		for (size_t i = 0; i < m->ncycles; i++)
			if (m->cycles[i].index == tc->cycle && m->cycles[i].pid == tc->pid) {
				in_tail[i] = true;
				break;
			}
	}
	return in_tail;
}

static void bar_of(const struct model *m, const bool *in_tail, size_t first, size_t last, struct cycle_bar *b)
{
	double k = (double)(last - first);

	memset(b, 0, sizeof(*b));
	b->first = first;
	b->last = last;
	for (size_t i = first; i < last; i++) {
		const struct model_cycle *c = &m->cycles[i];

		b->ms += c->duration_ms / k;
		for (int ph = 1; ph < IT_MAX_PHASES; ph++)
			if (c->phases[ph].present && m->phase_names[ph])
				b->phase_ms[ph] += c->phases[ph].ms / k;
		b->tail |= in_tail && in_tail[i];
	}
	for (int ph = 1; ph < IT_MAX_PHASES; ph++)
		b->stacked_ms += b->phase_ms[ph];
}

static void cycle_bar_draw(FILE *f, const struct model *m, const struct plot *p, const struct cycle_bar *b,
			   size_t nbar)
{
	double slot = p->w / (p->xmax - p->xmin), x = px(p, (double)nbar) + slot * 0.1, w = slot * 0.8;
	double base = 0;
	uint32_t from = m->cycles[b->first].index, to = m->cycles[b->last - 1].index;
	char which[64];

	if (b->last - b->first > 1)
		snprintf(which, sizeof(which), "cycles %u-%u (mean)", from, to);
	else
		snprintf(which, sizeof(which), "cycle %u", from);
	/* the phases stacked from the bottom, in phase order */
	for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
		if (!(b->phase_ms[ph] > 0))
			continue;
		rect_open(f, "seg", x, py(p, base + b->phase_ms[ph]), w, py(p, base) - py(p, base + b->phase_ms[ph]),
			  phase_colour(ph));
		fprintf(f, " data-cycle=\"%u\"", from);
		data_text(f, "phase", m->phase_names[ph]);
		data_num(f, "ms", b->phase_ms[ph]);
		tip_close(f, "rect", m->phase_names[ph], "%.3f ms in %s", b->phase_ms[ph], which);
		base += b->phase_ms[ph];
	}
	if (b->ms > base) {
		rect_open(f, "rest", x, py(p, b->ms), w, py(p, base) - py(p, b->ms), REST_COLOUR);
		fprintf(f, " data-cycle=\"%u\"", from);
		data_num(f, "ms", b->ms - base);
		tip_close(f, "rect", NULL, "%.3f ms of %s in no phase", b->ms - base, which);
	}
	/* the cycle itself: its outline, red for a tail cycle */
	rect_open(f, b->tail ? "cycle tail" : "cycle", x, py(p, b->ms), w, py(p, 0) - py(p, b->ms), "#000");
	fprintf(f, " fill-opacity=\"0\" stroke=\"%s\" stroke-width=\"%s\" data-cycle=\"%u\"",
		b->tail ? TAIL_COLOUR : "none", b->tail ? "2" : "0", from);
	if (b->last - b->first > 1)
		fprintf(f, " data-last-cycle=\"%u\" data-cycles=\"%zu\"", to, b->last - b->first);
	data_num(f, "ms", b->ms);
	tip_close(f, "rect", NULL, "%s: %.3f ms%s", which, b->ms, b->tail ? ", tail" : "");
}

static void cycles_chart(FILE *f, const struct model *m)
{
	size_t n = m->ncycles;
	size_t group = n > REPORT_CHARTS_MAX_BARS ? (n + REPORT_CHARTS_MAX_BARS - 1) / REPORT_CHARTS_MAX_BARS : 1;
	size_t nbars = (n + group - 1) / group, ntail = 0;
	bool *in_tail = tail_marks(m), any_phase = false;
	struct plot p = plot_in(CHART_W, 300);
	struct cycle_bar b;
	char label[32];

	for (size_t i = 0; in_tail && i < n; i++)
		ntail += in_tail[i];
	p.xmax = (double)nbars;
	for (size_t k = 0; k < nbars; k++) {
		bar_of(m, in_tail, k * group, k * group + group < n ? k * group + group : n, &b);
		p.ymax = fmax(p.ymax, fmax(b.ms, b.stacked_ms));
		any_phase |= b.stacked_ms > 0;
	}
	p.ymax = p.ymax > 0 ? p.ymax * 1.05 : 1;
	fprintf(f, "<h3>Cycle time</h3>\n<p class=\"caption\">");
	if (group > 1)
		fprintf(f, "%zu cycles, one bar per %zu consecutive cycles (their mean)", n, group);
	else
		fprintf(f, "One bar per cycle (%zu)", n);
	fprintf(f, ": its time, %s%s.</p>\n",
		any_phase ? "each phase's ms stacked inside, the rest of the cycle grey (phases that overlap, "
			    "nested or on other threads, can stack above the cycle's time)" : "in no phase",
		!m->have_tail ? "; too few cycles to judge a tail" :
		ntail ? "; tail cycles outlined in red" : "; no tail cycle");
	fprintf(f, "<div class=\"legend\">\n");
	for (int ph = 1; ph < IT_MAX_PHASES; ph++)
		if (m->phases[ph].present && m->phase_names[ph])
			legend(f, phase_colour(ph), false, m->phase_names[ph]);
	legend(f, REST_COLOUR, false, "rest of the cycle");
	if (ntail)
		legend(f, TAIL_COLOUR, true, "tail cycle");
	fprintf(f, "</div>\n");
	svg_open(f, "cycles", CHART_W, 300, "Cycle time per cycle, phases stacked", NULL);
	axis(f, &p, true, "ms");
	for (size_t k = 0; k < nbars; k++) {
		bar_of(m, in_tail, k * group, k * group + group < n ? k * group + group : n, &b);
		cycle_bar_draw(f, m, &p, &b, k);
	}
	fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#ccc\"/>\n", p.x0, p.y0 + p.h,
		p.x0 + p.w, p.y0 + p.h);
	snprintf(label, sizeof(label), "cycle %u", m->cycles[0].index);
	svg_text(f, p.x0, p.y0 + p.h + 14, "start", label);
	snprintf(label, sizeof(label), "cycle %u", m->cycles[n - 1].index);
	svg_text(f, p.x0 + p.w, p.y0 + p.h + 14, "end", label);
	svg_close(f);
	free(in_tail);
}

/* ---- per phase: distribution and scheduler split ---- */

static void phase_histogram(FILE *f, const struct model *m, int ph)
{
	uint64_t count[REPORT_CHARTS_HIST_BINS] = { 0 }, most = 0, n = 0;
	double lo = INFINITY, hi = -INFINITY, width;
	struct plot p = plot_in(CHART_W / 2, 180);

	for (size_t i = 0; i < m->ncycles; i++)
		if (m->cycles[i].phases[ph].present) {
			lo = fmin(lo, m->cycles[i].phases[ph].ms);
			hi = fmax(hi, m->cycles[i].phases[ph].ms);
		}
	if (!(lo <= hi))
		return;
	/* all equal: one bin holds them */
	width = hi > lo ? (hi - lo) / REPORT_CHARTS_HIST_BINS : 0;
	for (size_t i = 0; i < m->ncycles; i++) {
		if (!m->cycles[i].phases[ph].present)
			continue;
		size_t bin = width > 0 ? (size_t)((m->cycles[i].phases[ph].ms - lo) / width) : 0;

		bin = bin < REPORT_CHARTS_HIST_BINS ? bin : REPORT_CHARTS_HIST_BINS - 1;
		most = ++count[bin] > most ? count[bin] : most;
		n++;
	}
	p.xmin = lo;
	p.xmax = width > 0 ? hi : lo + 1;
	p.ymax = (double)most;
	svg_open(f, "histogram", CHART_W / 2, 180, "Per-cycle time of phase ", m->phase_names[ph]);
	axis(f, &p, true, "cycles");
	axis(f, &p, false, "ms in the cycle");
	for (size_t bin = 0; bin < (width > 0 ? REPORT_CHARTS_HIST_BINS : 1); bin++) {
		double b_lo = lo + (double)bin * width, b_hi = width > 0 ? b_lo + width : p.xmax;

		if (!count[bin])
			continue;
		rect_open(f, "bin", px(&p, b_lo) + 0.5, py(&p, (double)count[bin]), px(&p, b_hi) - px(&p, b_lo) - 1,
			  py(&p, 0) - py(&p, (double)count[bin]), phase_colour(ph));
		data_text(f, "phase", m->phase_names[ph]);
		data_num(f, "lo", b_lo);
		data_num(f, "hi", width > 0 ? b_hi : b_lo);
		fprintf(f, " data-count=\"%llu\"", (unsigned long long)count[bin]);
		tip_close(f, "rect", m->phase_names[ph], "%llu of %llu cycles took %.3f-%.3f ms",
			  (unsigned long long)count[bin], (unsigned long long)n, b_lo, width > 0 ? b_hi : b_lo);
	}
	svg_close(f);
}

/* On-CPU, run queue, blocked as one horizontal bar of 100%. */
static void phase_split_bar(FILE *f, const struct model *m, int ph)
{
	static const char *const part_names[] = { "on-CPU", "run queue", "blocked" };
	static const char *const part_keys[] = { "oncpu", "runq", "blocked" };
	static const char *const part_colours[] = { "#2ca02c", "#ff7f0e", "#1f77b4" };
	struct model_split s;
	double part[3], x = 60, w = CHART_W / 2 - 60 - 16;
	char label[96];

	split_view__phase(m, ph, &s);
	if (!s.present || !(s.oncpu_ms + s.runq_ms + s.offcpu_ms > 0))
		return;
	part[0] = s.oncpu_ms;
	part[1] = s.runq_ms;
	part[2] = s.offcpu_ms;
	svg_open(f, "split", CHART_W / 2, 44, "On-CPU, run queue and blocked time of phase ", m->phase_names[ph]);
	svg_text(f, 4, 20, "start", "split");
	for (int i = 0; i < 3; i++) {
		double pct = split_view__percent(&s, part[i]), pw = w * pct / 100;

		rect_open(f, "part", x, 6, pw, 20, part_colours[i]);
		data_text(f, "part", part_keys[i]);
		data_text(f, "phase", m->phase_names[ph]);
		data_num(f, "ms", part[i]);
		data_num(f, "percent", pct);
		tip_close(f, "rect", m->phase_names[ph], "%s %.3f ms (%.1f%%)", part_names[i], part[i], pct);
		if (pw > 70) {
			snprintf(label, sizeof(label), "%s %.0f%%", part_names[i], pct);
			svg_text(f, x + pw / 2, 40, "middle", label);
		}
		x += pw;
	}
	svg_close(f);
}

static void phases_charts(FILE *f, const struct model *m)
{
	bool header = false;

	for (int ph = 1; ph < IT_MAX_PHASES; ph++) {
		bool ran = false;

		for (size_t i = 0; i < m->ncycles && !ran; i++)
			ran = m->cycles[i].phases[ph].present;
		if (!m->phase_names[ph] || !ran)
			continue;
		if (!header)
			fprintf(f, "<h3>Phases</h3>\n<p class=\"caption\">Each phase's per-cycle times (%d linear bins "
				"from its shortest to its longest) and its time on the CPU, waiting in the run queue and "
				"blocked, summed over the cycles and the phase's threads.</p>\n", REPORT_CHARTS_HIST_BINS);
		header = true;
		fprintf(f, "<div class=\"phase-charts\" style=\"display:inline-block;width:49%%;vertical-align:top\">"
			"<h4 style=\"margin:6px 0\">");
		html_text__escape(f, m->phase_names[ph]);
		fprintf(f, "</h4>\n");
		phase_histogram(f, m, ph);
		phase_split_bar(f, m, ph);
		fprintf(f, "</div>\n");
	}
}

/* ---- side data over time ---- */

/* The side series charted, and the source each counts toward for the
 * "not measured" line (NULL: not listed when missing). */
static const struct side_chart {
	const char *series;        /* side_series_col.series */
	const char *source;
} side_charts[] = {
	{ "temperature (C)", "temperature" },
	{ "hwmon temperature (C)", "temperature" },
	{ "cpu clock (MHz)", "CPU clock" },
	{ "power (W)", "power" },
	{ "power rails (W)", "power" },
	{ "gpu util (%)", "GPU" },
	{ "gpu clock (MHz)", "GPU" },
	{ "gpu temperature (C)", "GPU" },
	{ "gpu power (W)", "power" },
};
#define NSIDE_CHARTS (sizeof(side_charts) / sizeof(side_charts[0]))

static double since_start_s(const struct model *m, uint64_t ns)
{
	return ((double)ns - (double)m->run.start_ns) / 1e9;
}

static int span_cmp(const void *a, const void *b)
{
	const double *x = a, *y = b;

	return (x[0] > y[0]) - (x[0] < y[0]);
}

/* The cycles' spans behind a time chart: one band per cycle, alternately
 * tinted; with many cycles, the cycles less than a unit apart merged. */
static void shade_cycles(FILE *f, const struct model *m, const struct plot *p)
{
	double *span = m->ncycles ? malloc(m->ncycles * 2 * sizeof(double)) : NULL;
	size_t n = 0;
	bool merge = m->ncycles > REPORT_CHARTS_MAX_BARS;

	for (size_t i = 0; span && i < m->ncycles; i++) {
		const struct model_cycle *c = &m->cycles[i];

		if (!c->end_ns || c->end_ns < c->start_ns)
			continue;
		span[2 * n] = since_start_s(m, c->start_ns);
		span[2 * n + 1] = since_start_s(m, c->end_ns);
		n++;
	}
	if (span)
		qsort(span, n, 2 * sizeof(double), span_cmp);
	fprintf(f, "<g class=\"cycle-spans\">\n");
	for (size_t i = 0, j; i < n; i = j) {
		double from = span[2 * i], to = span[2 * i + 1];

		for (j = i + 1; merge && j < n && px(p, span[2 * j]) - px(p, to) < 1; j++)
			to = fmax(to, span[2 * j + 1]);
		rect_open(f, "cycle-span", px(p, fmax(from, p->xmin)), p->y0,
			  px(p, fmin(to, p->xmax)) - px(p, fmax(from, p->xmin)), p->h, i % 2 ? "#dde6f3" : SHADE_COLOUR);
		data_num(f, "start-s", from);
		data_num(f, "end-s", to);
		fprintf(f, " data-cycles=\"%zu\"", j - i);
		tip_close(f, "rect", NULL, "%zu cycle%s, %.3f-%.3f s", j - i, j - i > 1 ? "s" : "", from, to);
	}
	fprintf(f, "</g>\n");
	free(span);
}

/* A time chart's frame: its title, axes and the cycles behind. */
static void time_chart_open(FILE *f, const struct model *m, struct plot *p, const char *title, const char *unit)
{
	svg_open(f, "side", CHART_W, 170, "Over time: ", title);
	shade_cycles(f, m, p);
	axis(f, p, true, unit);
	axis(f, p, false, "s since the start");
}

/* One chart of the series' columns [c0, c1) of the side readings. */
static void side_series_chart(FILE *f, const struct model *m, size_t c0, size_t c1, double duration_s)
{
	const struct side_series *sr = &m->side.series;
	struct plot p = plot_in(CHART_W, 170);
	size_t lines = 0, drawn = 0;

	p.xmax = duration_s;
	p.ymin = INFINITY;
	p.ymax = -INFINITY;
	for (size_t r = 0; r < sr->nrows; r++)
		for (size_t c = c0; c < c1 && since_start_s(m, sr->ts[r]) >= 0; c++)
			if (isfinite(sr->v[r * sr->cols.n + c])) {
				p.ymin = fmin(p.ymin, sr->v[r * sr->cols.n + c]);
				p.ymax = fmax(p.ymax, sr->v[r * sr->cols.n + c]);
			}
	/* a flat line sits mid-chart */
	if (p.ymax - p.ymin < 1e-9) {
		p.ymin -= 1;
		p.ymax += 1;
	}
	fprintf(f, "<h4 style=\"margin:6px 0\">");
	html_text__escape(f, sr->cols.v[c0].series);
	fprintf(f, "</h4>\n");
	time_chart_open(f, m, &p, sr->cols.v[c0].series, sr->cols.v[c0].series);
	for (size_t c = c0; c < c1; c++) {
		double lo = INFINITY, hi = -INFINITY;
		size_t points = 0;

		for (size_t r = 0; r < sr->nrows; r++)
			points += since_start_s(m, sr->ts[r]) >= 0 && isfinite(sr->v[r * sr->cols.n + c]);
		if (!points)
			continue;
		lines++;
		if (drawn == REPORT_CHARTS_MAX_LINES)
			continue;
		line_open(f, phase_palette[drawn++ % NPALETTE]);
		for (size_t r = 0; r < sr->nrows; r++) {
			double t = since_start_s(m, sr->ts[r]), v = sr->v[r * sr->cols.n + c];

			/* a baseline read before the start has no place on the axis */
			if (t < 0 || !isfinite(v))
				continue;
			line_point(f, &p, t, v);
			lo = fmin(lo, v);
			hi = fmax(hi, v);
		}
		line_end(f);
		data_text(f, "series", sr->cols.v[c].series);
		data_text(f, "channel", sr->cols.v[c].name);
		fprintf(f, " data-points=\"%zu\"", points);
		data_num(f, "min", lo);
		data_num(f, "max", hi);
		tip_close(f, "polyline", sr->cols.v[c].name, "%zu readings, %.3f to %.3f", points, lo, hi);
	}
	svg_close(f);
	if (lines > drawn)
		fprintf(f, "<p class=\"caption\">The first %zu of %zu channels.</p>\n", drawn, lines);
}

static void rss_chart(FILE *f, const struct model *m, double duration_s)
{
	const struct model_memory_figures *mf = &m->memory;
	struct plot p = plot_in(CHART_W, 170);
	double lo = INFINITY, hi = -INFINITY;

	for (size_t i = 0; i < mf->timeline.n; i++) {
		lo = fmin(lo, mf->timeline.v[i].rss_mb);
		hi = fmax(hi, mf->timeline.v[i].rss_mb);
	}
	p.xmax = duration_s;
	p.ymax = hi > 0 ? hi * 1.05 : 1;
	fprintf(f, "<h4 style=\"margin:6px 0\">RSS (MB)</h4>\n");
	time_chart_open(f, m, &p, "RSS (MB)", "MB");
	line_open(f, phase_palette[0]);
	for (size_t i = 0; i < mf->timeline.n; i++)
		line_point(f, &p, mf->timeline.v[i].t_s, mf->timeline.v[i].rss_mb);
	line_end(f);
	data_text(f, "series", "RSS (MB)");
	fprintf(f, " data-points=\"%zu\"", mf->timeline.n);
	data_num(f, "min", lo);
	data_num(f, "max", hi);
	tip_close(f, "polyline", NULL, "the targets' RSS, %zu points, %.1f to %.1f MB", mf->timeline.n, lo, hi);
	svg_close(f);
}

/* The columns of series `name` with a reading from the start on:
 * [*c0, *c1); false when none. Columns of a series are adjacent. */
static bool side_columns(const struct model *m, const char *name, size_t *c0, size_t *c1)
{
	const struct side_series *sr = &m->side.series;

	for (*c0 = 0; *c0 < sr->cols.n && strcmp(sr->cols.v[*c0].series, name); ++*c0)
		;
	for (*c1 = *c0; *c1 < sr->cols.n && !strcmp(sr->cols.v[*c1].series, name); ++*c1)
		;
	for (size_t r = 0; r < sr->nrows; r++)
		for (size_t c = *c0; c < *c1 && since_start_s(m, sr->ts[r]) >= 0; c++)
			if (isfinite(sr->v[r * sr->cols.n + c]))
				return true;
	return false;
}

/* Why a source was not measured, as the model holds it; "" unknown. */
static const char *not_measured_why(const struct model *m, const char *source)
{
	if (!strcmp(source, "GPU"))
		return m->side.run.gpu.unavailable_reason;
	if (!strcmp(source, "power")) {
		if (m->energy.side.sources.n)
			return "energy counters only, no power readings over time";
		for (size_t i = 0; i < m->energy.side.missing.n; i++)
			if (!strcmp(m->energy.side.missing.v[i].domain, "cpu"))
				return m->energy.side.missing.v[i].reason;
	}
	return "";
}

static void side_charts_write(FILE *f, const struct model *m)
{
	const char *missing[NSIDE_CHARTS + 1];
	bool measured[NSIDE_CHARTS] = { false }, any = false;
	size_t nmissing = 0, c0[NSIDE_CHARTS], c1[NSIDE_CHARTS];
	double duration_s = m->run.end_ns > m->run.start_ns ? since_start_s(m, m->run.end_ns) : m->run.duration_s;
	bool rss = m->memory.available && m->memory.timeline.n;

	/* one time axis for all: to the last reading when one came after the end */
	if (m->side.series.nrows)
		duration_s = fmax(duration_s, since_start_s(m, m->side.series.ts[m->side.series.nrows - 1]));
	if (rss)
		duration_s = fmax(duration_s, m->memory.timeline.v[m->memory.timeline.n - 1].t_s);
	if (!(duration_s > 0))
		duration_s = 1;
	for (size_t k = 0; k < NSIDE_CHARTS; k++)
		any |= measured[k] = side_columns(m, side_charts[k].series, &c0[k], &c1[k]);
	if (!any && !rss && !m->side.run.thermal.present)
		return; /* no side sampler ran and no RSS: nothing measured over time */
	fprintf(f, "<h3>Side data over time</h3>\n<p class=\"caption\">Each measured series against the "
		"seconds since the recording's start, the cycles shaded behind.</p>\n");
	for (size_t k = 0; k < NSIDE_CHARTS; k++)
		if (measured[k])
			side_series_chart(f, m, c0[k], c1[k], duration_s);
	if (rss)
		rss_chart(f, m, duration_s);
	else
		missing[nmissing++] = "RSS";
	/* a source is measured when any of its series is */
	for (size_t k = 0; k < NSIDE_CHARTS; k++) {
		bool seen = false;

		for (size_t j = 0; j < NSIDE_CHARTS; j++)
			seen |= !strcmp(side_charts[j].source, side_charts[k].source) && (measured[j] || j < k);
		if (!seen)
			missing[nmissing++] = side_charts[k].source;
	}
	if (!nmissing)
		return;
	fprintf(f, "<p class=\"not-measured\">not measured: ");
	for (size_t i = 0; i < nmissing; i++) {
		const char *why = strcmp(missing[i], "RSS") ? not_measured_why(m, missing[i]) : "";

		fprintf(f, "%s%s", i ? ", " : "", missing[i]);
		if (why[0]) {
			fputs(" (", f);
			html_text__escape(f, why);
			fputc(')', f);
		}
	}
	fprintf(f, "</p>\n");
}

/* ---- to come ---- */

/* Where the requests' charts (model.requests: TTFT, inter-token gaps) and
 * the GPU timeline's (model.gpu_activity) will go; their tables stay in
 * requests_html.c and outputs.c's GPU section. */
static void requests_and_gpu_charts(FILE *f, const struct model *m)
{
	(void)f;
	(void)m;
}

void report_charts__write(FILE *f, const struct model *m)
{
	if (!m->ncycles && !m->side.series.nrows && !m->memory.timeline.n)
		return;
	fprintf(f, "<h2 id=\"charts\">Charts</h2>\n");
	if (m->ncycles) {
		cycles_chart(f, m);
		phases_charts(f, m);
	}
	side_charts_write(f, m);
	requests_and_gpu_charts(f, m);
}
