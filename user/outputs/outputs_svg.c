// SPDX-License-Identifier: BSD-2-Clause
/* Flame graph SVG from folded stacks: the stacks are merged into a tree
 * (children sorted by name, as flamegraph.pl does, so equal prefixes sit
 * side by side), then each node becomes a rectangle whose width is its share
 * of the samples, root at the bottom. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "html_text.h"
#include "frame_kind.h"
#include "outputs.h"
#include "text.h"
#include "vec.h"

#define SVG_WIDTH 1200.0 /* the reference width: the script scales to the window's */
#define FRAME_H 16
#define PAD_TOP 40
#define PAD_BOTTOM 20
#define PAD_X 10
#define MIN_WIDTH_PX 0.1 /* narrower frames are not drawn (flamegraph.pl's --minwidth) */
#define VISIBLE_PX 1.0   /* the height fits the deepest row with a frame this wide */
#define CHAR_PX 6.6

/* Click to zoom, search with highlight and its share, as FlameGraph's SVGs
 * do; hover details are each frame's <title>. The view is in the URL's
 * fragment (#search=RE, #zoom=NAME) so that it can be shared. Scoped to its
 * own <svg>: report.html embeds the graph. The file is laid out for a
 * reference width W; layout() scales it to the width the <svg> really has
 * (width 100%: the window's, or its box in report.html) and cuts the height
 * to the deepest row with a frame at least VIS px wide, at every resize and
 * zoom. The root stays at the bottom (HF, the height of every row drawn):
 * only the viewBox's top moves. A hidden graph (another phase in
 * report.html) is laid out when it is shown. */
