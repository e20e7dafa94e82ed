#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make bench-short: the wall time record adds to a short command (issue 12),
# beside perf record -g. Conditions, interleaved run by run: base (the
# command alone), ours (infertrace record -q, its defaults), perf (perf
# record -q -e cpu-clock -g); medians of RUNS; the added time is the median
# less base's. Each of ours also says its start-up CPU (profile.json
# self.startup_cpu_s). Each run starts once the previous one has left nothing
# running (ours detaches its programs in the background after it exits).
#   tools/bench-short.sh [BUILD_DIR]    (as root)
# Environment: RUNS (9), CMD ("sleep 0.5"), BENCH_OUT (BUILD_DIR/bench-short).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
IT=$BUILD/infertrace
RUNS=${RUNS:-9}
read -r -a CMD <<<"${CMD:-sleep 0.5}"
OUT=${BENCH_OUT:-$BUILD/bench-short}
[ "$(id -u)" -eq 0 ] || { echo "bench-short: run as root" >&2; exit 1; }
command -v perf >/dev/null || { echo "bench-short: perf not found (apt-get install linux-perf)" >&2; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT"
now() { date +%s.%N; }
timed() { # $1 = condition; the rest: the command line
	local c=$1 t0 t1
	shift
	t0=$(now)
	"$@" >/dev/null 2>>"$OUT/$c.err"
	t1=$(now)
	echo "$t1 - $t0" | bc -l >>"$OUT/$c"
	# what a run leaves behind (ours detaches in the background) must not
	# slow the next condition
	while pgrep -x infertrace >/dev/null; do sleep 0.1; done
	sleep 0.5
}
for i in $(seq 1 "$RUNS"); do
	timed base "${CMD[@]}"
	timed ours "$IT" record -q -o "$OUT/r" -- "${CMD[@]}"
	/usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['self']['startup_cpu_s'])" \
		"$OUT/r/profile.json" >>"$OUT/ours_startup_cpu"
	timed perf perf record -q -e cpu-clock -g -o "$OUT/perf.data" -- "${CMD[@]}"
done
med() { /usr/bin/python3 "$ROOT/tools/bench_stats.py" median $(cat "$1"); }
base=$(med "$OUT/base")
{
	echo "## Short command (${CMD[*]}), wall time, $RUNS runs interleaved, medians"
	echo
	echo "| condition | wall s | added s |"
	echo "|---|---|---|"
	for c in base ours perf; do
		m=$(med "$OUT/$c")
		printf '| %s | %.3f | %.3f |\n' "$c" "$m" "$(echo "$m - $base" | bc -l)"
	done
	echo
	echo "ours: start-up CPU $(med "$OUT/ours_startup_cpu") s (median; profile.json self.startup_cpu_s)"
} >"$OUT/results.md"
cat "$OUT/results.md"
echo "results: $OUT/results.md"
