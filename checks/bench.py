"""Benchmark checks: the measured figures against what the card should reach, with the reason for a gap.

They read the fact `bench.figures` (each measured figure, the card's expected figure from the GPU catalog, the
fraction, and what was seen around it: computed once per run by the bench stage's interpret step from
`bench.results`, set by `rocm-doctor bench` / `check --bench` or replayed from a snapshot). Each line's verdict,
the threshold it is judged against and its explanation and remedy come from bench_judge.py (`judge`): the matmul
lines against THRESHOLDS["matmul"] or an architecture's MATMUL_OVERRIDES row (`_matmul`), the bandwidth lines
against THRESHOLDS["bandwidth"], host copies against THRESHOLDS["host_link"], launches against LAUNCH_LIMITS, the
decoder against THRESHOLDS["decode_roofline"]; each judged line carries its threshold and source in `details`.
Each check names the figure it judges (`judges`: the lines' `figure`) and decides here: one finding per check, its
status from the worst of its lines (`worst`, VERDICT_RANK), the status a "very low" line gets (`very_low`: a fail
for the figures a card is bought for, matmul and bandwidth), every line as evidence, and the explanations and
remedies of the lines that fell short. A figure measured while the GPU was shared or throttled is at most a
warning: its explanation names what was seen. bench-cnn-speedup-low decides in its own class, from the measured
figures and the judged convolutions.
"""

from __future__ import annotations

from rocm_doctor.checks.bench_judge import judge
from rocm_doctor.engine.model import Check, Severity, Status
from rocm_doctor.facts.keys import BENCH_FIGURES, BENCH_RESULTS

# How bad each verdict of a line is (docs/bench.md): the worst line gives the finding its status.
VERDICT_RANK = {"info": 0, "good": 0, "unknown": 1, "low": 2, "failed": 2, "very low": 3}


def worst(lines):
    return max(lines, key=lambda l: VERDICT_RANK.get(l["verdict"], 0)) if lines else None


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


def judged_figures(facts):
    """The run's figures with every line judged (bench_judge.judge)."""
    return judge(facts[BENCH_FIGURES])


class _BenchCheck(Check):
    area = "performance"
    requires = (BENCH_RESULTS, BENCH_FIGURES)
    judges = ""  # the `figure` of the lines this check judges
    very_low = Status.WARN  # status of a "very low" line
    nothing = "not measured in this run"

    def lines(self, analysis) -> list[dict]:
        """The lines of the figure this check judges, each naming the check in the finding's data."""
        return [dict(line, check=self.id) for line in analysis["lines"] if line.get("figure") == self.judges]

    def run(self, facts):
        analysis = judged_figures(facts)
        lines = self.lines(analysis)
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
        status = self.very_low if verdict == "very low" and not bad.get("unreliable") else Status.WARN
        return self.finding(status, message, evidence=evidence, remediation=remedy, data=data)

    def shown_with_stage(self, facts):
        """Every line judged, for the bench's summary: what the renderers show."""
        return {"analysis": judged_figures(facts)}

    def good_message(self, lines) -> str:
        return "; ".join(f"{l['label']} {l['value']:.3g} {l['unit']}" for l in lines if l["value"] is not None)


class BenchMatmulLow(_BenchCheck):
    """Each dtype's median matmul rate over the card's dense peak, judged in bench_judge._matmul against
    THRESHOLDS["matmul"] or the architecture's MATMUL_OVERRIDES row; why it fell short in _matmul_lows."""

    id = "bench-matmul-low"
    title = "Matmul throughput against what this GPU should do"
    severity = Severity.HIGH
    judges = "matmul"
    very_low = Status.FAIL


class BenchBf16Slow(_BenchCheck):
    """The bf16 matmul rate over the fp16 one, judged in bench_judge._bf16 (BF16_SLOW, BF16_VERY_SLOW; no bf16
    matrix units named from NO_BF16_MATRIX or the catalog)."""

    id = "bench-bf16-slow"
    title = "bf16 matmul speed against fp16"
    severity = Severity.MEDIUM
    judges = "bf16_vs_fp16"


class BenchBandwidthLow(_BenchCheck):
    """Device copy and read over the card's peak bandwidth, judged in bench_judge._bandwidth against
    THRESHOLDS["bandwidth"]."""

    id = "bench-bandwidth-low"
    title = "Device memory bandwidth against what this GPU should do"
    severity = Severity.HIGH
    judges = "bandwidth"
    very_low = Status.FAIL


