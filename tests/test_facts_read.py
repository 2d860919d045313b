"""A source that is recorded but read by no check is a defect: every fact key the interpreters set (run over every
replayed snapshot, plus every literal key they set or mark missing) is required by a check or read by a check
module, unless the allow-list below names it with the reason it exists."""

import ast
import json
from pathlib import Path

from rocm_doctor.facts import keys as fact_keys
from rocm_doctor.facts import snapshot
from rocm_doctor.interpret import interpret

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOTS = Path(__file__).parent / "snapshots"

# Facts that exist for something other than a check. Each entry says who reads it.
NOT_FOR_CHECKS = {
    # The probe's description of the run itself, copied into platform.*: the report header and a person reading
    # a ticket's snapshot use it; no GPU judgement depends on the doctor's own interpreter or the OS build string.
    "platform.doctor_executable": "the snapshot's record of the doctor's own interpreter",
    "platform.doctor_python": "the snapshot's record of the doctor's own Python version",
    "platform.version": "the OS build string, shown to a person reading the snapshot",
    "platform.windows_build": "the Windows build, shown to a person reading the snapshot",
    # The CPU, gcc and the compiler torch was built with: the versions block of `check -v` and `report`
    # (report/versions.py), as collect_env lists them for a ticket; no verdict depends on them yet.
    "torch.host": "the versions block (report/versions.py)",
}
FACT_METHODS = {"get", "has", "why_missing"}
# The key constants every module names facts by (rocm_doctor/facts/keys.py).
KEY_NAMES = {name: value for name, value in vars(fact_keys).items() if name.isupper() and isinstance(value, str)}


def _names(tree: ast.Module) -> dict[str, str]:
    """The key constants, and the module's own NAME = "a.key" or NAME = KEY_CONSTANT assignments."""
    names = dict(KEY_NAMES)
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Constant, ast.Name, ast.Attribute)):
            value = _key(node.value, names)
            names.update({t.id: value for t in node.targets if isinstance(t, ast.Name) and value})
    return names


def _key(node: ast.AST, names: dict[str, str]):
    """The key `node` spells: a string, or a key constant by name (GPU_TARGETS) or by module (keys.GPU_TARGETS)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute):
        return KEY_NAMES.get(node.attr)
    return None


def _literal_keys(tree: ast.Module, methods: set[str]) -> set[str]:
    """Keys passed to facts.<method>(...) or facts[...] anywhere in the tree."""
    names, keys = _names(tree), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in methods \
                and node.args:
            keys.add(_key(node.args[0], names))
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "facts":
            keys.add(_key(node.slice, names))
    return keys - {None}


def _requires(tree: ast.Module) -> set[str]:
    names, keys = _names(tree), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "requires" for t in node.targets):
            keys |= {_key(e, names) for e in ast.walk(node.value)}
    return keys - {None}


def _helper_keys(tree: ast.Module) -> set[str]:
    """Keys handed to a helper together with the facts: `_get(facts, X)`, `facts_value(facts, X)`."""
    names, keys = _names(tree), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and any(isinstance(a, ast.Name) and a.id == "facts" for a in node.args):
            keys |= {_key(a, names) for a in node.args}
    return keys - {None}


def replayed(path: Path):
    return interpret(snapshot.from_dict(json.loads(path.read_text(encoding="utf-8")), str(path)))


def read_by_checks() -> set[str]:
    keys = set()
    for path in sorted((ROOT / "checks").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        keys |= _literal_keys(tree, FACT_METHODS) | _requires(tree) | _helper_keys(tree)
    return keys


def set_by_interpreters() -> set[str]:
    keys = set()
    for path in sorted(SNAPSHOTS.glob("*.json")):
        facts = replayed(path)
        assert not facts.interpreter_errors, (path.name, facts.interpreter_errors)
        keys |= set(facts.keys()) | set(facts.missing_dict())
    for path in sorted((ROOT / "rocm_doctor" / "interpret").glob("*.py")):
        keys |= _literal_keys(ast.parse(path.read_text(encoding="utf-8")), {"set", "set_missing"})
    return keys


def test_every_fact_the_interpreters_set_is_read_by_a_check():
    unread = sorted(set_by_interpreters() - read_by_checks() - set(NOT_FOR_CHECKS))
    assert unread == [], f"facts no check requires or reads: {unread}"


def test_the_allow_list_names_only_facts_that_exist_and_no_check_reads():
    keys = set_by_interpreters()
    assert set(NOT_FOR_CHECKS) <= keys, set(NOT_FOR_CHECKS) - keys
    assert not set(NOT_FOR_CHECKS) & read_by_checks(), set(NOT_FOR_CHECKS) & read_by_checks()


def test_the_scan_sees_each_way_a_check_reads_a_fact():
    tree = ast.parse("FACT = 'i.j'\nclass C:\n    requires = ('a.b', FACT)\n    def run(self, facts):\n"
                     "        facts.get('c.d'); facts['e.f']; helper(facts, 'g.h')\n")
    assert _literal_keys(tree, FACT_METHODS) | _requires(tree) | _helper_keys(tree) == {"a.b", "c.d", "e.f", "g.h",
                                                                                         "i.j"}


def test_the_gpu_targets_reading_is_set_in_the_pipeline():
    """gpu.targets runs after gpu.inventory, so the kernels stage and the comparison see it on every AMD machine."""
    facts = replayed(SNAPSHOTS / "linux-rx6600xt-gfx1032-override-11.0.0.json")
    (target,) = facts.get("gpu.targets")
    assert target["real_gfx"] == "gfx1032" and target["effective_gfx"] == "gfx1100"
    assert target["override"] == {"variable": "HSA_OVERRIDE_GFX_VERSION", "value": "11.0.0"}
