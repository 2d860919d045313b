"""Only rocm_doctor/facts/keys.py spells a fact key: checks, interpreters and everything else in checks/ and
rocm_doctor/ name a fact by its constant, so a renamed or mistyped key fails at import instead of reading nothing.

Every module is parsed with `ast`; a string in code (not a docstring) that equals a fact key fails, naming the file
and line, and so does a key under a "prefix.*" entry (torch.*, platform.*) given to a fact read or write, literally or
built from the prefix in an f-string or a sum."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from rocm_doctor.facts import keys

REPO = Path(__file__).resolve().parents[1]
SOURCES = (REPO / "checks", REPO / "rocm_doctor")
KEYS_MODULE = REPO / "rocm_doctor" / "facts" / "keys.py"
FACT_CALLS = {"get", "set", "set_missing", "has", "why_missing"}
FACT_LISTS = {"requires", "REQUIRES"}


def fact_keys() -> set[str]:
    """The value of every constant of keys.py that names a fact (one with an owner, or a stage's fact)."""
    return {value for name, value in vars(keys).items() if name.isupper() and isinstance(value, str)
            and not value.endswith((".", "*")) and (keys.owner(value) or value in keys.STAGE_FACTS)}


KNOWN = fact_keys()
PREFIXES = tuple(key[:-1] for key in keys.FACTS if key.endswith(".*"))
UNDER_PREFIX = re.compile("(" + "|".join(map(re.escape, PREFIXES)) + r")[a-z_]+(\.[a-z_]+)*")


def _docstrings(tree: ast.AST) -> set[int]:
    """Strings standing alone as a statement: docstrings, never code."""
    return {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}


def _fact_positions(tree: ast.AST) -> list[ast.AST]:
    """Expressions used as a fact key: the first argument of facts.get/set/..., a subscript, a requires item."""
    found: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in FACT_CALLS:
            found.extend(node.args[:1])
        elif isinstance(node, ast.Subscript):
            found.append(node.slice)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in FACT_LISTS for t in targets) and isinstance(
                    node.value, (ast.Tuple, ast.List, ast.Set)):
                found.extend(node.value.elts)
    return found


def _built_under_prefix(node: ast.AST) -> bool:
    """An f-string or a sum that starts with a prefix's spelling: a key made below "torch.*" or "platform.*"."""
    head = node.values[0] if isinstance(node, ast.JoinedStr) and node.values else \
        node.left if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) else None
    return isinstance(head, ast.Constant) and isinstance(head.value, str) and head.value.startswith(PREFIXES)


def spellings(source: str) -> list[tuple[int, str]]:
    """(line, key) for each fact key `source` spells in code."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    skip |= {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    found = {(node.lineno, node.value) for node in ast.walk(tree)
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
             and node.value in KNOWN}
    for node in _fact_positions(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and UNDER_PREFIX.fullmatch(node.value):
            found.add((node.lineno, node.value))
        elif _built_under_prefix(node):
            found.add((node.lineno, ast.unparse(node)))
    return sorted(found)


def test_no_module_but_keys_spells_a_fact_key():
    failures = []
    for folder in SOURCES:
        for path in sorted(folder.rglob("*.py")):
            if path == KEYS_MODULE:
                continue
            name = path.relative_to(REPO).as_posix()
            for line, key in spellings(path.read_text(encoding="utf-8")):
                failures.append(f"{name}:{line}: {key}")
    assert failures == [], "name these facts by their constant in rocm_doctor/facts/keys.py:\n" + "\n".join(failures)


def test_a_spelled_key_is_found_and_a_docstring_or_message_is_not():
    source = '''
"""torch.flavour in a docstring is prose."""
from rocm_doctor.facts.keys import TORCH_FLAVOUR

class C:
    requires = ("gpu.targets", TORCH_FLAVOUR)

    def run(self, facts):
        facts.get(TORCH_FLAVOUR)
        facts["torch.flavour"]
        facts.set("torch.some_new_fact", 1)
        facts.set(f"platform.{name}", 2)
        facts.set("platform." + name, 3)
        return f"needs torch.flavour: {facts.get('os.release')}", "torch.cuda.is_available()"
'''
    assert spellings(source) == [(6, "gpu.targets"), (10, "torch.flavour"), (11, "torch.some_new_fact"),
                                 (12, "f'platform.{name}'"), (13, "'platform.' + name"), (14, "os.release")]


def test_each_fact_key_has_one_constant():
    names = [name for name, value in vars(keys).items() if name.isupper() and isinstance(value, str) and value in KNOWN]
    assert len(names) == len(KNOWN)
    assert {keys.TORCH_FLAVOUR, keys.PLATFORM_OS, keys.BENCH_FIGURES, keys.GPU_INVENTORY_DISAGREEMENTS} <= KNOWN
