#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make bench: infertrace's overhead and stack quality beside perf's, measured
# side by side (the conditions interleaved run by run, medians of RUNS runs).
#   tools/bench.sh [BUILD_DIR]     (as root; perf from linux-perf)
# 1. The real llama.cpp demo (bench model, --threads 1): untraced; infertrace
#    --preset llama.cpp at 99 Hz (default --call-graph dwarf, and fp); perf
#    record -F 99 -g; perf record -F 99 --call-graph dwarf,65528. Slowdown of
#    the driver's own cycle time and of the whole command; complete stacks;
#    top-10 leaf functions ours vs perf's; the probe cost per hit.
# 2. A CPU-bound fixture (tests/fixtures/deep_chain.c, -O2 -fomit-frame-pointer,
#    a fixed amount of work) at 99 and 999 Hz: infertrace fp and dwarf vs perf -g.
# 3. Probe cost: an empty function called CALLS times, untraced vs counted
#    (--count, entry uprobe) vs timed (--phase, uprobe + uretprobe + one
#    ring-buffer record per call): ns added per call, and the call rate the
#    traced loop sustained with the number of events lost.
# Environment: RUNS (5), CYCLES (5), TOKENS (32), WORK (fixture iterations, 12000), CALLS (200000),
# BENCH_OUT (BUILD_DIR/bench). Results: BENCH_OUT/results.md.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
IT=$BUILD/infertrace
RUNS=${RUNS:-5}
CYCLES=${CYCLES:-5}
TOKENS=${TOKENS:-32}
WORK=${WORK:-12000}
OUT=${BENCH_OUT:-$BUILD/bench}
STATS="/usr/bin/python3 $ROOT/tools/bench_stats.py"

[ "$(id -u)" -eq 0 ] || { echo "bench: run as root (sudo make bench)" >&2; exit 1; }
command -v perf >/dev/null || { echo "bench: perf not found (apt-get install linux-perf)" >&2; exit 1; }
"$ROOT/tools/demo-setup.sh"
rm -rf "$OUT"
mkdir -p "$OUT"
FIX=$OUT/deep_chain
gcc -O2 -fomit-frame-pointer -o "$FIX" "$ROOT/tests/fixtures/deep_chain.c"
PB=$OUT/probe_bench
CALLS=${CALLS:-200000}
gcc -O2 -o "$PB" "$ROOT/tests/fixtures/probe_bench.c"

DRIVER=("$ROOT/demo/bin/node" "$ROOT/demo/driver.mjs" --model "$ROOT/demo/models/bench.gguf" --threads 1
	--cycles "$CYCLES" --tokens "$TOKENS" --steps none --json) # inference only, as BENCHMARKS.md measured
now() { date +%s.%N; }

# run NAME RUN CMD...: runs CMD, records the wall time and the driver's or the
# fixture's own time (the last JSON line / "work_s" line of its output).
run() {
	local name=$1 i=$2
	shift 2
	local t0 t1
	t0=$(now)
	"$@" >"$OUT/$name.$i.out" 2>"$OUT/$name.$i.err" || { echo "bench: $name run $i failed; see $OUT/$name.$i.err" >&2; exit 1; }
	t1=$(now)
	echo "$t1 - $t0" | bc -l >>"$OUT/$name.wall"
	/usr/bin/python3 - "$OUT/$name.$i.out" >>"$OUT/$name.own" <<'EOF'
import json, sys
for line in reversed(open(sys.argv[1]).read().splitlines()):
    if line.startswith("{") and '"driver"' in line:
        print(json.loads(line)["total_ms"] / 1000.0); break
    if line.startswith("work_s "):
        print(line.split()[1]); break
EOF
}

