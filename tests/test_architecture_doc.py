"""docs/architecture.md stays true to the tree: every file or folder it names exists, and its walk from a variable
in the environment to the report and the fix opens about ten files, each of them there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
# named as what is not there: a checkout has no rocm_doctor/checks/ (the finder adds checks/ under that name)
NAMED_AS_ABSENT = {"rocm_doctor/checks/"}


def _paths(text: str) -> list[str]:
    """Backquoted names that are files or folders of the tree: with a slash or a file suffix, no placeholder."""
    names = re.findall(r"`([^`\s]+)`", text)
    return [n for n in names if re.fullmatch(r"[\w./-]+", n) and not n.startswith(("~", "-", "$"))
            and ("/" in n or re.search(r"\.(py|json|md)$", n)) and not n.startswith(("http", "ROCm/"))]


def _where(name: str) -> Path | None:
    for base in (ROOT, ROOT / "rocm_doctor"):
        if (base / name).exists():
            return base / name
    return None


def test_every_path_named_in_the_architecture_notes_exists():
    named = _paths(DOC)
    assert len(named) > 50  # the scan sees the notes' names at all
    missing = [n for n in named if n not in NAMED_AS_ABSENT and _where(n) is None]
    assert not missing, f"docs/architecture.md names what the tree lacks (write each with its folder): {missing}"
    assert all(_where(n) is None for n in NAMED_AS_ABSENT)


def test_the_walk_opens_about_ten_files_that_exist():
    walk = DOC.split("## The walk", 1)[1].split("\n## ", 1)[0]
    opened = re.findall(r"\*\*`([^`]+)`\*\*", walk)
    assert len(opened) == len(set(opened)) and 8 <= len(opened) <= 11, opened
    assert all(_where(n) is not None and _where(n).is_file() for n in opened), opened
    assert re.search(rf"\b{['Eight', 'Nine', 'Ten', 'Eleven'][len(opened) - 8]} files\s+carry it\b", walk)
