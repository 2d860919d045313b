"""Several GPUs and many nodes: collectives, peer access and fleet reports on torch.distributed.

The busbw formulas are `parsers/collectives_formulas.py`, the NCCL/RCCL variables `knowledge/collectives_env.py`;
the figures the measurements are judged against live with the checks (`checks/collectives_expectations.py`).
- `_collectives_child.py`: the stand-alone script one process per rank runs in the *target* interpreter
  (all-reduce, all-gather, broadcast over a size sweep, each result checked), and the peer-access probe.
- `launch`: starts the ranks as children, watches them, and kills them all when one hangs or dies.
- `local`: the local stage (one rank per GPU of this machine) -> the `collectives.results` fact.
- `stage`: `check --collectives` / `bench --collectives` glue: facts, findings, report stage.
- `fleet`: node reports and the fleet diff (pure), and its table.
- `__main__`: the torchrun worker (`torchrun ... -m rocm_doctor.distributed`): diagnose every node, gather the
  reports on rank 0 over gloo, write the fleet report. Only this entry point imports torch in-process.
"""
