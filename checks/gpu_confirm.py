"""Verdicts from the GPU confirm stage (fact gpu.kernels, set after the kernels ran in child processes), and what
the kernels confirm or refute of the static findings (`gpu-kernels-failed`'s `evidence_on`, with REFUTATIONS).

In the static pass the fact is absent and these checks skip; the pipeline re-runs them once the kernel stage has
provided the fact, then applies their evidence to the static findings (rocm_doctor.engine.pipeline).
"""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Platform, Severity
from rocm_doctor.facts.keys import GPU_KERNELS

NOT_RUN = "the GPU kernels did not run (--no-gpu, no GPU visible to torch, or a replayed snapshot)"
FUSED_SDPA = ("flash", "efficient", "cudnn")
FAILED = ("wrong", "error", "crashed", "hung")

# Static checks the kernels can refute: when the condition holds on a real GPU, their problem did not show.
#   all_ok:    every case that ran on the GPU was ok (at least `min_ok` of them)
#   cases_ok:  these cases were ok
#   categories_ok: every case of these categories that ran was ok (at least one)
REFUTATIONS: list[dict] = [
    {"check": "gfx-not-in-torch-arch-list", "when": "all_ok", "min_ok": 10},
    {"check": "sm-not-in-torch-arch-list", "when": "all_ok", "min_ok": 10},
    {"check": "hsa-override-gfx-version", "when": "all_ok", "min_ok": 10},
    {"check": "hiprtc-headers-missing", "when": "cases_ok", "cases": ["jiterator-float32", "jiterator-float16"]},
    {"check": "rocblas-library-coverage", "when": "categories_ok", "categories": ["matmul", "linear"]},
]


def first_line(text, limit: int = 240) -> str:
    """The first non-blank line of `text`, stripped and cut to `limit` characters."""
    for line in str(text or "").splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


def _stage(facts):
    stage = facts.get(GPU_KERNELS)
    return stage if isinstance(stage, dict) and stage.get("ran") else None


def _results(stage):
    return ((stage or {}).get("suite") or {}).get("results") or []


def _device_label(stage) -> str:
    hello = ((stage or {}).get("suite") or {}).get("hello") or {}
    devices = hello.get("devices") or []
    if devices and devices[0].get("name"):
        names = sorted({d.get("name") for d in devices if d.get("name")})
        return f"{', '.join(names)} ({devices[0].get('arch')})"
    return hello.get("device") or "the device"


def _with_outcome(stage, outcome) -> list:
    return [r for r in _results(stage) if r.get("outcome") == outcome]


class _KernelStageCheck(Check):
    """Skips when the kernel stage did not run; otherwise `judge(stage)` gives the verdict."""

    area = "gpu"
    requires = (GPU_KERNELS,)
    judges_cases = True  # a verdict about the cases that ran: none ran when the suite could not start

    def run(self, facts):
        stage = _stage(facts)
        if stage is None:
            return self.skip(NOT_RUN)
        if self.judges_cases and not _results(stage):
            return self.skip("no kernel ran: the suite could not start (see gpu-kernels-failed)")
        return self.judge(stage)

    def judge(self, stage):  # pragma: no cover - abstract
        raise NotImplementedError


def _signature_evidence(records) -> list[str]:
    lines = []
    for record in records:
        for sig in record.get("signatures") or []:
            line = f"{record['case']}: matches known error '{sig['id']}' → check {sig['check']}"
            if sig.get("meaning"):
                line += f" ({sig['meaning']})"
            if line not in lines:
                lines.append(line)
    return lines


def _signature_remediation(records) -> list[str]:
    checks = []
    for record in records:
        for sig in record.get("signatures") or []:
            if sig["check"] not in checks:
                checks.append(sig["check"])
    return [f"See the {check} finding: the kernel failure confirms that problem." for check in checks]


