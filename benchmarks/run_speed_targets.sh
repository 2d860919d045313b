#!/usr/bin/env bash
# The GPU commands timed against their speed targets, as the machine is and with torch's bytecode cached. Each step
# is MODE:NAME: MODE `as` runs with the environment as provisioned, `pyc` with bytecode written to and read from a
# cache folder (PYTHONDONTWRITEBYTECODE unset, PYTHONPYCACHEPREFIX set: what a normal pip install gives, where
# every import reads compiled bytecode; a `pyc:compile` step fills the cache as pip does at install, else each pyc
# step compiles what it is the first to import). NAME: check, nogpu, kernels, kernels-noprof, quick, full (the
# rocm-doctor commands, --json, wall time, headline and findings at warn or above), compile (every module of the
# target's site-packages and of rocm-doctor compiled to bytecode), tl-quick, tl-full, tl-kernels
# (benchmarks/child_timeline.py: when each record of the child arrives), jitcache (the size of the CUDA driver's
# compute cache, where it keeps machine code it compiled from PTX). Every output is kept in OUTDIR/results.tgz, named
# after its step and numbered in run order (03-pyc:check.json).
# Usage (from the repository root, on a machine whose python3 has a GPU build of torch):
#   bash benchmarks/run_speed_targets.sh OUTDIR STEP...
USAGE="run_speed_targets.sh OUTDIR STEP..."
source "$(dirname "$0")/_install.sh"
shift
work=$(mktemp -d)
pyc=${PYC_DIR:-$(mktemp -d)}  # PYC_DIR: a cache folder kept between calls of this script
mode_env() {  # the environment of one mode, as arguments for env(1)
  if [ "$1" = pyc ]; then echo "-u PYTHONDONTWRITEBYTECODE PYTHONPYCACHEPREFIX=$pyc"; else echo "--"; fi
}
step() {
  local mode=${1%%:*} name=${1#*:} args file
  printf -v file '%s/%02d-%s' "$work" "$2" "$1"
  case $name in
    check) args="check --no-history";; nogpu) args="check --no-gpu --no-history";; kernels) args="kernels";;
    kernels-noprof) args="kernels --no-profile";;
    quick) args="bench --quick";; full) args="bench";;
    tl-*) local t0=$(date +%s%N)
          local what="bench ${name#tl-}"; [ "$name" = tl-kernels ] && what=kernels
          env $(mode_env "$mode") python3 "$repo/benchmarks/child_timeline.py" $what --json "$file.json" \
            > "$file.txt" 2>&1
          echo "=== $1: rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))"; tail -1 "$file.txt"; return;;
    compile) local t0=$(date +%s%N)  # what pip does at install: every module of the target's packages compiled
             env $(mode_env "$mode") python3 -m compileall -q -j 0 "$site" \
               "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" > /dev/null 2>&1
             echo "=== $1: rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))"; return;;
    jitcache) echo "=== $1: $(du -sh "${CUDA_CACHE_PATH:-$HOME/.nv/ComputeCache}" 2>&1) $(env | grep ^CUDA_CACHE)"
              return;;
    *) echo "unknown step $1"; return;;
  esac
  local t0=$(date +%s%N)
  env $(mode_env "$mode") timeout 300 python3 -m rocm_doctor $args --json > "$file.json" 2> "$file.err"
  echo "=== $1 ($args): rc=$? wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))"
  python3 "$repo/benchmarks/summarize_output.py" "$file.json"
}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__)"
n=0
for s in "$@"; do n=$((n + 1)); step "$s" "$n" 2>&1 | tee -a "$work/summary.txt"; done
tar czf "$out/results.tgz" -C "$work" .
