#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make bench-torch: the tracer's own cost on a PyTorch loop, and the loop's
# slowdown under it (issue 28). tests/fixtures/py_torch_loop.py CYCLES runs
# an MLP forward pass (infer), a 5 ms sleep (pause) and an SQLite insert
# (save) per cycle and logs each call's own time. Conditions, interleaved
# run by run, medians of RUNS:
#   untraced  the loop alone;
#   first     record with py: specs (--cycle-marker py:infer, phases
#             inference/rest/database), an empty symbol cache;
#   cached    the same, with the symbol cache a warm-up run filled;
#   base      (BASE=BUILD_DIR given) an earlier build's record, same specs.
# For each traced condition: the tracer's CPU beyond start-up as a share of
# one CPU (self.recording_cpu_s over the recording) and in seconds (on a
# busy machine the loop, and so the recording, takes longer), by part
# (self.parts, whole run), its start-up CPU, the end's collection
# (self.collect_cpu_s, part of the recording's), its BPF programs' share
# of one CPU (self.bpf); for all: the loop's own time
# per cycle (infer + pause + save, median over cycles) and traced/untraced.
#   tools/bench-torch.sh [BUILD_DIR]    (as root)
# Environment: RUNS (5), CYCLES (250: ~10 s traced on the 2-CPU VM),
# PYTHON (/usr/bin/python3.11), BASE, BENCH_OUT (BUILD_DIR/bench-torch).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
RUNS=${RUNS:-5}
CYCLES=${CYCLES:-250}
PY=${PYTHON:-/usr/bin/python3.11}
BASE=${BASE:-}
OUT=${BENCH_OUT:-$BUILD/bench-torch}
[ "$(id -u)" -eq 0 ] || { echo "bench-torch: run as root" >&2; exit 1; }
"$PY" -c 'import torch' 2>/dev/null || { echo "bench-torch: $PY has no torch (apt-get install python3-torch)" >&2; exit 1; }
LOOP=$ROOT/tests/fixtures/py_torch_loop.py
SPECS=(--cycle-marker py:infer --phase inference=py:infer --phase rest=py:pause --phase database=py:save)
rm -rf "$OUT"
mkdir -p "$OUT/cache"
chmod 700 "$OUT/cache"

# record BIN COND RUN [CACHE_DIR]
record() {
	local dir=$OUT/$2.$3
	rm -f "$OUT/db"
	INFERTRACE_CACHE_DIR=${4:-off} "$1" record -q -o "$dir" "${SPECS[@]}" -- \
		"$PY" "$LOOP" "$CYCLES" "$OUT/$2.$3.json" "$OUT/db" >/dev/null 2>"$OUT/$2.$3.err"
}

# warm-up, not counted: fills the symbol cache and the page cache
record "$BUILD/infertrace" warmup 0 "$OUT/cache"
for ((i = 0; i < RUNS; i++)); do
	rm -f "$OUT/db"
	"$PY" "$LOOP" "$CYCLES" "$OUT/untraced.$i.json" "$OUT/db"
	rm -rf "$OUT/empty.$i" && mkdir -m 700 "$OUT/empty.$i"
	record "$BUILD/infertrace" first "$i" "$OUT/empty.$i"
	record "$BUILD/infertrace" cached "$i" "$OUT/cache"
	[ -z "$BASE" ] || record "$BASE/infertrace" base "$i"
	echo "bench-torch: run $((i + 1))/$RUNS done" >&2
done

"$PY" - "$OUT" "$RUNS" <<'PYEOF'
import json, os, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
med = statistics.median
def per_cycle(path):
    log = json.load(open(path))
    return med(c["infer"] + c["pause"] + c["save"] for c in log)
conds = [c for c in ("untraced", "base", "first", "cached") if os.path.exists(f"{out}/{c}.0.json")]
cyc = {c: [per_cycle(f"{out}/{c}.{i}.json") for i in range(runs)] for c in conds}
print(f"PyTorch loop, {runs} runs interleaved, medians")
print(f"{'condition':10} {'ms/cycle':>9} {'vs untraced':>11} {'tracer %CPU':>11} {'startup s':>9} {'rec CPU s':>9} {'run s':>6}  collect (s, of the recording's), BPF %CPU, parts (s, whole run)")
for c in conds:
    line = f"{c:10} {med(cyc[c]):9.2f} {med(cyc[c]) / med(cyc['untraced']):11.4f}"
    if c != "untraced":
        ps = [json.load(open(f"{out}/{c}.{i}/profile.json")) for i in range(runs)]
        self = [p["self"] for p in ps]
        line += f" {med(s['percent_of_one_cpu'] for s in self):11.2f} {med(s['startup_cpu_s'] for s in self):9.3f}"
        line += f" {med(s['recording_cpu_s'] for s in self):9.3f}"
        line += f" {med(p['duration_s'] for p in ps):6.2f}"
        if all("collect_cpu_s" in s for s in self):
            line += f" collect={med(s['collect_cpu_s'] for s in self):.3f}"
        if all(s["bpf"].get("available") for s in self):
            line += f" bpf%={med(s['bpf']['percent_of_one_cpu'] for s in self):.2f}"
        if all("parts" in s for s in self):
            keys = ["maps_s", "files_s", "symbol_tables_s", "unwind_modules_s", "unwind_s", "other_s"]
            line += "  " + " ".join(f"{k[:-2]}={med(s['parts'][k] for s in self):.3f}" for k in keys)
            line += f" maps_reads={med(s['parts']['maps_reads'] for s in self):.0f}"
            line += f" tables_read={med(s['symbol_cache']['tables_read'] for s in self):.0f}"
    print(line)
print("the loop's calls, ms (median over cycles, then over runs):")
for c in conds:
    logs = [json.load(open(f"{out}/{c}.{i}.json")) for i in range(runs)]
    print(f"  {c:8} " + "  ".join(f"{k} {med(med(x[k] for x in l) for l in logs):6.2f}" for k in ("infer", "pause", "save")))
print("per run traced/untraced (ms/cycle ratio):")
for c in conds[1:]:
    print(f"  {c:8} " + " ".join(f"{t / u:.4f}" for t, u in zip(cyc[c], cyc["untraced"])))
PYEOF
