"""Speed switches against the figures they move (pure): which switches set in the benchmark's environment to re-run
without, and what each re-run measured against the run with the switch.

A switch that is set is re-run without whenever this run measured a figure it moves (data/perf_switches.json
`figures`), whatever that figure's verdict: only the re-run tells what the switch costs, and the stage holds no
verdicts. At most MAX_RUNS switches are re-run, each over only the sections it moves (docs/bench.md). Whether it
slows a figure (better without it by more than its run-to-run variation, knowledge/perf_switches.py) is the checks' to say.
"""

from __future__ import annotations

import fnmatch
from typing import Any, Iterable, Mapping, Optional

from rocm_doctor.gpu.bench.lines import device_of
from rocm_doctor.knowledge import perf_switches

MAX_RUNS = 3
HIGHER_IS_BETTER = {"TFLOP/s", "GB/s", "tok/s"}
LOWER_IS_BETTER = {"us/launch", "ms/step", "ms"}


def run_vendor(results: dict[str, Any]) -> tuple[str, bool]:
    """("amd" | "nvidia", measured on the CPU device)."""
    hip = ((results.get("header") or {}).get("import") or {}).get("hip")
    return ("amd" if hip else "nvidia"), device_of(results).get("type") != "cuda"


def moved(switch: dict, lines: Iterable[dict], cpu_device: bool) -> list[dict]:
    """The measured lines a switch moves; a CPU-side switch moves only the CPU figures of a GPU run."""
    out = []
    for line in lines:
        if line.get("value") is None or line.get("unit") not in HIGHER_IS_BETTER | LOWER_IS_BETTER:
            continue
        if switch["side"] == "cpu" and not cpu_device and not line["key"].endswith(".cpu"):
            continue
        if any(fnmatch.fnmatchcase(line["key"], pattern) for pattern in switch["figures"]):
            out.append(line)
    return out


def choose(results: dict[str, Any], env: Mapping[str, str], lines: list[dict],
           planned: Iterable[str]) -> dict[str, Any]:
    """{"set": [every switch set, with its row], "runs": [{variable, value, sections, why}], "not_run": [{variable,
    value, why}]}: the re-runs to make, at most MAX_RUNS, in table order. `lines` are the run's figures."""
    vendor, cpu_device = run_vendor(results)
    found = [s.to_dict() for s in perf_switches.set_in(env, vendor, cpu_device)]
    runs, not_run = [], []
    for switch in found:
        name = {"variable": switch["variable"], "value": switch["value"]}
        hit = moved(switch, lines, cpu_device)
        if not switch["figures"]:
            not_run.append(dict(name, why="no benchmark figure measures what it changes"))
        elif not hit:
            not_run.append(dict(name, why="none of the figures it moves was measured in this run"))
        elif len(runs) >= MAX_RUNS:
            not_run.append(dict(name, why=f"only {MAX_RUNS} switches are re-run per benchmark"))
        else:
            why = "it moves " + "; ".join(f"{l['label']} {l['value']:.3g} {l['unit']}" for l in hit)
            sections = [s for s in planned if s in {l["section"] for l in hit}]
            runs.append(dict(name, sections=sections, figures=[l["key"] for l in hit], why=why))
    return {"set": found, "runs": runs, "not_run": not_run}


def merged(results: dict[str, Any], run: dict[str, Any]) -> dict[str, Any]:
    """The results as they would read had the re-run's sections been measured without the switch."""
    again = run.get("results") or {}
    out = {k: v for k, v in results.items() if k not in ("switch_ab", "live")}
    out["sections"] = {**(results.get("sections") or {}), **(again.get("sections") or {})}
    out["live"] = again.get("live") or {}
    return out


def compare(run: dict[str, Any], with_lines: list[dict], without_lines: list[dict]) -> dict[str, Any]:
    """Each figure the re-run measured, with and without the switch; `speedup` > 1 is faster without it."""
    before = {l["key"]: l for l in with_lines}
    figures = []
    for line in without_lines:
        old = before.get(line["key"])
        if line["key"] not in run.get("figures", ()) or not old or not old.get("value") or not line.get("value"):
            continue
        ratio = line["value"] / old["value"] if line["unit"] in HIGHER_IS_BETTER else old["value"] / line["value"]
        figures.append({"key": line["key"], "label": line["label"], "unit": line["unit"], "with": old["value"],
                        "without": line["value"], "speedup": round(ratio, 3), "section": line["section"]})
    best: Optional[dict] = max(figures, key=lambda f: f["speedup"], default=None)
    return {"variable": run["variable"], "value": run["value"], "figures": figures,
            "speedup": best["speedup"] if best else None,
            "failed": [f"{name}: {entry.get('state')} ({entry.get('detail')})" for name, entry in
                       (((run.get("results") or {}).get("sections")) or {}).items() if entry.get("state") != "ok"]}
