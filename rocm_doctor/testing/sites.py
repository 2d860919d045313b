"""Where a check attaches fix steps, read from its source without running it, so that a test can require a
"the fix makes the check pass" case for each place: a check that gains a step without a case fails the suite."""

from __future__ import annotations

import ast
import inspect
import sys
from functools import lru_cache
from pathlib import Path

from rocm_doctor.engine.model import Check


@lru_cache(maxsize=None)
def _module_tree(module_name: str) -> ast.Module:
    return ast.parse(inspect.getsource(sys.modules[module_name]))


def _attaches(node: ast.AST) -> bool:
    """`with_fix(...)`, a `fix=` or `alternatives=` argument other than an empty literal, or
    `<finding>.fix.append/extend(...)`."""
    if isinstance(node, ast.Call):
        func = node.func
        if (isinstance(func, ast.Attribute) and func.attr == "with_fix") or (
                isinstance(func, ast.Name) and func.id == "with_fix"):
            return True
        if isinstance(func, ast.Attribute) and func.attr in ("append", "extend") and isinstance(
                func.value, ast.Attribute) and func.value.attr == "fix":
            return True
    if isinstance(node, ast.keyword) and node.arg in ("fix", "alternatives"):
        return not (isinstance(node.value, (ast.List, ast.Tuple)) and not node.value.elts)
    return False


def _sites_in(root: ast.AST, functions: dict[str, ast.FunctionDef], seen: set[str]) -> list[int]:
    """Line numbers of attachments under `root` and in the module-level functions it calls."""
    lines = []
    for node in ast.walk(root):
        if _attaches(node):
            lines.append(node.value.lineno if isinstance(node, ast.keyword) else node.lineno)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions \
                and node.func.id not in seen:
            seen.add(node.func.id)
            lines += _sites_in(functions[node.func.id], functions, seen)
    return lines


def step_sites(check: type[Check]) -> list[str]:
    """"file.py:LINE" of every place the check's class, its base classes (not Check itself) and the module-level
    functions they call attach fix steps; empty for a check that never attaches one."""
    sites = set()
    for cls in check.__mro__:
        if not (isinstance(cls, type) and issubclass(cls, Check)) or cls is Check:
            continue
        tree = _module_tree(cls.__module__)
        functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
                name = Path(inspect.getsourcefile(sys.modules[cls.__module__]) or cls.__module__).name
                sites |= {f"{name}:{line}" for line in _sites_in(node, functions, set())}
    return sorted(sites, key=lambda s: (s.split(":")[0], int(s.split(":")[1])))
