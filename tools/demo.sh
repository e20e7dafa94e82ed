#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make demo: sets up the llama.cpp demo (tools/demo-setup.sh), traces a real
# llama.cpp experiment loop with --preset llama.cpp, prints the report and the
# paths of the outputs.
#   tools/demo.sh [BUILD_DIR]      (default build; run as root)
# Environment: DEMO_MODEL (demo/models/tiny.gguf), DEMO_CYCLES (5), DEMO_TOKENS (16),
# DEMO_OUT (BUILD_DIR/demo-out), DEMO_ARGS (extra record options).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${1:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
IT=$BUILD/infertrace
MODEL=${DEMO_MODEL:-$ROOT/demo/models/tiny.gguf}
OUT=${DEMO_OUT:-$BUILD/demo-out}

if [ "$(id -u)" -ne 0 ]; then
	echo "demo: infertrace loads BPF programs: run as root (sudo make demo)" >&2
	exit 1
fi
[ -x "$IT" ] || { echo "demo: $IT not built; run make" >&2; exit 1; }
"$ROOT/tools/demo-setup.sh"

echo "  RECORD   node demo/driver.mjs --model ${MODEL#$ROOT/} --threads 1 (--preset llama.cpp)"
rm -rf "$OUT"
# shellcheck disable=SC2086
"$IT" record -o "$OUT" --preset llama.cpp ${DEMO_ARGS:-} -- \
	"$ROOT/demo/bin/node" "$ROOT/demo/driver.mjs" --model "$MODEL" --threads 1 \
	--cycles "${DEMO_CYCLES:-5}" --tokens "${DEMO_TOKENS:-16}"
echo
"$IT" report "$OUT"
echo
echo "Outputs:"
for f in profile.json stacks.folded offcpu.folded trace.json flamegraph.svg report.html; do
	[ -e "$OUT/$f" ] && printf '  %-15s %s\n' "$f" "$OUT/$f"
done
ls "$OUT"/stacks.*.folded 2>/dev/null | sed 's/^/  per phase       /'
echo "Open trace.json in https://ui.perfetto.dev; report.html and flamegraph.svg in a browser."
