#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# The sqlite preset's cost on a row-at-a-time Python loop:
# tests/fixtures/py_sqlite.py (ROWS single-row inserts and a commit per
# cycle) untraced and traced with `--preset sqlite --cycle py:run_cycle`,
# interleaved run by run; the script's own mean cycle and database times,
# and the traced database phase against the script's. As root.
# Usage: tools/bench_py_sqlite.sh BUILD_DIR PYTHON
set -eu
BUILD=${1:?build dir}; PY=${2:?python}; RUNS=${RUNS:-5}; CYCLES=${CYCLES:-10}; ROWS=${ROWS:-20000}
FIX=$(dirname "$0")/../tests/fixtures/py_sqlite.py
T=$(mktemp -d)
mean() { "$PY" -c "import json,sys; l=json.load(open(sys.argv[1])); print(sum(x[sys.argv[2]] for x in l)/len(l))" "$1" "$2"; }
i=0
while [ $i -lt "$RUNS" ]; do
	rm -f "$T/db"; "$PY" "$FIX" "$CYCLES" "$T/u.json" "$T/db" "$ROWS"
	rm -rf "$T/db" "$T/out"; "$BUILD/infertrace" record -q -o "$T/out" --preset sqlite --cycle py:run_cycle \
		-- "$PY" "$FIX" "$CYCLES" "$T/t.json" "$T/db" "$ROWS" 2>/dev/null
	traced_db=$("$PY" -c "import json,sys; p=json.load(open(sys.argv[1])); c=p['cycles']; print(sum(x['phases']['database']['ms'] for x in c)/len(c))" "$T/out/profile.json")
	echo "$(mean "$T/u.json" cycle_ms) $(mean "$T/t.json" cycle_ms) $(mean "$T/t.json" database) $traced_db"
	i=$((i + 1))
done | "$PY" -c "
import statistics, sys
rows = [tuple(map(float, l.split())) for l in sys.stdin]
u = statistics.median(r[0] for r in rows); t = statistics.median(r[1] for r in rows)
print(f'cycle: untraced {u:.2f} ms  traced {t:.2f} ms  traced/untraced {t/u:.4f}  (medians of {len(rows)} runs)')
print('per run traced/untraced: ' + ' '.join(f'{r[1]/r[0]:.4f}' for r in rows))
print('database phase / script database: ' + ' '.join(f'{r[3]/r[2]:.4f}' for r in rows))"
rm -rf "$T"