static const char svg_script[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"(function () {\n"
"var svg = document.currentScript ? document.currentScript.closest('svg') : document.documentElement;\n"
"var W = %.1f, X0 = %d, CH = %.1f, FH = %d, TOP = %d, BOTTOM = %d, HF = %d, VIS = %.1f;\n"
"var frames = [].slice.call(svg.querySelectorAll('g.f')).map(function (g) {\n"
"  var r = g.querySelector('rect'), t = g.querySelector('title').textContent, y = +r.getAttribute('y');\n"
"  return { g: g, r: r, t: g.querySelector('text'), name: t.replace(/ \\([^()]*\\)$/, ''), y: y,\n"
"           depth: Math.round((HF - BOTTOM - y) / FH) - 1,\n"
"           x: +r.getAttribute('x'), w: +r.getAttribute('width'), fill: r.getAttribute('fill') };\n"
"});\n"
"var q = function (c) { return svg.querySelector(c); };\n"
"var reset = q('.fg-reset'), matched = q('.fg-matched'), find = q('.fg-search'), bg = q('.fg-bg');\n"
"var top = [q('.fg-title'), reset, find], centred = [q('.fg-title'), q('.fg-empty')];\n"
"var zoomed = null, shownW = 0;\n"
"function label(f, w) {\n"
"  var fit = w > 3 * CH ? Math.floor((w - 6) / CH) : 0;\n"
"  if (!f.t) { f.t = document.createElementNS('http://www.w3.org/2000/svg', 'text'); f.t.setAttribute('y', f.y + FH - 5); f.g.appendChild(f.t); }\n"
"  f.t.textContent = fit < 3 ? '' : f.name.length > fit ? f.name.slice(0, fit - 2) + '..' : f.name;\n"
"}\n"
"function place(f, x, w) {\n"
"  f.r.setAttribute('x', x.toFixed(1)); f.r.setAttribute('width', w.toFixed(1));\n"
"  label(f, w); if (f.t) f.t.setAttribute('x', (x + 3).toFixed(1));\n"
"}\n"
"function layout() {\n"
"  var dw = svg.getBoundingClientRect().width, z = zoomed, rows = 1;\n"
"  if (!dw) return;\n"
"  shownW = dw;\n"
"  var k = (dw - 2 * X0) / (W - 2 * X0), zk = z ? (W - 2 * X0) / z.w : 1;\n"
"  frames.forEach(function (f) {\n"
"    var inside = !z || (f.y <= z.y && f.x >= z.x - 1e-6 && f.x + f.w <= z.x + z.w + 1e-6);\n"
"    var below = z && f.y > z.y && f.x <= z.x + 1e-6 && f.x + f.w >= z.x + z.w - 1e-6;\n"
"    var x = below ? X0 : z ? X0 + (f.x - z.x) * zk : f.x, w = below ? W - 2 * X0 : z ? f.w * zk : f.w;\n"
"    f.g.style.display = inside || below ? '' : 'none';\n"
"    f.g.style.opacity = below ? 0.5 : 1;\n"
"    if (!inside && !below) return;\n"
"    place(f, X0 + (x - X0) * k, w * k);\n"
"    if (w * k >= VIS && f.depth + 1 > rows) rows = f.depth + 1;\n"
"  });\n"
"  var h = TOP + BOTTOM + rows * FH, y0 = HF - h;\n"
"  svg.setAttribute('viewBox', '0 ' + y0 + ' ' + dw.toFixed(1) + ' ' + h);\n"
"  svg.setAttribute('height', h);\n"
"  bg.setAttribute('y', y0);\n"
"  top.forEach(function (t) { t.setAttribute('y', y0 + 24); });\n"
"  centred.forEach(function (t) { if (t) t.setAttribute('x', (dw / 2).toFixed(1)); });\n"
"  find.setAttribute('x', (dw - X0).toFixed(1)); matched.setAttribute('x', (dw - X0).toFixed(1));\n"
"}\n"
"function zoom(z) { zoomed = z; layout(); reset.style.display = ''; frag('zoom', z.name); }\n"
"function unzoom() { zoomed = null; layout(); reset.style.display = 'none'; frag('zoom', null); }\n"
"function search(term) {\n"
"  var re = null, spans = [], cover = 0, end = -1;\n"
"  try { re = term ? new RegExp(term) : null; } catch (e) { re = null; }\n"
"  frames.forEach(function (f) {\n"
"    var hit = re && re.test(f.name);\n"
"    f.r.setAttribute('fill', hit ? 'rgb(230,0,230)' : f.fill);\n"
"    if (hit) spans.push([f.x, f.x + f.w]);\n"
"  });\n"
"  /* the union of the matching frames' spans: a match inside a match counts once */\n"
"  spans.sort(function (a, b) { return a[0] - b[0]; }).forEach(function (s) {\n"
"    if (s[1] > end) { cover += s[1] - Math.max(s[0], end); end = s[1]; }\n"
"  });\n"
"  matched.textContent = re ? 'Matched: ' + (100 * cover / (W - 2 * X0)).toFixed(1) + '%%' : '';\n"
"  frag('search', re ? term : null);\n"
"}\n"
"function frag(key, v) {\n"
"  var p = new URLSearchParams(location.hash.slice(1));\n"
"  if (v === null) p.delete(key); else p.set(key, v);\n"
"  history.replaceState(null, '', '#' + p.toString());\n"
"}\n"
"function resized() { var dw = svg.getBoundingClientRect().width; if (dw && dw !== shownW) layout(); }\n"
"frames.forEach(function (f) { f.g.style.cursor = 'pointer'; f.g.addEventListener('click', function () { zoom(f); }); });\n"
"reset.addEventListener('click', unzoom);\n"
"find.addEventListener('click', function () {\n"
"  var t = prompt('Search (regular expression):', ''); if (t !== null) search(t);\n"
"});\n"
"if (window.ResizeObserver) new ResizeObserver(resized).observe(svg);\n"
"window.addEventListener('resize', resized);\n"
"layout();\n"
"var p = new URLSearchParams(location.hash.slice(1));\n"
"if (p.get('search')) search(p.get('search'));\n"
"var z = p.get('zoom') && frames.filter(function (f) { return f.name === p.get('zoom'); })[0];\n"
"if (z) z.g.dispatchEvent(new MouseEvent('click'));\n"
"})();\n"
"]]></script>\n";

struct node {
	char *name;
	uint64_t count;
	uint64_t base; /* a differential graph: the base's count on this frame */
	struct node **kids;
	size_t nkids, cap;
};

static struct node *node_child(struct node *n, const char *name, size_t len)
{
	for (size_t i = 0; i < n->nkids; i++)
		if (strlen(n->kids[i]->name) == len && !strncmp(n->kids[i]->name, name, len))
			return n->kids[i];
	if (VEC_RESERVE(n->kids, n->cap, n->nkids, 4))
		return NULL;
	struct node *c = calloc(1, sizeof(*c));

	if (!c || !(c->name = strndup(name, len))) {
		free(c);
		return NULL;
	}
	n->kids[n->nkids++] = c;
	return c;
}

static void node_free(struct node *n)
{
	for (size_t i = 0; i < n->nkids; i++) {
		node_free(n->kids[i]);
		free(n->kids[i]);
	}
	free(n->kids);
	free(n->name);
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(struct node *const *)a)->name, (*(struct node *const *)b)->name);
}