class BenchHostCopySlow(_BenchCheck):
    """Pinned copies over the PCIe link's rate (THRESHOLDS["host_link"], bench_judge._pinned); pageable copies over
    pinned ones are information with the remedy (PAGEABLE_SHARE, bench_judge._pageable)."""

    id = "bench-host-copy-slow"
    title = "Host <-> device copy speed against the PCIe link rate"
    severity = Severity.MEDIUM
    judges = "host_copy"


class BenchLaunchBound(_BenchCheck):
    """Microseconds per launch, judged in bench_judge._launch against LAUNCH_LIMITS for each mode."""

    id = "bench-launch-bound"
    title = "Kernel launch and synchronisation overhead"
    severity = Severity.MEDIUM
    judges = "launch"


class BenchDecodeUnderRoofline(_BenchCheck):
    """Decode tokens/s over the bandwidth roofline, judged in bench_judge._decode against
    THRESHOLDS["decode_roofline"]; eager decode that leaves the GPU idle (LAUNCH_BOUND_BUSY) is information."""

    id = "bench-decode-under-roofline"
    title = "LLM decode speed against the memory-bandwidth roofline"
    severity = Severity.MEDIUM
    judges = "decode"


class BenchSdpaMathOnly(_BenchCheck):
    """Whether a fused SDPA backend ran for every case (bench_judge._sdpa): low when only the math path did."""

    id = "bench-sdpa-math-only"
    title = "Fused attention (SDPA) backends on this GPU"
    severity = Severity.MEDIUM
    judges = "sdpa_fused"


class BenchSectionFailed(_BenchCheck):
    """A section that did not complete (bench_judge._failed: its state and detail)."""

    id = "bench-section-failed"
    title = "Completion of each benchmark section"
    severity = Severity.MEDIUM
    judges = "section"
    nothing = "every section completed"

    def run(self, facts):
        finding = super().run(facts)
        if finding.status is Status.SKIP and facts[BENCH_RESULTS].get("sections"):
            return self.ok("every benchmark section completed")
        analysis = judged_figures(facts)
        lines = self.lines(analysis)
        if finding.status is Status.WARN and (analysis["device"] or {}).get("type") == "cpu" \
                and all(line.get("state") == "timeout" for line in lines):
            # on the CPU a section past its time limit says how long rocm-doctor waits, not that something is wrong
            return self.info(f"{len(lines)} section(s) stopped at rocm-doctor's own time limit on the CPU device; "
                             "their figures are missing, nothing is wrong with this machine", evidence=finding.evidence)
        return finding


