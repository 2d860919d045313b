"""torch.family: the installed torch, torchvision, torchaudio and Triton packages (version, the pins they carry,
installer, where they came from) and whether torchvision and torchaudio import, from the torch-family child; where
the child did not run (an older snapshot, a maintainer replaying a user's log) from a package list in the log
given with `check --log` (collect_env, pip list, pip freeze, pip's own output). Runs after amd_derived (user.log)."""

from __future__ import annotations

from rocm_doctor.engine.child import classify, parse_json_lines
from rocm_doctor.facts.facts import Facts
from rocm_doctor.facts.keys import LOG_KEY, TORCH_FAMILY, TORCH_VERSION
from rocm_doctor.facts.keys import TORCH_FAMILY_KEY as COMMAND_KEY
from rocm_doctor.facts.observations import Observations
from rocm_doctor.parsers.package_list import parse_packages

REQUIRES = (LOG_KEY, TORCH_VERSION)
KEY = TORCH_FAMILY


def from_child(stages: list[dict], state: str, detail: str) -> dict:
    packages: dict[str, dict] = {}
    shadowed: list[dict] = []
    imports: dict[str, dict] = {}
    started = None
    for stage in stages:
        if stage["stage"] == "packages":
            for item in stage.get("packages") or []:
                if not isinstance(item, dict) or not item.get("name"):
                    continue
                if item["name"] in packages:  # a later one on sys.path: installed, but not what Python imports
                    shadowed.append({k: item.get(k) for k in ("name", "version", "location")})
                else:
                    packages[item["name"]] = {k: v for k, v in item.items() if k != "name"}
        elif stage["stage"] == "importing":
            started = stage.get("module")
        elif stage["stage"] == "import":
            started = None
            imports[stage.get("module")] = {k: v for k, v in stage.items() if k not in ("stage", "module")}
    if started and state != "ok":  # the import itself took the interpreter down, or never returned
        imports[started] = {"ok": False, "error": f"the interpreter {detail} while importing {started}"}
    return {"source": "probe", "packages": packages, "shadowed": shadowed, "imports": imports,
            "probe": {"state": state, "detail": detail}}


def interpret(observations: Observations, facts: Facts) -> None:
    result = observations.command(COMMAND_KEY)
    if result is not None:
        stages = parse_json_lines(result.stdout)
        state, detail = classify(result, finished=bool(stages) and stages[-1]["stage"] == "done")
        listed = next((s for s in stages if s["stage"] == "packages"), None)
        if listed is None or listed.get("error"):
            reason = listed.get("error") if listed else f"the torch-family probe {state}: {detail}"
            facts.set_missing(KEY, reason)
            return
        facts.set(KEY, from_child(stages, state, detail))
        return
    log = facts.get(LOG_KEY)
    packages = parse_packages(str(log["text"])) if isinstance(log, dict) and log.get("text") else {}
    if packages and "torch" not in packages and facts.get(TORCH_VERSION):  # the log's companions, this torch
        packages = {"torch": {"version": facts.get(TORCH_VERSION), "requires": [], "line": None}, **packages}
    if packages:
        facts.set(KEY, {"source": "log", "where": log.get("path"), "packages": packages, "shadowed": [],
                        "imports": {}})
    else:
        facts.set_missing(KEY, "the torch family was not probed (a snapshot from an older rocm-doctor) and no log "
                               "given with --log lists its packages")
