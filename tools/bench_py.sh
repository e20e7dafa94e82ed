#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# `py:` phases' cost: tests/fixtures/py_phases.py's own cycle time (its
# perf_counter, mean over CYCLES cycles) untraced and traced with
# `--cycle py:run_cycle --phase ...=py:...` at default settings, the two
# interleaved run by run. As root. Usage: tools/bench_py.sh BUILD_DIR PYTHON
set -eu
BUILD=${1:?build dir}; PY=${2:?python}; RUNS=${RUNS:-5}; CYCLES=${CYCLES:-20}
FIX=$(dirname "$0")/../tests/fixtures/py_phases.py
T=$(mktemp -d)
mean() { "$PY" -c "import json,sys; l=json.load(open(sys.argv[1])); print(sum(x['cycle_ms'] for x in l)/len(l))" "$1"; }
i=0
while [ $i -lt "$RUNS" ]; do
	rm -f "$T/db"; "$PY" "$FIX" "$CYCLES" "$T/u.json" "$T/db"
	rm -f "$T/db"; "$BUILD/infertrace" record -q -o "$T/out" --cycle py:run_cycle --phase infer=py:infer \
		--phase rest=py:rest --phase store=py:store -- "$PY" "$FIX" "$CYCLES" "$T/t.json" "$T/db" 2>/dev/null
	echo "$(mean "$T/u.json") $(mean "$T/t.json")"
	i=$((i + 1))
done | "$PY" -c "
import statistics, sys
rows = [tuple(map(float, l.split())) for l in sys.stdin]
u = statistics.median(r[0] for r in rows); t = statistics.median(r[1] for r in rows)
print(f'untraced {u:.2f} ms  traced {t:.2f} ms  traced/untraced {t/u:.4f}  (medians of {len(rows)} runs)')
print('per run traced/untraced: ' + ' '.join(f'{r[1]/r[0]:.4f}' for r in rows))"
rm -rf "$T"