class GpuKernelsFailed(_KernelStageCheck):
    id = "gpu-kernels-failed"
    judges_cases = False
    title = "Errors from operator kernels"
    severity = Severity.HIGH

    def evidence_on(self, facts):
        """A static check whose known error a failed kernel (or the suite's start) printed is confirmed; one whose
        problem did not show on a real GPU (REFUTATIONS) is refuted."""
        stage = _stage(facts)
        if stage is None:
            return {}
        suite = stage.get("suite") or {}
        confirmed: dict[str, list[str]] = {}
        for record in _results(stage):
            for match in record.get("signatures") or [] if record.get("outcome") in FAILED else []:
                cases = confirmed.setdefault(match["check"], [])
                if record["case"] not in cases:
                    cases.append(record["case"])
        fatal = suite.get("fatal")
        for match in (fatal or {}).get("signatures") or []:
            confirmed.setdefault(match["check"], []).append("(kernel child startup)")
        out = {}
        if (suite.get("hello") or {}).get("device_type") == "cuda" and not fatal:
            for rule in REFUTATIONS:
                why = _refutes(rule, _results(stage))
                if why and rule["check"] not in confirmed:
                    out[rule["check"]] = {"refuted": True, "kind": "gpu-kernels", "detail": why}
        for check, cases in confirmed.items():
            out[check] = {"confirmed": True, "kind": "gpu-kernels", "cases": list(cases),
                          "detail": f"GPU kernels that failed with this problem's error: {', '.join(cases[:6])}"}
        return out

    def judge(self, stage):
        suite = stage.get("suite") or {}
        fatal = suite.get("fatal")
        if fatal:
            tail = [f"stderr: {line}" for line in fatal.get("stderr_tail") or []]
            return self.fail(
                f"the kernel suite could not start on {suite.get('device')}: {first_line(fatal.get('error'))}",
                evidence=[f"stage: {fatal.get('stage')}", *tail],
                remediation=["The JSON of rocm-doctor kernels has the child's output; check the torch probe findings "
                             "first (torch-probe-crashed, torch-cuda-unavailable)."],
                data={"fatal": fatal},
            )
        results = _results(stage)
        errors = _with_outcome(stage, "error")
        counts = suite.get("counts") or {}
        if errors:
            evidence = [f"{r['case']} [{r.get('category')}]: {first_line(r.get('error'))}" for r in errors[:12]]
            evidence += _signature_evidence(errors)
            categories = sorted({r.get("category") for r in errors})
            return self.fail(
                f"{len(errors)} of {len(results)} operator kernels raised errors on {_device_label(stage)} "
                f"(categories: {', '.join(categories)})",
                evidence=evidence,
                remediation=_signature_remediation(errors) or [
                    "Re-run rocm-doctor kernels with --only and the category, and --json, to reproduce; the error text "
                    "of each case is in the JSON (results[].error, results[].traceback)."],
                data={"cases": [r["case"] for r in errors]},
            )
        log_sigs = [s for s in ((stage.get("analysis") or {}).get("log_signatures") or [])]
        if log_sigs:
            return self.warn(
                "the kernels ran, but the math libraries logged known errors (a fallback path may be in use)",
                evidence=[f"library log: '{s['id']}' → check {s['check']}: {s.get('line', '')}" for s in log_sigs[:8]],
                remediation=[f"See the {s['check']} finding." for s in log_sigs[:3]],
            )
        return self.ok(
            f"{counts.get('ok', 0)} operator kernels ran correctly on {_device_label(stage)} "
            f"({counts.get('unavailable', 0)} unavailable here)"
        )


def _refutes(rule: dict, results: list[dict]):
    """Why the rule's condition holds on these results (None: it does not)."""
    ran = [r for r in results if r.get("outcome") not in ("unavailable", "not-run")]
    if rule["when"] == "all_ok":
        ok = [r for r in ran if r.get("outcome") == "ok"]
        if ran and len(ok) == len(ran) and len(ok) >= rule.get("min_ok", 1):
            return f"{len(ok)} kernels ran correctly on the GPU"
        return None
    if rule["when"] == "cases_ok":
        by_name = {r["case"]: r for r in results}
        picked = [by_name[c] for c in rule["cases"] if c in by_name]
        if picked and all(r.get("outcome") == "ok" for r in picked):
            return "runtime-compiled kernels (" + ", ".join(r["case"] for r in picked) + ") compiled and ran correctly"
        return None
    if rule["when"] == "categories_ok":
        picked = [r for r in ran if r.get("category") in rule["categories"]]
        if picked and all(r.get("outcome") == "ok" for r in picked):
            return f"{len(picked)} {'/'.join(rule['categories'])} kernels ran correctly on the GPU"
        return None
    return None


