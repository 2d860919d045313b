"""Where the wall time of `rocm-doctor check` goes on this machine: each probe module, interpretation and the
checks, then each stage with its children (torch import, cases, the library-log child) and the live-state samples.

    python benchmarks/check_phases.py [--no-gpu] [--bench] [--json FILE]

Runs the same pipeline as `rocm-doctor check` in this process, with a clock around each part. The slowest probe
decides the observe phase (the probes run concurrently).
"""

from __future__ import annotations

import argparse
import functools
import json
import time


def timed(table: dict, name: str, function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        started = time.monotonic()
        try:
            return function(*args, **kwargs)
        finally:
            table[name] = round(time.monotonic() - started, 3)
    return wrapper


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-gpu", action="store_true", help="leave out the kernel stage")
    parser.add_argument("--bench", action="store_true", help="add the quick benchmark stage, as `check --bench`")
    parser.add_argument("--no-early", action="store_true",
                        help="do not start the kernel suite before the probes (to measure what starting it early saves)")
    parser.add_argument("--json", metavar="FILE", help="write the timings here")
    args = parser.parse_args(argv)

    from rocm_doctor import diagnose as pipeline
    from rocm_doctor.probes import probe_modules
    from rocm_doctor.probes._platform import detect_os
    from rocm_doctor.stages import StageChoice, chosen

    probes: dict[str, float] = {}
    for module in probe_modules(detect_os(), {}):
        module.collect = timed(probes, module.__name__.rsplit(".", 1)[-1], module.collect)
    stages = chosen(StageChoice(kernels=not args.no_gpu, bench=args.bench))
    if args.no_early:
        for stage in stages:
            stage.start_early = lambda python, env: None
    phases: dict[str, float] = {}
    for stage in stages:
        stage.run_watched = timed(phases, f"stage {stage.name}", stage.run_watched)
    pipeline.observe = timed(phases, "observe (probes)", pipeline.observe)
    started = time.monotonic()
    report, facts = pipeline.diagnose(pipeline.Options(stages=stages))
    phases["total"] = round(time.monotonic() - started, 3)

    print("phase                          seconds" + ("   (suite not started early)" if args.no_early else ""))
    for name, seconds in phases.items():
        print(f"{name:<30} {seconds:7.2f}")
    print("\nslowest probes (run concurrently)")
    for name, seconds in sorted(probes.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {name:<28} {seconds:7.2f}")
    commands = sorted(facts.observations.commands.items(), key=lambda kv: -(kv[1].duration_s or 0))[:8]
    print("\nslowest commands")
    for key, result in commands:
        print(f"  {key:<28} {result.duration_s or 0:7.2f}  rc={result.returncode}")
    details = {}
    kernels = facts.observations.probes.get("kernels") or {}
    if kernels.get("ran"):
        suite = kernels.get("suite") or {}
        details["kernel children"] = suite.get("children")
        slowest = sorted(suite.get("results") or [], key=lambda r: -(r.get("seconds") or 0))[:6]
        details["slowest cases"] = [(r.get("case"), r.get("seconds")) for r in slowest]
        details["library-log child s"] = (kernels.get("library_logs") or {}).get("duration_s")
        details["stage seconds"] = kernels.get("seconds")
        for key, value in details.items():
            print(f"\n{key}: {value}")
    print(f"\nverdict: {report.diagnosis.verdict}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump({"phases": phases, "probes": probes, "details": details}, out, indent=1, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
