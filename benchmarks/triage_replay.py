"""Replays every recorded real paste (tests/data/triage/cases.json) through `rocm-doctor triage` and reports, per
class, how many name the established cause first, and how many healthy pastes got a problem (a false failure).

Usage: python benchmarks/triage_replay.py [--json]
A case names the check its thread established as the cause ("expected"); the paste names it first when the first
root cause is that check, or a known message that points at it. A thread with no established cause expects
"paste-not-enough-to-tell": nothing but that may be a root cause. A healthy paste (expected null) may not name a
cause either ("not enough to tell" is no failure: it claims nothing).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "tests" / "data" / "triage" / "cases.json"
FIXTURES = REPO / "tests" / "fixtures"
NOT_ENOUGH = "paste-not-enough-to-tell"


def _paths(case: dict) -> list[Path]:
    """A case's pastes: files under tests/data/triage/ or, written "fixtures/...", under tests/fixtures/."""
    names = case["paste"] if isinstance(case["paste"], list) else [case["paste"]]
    return [FIXTURES / n.split("/", 1)[1] if n.startswith("fixtures/") else CASES.parent / n for n in names]


def named_first(report, expected) -> tuple[bool, str]:
    """(passed, what came first) for one judged paste."""
    from rocm_doctor.knowledge import signatures

    roots = [r.finding for r in report.diagnosis.root_causes]
    first = roots[0] if roots else None
    pointed = None
    if first is not None and first.check == "known-error-signatures":
        pointed = (first.data or {}).get("check")
    said = "nothing" if first is None else first.id + (f" -> {pointed}" if pointed else "")
    if expected is None or expected == NOT_ENOUGH:  # nothing may be named as the cause
        return all(f.check == NOT_ENOUGH for f in roots), said
    if first is None:
        return False, said
    row = signatures.signature(first.id.split(":", 1)[1]) if pointed else None
    return bool(set(expected) & {first.check, pointed, (row or {}).get("check")}), said


def run(cases_file: Path = CASES) -> dict:
    """{classes: {class: {cases, first, healthy, false_failures}}, total, first, healthy, false_failures, misses}."""
    from rocm_doctor.triage import triage

    cases = json.loads(cases_file.read_text(encoding="utf-8"))["cases"]
    classes: dict[str, dict] = defaultdict(lambda: {"cases": 0, "first": 0, "healthy": 0, "false_failures": 0})
    misses = []
    for case in cases:
        report, _ = triage([(str(p.relative_to(REPO)), p.read_bytes()) for p in _paths(case)])
        passed, said = named_first(report, case.get("expected"))
        row = classes[case["class"]]
        if case.get("expected") is None:
            row["healthy"] += 1
            row["false_failures"] += not passed
        else:
            row["cases"] += 1
            row["first"] += passed
        if not passed:
            misses.append({"paste": case["paste"], "expected": case.get("expected"), "first": said})
    total = sum(r["cases"] for r in classes.values())
    first = sum(r["first"] for r in classes.values())
    return {"classes": dict(sorted(classes.items())), "total": total, "first": first,
            "healthy": sum(r["healthy"] for r in classes.values()),
            "false_failures": sum(r["false_failures"] for r in classes.values()), "misses": misses}


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(REPO))
    result = run()
    if "--json" in argv:
        print(json.dumps(result, indent=1))
        return 0
    print(f"{'class':<16} {'cases':>5} {'cause first':>11} {'healthy':>7} {'false fail':>10}")
    for name, row in result["classes"].items():
        print(f"{name:<16} {row['cases']:>5} {row['first']:>11} {row['healthy']:>7} {row['false_failures']:>10}")
    share = result["first"] / result["total"] if result["total"] else 0.0
    print(f"{'all':<16} {result['total']:>5} {result['first']:>11} {result['healthy']:>7} "
          f"{result['false_failures']:>10}   ({share:.0%} name the established cause first)")
    for miss in result["misses"]:
        print(f"  miss: {miss['paste']}: expected {miss['expected']}, first {miss['first']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
