#!/usr/bin/env bash
# `kernels` and `bench --quick` of two trees (this checkout and BASE, say the tree before a change) with torch's GPU
# libraries dropped from the page cache before each timed command (benchmarks/page_cache.py evict), so every round
# reads them from disk as a freshly started machine's first run does; the driver's compute cache is kept (it is
# emptied once, for one extra quick run, to show its own share). Torch's bytecode is cached (the first step fills
# the cache).
# Usage (from the repository root, on a machine whose python3 has a GPU build of torch):
#   bash benchmarks/run_cold_cache.sh OUTDIR BASE ROUNDS
USAGE="run_cold_cache.sh OUTDIR BASE ROUNDS"
base_tree=$(realpath "${2:?usage: $USAGE}")
rounds=${3:?usage: $USAGE}
source "$(dirname "$0")/_install.sh"
site_base=$(mktemp -d)
python3 -m pip install -q --no-deps --no-build-isolation --no-compile --target "$site_base" "$base_tree" || exit 2
work=$(mktemp -d)
export PYTHONPYCACHEPREFIX=$(mktemp -d)
unset PYTHONDONTWRITEBYTECODE
doctor() {  # TREE NAME ARGS...: one rocm-doctor command from that tree's install, timed, summarized
  local tree=$1 name=$2; shift 2
  local where=$site; [ "$tree" = base ] && where=$site_base
  local t0=$(date +%s%N)
  PYTHONPATH=$where${PYTHONPATH#$site} timeout 300 python3 -m rocm_doctor "$@" --json > "$work/$name.json" \
    2> "$work/$name.err"
  echo "=== $name ($tree: $*): rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))"
  python3 "$repo/benchmarks/summarize_output.py" "$work/$name.json"
}
cold() { python3 "$repo/benchmarks/page_cache.py" evict; }
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 "$repo/benchmarks/page_cache.py" resident
  doctor new warm-nogpu check --no-gpu --no-history
  doctor base warm-nogpu-base check --no-gpu --no-history
  for round in $(seq "$rounds"); do
    for tree in base new; do
      cold; doctor $tree "kernels-$tree-$round" kernels
      cold; doctor $tree "quick-$tree-$round" bench --quick
    done
  done
  doctor new warm-quick bench --quick
  echo "compute cache: $(du -sh ~/.nv/ComputeCache 2>&1)"; rm -rf ~/.nv/ComputeCache
  doctor new nojit-quick bench --quick
} 2>&1 | tee "$work/summary.txt"
tar czf "$out/results.tgz" -C "$work" .
