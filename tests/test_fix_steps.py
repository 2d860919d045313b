"""Fix steps are data: JSON round trip, derived apply modes, findings carry them, the schema accepts them."""

import json

import jsonschema
import pytest

from rocm_doctor.engine.model import Check, Finding, Status
from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.steps import AUTO, FLAG, PRINT
from rocm_doctor.engine.diagnosis import build


def collect(findings, only=()):
    plan = build(findings).plan
    return plan.only(only) if only else plan

ALL = [
    S.set_env("HSA_OVERRIDE_GFX_VERSION", "10.3.0"),
    S.set_env("X", "it's \"quoted\" $HOME %PATH%", scope="process"),
    S.unset_env("HIP_VISIBLE_DEVICES", scope="machine"),
    S.path_prepend("/opt/rocm/bin"),
    S.path_remove(r"C:\Program Files\AMD\ROCm\5.7\bin", variable="Path"),
    S.path_prepend("/opt/rocm/lib", variable="LD_LIBRARY_PATH"),
    S.pip_install("/venv/bin/python", "torch torchvision", "https://download.pytorch.org/whl/rocm6.4",
                  extra_args=["--force-reinstall"]),
    S.add_to_group(),
    S.vs_component(["Microsoft.VisualStudio.Component.VC.Tools.x86.x64"], install_path=r"C:\BuildTools"),
    S.run_command(["sudo", "modprobe", "amdgpu"], description="load amdgpu", needs_admin=True, then=S.AFTER_REBOOT),
    S.unit_env("ollama.service", "/etc/systemd/system/ollama.service.d/rocm-doctor.conf", "HSA_OVERRIDE_GFX_VERSION",
               "10.3.0"),
    S.unit_env("ollama.service", "/home/u/.config/systemd/user/ollama.service.d/rocm-doctor.conf", "HIP_VISIBLE_DEVICES",
               None, user=True),
    S.kernel_env("rocm", "/home/u/.local/share/jupyter/kernels/rocm/kernel.json", "HIP_VISIBLE_DEVICES", None),
]


@pytest.mark.parametrize("step", ALL, ids=lambda s: s.kind)
def test_json_round_trip(step):
    raw = json.loads(json.dumps(step.to_dict()))
    assert raw["kind"] == step.kind
    assert S.step_from_dict(raw) == step


def test_modes_and_effects_are_derived_not_trusted():
    assert S.set_env("A", "1").mode == AUTO and S.set_env("A", "1").after == S.AFTER_NEW_SHELL
    assert S.set_env("A", "1", scope="machine").mode == PRINT
    assert S.set_env("A", "1", scope="process").mode == PRINT
    pip = S.pip_install("/p", ["torch"], "https://i")
    assert pip.mode == FLAG and pip.flag == "--allow-install"
    assert pip.argv() == ["/p", "-m", "pip", "install", "torch", "--index-url", "https://i"]
    group = S.add_to_group()
    assert group.mode == PRINT and group.after == S.AFTER_RELOGIN
    assert group.argv() == ["sudo", "usermod", "-aG", "render,video", "$USER"]
    vs = S.vs_component("X.Y")
    assert vs.mode == PRINT and vs.argv()[1:] == ["modify", "--add", "X.Y", "--passive", "--norestart"]
    dropin = S.unit_env("a.service", "/etc/systemd/system/a.service.d/rocm-doctor.conf", "A", "1")
    assert dropin.mode == AUTO and dropin.after == "restart"
    # A report claiming a sudo step is automatic does not make it so.
    raw = group.to_dict() | {"apply": "auto"}
    assert S.step_from_dict(raw).mode == PRINT


