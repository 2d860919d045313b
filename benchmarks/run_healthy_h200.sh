#!/usr/bin/env bash
# A healthy machine end to end, timed: `check` (kernels included) and `check --no-gpu` twice each, `kernels`,
# `bench --quick` and the full `bench`, each `--json`; prints the wall time, the headline and every finding at warn
# or above. Usage (from the repository root, on a machine whose python3 has a GPU build of torch):
#   bash benchmarks/run_healthy_h200.sh OUTDIR
USAGE="run_healthy_h200.sh OUTDIR"
source "$(dirname "$0")/_install.sh"
timed() {  # name, then the rocm-doctor arguments
  local name=$1; shift
  local t0=$(date +%s%N)
  timeout 300 python3 -m rocm_doctor "$@" --json > "$out/$name.json" 2> "$out/$name.err"
  echo "=== $name ($*): rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))"
  python3 "$repo/benchmarks/summarize_output.py" "$out/$name.json"
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
timed check-1 check --no-history
timed check-2 check --no-history
timed no-gpu-1 check --no-gpu --no-history
timed no-gpu-2 check --no-gpu --no-history
timed kernels kernels
timed bench-quick bench --quick
timed bench-full bench
