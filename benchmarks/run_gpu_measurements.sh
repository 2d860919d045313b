#!/usr/bin/env bash
# Every GPU measurement in docs/measurements.md, in one go, on a machine whose python3 has a GPU build of torch.
# Usage (from the repository root): bash benchmarks/run_gpu_measurements.sh OUTDIR
# Installs rocm-doctor into a scratch folder (no dependencies are installed: click, rich, packaging and requests
# must already be there) and runs from outside the checkout, so the installed package is what runs.
USAGE="run_gpu_measurements.sh OUTDIR"
source "$(dirname "$0")/_install.sh"
log="$out/log.txt"
step() { echo "=== $(date -u +%FT%TZ) $*" | tee -a "$log"; "$@" 2>&1 | tee -a "$log"; echo "rc=${PIPESTATUS[0]}" | tee -a "$log"; }

step nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
step python3 "$repo/benchmarks/kernels_speed.py" cuda
step python3 -m rocm_doctor kernels -o "$out/kernels.json"
step python3 -m rocm_doctor bench -v
python3 -m rocm_doctor bench --json > "$out/bench.json" 2>> "$log"; echo "bench --json rc=$?" | tee -a "$log"
step python3 -m rocm_doctor bench --quick
step python3 "$repo/benchmarks/bench_reference.py"
python3 -m rocm_doctor bench --collectives --json > "$out/collectives.json" 2>> "$log"; echo "bench --collectives rc=$?" | tee -a "$log"
step python3 -m torch.distributed.run --standalone --nproc-per-node 2 "$repo/benchmarks/allreduce_reference.py" --compare "$out/collectives.json"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for node in 0 1; do
  CUDA_VISIBLE_DEVICES=$node timeout 300 python3 -m torch.distributed.run --nnodes 2 --node-rank $node \
    --nproc-per-node 1 --master-addr 127.0.0.1 --master-port "$port" -m rocm_doctor.distributed \
    -o "$out/fleet.json" --collectives --device cuda --preset quick > "node$node.log" 2>&1 &
done
wait
cat node0.log node1.log >> "$log"
step cat "$out/fleet.txt"
step python3 -m rocm_doctor check -v
python3 -m rocm_doctor check --json > "$out/check.json" 2>> "$log"; echo "check --json rc=$?" | tee -a "$log"
step python3 "$repo/benchmarks/check_speed.py" --runs 5
