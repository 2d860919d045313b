"""Parent side of the kernel suite: runs batches of cases in children of the target interpreter.

A batch runs many cases in one child (one torch import). The child prints "begin" before each case and
"result" after it, so when it crashes or hangs the case in progress is known: that case is recorded as
crashed/hung and the rest of the batch runs again in a fresh child. One bad case loses one case, not the run.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import threading
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence

from rocm_doctor.engine.child import ChildRun, GoFile, run_child, work_folder
from rocm_doctor.gpu.kernels.attribution import attribute

CHILD = Path(__file__).with_name("_child.py")
MARKER = "event"
OUTCOMES = ("ok", "wrong", "error", "crashed", "hung", "unavailable", "not-run")
FAILED = ("wrong", "error", "crashed", "hung")
WATCHDOG_TEXT = "Timeout ("  # what faulthandler.dump_traceback_later writes before it ends the process


@dataclass
class SuiteOptions:
    device: str = "cuda"
    only: Sequence[str] = ()  # categories
    cases: Optional[Sequence[str]] = None  # names; None = all
    exclude: Sequence[str] = ()
    extra_modules: Sequence[str] = ()
    profile: bool = True
    case_timeout_s: float = 60.0
    startup_timeout_s: float = 120.0
    max_children: int = 16
    seed: int = 1234
    env: Optional[Mapping[str, str]] = None  # the child's whole environment (None: this process's)
    hold: Optional[str] = None  # a file the child waits for before its first case (BackgroundSuite.release)
    workdir: Optional[str] = None  # the folder the child computes from (None: engine.child.work_folder's)

    def payload(self, cases: Optional[Sequence[str]], first: bool = True) -> dict[str, Any]:
        """What a child is asked to do; `first` is false for a child that takes over from one that died (it does not
        wait on the hold again)."""
        return {
            "device": self.device,
            "only": list(self.only),
            "cases": list(cases) if cases is not None else None,
            "exclude": list(self.exclude),
            "extra_modules": [os.path.abspath(p) for p in self.extra_modules],  # the child changes folder
            "profile": self.profile,
            "case_timeout_s": self.case_timeout_s,
            "seed": self.seed,
            "hold": self.hold if first else None,
            "hold_s": self.startup_timeout_s,
            "workdir": self.workdir or work_folder(self.device),
        }


# A function with run_child's signature; tests and the A/B runner may pass another.
ChildRunner = Callable[..., ChildRun]


def run_suite(python: str, options: SuiteOptions, runner: ChildRunner = run_child) -> dict[str, Any]:
    """Run the selected cases; return {hello, fatal, plan, results, counts, children, seconds}."""
    started = time.monotonic()
    env = dict(os.environ if options.env is None else options.env)
    hello: Optional[dict] = None
    plan: Optional[list[dict]] = None
    results: dict[str, dict] = {}
    children: list[dict] = []
    fatal: Optional[dict] = None
    remaining: Optional[list[str]] = list(options.cases) if options.cases is not None else None

    for attempt in range(options.max_children):
        count = len(remaining) if remaining is not None else 100
        timeout = options.startup_timeout_s + options.case_timeout_s * max(count, 1)
        run = runner(python, CHILD, options.payload(remaining, first=attempt == 0), timeout=timeout, env=env,
                     marker=MARKER)
        events = run.records
        begun: list[str] = []
        ran: list[str] = []
        child_fatal = None
        done_event: dict = {}
        child_import_s = None
        attribution_s = 0.0
        for event in events:
            kind = event.get(MARKER)
            if kind == "hello":
                child_import_s = event.get("import_s")
                if hello is None:
                    hello = {k: v for k, v in event.items() if k != MARKER}
            elif kind == "done":
                done_event = event
            elif kind == "plan" and plan is None:
                plan = event.get("cases") or []
            elif kind == "begin":
                begun.append(event.get("case"))
            elif kind == "result":
                record = {k: v for k, v in event.items() if k != MARKER}
                record["child"] = attempt
                results[record["case"]] = record
                ran.append(record["case"])
            elif kind == "profiles":
                attribution_s += event.get("seconds") or 0
                for name, profile in (event.get("cases") or {}).items():
                    if name in results:
                        results[name]["profile"] = profile
            elif kind == "fatal":
                child_fatal = {k: v for k, v in event.items() if k != MARKER}
        in_progress = next((name for name in reversed(begun) if name not in results), None)
        hung = run.state == "hung" or (run.state == "crashed" and WATCHDOG_TEXT in run.result.stderr)
        children.append({
            "attempt": attempt,
            "state": "hung" if hung else run.state,
            "detail": run.detail,
            "returncode": run.result.returncode,
            "duration_s": run.result.duration_s,
            "cases_run": len(ran),
            "in_progress": in_progress,
            "import_s": child_import_s,
            "after_import_s": done_event.get("suite_s"),
            "attribution_s": round(attribution_s, 3),
        })
        if child_fatal is not None:
            fatal = child_fatal
            break
        if run.state == "ok":
            break
        if plan is None:
            fatal = {
                "stage": "startup",
                "state": "hung" if hung else run.state,
                "error": f"the kernel child {run.detail} before listing its cases",
                "stderr_tail": run.stderr_tail,
            }
            break
        if in_progress is not None:
            results[in_progress] = _culprit(in_progress, plan, run, hung, attempt, options.case_timeout_s)
        remaining = [c["name"] for c in plan if c["name"] not in results]
        if not remaining:
            break
        if in_progress is None and not ran:
            # Died between cases without progress: do not loop on it.
            for name in remaining:
                results[name] = _not_run(name, plan, f"the kernel child {run.detail} between cases")
            break
    else:
        for case in plan or []:
            if case["name"] not in results:
                results[case["name"]] = _not_run(case["name"], plan, "too many child restarts")

    vendor = (hello or {}).get("vendor")
    ordered = []
    for case in plan or []:
        record = results.get(case["name"]) or _not_run(case["name"], plan, "not reached")
        profile = record.get("profile")
        if isinstance(profile, dict) and ("kernels" in profile or "ops" in profile):
            record["attribution"] = attribute(profile.get("kernels") or [], profile.get("ops") or [], vendor)
        ordered.append(record)
    return {
        "python": python,
        "device": options.device,
        "hello": hello,
        "fatal": fatal,
        "results": ordered,
        "counts": count_outcomes(ordered),
        "by_category": by_category(ordered),
        "children": children,
        "seconds": round(time.monotonic() - started, 3),
        "children_seconds": round(sum(c["duration_s"] for c in children), 3),
        "cases_seconds": round(sum(r.get("seconds") or 0 for r in ordered), 3),
    }


class BackgroundSuite:
    """The suite started in a thread, for one interpreter and environment: `check` starts it before the probes so
    that its child imports torch while they run. With `hold`, the child then waits before its first case until
    `release`: on an H200 a second process starting CUDA beside the suite made its cases 0.5-0.8 s slower in all,
    and the torch probe does just that. `stop` ends the child when its result is not needed."""

    def __init__(self, python: str, options: SuiteOptions, hold: bool = False) -> None:
        self.python, self.env = python, dict(options.env or {})
        self.hold: Optional[GoFile] = None
        if hold:
            try:
                self.hold = GoFile("rocm-doctor-hold-")
            except OSError:  # no temporary folder to hold in: the child computes as soon as it can
                pass
        if self.hold is not None:
            options = dataclasses.replace(options, hold=self.hold.path)
        self.cancel = threading.Event()
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kernel-suite")
        self.future: Future = pool.submit(run_suite, python, options, functools.partial(run_child, cancel=self.cancel))
        pool.shutdown(wait=False)
        if self.hold is not None:
            self.future.add_done_callback(lambda _future: self.hold.remove())

    def release(self) -> None:
        """Let the child compute (nothing when it holds for nothing or has ended)."""
        if self.hold is not None and not self.future.done():
            self.hold.open()

    def result(self) -> dict[str, Any]:
        self.release()
        return self.future.result()

    def stop(self) -> None:
        self.cancel.set()


def _meta(name: str, plan: Sequence[dict]) -> dict:
    for case in plan:
        if case["name"] == name:
            return {"case": name, "category": case.get("category"), "dtype": case.get("dtype")}
    return {"case": name}


def _culprit(name: str, plan, run: ChildRun, hung: bool, attempt: int, case_timeout: float) -> dict:
    record = _meta(name, plan)
    if hung:
        detail = (
            f"no result within {case_timeout:g} s (watchdog ended the child)"
            if run.state != "hung"
            else run.detail
        )
        record.update(outcome="hung", detail=detail)
    else:
        record.update(outcome="crashed", detail=run.detail, returncode=run.result.returncode,
                      signal=run.result.signal)
    record["stderr_tail"] = [line[:400] for line in run.stderr_tail]
    record["child"] = attempt
    return record


def _not_run(name: str, plan, why: str) -> dict:
    record = _meta(name, plan or [])
    record.update(outcome="not-run", reason=why)
    return record


def count_outcomes(results: Sequence[dict]) -> dict[str, int]:
    counts = {outcome: 0 for outcome in OUTCOMES}
    for record in results:
        counts[record.get("outcome", "not-run")] = counts.get(record.get("outcome", "not-run"), 0) + 1
    return counts


def by_category(results: Sequence[dict]) -> dict[str, dict[str, int]]:
    table: dict[str, Counter] = {}
    for record in results:
        table.setdefault(record.get("category") or "?", Counter())[record.get("outcome", "not-run")] += 1
    return {category: dict(counter) for category, counter in sorted(table.items())}


def failed(results: Sequence[dict]) -> list[dict]:
    return [r for r in results if r.get("outcome") in FAILED]
