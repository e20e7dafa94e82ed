#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Probe cost per hit of two infertrace builds side by side (as root):
#   tools/bench-probe-ab.sh OLD_INFERTRACE NEW_INFERTRACE
# tests/fixtures/probe_bench.c calls an empty function CALLS times and times
# the loop with its own clock; the conditions (untraced, --count on it, a
# --phase on it, for each build) are interleaved run by run, RUNS runs each;
# prints the median loop time and the ns added per call.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OLD=$1 NEW=$2
RUNS=${RUNS:-7}
CALLS=${CALLS:-50000}
OUT=$(mktemp -d /tmp/it-ab.XXXXXX)
PB=$OUT/probe_bench
gcc -O2 -o "$PB" "$ROOT/tests/fixtures/probe_bench.c"
own() { "$@" 2>/dev/null | awk '/^work_s /{print $2}'; }
for i in $(seq 1 "$RUNS"); do
	own "$PB" "$CALLS" >>"$OUT/base"
	for b in old new; do
		it=$OLD
		[ $b = new ] && it=$NEW
		own "$it" record -o "$OUT/r" --call-graph fp --count calls=empty_call -- "$PB" "$CALLS" >>"$OUT/$b.count"
		own "$it" record -o "$OUT/r" --call-graph fp --phase empty=empty_call -- "$PB" "$CALLS" >>"$OUT/$b.phase"
	done
done
med() { sort -g "$1" | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
base=$(med "$OUT/base")
echo "| condition | loop s (median of $RUNS) | ns added per call |"
echo "|---|---|---|"
for c in old.count new.count old.phase new.phase; do
	m=$(med "$OUT/$c")
	echo "| $c | $m | $(echo "($m - $base) * 1000000000 / $CALLS" | bc -l | xargs printf '%.0f') |"
done
rm -rf "$OUT"
