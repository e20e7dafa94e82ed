#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The llama.cpp half of the real-GPU cost check of kernel timing
# (docs/side-data.md; tools/gpu-check.sh is the PyTorch half). On a machine
# with an NVIDIA GPU and the CUDA toolkit: builds llama.cpp's llama-bench
# with CUDA from the source node-llama-cpp bundles (demo/node_modules, carry
# it), generates tools/gguf_gen.py's bench model, and runs llama-bench's
# decode test untraced, under `record --cupti off` and under `record`
# (CUPTI), in turns, ROUNDS times. llama-bench times itself: the ratio of
# its tokens/s per mode is the cost, side by side in one run.
#   tools/gpu-llama-check.sh OUTDIR [TOKENS] [ROUNDS]
# CUDA_ARCH (default 90: H100, H200) names the GPU architecture to build for;
# LLAMA_SRC_TAR, a tarball of that source, replaces the bundle (a machine
# without git); BUILD_TIMEOUT (default 480 s) bounds the build, which a
# second call in the same OUTDIR reuses. REPS (default 3) is llama-bench's
# repetitions per run; MODES (default "off full auto") the --cupti modes;
# DEADLINE_S (seconds from the start) starts no round that would end past
# it (ROUND_EST_S: the first round's expected length).
# Per run, llama-bench's own time of each repetition shows the windows:
# under auto, repetitions inside a window on run at full's cost.
set -u
t_start=$(date +%s)
out=${1:?usage: tools/gpu-llama-check.sh OUTDIR [TOKENS] [ROUNDS]}
tokens=${2:-256}
rounds=${3:-3}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
# libraries a binary built elsewhere lacks (.devlibs/), for it alone: the
# compilers and the untraced runs keep the machine's own
devlibs=$([ -d "$root/.devlibs" ] && echo "$root/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" || echo "${LD_LIBRARY_PATH:-}")
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
it="$root/build/infertrace"
itr() { LD_LIBRARY_PATH="$devlibs" "$it" "$@"; }
bundle="$root/demo/node_modules/node-llama-cpp/llama/gitRelease.bundle"
cmake=$(command -v cmake)
for c in /opt/*/.venv/bin/cmake; do
	[ -z "$cmake" ] && [ -x "$c" ] && cmake=$c
done
[ -x "$it" ] || { echo "no $it: build it (or copy it) first" >&2; exit 1; }
[ -f "$bundle" ] || [ -f "${LLAMA_SRC_TAR:-}" ] ||
	{ echo "no $bundle: run 'make demo' (or carry it, or set LLAMA_SRC_TAR)" >&2; exit 1; }
if [ -z "$cmake" ] || ! command -v nvcc >/dev/null || ! command -v nvidia-smi >/dev/null; then
	echo "needs cmake, nvcc and an NVIDIA GPU (nvidia-smi)" >&2
	exit 1
fi

echo "== machine"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc --version | tail -1
itr --version

echo "== build (llama-bench, CUDA arch ${CUDA_ARCH:-90})"
t0=$(date +%s)
src="$out/llama"
if [ -x "$src/b/bin/llama-bench" ]; then
	echo "reused from an earlier call"
else
rm -rf "$src"
if [ -f "${LLAMA_SRC_TAR:-}" ]; then
	mkdir -p "$src" && tar xzf "$LLAMA_SRC_TAR" -C "$src" || { echo "untar failed" >&2; exit 1; }
else
	git clone -q "$bundle" "$src" 2>/dev/null || { echo "clone failed" >&2; exit 1; }
fi
"$cmake" -S "$src" -B "$src/b" -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON \
	-DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DGGML_CUDA_FA=OFF -DLLAMA_CURL=OFF \
	-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
	-DLLAMA_OPENSSL=OFF >"$out/cmake.log" 2>&1 || { tail -20 "$out/cmake.log"; exit 1; }
timeout "${BUILD_TIMEOUT:-480}" "$cmake" --build "$src/b" -j"$(nproc)" --target llama-bench \
	>"$out/build.log" 2>&1 || { echo "build failed or timed out after $(( $(date +%s) - t0 )) s"; tail -30 "$out/build.log"; exit 1; }
echo "built in $(( $(date +%s) - t0 )) s"
fi
python3 "$root/tools/gguf_gen.py" --preset bench -o "$out/bench.gguf" || exit 1

bench=("$src/b/bin/llama-bench" -m "$out/bench.gguf" -ngl 99 -p 0 -n "$tokens" -r "${REPS:-3}" -o json)
modes=${MODES:-off full auto}
# native launch stacks: the kernels' time under llama.cpp's own frames,
# every kernel recorded (a shorter run: REPS_STACKS)
stacks=("$src/b/bin/llama-bench" -m "$out/bench.gguf" -ngl 99 -p 0 -n "$tokens" -r "${REPS_STACKS:-10}" -o json)
itr record -o "$out/stacks" --preset llama.cpp --preset cuda --cupti full -- "${stacks[@]}" \
	>"$out/stacks.json" 2>"$out/stacks.err"
tail -n 2 "$out/stacks.err"
# modes: untraced, then record with each --cupti mode, in turns
done_rounds=0
last_round=${ROUND_EST_S:-0}
for r in $(seq 1 "$rounds"); do
	# a round is started only if one as long as the last (the first: as
	# ROUND_EST_S) ends by the deadline
	if [ -n "${DEADLINE_S:-}" ] &&
		[ $(( $(date +%s) - t_start + last_round )) -gt "$DEADLINE_S" ]; then
		echo "round $r not started: it would end past DEADLINE_S ($DEADLINE_S s)"
		break
	fi
	t_round=$(date +%s)
	"${bench[@]}" >"$out/plain.$r.json" 2>"$out/plain.$r.err"
	for mode in $modes; do
		itr record -o "$out/$mode.$r" --preset llama.cpp --cupti "$mode" -- "${bench[@]}" \
			>"$out/$mode.$r.json" 2>"$out/$mode.$r.err"
	done
	done_rounds=$r
	last_round=$(( $(date +%s) - t_round ))
	echo "round $r done in $last_round s"
done

python3 - "$out" "$done_rounds" "plain $modes" <<'EOF'
import json, statistics, sys
out, rounds, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
def bench(path):
    try:
        return json.load(open(path))[0]
    except (OSError, ValueError, KeyError, IndexError):
        return None
runs = {m: [bench(f"{out}/{m}.{r}.json") for r in range(1, rounds + 1)] for m in modes}
rates = {m: [b["avg_ts"] if b else None for b in v] for m, v in runs.items()}
print("== llama-bench decode tokens/s per round:", rates)
med = {m: statistics.median([x for x in v if x]) if any(v) else None for m, v in rates.items()}
for m in modes[1:]:
    if med["plain"] and med[m]:
        print(f"  {m}: {med[m]:.1f} t/s, cost {med['plain'] / med[m]:.4f}x the untraced {med['plain']:.1f} t/s")
# each repetition's time against the untraced runs' median repetition: a
# window on shows as a repetition at full's cost
base = [ns for b in runs["plain"] if b for ns in b.get("samples_ns", [])]
if base:
    b0 = statistics.median(base)
    for m in modes:
        for r, b in enumerate(runs[m], 1):
            if not b:
                continue
            x = [ns / b0 for ns in b.get("samples_ns", [])]
            if x:
                print(f"  {m}.{r}: {len(x)} reps, {sum(b.get('samples_ns', [])) / 1e9:.1f} s: mean {statistics.mean(x):.4f}x,"
                      f" median {statistics.median(x):.4f}x, reps over 1.2x: {sum(1 for v in x if v > 1.2)},"
                      f" mean past the first 3 s {statistics.mean(x[int(3e9 / b0):] or x):.4f}x")
for m in [m for m in ("full", "auto") if m in modes]:
  try:
    p = json.load(open(f"{out}/{m}.1/profile.json"))
    a = p.get("gpu", {}).get("activity", {})
    print(f"== --cupti {m}, run 1: kernels", a.get("kernels"), "dropped", a.get("dropped"), "unattributed",
        a.get("unattributed"), "cycles", len(p.get("cycles", [])), "sampling", a.get("sampling"))
    d = (a.get("devices") or [{}])[0]
    print("  run figures: busy_ms", d.get("busy_ms"), "window_ms", d.get("window_ms"), "kernels", d.get("kernels"))
    print("  bottlenecks:", [(b["type"], b.get("severity")) for b in p.get("bottlenecks", [])])
    cyc = [c.get("gpu", {}).get("devices", [{}]) for c in p.get("cycles", [])]
    busy = sorted(d[0].get("busy_ms", 0) for d in cyc if d)
    kern = sorted(d[0].get("kernels", 0) for d in cyc if d)
    if busy:
        print("  per cycle (llama_decode): median busy %.3f ms, median kernels %d" % (busy[len(busy) // 2], kern[len(kern) // 2]))
    print("  cupti:", a.get("cupti"), "notice:", a.get("notice"))
  except (OSError, ValueError) as e:
    print("no CUPTI profile:", e)
try:
    f = {}
    for line in open(f"{out}/stacks/gpu.folded"):
        s, n = line.rsplit(" ", 1)
        f[s] = f.get(s, 0) + int(n)
    tot = sum(f.values())
    # a launch stack: frames between the phase (root) and the kernel (leaf)
    native = sum(n for s, n in f.items() if s.count(";") > 1)
    print("== launch stacks: %d stacks, %d us, %.1f%% under a launch stack" % (len(f), tot, 100.0 * native / max(tot, 1)))
    for s, n in sorted(f.items(), key=lambda kv: -kv[1])[:5]:
        parts = s.split(";")
        print("  %9d  %s" % (n, ";".join(x[:40] for x in parts[-6:])))
    p = json.load(open(f"{out}/stacks/profile.json"))
    print("  launch_stacks:", p.get("gpu", {}).get("cuda", {}).get("launch_stacks"),
          "lost:", p.get("lost", {}).get("gpu_launch_stacks"))
    print("  bpf:", [(x.get("name"), x.get("runs"), x.get("ns_per_run")) for x in p.get("self", {}).get("bpf", {}).get("programs", [])][:6])
except (OSError, ValueError) as e:
    print("no launch-stack profile:", e)
EOF
