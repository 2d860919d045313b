#!/usr/bin/env bash
# Where the wall time of `check` (kernel stage included) and `bench --quick` goes on a real GPU machine: the
# profiler's start-up in steps, check's phases (twice), check and bench --quick wall times, the bench's samples.
# Usage (from the repository root, on a machine whose python3 has a CUDA or ROCm build of torch):
#   bash benchmarks/run_speed_breakdown.sh OUTDIR
USAGE="run_speed_breakdown.sh OUTDIR"
source "$(dirname "$0")/_install.sh"
TIMEFORMAT="wall %R s"
echo "=== $(date -u +%FT%TZ) $(nproc) CPUs"; nvidia-smi -L 2>/dev/null
echo "=== profiler start-up"; python3 "$repo/benchmarks/profiler_startup.py"
for i in 1 2; do
  echo "=== check phases, run $i"; python3 "$repo/benchmarks/check_phases.py" --json "$out/phases-$i.json"
done
echo "=== check --json"; time python3 -m rocm_doctor check --json > "$out/check.json" 2> "$out/check.err"
for i in 1 2; do
  echo "=== bench --quick, run $i"; time python3 -m rocm_doctor bench --quick --json > "$out/bench-quick-$i.json" 2> "$out/bench-quick-$i.err"
done
python3 - "$out/bench-quick-2.json" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
print("elapsed_s", results.get("elapsed_s"), "measured_s", results.get("measured_s"))
for child in results.get("children") or []:
    print("child", child.get("state"), child.get("duration_s"))
for sample in (results.get("live") or {}).get("samples") or []:
    print("sample", ",".join(sample.get("marks") or []), "at", sample.get("at_s"), "took", sample.get("seconds"))
PY
echo "=== kernel log access"; id; (journalctl -k -b --no-pager 2>&1 | tail -5); (dmesg 2>&1 | tail -5)
echo "=== $(date -u +%FT%TZ) end"