class BenchCnnSpeedupLow(Check):
    """Answers "matmul is many times faster on the GPU, so why is my small CNN only a few times faster?" from what
    the compare, cnn, sweep and conv sections measured: the reason, and the steps that help with their measured gain."""

    id = "bench-cnn-speedup-low"
    title = "A small CNN's GPU speed-up over the CPU"
    area = "performance"
    severity = Severity.MEDIUM
    requires = (BENCH_RESULTS, BENCH_FIGURES)
    LOW_SHARE = 0.5  # of the best speed-up this GPU showed (fp32 matmul, or the same model at a larger batch)
    LAUNCH_BOUND = 0.5  # GPU busy below this share of a step
    OPTIMIZER_BOUND = 0.3  # of a step in optimizer.step()
    FIRST_USE = 10.0  # first step over a steady one
    HELPS = 1.05  # a remedy that cut the step by 5% or more is listed as one that helps
    WORKLOAD = ("launch-bound",)  # reasons true of the workload on any machine: information, with the measured gain

    def run(self, facts):
        analysis = judged_figures(facts)
        values = analysis["values"]
        cnn, conv = values.get("cnn") or {}, values.get("conv") or {}
        base = cnn.get("sweep_base") or {}
        speedup = values.get("speedup_cnn") or base.get("speedup")
        if not cnn and speedup is None:
            return self.skip("the small-CNN sections (compare, cnn, sweep) did not run")
        if (analysis["device"] or {}).get("type") != "cuda":
            return self.info("measured on the CPU device: there is no GPU speed-up to explain")
        if speedup is None:
            return self.skip("no GPU/CPU speed-up of the small CNN was measured (the compare or sweep section)")
        matmul, best = values.get("speedup_matmul"), cnn.get("sweep_best") or {}
        ceiling = max(matmul or 0.0, best.get("speedup") or 0.0)
        data = {"speedup": speedup, "speedup_matmul": matmul, "cnn": cnn, "conv": {k: conv.get(k) for k in (
            "slow", "naive", "fastest", "first_call_ms", "first_call_typical_ms", "benchmark", "db_kept_results",
            "miopen")}}
        shown = f"The small CNN trains {speedup:.1f}x faster than the CPU" + (
            f" (fp32 matmul {matmul:.0f}x)" if matmul else "")
        share = values.get("cpu_share") or {}
        if share.get("usable") and share.get("present") and share["usable"] < share["present"]:
            data["cpu_share"] = share
            return self.info(
                f"{shown}, against a CPU side that ran on {share['usable']} of the machine's {share['present']} CPUs "
                "(see process-cpus-restricted): every speed-up over the CPU is larger here than on the whole "
                "machine, so this one is not judged", data=data)
        if not ceiling or speedup >= self.LOW_SHARE * ceiling:
            return self.ok(shown + ": close to the best this GPU showed", data=data)
        reasons = self.reasons(cnn, conv)
        data.update(reason=reasons[0][0], reasons=[r[0] for r in reasons])
        message = f"{shown} because {reasons[0][1]}"
        if len(reasons) > 1:
            message += "; also " + "; ".join(r[1] for r in reasons[1:])
        if best and base and best.get("batch") != base.get("batch"):
            message += (f". Measured gain: at batch {best['batch']} it trains {best['speedup']:.0f}x faster than the "
                        f"CPU, {best['speedup'] / base['speedup']:.1f}x the speed-up at batch {base['batch']}")
        status = Status.INFO if reasons[0][0] in self.WORKLOAD else Status.WARN
        if status is Status.INFO:
            message += (". A small model in eager PyTorch is launch-bound on every GPU: this is the workload's "
                        "property, not this machine's")
        return self.finding(status, message, evidence=self.evidence(cnn, conv, speedup, matmul),
                            remediation=self.steps(cnn, conv, [r[0] for r in reasons]), data=data)

    def reasons(self, cnn, conv):
        """(id, sentence) for every cause the measurements show, the most specific first."""
        found = []
        configs = conv.get("configs") or {}
        plain = configs.get("3x3.fp32.nchw") or {}
        if conv.get("naive") or plain.get("verdict") in ("low", "very low"):
            what = ", ".join(sorted({n for item in conv.get("naive") or [] for n in item["names"]})[:2])
            found.append(("slow-conv-kernels", "its convolutions run on slow kernels" + (
                f" ({what})" if what else f": a 3x3 fp32 conv reaches {plain.get('of_gemm', 0):.0%} of the GEMM rate")))
        busy, launch_ms, steady = cnn.get("busy"), cnn.get("launch_ms"), cnn.get("steady_ms")
        optimizer = cnn.get("optimizer") or {}
        share = optimizer.get("share")
        if busy is not None and busy < self.LAUNCH_BOUND:
            text = (f"it is launch-bound at this size: the GPU is busy {busy:.0%} of the {steady:.2f} ms step and "
                    "waits for the host the rest")
            if launch_ms:
                text += (f"; launching its {cnn.get('kernels_per_step', 0):.0f} kernels costs {launch_ms:.2f} ms "
                         f"({cnn.get('launch_us', 0):.1f} us each)")
            opt_ms = ((optimizer.get("variants") or {}).get(optimizer.get("default") or "") or {}).get("opt_ms")
            if opt_ms:
                text += f", Adam's step {opt_ms:.2f} ms"
            if launch_ms or opt_ms:
                text += ", the rest is PyTorch's host-side work per op (dispatch, autograd)"
            found.append(("launch-bound", text))
        if share is not None and share >= self.OPTIMIZER_BOUND:
            found.append(("optimizer-bound", f"Adam's step takes {share:.0%} of the training step"))
        first = cnn.get("first_over_steady")
        if first and first >= self.FIRST_USE:
            text = f"the first step took {cnn['first_ms']:.0f} ms, {first:.0f}x a steady one (first use of each kernel"
            typical = (conv.get("first_call_typical_ms") or {}).get("default")
            text += (f"; the conv section measured {typical:.0f} ms for a new convolution shape's first call)"
                     if typical else ")")
            if conv.get("db_kept_results") is False or (conv.get("miopen") or {}).get("db_writable") is False:
                text += ", and MIOpen's find database did not keep its results for the next process"
            found.append(("first-use-search", text))
        if found:
            return found
        busy_text = f"the GPU is busy {busy:.0%} of a step" if busy is not None else "the step was not profiled"
        return [("unexplained", f"of no single cause measured here ({busy_text})")]

    def steps(self, cnn, conv, reasons):
        """The remedies measured to help, biggest gain first, then the ones that follow from the reasons."""
        measured = []
        best, base = cnn.get("sweep_best") or {}, cnn.get("sweep_base") or {}
        if best and base and best.get("batch", 0) > base.get("batch", 0) and best["speedup"] > base["speedup"]:
            measured.append((best["speedup"] / base["speedup"], (
                f"Train with larger batches (scale the learning rate with them): batch {best['batch']} measured "
                f"{best['speedup']:.1f}x over the CPU against {base['speedup']:.1f}x at batch {base['batch']}.")))
        texts = {"cuda_graph": "Capture the whole training step in a CUDA/HIP graph (torch.cuda.graph with "
                               "Adam(capturable=True); torch.compile(mode='reduce-overhead') captures graphs too, not "
                               "measured here)",
                 "fused_adam": "Use Adam(fused=True)", "channels_last": "Use channels_last for the model and input",
                 "amp_fp16": "Train with torch.autocast(dtype=torch.float16) and a GradScaler (fp16, not bf16, on "
                             "RDNA2 and older AMD GPUs)", "amp_bf16": "Train with torch.autocast(dtype=torch.bfloat16)"}
        steady = cnn.get("steady_ms")
        for name, result in (cnn.get("variants") or {}).items():
            if name in texts and (result.get("speedup") or 0) >= self.HELPS:
                measured.append((result["speedup"], f"{texts[name]}: measured {steady:.3f} -> "
                                                    f"{result['ms_per_step']:.3f} ms per step ({result['speedup']:.2f}x)."))
        out = [text for _, text in sorted(measured, key=lambda item: -item[0])]
        fastest = (conv.get("configs") or {}).get(conv.get("fastest") or "") or {}
        if "slow-conv-kernels" in reasons and fastest.get("tflops"):
            out.append(f"The fastest 3x3 convolution here was {conv['fastest'].replace('.', ' ')} at "
                       f"{fastest['tflops']:.1f} TFLOP/s: train in that dtype and layout. On ROCm for Windows, where "
                       "MIOpen can fall back to naive kernels, a newer ROCm build or Linux.")
        if "first-use-search" in reasons and ((conv.get("miopen") or {}).get("db_writable") is False
                                              or conv.get("db_kept_results") is False):
            out.append("Keep MIOpen's find database: a writable, persistent MIOPEN_USER_DB_PATH (see "
                       "miopen-db-not-writable), warmed once per machine; MIOPEN_FIND_MODE=FAST skips the search at "
                       "the cost of kernel quality.")
        return out

    def evidence(self, cnn, conv, speedup, matmul):
        lines = [f"speed-up over the CPU: small CNN {speedup:.2f}x" + (f", fp32 matmul {matmul:.1f}x" if matmul else "")]
        if cnn.get("steady_ms"):
            lines.append(f"step {cnn['steady_ms']:.3f} ms at batch {cnn.get('batch')}; first step {cnn['first_ms']:.1f} ms")
        if cnn.get("busy") is not None:
            lines.append(f"GPU busy {cnn['busy']:.0%} of a step ({cnn.get('device_busy_ms', 0):.3f} ms of kernels); "
                         f"{cnn.get('kernels_per_step') or 0:.0f} kernels per step at {cnn.get('launch_us') or 0:.1f} us")
        if cnn.get("top_host_op"):
            lines.append(f"top host-side op {cnn['top_host_op']}; top device-side op {cnn.get('top_device_op')}")
        optimizer = cnn.get("optimizer") or {}
        for name, figures in (optimizer.get("variants") or {}).items():
            lines.append(f"Adam {name}{' (default)' if name == optimizer.get('default') else ''}: step "
                         f"{figures['ms_per_step']:.3f} ms, optimizer {figures.get('opt_ms') or 0:.3f} ms")
        for row in cnn.get("sweep") or []:
            if row.get("speedup") is not None:
                busy = f", GPU busy {min(row['busy'], 1.0):.0%}" if row.get("busy") is not None else ""
                lines.append(f"batch {row['batch']}: {row['speedup']:.1f}x over the CPU{busy}")
        for key in ("3x3.fp32.nchw", conv.get("fastest")):
            figures = (conv.get("configs") or {}).get(key or "")
            if figures and figures.get("tflops"):
                lines.append(f"conv {key}: {figures['tflops']:.1f} TFLOP/s ({figures['verdict']})")
        return lines


def check_of(figure: str) -> str | None:
    """The id of the check that judges the lines of this figure."""
    return next((c.id for c in _BenchCheck.__subclasses__() if c.judges == figure), None)