static void node_sort(struct node *n)
{
	if (n->nkids > 1)
		qsort(n->kids, n->nkids, sizeof(*n->kids), by_name);
	for (size_t i = 0; i < n->nkids; i++)
		node_sort(n->kids[i]);
}

/* The rows above n holding a frame at least min_px wide: a child is never
 * wider than its parent, so a narrower frame's subtree has none. */
static int node_rows(const struct node *n, double scale, double min_px)
{
	int d = 0;

	for (size_t i = 0; i < n->nkids; i++) {
		int k = n->kids[i]->count * scale >= min_px ? 1 + node_rows(n->kids[i], scale, min_px) : 0;

		if (k > d)
			d = k;
	}
	return d;
}

/* Each kind of frame has its band of hues, the name's hash picks the hue
 * in it and the shade, so a name keeps its colour across runs: native code
 * reds (off-CPU: blues, FlameGraph's "io" palette), kernel orange, Python
 * yellow, JIT/JS green (flamegraph.pl's java palette), unknown grey. */
struct hue_band {
	double lo, hi;
};

static const struct hue_band bands[FRAME_NKINDS] = {
	[FRAME_NATIVE] = { 0, 14 }, [FRAME_KERNEL] = { 24, 36 }, [FRAME_PYTHON] = { 46, 58 },
	[FRAME_JIT] = { 95, 130 },
};
static const struct hue_band offcpu_native = { 200, 225 };

static void hsl(double h, double s, double l, char *buf, size_t len)
{
	double c = (1 - fabs(2 * l - 1)) * s, x = c * (1 - fabs(fmod(h / 60, 2) - 1)), m = l - c / 2;
	double r = 0, g = 0, b = 0;

	if (h < 60)
		r = c, g = x;
	else if (h < 120)
		r = x, g = c;
	else if (h < 180)
		g = c, b = x;
	else if (h < 240)
		g = x, b = c;
	else if (h < 300)
		r = x, b = c;
	else
		r = c, b = x;
	snprintf(buf, len, "rgb(%d,%d,%d)", (int)lround(255 * (r + m)), (int)lround(255 * (g + m)),
		 (int)lround(255 * (b + m)));
}

static const struct hue_band *band_of(enum frame_kind k, enum flamegraph_palette pal)
{
	return k == FRAME_NATIVE && pal == FLAMEGRAPH_OFFCPU ? &offcpu_native : &bands[k];
}

static void color_of(const char *name, enum frame_kind k, enum flamegraph_palette pal, char *buf, size_t len)
{
	const struct hue_band *b = band_of(k, pal);
	uint32_t h = 2166136261u;

	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	if (k == FRAME_UNKNOWN) {
		snprintf(buf, len, "rgb(%u,%u,%u)", 170 + h % 20, 170 + h % 20, 170 + h % 20);
		return;
	}
	hsl(b->lo + (b->hi - b->lo) * (h % 1000) / 999.0, 0.70 + (h >> 10) % 20 / 100.0,
	    0.55 + (h >> 16) % 15 / 100.0, buf, len);
}

/* The legend's swatch: the middle of the kind's band. */
static void legend_color(enum frame_kind k, enum flamegraph_palette pal, char *buf, size_t len)
{
	const struct hue_band *b = band_of(k, pal);

	if (k == FRAME_UNKNOWN)
		snprintf(buf, len, "rgb(180,180,180)");
	else
		hsl((b->lo + b->hi) / 2, 0.78, 0.62, buf, len);
}

struct svg_ctx {
	FILE *out;
	double scale; /* px per sample */
	uint64_t total;
	int height;   /* of every row drawn: the root sits at its bottom */
	unsigned kinds; /* 1 << frame_kind of each frame drawn: the legend's */
	const char *unit;
	enum flamegraph_palette palette;
	uint64_t base_total; /* differential: the base's total */
	double max_delta;    /* differential: the largest |share - base share| */
};

/* A differential frame's colour, as flamegraph.pl's: red for a share that
 * grew, blue for one that shrank, deeper the larger the change against the
 * largest; white for none. */
