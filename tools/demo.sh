#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make demo: sets up the llama.cpp demo (tools/demo-setup.sh), traces a real
# llama.cpp experiment loop with --preset llama.cpp, prints the report and the
# paths of the outputs.
#   tools/demo.sh [BUILD_DIR]      (default build; run as root)
# Each cycle: llama.cpp inference (prompt, then generation), the loop's own step
# (updateMemory) and a database step (saveResult, SQLite through sql.js); the
# preset times llm_prompt and llm_generate, the two steps are the rest of the cycle.
# Environment: DEMO_MODEL (demo/models/bench.gguf), DEMO_CYCLES (28), DEMO_TOKENS (64),
# DEMO_OUT (BUILD_DIR/demo-out), DEMO_ARGS (extra record options).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
IT=$BUILD/infertrace
MODEL=${DEMO_MODEL:-$ROOT/demo/models/bench.gguf}
OUT=${DEMO_OUT:-$BUILD/demo-out}

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: infertrace loads BPF programs: run as root (sudo make demo)" >&2
	exit 1
fi
[ -x "$IT" ] || { echo "demo: $IT not built; run make" >&2; exit 1; }
"$ROOT/tools/demo-setup.sh"

CYCLES=${DEMO_CYCLES:-28} TOKENS=${DEMO_TOKENS:-64}
echo "  RECORD   node demo/driver.mjs --model ${MODEL#$ROOT/} --threads 1 --cycles $CYCLES --tokens $TOKENS (--preset llama.cpp)"
rm -rf "$OUT"
DRIVER_JSON=$(mktemp)
trap 'rm -f "$DRIVER_JSON"' EXIT
# shellcheck disable=SC2086
"$IT" record -o "$OUT" --preset llama.cpp ${DEMO_ARGS:-} -- \
	"$ROOT/demo/bin/node" "$ROOT/demo/driver.mjs" --model "$MODEL" --threads 1 \
	--cycles "$CYCLES" --tokens "$TOKENS" --json >"$DRIVER_JSON"
cp "$DRIVER_JSON" "$OUT/driver.json"
# the driver's own clock, to hold the report against
"$ROOT/demo/bin/node" -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n").pop());
const gen = r.generated_per_cycle.reduce((a, b) => a + b, 0);
console.log(`Driver says: ${r.cycles} cycles, ${gen} tokens generated, avg cycle ${r.avg_cycle_ms.toFixed(2)} ms, ` +
    `${r.tokens_per_second.toFixed(2)} tok/s over the whole cycle`);' "$DRIVER_JSON"
echo
"$IT" report "$OUT"
echo
. "$ROOT/tools/demo-outputs.sh"
demo_outputs "$OUT" driver.json
