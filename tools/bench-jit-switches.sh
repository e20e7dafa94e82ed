#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# What node's perf-map switches cost an experiment, side by side: start-up
# (`node -e 0`) and the steady-state cycle of tests/fixtures/jsloop.js
# (fixed work), alternating runs: plain, --perf-basic-prof, and both switches
# (--perf-basic-prof --interpreted-frames-native-stack). Medians of N runs.
# Usage: tools/bench-jit-switches.sh [RUNS] [CYCLES]   (node: demo/bin/node, else node)
set -eu
RUNS=${1:-7}
CYCLES=${2:-300}
NODE=node
[ -x demo/bin/node ] && NODE=demo/bin/node
LOOP=$(pwd)/tests/fixtures/jsloop.js
[ "$NODE" = node ] || NODE=$(pwd)/$NODE
tmp=$(mktemp -d)
# the switched runs leave /tmp/perf-PID.map files: remove the ones made here
trap 'find /tmp -maxdepth 1 -name "perf-*.map" -newer "$tmp/marker" -delete; rm -rf "$tmp"' EXIT
touch "$tmp/marker"
cd "$tmp" # node 20 writes isolate-*-v8.log into its working directory with --perf-basic-prof
now() { date +%s%N; }
for i in $(seq "$RUNS"); do
	for mode in plain basic both; do
		case $mode in
		plain) opts="" ;;
		basic) opts="--perf-basic-prof" ;;
		both) opts="--perf-basic-prof --interpreted-frames-native-stack" ;;
		esac
		t0=$(now); NODE_OPTIONS="$opts" "$NODE" -e 0; t1=$(now)
		echo $(( (t1 - t0) / 1000 )) >>"$tmp/start.$mode"
		t0=$(now)
		NODE_OPTIONS="$opts" "$NODE" "$LOOP" --fixed "$CYCLES" >"$tmp/out"
		t1=$(now)
		echo $(( (t1 - t0) / 1000 )) >>"$tmp/wall.$mode"
		sed 's/.*"median_cycle_ms":\([0-9.]*\).*/\1/' "$tmp/out" >>"$tmp/cycle.$mode"
	done
done
med() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "node $("$NODE" --version), $RUNS runs each, $CYCLES cycles"
for mode in plain basic both; do
	echo "$mode: startup_ms=$(echo "$(med "$tmp/start.$mode") / 1000" | bc -l | cut -c1-6)" \
	     "median_cycle_ms=$(med "$tmp/cycle.$mode" | cut -c1-6)" \
	     "wall_ms=$(echo "$(med "$tmp/wall.$mode") / 1000" | bc -l | cut -c1-7)"
done
