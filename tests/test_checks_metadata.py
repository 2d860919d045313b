"""Every registered check is well formed: id, unique, title, severity, platforms, requires, and a full doc."""

import re

import pytest

from rocm_doctor.engine.model import Platform, Severity
from rocm_doctor.engine.registry import check_doc, load_registry

REGISTRY = load_registry(include_plugins=False)
SECTIONS = ("## What it checks", "## Why it matters", "## How to fix", "## References")


def test_builtins_load_without_problems():
    assert REGISTRY.problems == []
    assert len(REGISTRY.checks) >= 8


def test_ids_are_unique():
    ids = REGISTRY.ids()
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("check", REGISTRY.checks, ids=lambda c: c.id)
def test_metadata(check):
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", check.id)
    assert check.title and not check.title.endswith(".")
    assert isinstance(check.severity, Severity)
    assert check.platforms and all(isinstance(p, Platform) for p in check.platforms)
    assert all(isinstance(key, str) and key for key in check.requires)


@pytest.mark.parametrize("check", REGISTRY.checks, ids=lambda c: c.id)
def test_doc_has_every_section(check):
    doc = check_doc(check)
    assert doc, f"checks/docs/{check.id}.md is missing"
    assert doc.startswith(f"# {check.id}\n")
    for section in SECTIONS:
        assert section in doc, f"{check.id}: no '{section}'"



# A title is printed beside ok, warn and fail alike, so it names what was checked ("Other processes computing on the
# GPU"); one that states the passing condition ("No other process is computing on the GPU") contradicts the failing
# status and message printed beside it. These are the words such titles were written with; a relative clause may
# still carry a verb the list leaves out ("Operator kernels that hang").
PASSING_CONDITION = re.compile(
    r"^(every|nothing|only) |\b(is|are|was|were|do not|does|did|not|no|has|have|had|can|may|run|runs|ran|reach|reaches"
    r"|match|matches|agree|complete|exist|exists|point|points|accepts|gets|return|lets|leaves|logged|finished"
    r"|initialises|fits|supports|kept|brought|comes|print|loads|enumerates|names|reports|parses|timed|enough)\b",
    re.IGNORECASE)


@pytest.mark.parametrize("check", REGISTRY.checks, ids=lambda c: c.id)
def test_title_names_what_was_checked(check):
    assert not PASSING_CONDITION.search(check.title), f"{check.id}: '{check.title}' states a passing condition"


@pytest.mark.parametrize("title", [
    "No other process is computing on the GPU", "Every PATH folder exists", "The NVIDIA driver logged no Xid error",
    "torch.cuda.is_available() is True", "Matmul throughput reaches what this GPU should do",
    "GPU visibility variables do not hide the GPUs", "The paste holds enough to name a cause",
    "torch loads from compiled bytecode", "Nothing blacklists amdgpu"])
def test_the_title_rule_rejects_a_passing_condition(title):
    assert PASSING_CONDITION.search(title)


def test_the_title_rule_accepts_what_was_checked():
    for title in ("torch.cuda.is_available()", "Known GPU error messages in torch's output or the given log",
                  "Operator kernels that hang", "Completion of each benchmark section"):
        assert not PASSING_CONDITION.search(title), title
