#!/usr/bin/env bash
# The GPU commands timed against their speed targets, as the machine is and with torch's bytecode cached. Each step
# is MODE:NAME: MODE `as` runs with the environment as provisioned, `pyc` with bytecode written to and read from a
# cache folder (PYTHONDONTWRITEBYTECODE unset, PYTHONPYCACHEPREFIX set: what a normal pip install gives, where
# every import reads compiled bytecode; the first pyc step fills the cache). NAME: check, nogpu, kernels, quick,
# full (the rocm-doctor commands, --json, wall time, headline and findings at warn or above), tl-quick, tl-full,
# tl-kernels (benchmarks/child_timeline.py: when each record of the child arrives), jitcache (the size of the CUDA
# driver's compute cache, where it keeps machine code it compiled from PTX). Every output is kept in
# OUTDIR/results.tgz. Usage (from the repository root, on a machine whose python3 has a GPU build of torch):
#   bash benchmarks/run_speed_targets.sh OUTDIR STEP...
USAGE="run_speed_targets.sh OUTDIR STEP..."
source "$(dirname "$0")/_install.sh"
shift
work=$(mktemp -d)
pyc=$(mktemp -d)
mode_env() {  # the environment of one mode, as arguments for env(1)
  if [ "$1" = pyc ]; then echo "-u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$pyc"; else echo "--"; fi
}
report() {  # the headline and the findings at warn or above of a JSON output
  python3 - "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as exc:
    print("  no JSON:", exc); sys.exit()
print(" ", (d.get("diagnosis") or {}).get("headline"))
for f in d.get("findings") or []:
    if f["status"] in ("warn", "fail", "error"):
        print(f"  {f['id']} [{f['status']}]: {f['message'][:220]}")
results = (d.get("stages") or {}).get("bench", {}).get("results") or d.get("results") or {}
sections = results.get("sections") or {}
if sections:
    print("  sections:", ", ".join(f"{k} {v.get('seconds')}" for k, v in sections.items()))
    print("  children:", ", ".join(str(c.get("duration_s")) for c in results.get("children") or []),
          " live samples:", (results.get("live") or {}).get("seconds"), " elapsed:", results.get("elapsed_s"))
stage = d.get("stage") or (d.get("stages") or {}).get("kernels") or {}
suite = stage.get("suite") or {}
if suite:
    kids = suite.get("children") or []
    print("  kernels: stage", stage.get("seconds"), "s; suite", suite.get("seconds"), "s; import",
          [c.get("import_s") for c in kids], "after import", [c.get("after_import_s") for c in kids],
          "; counts", {k: v for k, v in (suite.get("counts") or {}).items() if v},
          "; library logs", (stage.get("library_logs") or {}).get("duration_s"))
PY
}
step() {
  local mode=${1%%:*} name=${1#*:} args
  case $name in
    check) args="check --no-history";; nogpu) args="check --no-gpu --no-history";; kernels) args="kernels";;
    quick) args="bench --quick";; full) args="bench";;
    tl-*) local t0=$(date +%s%N)
          local what="bench ${name#tl-}"; [ "$name" = tl-kernels ] && what=kernels
          env $(mode_env "$mode") python3 "$repo/benchmarks/child_timeline.py" $what --json "$work/$1.json" \
            > "$work/$1.txt" 2>&1
          echo "=== $1: rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))"; tail -1 "$work/$1.txt"; return;;
    jitcache) echo "=== $1: $(du -sh "${CUDA_CACHE_PATH:-$HOME/.nv/ComputeCache}" 2>&1) $(env | grep ^CUDA_CACHE)"
              return;;
    *) echo "unknown step $1"; return;;
  esac
  local t0=$(date +%s%N)
  env $(mode_env "$mode") timeout 300 python3 -m rocm_doctor $args --json > "$work/$1.json" 2> "$work/$1.err"
  echo "=== $1 ($args): rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))"
  report "$work/$1.json"
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__)"
for s in "$@"; do step "$s" 2>&1 | tee -a "$work/summary.txt"; done
tar czf "$out/results.tgz" -C "$work" .
