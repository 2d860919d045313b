"""How long chosen kernel cases take depending on which categories ran before them in the same child.

    python benchmarks/case_context.py --watch sdpa-cudnn-float16 --rounds 2 all sdpa conv,sdpa all:noprof

Each CONFIG is `all` or comma-separated categories, with `:noprof` to leave library attribution out. Configurations
run in turn, `--rounds` times over; each prints the watched cases' seconds, the sum of every case's seconds, the
child's torch import, its seconds after the import and the part of those spent reading the attribution profile. A
case that is slow only after some other category shows which one.
"""

from __future__ import annotations

import argparse
import json
import sys


def run(config: str, python: str) -> dict:
    from rocm_doctor.gpu.kernels.harness import SuiteOptions, run_suite

    categories, _, flag = config.partition(":")
    only = [] if categories == "all" else categories.split(",")
    return run_suite(python, SuiteOptions(device="cuda", profile=flag != "noprof", only=only))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", nargs="+")
    parser.add_argument("--watch", action="append", default=[], help="case name (repeatable)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--json", metavar="FILE", help="every suite result, as a list")
    args = parser.parse_args(argv)
    kept = []
    for round_ in range(1, args.rounds + 1):
        for config in args.configs:
            suite = run(config, args.python)
            seconds = {r["case"]: r.get("seconds") or 0 for r in suite["results"]}
            import_s = sum(c.get("import_s") or 0 for c in suite["children"])
            after_s = sum(c.get("after_import_s") or 0 for c in suite["children"])
            attribution_s = sum(c.get("attribution_s") or 0 for c in suite["children"])
            watched = " ".join(f"{name}={seconds[name]:.3f}" for name in args.watch if name in seconds)
            fatal = f"  FATAL: {suite['fatal']}" if suite.get("fatal") else ""
            print(f"round {round_} {config:<24} cases={len(seconds):>3} sum={sum(seconds.values()):.3f} "
                  f"import={import_s:.2f} after={after_s:.3f} reading={attribution_s:.3f} {watched}{fatal}", flush=True)
            kept.append({"round": round_, "config": config, "results": suite["results"]})
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(kept, handle, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