static void diff_color(const struct svg_ctx *c, double delta, char *buf, size_t len)
{
	unsigned v = c->max_delta > 0 ? (unsigned)(210 * (c->max_delta - fabs(delta)) / c->max_delta) : 255;

	if (delta > 0)
		snprintf(buf, len, "rgb(255,%u,%u)", v, v);
	else if (delta < 0)
		snprintf(buf, len, "rgb(%u,%u,255)", v, v);
	else
		snprintf(buf, len, "rgb(255,255,255)");
}

static double share_of(const struct svg_ctx *c, const struct node *n)
{
	return c->total ? (double)n->count / c->total : 0;
}

/* The change of the frame's share of all samples, base to graph: counts,
 * not sums of shares, so that an unchanged frame is exactly 0 (white). */
static double delta_of(const struct svg_ctx *c, const struct node *n)
{
	return share_of(c, n) - (c->base_total ? (double)n->base / c->base_total : 0);
}

static void max_delta(struct svg_ctx *c, const struct node *n, bool root)
{
	double d = fabs(delta_of(c, n));

	if (!root && d > c->max_delta)
		c->max_delta = d;
	for (size_t i = 0; i < n->nkids; i++)
		max_delta(c, n->kids[i], false);
}

static void emit(struct svg_ctx *c, const struct node *n, double x, int depth)
{
	double w = n->count * c->scale, cx = x;
	double y = c->height - PAD_BOTTOM - (depth + 1) * FRAME_H;
	char color[32];

	if (w < MIN_WIDTH_PX)
		return;
	if (depth >= 0) {
		if (c->palette == FLAMEGRAPH_DIFF) {
			diff_color(c, delta_of(c, n), color, sizeof(color));
		} else {
			enum frame_kind k = frame_kind__of(n->name, strlen(n->name));

			color_of(n->name, k, c->palette, color, sizeof(color));
			c->kinds |= 1u << k;
		}
		fprintf(c->out, "<g class=\"f\"><title>");
		html_text__escape(c->out, n->name);
		fprintf(c->out, " (%llu %s, %.2f%%", (unsigned long long)n->count, c->unit, 100.0 * share_of(c, n));
		if (c->palette == FLAMEGRAPH_DIFF)
			fprintf(c->out, "; %+.2f points against the base", 100.0 * delta_of(c, n));
		fprintf(c->out, ")</title><rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%d\" "
			"fill=\"%s\" rx=\"2\"/>", x, y, w, FRAME_H - 1, color);
		size_t fit = w > 3 * CHAR_PX ? (size_t)((w - 6) / CHAR_PX) : 0;

		if (fit >= 3) {
			char label[512];
			size_t len = strlen(n->name);

			if (len > fit) {
				snprintf(label, sizeof(label), "%.*s..", (int)(fit - 2 < sizeof(label) - 3 ? fit - 2 : sizeof(label) - 3),
					 n->name);
			} else {
				snprintf(label, sizeof(label), "%s", n->name);
			}
			fprintf(c->out, "<text x=\"%.1f\" y=\"%.0f\">", x + 3, y + FRAME_H - 5);
			html_text__escape(c->out, label);
			fprintf(c->out, "</text>");
		}
		fprintf(c->out, "</g>\n");
	}
	for (size_t i = 0; i < n->nkids; i++) {
		emit(c, n->kids[i], cx, depth + 1);
		cx += n->kids[i]->count * c->scale;
	}
}

/* Adds the stacks' counts to the tree (base: to the base's counts), on the
 * frames they pass through. A base frame absent from
 * the graph adds none: the graph shows the new stacks' frames only, as
 * flamegraph.pl's differential graphs do. */
static int tree_add(struct node *root, const struct folded *stacks, bool base)
{
	for (size_t i = 0; i < stacks->n; i++) {
		const char *s = stacks->entries[i].stack;
		uint64_t v = stacks->entries[i].count;
		struct node *n = root;

		if (base)
			root->base += v;
		else
			root->count += v;
		while (*s) {
			size_t len = strcspn(s, ";");

			n = node_child(n, s, len);
			if (!n)
				return -ENOMEM;
			if (base)
				n->base += v;
			else
				n->count += v;
			s += len + (s[len] == ';');
		}
	}
	return 0;
}

/* Drops the frames only the base has (zero width in the graph). */
static void tree_prune(struct node *n)
{
	size_t k = 0;

	for (size_t i = 0; i < n->nkids; i++) {
		if (n->kids[i]->count) {
			tree_prune(n->kids[i]);
			n->kids[k++] = n->kids[i];
		} else {
			node_free(n->kids[i]);
			free(n->kids[i]);
		}
	}
	n->nkids = k;
}

