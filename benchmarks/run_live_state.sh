#!/usr/bin/env bash
# The live GPU state on a real one-GPU NVIDIA machine: the plain machine, then a second python process that holds
# most of the GPU memory with torch and spins a matmul loop, then a CUDA_VISIBLE_DEVICES UUID that matches no GPU;
# each through `check --json` (kernels included) and `snapshot`, then a table of what each run put first.
# Usage (from the repository root, on a machine whose python3 has a CUDA build of torch):
#   bash benchmarks/run_live_state.sh OUTDIR
USAGE="run_live_state.sh OUTDIR"
source "$(dirname "$0")/_install.sh"
QUERY=index,uuid,name,utilization.gpu,memory.used,memory.total,clocks.sm,power.draw,clocks_throttle_reasons.active
scenario() {  # name, then VAR=value ... for env
  local name=$1; shift
  echo "=== $(date -u +%FT%TZ) $name ($*)"
  nvidia-smi --query-gpu=$QUERY --format=csv,noheader | tee "$out/nvidia-smi-$name.txt"
  nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader | tee -a "$out/nvidia-smi-$name.txt"
  env "$@" python3 -m rocm_doctor snapshot -o "$out/snapshot-$name.json" > /dev/null 2>&1
  env "$@" python3 -m rocm_doctor check --json > "$out/check-$name.json" 2> "$out/check-$name.err"
  echo "rc=$?" | tee "$out/check-$name.rc"
}
scenario plain

python3 - "$out/hog.pid" <<'PY' > "$out/hog.log" 2>&1 &
import os, sys, time
import torch
free, total = torch.cuda.mem_get_info()
hold = torch.empty(int(free * 0.93), dtype=torch.uint8, device="cuda")
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
open(sys.argv[1], "w").write(str(os.getpid()))
print(f"holding {hold.numel() / 2**20:.0f} MiB of {total / 2**20:.0f} MiB", flush=True)
while True:
    b = a @ a
    torch.cuda.synchronize()
PY
hog=$!
for _ in $(seq 60); do [ -s "$out/hog.pid" ] && break; sleep 1; done
sleep 3
cat "$out/hog.log"
scenario other-process
kill "$hog"; wait "$hog" 2>/dev/null
sleep 2

scenario bad-uuid CUDA_VISIBLE_DEVICES=GPU-00000000-1111-2222-3333-444444444444

echo "=== what each run put first"
python3 - "$out" "$(cat "$out/hog.pid" 2>/dev/null)" <<'PY'
import json, sys
out, hog = sys.argv[1], sys.argv[2]
print(f"{'scenario':<14} {'rc':<3} {'first root cause':<42} status  message")
for name in ("plain", "other-process", "bad-uuid"):
    try:
        report = json.load(open(f"{out}/check-{name}.json"))
    except (OSError, ValueError) as exc:
        print(f"{name:<14} -   (no report: {exc})")
        continue
    rc = open(f"{out}/check-{name}.rc").read().strip().removeprefix("rc=")
    roots = report["diagnosis"]["root_causes"]
    first = roots[0] if roots else {"finding": "-", "status": "-", "message": report["diagnosis"]["headline"]}
    print(f"{name:<14} {rc:<3} {first['finding']:<42} {first['status']:<7} {first['message'][:110]}")
    for r in roots[1:4]:
        print(f"{'':<18} {r['finding']:<42} {r['status']:<7} {r['message'][:110]}")
try:
    live = json.load(open(f"{out}/check-other-process.json"))["findings"]
except (OSError, ValueError):
    live = []
named = [f["id"] for f in live if f["check"] in ("gpu-other-process", "gpu-memory-held") and f"pid {hog} " in f["message"]]
print(f"second process (pid {hog}) named by: {', '.join(named) or 'nothing'}")
PY
