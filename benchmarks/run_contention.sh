#!/usr/bin/env bash
# What another process on the GPU costs the kernel suite: `rocm-doctor kernels` alone, and with a second process
# started beside it that does what a probe of `check` does (import torch and ask about the GPU; create a CUDA
# context; query nvidia-smi in a loop). Prints, per run, the sum of the first 19 cases' seconds, of all cases, and
# the child's torch import and time after it. Run from the repository root on a machine whose python3 has a GPU
# build of torch; the checkout is what runs (PYTHONPATH), with torch's and the doctor's bytecode compiled first.
export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-$(mktemp -d)}
unset PYTHONDONTWRITEBYTECODE
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
python3 -m compileall -q -j 0 rocm_doctor "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
  > /dev/null 2>&1
one() {  # LABEL COMMAND [DELAY]: kernels with COMMAND started DELAY seconds after it
  ( sleep "${3:-0}"; eval "$2" ) > /dev/null 2>&1 &
  local beside=$!
  python3 -m rocm_doctor kernels --json > /tmp/contention.json 2> /dev/null
  wait $beside
  python3 - "$1" <<'PY'
import json, sys
suite = json.load(open("/tmp/contention.json"))["stage"]["suite"]
seconds = [r.get("seconds") or 0 for r in suite["results"]]
child = suite["children"][0]
print("%-10s first19=%.3f all=%.3f import=%s after=%s"
      % (sys.argv[1], sum(seconds[:19]), sum(seconds), child["import_s"], child["after_import_s"]))
PY
}
PROBE='python3 -c "import torch; torch.cuda.is_available(); torch.cuda.device_count(); torch.cuda.get_arch_list(); torch.cuda.get_device_properties(0)"'
CONTEXT='python3 -c "import torch; torch.zeros(1, device=\"cuda\")"'
SMI='for i in 1 2 3 4 5 6; do nvidia-smi --query-gpu=name,utilization.gpu,memory.used --format=csv > /dev/null; done'
one warm true
for i in 1 2; do one alone true; one torchprobe "$PROBE"; one context "$CONTEXT"; one smi "$SMI" 1.5; done
