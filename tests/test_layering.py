"""The import layers of DESIGN.md, checked on the static import graph of rocm_doctor/ and checks/.

Every module is parsed with `ast`; imports inside functions count (a lazy import is still a dependency), relative
imports are resolved, and checks/ and data/ are read as the packages they ship as (rocm_doctor.checks and
rocm_doctor.data). A module's layer is its package's (the first name below rocm_doctor: `rocm_doctor.engine.remedy`
is in engine, `rocm_doctor.stages` is a package of its own), except the few modules MODULE_LAYERS places apart
from their package. Imports by name at run time (importlib) are not seen.

The rules:
- LAYERS, lowest first: a module imports only from its own layer and the layers below it.
- parsers import only parsers and the key registry (facts/keys.py, constants and nothing else): text in, data out,
  knowing nothing of observations or facts but the names a paste's tool outputs are recorded under.
- facts import only facts, parsers and the package root (for `__version__`); the root itself imports nothing.
- checks import only engine, facts, knowledge and parsers: they are pure, and steps are engine data.
- no module below the checks but the engine imports the check registry: a stage reaching for checks by name
  would be an upward dependency the layers cannot see.
- no module whose name starts with an underscore is imported from outside its own package.
And no two modules import each other, directly or round a longer circle, and no two packages do either. An
import under `if TYPE_CHECKING:` counts for the layers (it is still a dependency) but not for circles: it never
runs, and it is how a module names the type of a caller that imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ROOT = "rocm_doctor"
# Where each package's modules live, as pyproject.toml's [tool.setuptools.package-dir] ships them.
PACKAGE_DIRS = {ROOT: REPO / "rocm_doctor", f"{ROOT}.checks": REPO / "checks", f"{ROOT}.data": REPO / "data"}

# The layers, lowest first; each is the packages in it ("" is the package root: __version__ and the checkout's
# finder). windows holds the Windows path, name and registry helpers the probes, interpreters and checks share.
LAYERS = [
    ("base", {"", "parsers", "safefile", "inputfile", "data", "_childlib"}),
    ("facts", {"facts"}),
    ("knowledge", {"knowledge"}),
    ("engine", {"engine"}),
    ("windows", {"windows"}),
    ("interpret", {"interpret"}),
    ("observe", {"probes"}),
    ("stages", {"gpu", "distributed", "stages"}),
    ("checks", {"checks"}),
    ("report", {"report"}),
    ("fix", {"fix"}),
    ("pipeline", {"diagnose", "triage"}),
    ("history", {"compare", "history"}),
    ("testing", {"testing"}),
    ("cli", {"cli", "__main__"}),
]
KEY_REGISTRY = f"{ROOT}.facts.keys"  # constants only, importing nothing of the package: below every layer
MODULE_LAYERS = {
    KEY_REGISTRY: "base",
    f"{ROOT}.distributed.fleet": "history",  # compares the nodes' reports
    f"{ROOT}.distributed.__main__": "cli",  # the torchrun entry point
}
RANK = {name: rank for rank, (name, _) in enumerate(LAYERS)}
CHECKS_MAY_IMPORT = ("engine", "facts", "knowledge", "parsers")



def package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer(module: str) -> str:
    if module in MODULE_LAYERS:
        return MODULE_LAYERS[module]
    return next((name for name, packages in LAYERS if package(module) in packages), "cli")


def is_private(module: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__") for part in module.split("."))


def home(module: str) -> str:
    """The package a module belongs to (itself for a package's __init__)."""
    return module if MODULES.get(module, (None, False))[1] else module.rpartition(".")[0]


RULES = [
    ("a module imports only from its own layer and those below it (LAYERS)",
     lambda m: True, lambda m, t: RANK[layer(t)] <= RANK[layer(m)]),
    ("parsers import only parsers and the key registry",
     lambda m: package(m) == "parsers", lambda m, t: package(t) == "parsers" or t == KEY_REGISTRY),
    ("the key registry imports nothing of the package",
     lambda m: m == KEY_REGISTRY, lambda m, t: False),
    ("facts import only facts, parsers and the package root",
     lambda m: package(m) == "facts", lambda m, t: package(t) in ("facts", "parsers") or t == ROOT),
    ("the package root imports nothing",
     lambda m: m == ROOT, lambda m, t: False),
    ("checks import only engine, facts, knowledge and parsers",
     lambda m: package(m) == "checks", lambda m, t: package(t) in ("checks",) + CHECKS_MAY_IMPORT),
    ("no stage, probe or interpreter loads the checks: the pipeline judges what they measure (diagnose.py)",
     lambda m: RANK[layer(m)] <= RANK["stages"] and package(m) != "engine",
     lambda m, t: t != f"{ROOT}.engine.registry"),
    ("no private module is imported from outside its package",
     lambda m: True, lambda m, t: not is_private(t) or home(m) == home(t) or home(m).startswith(home(t) + ".")),
]


def discover() -> dict[str, tuple[Path, bool]]:
    """module name -> (file, is a package __init__)."""
    modules = {}
    for package, folder in PACKAGE_DIRS.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            modules[".".join([package] + (parts[:-1] if is_package else parts))] = (path, is_package)
    return modules


def imports_of(module: str, source: str, is_package: bool, known: set[str]) -> list[tuple[str, int, bool]]:
    """(imported module, line, only for type checking) for every import of this project's code in `source`,
    nested ones included.

    `from a import b` names the module a.b when there is one, else a; a name that is no module resolves to the
    longest known module above it."""

    def known_prefix(name: str) -> str:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name

    tree = ast.parse(source)
    typing_only = {id(inner) for node in ast.walk(tree) if isinstance(node, ast.If) and _is_type_checking(node.test)
                   for statement in node.body for inner in ast.walk(statement)}
    found = []
    here = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(known_prefix(a.name), node.lineno, id(node) in typing_only) for a in node.names
                      if a.name.split(".")[0] == ROOT]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != ROOT:
                continue
            for alias in node.names:
                full = f"{target}.{alias.name}"
                found.append((full if full in known else known_prefix(target), node.lineno, id(node) in typing_only))
    return [found_import for found_import in found if found_import[0] and found_import[0] != module]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


