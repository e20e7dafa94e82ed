#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Runs each libFuzzer harness in BUILD/fuzz for SECONDS from its corpus
# (tests/fuzz/corpus/NAME, read only: new inputs go to a scratch copy), after
# replaying every corpus file. Fails when a harness finds a crash, a leak or
# a hang; the input is kept in BUILD/fuzz/findings/.
set -u
BUILD=$1 SECONDS_EACH=$2
cd "$(dirname "$0")/.."
rc=0
mkdir -p "$BUILD/fuzz/findings"
for bin in "$BUILD"/fuzz/fuzz_*; do
	[ -x "$bin" ] && [ "${bin%.d}" = "$bin" ] || continue
	name=$(basename "$bin" | sed 's/^fuzz_//')
	corpus=tests/fuzz/corpus/$name
	work=$(mktemp -d)
	log=$BUILD/fuzz/$name.log
	[ -d "$corpus" ] && cp -r "$corpus"/. "$work"/
	# every input at most 5 s and 512 MB; inputs up to 64 KiB
	if ASAN_OPTIONS=detect_leaks=1 "$bin" -max_total_time="$SECONDS_EACH" -timeout=5 -rss_limit_mb=512 \
		-max_len=65536 -artifact_prefix="$BUILD/fuzz/findings/$name-" "$work" >"$log" 2>&1; then
		runs=$(grep -o 'Done [0-9]* runs' "$log" | tail -1)
		echo "  FUZZ     $name: ${runs:-done}, $(ls "$corpus" 2>/dev/null | wc -l) corpus files"
	else
		echo "  FUZZ     $name: FAILED (log: $log, input in $BUILD/fuzz/findings/)" >&2
		grep -m5 -A12 'ERROR\|runtime error\|==ERROR' "$log" >&2
		rc=1
	fi
	rm -rf "$work"
done
exit $rc
