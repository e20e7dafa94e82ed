# SPDX-License-Identifier: BSD-2-Clause
"""timeline.speedscope.json, the samples per thread in time order, opened
in real speedscope (npm's, in headless Chromium). The fixture runs three
threads it names itself (the process's main thread, tl-alpha, tl-beta),
each in known functions over known windows of its own CLOCK_MONOTONIC
clock, and prints them. Checked: the file is valid against speedscope's
schema, with one profile per thread named by the kernel's comm and as many
samples as trace.json has for the thread, every stack a line of
stacks.folded; in speedscope, the thread names show, each thread's total
is its samples' weights, and hovering the time-order view across each
thread's timeline finds each function only inside its window (the
fixture's clock against the file's zero, trace.json's time origin) and
about as often as the file covers it. Shapes are compared, not where one
sample lands. profile.pb.gz names the threads alike (its thread_name
label, read back by `go tool pprof`)."""
import collections
import json
import os
import re
import stat
import unittest

import common

# probes: one hover every STEP px of speedscope's flame chart, on the rows
# of the functions looked for only: each hover redraws the chart in software
# GL (30 ms in a window WIDTH x HEIGHT on a busy machine, twice that at
# twice the area). Rows are 20 px tall from 28 px below the chart's top,
# which is 122 px below the window's (speedscope 1.25).
WIDTH, HEIGHT, STEP = 800, 400, 4
PROBE = """
var ROWS = %(rows)s, ROOT = %(root)s;
(async function () {
  var sleep = function (ms) { return new Promise(function (r) { setTimeout(r, ms); }); };
  var key = function (k) { window.dispatchEvent(new KeyboardEvent('keypress', {key: k})); };
  var text = function () { return document.body.innerText; };
  var shown = function () {
    var m = text().match(/\\n([^\\n]+) \\((\\d+)\\/(\\d+)\\)\\n/);
    return m && {name: m[1], index: +m[2], of: +m[3]};
  };
  var hover = async function (cx, cy) {
    var el = document.elementFromPoint(cx, cy);
    if (!el) return null;
    el.dispatchEvent(new MouseEvent('mousemove', {clientX: cx, clientY: cy, bubbles: true}));
    await sleep(1);
    var m = text().match(/\\n[0-9.]+(?:ns|\\u00b5s|ms|s) \\([0-9.<]+%%\\) ([^\\n]*)\\s*$/);
    return m ? m[1] : null;
  };
  var chart = function () {
    return [].slice.call(document.querySelectorAll('canvas')).map(function (c) { return c.getBoundingClientRect(); })
      .filter(function (b) { return b.top > 50 && b.height > 100; })[0];
  };
  /* a chart answers once its view of the profile is set up: the root
   * frame's row, wherever the thread was sampled (a profile left before
   * that keeps an empty view: wait on the first one shown too) */
  var ready = async function () {
    for (var w = 0; w < 20; w++) {
      var r = chart();
      for (var x = 0.05; r && x < 1; x += 0.1)
        if ((await hover(r.left + x * r.width, r.top + 28)) !== null) return r;
      window.dispatchEvent(new Event('resize'));
      await sleep(100);
    }
    return chart();
  };
  for (var w = 0; w < 200 && !shown(); w++) await sleep(50);
  var t = shown();
  if (!t) { console.log('DONE'); return; }
  await ready();
  while (t.index > 1) { key('p'); await sleep(50); t = shown(); }
  for (var k = 0; k < t.of; k++) {
    var cur = shown();
    key('3');
    /* only the table's rows in view are drawn, a render or two later:
     * sorted by total, the root frame's is first */
    var total = function () {
      return [].slice.call(document.querySelectorAll('th')).filter(function (e) { return e.textContent == 'Total'; })[0];
    };
    for (var w = 0; w < 100 && !total(); w++) await sleep(20);
    if (k == 0 && total()) total().click();
    for (var w = 0; w < 150 && (text() + '\\n').indexOf('\\t' + ROOT + '\\n') < 0; w++) {
      if (w %% 10 == 9) window.dispatchEvent(new Event('resize')); /* the table measures its view again */
      await sleep(20);
    }
    var sandwich = text();
    key('1'); await sleep(100);
    var r = await ready();
    var probes = [], rows = ROWS[cur.name] || [];
    for (var x = %(step)d / 2; x < r.width; x += %(step)d) {
      var names = {};
      for (var i = 0; i < rows.length; i++)
        names[rows[i]] = await hover(r.left + x, r.top + 28 + 20 * rows[i]);
      probes.push([x, names]);
    }
    console.log(JSON.stringify({name: cur.name, sandwich: sandwich, width: r.width, probes: probes}));
    key('n'); await sleep(100);
  }
  console.log('DONE');
})();
"""


