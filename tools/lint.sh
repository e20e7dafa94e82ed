#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Static analysis of user/: cppcheck and clang-tidy with the checks that the
# Makefile names (CPPCHECK_CHECKS, TIDY_CHECKS), the include structure
# (tools/check_layers.py) and growth only through lib/vec.h
# (tools/check_growth.py). Fails on any finding.
# Usage: tools/lint.sh BUILD_DIR 'CPPCHECK_CHECKS' 'TIDY_CHECKS' CFLAGS...
set -u
OUT=$1 CPPCHECK_CHECKS=$2 TIDY_CHECKS=$3
shift 3
cd "$(dirname "$0")/.."
dirs=(); for d in user/*/; do dirs+=("-I${d%/}"); done
rc=0

echo "  CPPCHECK user/ ($CPPCHECK_CHECKS)"
cppcheck -q --std=c11 --enable="$CPPCHECK_CHECKS" --inline-suppr --error-exitcode=1 \
	--max-configs=1 --library=tools/lint/cppcheck.cfg -D_GNU_SOURCE \
	-D__"$(uname -m)"__ -Iinclude "${dirs[@]}" \
	--suppress=missingIncludeSystem --suppress=missingInclude -j2 user/ || rc=1

echo "  TIDY     user/ ($TIDY_CHECKS)"
# The generated skeleton (OUT/infertrace.skel.h) is bpftool's code: its
# findings are dropped.
# One clang-tidy per CPU, each on a share of the files: one process alone
# took most of make lint's time.
log=$(mktemp)
files=(user/*/*.c)
jobs=$(nproc)
for ((j = 0; j < jobs; j++)); do
	share=()
	for ((i = j; i < ${#files[@]}; i += jobs)); do share+=("${files[i]}"); done
	[ ${#share[@]} -gt 0 ] || continue
	clang-tidy -quiet --checks="-*,$TIDY_CHECKS" --warnings-as-errors='*' "${share[@]}" -- "$@" >"$log.$j" 2>&1 &
done
wait
cat "$log".* >"$log" 2>/dev/null
rm -f "$log".*
if grep -E '(warning|error):' "$log" | grep -v "^$OUT/\|/$OUT/" | grep -q .; then
	grep -v '^[0-9]* warnings\? generated\|^Suppressed\|^Use -header-filter\|NOLINT' "$log" >&2
	rc=1
fi
rm -f "$log"

# the include structure: layers and circles (tools/layers.txt), from the
# sources and the objects' symbols
python3 tools/check_layers.py --objects "$OUT" || rc=1
# tables grow with lib/vec.h: no realloc() elsewhere (tools/growth-allowlist.txt)
python3 tools/check_growth.py || rc=1
exit $rc
