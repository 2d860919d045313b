"""The plan keeps a step two root causes share after each one's own earlier steps (a unit restarted after both edits)."""

from __future__ import annotations

from rocm_doctor.engine import remedy as S
from rocm_doctor.engine.model import Finding, Status
from rocm_doctor.engine.plan import PlanBuilder

DROPIN = "/etc/systemd/system/ollama.service.d/rocm-doctor.conf"


def _finding(fid: str) -> Finding:
    return Finding(id=fid, check=fid, status=Status.FAIL, title=fid, message=fid)


def _steps(name: str, value: str):
    return [S.unit_env("ollama.service", DROPIN, name, value),
            S.run_command(["systemctl", "daemon-reload"], needs_admin=True),
            S.run_command(["systemctl", "restart", "ollama.service"], needs_admin=True)]


def test_the_shared_reload_and_restart_follow_the_second_causes_edit():
    builder = PlanBuilder()
    for finding, steps in ((_finding("override"), _steps("HSA_OVERRIDE_GFX_VERSION", "10.3.0")),
                           (_finding("visibility"), _steps("HIP_VISIBLE_DEVICES", "0"))):
        for step in steps:
            builder.add(step, finding)
    items = builder.plan.items
    summaries = [item.step.summary() for item in items]
    assert len(items) == 4, summaries  # the reload and the restart are planned once, for both
    assert [item.number for item in items] == [1, 2, 3, 4]
    kinds = [item.step.kind for item in items]
    assert kinds == ["unit_env", "unit_env", "run_command", "run_command"], summaries
    assert items[2].findings == ["override", "visibility"] and "restart" in summaries[3]


def test_a_shared_first_step_stays_where_it_was():
    builder = PlanBuilder()
    first, second = _finding("a"), _finding("b")
    reload = S.run_command(["systemctl", "daemon-reload"])
    builder.add(reload, first)
    builder.add(S.unit_env("ollama.service", DROPIN, "A", "1"), first)
    builder.add(reload, second)
    assert [item.step.kind for item in builder.plan.items] == ["run_command", "unit_env"]