def ns_of(shown):
    """speedscope's time text ("311.41ms", "1.32s", "850.00µs") in ns, and
    its unit in ns."""
    m = re.match(r"([0-9.]+)(ns|µs|ms|s)$", shown)
    unit = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]
    return float(m.group(1)) * unit, unit


def sandwich_total(text, frame):
    """The Total cell of frame's row in speedscope's sandwich table."""
    cells = [c.strip() for c in text.split("\n") if c.strip()]
    for i in range(cells.index("Total\tSelf\tSymbol Name") + 1, len(cells) - 2, 3):
        if cells[i + 2] == frame:
            return cells[i].split(" ")[0]
    raise AssertionError(f"{frame} not in the sandwich table: {cells[:40]}")


@common.need_root
class TimelineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rec = common.record([], [common.fixture("timeline_exp")])
        cls.truth = json.loads(cls.rec.stdout)
        cls.path = os.path.join(cls.rec.dir, "timeline.speedscope.json")
        cls.doc = common.load_json(cls.path)
        trace = common.load_json(os.path.join(cls.rec.dir, "trace.json"))
        cls.trace = trace
        cls.origin = int(re.search(r"CLOCK_MONOTONIC (\d+) ns", trace["otherData"]["time_origin"]).group(1))
        cls.period = 10 ** 9 // cls.rec.profile["config"]["frequency"]
        cls.frames = [f["name"] for f in cls.doc["shared"]["frames"]]
        cls.profiles = {p["name"]: p for p in cls.doc["profiles"]}
        cls.trace_counts = collections.Counter(e["tid"] for e in trace["traceEvents"]
                                               if e["ph"] == "i" and e.get("cat") == "sample")

    def label(self, t):
        return f"{t['name']} (tid {t['tid']})"

    def samples(self, p):
        """[(start ns, weight, stack)] of profile p's samples, empty stacks left out."""
        out, at = [], 0
        for stack, w in zip(p["samples"], p["weights"]):
            if stack:
                out.append((at, w, ";".join(self.frames[i] for i in stack)))
            at += w
        return out

    def test_file(self):
        """One profile per sampled thread, named by the thread's comm (set
        by the fixture with pthread_setname_np), with trace.json's samples
        of the thread, each stack a line of stacks.folded; valid against
        speedscope's schema; the timeline's extent is the recording's;
        owner-only, as every output."""
        self.assertEqual(stat.S_IMODE(os.stat(self.path).st_mode), 0o600)
        self.assertIn("timeline.speedscope.json", self.rec.profile["outputs"]["files"])
        schema = os.path.join(os.path.dirname(common.SPEEDSCOPE), "file-format-schema.json")
        if os.path.exists(schema):
            import jsonschema
            jsonschema.validate(self.doc, common.load_json(schema))
        by_tid = {t["tid"]: t for t in self.truth["threads"]}
        sampled = {tid for tid in self.trace_counts if tid in by_tid}
        self.assertGreaterEqual(len(sampled), 2, self.trace_counts)
        self.assertLessEqual(set(self.trace_counts), set(by_tid))
        self.assertEqual(set(self.profiles), {self.label(by_tid[tid]) for tid in self.trace_counts})
        self.assertEqual(len(set(self.frames)), len(self.frames))  # shared: each name once
        folded = self.rec.folded()
        total = 0
        for tid in sampled:
            p = self.profiles[self.label(by_tid[tid])]
            self.assertEqual((p["type"], p["unit"], p["startValue"]), ("sampled", "nanoseconds", 0))
            self.assertEqual(len(p["samples"]), len(p["weights"]))
            self.assertTrue(all(w > 0 for w in p["weights"]))
            got = self.samples(p)
            self.assertEqual(len(got), self.trace_counts[tid], p["name"])
            self.assertTrue(all(s in folded for _, _, s in got))
            total += len(got)
            self.assertGreaterEqual(p["endValue"], sum(p["weights"]))
            self.assertAlmostEqual(p["endValue"] / 1e9, self.rec.profile["duration_s"], delta=0.05)
        if not self.rec.profile["lost"].get("trace_samples_not_kept"):
            self.assertEqual(sum(self.trace_counts.values()), sum(folded.values()))
        # trace.json names the threads' tracks alike
        names = {e["tid"]: e["args"]["name"] for e in self.trace["traceEvents"]
                 if e["ph"] == "M" and e["name"] == "thread_name"}
        for tid in sampled:
            self.assertEqual(names[tid], by_tid[tid]["name"])

    @unittest.skipUnless(common.GO, "no go (make deps installs golang-go)")
    def test_pprof_names_the_threads(self):
        """profile.pb.gz labels each sample with its thread's own name
        (thread_name) besides its TID: `go tool pprof -tags` lists the
        fixture's names, each with its thread's share of the samples."""
        by_tid = {t["tid"]: t for t in self.truth["threads"]}
        total = sum(self.trace_counts.values())
        got = common.pprof_tags(common.pprof(os.path.join(self.rec.dir, "profile.pb.gz"), "-tags",
                                             "-sample_index=samples"))
        self.assertIn("thread_name", got, got)
        want = collections.Counter()
        for tid, n in self.trace_counts.items():
            want[by_tid[tid]["name"]] += 100.0 * n / total
        self.assertEqual(set(got["thread_name"]), set(want))
        for name, share in want.items():
            self.assertAlmostEqual(got["thread_name"][name], share, delta=0.1, msg=name)

    def window(self, span):
        """The span's window on the timeline, ns from the recording's start."""
        return span["start_ns"] - self.origin, span["end_ns"] - self.origin

    def test_samples_sit_at_their_time(self):
        """In the file, every sample holding a function lies in that
        function's window by the fixture's clock: a sample stands for the
        period before it, and lasts 1.5 periods at most."""
        for t in self.truth["threads"]:
            p = self.profiles.get(self.label(t))
            if not p:
                continue
            got = self.samples(p)
            for span in t["spans"]:
                lo, hi = self.window(span)
                hits = [(at, w) for at, w, s in got if span["fn"] in s.split(";")]
                # (the function is entered a few µs before its first clock read)
                for at, w in hits:
                    self.assertGreaterEqual(at, lo - self.period - 1e6, (span, at))
                    self.assertLessEqual(at + w, hi + 1.5 * self.period + 1e6, (span, at, w))

    def rows_of(self, t):
        """The rows (depths, root 0) of thread t's functions in its stacks."""
        p = self.profiles.get(self.label(t))
        fns = {span["fn"] for span in t["spans"]}
        rows = set()
        for _, _, stack in self.samples(p) if p else []:
            frames = stack.split(";")
            rows |= {frames.index(f) for f in fns if f in frames}
        return sorted(rows)

    def test_speedscope_shows_threads_counts_and_times(self):
        """In speedscope: every thread's name; its total (Sandwich, the
        process's root frame: in every stack) is its samples' weights;
        hovering across the time-order view finds its functions where the
        fixture's clock ran them."""
        rows = {self.label(t): self.rows_of(t) for t in self.truth["threads"]}
        self.assertLess(max(max(r, default=0) for r in rows.values()), (HEIGHT - 122 - 28) // 20, rows)
        comm = self.rec.profile["processes"][0]["comm"]
        console = common.speedscope_run(self.path, PROBE % {"rows": json.dumps(rows), "root": json.dumps(comm),
                                                            "step": STEP}, size=(WIDTH, HEIGHT))
        self.assertEqual(console[-1:], ["DONE"], console[-5:])
        shown = [json.loads(c) for c in console if c.startswith("{")]
        # every thread, by its name
        self.assertEqual(sorted(s["name"] for s in shown), sorted(self.profiles))
        for s in shown:
            p = self.profiles[s["name"]]
            got = self.samples(p)
            with self.subTest(thread=s["name"]):
                # the thread's total: its samples' weights (the root frame,
                # the process's name, is in every stack), about one period each
                weights = sum(w for _, w, _ in got)
                total, unit = ns_of(sandwich_total(s["sandwich"], comm))
                self.assertLessEqual(abs(total - weights), 0.005 * unit + 1, (total, weights))
                self.assertAlmostEqual(weights / self.period, len(got), delta=0.5 * len(got))
                self.check_times(s, p, got)

    def check_times(self, s, p, got):
        """Each function of the thread shows in speedscope only inside its
        window, and covers about the share of the window the file's samples
        cover (a busy machine gives the thread less than the window)."""
        span_ns = max(p["endValue"], sum(p["weights"]))
        px = span_ns / s["width"]
        thread = next(t for t in self.truth["threads"] if self.label(t) == s["name"])
        probes = [(x * px, set(names.values())) for x, names in s["probes"]]
        for span in thread["spans"]:
            lo, hi = self.window(span)
            fn = span["fn"]
            hits = [at for at, names in probes if fn in names]
            slack = 2 * px + 1e6
            outside = [at for at in hits if not lo - self.period - slack <= at <= hi + 1.5 * self.period + slack]
            self.assertEqual(outside, [], (fn, lo, hi))
            # coverage inside the window: the viewer's against the file's
            inner = [(at, fn in names) for at, names in probes if lo <= at <= hi]
            shown = sum(h for _, h in inner) / len(inner)
            slots = [(at, at + w) for at, w, st in got if fn in st.split(";")]
            covered = sum(1 for at, _ in inner if any(a <= at < b for a, b in slots)) / len(inner)
            self.assertAlmostEqual(shown, covered, delta=0.1, msg=(fn, shown, covered))
            self.assertEqual(shown > 0, covered > 0, (fn, shown, covered))


if __name__ == "__main__":
    unittest.main()