llama_conditions=(base ours ours_fp perf_fp perf_dwarf)
fixture_conditions=(fbase fours99 fdwarf99 fperf99 fours999 fdwarf999 fperf999)
echo "  BENCH    llama.cpp demo: ${llama_conditions[*]}, $RUNS runs each"
for i in $(seq 1 "$RUNS"); do
	for c in "${llama_conditions[@]}"; do
		case $c in
		base) run $c "$i" "${DRIVER[@]}" ;;
		ours) run $c "$i" "$IT" record -o "$OUT/ours.$i" -F 99 --preset llama.cpp -- "${DRIVER[@]}" ;;
		ours_fp) run $c "$i" "$IT" record -o "$OUT/ours_fp.$i" -F 99 --call-graph fp --preset llama.cpp -- "${DRIVER[@]}" ;;
		perf_fp) run $c "$i" perf record -q -F 99 -e cpu-clock -g -o "$OUT/perf_fp.$i.data" -- "${DRIVER[@]}" ;;
		perf_dwarf) run $c "$i" perf record -q -F 99 -e cpu-clock --call-graph dwarf,65528 -o "$OUT/perf_dwarf.$i.data" -- "${DRIVER[@]}" ;;
		esac
	done
done
echo "  BENCH    CPU-bound fixture: ${fixture_conditions[*]}, $RUNS runs each"
for i in $(seq 1 "$RUNS"); do
	for c in "${fixture_conditions[@]}"; do
		case $c in
		fbase) run $c "$i" "$FIX" -n "$WORK" ;;
		fours99) run $c "$i" "$IT" record -o "$OUT/$c.$i" -F 99 --call-graph fp -- "$FIX" -n "$WORK" ;;
		fdwarf99) run $c "$i" "$IT" record -o "$OUT/$c.$i" -F 99 -- "$FIX" -n "$WORK" ;;
		fperf99) run $c "$i" perf record -q -F 99 -e cpu-clock -g -o "$OUT/$c.$i.data" -- "$FIX" -n "$WORK" ;;
		fours999) run $c "$i" "$IT" record -o "$OUT/$c.$i" -F 999 --call-graph fp -- "$FIX" -n "$WORK" ;;
		fdwarf999) run $c "$i" "$IT" record -o "$OUT/$c.$i" -F 999 -- "$FIX" -n "$WORK" ;;
		fperf999) run $c "$i" perf record -q -F 999 -e cpu-clock -g -o "$OUT/$c.$i.data" -- "$FIX" -n "$WORK" ;;
		esac
	done
done

probe_conditions=(pbase pcount pphase)
echo "  BENCH    probe cost: ${probe_conditions[*]}, $RUNS runs each, $CALLS calls"
for i in $(seq 1 "$RUNS"); do
	for c in "${probe_conditions[@]}"; do
		case $c in
		pbase) run $c "$i" "$PB" "$CALLS" ;;
		pcount) run $c "$i" "$IT" record -o "$OUT/$c.$i" --call-graph fp --count calls=empty_call -- "$PB" "$CALLS" ;;
		pphase) run $c "$i" "$IT" record -o "$OUT/$c.$i" --call-graph fp --phase empty=empty_call -- "$PB" "$CALLS" ;;
		esac
	done
done

# whole-command time of a short command: what start-up and teardown add
short_conditions=(sbase sours sperf)
echo "  BENCH    short command (sleep 0.5): ${short_conditions[*]}, $RUNS runs each"
for i in $(seq 1 "$RUNS"); do
	for c in "${short_conditions[@]}"; do
		case $c in
		sbase) run $c "$i" sleep 0.5 ;;
		sours) run $c "$i" "$IT" record -o "$OUT/$c.$i" -- sleep 0.5 ;;
		sperf) run $c "$i" perf record -q -e cpu-clock -g -o "$OUT/$c.$i.data" -- sleep 0.5 ;;
		esac
	done
done

echo "  STATS    perf script (dwarf unwinding takes a while)"
for c in perf_fp perf_dwarf; do
	for i in $(seq 1 "$RUNS"); do
		perf script -i "$OUT/$c.$i.data" 2>/dev/null >"$OUT/$c.$i.txt"
	done
	$STATS perf "$OUT"/$c.*.txt >"$OUT/$c.stats.json"
done
for c in ours ours_fp; do
	$STATS folded "$OUT"/$c.[0-9]*/stacks.folded >"$OUT/$c.stats.json"
