#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The real-GPU check of native launch stacks (docs/side-data.md): builds
# tests/fixtures/cuda_native_loop.cu with nvcc and records it with
# --preset cuda --cupti full; each kernel's launches must be folded in
# gpu.folded under its phase and the fixture's own launching frames.
#   tools/gpu-native-check.sh OUTDIR [CYCLES]
set -u
out=${1:?usage: tools/gpu-native-check.sh OUTDIR [CYCLES]}
cycles=${2:-40}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
devlibs=$([ -d "$root/.devlibs" ] && echo "$root/.devlibs" || echo "${LD_LIBRARY_PATH:-}")
nvcc -O1 -g -arch="sm_${CUDA_ARCH:-90}" -Xcompiler -fno-omit-frame-pointer \
	-o "$out/cuda_native_loop" "$root/tests/fixtures/cuda_native_loop.cu" || exit 1
LD_LIBRARY_PATH="$devlibs" timeout -s INT "${RECORD_TIMEOUT:-90}" "$root/build/infertrace" record -o "$out/rec" \
	--cycle run_cycle --phase attention=attention --phase mlp=mlp_phase --preset cuda --cupti full \
	-- "$out/cuda_native_loop" "$cycles" >"$out/fixture.json" 2>"$out/record.err"
echo "record exit $?; the fixture: $(cat "$out/fixture.json")"
tail -n 4 "$out/record.err"
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
truth = json.load(open(f"{out}/fixture.json"))
p = json.load(open(f"{out}/rec/profile.json"))
a = p.get("gpu", {}).get("activity", {})
print("cycles", len(p.get("cycles", [])), "kernels", a.get("kernels"), "of", truth["launched"], "launched;",
      "launch_stacks", p.get("gpu", {}).get("cuda", {}).get("launch_stacks"), "lost", p.get("lost", {}).get("gpu_launch_stacks"))
f = {}
for line in open(f"{out}/rec/gpu.folded"):
    s, n = line.rsplit(" ", 1)
    f[s] = f.get(s, 0) + int(n)
for s, n in sorted(f.items(), key=lambda kv: -kv[1])[:6]:
    print("  %9d us  %s" % (n, s[:300]))
PY
