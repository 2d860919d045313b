"""Benchmark checks: the measured figures against what the card should reach, with the reason for a gap.

They read the fact `bench.results` (set by `rocm-doctor bench` / `check --bench`, or replayed from a snapshot)
and turn the lines of rocm_doctor.gpu.bench.analysis into findings: one finding per check, its status from the
worst line, every line as evidence, and the explanations and remedies of the lines that fell short.
"""

from __future__ import annotations

from rocm_doctor.engine.model import Check, Severity, Status
from rocm_doctor.gpu.bench.analysis import analyze
from rocm_doctor.gpu.bench.verdicts import worst


def _figure(line) -> str:
    value = line["value"]
    if value is None:
        return f"{line['label']}: not measured ({line['explanation']})"
    text = f"{line['label']}: {value:.3g} {line['unit']}"
    if line.get("expected"):
        text += f" of {line['expected']:.4g} expected"
        if line.get("fraction") is not None:
            text += f" ({line['fraction']:.0%})"
    text += f" -> {line['verdict']}"
    if line.get("explanation"):
        text += f"; {line['explanation']}"
    return text


class _BenchCheck(Check):
    area = "performance"
    requires = ("bench.results",)
    very_low = Status.WARN  # status of a "very low" line
    nothing = "not measured in this run"

    def run(self, facts):
        analysis = analyze(facts["bench.results"])
        lines = [line for line in analysis["lines"] if line.get("check") == self.id]
        if not lines:
            return self.skip(self.nothing)
        bad = worst(lines)
        evidence = [_figure(line) for line in lines]
        remedy = []
        for line in lines:
            for step in line.get("remedy") or []:
                if step not in remedy:
                    remedy.append(step)
        data = {"lines": lines, "expectation_match": analysis["expectation_match"]}
        verdict = bad["verdict"]
        if verdict in ("good", "info"):
            return self.ok(self.good_message(lines), evidence=evidence, data=data)
        if verdict == "unknown":
            return self.info(f"no expectation for this card ({analysis['expectation_match']}); raw figures: "
                             + "; ".join(f"{l['label']} {l['value']:.3g} {l['unit']}" for l in lines if l["value"] is not None),
                             evidence=evidence, data=data)
        message = _figure(bad)
        status = self.very_low if verdict == "very low" else Status.WARN
        return self.finding(status, message, evidence=evidence, remediation=remedy, data=data)

    def good_message(self, lines) -> str:
        return "; ".join(f"{l['label']} {l['value']:.3g} {l['unit']}" for l in lines if l["value"] is not None)


class BenchMatmulLow(_BenchCheck):
    id = "bench-matmul-low"
    title = "Matmul throughput reaches what this GPU should do"
    severity = Severity.HIGH
    very_low = Status.FAIL


class BenchBf16Slow(_BenchCheck):
    id = "bench-bf16-slow"
    title = "bf16 matmuls are not much slower than fp16"
    severity = Severity.MEDIUM


class BenchBandwidthLow(_BenchCheck):
    id = "bench-bandwidth-low"
    title = "Device memory bandwidth reaches what this GPU should do"
    severity = Severity.HIGH
    very_low = Status.FAIL


class BenchHostCopySlow(_BenchCheck):
    id = "bench-host-copy-slow"
    title = "Host <-> device copies run at the PCIe link rate"
    severity = Severity.MEDIUM


class BenchLaunchBound(_BenchCheck):
    id = "bench-launch-bound"
    title = "Kernel launch and synchronisation overhead is normal"
    severity = Severity.MEDIUM


class BenchDecodeUnderRoofline(_BenchCheck):
    id = "bench-decode-under-roofline"
    title = "LLM decode speed is near the memory-bandwidth roofline"
    severity = Severity.MEDIUM


class BenchSdpaMathOnly(_BenchCheck):
    id = "bench-sdpa-math-only"
    title = "A fused attention (SDPA) backend runs on this GPU"
    severity = Severity.MEDIUM


class BenchSectionFailed(_BenchCheck):
    id = "bench-section-failed"
    title = "Every benchmark section ran to completion"
    severity = Severity.MEDIUM
    nothing = "every section completed"

    def run(self, facts):
        finding = super().run(facts)
        if finding.status is Status.SKIP and facts["bench.results"].get("sections"):
            return self.ok("every benchmark section completed")
        return finding