class GpuKernelsWrongResult(_KernelStageCheck):
    id = "gpu-kernels-wrong-result"
    title = "Operator kernel results against a float64 CPU reference"  # also said of `kernels --device cpu`
    severity = Severity.CRITICAL

    def judge(self, stage):
        wrong = _with_outcome(stage, "wrong")
        if not wrong:
            return self.ok("every kernel that ran matched the CPU reference within its dtype's tolerance")
        evidence = [
            f"{r['case']}: relative error {r.get('rel_err_text')} > tolerance {r.get('tol')}"
            + (f" ({'; '.join(r.get('notes') or [])})" if r.get("notes") else "")
            for r in wrong[:12]
        ]
        return self.fail(
            f"{len(wrong)} kernels returned wrong results on {_device_label(stage)}: "
            + ", ".join(r["case"] for r in wrong[:6]),
            evidence=evidence,
            remediation=[
                "The kernels returned wrong values without raising an error, which does not tell which of these "
                "it is: code built for another GPU running here (an HSA_OVERRIDE_GFX_VERSION that is not of this "
                "GPU's family), a broken math library, or unstable hardware (clocks, power, memory errors).",
                "If HSA_OVERRIDE_GFX_VERSION is set, unset it and run rocm-doctor kernels again; look for GPU errors in "
                "the kernel log (dmesg).",
            ],
            data={"cases": [r["case"] for r in wrong]},
        )


class GpuKernelCrash(_KernelStageCheck):
    id = "gpu-kernel-crash"
    title = "Operator kernels that crash the process"
    explains = ("sdpa-math-fallback", "bench-sdpa-math-only", "bench-section-failed", "gpu-kernels-failed")
    severity = Severity.CRITICAL

    def judge(self, stage):
        crashed = _with_outcome(stage, "crashed")
        if not crashed:
            return self.ok("no kernel crashed its process")
        evidence = []
        for r in crashed[:8]:
            evidence.append(f"{r['case']}: {r.get('detail')}")
            evidence += [f"  stderr: {line}" for line in (r.get("stderr_tail") or [])[-4:]]
        evidence += _signature_evidence(crashed)
        return self.fail(
            f"{len(crashed)} kernels crashed the process: {', '.join(r['case'] for r in crashed[:6])} "
            "(the other cases ran in fresh processes)",
            evidence=evidence,
            remediation=_signature_remediation(crashed) or [
                "A crash in a GPU kernel is typically a torch build without code for this GPU, a wrong "
                "HSA_OVERRIDE_GFX_VERSION, or mismatched ROCm/CUDA libraries; re-run with AMD_LOG_LEVEL=4 "
                "(AMD) to see the last runtime call."],
            data={"cases": [r["case"] for r in crashed]},
        )


class GpuKernelHang(_KernelStageCheck):
    id = "gpu-kernel-hang"
    title = "Operator kernels that hang"
    explains = ("sdpa-math-fallback", "bench-sdpa-math-only", "bench-section-failed", "gpu-kernels-failed")
    severity = Severity.CRITICAL

    def judge(self, stage):
        hung = _with_outcome(stage, "hung")
        if not hung:
            return self.ok("no kernel hung")
        return self.fail(
            f"{len(hung)} kernels did not finish: {', '.join(r['case'] for r in hung[:6])}",
            evidence=[f"{r['case']}: {r.get('detail')}" for r in hung[:8]],
            remediation=[
                "A kernel that never finishes points at the GPU or driver: look in the kernel log (dmesg) for ring "
                "timeouts or MES errors, unset HSA_OVERRIDE_GFX_VERSION, and make sure the GPU is not in a low-power state.",
            ],
            data={"cases": [r["case"] for r in hung]},
        )


