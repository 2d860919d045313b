"""Times `rocm-doctor check --json --no-gpu` against `python -m torch.utils.collect_env` in the same interpreter.

Usage: python benchmarks/check_speed.py [--runs 5]
Prints the median wall time of each, their ratio (target: <= 0.5), and the time of the commands that must not
import torch or run probes (`--version`, `checks`, `explain`; target: < 0.3 s each). `--no-gpu` leaves out the
GPU kernel stage, which only runs where a GPU is visible and has no counterpart in collect_env; on a machine
without a GPU the two are the same command.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def wall(argv: list[str], cwd: str) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def median_of(argv: list[str], runs: int, cwd: str) -> float:
    wall(argv, cwd)  # warm the file cache once; not counted
    return statistics.median(wall(argv, cwd) for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    cwd = tempfile.mkdtemp()  # neutral folder: the installed package runs, not a source tree
    doctor = [sys.executable, "-m", "rocm_doctor"]
    print(f"python {sys.version.split()[0]} at {sys.executable}; {os.cpu_count()} CPUs; {args.runs} runs each (median)")
    check = median_of([*doctor, "check", "--json", "--no-gpu"], args.runs, cwd)
    collect = median_of([sys.executable, "-m", "torch.utils.collect_env"], args.runs, cwd)
    print(f"rocm-doctor check --json --no-gpu {check:6.2f} s")
    print(f"torch.utils.collect_env           {collect:6.2f} s")
    print(f"ratio                             {check / collect:6.2f}  (target <= 0.5)")
    for extra in (["--version"], ["checks"], ["explain", "torch-build-mismatch"]):
        seconds = median_of([*doctor, *extra], args.runs, cwd)
        print(f"rocm-doctor {' '.join(extra):<19}{seconds:6.2f} s  (target < 0.3)")


if __name__ == "__main__":
    main()
