#!/usr/bin/env bash
# The diagnosis on a real GPU, set up the way users' machines often are: the plain machine, then one variable at a
# time that breaks it (every GPU hidden, a GPU UUID that matches none, a malformed allocator configuration), each
# through `check` (kernels included); then `kernels` and `bench --quick` end to end, and `check --bench`.
# Usage (from the repository root, on a machine whose python3 has a GPU build of torch):
#   bash benchmarks/run_diagnosis_scenarios.sh OUTDIR
USAGE="run_diagnosis_scenarios.sh OUTDIR"
source "$(dirname "$0")/_install.sh"
scenario() {  # name, then VAR=value ... for env
  local name=$1; shift
  echo "=== $(date -u +%FT%TZ) check: $name ($*)"
  env "$@" python3 -m rocm_doctor check --json > "$out/check-$name.json" 2> "$out/check-$name.err"
  echo "rc=$?"
  python3 - "$out/check-$name.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = d["diagnosis"]
print(g["headline"])
for r in g["root_causes"][:3]:
    print(f"  root {r['finding']} [{r['status']}]: {r['message'][:150]}")
    print(f"    explains: {', '.join(r['symptoms']) or '-'}")
    print(f"    plan: {', '.join(r['plan']) or '-'}")
k = d["stages"].get("kernels") or {}
print("  kernels:", "ran" if k.get("ran") else f"not run ({k.get('reason')})",
      (k.get("analysis") or {}).get("ok"), "ok;", len((k.get("analysis") or {}).get("failed") or []), "failed")
PY
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
scenario plain
scenario hidden CUDA_VISIBLE_DEVICES=
scenario bad-uuid CUDA_VISIBLE_DEVICES=GPU-00000000-1111-2222-3333-444444444444
scenario alloc-conf PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:abc
echo "=== check (human, plain machine)"; python3 -m rocm_doctor check | head -30
echo "=== kernels"; python3 -m rocm_doctor kernels -o "$out/kernels.json" | tail -8; echo "rc=${PIPESTATUS[0]}"
echo "=== bench --quick"; python3 -m rocm_doctor bench --quick | tail -25; echo "rc=${PIPESTATUS[0]}"

python3 -m rocm_doctor check --bench --json > "$out/check-bench.json" 2>/dev/null; echo "check --bench rc=$?"
python3 -c "import json;d=json.load(open('$out/check-bench.json'));print(d['diagnosis']['headline']);print(sorted(d['stages']))"
