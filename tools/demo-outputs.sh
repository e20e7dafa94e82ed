# SPDX-License-Identifier: BSD-2-Clause
# Sourced by tools/demo.sh and tools/demo-python.sh: demo_outputs OUT [FILE...]
# prints where a demo's outputs are (FILE...: the driver's own, first) and
# what opens each.
demo_outputs() {
	out=$1
	shift
	echo "Outputs:"
	for f in "$@" profile.json stacks.folded offcpu.folded trace.json timeline.speedscope.json \
		profile.pb.gz flamegraph.svg offcpu.svg report.html; do
		[ -e "$out/$f" ] && printf '  %-24s %s\n' "$f" "$out/$f"
	done
	for f in "$out"/stacks.*.folded; do
		if [ -s "$f" ]; then printf "  %-24s %s\n" "per phase" "$f"; fi
	done
	echo "Open report.html and the SVGs in a browser; timeline.speedscope.json (samples per thread over"
	echo "time) in speedscope; trace.json (cycles, phases, off-CPU) in https://ui.perfetto.dev;"
	echo "profile.pb.gz with go tool pprof (docs/outputs.md)."
}
