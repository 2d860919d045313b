"""GPU confirm stage: short operator kernels run in child processes of the target interpreter.

Layout:
  _cases.py    the operator suite as data (stand-alone: stdlib + torch; loaded by the child), one
               _cases_<group>.py file per category group (basic, nn, data, sdpa, runtime)
  _child.py    the child script (stand-alone): runs cases, one JSON line per event
  harness.py   the parent side: batches, re-runs after a crash or hang, pinpoints the culprit
  attribution.py  device kernel names -> library (cuBLAS, rocBLAS/Tensile, MIOpen, flash-attention, ...)
  liblogs.py   a separate child with the math libraries' own logging switched on
  ab.py        HSA_OVERRIDE_GFX_VERSION A/B runs (AMD, Linux)
  signatures.py  outcomes -> the known error signatures each failed case printed (checks/gpu_confirm.py judges)
  stage.py     the confirm stage as `rocm-doctor check` and `rocm-doctor kernels` run it
"""
