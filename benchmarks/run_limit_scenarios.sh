#!/usr/bin/env bash
# The diagnosis when torch says nothing, on a real NVIDIA machine: `check --json` (kernels included) and a snapshot
# in each situation a job script or a typo sets up (an address-space limit, a low open-file limit, one CPU, a
# repeated or misspelt visibility variable, a CUDA driver JIT switch), with the plain machine first; then
# `bench --quick` pinned to one CPU. Prints the headline and the first root causes of each.
# Usage (from the repository root, on a machine whose python3 has a CUDA build of torch):
#   bash benchmarks/run_limit_scenarios.sh OUTDIR
USAGE="run_limit_scenarios.sh OUTDIR"
source "$(dirname "$0")/_install.sh"
summary() {
  python3 - "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as exc:
    print("  no JSON:", exc); sys.exit()
g = d["diagnosis"]
print(" ", g["headline"])
for r in g["root_causes"][:3]:
    print(f"  root {r['finding']} [{r['status']}]: {r['message'][:170]}")
    print(f"    explains: {', '.join(r['symptoms'][:6]) or '-'}; plan: {', '.join(r['plan'][:3]) or '-'}")
k = d["stages"].get("kernels") or {}
a = k.get("analysis") or {}
print("  kernels:", "ran" if k.get("ran") else f"not run ({k.get('reason')})", a.get("ok"), "ok;",
      len(a.get("failed") or []), "failed")
PY
}
situation() {  # name, then a shell prefix (ulimit / env / taskset) for the doctor
  local name=$1; shift
  echo "=== $(date -u +%FT%TZ) $name: ${*:-as the machine is}"
  local t0=$(date +%s%N)
  bash -c "$* python3 -m rocm_doctor check --json --no-history" > "$out/check-$name.json" 2> "$out/check-$name.err"
  echo "  rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))"
  summary "$out/check-$name.json"
  bash -c "$* python3 -m rocm_doctor snapshot -o $out/snapshot-$name.json" > /dev/null 2>&1 || echo "  snapshot rc=$?"
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
situation plain ""
situation address-space-8gib "ulimit -v 8388608;"
situation open-files-32 "ulimit -n 32;"
situation one-cpu "taskset -c 0"
situation visible-0-0 "CUDA_VISIBLE_DEVICES=0,0"
situation force-ptx-jit "CUDA_FORCE_PTX_JIT=1"
situation misspelt-visible "CUDA_VISIBLE_DEVICE=0"
t0=$(date +%s%N); python3 -m rocm_doctor check --no-gpu --json --no-history > /dev/null 2>&1
echo "=== check --no-gpu wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))"
echo "=== bench --quick pinned to one CPU"
taskset -c 0 timeout 200 python3 -m rocm_doctor bench --quick --json > "$out/bench-one-cpu.json" 2>/dev/null
echo "  rc=$?"
python3 - "$out/bench-one-cpu.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as exc:
    print("  no JSON:", exc); sys.exit()
for f in d.get("findings") or []:
    if f["status"] not in ("ok", "skip"):
        print(f"  {f['check']} [{f['status']}]: {f['message'][:220]}")
PY