done

med() { $STATS median $(cat "$OUT/$1.$2"); }
ratio() { echo "scale=4; $(med "$1" "$3") / $(med "$2" "$3")" | bc -l; }
share() { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(f\"{100.0*d['complete']/max(d['samples'],1):.1f}% of {d['samples']}\")" "$OUT/$1.stats.json"; }
probe_cost=$($STATS median $(for i in $(seq 1 "$RUNS"); do /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['probes_overhead']['cost_ns_per_hit']/1000)" "$OUT/ours.$i/profile.json"; done))
probe_pct=$($STATS median $(for i in $(seq 1 "$RUNS"); do /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['probes_overhead']['phases']['llm_inference']['percent'])" "$OUT/ours.$i/profile.json"; done))

{
	echo "## llama.cpp demo (bench model, --threads 1, $CYCLES cycles x $TOKENS tokens, $RUNS runs, medians)"
	echo
	echo "| condition | driver cycle time s | / untraced | whole command s | / untraced | complete stacks |"
	echo "|---|---|---|---|---|---|"
	for c in "${llama_conditions[@]}"; do
		cs="-"
		[ -f "$OUT/$c.stats.json" ] && cs=$(share $c)
		echo "| $c | $(med $c own) | $(ratio $c base own) | $(med $c wall) | $(ratio $c base wall) | $cs |"
	done
	echo
	echo "Probe cost: $probe_cost µs per hit (median of the start-up calibrations); llm_inference inflated by about $probe_pct% (median)."
	echo
	echo "### Top-10 leaf functions: infertrace (dwarf) vs perf --call-graph dwarf,65528"
	echo
	$STATS compare "$OUT/ours.stats.json" "$OUT/perf_dwarf.stats.json"
	echo
	echo "## CPU-bound fixture ($WORK calls of a 10-deep chain, fixture's own time, $RUNS runs, medians)"
	echo
	echo "| condition | work s | / untraced | whole command s | / untraced |"
	echo "|---|---|---|---|---|"
	for c in "${fixture_conditions[@]}"; do
		echo "| $c | $(med $c own) | $(ratio $c fbase own) | $(med $c wall) | $(ratio $c fbase wall) |"
	done
	echo
	echo "## Probe cost ($CALLS calls of an empty function, the loop's own time, $RUNS runs, medians)"
	echo
	echo "| condition | loop s | ns added per call | calls/s sustained | events lost (max over runs) |"
	echo "|---|---|---|---|---|"
	for c in "${probe_conditions[@]}"; do
		added=$(echo "scale=1; ($(med $c own) - $(med pbase own)) * 1000000000 / $CALLS" | bc -l)
		rate=$(echo "scale=0; $CALLS / $(med $c own)" | bc -l)
		lost="-"
		[ "$c" != pbase ] && lost=$(for i in $(seq 1 "$RUNS"); do /usr/bin/python3 -c "import json,sys; l=json.load(open(sys.argv[1]))['lost']; print(l.get('events',0)+l.get('phase_calls_not_kept',0))" "$OUT/$c.$i/profile.json"; done | sort -n | tail -1)
		echo "| $c | $(med $c own) | $added | $rate | $lost |"
	done
	echo
	echo "## Short command (sleep 0.5, default options, $RUNS runs, medians)"
	echo
	echo "| condition | whole command s | added s |"
	echo "|---|---|---|"
	for c in "${short_conditions[@]}"; do
		echo "| $c | $(med $c wall) | $(echo "scale=3; $(med $c wall) - $(med sbase wall)" | bc -l) |"
	done
	self_cpu=$($STATS median $(for i in $(seq 1 "$RUNS"); do /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['self']['percent_of_one_cpu'])" "$OUT/fours99.$i/profile.json"; done))
	echo
	echo "Tracer CPU while recording the CPU-bound fixture at 99 Hz (fp): $self_cpu% of one CPU (median of profile.json's self.percent_of_one_cpu)."
} >"$OUT/results.md"
cat "$OUT/results.md"
echo
echo "results: $OUT/results.md"
