#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# The cost of `--metrics` scraped every second: the fixture experiment recorded
# without it and with it (curl on /metrics each second), runs interleaved; the
# fixture's own median cycle time and the tracer's CPU time (profile.json
# self.cpu_s) side by side. As root, after `make`.
# usage: tools/bench-metrics.sh [BUILD_DIR]   (RUNS=1 CYCLES=300 by default)
set -euo pipefail
BUILD=${1:-build}
RUNS=${RUNS:-1}
CYCLES=${CYCLES:-300}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
EXP=$BUILD/fixtures/experiment
mkdir -p "$BUILD/fixtures"
gcc -O1 -g -fno-omit-frame-pointer -pthread "$ROOT/tests/fixtures/experiment.c" -o "$EXP"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
probes=(--cycle run_cycle --phase inference=inference --phase database=database --count tokens=token)

one() { # one run: $1 = base|metrics
	local out=$TMP/$1 scrapes=0 pid url="" ticks=0 t args=()
	rm -rf "$out" "$TMP/err"
	[ "$1" = metrics ] && args=(--metrics 127.0.0.1:0)
	"$BUILD/infertrace" record -o "$out" "${args[@]}" "${probes[@]}" -- \
		"$EXP" "$CYCLES" 20 4 5 2 >"$TMP/fixture.json" 2>"$TMP/err" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		# the tracer's own CPU time (utime + stime, clock ticks), last read before it ends
		t=$(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null) && ticks=$t
		if [ "$1" = metrics ]; then
			[ -n "$url" ] || url=$(grep -o 'http://[^ ]*' "$TMP/err" || true)
			[ -n "$url" ] && curl -s -o /dev/null "$url" && scrapes=$((scrapes + 1))
		fi
		sleep 1
	done
	wait "$pid"
	python3 - "$1" "$TMP/fixture.json" "$out/profile.json" "$scrapes" "$ticks" "$(getconf CLK_TCK)" <<'EOF2'
import json, statistics, sys
what, fixture, profile, scrapes, ticks, hz = sys.argv[1:]
f = json.load(open(fixture))
p = json.load(open(profile))
print(f"{what}\t{statistics.median(f['cycle_ms']):.3f}\t{int(ticks) / int(hz):.2f}\t{p['duration_s']:.1f}\t{scrapes}")
EOF2
}

printf 'condition\tfixture median cycle ms\ttracer CPU s (to its last second)\trecording s\tscrapes\n'
for _ in $(seq "$RUNS"); do
	one base
	one metrics
done
