"""HSA_OVERRIDE_GFX_VERSION A/B (AMD, Linux): the core cases in fresh children with the variable as set, unset,
and at the recommended value for the GPU, so the report says which setting actually runs kernels correctly.

The override is read when the HIP runtime starts, so every variant needs its own process; a wrong value can
crash or hang the child, which the harness records as such.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping, Optional, Sequence

from rocm_doctor.engine.child import run_child
from rocm_doctor.gpu.kernels.harness import SuiteOptions, run_suite
from rocm_doctor.knowledge import overrides

VARIABLE = "HSA_OVERRIDE_GFX_VERSION"
CORE_CASES = ("alloc-fill", "arith-float32", "mm-float32", "mm-float16", "conv2d-fwd-bwd-float32")


def recommended_override(gfx: Optional[str]) -> Optional[str]:
    """The conventional override for this gfx from rocm_doctor.knowledge.overrides (None if unknown/absent)."""
    return overrides.recommended(gfx) if gfx else None


def should_run(vendor: Optional[str], platform_os: str, env: Mapping[str, str], recommended: Optional[str]) -> tuple[bool, str]:
    if vendor != "amd":
        return False, "the override A/B applies to AMD GPUs only"
    if platform_os not in ("linux", "wsl"):
        return False, f"HSA_OVERRIDE_GFX_VERSION is a Linux runtime variable; not applicable on {platform_os}"
    if not env.get(VARIABLE) and not recommended:
        return False, f"{VARIABLE} is not set and no override is recommended for this GPU"
    return True, ""


def variants(env: Mapping[str, str], recommended: Optional[str]) -> list[dict[str, Any]]:
    """[{label, value}] where value None means the variable is removed."""
    current = env.get(VARIABLE) or None
    out = []
    if current:
        out.append({"label": "as set", "value": current})
    out.append({"label": "unset", "value": None})
    if recommended and recommended != current:
        out.append({"label": "recommended", "value": recommended})
    return out


def run_ab(
    python: str,
    env: Optional[Mapping[str, str]] = None,
    recommended: Optional[str] = None,
    cases: Sequence[str] = CORE_CASES,
    case_timeout_s: float = 60.0,
    startup_timeout_s: float = 120.0,
    runner: Callable = run_child,
    extra_modules: Sequence[str] = (),
) -> dict[str, Any]:
    """Run the core cases once per variant; return {variants: [...], current_works, working, advice}."""
    base = dict(os.environ if env is None else env)
    rows = []
    for variant in variants(base, recommended):
        child_env = dict(base)
        if variant["value"] is None:
            child_env.pop(VARIABLE, None)
        else:
            child_env[VARIABLE] = variant["value"]
        options = SuiteOptions(
            device="cuda", cases=list(cases), profile=False, env=child_env, case_timeout_s=case_timeout_s,
            startup_timeout_s=startup_timeout_s, max_children=2, extra_modules=extra_modules,
        )
        suite = run_suite(python, options, runner=runner)
        rows.append(summarize_variant(variant, suite))
    return judge(rows, base.get(VARIABLE) or None)


def summarize_variant(variant: dict, suite: dict) -> dict[str, Any]:
    results = suite.get("results") or []
    ok = [r["case"] for r in results if r.get("outcome") == "ok"]
    bad = [
        {"case": r["case"], "outcome": r.get("outcome"),
         "detail": (r.get("error") or r.get("detail") or r.get("rel_err_text") or r.get("reason") or "")[:300]}
        for r in results if r.get("outcome") != "ok"
    ]
    fatal = suite.get("fatal")
    works = bool(results) and not bad and not fatal
    return {
        "label": variant["label"],
        "value": variant["value"],
        "works": works,
        "ok": ok,
        "failed": bad,
        "fatal": fatal,
        "seconds": suite.get("seconds"),
    }


def judge(rows: list[dict], current: Optional[str]) -> dict[str, Any]:
    by_label = {row["label"]: row for row in rows}
    current_row = by_label.get("as set") if current else by_label.get("unset")
    working = [row for row in rows if row["works"]]
    current_works = bool(current_row and current_row["works"])
    advice = None
    if not current_works and working:
        best = next((row for row in working if row["label"] == "recommended"), None) or working[0]
        advice = (f"unset {VARIABLE}" if best["value"] is None else f"set {VARIABLE}={best['value']}")
    elif current_works and current and by_label.get("unset", {}).get("works"):
        advice = f"{VARIABLE} is not needed: the kernels also run correctly without it"
    return {
        "variable": VARIABLE,
        "current": current,
        "variants": rows,
        "current_works": current_works,
        "working": [row["label"] for row in working],
        "advice": advice,
    }