/* The kinds of frame drawn, each a swatch and its name, at the bottom left
 * (the bottom stays put as the script moves the top). */
static void write_legend(const struct svg_ctx *c)
{
	double x = PAD_X;
	char color[32];

	if (c->palette == FLAMEGRAPH_DIFF || !c->kinds)
		return;
	fprintf(c->out, "<g class=\"fg-legend\">");
	for (int k = 0; k < FRAME_NKINDS; k++) {
		if (!(c->kinds & (1u << k)))
			continue;
		legend_color(k, c->palette, color, sizeof(color));
		fprintf(c->out, "<rect x=\"%.0f\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			"<text x=\"%.0f\" y=\"%d\">%s</text>", x, c->height - 14, color, x + 14, c->height - 5,
			frame_kind_names[k]);
		x += 14 + strlen(frame_kind_names[k]) * CHAR_PX + 14;
	}
	fprintf(c->out, "</g>\n");
}

int flamegraph__write(const struct folded *stacks, const struct flamegraph_opts *o, FILE *out)
{
	struct node root = { .name = NULL };
	struct svg_ctx c = { .out = out, .unit = o->unit ? o->unit : "samples", .palette = o->palette };
	const char *title = o->title;
	int err, rows, visible, view_h, y0;

	err = tree_add(&root, stacks, false);
	if (!err && o->palette == FLAMEGRAPH_DIFF && o->base) {
		err = tree_add(&root, o->base, true);
		tree_prune(&root);
		c.base_total = root.base;
	}
	node_sort(&root);
	c.total = root.count;
	c.scale = root.count ? (SVG_WIDTH - 2 * PAD_X) / root.count : 0;
	/* every row drawn, and those shown: a tower of frames too narrow to
	 * see (a JIT's deep recursion in a few samples) gets no empty band;
	 * zooming into it shows it */
	rows = node_rows(&root, c.scale, MIN_WIDTH_PX);
	visible = node_rows(&root, c.scale, VISIBLE_PX);
	c.height = PAD_TOP + PAD_BOTTOM + (rows > 0 ? rows : 1) * FRAME_H;
	view_h = PAD_TOP + PAD_BOTTOM + (visible > 0 ? visible : 1) * FRAME_H;
	y0 = c.height - view_h;
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"100%%\" height=\"%d\" viewBox=\"0 %d %.0f %d\" "
		"preserveAspectRatio=\"xMinYMin meet\" xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text{font-family:Verdana,sans-serif;font-size:11px;fill:#000;pointer-events:none}"
		"rect:hover{stroke:#000;stroke-width:0.5}</style>\n"
		"<rect class=\"fg-bg\" x=\"0\" y=\"%d\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text class=\"fg-title\" x=\"%.0f\" y=\"%d\" style=\"font-size:17px\" text-anchor=\"middle\">",
		view_h, y0, SVG_WIDTH, view_h, y0, SVG_WIDTH / 2, y0 + 24);
	html_text__escape(out, title ? title : "Flame Graph");
	fprintf(out, "</text>\n");
	fprintf(out, "<text class=\"fg-reset\" x=\"%d\" y=\"%d\" style=\"display:none;cursor:pointer;pointer-events:all\">"
		"Reset Zoom</text>\n<text class=\"fg-search\" x=\"%.0f\" y=\"%d\" text-anchor=\"end\" "
		"style=\"cursor:pointer;pointer-events:all\">Search</text>\n"
		"<text class=\"fg-matched\" x=\"%.0f\" y=\"%d\" text-anchor=\"end\"></text>\n",
		PAD_X, y0 + 24, SVG_WIDTH - PAD_X, y0 + 24, SVG_WIDTH - PAD_X, c.height - 5);
	if (!root.count)
		fprintf(out, "<text class=\"fg-empty\" x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">no samples</text>\n",
			SVG_WIDTH / 2, PAD_TOP + FRAME_H);
	if (c.palette == FLAMEGRAPH_DIFF)
		max_delta(&c, &root, true);
	if (root.count)
		emit(&c, &root, PAD_X, -1); /* the root itself is not drawn */
	write_legend(&c);
	fprintf(out, svg_script, SVG_WIDTH, PAD_X, CHAR_PX, FRAME_H, PAD_TOP, PAD_BOTTOM, c.height, VISIBLE_PX);
	fprintf(out, "</svg>\n");
	node_free(&root);
	if (!err && ferror(out))
		err = -EIO;
	return err;
}

