#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The real-GPU check of kernel timing (docs/side-data.md): on a machine with
# an NVIDIA GPU and PyTorch, runs tests/fixtures/torch_gpu_loop.py untraced,
# under `record --cupti off` and under `record` (CUPTI), in turns, ROUNDS
# times; compares each cycle's GPU busy time with the fixture's CUDA events
# and its kernel count with what it launched, and the fixture's own cycle
# wall time across the three modes (the cost, side by side in one run).
#   tools/gpu-check.sh OUTDIR [CYCLES] [ROUNDS]
# The binary may be built elsewhere: libraries it needs that the machine
# lacks can sit in .devlibs/ beside the checkout (LD_LIBRARY_PATH).
set -u
out=${1:?usage: tools/gpu-check.sh OUTDIR [CYCLES] [ROUNDS]}
cycles=${2:-150}
rounds=${3:-2}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
[ -d "$root/.devlibs" ] && export LD_LIBRARY_PATH="$root/.devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
it="$root/build/infertrace"
fix="$root/tests/fixtures/torch_gpu_loop.py"
py=$(command -v python3)

echo "== machine"
uname -r
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
"$py" -c 'import torch; print("python", __import__("sys").version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
"$it" --version || exit 1
# the libcupti a PyTorch wheel brings, and its API version (the injection
# library accepts the versions whose record layouts it was checked against)
"$py" - <<'EOF2'
import ctypes, glob, os, site
paths = []
for d in site.getsitepackages():
    paths += glob.glob(os.path.join(d, "nvidia", "**", "libcupti.so*"), recursive=True)
paths += glob.glob("/usr/local/cuda*/extras/CUPTI/lib64/libcupti.so*") + glob.glob("/usr/local/cuda*/lib64/libcupti.so*")
for p in sorted(set(paths)):
    try:
        v = ctypes.c_uint32()
        ctypes.CDLL(p).cuptiGetVersion(ctypes.byref(v))
        print("libcupti", p, "version", v.value)
    except OSError as e:
        print("libcupti", p, "not loaded:", e)
EOF2
grep -h "define CUPTI_API_VERSION " /usr/local/cuda*/include/cupti_version.h /usr/local/cuda*/extras/CUPTI/include/cupti_version.h 2>/dev/null | sort -u

specs=(--cycle py:run_cycle --phase prepare=py:prepare --phase forward=py:forward --phase wait=py:wait)
run() { # MODE ROUND
	local mode=$1 r=$2 t0=$SECONDS
	case $mode in
	plain) "$py" "$fix" "$cycles" "$out/$mode.$r.json" ;;
	off) "$it" record -o "$out/rec-$mode.$r" --cupti off "${specs[@]}" -- "$py" "$fix" "$cycles" "$out/$mode.$r.json" ;;
	cupti) "$it" record -o "$out/rec-$mode.$r" "${specs[@]}" -- "$py" "$fix" "$cycles" "$out/$mode.$r.json" ;;
	esac >"$out/$mode.$r.log" 2>&1
	echo "$mode round $r: exit $? in $((SECONDS - t0)) s"
	tail -n 3 "$out/$mode.$r.log" | sed 's/^/    /'
}
echo "== runs ($cycles cycles each)"
for r in $(seq 1 "$rounds"); do
	for mode in plain off cupti; do run "$mode" "$r"; done
done

echo "== comparison"
"$py" - "$out" "$rounds" <<'EOF'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(p):
    try:
        return json.load(open(p))
    except (OSError, ValueError) as e:
        print("  missing", p, e)
        return None
med = {}
for mode in ("plain", "off", "cupti"):
    walls = []
    for r in range(1, rounds + 1):
        f = load(f"{out}/{mode}.{r}.json")
        if f:
            walls += f["wall_ms"][5:]  # the first cycles warm caches
    med[mode] = statistics.median(walls) if walls else float("nan")
    print(f"  {mode:6s} median cycle {med[mode]:.3f} ms over {len(walls)} cycles")
