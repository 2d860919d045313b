"""Markdown reporter: golden files for fixed reports (UPDATE_GOLDEN=1 rewrites them), and the GitHub size limit."""

import os
from pathlib import Path

import pytest

from rocm_doctor.engine.model import Finding, Severity, Status
from rocm_doctor.engine.runner import CommandResult
from rocm_doctor.facts import snapshot
from rocm_doctor.facts.observations import FileRecord, Observations
from rocm_doctor.report import bundle, markdown
from rocm_doctor.report.model import Report

FIXTURES = Path(__file__).parent / "fixtures"
GOLDEN = Path(__file__).parent / "golden"
ROCMINFO = "rocminfo/linux-rx6800-gfx1030-plus-5600g-igpu-gfx90c-padded-rocm5.4.3.txt"
LOG = "logs/amd_log_level/linux-nobara-rx7600xt-gfx1102-override-11.0.0-missing-CO-hipblaslt-then-segfault-torch-rocm6.2.txt"


def finding(check, status, message, **kw):
    return Finding(id=kw.pop("id", check), check=check, status=status, title=kw.pop("title", check.replace("-", " ")),
                   message=message, area=kw.pop("area", "gpu"), **kw)


FINDINGS = [
    finding("gfx-not-in-torch-arch-list", Status.FAIL, "gfx1030 is not in torch 2.5.1+rocm6.2's arch list | (pipe)",
            severity=Severity.HIGH, evidence=["torch.cuda.get_arch_list(): gfx900, gfx906", "rocminfo: gfx1030"],
            remediation=["/home/alice/venv/bin/python -m pip install --force-reinstall torch --index-url "
                         "https://download.pytorch.org/whl/rocm6.2"], docs=["https://pytorch.org/get-started/locally/"]),
    finding("hsa-override-set", Status.WARN, "HSA_OVERRIDE_GFX_VERSION=10.3.0 is set on alice's shell",
            id="hsa-override-set:env", remediation=["unset HSA_OVERRIDE_GFX_VERSION"]),
    finding("platform-supported", Status.OK, "Linux 6.8.0 (x86_64)", area="platform"),
    finding("wsl-detected", Status.SKIP, "not applicable on linux", area="platform"),
]


def fixed_bundle(findings=FINDINGS, stages=None, redacted=True):
    obs = Observations()
    obs.platform = {"os": "linux", "system": "Linux", "release": "6.8.0-45-generic", "machine": "x86_64"}
    obs.env = {"USER": "alice", "HOME": "/home/alice", "HSA_OVERRIDE_GFX_VERSION": "10.3.0", "HF_TOKEN": "hf_x1y2z3secretvalue"}
    obs.target = {"python": "/home/alice/venv/bin/python", "reason": "VIRTUAL_ENV"}
    obs.add_command("rocminfo", CommandResult(argv=["rocminfo"], returncode=0, duration_s=0.25,
                                              stdout=(FIXTURES / ROCMINFO).read_text()))
    obs.add_command("amd-smi-static-json", CommandResult(argv=["amd-smi", "static", "--json"], error="not found"))
    obs.add_file(FileRecord(path="/dev/kfd", exists=True, error="is a directory"))
    report = Report(findings=list(findings), target=dict(obs.target), platform={k: obs.platform[k] for k in ("os", "system", "release", "machine")},
                    generated_at="2026-11-30T12:00:00+00:00", stages=stages if stages is not None else {})
    data = report.to_dict()
    data["tool"]["version"] = "0.1.0"
    data["snapshot"] = snapshot.to_dict(obs, mask=False)  # as bundle.build embeds it
    data["snapshot"]["created_at"] = "2026-11-30T12:00:00+00:00"
    data["snapshot"]["tool"]["version"] = "0.1.0"
    data["redaction"] = {"applied": False}
    return bundle.redact_bundle(data)[0] if redacted else data


STAGES = {
    "kernels": [{"name": "matmul-fp32", "outcome": "ok", "seconds": 0.12},
                {"name": "conv2d-fp16", "outcome": "crash", "signal": "SIGSEGV", "stderr": (FIXTURES / LOG).read_text()}],
    "bench": {"matmul_fp16_tflops": 61.2, "expected_tflops": 122.8, "explanation": "launch-bound at this size"},
}
CASES = {
    "report-problems": lambda: fixed_bundle(stages=STAGES),
    "report-all-ok": lambda: fixed_bundle(findings=FINDINGS[2:]),
    "report-not-redacted": lambda: fixed_bundle(findings=FINDINGS[1:3], redacted=False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(name):
    text = markdown.render(CASES[name](), json_name="report.json")
    golden = GOLDEN / f"{name}.md"
    if os.environ.get("UPDATE_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


def test_verdict_comes_first_and_placeholders_are_visible():
    text = markdown.render(fixed_bundle(stages=STAGES))
    assert text.splitlines()[2] == "**Broken: 2 problems to fix.**"
    assert text.splitlines()[4] == "Broken: 1 fail, 1 warn, 1 ok, 1 skip"  # the headline's verdict, with counts
    assert "&lt;user&gt;" in text and "alice" not in text
    assert text.count("<details>") == text.count("</details>")


def test_long_outputs_shrink_to_fit_githubs_limit():
    huge = "\n".join(f"line {i}: " + "x" * 100 for i in range(5000))
    data = fixed_bundle(stages={"logs": {"miopen": huge, "rocblas": huge}})
    data["snapshot"]["observations"]["commands"]["rocminfo"]["stdout"] = huge
    text = markdown.render(data, json_name="r.json")
    assert len(text) <= markdown.GITHUB_LIMIT
    assert "characters omitted" in text and "shortened to fit GitHub" in text
    assert "`r.json` beside this file" in text
    assert "**Broken: " in text and "Broken: 1 fail" in text and "gfx-not-in-torch-arch-list" in text


def test_even_huge_findings_stay_under_the_limit():
    many = [finding(f"check-{i}", Status.WARN, "y" * 500) for i in range(400)]
    text = markdown.render(fixed_bundle(findings=many))
    assert len(text) <= markdown.GITHUB_LIMIT
    assert text.rstrip().endswith("has everything)")


def test_backticks_in_output_cannot_break_the_fence():
    data = fixed_bundle()
    data["snapshot"]["observations"]["commands"]["rocminfo"]["stdout"] = "before\n```\nafter ````"
    text = markdown.render(data)
    assert "`````\nbefore\n```\nafter ````\n`````" in text
