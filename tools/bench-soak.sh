#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Soak (issue 15): as root, after `make`.
#   tools/bench-soak.sh [BUILD_DIR]
# Records, for DURATION seconds (600), a target that never settles: a shell
# loop relaunching tests/fixtures/dl_reload (each run dlopens a probed
# library, dlcloses it, maps another library at its address and opens the
# first again elsewhere; CYCLES (20) cycles per round, 6 ms of CPU in the
# library per cycle), with --cycle reload_cycle and two phases in the
# library. Every STEP seconds (30) prints the tracer's RSS and its CPU share
# since the last line; at the end (SIGINT) the outputs' write time, the
# lost-event figures and the ratio of lost samples, from profile.json.
# RECORD_ARGS (words) are added to `record`, e.g. RECORD_ARGS="--max-memory 160".
# Tab-separated; BENCHMARKS.md quotes it.
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IT=$BUILD/infertrace
DUR=${DURATION:-600} STEP=${STEP:-30} CYCLES=${CYCLES:-20}
read -r -a EXTRA <<<"${RECORD_ARGS:-}"
[ "$(id -u)" -eq 0 ] || { echo "bench-soak: run as root" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
F=$ROOT/tests/fixtures
gcc -I"$F" -O2 -g -shared -fPIC "$F/exp_dl.c" -o "$TMP/libexpdl.so"
gcc -I"$F" -O2 -g -shared -fPIC -DDL_ALT "$F/exp_dl.c" -o "$TMP/libexpdl_alt.so"
gcc -I"$F" -O0 -g "$F/dl_reload.c" -o "$TMP/dl_reload" -ldl
"$IT" record -q -o "$TMP/out" ${EXTRA[@]+"${EXTRA[@]}"} --cycle "$TMP/dl_reload:reload_cycle" \
	--phase "dl=$TMP/libexpdl.so:dl_work" --phase "spin=$TMP/libexpdl.so:dl_spin" -- \
	/bin/sh -c "while :; do $TMP/dl_reload $CYCLES $TMP/libexpdl.so $TMP/libexpdl_alt.so >/dev/null; done" \
	2>"$TMP/err" &
pid=$!
ticks() { awk '{ s = $0; sub(/.*\) /, "", s); split(s, f, " "); print f[12] + f[13] }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
t0=$(date +%s) last_t=$t0 last_c=$(ticks $pid)
printf 's\ttracer RSS MB\ttracer CPU %% of one CPU (interval)\n'
while [ $(($(date +%s) - t0)) -lt "$DUR" ]; do
	sleep "$STEP"
	t=$(date +%s) c=$(ticks $pid)
	rss=$(awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$pid/status")
	printf '%d\t%s\t%.1f\n' $((t - t0)) "$rss" "$(echo "($c - $last_c) * 100 / $hz / ($t - $last_t)" | bc -l)"
	last_t=$t last_c=$c
done
w0=$(date +%s.%N)
kill -INT $pid
wait $pid || true
w1=$(date +%s.%N)
printf 'outputs written in\t%.1f s\n' "$(echo "$w1 - $w0" | bc -l)"
python3 - "$TMP/out/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
lost, s = p["lost"], p["self"]
total = p["samples"]["total"]
print(f"cycles\t{len(p['cycles'])}\nprocesses\t{len(p.get('processes', []))}")
print(f"samples\t{total}\nlost\t{json.dumps(lost)}")
print(f"lost samples ratio\t{lost.get('samples', 0) / max(1, total + lost.get('samples', 0)):.6f}")
print(f"memory budget\t{json.dumps(s.get('memory_budget'))}")
print(f"tracer max RSS MB\t{s.get('max_rss_mb')}\ntracer CPU % of one CPU (whole run)\t{s.get('percent_of_one_cpu')}")
PY
