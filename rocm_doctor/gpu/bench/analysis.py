"""From benchmark results to figures: what each line measured and what the card should reach. Pure: no torch,
no I/O but the catalog. No verdicts: the checks judge these figures (checks/bench_judge.py, checks/bench.py).

A line is a dict: section, key, label, value, unit, expected (the card's figure from the GPU catalog, or the
link's, or None), fraction (value over expected), explanation (what was measured about the figure, in words),
figure (what a judged line measured: matmul, bf16_vs_fp16, bandwidth, host_copy, launch, sdpa_fused, decode,
section; None for a line no check judges), details, context (what the judgement needs and the renderers do not
show), and unreliable (why, when the GPU was shared or slowed while it was measured).

Where each part lives: the line record in `lines`, the lines for the device's plain throughput (matmul, memory,
launch) in `throughput`, those for workload-shaped figures (SDPA, CPU against GPU, the decoder, the reference) in
`workloads`, the SimpleCNN and its batch sweep in `cnn`, and convolutions in `conv`. This module runs them in
order, then `evidence` marks the figures the GPU's sampled state makes unreliable and adds what re-runs without a
speed switch measured. The bench checks judge the figures; the pipeline brings their judgement to the renderers.
"""

from __future__ import annotations

from typing import Any, Optional

from rocm_doctor.gpu.bench import cnn, conv, evidence, throughput, workloads
from rocm_doctor.gpu.bench.expectations import lookup
from rocm_doctor.gpu.bench.lines import device_of, make_line
from rocm_doctor.parsers.gfx import base_gfx


class Analysis:
    """One analysis under way: the results, the device and what it should reach, and the lines and values found
    so far. The section functions add to it in order; later sections read the values of earlier ones."""

    def __init__(self, results: dict[str, Any], expectation: Optional[dict[str, Any]] = None, use_catalog: bool = True):
        self.results = results
        self.device = device_of(results)
        self.on_gpu = self.device.get("type") == "cuda"
        self.hip = bool(((results.get("header") or {}).get("import") or {}).get("hip"))
        self.gfx = (base_gfx(self.device.get("gcnArchName")) or "") if self.hip else ""
        self.match = "explicit expectation"
        if expectation is None and use_catalog and self.on_gpu:
            expectation, self.match = lookup(self.device.get("name"), self.device.get("gcnArchName") if self.hip else None)
        elif expectation is None:
            self.match = "CPU device: no catalog expectation" if not self.on_gpu else "catalog not consulted"
        self.expectation = expectation
        self.lines: list[dict[str, Any]] = []
        self.values: dict[str, Any] = {}

    # -- helpers
    def peak(self, dtype: str) -> Optional[float]:
        return ((self.expectation or {}).get("peak_tflops") or {}).get(dtype)

    def bandwidth_peak(self) -> Optional[float]:
        return (self.expectation or {}).get("bandwidth_gbs")

    def add(self, line: dict[str, Any]) -> None:
        self.lines.append(line)

    # -- sections
    def run(self) -> dict[str, Any]:
        self.failures()
        throughput.matmul(self)
        throughput.memory(self)
        throughput.launch(self)
        workloads.sdpa(self)
        workloads.compare(self)
        cnn.step(self)
        cnn.sweep(self)
        conv.conv(self)
        workloads.decoder(self)
        workloads.reference(self)
        observed = evidence.apply(self)
        return {
            "device": self.device,
            "expectation": self.expectation,
            "expectation_match": self.match,
            "lines": self.lines,
            "values": self.values,
            "observed": observed,
            "context": {"hip": self.hip, "gfx": self.gfx,
                        "tunableop": (self.results.get("env") or {}).get("PYTORCH_TUNABLEOP_ENABLED")},
        }

    def failures(self) -> None:
        for name, entry in (self.results.get("sections") or {}).items():
            if entry.get("state") in ("ok", None):
                continue
            self.add(make_line(name, f"{name}.state", f"{name} section", None, "", figure="section",
                               explanation=f"{entry.get('state')}: {entry.get('detail')}",
                               state=entry.get("state")))


def measure(results: dict[str, Any], expectation: Optional[dict[str, Any]] = None,
            use_catalog: bool = True) -> dict[str, Any]:
    """The figures of a results object (see module docstring): the `bench.figures` fact."""
    return Analysis(results, expectation, use_catalog).run()

