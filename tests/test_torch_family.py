"""The torch family: pasted package lists read from real outputs, the child on a fake site-packages, what a local
version label says, the table, and the check's verdicts (facts in, findings out)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocm_doctor.engine.child import parse_json_lines
from rocm_doctor.interpret.torch_family import from_child
from rocm_doctor.knowledge import torch_family as table
from rocm_doctor.knowledge.store import load
from rocm_doctor.parsers.package_list import parse_packages
from rocm_doctor.testing import Case, run_case

FIXTURES = Path(__file__).parent / "fixtures"
CHILD = Path(__file__).resolve().parents[1] / "rocm_doctor" / "probes" / "_family_child.py"
AMD = [{"vendor": "amd", "vendor_id": "0x1002", "device_id": "0x74a1", "source": "sysfs"}]
NVIDIA = [{"vendor": "nvidia", "vendor_id": "0x10de", "device_id": "0x2335", "source": "sysfs"}]
INVENTORY = [{"index": 0, "gfx": "gfx942", "igpu": False, "node": 1, "name": "AMD Instinct MI300X",
              "sources": {"kfd": "gfx942"}}]
TRITON_PIN = 'pytorch-triton-rocm==3.1.0; platform_system == "Linux"'


def versions(path: str) -> dict:
    return {name: entry["version"] for name, entry in parse_packages((FIXTURES / path).read_text()).items()}


def family(source="probe", imports=None, **packages):
    return {"source": source, "packages": packages, "shadowed": [], "imports": imports or {}}


def judge(fam, gpus=AMD, **facts):
    return run_case(Case(name="family", check="torch-family-mismatch",
                         facts={"torch.family": fam, "gpu.pci": gpus, "gpu.inventory": INVENTORY if gpus == AMD else [],
                                "platform.machine": "x86_64", **facts}, expect={}))


def status(findings, finding_id="torch-family-mismatch"):
    return next((f.status.value for f in findings if f.id == finding_id), None)


# -- pasted lists -------------------------------------------------------------------------------------------------

def test_collect_env_list_indented_as_pasted_with_two_triton_packages():
    assert versions("collect_env/linux-mi300x-torch2.4.1-rocm6.1-torchvision-0.16.1-source-build-plus-pypi-triton-"
                    "dstack-benchmark.txt") == {"torch": "2.4.1+rocm6.1", "torchaudio": "2.4.1+rocm6.1",
                                                "torchvision": "0.16.1+fdea156", "pytorch-triton-rocm": "3.0.0",
                                                "triton": "3.0.0"}


def test_collect_env_of_amd_wheels_with_git_labels():
    assert versions("collect_env/wsl-rx7900xtx-torch2.4.0-rocm6.3.4-amdsmi-error34.txt")["torchvision"] == \
        "0.19.0+rocm6.3.4.gitfab84886"


def test_pip_resolver_complaint_gives_the_pin_and_the_torch():
    found = parse_packages((FIXTURES / "pip/linux-mi325x-rocm7.1-nightly-torch-reinstalled-stale-torchvision-0.26.0-"
                                       "requires-torch-2.11.0-excerpt.txt").read_text())
    assert found["torchvision"]["version"] == "0.26.0" and found["torchvision"]["requires"] == ["torch==2.11.0"]
    assert found["torch"]["version"] == "2.12.0.dev20260411+rocm7.1"


def test_pip_install_output_keeps_what_is_installed():
    assert versions("pip/linux-stabilitymatrix-comfyui-rocm6.0-pypi-first-collects-cuda-torch-2.4.1-excerpt.txt") == {
        "torch": "2.3.1+rocm6.0", "torchvision": "0.18.1+rocm6.0", "torchaudio": "2.3.1+rocm6.0"}


def test_pip_freeze_tail_of_a_therock_nightly_names_only_the_family():
    assert versions("pip/linux-therock-nightly-rocm10.1.0a20260827-torch2.14-pip-freeze-tail-excerpt.txt") == {
        "torch": "2.14.0+rocm10.1.0a20260827", "torchaudio": "2.11.0.3+rocm10.1.0a20260827",
        "torchvision": "0.28.0+rocm10.1.0a20260827", "triton": "3.8.0+git675c5987.rocm10.1.0a20260827"}


def test_name_colon_version_lines():
    assert versions("pip/linux-rocm-pytorch-docker-torch2.9.1-rocm7.2.1-torchvision-0.24.1-versions.txt") == {
        "torch": "2.9.1+rocm7.2.1.lw.gitff65f5bc", "torchvision": "0.24.1"}


def test_successfully_installed_wins_and_garbage_is_ignored():
    text = ("torch-complex==0.4.4\nRequirement already satisfied: torch in /v (2.3.1+rocm6.0)\n\x00\x01 torch\n"
            "Successfully installed torch-2.4.1 torchvision-0.19.1 nvidia-cublas-cu12-12.1.3.1\n")
    assert {k: v["version"] for k, v in parse_packages(text).items()} == {"torch": "2.4.1", "torchvision": "0.19.1"}
    assert parse_packages(None) == {} and parse_packages("torchvision\n") == {}


# -- the child -----------------------------------------------------------------------------------------------------

def _dist(site: Path, name: str, version: str, requires=(), installer="pip"):
    info = site / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}", *(f"Requires-Dist: {r}" for r in requires)]
    (info / "METADATA").write_text("\n".join(lines) + "\n")
    (info / "INSTALLER").write_text(installer + "\n")


def test_child_reads_metadata_then_reports_the_import_that_fails(tmp_path):
    site = tmp_path / "site"
    _dist(site, "torch", "2.5.1+rocm6.2", [TRITON_PIN, "filelock"])
    _dist(site, "torchvision", "0.20.1", ["numpy", "torch==2.5.1"], installer="uv")
    (site / "torch").mkdir()
    (site / "torch" / "__init__.py").write_text("")
    (site / "torchvision").mkdir()
    (site / "torchvision" / "__init__.py").write_text(
        "import torch\nraise RuntimeError('operator torchvision::nms does not exist')\n")
    env = dict(os.environ, PYTHONPATH=str(site))
    run = subprocess.run([sys.executable, "-S", str(CHILD)], capture_output=True, text=True, env=env, timeout=60,
                         cwd=tmp_path)
    fam = from_child(parse_json_lines(run.stdout), "ok", "completed")
    assert fam["packages"]["torch"]["requires"] == [TRITON_PIN]
    assert fam["packages"]["torchvision"]["installer"] == "uv"
    assert fam["imports"]["torchvision"]["error"] == "RuntimeError: operator torchvision::nms does not exist"
    assert "torchaudio" not in fam["imports"]


def test_an_import_that_kills_the_child_is_named():
    stages = [{"stage": "packages", "packages": [{"name": "torch", "version": "2.5.1"},
                                                 {"name": "torch", "version": "2.4.0", "location": "/user/site"}]},
              {"stage": "importing", "module": "torchvision"}]
    fam = from_child(stages, "crashed", "killed by SIGSEGV")
    assert fam["imports"]["torchvision"]["error"] == "the interpreter killed by SIGSEGV while importing torchvision"
    assert fam["shadowed"] == [{"name": "torch", "version": "2.4.0", "location": "/user/site"}]


# -- labels and table ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("version,origin,kind,tag", [
    ("2.5.1+rocm6.2", "pytorch.org", "rocm", "rocm6.2"),
    ("2.6.0+rocm6.2.4", "pytorch.org", "rocm", "rocm6.2.4"),
    ("2.5.1+cu121", "pytorch.org", "cuda", "cu121"),
    ("0.20.1", "pypi", None, None),
    ("2.12.0+rocm7.14.0", "therock", "rocm", "rocm7.14.0"),
    ("3.8.0+git675c5987.rocm10.1.0a20260827", "therock", "rocm", "rocm10.1.0"),
    ("2.9.1+rocm7.2.1.lw.gitff65f5bc", "amd", "rocm", "rocm7.2.1"),
    ("0.16.1+fdea156", "source", None, None),
])
def test_what_a_label_says(version, origin, kind, tag):
    build = table.build_of(version)
    assert (build.origin, build.kind, build.tag) == (origin, kind, tag)


def test_table_pairs_and_sources():
    assert table.expected("2.5.1+rocm6.2", "torchvision") == "0.20"
    assert table.expected_point("2.0.1", "torchvision") == "0.15.2"
    assert table.pairs_with("torchvision", "0.16.1+fdea156") == ["2.1"]
    assert table.serves_every_later_torch("torchaudio", "2.11.0", "2.13.0")
    assert not table.serves_every_later_torch("torchaudio", "2.9.0", "2.13.0")
    releases = [row["torch"] for row in load("torch_family.json")["releases"]]
    assert releases[0] == "1.13" and "2.10" in releases
    assert table.index_url(table.build_of("2.12.0.dev20260411+rocm7.1")) == \
        "https://download.pytorch.org/whl/nightly/rocm7.1"


# -- the check -----------------------------------------------------------------------------------------------------

def test_a_matching_family_is_listed_like_collect_env():
    (finding,) = judge(family(torch={"version": "2.5.1+rocm6.2", "requires": [TRITON_PIN]},
                              torchvision={"version": "0.20.1+rocm6.2", "requires": ["torch==2.5.1"]},
                              torchaudio={"version": "2.5.1+rocm6.2", "requires": ["torch==2.5.1"]},
                              **{"pytorch-triton-rocm": {"version": "3.1.0"}}))
    assert finding.status.value == "ok"
    assert "torchvision==0.20.1+rocm6.2 (from the download.pytorch.org rocm6.2 index)" in finding.evidence


def test_only_torch_is_fine():
    (finding,) = judge(family(torch={"version": "2.13.0+cpu", "requires": []}), gpus=[])
    assert finding.status.value == "ok" and "no companion installed" in finding.message


def test_no_torch_skips():
    assert status(judge(family(torchvision={"version": "0.20.1"}))) == "skip"


def test_a_companion_built_for_another_torch_release_from_a_pasted_collect_env():
    text = (FIXTURES / "collect_env/linux-mi300x-torch2.4.1-rocm6.1-torchvision-0.16.1-source-build-plus-pypi-triton-"
                       "dstack-benchmark.txt").read_text()
    findings = judge(family("log", where="collect_env.txt", **parse_packages(text)))
    fail = next(f for f in findings if f.id == "torch-family-mismatch")
    assert fail.status.value == "fail" and "is built for torch 2.1" in fail.message and "read from the log" in fail.message
    assert fail.fix[0].packages == ["torch==2.4.1", "torchvision==0.19.*", "torchaudio==2.4.*"]
    assert fail.fix[0].index_url == "https://download.pytorch.org/whl/rocm6.1"
    assert status(findings, "torch-family-mismatch:triton") == "warn"


@pytest.mark.parametrize("path", ["pip/linux-therock-nightly-rocm10.1.0a20260827-torch2.14-pip-freeze-tail-excerpt.txt",
                                  "collect_env/wsl-rx7900xtx-torch2.4.0-rocm6.3.4-amdsmi-error34.txt",
                                  "pip/linux-stabilitymatrix-comfyui-rocm6.0-pypi-first-collects-cuda-torch-2.4.1-"
                                  "excerpt.txt"])
def test_families_built_together_pass(path):
    assert status(judge(family("log", **parse_packages((FIXTURES / path).read_text())))) == "ok"


def test_a_cuda_companion_from_another_index():
    findings = judge(family(torch={"version": "2.5.1+cu124"}, torchvision={"version": "0.20.1+cu121"}), gpus=NVIDIA)
    fail = next(f for f in findings if f.status.value == "fail")
    assert "cu121 beside cu124" in fail.message and fail.fix[0].index_url == "https://download.pytorch.org/whl/cu124"


def test_stable_abi_torchaudio_serves_a_later_torch():
    assert status(judge(family(torch={"version": "2.13.0+rocm7.2"}, torchaudio={"version": "2.11.0+rocm7.2"}))) == "ok"


def test_triton_missing_or_not_the_pinned_version():
    missing = judge(family(torch={"version": "2.5.1+rocm6.2", "requires": [TRITON_PIN]}))
    assert status(missing) == "fail" and "which is not installed" in missing[0].message
    other = judge(family(torch={"version": "2.5.1+rocm6.2", "requires": [TRITON_PIN]},
                         **{"pytorch-triton-rocm": {"version": "3.0.0"}}))
    assert status(other) == "fail" and "pytorch-triton-rocm 3.0.0" in other[0].message


def test_a_triton_pin_for_another_platform_does_not_count():
    assert status(judge(family(torch={"version": "2.5.1+rocm6.2", "requires": [TRITON_PIN]}), gpus=AMD,
                        **{"platform.os": "windows"})) == "ok"


def test_operators_that_do_not_load_are_a_fail_even_when_the_versions_pair():
    imports = {"torchvision": {"ok": False, "error": "RuntimeError: operator torchvision::nms does not exist"}}
    fam = family(imports=imports, torch={"version": "2.5.1+rocm6.2"}, torchvision={"version": "0.20.1+rocm6.2"})
    (finding,) = judge(fam)
    assert finding.status.value == "fail" and finding.fix
    assert "import torchvision: RuntimeError: operator torchvision::nms does not exist" in finding.evidence


def test_another_import_error_is_a_warning_without_a_step():
    imports = {"torchvision": {"ok": False, "error": "ModuleNotFoundError: No module named 'PIL'"}}
    (finding,) = judge(family(imports=imports, torch={"version": "2.5.1+rocm6.2"},
                              torchvision={"version": "0.20.1+rocm6.2"}))
    assert finding.status.value == "warn" and not finding.fix


def test_cuda_torch_with_its_companions_on_an_amd_gpu_is_replaced_as_a_family():
    (finding,) = judge(family(torch={"version": "2.4.1"}, torchvision={"version": "0.19.1"}),
                       **{"torch.flavour": "cuda", "torch.version": "2.4.1"})
    assert finding.status.value == "fail" and finding.data["replaces_torch"]
    assert finding.fix[0].packages == ["torch", "torchvision"]


def test_old_snapshot_without_the_probe_skips_with_the_reason(doctor):
    snapshot = Path(__file__).parent / "snapshots" / "linux-2x-mi100-gfx908-healthy.json"
    result = doctor("check", "--from", str(snapshot), "--json", "--only", "torch-family-mismatch")
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["status"] == "skip" and "not probed" in finding["message"]


def test_a_log_naming_only_torchvision_is_judged_against_this_machines_torch():
    from rocm_doctor.facts.facts import Facts
    from rocm_doctor.facts.observations import Observations
    from rocm_doctor.interpret import torch_family as interpreter

    observations = Observations()
    facts = Facts(observations)
    facts.set("torch.version", "2.9.1+rocm7.2.1.lw.gitff65f5bc")
    facts.set("user.log", {"path": "versions.txt", "text": "torchvision:  0.24.1\n"})
    interpreter.interpret(observations, facts)
    assert list(facts["torch.family"]["packages"]) == ["torch", "torchvision"]
    facts_missing = Facts(observations)
    interpreter.interpret(observations, facts_missing)
    assert "not probed" in facts_missing.why_missing("torch.family")


def test_the_child_tries_the_imports_only_where_the_metadata_disagree():
    import importlib.util

    from rocm_doctor.probes import torch_family as probe

    spec = importlib.util.spec_from_file_location("_family_child_under_test", probe.CHILD)
    child = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(child)
    torch = {"name": "torch", "version": "2.5.1+rocm6.2", "requires": []}
    same = {"name": "torchvision", "version": "0.20.1+rocm6.2", "requires": ["torch==2.5.1"]}
    pypi = {"name": "torchvision", "version": "0.20.1", "requires": ["torch==2.5.1"]}
    pinned = {"name": "torchvision", "version": "0.21.0+rocm6.2", "requires": ["torch==2.6.0"]}
    assert child.disagreement([torch, same], "torchvision") is None
    assert "0.20.1 beside torch 2.5.1+rocm6.2" in child.disagreement([torch, pypi], "torchvision")
    assert "requires torch==2.6.0" in child.disagreement([torch, pinned], "torchvision")
    assert child.disagreement([same], "torchvision") is None  # no torch: nothing to compare


def test_the_family_child_runs_in_the_same_environment_as_the_torch_probe(monkeypatch):
    """Under --unit or --kernel the target interpreter runs with the service's environment: both children get it."""
    from rocm_doctor.engine import runner
    from rocm_doctor.facts.command import CommandResult
    from rocm_doctor.facts.observations import Observations
    from rocm_doctor.probes import torch_family, torch_probe
    from rocm_doctor.probes._base import ProbeContext, Recorder

    envs = {}

    def run(argv, timeout=None, env=None, **kwargs):
        envs[Path(argv[-1]).name] = dict(env)
        return CommandResult(argv=list(argv), returncode=0, stdout="")

    monkeypatch.setattr(runner, "run", run)
    shell = {"PATH": "/usr/bin", "PYTHONPATH": "/home/user/shell-only"}
    service = {"PATH": "/usr/bin", "HSA_OVERRIDE_GFX_VERSION": "10.3.0"}
    context = ProbeContext(python="/usr/bin/python3", python_reason="test", platform_os="linux", env=shell,
                           torch_env=service)
    recorder = Recorder(Observations(), context)
    torch_probe.collect(recorder)
    torch_family.collect(recorder)
    family, probe = envs[Path(str(torch_family.CHILD)).name], envs[Path(str(torch_probe.CHILD)).name]
    assert family == probe and family["HSA_OVERRIDE_GFX_VERSION"] == "10.3.0" and "PYTHONPATH" not in family
    assert recorder.observations.command(torch_probe.COMMAND_KEY).environment is not None