@pytest.mark.parametrize("bad", [
    {"kind": "format_disk"},
    {"kind": "set_env", "name": "1BAD", "value": "x"},
    {"kind": "set_env", "name": "A", "value": "x", "scope": "galaxy"},
    {"kind": "path_prepend", "name": "PATH", "entry": ""},
    {"kind": "path_prepend", "name": "PATH", "entry": "a\nb"},
    {"kind": "set_env", "name": "A", "value": "x", "surprise": 1},
    {"kind": "pip_install", "python": "/p", "packages": []},
    {"kind": "run_command", "argv": []},
])
def test_bad_steps_are_refused(bad):
    with pytest.raises(S.StepError):
        S.step_from_dict(bad)


class _Demo(Check):
    id = "demo-override"
    title = "demo"

    def run(self, facts):
        return self.fail("wrong override", subject="gfx", fix=[S.unset_env("HSA_OVERRIDE_GFX_VERSION")])


def test_findings_carry_and_serialise_fix_steps(report_schema):
    finding = _Demo().run(None)
    assert finding.fix == [S.unset_env("HSA_OVERRIDE_GFX_VERSION")]
    Check.with_fix(finding, S.add_to_group())
    raw = json.loads(json.dumps(finding.to_dict()))
    assert [s["kind"] for s in raw["fix"]] == ["unset_env", "add_user_to_group"]
    assert Finding.from_dict(raw).fix == finding.fix
    # Unknown kinds from a newer version are dropped, not fatal.
    raw["fix"].append({"kind": "teleport"})
    assert len(Finding.from_dict(raw).fix) == 2
    schema = dict(report_schema["$defs"]["finding"], **{"$defs": report_schema["$defs"]})
    jsonschema.validate(finding.to_dict(), schema)
    for step in ALL:
        jsonschema.validate(step.to_dict(), report_schema["$defs"]["fix_step"])


def _finding(fid, status, *steps):
    return Finding(id=fid, check=fid.split(":")[0], status=status, title="t", message=f"{fid} message", fix=list(steps))


def test_plan_collects_fail_and_warn_dedupes_and_filters():
    pip = S.pip_install("/p", "torch", "https://i")
    findings = [
        _finding("torch-not-installed", Status.FAIL, pip),
        _finding("torch-build-mismatch", Status.FAIL, pip),
        _finding("gpu-visibility-env:HIP_VISIBLE_DEVICES", Status.WARN, S.unset_env("HIP_VISIBLE_DEVICES")),
        _finding("ok-one", Status.OK, S.set_env("A", "1")),
        _finding("info-one", Status.INFO, S.set_env("B", "1")),
    ]
    plan = collect(findings)
    assert [i.number for i in plan.items] == [1, 2]
    assert plan.items[0].findings == ["torch-build-mismatch", "torch-not-installed"]
    assert plan.check_ids() == ["gpu-visibility-env", "torch-build-mismatch", "torch-not-installed"]
    only = collect(findings, only=["gpu-visibility-env"])
    assert [i.step.kind for i in only.items] == ["unset_env"]
    assert collect(findings, only=["gpu-visibility-env:HIP_VISIBLE_DEVICES"]).items[0].number == 1
    assert collect(findings, only=[plan.items[1].id]).items[0].step.kind == "unset_env"


def test_the_same_change_asked_by_two_findings_with_different_reasons_is_one_step():
    first = Finding(id="hsa-override-gfx-version:0", check="hsa-override-gfx-version", status=Status.FAIL, title="t",
                    message="m", fix=[S.set_env("HSA_OVERRIDE_GFX_VERSION", "10.3.0", note="wrong family")])
    second = Finding(id="gfx-not-in-torch-arch-list:0", check="gfx-not-in-torch-arch-list", status=Status.FAIL,
                     title="t", message="m", fix=[S.set_env("HSA_OVERRIDE_GFX_VERSION", "10.3.0", note="run gfx1030 code")])
    plan = collect([first, second])
    assert len(plan.items) == 1
    assert plan.items[0].findings == ["gfx-not-in-torch-arch-list:0", "hsa-override-gfx-version:0"]
