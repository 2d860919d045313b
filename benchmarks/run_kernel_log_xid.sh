#!/usr/bin/env bash
# A real NVIDIA Xid: a Triton kernel that stores through a pointer far outside its buffer ("an illegal memory
# access"), which the driver reports in the kernel log as Xid 31 (MMU fault); then `check --json --log` with the
# program's own error, to see the Xid named as the cause (Triton compiles only functions defined in a file). The GPU stays usable (the fault ends only that process).
# Usage (from the repository root, on a machine whose python3 has a CUDA build of torch with Triton):
#   bash benchmarks/run_kernel_log_xid.sh OUTDIR
USAGE="run_kernel_log_xid.sh OUTDIR"
source "$(dirname "$0")/_install.sh"
echo "=== $(date -u +%FT%TZ) the kernel log before"; dmesg 2>&1 | grep -c "NVRM: Xid" || true
cat > illegal_access.py <<'PY'
import torch
import triton
import triton.language as tl


@triton.jit
def store_far_away(pointer):
    tl.store(pointer + (1 << 40), 1.0)


x = torch.zeros(1, device="cuda")
store_far_away[(1,)](x)
torch.cuda.synchronize()
print("no fault")
PY
python3 illegal_access.py > "$out/illegal-access.txt" 2>&1
echo "program exit code $?"; tail -3 "$out/illegal-access.txt"
echo "=== the kernel log after"; dmesg 2>&1 | grep "NVRM: Xid" | tail -5 | tee "$out/dmesg-xid.txt"
python3 -m rocm_doctor check --json --log "$out/illegal-access.txt" > "$out/check-xid.json" 2> "$out/check-xid.err"
echo "check rc=$?"
python3 - "$out/check-xid.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
diagnosis = report["diagnosis"]
print("verdict:", diagnosis["verdict"], "-", diagnosis.get("headline"))
for cause in diagnosis.get("root_causes", [])[:3]:
    print("root cause:", cause.get("finding"), cause.get("status"), "| explains:", cause.get("symptoms"), "| plan:", cause.get("plan"))
for finding in report["findings"]:
    if finding["id"].startswith(("nvidia-xid", "kernel-log", "error-signature", "cuda-")) or "xid" in finding["id"]:
        print(finding["id"], finding["status"], "-", finding["message"][:300])
        for line in finding.get("evidence", [])[:3]:
            print("    ", line[:200])
PY
