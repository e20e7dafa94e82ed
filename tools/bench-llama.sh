#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make bench-llama: the llama.cpp demo's own cycle time traced/untraced, beside
# perf with DWARF stacks (issue 12's target: ours <= 1.03). The driver
# (demo/driver.mjs, bench model, --threads 1, CYCLES cycles of TOKENS tokens)
# prints each cycle's time; a run's figure is the median of its cycles. The
# conditions are interleaved run by run: base (untraced); ours (record -F 99
# --preset llama.cpp, its defaults: DWARF stacks, the scheduler and memory
# programs); perf (perf record -F 99 --call-graph dwarf,65528), each run
# of rounds starting with base, the traced ones in turn. Reported:
# the median over runs, and the median of each run's ratio to the untraced
# run just before it (paired: this host's load drifts between runs), the
# whole command's wall time, and the BPF programs' time per cycle
# (profile.json self.bpf, over the whole run, divided by its cycles).
#   tools/bench-llama.sh [BUILD_DIR]     (as root)
# Environment: RUNS (15), CYCLES (5), TOKENS (32), BENCH_OUT (BUILD_DIR/bench-llama),
# OTHER (another build's infertrace binary: condition "other", the same
# options, for two builds side by side), SWITCHES (1: condition
# "base_switches", untraced with the node switches --jit-maps on passes).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
IT=$BUILD/infertrace
RUNS=${RUNS:-15}
CYCLES=${CYCLES:-5}
TOKENS=${TOKENS:-32}
OUT=${BENCH_OUT:-$BUILD/bench-llama}
OTHER=${OTHER:-}
SWITCHES=${SWITCHES:-}
CONDS="base ours${OTHER:+ other}${SWITCHES:+ base_switches} perf"
[ "$(id -u)" -eq 0 ] || { echo "bench-llama: run as root" >&2; exit 1; }
command -v perf >/dev/null || { echo "bench-llama: perf not found (apt-get install linux-perf)" >&2; exit 1; }
"$ROOT/tools/demo-setup.sh"
rm -rf "$OUT"
mkdir -p "$OUT"
touch "$OUT/marker"
# the switched runs leave /tmp/perf-PID.map files: remove the ones made here
trap 'find /tmp -maxdepth 1 -name "perf-*.map" -newer "$OUT/marker" -delete' EXIT
DRIVER=("$ROOT/demo/bin/node" "$ROOT/demo/driver.mjs" --model "$ROOT/demo/models/bench.gguf" --threads 1
	--cycles "$CYCLES" --tokens "$TOKENS" --steps none --json)

# run NAME CMD...: the run's median cycle (ms) and whole-command wall time (s)
run() {
	local name=$1 t0 t1
	shift
	t0=$(date +%s.%N)
	"$@" >"$OUT/$name.out" 2>"$OUT/$name.err" || { echo "bench-llama: $name failed; see $OUT/$name.err" >&2; exit 1; }
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l >>"$OUT/$name.wall"
	/usr/bin/python3 -c '
import json, statistics, sys
for line in reversed(open(sys.argv[1]).read().splitlines()):
    if line.startswith("{") and "\"driver\"" in line:
        print(statistics.median(json.loads(line)["cycle_ms"])); break
' "$OUT/$name.out" >>"$OUT/$name.cycle"
}

echo "  BENCH    llama.cpp demo: $CONDS, $RUNS runs each"
traced=(${CONDS#base })
for i in $(seq 1 "$RUNS"); do
	run base "${DRIVER[@]}"
	# the traced conditions in turn first, second...: none always follows
	# another's tear-down
	for k in $(seq 0 $((${#traced[@]} - 1))); do
		case ${traced[$(((i + k) % ${#traced[@]}))]} in
		ours)
			run ours "$IT" record -q -o "$OUT/ours" -F 99 --preset llama.cpp -- "${DRIVER[@]}"
			/usr/bin/python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
ms = sum(x["run_time_ms"] for x in p["self"]["bpf"]["programs"])
print(ms / max(len(p["cycles"]), 1))
' "$OUT/ours/profile.json" >>"$OUT/ours.bpf" ;;
		other) run other "$OTHER" record -q -o "$OUT/other" -F 99 --preset llama.cpp -- "${DRIVER[@]}" ;;
		base_switches)
			run base_switches env NODE_OPTIONS="--perf-basic-prof-only-functions --interpreted-frames-native-stack" \
				"${DRIVER[@]}" ;;
		perf) run perf perf record -q -F 99 -e cpu-clock --call-graph dwarf,65528 -o "$OUT/perf.data" -- "${DRIVER[@]}" ;;
		esac
	done
done

/usr/bin/python3 - "$OUT" "$RUNS" "$("$ROOT/demo/bin/node" --version)" "$CONDS" >"$OUT/results.md" <<'EOF'
import statistics, sys
out, runs, node, conds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4].split()
read = lambda f: [float(x) for x in open(f"{out}/{f}")]
base, base_wall = read("base.cycle"), read("base.wall")
print(f"## llama.cpp demo, median cycle (bench model, --threads 1, node {node}, {runs} runs interleaved)")
print()
print("| condition | median cycle ms | / untraced | paired / untraced | whole command s |")
print("|---|---|---|---|---|")
for c in conds:
    v = read(f"{c}.cycle")
    paired = statistics.median(x / b for x, b in zip(v, base))
    print(f"| {c} | {statistics.median(v):.2f} | {statistics.median(v) / statistics.median(base):.3f} | "
          f"{paired:.3f} | {statistics.median(read(f'{c}.wall')):.3f} |")
print()
print(f"ours: BPF programs {statistics.median(read('ours.bpf')):.2f} ms per cycle (median; the whole run's "
      "self.bpf over its cycles, model loading included)")
EOF
cat "$OUT/results.md"
echo "results: $OUT/results.md"
