"""Paired runs of `rocm-doctor check --no-gpu` against the torch child's own floor (`import torch;
torch.cuda.is_available()`) in the same interpreter, alternating, so that a machine others are loading slows both.

Usage: python benchmarks/check_floor.py ROUNDS PYTHON TREE [TREE ...]
Each TREE is a checkout run with `python -m rocm_doctor` from its root, its modules compiled to bytecode first, as
`pip install` compiles them (a machine that sets PYTHONDONTWRITEBYTECODE would otherwise compile all of them again
in every run, where torch's were compiled when it was installed). Each round runs the floor and every tree once, in
an order that rotates by round; printed: every round, then per tree the median, smallest and largest of (check -
floor of the same round).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time


def wall(argv: list[str], cwd: str) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def main(rounds: int, python: str, trees: list[str]) -> None:
    commands = {"floor": ([python, "-c", "import torch; torch.cuda.is_available()"], "/")}
    commands.update({tree: ([python, "-m", "rocm_doctor", "check", "--no-gpu"], tree) for tree in trees})
    names = list(commands)
    for tree in trees:
        subprocess.run([python, "-m", "compileall", "-q", "rocm_doctor", "checks", "data"], cwd=tree, check=True)
    times: dict[str, list[float]] = {name: [] for name in names}
    for index in range(rounds):
        for name in names[index % len(names):] + names[:index % len(names)]:
            times[name].append(wall(*commands[name]))
        print(f"round {index}: " + "  ".join(f"{name} {times[name][-1]:.3f} s" for name in names), flush=True)
    for tree in trees:
        gaps = [check - floor for check, floor in zip(times[tree], times["floor"])]
        print(f"{tree} - floor: median {statistics.median(gaps):+.3f} s, smallest {min(gaps):+.3f} s, "
              f"largest {max(gaps):+.3f} s ({rounds} rounds)")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3:])
