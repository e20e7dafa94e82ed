// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests: the flame graph's frame kinds (from the names user/symbols
 * writes), its colours by kind with their legend, its width (the window's)
 * and its height (the deepest row a frame is visible in, not the deepest
 * row drawn). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "test_helpers.h"

#include "frame_kind.h"
#include "outputs.h"

static enum frame_kind kind(const char *name)
{
	return frame_kind__of(name, strlen(name));
}

static void test_kinds_by_name(void **state)
{
	(void)state;
	assert_int_equal(kind("do_syscall_64_[k]"), FRAME_KERNEL);
	assert_int_equal(kind("run_cycle (loop.py)"), FRAME_PYTHON);
	assert_int_equal(kind("Model.forward (module.pyx)"), FRAME_PYTHON);
	assert_int_equal(kind("_find_and_load (<frozen importlib._bootstrap>)"), FRAME_PYTHON);
	assert_int_equal(kind("[unknown_python] (?)"), FRAME_PYTHON);
	assert_int_equal(kind("infer (jsloop.js:12)"), FRAME_JIT);
	/* marked by stacks.c: perf-map (JIT) code, Python's trampolines too */
	assert_int_equal(kind("numericPhase (jsloop.js:17)_[j]"), FRAME_JIT);
	assert_int_equal(kind("loadAndTranslate (loader:542)_[j]"), FRAME_JIT);
	assert_int_equal(kind("Interpreter_[j]"), FRAME_JIT);
	assert_int_equal(kind("run_cycle (loop.py)_[j]"), FRAME_PYTHON);
	assert_int_equal(kind("(anonymous) (<anonymous>:1)"), FRAME_JIT);
	assert_int_equal(kind("Builtin:ArgumentsAdaptorTrampoline"), FRAME_JIT);
	assert_int_equal(kind("[unknown]"), FRAME_UNKNOWN);
	assert_int_equal(kind("[missing_user_stack]"), FRAME_UNKNOWN);
	/* native: C, C++ (parentheses of its own), object+offset, a scope */
	assert_int_equal(kind("ggml_graph_compute_thread"), FRAME_NATIVE);
	assert_int_equal(kind("std::vector<int>::push_back(int const&)"), FRAME_NATIVE);
	assert_int_equal(kind("(anonymous namespace)::worker(void*)"), FRAME_NATIVE);
	assert_int_equal(kind("python3.11+0x1a2b3c"), FRAME_NATIVE);
	assert_int_equal(kind("Builtin::Lookup"), FRAME_NATIVE);
	assert_int_equal(kind("operator() (int)"), FRAME_NATIVE);
}

/* The SVG of stacks (on-CPU palette), to free(). */
static char *draw(const struct folded *st, enum flamegraph_palette pal)
{
	struct flamegraph_opts o = { .title = "t", .unit = "samples", .palette = pal };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(flamegraph__write(st, &o, f), 0);
	fclose(f);
	return buf;
}

static double hue_of(int r, int g, int b)
{
	double mx = fmax(r, fmax(g, b)), mn = fmin(r, fmin(g, b)), h;

	if (mx == mn)
		return -1;
	if (mx == r)
		h = 60 * fmod((g - b) / (mx - mn), 6);
	else if (mx == g)
		h = 60 * ((b - r) / (mx - mn) + 2);
	else
		h = 60 * ((r - g) / (mx - mn) + 4);
	return h < 0 ? h + 360 : h;
}

/* The fill of the frame titled name, as a hue; -1 when grey. */
static double frame_hue(const char *svg, const char *name)
{
	char want[256];
	const char *p;
	int r, g, b;

	snprintf(want, sizeof(want), "<title>%s (", name);
	p = strstr(svg, want);
	assert_non_null(p);
	p = strstr(p, "fill=\"rgb(");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "fill=\"rgb(%d,%d,%d)", &r, &g, &b), 3);
	return hue_of(r, g, b);
}

/* The legend swatch's hue before the label word. */
static double legend_hue(const char *svg, const char *word)
{
	const char *leg = strstr(svg, "<g class=\"fg-legend\">"), *p, *best = NULL;
	char want[64];
	int r, g, b;

	assert_non_null(leg);
	snprintf(want, sizeof(want), ">%s</text>", word);
	p = strstr(leg, want);
	assert_non_null(p);
	for (const char *q = leg; (q = strstr(q, "fill=\"rgb(")) && q < p; q++)
		best = q;
	assert_non_null(best);
	assert_int_equal(sscanf(best, "fill=\"rgb(%d,%d,%d)", &r, &g, &b), 3);
	return hue_of(r, g, b);
}

