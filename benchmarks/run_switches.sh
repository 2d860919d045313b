#!/usr/bin/env bash
# Stages watch the GPU, and switches are proven by measurement, on a real one-GPU NVIDIA machine: `bench --quick
# --json` on the plain machine, with CUDA_LAUNCH_BLOCKING=1 (the bench re-runs the sections it moves in a fresh
# child without it), and while a second python process computes on the GPU; then a short table of each run.
# SECTIONS (default: the quick preset's sections but the CNN, batch sweep and convolution ones, to keep device
# time short; SECTIONS= runs them all) picks the sections.
# Usage (from the repository root, on a machine whose python3 has a CUDA build of torch):
#   bash benchmarks/run_switches.sh OUTDIR
USAGE="run_switches.sh OUTDIR"
source "$(dirname "$0")/_install.sh"
sections=()
for name in ${SECTIONS-matmul memory launch sdpa compare decoder reference}; do sections+=(--section "$name"); done
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks_throttle_reasons.active --format=csv,noheader
bench() {  # name, then VAR=value ... for env
  local name=$1; shift
  echo "=== $(date -u +%FT%TZ) bench --quick ${sections[*]}: $name ($*)"
  local t0=$(date +%s%N)
  env "$@" timeout 150 python3 -m rocm_doctor bench --quick --json "${sections[@]}" > "$out/bench-$name.json" \
    2> "$out/bench-$name.err"
  echo "rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))" | tee "$out/bench-$name.rc"
}
bench plain
bench launch-blocking CUDA_LAUNCH_BLOCKING=1

python3 - "$out/hog.pid" <<'PY' > "$out/hog.log" 2>&1 &
import os, sys
import torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
hold = torch.empty(8 << 30, dtype=torch.uint8, device="cuda")
open(sys.argv[1], "w").write(str(os.getpid()))
print("computing", flush=True)
while True:
    b = a @ a
    torch.cuda.synchronize()
PY
hog=$!
for _ in $(seq 60); do [ -s "$out/hog.pid" ] && break; sleep 1; done
sleep 2
nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
bench other-process
kill "$hog"; wait "$hog" 2>/dev/null

echo "=== what each run measured and said first"
python3 - "$out" "$(cat "$out/hog.pid" 2>/dev/null)" <<'PY'
import json, sys
out, hog = sys.argv[1], sys.argv[2]
KEYS = (("matmul.bf16", "bf16 mm"), ("memory.read", "read"), ("launch.back_to_back", "launch"),
        ("decoder.decode.gpu", "decode"))
print(f"{'run':<16} {'rc':<3} {'wall s':>6}  " + "  ".join(f"{label:>15}" for _, label in KEYS)
      + f"  {'samples':>11}  unreliable  first problem")
for name in ("plain", "launch-blocking", "other-process"):
    try:
        report = json.load(open(f"{out}/bench-{name}.json"))
    except (OSError, ValueError) as exc:
        print(f"{name:<16} (no report: {exc})")
        continue
    rc, wall = (x.split("=")[1] for x in open(f"{out}/bench-{name}.rc").read().split())
    lines = {l["key"]: l for l in report["analysis"]["lines"]}
    figures = "  ".join(f"{lines[k]['value']:>9.4g} {lines[k]['unit'][:5]:<5}" if k in lines and lines[k]["value"]
                        else f"{'-':>15}" for k, _ in KEYS)
    live = report["results"].get("live") or {}
    sampled = f"{len(live.get('samples') or [])} ({live.get('seconds') or 0:.2f} s)"
    unreliable = sum(1 for l in report["analysis"]["lines"] if l.get("unreliable"))
    problems = [f for f in report["findings"] if f["status"] in ("warn", "fail")]
    problems.sort(key=lambda f: (f["check"] != "env-switch-slows", f["status"] != "fail"))
    first = f"{problems[0]['id']} [{problems[0]['status']}]" if problems else "-"
    print(f"{name:<16} {rc:<3} {float(wall) / 1000:>6.1f}  {figures}  {sampled:>11}  {unreliable:>10}  {first}")
    for f in problems[:4]:
        print(f"{'':<18}{f['status']:<5} {f['id']}: {f['message'][:170]}")
    for c in report["analysis"]["observed"]["switches"]:
        for fig in c["figures"]:
            print(f"{'':<18}without {c['variable']}={c['value']}: {fig['label']}: {fig['without']:.4g} against "
                  f"{fig['with']:.4g} {fig['unit']} ({fig['speedup']:.2f}x)")
    ab = report["results"].get("switch_ab") or {}
    for run in ab.get("runs") or []:
        print(f"{'':<18}re-ran {', '.join(run['sections'])} without {run['variable']} "
              f"({(run.get('results') or {}).get('elapsed_s')} s): {run['why'][:120]}")
print(f"second process pid {hog}")
PY
