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