class SdpaMathFallback(_KernelStageCheck):
    id = "sdpa-math-fallback"
    title = "Fused backends for scaled_dot_product_attention on this GPU"
    severity = Severity.MEDIUM

    def judge(self, stage):
        sdpa = [r for r in _results(stage) if r.get("category") == "sdpa"]
        if not sdpa:
            return self.skip("the SDPA cases were not selected")
        hello = (stage.get("suite") or {}).get("hello") or {}
        if hello.get("device_type") != "cuda":
            return self.skip("SDPA backends are judged on a GPU only")
        forced = {}
        for r in sdpa:
            parts = r["case"].split("-")
            if len(parts) >= 3 and parts[1] in FUSED_SDPA + ("math",):
                forced.setdefault(parts[1], []).append(r)
        fused_ok = sorted(k for k in FUSED_SDPA if any(r.get("outcome") == "ok" for r in forced.get(k, [])))
        default = next((r for r in sdpa if r["case"].startswith("sdpa-default")), None)
        chosen = ((default or {}).get("info") or {}).get("chosen")
        reasons = []
        for name in FUSED_SDPA:
            for r in forced.get(name, []):
                if r.get("outcome") != "ok":
                    reasons.append(f"{r['case']}: {r.get('outcome')}: {first_line(r.get('reason') or r.get('error') or r.get('detail'))}")
        if not fused_ok or chosen == "MATH":
            return self.warn(
                "scaled_dot_product_attention runs on the unfused math backend here"
                + (f" (dispatch chose {chosen})" if chosen else "")
                + ": attention is slower and needs O(L²) memory",
                evidence=reasons[:8],
                remediation=[
                    "AMD: flash/efficient attention come from AOTriton, built for gfx90a/gfx942/gfx950/gfx11xx/gfx12xx; "
                    "on experimental targets set TORCH_ROCM_AOTRITON_ENABLE_EXPERIMENTAL=1 before importing torch. "
                    "gfx103x (RDNA2) has no AOTriton kernels, so math is expected there.",
                    "NVIDIA: flash needs sm80+ and fp16/bf16; a torch build without flash attention falls back.",
                ],
                data={"fused_ok": fused_ok, "chosen": chosen},
            )
        return self.ok(
            f"fused SDPA backends that work here: {', '.join(fused_ok)}" + (f"; dispatch chooses {chosen}" if chosen else ""),
            evidence=reasons[:8],
            data={"fused_ok": fused_ok, "chosen": chosen},
        )


class HsaOverrideKernelsFail(_KernelStageCheck):
    id = "hsa-override-kernels-fail"
    judges_cases = False
    title = "Core kernels with the current HSA_OVERRIDE_GFX_VERSION setting"
    severity = Severity.HIGH
    platforms = (Platform.LINUX, Platform.WSL)

    def judge(self, stage):
        result = stage.get("override_ab") or {}
        if not result.get("variants"):
            return self.skip(result.get("reason") or "the override A/B did not run")
        evidence = []
        for row in result["variants"]:
            value = "unset" if row["value"] is None else row["value"]
            state = "works" if row["works"] else "fails: " + "; ".join(
                f"{f['case']} {f['outcome']}" for f in row["failed"][:3]) + (
                f" {first_line((row.get('fatal') or {}).get('error'))}" if row.get("fatal") else "")
            evidence.append(f"{row['label']} (HSA_OVERRIDE_GFX_VERSION={value}): {state}")
        current = result.get("current")
        if result.get("current_works"):
            message = f"the core kernels run correctly with HSA_OVERRIDE_GFX_VERSION={current or 'unset'}"
            if result.get("advice"):
                return self.info(message + "; " + result["advice"], evidence=evidence, data=result_data(result))
            return self.ok(message, evidence=evidence, data=result_data(result))
        remediation = []
        if result.get("advice"):
            remediation.append(result["advice"][0].upper() + result["advice"][1:] + " (the A/B run shows it works).")
        else:
            remediation.append("No variant ran the core kernels: the torch build or ROCm install does not support "
                               "this GPU; see the gfx and torch findings.")
        return self.fail(
            f"the core kernels fail with HSA_OVERRIDE_GFX_VERSION={current or 'unset'}"
            + (f"; working: {', '.join(result['working'])}" if result.get("working") else "; no variant works"),
            evidence=evidence,
            remediation=remediation,
            data=result_data(result),
        )


def result_data(result):
    return {k: result.get(k) for k in ("current", "working", "advice", "gfx", "recommended")}

