"""How long the kernel suite takes, after torch is imported, and what it found per category.

    python benchmarks/kernels_speed.py [cuda|cpu] [--python PATH] [--no-profile] [--json FILE]

Target: < 20 s after import on an H200. "after import" is the child's own clock from the end of `import torch`
to its last case (library attribution included); the library-log child and the override A/B are not part of it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("device", nargs="?", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--python", default=sys.executable, help="target interpreter (default: this one)")
    parser.add_argument("--no-profile", action="store_true", help="skip torch.profiler attribution")
    parser.add_argument("--only", action="append", default=[], help="category (repeatable)")
    parser.add_argument("--json", metavar="FILE", help="write the whole suite result here")
    args = parser.parse_args(argv)

    from rocm_doctor.gpu.kernels.harness import SuiteOptions, run_suite

    started = time.monotonic()
    suite = run_suite(args.python, SuiteOptions(device=args.device, profile=not args.no_profile, only=args.only))
    wall = time.monotonic() - started
    hello = suite.get("hello") or {}
    if suite.get("fatal"):
        print(f"FATAL: {suite['fatal']}")
    after_import = sum(c.get("after_import_s") or 0 for c in suite["children"])
    import_s = sum(c.get("import_s") or 0 for c in suite["children"])
    devices = ", ".join(f"{d.get('name')} ({d.get('arch')})" for d in hello.get("devices") or []) or args.device
    print(f"torch {hello.get('torch')} on {devices}")
    print(f"cases: {len(suite['results'])}  children: {len(suite['children'])}")
    print(f"wall: {wall:.2f} s   torch import: {import_s:.2f} s   after import: {after_import:.2f} s   "
          f"sum of case times: {suite['cases_seconds']:.2f} s")
    print("outcomes: " + ", ".join(f"{k} {v}" for k, v in suite["counts"].items() if v))
    print()
    print(f"{'category':<12} {'cases':>5}  {'seconds':>8}  outcomes")
    for category, row in suite["by_category"].items():
        seconds = sum(r.get("seconds") or 0 for r in suite["results"] if r.get("category") == category)
        print(f"{category:<12} {sum(row.values()):>5}  {seconds:>8.2f}  "
              + ", ".join(f"{k} {v}" for k, v in sorted(row.items())))
    print()
    print("slowest cases:")
    for record in sorted(suite["results"], key=lambda r: -(r.get("seconds") or 0))[:10]:
        print(f"  {record.get('seconds') or 0:>7.3f} s  {record['case']}  ({record.get('outcome')})")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(suite, handle, indent=2, default=str)
        print(f"\nwritten: {args.json}")
    return 0 if not suite.get("fatal") else 1


if __name__ == "__main__":
    raise SystemExit(main())
