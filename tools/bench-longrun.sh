#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Long runs (issue 14): as root, after `make`.
#   tools/bench-longrun.sh rss [BUILD_DIR]
#     The tracer's RSS over a long run, every STEP seconds for DURATION
#     seconds: tests/fixtures/tick_cycles (SPIN_MS of CPU, SLEEP_MS asleep per
#     cycle) recorded twice at the same time, without and with --rotate
#     (--checkpoint PERIOD --rotate KEEP); then the disk the rotated output takes, and
#     how long the unrotated tracer takes to write its outputs at the end.
#     DURATION (600), STEP (10), PERIOD (60), KEEP (3), SPIN_MS (4), SLEEP_MS (6).
#   tools/bench-longrun.sh spool [BUILD_DIR]
#     The tracer's RSS without --rotate, every STEP seconds for DURATION
#     seconds (1800), on tests/fixtures/many_cycles (cycles of SPIN_MS of CPU
#     in two phases and SLEEP_MS asleep: 0.4 and 0.3), recorded with
#     --call-graph CALL_GRAPH (fp): finished cycles go to OUT/records.spool,
#     whose size is printed beside the RSS.
#   tools/bench-longrun.sh overhead [BUILD_DIR]
#     The fixture experiment's own median cycle time recorded with the same
#     options plus nothing / --metrics (curl on /metrics every second) /
#     --checkpoint 10, the conditions interleaved run by run (their order turning); the ratio of
#     medians per run and the median of those. RUNS (3), CYCLES (1000).
# Results are printed (tab-separated); BENCHMARKS.md quotes them.
set -euo pipefail
MODE=${1:?usage: tools/bench-longrun.sh rss|spool|overhead [BUILD_DIR]}
BUILD=${2:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IT=$BUILD/infertrace
[ "$(id -u)" -eq 0 ] || { echo "bench-longrun: run as root" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo -; }

rss() {
	local dur=${DURATION:-600} step=${STEP:-10} period=${PERIOD:-60} keep=${KEEP:-3}
	local spin=${SPIN_MS:-4} sleep_ms=${SLEEP_MS:-6} fix=$TMP/tick_cycles t0 t a b ta tb
	gcc -O1 -g -I"$ROOT/tests/fixtures" "$ROOT/tests/fixtures/tick_cycles.c" -o "$fix"
	"$IT" record -q -o "$TMP/plain" --cycle run_cycle -- "$fix" 100000000 "$spin" "$sleep_ms" \
		>"$TMP/plain.ticks" 2>"$TMP/plain.err" &
	a=$!
	"$IT" record -q -o "$TMP/rot" --checkpoint "$period" --rotate "$keep" --cycle run_cycle -- \
		"$fix" 100000000 "$spin" "$sleep_ms" >"$TMP/rot.ticks" 2>"$TMP/rot.err" &
	b=$!
	t0=$(date +%s)
	printf 's\tcycles plain\tRSS plain MB\tcycles rotated\tRSS rotated MB\trotated dirs\trotated disk MB\n'
	while :; do
		t=$(($(date +%s) - t0))
		printf '%d\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$(wc -l <"$TMP/plain.ticks")" \
			"$(awk -v k="$(rss_kb $a)" 'BEGIN {printf "%.1f", k / 1024}')" "$(wc -l <"$TMP/rot.ticks")" \
			"$(awk -v k="$(rss_kb $b)" 'BEGIN {printf "%.1f", k / 1024}')" \
			"$(find "$TMP/rot" -mindepth 1 -maxdepth 1 -type d | wc -l)" \
			"$(du -sm "$TMP/rot" | cut -f1)"
		[ "$t" -ge "$dur" ] && break
		sleep "$step"
	done
	ta=$(date +%s.%N)
	kill -INT "$a"
	wait "$a" || true
	tb=$(date +%s.%N)
	kill -INT "$b"
	wait "$b" || true
	echo "plain: outputs written in $(echo "$tb - $ta" | bc -l | cut -c1-6) s after SIGINT;" \
		"profile.json $(du -m "$TMP/plain/profile.json" | cut -f1) MB, output $(du -sm "$TMP/plain" | cut -f1) MB"
	echo "rotated: $(ls "$TMP/rot") ; $(du -sm "$TMP/rot" | cut -f1) MB;" \
		"largest period $(du -sm "$TMP"/rot/[0-9]* | sort -n | tail -1 | cut -f1) MB"
	grep -h "error\|warning" "$TMP/plain.err" "$TMP/rot.err" | sort | uniq -c | head -5 || true
}

spool() {
	local dur=${DURATION:-1800} step=${STEP:-10} spin=${SPIN_MS:-0.4} sleep_ms=${SLEEP_MS:-0.3}
	local fix=$TMP/many_cycles t0 t a
	gcc -O1 -g -fno-omit-frame-pointer -I"$ROOT/tests/fixtures" "$ROOT/tests/fixtures/many_cycles.c" -o "$fix"
	"$IT" record -q -o "$TMP/spool" --call-graph "${CALL_GRAPH:-fp}" --cycle run_cycle \
		--phase inference=inference --phase database=database --count tokens=token -- \
		"$fix" 2000000000 "$spin" "$sleep_ms" >"$TMP/spool.ticks" 2>"$TMP/spool.err" &
	a=$!
	t0=$(date +%s)
	printf 's\tcycles\tRSS MB\tspool MB\n'
	while :; do
		t=$(($(date +%s) - t0))
		printf '%d\t%s\t%s\t%s\n' "$t" "$(wc -l <"$TMP/spool.ticks")" \
			"$(awk -v k="$(rss_kb $a)" 'BEGIN {printf "%.1f", k / 1024}')" \
			"$(du -m "$TMP/spool/records.spool" 2>/dev/null | cut -f1)"
		[ "$t" -ge "$dur" ] && break
		sleep "$step"
	done
	kill -INT "$a"
	wait "$a" || true
	python3 -c 'import json, sys; p = json.load(open(sys.argv[1])); print("cycles in profile.json:", len(p["cycles"]), "lost:", {k: v for k, v in p["lost"].items() if v})' \
		"$TMP/spool/profile.json"
}

overhead() {
	local runs=${RUNS:-3} cycles=${CYCLES:-1000} exp=$TMP/experiment
	gcc -O1 -g -fno-omit-frame-pointer -pthread "$ROOT/tests/fixtures/experiment.c" -o "$exp"
	local probes=(--cycle run_cycle --phase inference=inference --phase database=database --count tokens=token)
	one() { # $1 = base|metrics|checkpoint: prints the fixture's median cycle ms
		local out=$TMP/$1 args=() pid url=""
		rm -rf "$out"
		case $1 in
		metrics) args=(--metrics 127.0.0.1:0) ;;
		checkpoint) args=(--checkpoint 10) ;;
		esac
		"$IT" record -o "$out" "${args[@]}" "${probes[@]}" -- "$exp" "$cycles" 20 4 5 2 \
			>"$TMP/fixture.json" 2>"$TMP/err" &
		pid=$!
		while kill -0 "$pid" 2>/dev/null; do
			if [ "$1" = metrics ]; then
				[ -n "$url" ] || url=$(grep -o 'http://[^ ]*' "$TMP/err" || true)
				[ -n "$url" ] && curl -s -o /dev/null "$url"
			fi
			sleep 1
		done
		wait "$pid"
		python3 - "$TMP/fixture.json" <<'EOF2'
import json, statistics, sys
print("%.3f" % statistics.median(json.load(open(sys.argv[1]))["cycle_ms"]))
EOF2
	}
	printf 'run\tbase ms\tmetrics ms\tcheckpoint ms\tmetrics/base\tcheckpoint/base\tload\n'
	for i in $(seq "$runs"); do
		# the order turns run by run, so that no condition always runs first
		case $((i % 3)) in
		1) b=$(one base); m=$(one metrics); c=$(one checkpoint) ;;
		2) m=$(one metrics); c=$(one checkpoint); b=$(one base) ;;
		0) c=$(one checkpoint); b=$(one base); m=$(one metrics) ;;
		esac
		printf '%d\t%s\t%s\t%s\t%.4f\t%.4f\t%s\n' "$i" "$b" "$m" "$c" "$(echo "$m / $b" | bc -l)" \
			"$(echo "$c / $b" | bc -l)" "$(cut -d' ' -f1 /proc/loadavg)"
	done
}

case $MODE in
rss) rss ;;
spool) spool ;;
overhead) overhead ;;
*) echo "bench-longrun: unknown mode '$MODE' (rss, spool or overhead)" >&2; exit 2 ;;
esac
