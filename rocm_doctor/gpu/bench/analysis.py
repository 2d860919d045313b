"""From benchmark results to lines with a verdict and an explanation. Pure: no torch, no I/O but the catalog.

A line is a dict: section, key, label, value, unit, expected (or None), fraction, verdict, explanation, remedy
(list of steps), figure (what a judged line measured: matmul, bf16_vs_fp16, bandwidth, host_copy, launch,
sdpa_fused, decode, section; None for a line no check judges), details, and unreliable (why, when set). The checks
that turn lines into findings, and which figures each judges, are checks/bench.py. Verdicts: good,
low, very low (against the fraction of peak well-configured systems reach, THRESHOLDS), unknown (no expectation for
this card: raw figure), info (a figure with no verdict), failed (the section did not produce it).

Where each part lives: the verdicts and their thresholds in `verdicts`, the line record in `lines`, the lines
for the device's plain throughput (matmul, memory, launch) in `throughput`, those for workload-shaped figures
(SDPA, CPU against GPU, the decoder, the reference) in `workloads`, the SimpleCNN and its batch sweep in
`cnn`, and convolutions in `conv`. This module runs them in order, then `evidence` marks the figures
the GPU's sampled state makes unreliable and adds what re-runs without a speed switch measured.
"""

from __future__ import annotations

from typing import Any, Optional

from rocm_doctor.gpu.bench import cnn, conv, evidence, throughput, workloads
from rocm_doctor.gpu.bench.expectations import lookup
from rocm_doctor.gpu.bench.lines import device_of, make_line
from rocm_doctor.gpu.bench.verdicts import FAILED, THRESHOLDS
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
            "thresholds": THRESHOLDS,
            "lines": self.lines,
            "values": self.values,
            "observed": observed,
        }

    def failures(self) -> None:
        for name, entry in (self.results.get("sections") or {}).items():
            if entry.get("state") in ("ok", None):
                continue
            self.add(make_line(name, f"{name}.state", f"{name} section", None, "", figure="section",
                               verdict_=FAILED, explanation=f"{entry.get('state')}: {entry.get('detail')}",
                               state=entry.get("state")))


def analyze(results: dict[str, Any], expectation: Optional[dict[str, Any]] = None,
            use_catalog: bool = True) -> dict[str, Any]:
    """Lines with verdicts and explanations for a results object (see module docstring)."""
    return Analysis(results, expectation, use_catalog).run()
