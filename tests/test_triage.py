"""`rocm-doctor triage`: real pastes (tests/fixtures, INDEX.md) judged alone, never this machine."""

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from rocm_doctor.cli.main import cli as main
from rocm_doctor.triage import triage

FIXTURES = Path(__file__).parent / "fixtures"
STEAMDECK = "errors/steamdeck-gfx1033-torch-hipErrorNoBinaryForGpu-abort.txt"
WSL_UNSUPPORTED = "rocminfo/wsl-rx7600xt-rocr-unsupported-gpu-rocm6.2.3.txt"
RX6800 = "rocminfo/linux-rx6800-gfx1030-plus-5600g-igpu-gfx90c-padded-rocm5.4.3.txt"


def judged(*names, texts=()):
    pastes = [(name, (FIXTURES / name).read_bytes()) for name in names] + list(texts)
    report, facts = triage(pastes)
    return report, {f.id: f for f in report.findings}, facts


def test_a_traceback_names_its_cause_and_asks_for_the_gfx_it_lacks():
    report, found, facts = judged(STEAMDECK)
    assert report.diagnosis.root_causes[0].finding.id == "known-error-signatures:hip-no-binary-for-gpu"
    ask = found["paste-not-enough-to-tell"]
    assert ask.status.value == "info" and "paste next: rocminfo" in ask.message
    assert facts.get("target.python") is None and report.source.startswith("paste ")


def test_a_pasted_rocminfo_is_judged_by_the_tools_own_parser_on_the_platform_it_shows():
    report, found, facts = judged(WSL_UNSUPPORTED)
    assert facts.os == "wsl"
    assert report.diagnosis.root_causes[0].finding.id == "wsl-rocm-support"


def test_a_healthy_rocminfo_paste_has_no_problem():
    report, found, _ = judged(RX6800)
    assert not [f for f in report.findings if f.is_problem], [f.id for f in report.findings if f.is_problem]
    assert found["paste-not-enough-to-tell"].status.value in ("ok", "info")


def test_a_paste_with_nothing_known_is_not_enough_to_tell_and_says_what_to_paste():
    report, found, _ = judged(texts=[("note.txt", b"it does not work, please help\n")])
    finding = found["paste-not-enough-to-tell"]
    assert finding.status.value == "warn" and finding.message.startswith("Not enough to tell")
    assert finding.remediation[0] == "Paste the output of: rocminfo"
    assert report.diagnosis.root_causes[0].finding.id == "paste-not-enough-to-tell"
    assert report.diagnosis.verdict == "not-enough-to-tell"  # not "works, with problems": nothing was judged
    assert report.diagnosis.headline.startswith("Not enough to tell: the paste holds no message")


def test_a_thin_paste_reads_not_enough_to_tell_from_the_headline_to_the_footer(tmp_path):
    paste = tmp_path / "note.txt"
    paste.write_text("it does not work, please help\n")
    done = CliRunner().invoke(main, ["triage", str(paste)])
    lines = [line for line in done.output.splitlines() if line.strip()]
    assert any(line.startswith("Not enough to tell: ") for line in lines[:4]), done.output
    assert lines[-1].startswith("Not enough to tell: ") and "Works" not in done.output, done.output


def test_the_paste_is_never_compared_with_this_machines_interpreter():
    _, found, _ = judged("errors/linux-fedora-rx7600xt-gfx1102-rocblas-tensilelibrary-missing-gfx1102-torch2.6.0-"
                         "rocm6.2.4.txt")
    assert found["log-from-another-interpreter"].status.value == "skip"


def test_cli_reads_files_and_standard_input_and_prints_json_or_markdown():
    runner = CliRunner()
    result = subprocess.run([sys.executable, "-m", "rocm_doctor", "triage", "--json", "-"], capture_output=True,
                            input=(FIXTURES / STEAMDECK).read_bytes(), timeout=120)
    data = json.loads(result.stdout)
    assert data["diagnosis"]["root_causes"][0]["finding"] == "known-error-signatures:hip-no-binary-for-gpu"
    markdown = runner.invoke(main, ["triage", "--markdown", str(FIXTURES / WSL_UNSUPPORTED)])
    assert markdown.output.startswith("### rocm-doctor report") and "wsl-rocm-support" in markdown.output
    assert runner.invoke(main, ["triage", "--json", "--markdown", str(FIXTURES / STEAMDECK)]).exit_code == 2


PASTES = Path(__file__).parent / "data" / "triage" / "pastes"


def test_a_card_named_in_words_gets_its_target_and_the_fix_its_override():
    """ROCm/legacy-rocm-build#2061: an RX 6600 (gfx1032) without code in the build; 10.3.0 made it work."""
    name = "koboldai-rx6600-no-binary-override-10.3.0.txt"
    report, facts = triage([(name, (PASTES / name).read_bytes())])
    assert [t["gfx"] for t in facts.get("log.machine")["targets"]] == ["gfx1032"]
    root = report.diagnosis.root_causes[0].finding
    assert root.id == "known-error-signatures:hip-no-binary-for-gpu"
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in root.remediation[0] and "gfx1032" in root.remediation[0]


def test_ollama_discovery_states_the_target_and_its_env_the_override():
    name = "ollama-windows-gfx1031-amdgpu-is-not-supported.txt"
    report, facts = triage([(name, (PASTES / name).read_bytes())])
    machine = facts.get("log.machine")
    assert machine["targets"][0]["gfx"] == "gfx1031" and machine["programs"][0]["name"] == "ollama"
    assert facts.os == "windows"
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in report.diagnosis.root_causes[0].finding.remediation[0]


def test_a_message_whose_thread_established_no_cause_names_none():
    name = "comfyui-rx6600-hip-out-of-memory.txt"
    report, _ = triage([(name, (PASTES / name).read_bytes())])
    found = {f.id: f for f in report.findings}
    assert found["known-error-signatures:hip-out-of-memory"].status.value == "info"
    assert [r.finding.id for r in report.diagnosis.root_causes] == ["paste-not-enough-to-tell"]
