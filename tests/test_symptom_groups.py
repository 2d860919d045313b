"""Symptom groups are named once, in checks/symptoms.py: no check's `explains` spells a group's ids itself."""

import ast
from pathlib import Path

from rocm_doctor.checks import symptoms

CHECKS = Path(__file__).resolve().parents[1] / "checks"
GROUPS = {name: value for name, value in vars(symptoms).items() if name.isupper() and isinstance(value, tuple)}


def spelled_groups(source: str) -> list[tuple[int, str]]:
    """(line, group) for every run of a group's ids written out inside an `explains` assignment."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "explains" for t in node.targets)):
            continue
        for tuple_node in (n for n in ast.walk(node.value) if isinstance(n, ast.Tuple)):
            items = [e.value for e in tuple_node.elts if isinstance(e, ast.Constant)]
            for name, group in GROUPS.items():
                if any(tuple(items[i:i + len(group)]) == group for i in range(len(items))):
                    found.append((tuple_node.lineno, name))
    return found


def test_the_finder_sees_a_spelled_out_group():
    source = 'class A:\n    explains = ("x", "torch-cuda-unavailable", "torch-probe-crashed", "gpu-runtime-refuses")\n'
    assert spelled_groups(source) == [(2, "TORCH_SEES_NO_GPU")]


def test_no_check_spells_a_symptom_group():
    spelled = [f"{path.name}:{line}: {name}" for path in sorted(CHECKS.glob("*.py")) if path.name != "symptoms.py"
               for line, name in spelled_groups(path.read_text(encoding="utf-8"))]
    assert not spelled, "use the group from checks/symptoms.py:\n" + "\n".join(spelled)


def test_groups_compose_from_smaller_ones():
    assert symptoms.DRIVER_SYMPTOMS[-len(symptoms.GPU_WORK):] == symptoms.GPU_WORK
    assert set(symptoms.TORCH_SEES_NO_GPU) <= set(symptoms.DRIVER_SYMPTOMS)
