"""Only rocm_doctor/facts/keys.py spells an observation key: a probe records a command, a file or a probe value under a
constant from there, and the interpreter that reads it back names the same constant, so the two cannot drift apart.

Every module of rocm_doctor/ is parsed with `ast`; a string given as the key of an observation write or read
(Recorder.command/put/read_file/list_dir..., Observations.command/file/add_*, .probes/.commands/.files lookups), and in
a probe a string naming a command in a (key, argv) pair or a {key: argv} table, fails, naming the file and line."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "rocm_doctor"
KEYS_MODULE = SOURCE / "facts" / "keys.py"
PROBES = SOURCE / "probes"
KEY_FIRST = {"command", "tool_command", "target_command", "put", "read_file", "list_dir", "file", "add_command",
             "add_probe"}
KEY_THIRD = {"with_fallback"}  # (first, failed, key, argv)
HOLDERS = {"probes", "commands", "files"}  # Observations' dicts, read by .get(key) or [key]
ARGV = (ast.List, ast.ListComp)


def _text(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _key_positions(tree: ast.AST) -> list[ast.AST]:
    """Expressions used as an observation key. A decorator (click's @group.command("name")) is no observation."""
    decorators = {id(d) for node in ast.walk(tree) for d in getattr(node, "decorator_list", [])}
    found: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and id(node) not in decorators:
            name, owner = node.func.attr, node.func.value
            if name in KEY_FIRST:
                found.extend(node.args[:1])
            elif name in KEY_THIRD:
                found.extend(node.args[2:3])
            elif name == "get" and isinstance(owner, ast.Attribute) and owner.attr in HOLDERS:
                found.extend(node.args[:1])
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr in HOLDERS:
            found.append(node.slice)
    return found


def _command_tables(tree: ast.Module) -> list[ast.AST]:
    """The keys of a probe's commands: a module's {key: argv} tables, and (key, argv) pairs anywhere."""
    found: list[ast.AST] = []
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            found.extend(k for k, v in zip(node.value.keys, node.value.values) if k is not None and isinstance(v, ARGV))
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple) and len(node.elts) == 2 and isinstance(node.elts[1], ARGV):
            found.append(node.elts[0])
    return found


def spellings(source: str, probe: bool = False) -> list[tuple[int, str]]:
    """(line, key) for each observation key `source` spells where a constant from keys.py belongs."""
    tree = ast.parse(source)
    positions = _key_positions(tree) + (_command_tables(tree) if probe else [])
    return sorted({(node.lineno, node.value) for node in positions if _text(node)})


def test_no_module_but_keys_spells_an_observation_key():
    failures = []
    for path in sorted(SOURCE.rglob("*.py")):
        if path == KEYS_MODULE:
            continue
        name = path.relative_to(REPO).as_posix()
        for line, key in spellings(path.read_text(encoding="utf-8"), PROBES in path.parents):
            failures.append(f"{name}:{line}: {key}")
    assert failures == [], "name these observations by a constant in rocm_doctor/facts/keys.py:\n" + "\n".join(failures)


def test_a_spelled_observation_key_is_found_and_a_constant_or_decorator_is_not():
    source = '''
import click
from rocm_doctor.facts.keys import LSPCI_KEY

COMMANDS = {"dkms-status": ["dkms", "status"], LSPCI_KEY: ["lspci"]}
DMESG = ("dmesg-kernel", ["dmesg"])
NAMES = {"rocminfo": "a source's name, not a command"}

@click.command("check")
def collect(recorder, observations, key):
    recorder.command(LSPCI_KEY, ["lspci"])
    recorder.put("pci.sysfs", [])
    recorder.with_fallback(first, failed, "dmesg-kernel", ["dmesg"])
    observations.command("ldd-version")
    observations.probes.get("gpu.live.self")
    observations.files["/opt"]
    observations.file(f"{key}/uevent")
    return "lspci"
'''
    assert spellings(source, probe=True) == [(5, "dkms-status"), (6, "dmesg-kernel"), (12, "pci.sysfs"),
                                             (13, "dmesg-kernel"), (14, "ldd-version"), (15, "gpu.live.self"),
                                             (16, "/opt")]
    assert spellings(source) == [(12, "pci.sysfs"), (13, "dmesg-kernel"), (14, "ldd-version"), (15, "gpu.live.self"),
                                 (16, "/opt")]
