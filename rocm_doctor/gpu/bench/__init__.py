"""Performance sanity benchmark: measure what this card does, compare with what it should do, explain.

- `plan`: which sections run with which sizes (full, quick, tiny) and the timeout of each.
- `harness`: runs the stand-alone `_bench_child.py` in the target interpreter, one fresh child per failure, so a
  hang or crash loses one section, not the run. The child loads its sections by path from the `_bench_*.py`
  files beside it (`_bench_common`: emitter, device context, timing; `_bench_sections`, `_bench_sdpa`,
  `_bench_decoder`).
- `session`: the run as `bench` and the bench stage make it: harness runs with the live GPU state sampled around
  each section, then re-runs without the speed switches (data/perf_switches.json) that `switches` picks.
- `expectations`: what the detected card should reach (data/gpu_catalog.json).
- `analysis`: pure functions from the results to figures (the `bench.figures` fact: no verdicts); the checks
  judge them (checks/bench_judge.py, checks/bench.py) and the renderers show the judged lines. It runs
  `throughput` (matmul, memory, launch) and `workloads` (SDPA, CPU against GPU, decoder, reference) over the line
  record of `lines`; `evidence` then applies what `interference` (the sampled GPU state) and `switches` (the
  re-runs) observed.
- `facts`: results <-> the `bench.results` fact, so findings replay from a snapshot.
"""
