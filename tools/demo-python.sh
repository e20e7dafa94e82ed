#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make demo-python: the demo's experiment as a Python loop (demo/driver.py),
# traced with --preset llama.cpp and py: phases; prints the report and the
# paths of the outputs.
#   tools/demo-python.sh [BUILD_DIR]      (default build; run as root)
# Each cycle: llama.cpp inference through ctypes (or llama-cpp-python when it is
# importable), prompt then generation, timed by the preset as llm_prompt and
# llm_generate (the same names as make demo); the loop's own step
# (update_memory) and the database step (save_result, the standard library's
# sqlite3, one commit per cycle) as the py: phases memory and database.
# Environment: DEMO_MODEL (demo/models/bench.gguf), DEMO_CYCLES (28), DEMO_TOKENS (64),
# DEMO_OUT (BUILD_DIR/demo-python-out), DEMO_ARGS (extra record options),
# DEMO_PYTHON (/usr/bin/python3).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
IT=$BUILD/infertrace
MODEL=${DEMO_MODEL:-$ROOT/demo/models/bench.gguf}
OUT=${DEMO_OUT:-$BUILD/demo-python-out}
PY=${DEMO_PYTHON:-/usr/bin/python3}

if [ "$(id -u)" -ne 0 ]; then
	echo "demo-python: infertrace loads BPF programs: run as root (sudo make demo-python)" >&2
	exit 1
fi
[ -x "$IT" ] || { echo "demo-python: $IT not built; run make" >&2; exit 1; }
# the same libllama and model as make demo
"$ROOT/tools/demo-setup.sh"

CYCLES=${DEMO_CYCLES:-28} TOKENS=${DEMO_TOKENS:-64}
PHASES=(--phase memory=py:update_memory --phase database=py:save_result)
echo "  RECORD   ${PY##*/} demo/driver.py --model ${MODEL#$ROOT/} --threads 1 --cycles $CYCLES --tokens $TOKENS (--preset llama.cpp ${PHASES[*]})"
rm -rf "$OUT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# shellcheck disable=SC2086
"$IT" record -o "$OUT" --preset llama.cpp "${PHASES[@]}" ${DEMO_ARGS:-} -- \
	"$PY" "$ROOT/demo/driver.py" --model "$MODEL" --threads 1 \
	--cycles "$CYCLES" --tokens "$TOKENS" --db "$TMP/results.db" --json >"$TMP/driver.json"
cp "$TMP/driver.json" "$TMP/results.db" "$OUT/"
# the driver's own clock, to hold the report against
"$PY" -c '
import json, sys
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
gen = sum(r["generated_per_cycle"])
print("Driver says: %d cycles, %d tokens generated, avg cycle %.2f ms, %.2f tok/s over the whole cycle"
      % (r["cycles"], gen, r["avg_cycle_ms"], r["tokens_per_second"]))' "$OUT/driver.json"
echo
"$IT" report "$OUT"
echo
. "$ROOT/tools/demo-outputs.sh"
demo_outputs "$OUT" driver.json results.db
