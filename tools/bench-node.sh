#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make bench-node: a node loop's own cycle time traced/untraced, beside
# perf's (issue 19). tests/fixtures/jsloop.js --fixed CYCLES runs a numeric
# and a string-building phase of fixed work and prints its median cycle;
# the conditions are interleaved run by run, medians of RUNS.
#   tools/bench-node.sh [BUILD_DIR]     (as root; node: demo/bin/node, else node)
# Conditions: base (plain node); base_switches (node with the perf-map
# switches record passes, untraced); ours (record at 99 Hz, its defaults:
# the switches, DWARF stacks); ours_js (the same with js: phases on both
# phases and the cycle); perf (perf record -F 99 -g with the same switches,
# which perf needs to name JIT frames).
# Environment: RUNS (7), CYCLES (300), BENCH_OUT (BUILD_DIR/bench-node).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
IT=$BUILD/infertrace
RUNS=${RUNS:-7}
CYCLES=${CYCLES:-300}
OUT=${BENCH_OUT:-$BUILD/bench-node}
NODE=$(command -v node || true)
[ -x "$ROOT/demo/bin/node" ] && NODE=$ROOT/demo/bin/node
[ -n "$NODE" ] || { echo "bench-node: node not found (make demo installs it)" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "bench-node: run as root" >&2; exit 1; }
command -v perf >/dev/null || { echo "bench-node: perf not found (apt-get install linux-perf)" >&2; exit 1; }
LOOP=$ROOT/tests/fixtures/jsloop.js
SWITCHES="--perf-basic-prof-only-functions --interpreted-frames-native-stack"
rm -rf "$OUT"
mkdir -p "$OUT"
touch "$OUT/marker"
# the switched runs leave /tmp/perf-PID.map files: remove the ones made here
trap 'find /tmp -maxdepth 1 -name "perf-*.map" -newer "$OUT/marker" -delete' EXIT
cd "$OUT" # node writes any log into its working directory

own() { sed -n 's/.*"median_cycle_ms":\([0-9.]*\).*/\1/p' | tail -1 >>"$OUT/$1"; }
for i in $(seq 1 "$RUNS"); do
	"$NODE" "$LOOP" --fixed "$CYCLES" | own base
	NODE_OPTIONS="$SWITCHES" "$NODE" "$LOOP" --fixed "$CYCLES" | own base_switches
	"$IT" record -q -o "$OUT/r" -- "$NODE" "$LOOP" --fixed "$CYCLES" 2>/dev/null | own ours
	"$IT" record -q -o "$OUT/r" --phase loop=js:runCycle --phase numeric=js:numericPhase \
		--phase string=js:stringPhase -- "$NODE" "$LOOP" --fixed "$CYCLES" 2>/dev/null | own ours_js
	NODE_OPTIONS="$SWITCHES" perf record -q -F 99 -g -o "$OUT/perf.data" -- \
		"$NODE" "$LOOP" --fixed "$CYCLES" 2>/dev/null | own perf
done

med() { /usr/bin/python3 "$ROOT/tools/bench_stats.py" median $(cat "$1"); }
base=$(med "$OUT/base")
{
	echo "## Node loop (jsloop.js --fixed $CYCLES, node $("$NODE" --version), the loop's median cycle, $RUNS runs interleaved, medians)"
	echo
	echo "| condition | median cycle ms | / untraced |"
	echo "|---|---|---|"
	for c in base base_switches ours ours_js perf; do
		m=$(med "$OUT/$c")
		printf '| %s | %.3f | %.3f |\n' "$c" "$m" "$(echo "$m / $base" | bc -l)"
	done
} >"$OUT/results.md"
cat "$OUT/results.md"
echo "results: $OUT/results.md"
