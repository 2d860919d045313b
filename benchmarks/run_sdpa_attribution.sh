#!/usr/bin/env bash
# `rocm-doctor kernels --only sdpa` with and without library attribution (torch's profiler), three times each,
# alternating; prints each attention case's seconds. Run from the repository root, on a machine whose python3 has a
# GPU build of torch, with torch's bytecode compiled.
for i in 1 2 3; do
  for mode in prof noprof; do
    flag=""; [ $mode = noprof ] && flag="--no-profile"
    python3 -m rocm_doctor kernels --only sdpa $flag --json > /tmp/k.json 2>/dev/null
    python3 -c "
import json,sys; d=json.load(open('/tmp/k.json')); r=d['stage']['suite']['results']
print('$mode', ' '.join(f\"{x['case']}={x['seconds']}\" for x in r))"
  done
done