MODULES = discover()
GRAPH = {name: imports_of(name, path.read_text(encoding="utf-8"), is_package, set(MODULES))
         for name, (path, is_package) in MODULES.items()}


def test_package_dirs_match_pyproject():
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    with_code = {name: REPO / folder for name, folder in config["package-dir"].items()
                 if any((REPO / folder).glob("*.py"))}
    assert with_code == {name: folder for name, folder in PACKAGE_DIRS.items() if name != ROOT}


def test_the_graph_is_read():
    assert len(GRAPH) > 150
    assert "rocm_doctor.checks.visibility" in GRAPH
    assert "rocm_doctor.parsers.visible_devices" in {t for t, _, _ in GRAPH["rocm_doctor.checks.visibility"]}


def test_imports_resolve_relative_nested_and_from_package():
    known = {"rocm_doctor", "rocm_doctor.fix", "rocm_doctor.fix.winenv", "rocm_doctor.fix.regvalue",
             "rocm_doctor.engine", "rocm_doctor.engine.remedy"}
    source = ("from .regvalue import RegValue\nfrom . import winenv\nfrom ..engine import remedy as S\n"
              "def f():\n    import rocm_doctor.engine.remedy.Step\n    from rocm_doctor import __version__\n"
              "if TYPE_CHECKING:\n    from rocm_doctor.fix.winenv import EnvRegistry\n")
    assert imports_of("rocm_doctor.fix.undo", source, False, known) == [
        ("rocm_doctor.fix.regvalue", 1, False), ("rocm_doctor.fix.winenv", 2, False),
        ("rocm_doctor.engine.remedy", 3, False), ("rocm_doctor.engine.remedy", 5, False), ("rocm_doctor", 6, False),
        ("rocm_doctor.fix.winenv", 8, True)]
    assert imports_of("rocm_doctor.fix", "from .winenv import LOCATION\n", True, known) == [
        ("rocm_doctor.fix.winenv", 1, False)]


@pytest.mark.parametrize("rule", RULES, ids=[r[0] for r in RULES])
def test_layer_rule(rule):
    name, applies, allowed = rule
    broken = [f"{MODULES[module][0].relative_to(REPO)}:{line}: {module} imports {target}, but {name}"
              for module, targets in sorted(GRAPH.items()) if applies(module)
              for target, line, _ in targets
              if not allowed(module, target)]
    assert not broken, "\n".join(broken)


def cycles(edges: dict[str, list[str]]) -> list[list[str]]:
    """Every strongly connected set of two or more modules (Tarjan), each as one circle through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in edges.get(node, []):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(_circle(sorted(group), edges))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def _circle(group: list[str], edges: dict[str, list[str]]) -> list[str]:
    """One path from the group's first module back to itself, inside the group (breadth first: the shortest)."""
    start, members = group[0], set(group)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for target in edges.get(node, []):
            if target == start:
                return paths[node] + [start]
            if target in members and target not in paths:
                paths[target] = paths[node] + [target]
                queue.append(target)
    return group


def test_cycle_finder_names_the_circle():
    edges = {"a": ["b"], "b": ["c"], "c": ["a", "d"], "d": []}
    assert cycles(edges) == [["a", "b", "c", "a"]]


def unit(module: str) -> str:
    """What a package circle is made of: a package, or a module of its own (one at the top, or placed apart)."""
    return module if module in MODULE_LAYERS or home(module) == ROOT else home(module)


def test_every_package_is_in_a_layer():
    unplaced = sorted({package(m) for m in MODULES if m not in MODULE_LAYERS
                       and not any(package(m) in packages for _, packages in LAYERS)})
    assert not unplaced, f"add to LAYERS: {unplaced}"


def test_no_package_cycles():
    edges: dict[str, set[str]] = {}
    for module, targets in GRAPH.items():
        for target, _, typing_only in targets:
            if not typing_only and unit(module) != unit(target):
                edges.setdefault(unit(module), set()).add(unit(target))
    found = cycles({name: sorted(targets) for name, targets in edges.items()})
    assert not found, "package cycles:\n" + "\n".join(" -> ".join(circle) for circle in found)


def test_no_import_cycles():
    edges = {module: [target for target, _, typing_only in targets
                      if not typing_only]
             for module, targets in GRAPH.items()}
    found = cycles(edges)
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(circle) for circle in found)
