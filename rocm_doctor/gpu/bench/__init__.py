"""Performance sanity benchmark (issue 6): measure what this card does, compare with what it should do, explain.

- `plan`: which sections run with which sizes (full, quick, tiny) and the timeout of each.
- `harness`: runs the stand-alone `_bench_child.py` in the target interpreter, one fresh child per failure, so a
  hang or crash loses one section, not the run.
- `expectations`: what the detected card should reach (data/gpu_catalog.json).
- `analysis`: pure functions from the results to lines with a verdict and an explanation; the checks in
  checks/bench.py and the renderers read them.
- `facts`: results <-> the `bench.results` fact, so findings replay from a snapshot.
"""
