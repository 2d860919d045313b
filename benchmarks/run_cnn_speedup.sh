#!/usr/bin/env bash
# "matmul is 18x faster, so why is my CNN only 3x?" on a real GPU: the matmul and SimpleCNN users time against the
# CPU (compare), where a training step's time goes (cnn), the batch sweep (sweep) and convolutions (conv), with the
# launch cost beside them. `bench -v` for the report a user reads, then `--json`, then a short table from the JSON.
# Usage (from the repository root, on a machine whose python3 has a GPU build of torch):
#   bash benchmarks/run_cnn_speedup.sh OUTDIR [more bench options, e.g. --device cpu --preset tiny]
USAGE="run_cnn_speedup.sh OUTDIR [bench options]"
source "$(dirname "$0")/_install.sh"
shift
export COLUMNS=150
sections=(--section launch --section compare --section cnn --section sweep --section conv)
echo "=== $(date -u +%FT%TZ) torch $(python3 -c 'import torch; print(torch.__version__)' 2>/dev/null), $(nproc) CPUs"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
echo "=== rocm-doctor bench ${sections[*]} -v $*"
python3 -m rocm_doctor bench "${sections[@]}" -v "$@" > "$out/bench-v.txt" 2> "$out/bench-v.err"
echo "rc=$?"
cat "$out/bench-v.txt"
echo "=== rocm-doctor bench ${sections[*]} --json $*"
python3 -m rocm_doctor bench "${sections[@]}" --json "$@" > "$out/bench.json" 2> "$out/bench-json.err"
echo "rc=$?"
python3 - "$out/bench.json" <<'PY'
import json, sys

data = json.load(open(sys.argv[1]))
results, analysis = data["results"], data["analysis"]
values, lines = analysis["values"], {line["key"]: line for line in analysis["lines"]}
cnn, conv = values.get("cnn") or {}, values.get("conv") or {}
device, cpu = results["header"].get("device") or {}, results["header"].get("cpu") or {}
print(f"=== short table: {device.get('name')}, CPU side {cpu.get('threads')} threads of {cpu.get('name')}")
print("sections: " + ", ".join(f"{k} {v['state']} {v.get('seconds') or 0:.1f} s" for k, v in results["sections"].items())
      + f"; elapsed {results.get('elapsed_s')} s")
def show(label, key, fmt="{:.3g}"):
    line = lines.get(key)
    if line and line["value"] is not None:
        print(f"  {label:<46} " + fmt.format(line["value"]) + f" {line['unit']}")
show("speed-up fp32 matmul 4096 (medians)", "compare.speedup.matmul")
show("speed-up fp32 matmul 4096 (one call, time.time())", "compare.speedup.matmul_one_call")
show("speed-up SimpleCNN batch 64 (100 steps)", "compare.speedup.cnn")
show("training step (cnn section)", "cnn.step")
show("first step in the process", "cnn.first")
show("GPU busy during a step", "cnn.busy")
show("kernels per step", "cnn.kernels")
if cnn.get("launch_ms") is not None:
    print(f"  {'kernels x launch cost':<46} {cnn['launch_ms']:.3f} ms ({cnn.get('launch_us'):.1f} us per launch)")
for name in ("for_loop", "foreach", "fused"):
    show(f"step with Adam {name}", f"cnn.optimizer.{name}")
for name in ("channels_last", "amp_fp16", "amp_bf16", "fused_adam", "cuda_graph"):
    line = lines.get(f"cnn.variant.{name}")
    if line:
        print(f"  {'variant ' + name:<46} " + (f"{line['value']:.3f} ms/step ({line['details']['speedup']:.2f}x)"
                                               if line["value"] is not None else line["explanation"]))
print("  batch  GPU ms  CPU ms  speed-up  GPU busy")
for row in cnn.get("sweep") or []:
    busy = f"{min(row['busy'], 1):.0%}" if row.get("busy") is not None else "-"
    speed = f"{row['speedup']:.1f}x" if row.get("speedup") is not None else "-"
    print(f"  {row['batch']:>5}  {row.get('gpu_ms') or 0:6.3f}  {row['cpu_ms']:6.2f}  {speed:>8}  {busy:>8}")
for key, figures in sorted((conv.get("configs") or {}).items()):
    if figures.get("tflops") is not None:
        share = f" ({figures['fraction']:.0%} of {figures['peak_key']} peak)" if figures.get("fraction") else ""
        print(f"  conv {key:<34} {figures['tflops']:8.2f} TFLOP/s{share} {figures['verdict']}; {figures.get('kernel')}")
for name, ms in (conv.get("first_call_ms") or {}).items():
    print(f"  conv first-call cost, pass {name:<20} {ms or 0:.0f} ms")
show("cudnn.benchmark on: later calls, x over off", "conv.benchmark", "{:.2f}")
for finding in data["findings"]:
    if finding["check"] == "bench-cnn-speedup-low":
        print(f"finding [{finding['status']}] {finding['message']}")
        for step in finding.get("remediation") or []:
            print(f"  step: {step}")
PY
