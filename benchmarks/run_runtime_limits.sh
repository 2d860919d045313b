#!/usr/bin/env bash
# What the CUDA driver and runtime answer themselves, and what a CUDA torch process needs, on a real NVIDIA machine,
# under the limits and variables users' job scripts set: the runtime child (cuInit, cudaGetDeviceCount, ...) and a
# tiny torch program (is_available, one kernel, the descriptors and address space it then holds) per situation.
# Usage (from the repository root, on a machine whose python3 has a CUDA build of torch):
#   bash benchmarks/run_runtime_limits.sh OUTDIR
USAGE="run_runtime_limits.sh OUTDIR"
source "$(dirname "$0")/_install.sh"
child=$site/rocm_doctor/probes/_runtime_child.py
cat > "$out/tiny.py" <<'PY'
import json, os, sys
out = {}
try:
    import torch
    out["available"] = torch.cuda.is_available()
    out["threads"] = torch.get_num_threads()
    x = torch.ones(1024, device="cuda")
    out["sum"] = float((x * 2).sum().item())
    y = torch.randn(512, 512, device="cuda") @ torch.randn(512, 512, device="cuda")
    torch.cuda.synchronize()
    out["matmul"] = "ok"
except BaseException as exc:
    out["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
out["fds"] = len(os.listdir("/proc/self/fd"))
for line in open("/proc/self/status"):
    if line.startswith(("VmPeak", "VmSize", "VmRSS", "Threads")):
        out[line.split(":")[0]] = line.split(":")[1].strip()
print(json.dumps(out))
PY
situation() {  # name, then a shell prefix (ulimit/env/taskset) for both programs
  local name=$1; shift
  echo "=== $name: $*"
  bash -c "$* python3 $child" 2>&1 | grep -v '"step": "limits"' | cut -c1-400
  bash -c "$* python3 -W ignore $out/tiny.py" 2>&1 | tail -2 | cut -c1-600
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
situation plain ""
python3 $child | grep '"limits"' | cut -c1-700
for gib in 1 4 16 64 256 1024; do situation "ulimit-v-${gib}GiB" "ulimit -v $((gib * 1048576));"; done
for n in 16 32 64 128 256; do situation "ulimit-n-$n" "ulimit -n $n;"; done
situation "memlock-0" "ulimit -l 0;"
situation "nproc-1" "ulimit -u 1;"
for v in "0,0" "1" "0,1" "-1" "abc" "GPU-0"; do situation "cvd-$v" "CUDA_VISIBLE_DEVICES=$v"; done
situation "cvd-misspelt" "CUDA_VISIBLE_DEVICE=1"
for v in CUDA_FORCE_PTX_JIT CUDA_DISABLE_PTX_JIT CUDA_FORCE_JIT; do situation "$v" "$v=1"; done
situation "taskset-0" "taskset -c 0"
echo "=== own children on the GPU during bench (the A/B re-run), plain and with a cuBLAS switch"
for sw in "" "CUBLAS_WORKSPACE_CONFIG=:0:0" "CUBLASLT_LOG_LEVEL=5"; do
  echo "--- bench matmul: ${sw:-plain}"
  env $sw timeout 120 python3 -m rocm_doctor bench --quick --section matmul --json > "$out/bench-${sw%%=*}.json" 2>/dev/null
  echo "rc=$?"
  python3 - "$out/bench-${sw%%=*}.json" <<'PY' | head -30
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as exc:
    print("no json:", exc); sys.exit()
def walk(o, path=""):
    if isinstance(o, dict):
        for k, v in o.items():
            walk(v, f"{path}.{k}")
    elif isinstance(o, list):
        for i, v in enumerate(o):
            walk(v, f"{path}[{i}]")
    elif isinstance(o, str) and ("pid " in o or "slower" in o or "TFLOP" in o):
        print(path[:80], "=", o[:300])
walk(d)
PY
done
