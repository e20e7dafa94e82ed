#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make bench-sched: the scheduler path's cost on its worst case, a pipe
# ping-pong between two processes (tests/fixtures/pingpong.c, ~100,000
# context switches a second), beside bcc's libbpf-tools offcputime (a stack
# at every switch) and runqlat (a histogram, no stacks), the conditions
# interleaved run by run, medians of RUNS. The figure is the fixture's own
# time per round trip; traced/untraced is the ratio of medians.
#   tools/bench-sched.sh [BUILD_DIR]     (as root)
# Conditions: base (untraced); ours (record, defaults: DWARF stacks, short
# blocks sampled by time); ours_exact (--offcpu-sample-us 0: every block's
# stack copied); ours_fp (--call-graph fp); offcputime; runqlat. Also the
# tracer's own CPU time per run while recording (profile.json's self:
# user space, and its BPF programs).
# Environment: RUNS (7), ROUNDS (50000), BENCH_OUT (BUILD_DIR/bench-sched).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
IT=$BUILD/infertrace
RUNS=${RUNS:-7}
ROUNDS=${ROUNDS:-50000}
OUT=${BENCH_OUT:-$BUILD/bench-sched}

[ "$(id -u)" -eq 0 ] || { echo "bench-sched: run as root" >&2; exit 1; }
for t in offcputime runqlat; do
	[ -x /usr/sbin/$t ] || { echo "bench-sched: /usr/sbin/$t missing (apt-get install libbpf-tools)" >&2; exit 1; }
done
rm -rf "$OUT"
mkdir -p "$OUT"
PP=$OUT/pingpong
gcc -O2 -g -o "$PP" "$ROOT/tests/fixtures/pingpong.c"

# own NAME: the fixture's microseconds per round trip, from its JSON line
own() { /usr/bin/python3 -c 'import json,sys
for l in reversed(sys.stdin.read().splitlines()):
    if l.startswith("{"): print(json.loads(l)["us_per_round"]); break' >>"$OUT/$1"; }
# tracer_cpu PROFILE NAME: the tracer's user-space CPU while recording, and
# its BPF programs' run time (profile.json's self)
tracer_cpu() {
	/usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["self"]
print(s["recording_cpu_s"], s["bpf"]["cpu_s"])' "$1" >>"$OUT/$2"
}

# beside TOOL NAME: the fixture under a libbpf-tools tool, system-wide
beside() {
	local tool=$1 name=$2 pid
	/usr/sbin/$tool >"$OUT/$name.tool" 2>&1 &
	pid=$!
	sleep 2 # attached
	"$PP" "$ROUNDS" | own "$name"
	kill -INT $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
}

for i in $(seq 1 "$RUNS"); do
	"$PP" "$ROUNDS" | own base
	"$IT" record -q -o "$OUT/r" -- "$PP" "$ROUNDS" 2>/dev/null | own ours
	tracer_cpu "$OUT/r/profile.json" ours.cpu
	"$IT" record -q --offcpu-sample-us 0 -o "$OUT/r" -- "$PP" "$ROUNDS" 2>/dev/null | own ours_exact
	tracer_cpu "$OUT/r/profile.json" ours_exact.cpu
	"$IT" record -q --call-graph fp -o "$OUT/r" -- "$PP" "$ROUNDS" 2>/dev/null | own ours_fp
	tracer_cpu "$OUT/r/profile.json" ours_fp.cpu
	beside offcputime offcputime
	beside runqlat runqlat
done

med() { /usr/bin/python3 "$ROOT/tools/bench_stats.py" median $(cat "$1"); }
col() { awk -v c="$2" '{print $c}' "$1" >"$1.$2"; med "$1.$2"; }
base=$(med "$OUT/base")
{
	echo "## Pipe ping-pong ($ROUNDS round trips, the fixture's own time, $RUNS runs interleaved, medians)"
	echo
	echo "| condition | µs per round trip | / untraced | tracer user CPU s | BPF CPU s |"
	echo "|---|---|---|---|---|"
	for c in base ours ours_exact ours_fp offcputime runqlat; do
		m=$(med "$OUT/$c")
		cpu="- | -"
		[ -f "$OUT/$c.cpu" ] && cpu="$(col "$OUT/$c.cpu" 1) | $(col "$OUT/$c.cpu" 2)"
		printf '| %s | %.2f | %.3f | %s |\n' "$c" "$m" "$(echo "$m / $base" | bc -l)" "$cpu"
	done
} >"$OUT/results.md"
cat "$OUT/results.md"
echo "results: $OUT/results.md"