static void test_colours_by_kind_with_legend(void **state)
{
	struct folded st = {};
	char *svg;

	(void)state;
	assert_int_equal(folded__add(&st, "app;main;native_work", 10), 0);
	assert_int_equal(folded__add(&st, "app;main;do_syscall_64_[k]", 10), 0);
	assert_int_equal(folded__add(&st, "app;main;run_cycle (loop.py)", 10), 0);
	assert_int_equal(folded__add(&st, "app;main;infer (jsloop.js:12)_[j]", 10), 0);
	assert_int_equal(folded__add(&st, "app;main;[unknown]", 10), 0);
	svg = draw(&st, FLAMEGRAPH_ONCPU);
	/* each frame's hue nearest its own kind's swatch */
	static const struct {
		const char *frame, *word;
	} cases[] = {
		{ "native_work", "native" }, { "do_syscall_64_[k]", "kernel" },
		{ "run_cycle (loop.py)", "Python" }, { "infer (jsloop.js:12)_[j]", "JIT / JS" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double h = frame_hue(svg, cases[i].frame), best = 1e9;
		const char *nearest = NULL;

		for (size_t j = 0; j < sizeof(cases) / sizeof(cases[0]); j++) {
			double d = fabs(h - legend_hue(svg, cases[j].word));

			d = fmin(d, 360 - d);
			if (d < best) {
				best = d;
				nearest = cases[j].word;
			}
		}
		assert_string_equal(nearest, cases[i].word);
		assert_true(best < 20);
	}
	assert_true(frame_hue(svg, "[unknown]") < 0); /* grey */
	assert_non_null(strstr(svg, ">unknown</text>"));
	free(svg);
	/* off-CPU: native code blue, the other kinds as on-CPU */
	svg = draw(&st, FLAMEGRAPH_OFFCPU);
	assert_true(fabs(frame_hue(svg, "native_work") - 212) < 20);
	assert_true(fabs(frame_hue(svg, "run_cycle (loop.py)") - legend_hue(svg, "Python")) < 10);
	free(svg);
	/* a legend names only the kinds drawn */
	folded__free(&st);
	assert_int_equal(folded__add(&st, "app;main;native_work", 10), 0);
	svg = draw(&st, FLAMEGRAPH_ONCPU);
	assert_non_null(strstr(svg, ">native</text>"));
	assert_null(strstr(svg, ">Python</text>"));
	free(svg);
	folded__free(&st);
}

/* The <svg> element's height and viewBox. */
static void svg_box(const char *svg, int *height, int *y0, int *vw, int *vh)
{
	const char *p = strstr(svg, "<svg ");

	assert_non_null(p);
	assert_non_null(strstr(p, "width=\"100%\""));
	assert_int_equal(sscanf(strstr(p, "height=\""), "height=\"%d\"", height), 1);
	assert_int_equal(sscanf(strstr(p, "viewBox=\""), "viewBox=\"0 %d %d %d\"", y0, vw, vh), 3);
}

static void test_height_is_the_deepest_visible_row(void **state)
{
	struct folded st = {};
	char tower[4096] = "app;main;tower";
	int height, y0, vw, vh, rows_drawn = 3 + 150;
	char *svg;

	(void)state;
	/* 10,000 samples 4 frames deep; one sample in a tower of 153 frames:
	 * 0.12 px wide at the reference width, drawn (zoom shows it) but not
	 * visible, so it adds no height */
	assert_int_equal(folded__add(&st, "app;main;work;hot", 10000), 0);
	for (int i = 0; i < 150; i++)
		snprintf(tower + strlen(tower), sizeof(tower) - strlen(tower), ";f%d", i);
	assert_int_equal(folded__add(&st, tower, 1), 0);
	svg = draw(&st, FLAMEGRAPH_ONCPU);
	svg_box(svg, &height, &y0, &vw, &vh);
	assert_int_equal(vw, 1200);
	assert_int_equal(height, 40 + 20 + 4 * 16);
	assert_int_equal(vh, height);
	/* the root at the bottom of every row drawn; the view is its top cut */
	assert_int_equal(y0 + vh, 40 + 20 + rows_drawn * 16);
	assert_non_null(strstr(svg, "<title>f149 (1 samples"));
	free(svg);
	/* the tower 2 px wide: visible, all its rows shown */
	folded__free(&st);
	assert_int_equal(folded__add(&st, "app;main;work;hot", 1000), 0);
	assert_int_equal(folded__add(&st, tower, 2), 0);
	svg = draw(&st, FLAMEGRAPH_ONCPU);
	svg_box(svg, &height, &y0, &vw, &vh);
	assert_int_equal(height, 40 + 20 + rows_drawn * 16);
	assert_int_equal(y0, 0);
	free(svg);
	folded__free(&st);
	/* no samples: one row's height, the note */
	svg = draw(&st, FLAMEGRAPH_ONCPU);
	svg_box(svg, &height, &y0, &vw, &vh);
	assert_int_equal(height, 40 + 20 + 16);
	assert_non_null(strstr(svg, "no samples"));
	assert_null(strstr(svg, "fg-legend"));
	free(svg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds_by_name),
		cmocka_unit_test(test_colours_by_kind_with_legend),
		cmocka_unit_test(test_height_is_the_deepest_visible_row),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