print(f"  cost: record without CUPTI {med['off'] / med['plain']:.4f}x, with CUPTI {med['cupti'] / med['plain']:.4f}x"
      f" (CUPTI alone {med['cupti'] / med['off']:.4f}x)")
for r in range(1, rounds + 1):
    f = load(f"{out}/cupti.{r}.json")
    p = load(f"{out}/rec-cupti.{r}/profile.json")
    if not f or not p:
        continue
    act = p.get("gpu", {}).get("activity", {})
    print(f"  round {r}: gpu.activity source={act.get('source')} notice={act.get('notice')!r}"
          f" kernels={act.get('kernels')} unattributed={act.get('unattributed')} dropped={act.get('dropped')}"
          f" clock={act.get('clock')}")
    cyc = p.get("cycles", [])
    print(f"  round {r}: {len(cyc)} cycles in profile, {len(f['event_ms'])} in the fixture")
    errs, kern_eq, kern_ne = [], 0, []
    for i, c in enumerate(cyc[:len(f["event_ms"])]):
        devs = (c.get("gpu") or {}).get("devices") or []
        if not devs:
            continue
        busy, ev = devs[0]["busy_ms"], f["event_ms"][i]
        errs.append(abs(busy - ev) / ev)
        if devs[0]["kernels"] == f["ops"][i]:
            kern_eq += 1
        else:
            kern_ne.append((i, devs[0]["kernels"], f["ops"][i]))
    if errs:
        errs.sort()
        print(f"  round {r}: busy vs CUDA events: median error {100 * errs[len(errs) // 2]:.2f}%,"
              f" max {100 * errs[-1]:.2f}%, within 5%: {sum(e <= 0.05 for e in errs)}/{len(errs)}")
        print(f"  round {r}: kernel count equal to ops launched in {kern_eq}/{len(errs)} cycles; first others {kern_ne[:5]}")
        d = devs[0]
        print(f"  round {r}: last cycle device 0: busy {d['busy_ms']:.3f} idle {d['idle_ms']:.3f} window {d['window_ms']:.3f}"
              f" top {[(k['name'][:60], k['count'], round(k['ms'], 3)) for k in d.get('top_kernels', [])[:3]]}")
EOF
echo "== a launch-bound loop: 40 products of 256 x 256 per cycle, no host spin"
"$it" record -o "$out/rec-small" "${specs[@]}" -- "$py" "$fix" 100 "$out/small.json" 256 40 0 >"$out/small.log" 2>&1
echo "exit $?"
"$py" - "$out" <<'EOF3'
import json, sys
out = sys.argv[1]
f, p = json.load(open(f"{out}/small.json")), json.load(open(f"{out}/rec-small/profile.json"))
ok = sum(1 for i, c in enumerate(p["cycles"][:len(f["ops"])])
         if (c.get("gpu") or {}).get("devices") and c["gpu"]["devices"][0]["kernels"] == f["ops"][i])
print(f"  kernel count equal to ops launched in {ok}/{len(p['cycles'])} cycles")
d = p["gpu"]["activity"]["devices"][0]
print(f"  over the cycles: busy {d['busy_ms']:.2f} active {d['active_ms']:.2f} idle {d['idle_ms']:.2f}"
      f" idle_host {d['idle_host_ms']:.2f} sync {d['sync_ms']:.2f} of {d['window_ms']:.2f} ms")
print("  verdicts:", [(b["type"], b["severity"]) for b in p.get("bottlenecks", [])])
for s in d.get("idle_stacks", [])[:2]:
    print("  idle stack:", s["ms"], s["stack"][-200:])
EOF3
echo "== report (CUPTI, round 1)"
"$it" report "$out/rec-cupti.1" 2>&1 | sed -n '/GPU/,$p' | head -n 40
tar -C "$out" -czf "$out/rec-cupti.tar.gz" rec-cupti.1 2>/dev/null
true
